//! `/permissions`: what this session may do, shown to the user and never to the model — the
//! mode's rules and the answers remembered in this session, the background commands, and
//! which of the project's programs (its MCP servers) the user trusted or refused.
//!
//! `/permissions clear` forgets the session's remembered answers; `/permissions untrust`
//! forgets the project's trust answers, so the next session asks again.

use super::context::TurnContext;
use super::outcome::TurnOutcome;
use crate::permission::trust::TrustStore;
use crate::store::History;
use crate::types::{StopReason, TurnEvent};

/// What `/permissions` was asked to do before it shows.
enum Asked {
    Show,
    Clear,
    Untrust,
    Unknown(String),
}

impl Asked {
    fn of(args: &str) -> Self {
        match args.trim() {
            "" => Asked::Show,
            "clear" => Asked::Clear,
            "untrust" => Asked::Untrust,
            other => Asked::Unknown(other.to_string()),
        }
    }
}

/// Runs `/permissions` with `args`; the turn ends with what it showed.
pub(crate) async fn permissions(ctx: TurnContext, history: History, args: String) -> TurnOutcome {
    let store = TrustStore::new(&ctx.facts.config.home);
    let mut text = String::new();
    let mut forgot = None;
    match Asked::of(&args) {
        Asked::Show => {}
        Asked::Clear => {
            let mut forgotten = 0;
            ctx.meters
                .grants
                .send_modify(|grants| forgotten = grants.clear());
            text = format!("Forgot {forgotten} remembered answer(s).\n\n");
        }
        Asked::Untrust => forgot = Some(store.forget(Some(&ctx.facts.cwd))),
        Asked::Unknown(other) => {
            text = format!(
                "`/permissions {other}`: unknown argument; `/permissions` shows, `/permissions clear` forgets this session's answers, `/permissions untrust` forgets which of this project's programs you trusted or refused.\n\n"
            );
        }
    }
    text.push_str(&rules(&ctx).await);
    text.push_str(&background(&ctx));
    text.push_str(&project_trust(&ctx, &store));
    match forgot {
        Some(Ok(gone)) => text.push_str(&format!(
            "\nForgot {} trust answer(s) for this project: the next session asks again. Servers already running keep running until their session closes.",
            gone.len()
        )),
        Some(Err(e)) => text.push_str(&format!("\nCould not forget them: {e}")),
        None => text.push_str("\n`/permissions untrust` forgets these answers for this project."),
    }
    ctx.emit(TurnEvent::Text(text));
    TurnOutcome::ended(history, Ok(StopReason::EndTurn))
}

/// The mode's rules and the answers remembered in this session.
async fn rules(ctx: &TurnContext) -> String {
    if ctx.services.policy.sandbox.is_some() {
        // Whether this system can sandbox, checked once per process.
        let _ = crate::platform::sandbox::availability().await;
    }
    let snapshot = ctx.services.policy.snapshot(&ctx.meters.grants.borrow());
    snapshot.markdown(ctx.mode())
}

/// The session's background commands, when it has any.
fn background(ctx: &TurnContext) -> String {
    let jobs = ctx.services.background.list();
    if jobs.is_empty() {
        return String::new();
    }
    let mut text = "\n\n**Background commands** (stopped when the session ends):\n".to_string();
    for job in jobs {
        let state = match (job.running, job.exit_code) {
            (true, _) => "running".to_string(),
            (false, Some(code)) => format!("ended, exit code {code}"),
            (false, None) => "stopped".to_string(),
        };
        text.push_str(&format!("\n- `{}` `{}`: {state}", job.id, job.command));
    }
    text.push('\n');
    text
}

/// The project's programs the user trusted or refused, and the ones still waiting.
fn project_trust(ctx: &TurnContext, store: &TrustStore) -> String {
    let mut text = format!(
        "\n\n**Programs this project declares** (`{}`; they start only once you trust them):\n",
        ctx.facts.cwd.join(".tandem").join("config.toml").display()
    );
    let entries = store.for_project(&ctx.facts.cwd);
    for entry in &entries {
        text.push_str(&format!(
            "- {} MCP server `{}`: `{}` — since {}\n",
            entry.verdict.name(),
            entry.name,
            entry.command,
            entry.at
        ));
    }
    let waiting: Vec<String> = ctx
        .services
        .mcp
        .states()
        .into_iter()
        .filter(|(_, state, _)| *state == "held")
        .map(|(name, ..)| name)
        .collect();
    for name in &waiting {
        text.push_str(&format!(
            "- waiting: MCP server `{name}` (asked at the next prompt)\n"
        ));
    }
    if entries.is_empty() && waiting.is_empty() {
        text.push_str("- none trusted or refused\n");
    }
    text
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::testkit::{FakeEditor, Reply, Session};
    use crate::types::PermissionAnswer;

    async fn shown(s: &Session, line: &str) -> String {
        let before = s.events.text().len();
        s.prompt(line).await.unwrap();
        s.events.text()[before..].to_string()
    }

    #[tokio::test]
    async fn clear_forgets_the_sessions_answers_and_an_unknown_argument_says_what_exists() {
        let replies = vec![
            Reply::calls(&[(
                "w1",
                "write_file",
                json!({"path": "a.txt", "content": "a\n"}),
            )]),
            Reply::text("written"),
        ];
        let editor = FakeEditor::answering(&[PermissionAnswer::AllowAlways]);
        let s = Session::open(replies, editor, "", &[]).await;
        s.prompt("write a").await.unwrap();
        let said = shown(&s, "/permissions soon").await;
        assert!(
            said.starts_with("`/permissions soon`: unknown argument; `/permissions` shows"),
            "{said}"
        );
        assert!(
            said.contains("**Programs this project declares**"),
            "{said}"
        );
        assert!(said.contains("- none trusted or refused"), "{said}");
        let said = shown(&s, "/permissions clear").await;
        assert!(said.starts_with("Forgot 1 remembered answer(s)."), "{said}");
        let said = shown(&s, "/permissions clear").await;
        assert!(said.starts_with("Forgot 0 remembered answer(s)."), "{said}");
        assert_eq!(s.requests().len(), 2, "the model never saw any of it");
    }

    #[tokio::test]
    async fn untrust_forgets_the_projects_answers() {
        let s = Session::open(Vec::new(), FakeEditor::answering(&[]), "", &[]).await;
        let said = shown(&s, "/permissions untrust").await;
        assert!(
            said.ends_with(
                "Forgot 0 trust answer(s) for this project: the next session asks again. Servers already running keep running until their session closes."
            ),
            "{said}"
        );
        let said = shown(&s, "/permissions").await;
        assert!(
            said.ends_with("`/permissions untrust` forgets these answers for this project."),
            "{said}"
        );
    }
}
