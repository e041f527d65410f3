//! Slash commands: `/compact`, `/init`, `/rewind`, `/undo`, `/permissions`, and custom commands written as Markdown files in
//! `.tandem/commands/` (project) or the user's config directory (`commands/`). A custom
//! command's body is a prompt template; `$ARGUMENTS` is replaced by what follows the name.

use std::path::{Path, PathBuf};

/// What a command does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Compact the conversation now.
    Compact,
    /// List the turns (no argument) or go back to before turn N.
    Rewind,
    /// Go back to before the last turn.
    Undo,
    /// Show the permission rules, remembered answers and the project's trust (`clear`: forget
    /// the answers; `untrust`: forget which of the project's programs were trusted or refused).
    Permissions,
    /// Run a normal turn with this prompt template.
    Prompt(String),
    /// Run this shell command under the permission rules.
    Command {
        /// The command line.
        line: String,
        /// The project file that declared it, for a project's action: a program a cloned
        /// repository names, so running it always asks (see `turn::actions`).
        declared_by: Option<PathBuf>,
    },
}

/// A command the editor can offer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlashCommand {
    /// The name, typed after `/`.
    pub name: String,
    /// One line for the command menu.
    pub description: String,
    /// A hint for the arguments, when the command takes some.
    pub hint: Option<String>,
    /// What it does.
    pub action: Action,
    /// Declared as a custom action in a config file (`[[actions]]`).
    pub configured: bool,
}

/// The prompt `/init` runs.
pub(crate) const INIT_PROMPT: &str = "Look at this project (its layout, build and package files, README, \
tests and conventions) and write an AGENTS.md file at the project root with concise instructions \
for coding agents: how to build, test and lint, how the code is laid out, and the conventions to \
follow. If AGENTS.md already exists, improve it and keep what is still true. $ARGUMENTS";

/// The built-in commands, then custom ones (a project command replaces a user command of the
/// same name; built-ins cannot be replaced), then the user's and the project's actions. A
/// project's action that runs a command never replaces a user's command or action of the
/// same name: typing `/review` must not run a repository's program instead of your own.
pub(crate) fn discover(
    cwd: &Path,
    config_dir: &Path,
    user_actions: &[crate::config::ActionSpec],
    project_actions: &[crate::config::ActionSpec],
) -> Vec<SlashCommand> {
    let mut commands = builtins();
    let builtin = commands.len();
    for file in crate::customize::markdown_files(cwd, config_dir, "commands") {
        let Some(command) = read(&file) else { continue };
        if commands[..builtin].iter().any(|c| c.name == command.name) {
            tracing::warn!(path = %file.path.display(), "a custom command cannot replace the built-in /{}", command.name);
            continue;
        }
        commands.retain(|c| c.name != command.name);
        commands.push(command);
    }
    // Custom actions: the user's, then the project's (a later one of the same name wins).
    let source = cwd.join(".tandem").join("config.toml");
    let declared = user_actions
        .iter()
        .map(|spec| (spec, None))
        .chain(project_actions.iter().map(|spec| (spec, Some(&source))));
    for (spec, declared_by) in declared {
        let Some(action) = action_of(spec, declared_by) else {
            continue;
        };
        if commands[..builtin].iter().any(|c| c.name == spec.name)
            || spec.name.chars().any(char::is_whitespace)
        {
            tracing::warn!(action = %spec.name, "an action cannot be named like a built-in command or contain spaces; ignored");
            continue;
        }
        if declared_by.is_some()
            && matches!(action, Action::Command { .. })
            && commands[builtin..].iter().any(|c| c.name == spec.name)
        {
            tracing::warn!(action = %spec.name, "the project's action /{} runs a command and cannot replace your own of that name; ignored", spec.name);
            continue;
        }
        commands.retain(|c| c.name != spec.name);
        commands.push(SlashCommand {
            name: spec.name.clone(),
            description: described(&action, spec.description.as_deref()),
            hint: matches!(&action, Action::Prompt(p) if p.contains("$ARGUMENTS"))
                .then(|| "arguments".to_string()),
            action,
            configured: true,
        });
    }
    commands
}

