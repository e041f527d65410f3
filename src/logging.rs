//! Logs go to stderr through `tracing`, filtered by `RUST_LOG`, with secrets redacted
//! ([`crate::secrets`]); stdout carries only the protocol.
//!
//! Without `RUST_LOG`, stderr says only what went wrong: some editors show every stderr line
//! to the user (agent-shell prints each one as a notice), so tandem's progress (sessions
//! opened, prompts cancelled) is there only when asked for, with `-v` or `RUST_LOG`.

use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

/// Who reads the stderr lines a run writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Audience {
    /// An editor, which may show every line: the stdio agent.
    Editor,
    /// A person at a terminal, running a command (`exec`, `doctor`, `logout`) whose error
    /// lines are its own: the ACP SDK's notes about error answers are left out.
    Command,
    /// A person answering questions (`login`): the command says everything that matters
    /// itself, and a log line would land in the middle of a prompt.
    Prompted,
}

/// The filter when `RUST_LOG` is unset: warnings and errors (nothing while a person answers
/// prompts); with `verbose` (`-v`, `-vv`, `-vvv`) tandem's own info, debug or trace lines too.
pub fn default_filter(audience: Audience, verbose: u8) -> String {
    let own = match verbose {
        0 => None,
        1 => Some("tandem=info"),
        2 => Some("tandem=debug"),
        _ => Some("tandem=trace"),
    };
    let base = match audience {
        // The SDK warns about every error response it sends: the editor already shows the
        // error itself, and agent-shell would show each one twice (once as a notice).
        Audience::Editor | Audience::Command => "warn,agent_client_protocol=error",
        Audience::Prompted if own.is_some() => "warn,agent_client_protocol=error",
        Audience::Prompted => "off",
    };
    match own {
        Some(own) => format!("{own},{base}"),
        None => base.to_string(),
    }
}

/// Installs the stderr subscriber: the filter is `RUST_LOG`, else [`default_filter`]. A
/// person running a command who asked for no more than warnings reads them as the command's
/// own lines (`tandem: warning: …`); otherwise (an editor's log, `-v`, `RUST_LOG`) each line
/// has its time, level and fields, for a bug report.
pub fn init(audience: Audience, verbose: u8) {
    let asked = EnvFilter::try_from_default_env().ok();
    let plain = audience != Audience::Editor && verbose == 0 && asked.is_none();
    let filter = asked.unwrap_or_else(|| EnvFilter::new(default_filter(audience, verbose)));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(|| crate::secrets::RedactingWriter(std::io::stderr()))
        .with_ansi(false)
        .with_target(false);
    let _ = if plain {
        builder.event_format(Plain).try_init()
    } else {
        builder.try_init()
    };
}

/// `tandem: warning: MESSAGE (path=…, …)`: a log line as a command's own, without its time;
/// the fields that name the subject (a file, a rule) follow the message.
struct Plain;

impl<S, N> FormatEvent<S, N> for Plain
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        _: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &tracing::Event<'_>,
    ) -> std::fmt::Result {
        let level = match *event.metadata().level() {
            tracing::Level::ERROR => "error",
            tracing::Level::WARN => "warning",
            _ => "note",
        };
        let mut line = Line::default();
        event.record(&mut line);
        if line.fields.is_empty() {
            writeln!(writer, "tandem: {level}: {}", line.message)
        } else {
            let fields = line.fields.join(", ");
            writeln!(writer, "tandem: {level}: {} ({fields})", line.message)
        }
    }
}

/// An event's `message`, and its other fields as `name=value`.
#[derive(Default)]
struct Line {
    message: String,
    fields: Vec<String>,
}

impl tracing::field::Visit for Line {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.message = format!("{value:?}");
        } else {
            self.fields.push(format!("{}={value:?}", field.name()));
        }
    }

    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        if field.name() == "message" {
            self.message = value.to_string();
        } else {
            self.fields.push(format!("{}={value}", field.name()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Audience, default_filter};

    #[test]
    fn warnings_by_default_and_more_with_each_v() {
        assert_eq!(
            default_filter(Audience::Editor, 0),
            "warn,agent_client_protocol=error"
        );
        assert_eq!(
            default_filter(Audience::Editor, 1),
            "tandem=info,warn,agent_client_protocol=error"
        );
        assert_eq!(
            default_filter(Audience::Editor, 2),
            "tandem=debug,warn,agent_client_protocol=error"
        );
        assert_eq!(
            default_filter(Audience::Editor, 9),
            "tandem=trace,warn,agent_client_protocol=error"
        );
        assert_eq!(
            default_filter(Audience::Command, 1),
            "tandem=info,warn,agent_client_protocol=error"
        );
    }

    #[test]
    fn nothing_is_logged_into_prompts_unless_asked() {
        assert_eq!(default_filter(Audience::Prompted, 0), "off");
        assert_eq!(
            default_filter(Audience::Prompted, 1),
            "tandem=info,warn,agent_client_protocol=error"
        );
    }
}