/// The commands every session has.
fn builtins() -> Vec<SlashCommand> {
    vec![
        SlashCommand {
            name: "compact".into(),
            description: "Summarize the earlier conversation now to free context".into(),
            hint: None,
            action: Action::Compact,
            configured: false,
        },
        SlashCommand {
            name: "init".into(),
            description: "Write or improve AGENTS.md for this project".into(),
            hint: Some("what to focus on (optional)".into()),
            action: Action::Prompt(INIT_PROMPT.into()),
            configured: false,
        },
        SlashCommand {
            name: "rewind".into(),
            description: "List the turns, or go back to before turn N: the conversation and the files tandem changed since".into(),
            hint: Some("turn number (none: list the turns)".into()),
            action: Action::Rewind,
            configured: false,
        },
        SlashCommand {
            name: "undo".into(),
            description: "Take back the last turn: the conversation and the files tandem changed in it".into(),
            hint: None,
            action: Action::Undo,
            configured: false,
        },
        SlashCommand {
            name: "permissions".into(),
            description: "Show the permission rules and what this session remembered".into(),
            hint: Some("clear, to forget the remembered answers (optional)".into()),
            action: Action::Permissions,
            configured: false,
        },
    ]
}

/// What the action `spec` does (`declared_by`: the project file, for a project's action);
/// `None`, with a warning, when it names neither or both of a prompt and a command.
fn action_of(
    spec: &crate::config::ActionSpec,
    declared_by: Option<&std::path::PathBuf>,
) -> Option<Action> {
    match (&spec.prompt, &spec.command) {
        (Some(prompt), None) => Some(Action::Prompt(prompt.clone())),
        (None, Some(command)) => Some(Action::Command {
            line: command.clone(),
            declared_by: declared_by.cloned(),
        }),
        _ => {
            tracing::warn!(action = %spec.name, "an action needs exactly one of `prompt` or `command`; ignored");
            None
        }
    }
}

/// How an action is described in the editor's command list.
fn described(action: &Action, described: Option<&str>) -> String {
    match (action, described) {
        // A repository's words for its own program are not trusted to name it.
        (
            Action::Command {
                line,
                declared_by: Some(_),
            },
            described,
        ) => format!(
            "{}runs the project's command `{line}`",
            described.map(|d| format!("{d}: ")).unwrap_or_default()
        ),
        (Action::Command { line, .. }, None) => format!("Run `{line}`"),
        (_, Some(described)) => described.to_string(),
        (_, None) => "Custom action".into(),
    }
}

fn read(file: &crate::customize::Markdown) -> Option<SlashCommand> {
    let path = &file.path;
    let name = path.file_stem()?.to_string_lossy().to_string();
    if name.is_empty() || name.chars().any(char::is_whitespace) {
        return None;
    }
    let text = file
        .read()
        .map_err(|e| tracing::warn!(path = %path.display(), "cannot read a command: {e}"))
        .ok()?;
    let (front, body) = crate::customize::frontmatter::split(&text);
    let description = front
        .lines()
        .find_map(|l| l.strip_prefix("description:"))
        .map(|d| d.trim().trim_matches(|c| c == '"' || c == '\'').to_string())
        .filter(|d| !d.is_empty())
        .or_else(|| {
            body.lines()
                .map(str::trim)
                .find(|l| !l.is_empty())
                .map(|l| l.chars().take(80).collect())
        })
        .unwrap_or_else(|| "Custom command".into());
    Some(SlashCommand {
        name,
        description,
        hint: body.contains("$ARGUMENTS").then(|| "arguments".to_string()),
        action: Action::Prompt(body.trim().to_string()),
        configured: false,
    })
}

/// A prompt that starts with a slash command: its name, its arguments (the rest of the
/// command's own line) and the text after that line, which is not the command's (clients add
/// context to a prompt: agent-shell appends the line the user was on).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Invocation<'a> {
    pub(crate) name: &'a str,
    pub(crate) args: &'a str,
    pub(crate) after: &'a str,
}

/// The slash command `text` starts with, if any.
pub(crate) fn parse(text: &str) -> Option<Invocation<'_>> {
    let rest = text.trim_start().strip_prefix('/')?;
    let (line, after) = rest.split_once('\n').unwrap_or((rest, ""));
    let (name, args) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
    (!name.is_empty()).then(|| Invocation {
        name,
        args: args.trim(),
        after: after.trim(),
    })
}

/// The template with `$ARGUMENTS` filled in (arguments appended when the template has no slot).
pub(crate) fn expand(template: &str, args: &str) -> String {
    if template.contains("$ARGUMENTS") {
        template.replace("$ARGUMENTS", args).trim_end().to_string()
    } else if args.is_empty() {
        template.to_string()
    } else {
        format!("{template}\n\n{args}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cloned repository links its command to the user's key: the key never becomes a
    /// command's description or prompt; the user's own linked command still counts.
    #[cfg(unix)]
    #[test]
    fn a_project_command_that_links_outside_its_folder_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let (config, cwd) = (dir.path().join("config"), dir.path().join("p"));
        std::fs::create_dir_all(config.join("commands")).unwrap();
        std::fs::create_dir_all(cwd.join(".tandem/commands")).unwrap();
        std::fs::write(dir.path().join("id_test"), "PRIVATE KEY").unwrap();
        std::os::unix::fs::symlink(
            dir.path().join("id_test"),
            cwd.join(".tandem/commands/leak.md"),
        )
        .unwrap();
        std::fs::write(dir.path().join("dotfile.md"), "Mine").unwrap();
        std::os::unix::fs::symlink(
            dir.path().join("dotfile.md"),
            config.join("commands/mine.md"),
        )
        .unwrap();
        let commands = discover(&cwd, &config, &[], &[]);
        assert!(commands.iter().all(|c| c.name != "leak"));
        assert!(commands.iter().any(|c| c.name == "mine"));
        assert!(!format!("{commands:?}").contains("PRIVATE"));
    }

    #[test]
    fn discovers_builtins_then_user_then_project() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config");
        let cwd = dir.path().join("p");
        std::fs::create_dir_all(config.join("commands")).unwrap();
        std::fs::create_dir_all(cwd.join(".tandem/commands")).unwrap();
        std::fs::write(config.join("commands/review.md"), "Review it (user)").unwrap();
        std::fs::write(
            config.join("commands/compact.md"),
            "cannot replace a built-in",
        )
        .unwrap();
        std::fs::write(
            cwd.join(".tandem/commands/review.md"),
            "---\ndescription: \"Review a file\"\n---\nReview $ARGUMENTS carefully.\n",
        )
        .unwrap();
        let commands = discover(&cwd, &config, &[], &[]);
        let names: Vec<_> = commands.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            ["compact", "init", "rewind", "undo", "permissions", "review"]
        );
        let review = &commands[5];
        assert_eq!(review.description, "Review a file");
        assert_eq!(review.hint.as_deref(), Some("arguments"));
        assert_eq!(
            review.action,
            Action::Prompt("Review $ARGUMENTS carefully.".into())
        );
    }

    #[test]
    fn a_projects_command_action_replaces_nothing_of_yours() {
        let dir = tempfile::tempdir().unwrap();
        let action = |name: &str, command: &str| crate::config::ActionSpec {
            name: name.into(),
            description: None,
            prompt: None,
            command: Some(command.into()),
        };
        let commands = discover(
            dir.path(),
            &dir.path().join("config"),
            &[action("fmt", "cargo fmt")],
            &[action("fmt", "touch X"), action("lint", "make lint")],
        );
        let fmt = commands.iter().find(|c| c.name == "fmt").unwrap();
        assert_eq!(
            fmt.action,
            Action::Command {
                line: "cargo fmt".into(),
                declared_by: None
            }
        );
        let lint = commands.iter().find(|c| c.name == "lint").unwrap();
        assert!(matches!(
            &lint.action,
            Action::Command {
                declared_by: Some(_),
                ..
            }
        ));
        assert_eq!(lint.description, "runs the project's command `make lint`");
    }

    #[test]
    fn parse_and_expand() {
        let invoked = |name, args, after| Some(Invocation { name, args, after });
        assert_eq!(
            parse("/review src/a.rs now"),
            invoked("review", "src/a.rs now", "")
        );
        assert_eq!(parse("  /compact"), invoked("compact", "", ""));
        assert_eq!(parse("not a command"), None);
        assert_eq!(parse("/"), None);
        // The lines after the command's own are not its arguments.
        assert_eq!(
            parse("/rewind\nsrc/main.rs:12: fn main() {"),
            invoked("rewind", "", "src/main.rs:12: fn main() {")
        );
        assert_eq!(
            parse("/rewind 2 \r\n\nmore\nlines\n"),
            invoked("rewind", "2", "more\nlines")
        );
        assert_eq!(expand("Review $ARGUMENTS.", "a.rs"), "Review a.rs.");
        assert_eq!(expand("Explain.", "more"), "Explain.\n\nmore");
    }
}
