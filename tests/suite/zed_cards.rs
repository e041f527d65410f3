//! What Zed's tool-call cards show at the end, built from what tandem sent by the model of
//! Zed's thread in `tests/common/zed.rs` ([`zed::cards`]): a background command's card keeps
//! its terminal when the command ends, and a load shows what it printed; a command's
//! terminal is labelled with the command the model wrote, not the sandbox's line; a `task`
//! card shows the subagent's answer once.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::calls::tool_result;
use crate::common::editor::FakeEditor;
use crate::common::{Agent, MockModel, Reply, Workspace, zed};

/// An agent started as Zed starts it, in `mode`, its session over the project folder (Zed's
/// only worktree), and Zed's editor.
async fn zed_session(
    ws: &Workspace,
    mock: &MockModel,
    mode: &str,
) -> (Agent, String, Arc<FakeEditor>) {
    let folders = [ws.project()];
    let editor = zed::editor(&folders);
    let mut env = ws.env(mock);
    env.push(("TANDEM_MODE".into(), mode.into()));
    let mut agent = Agent::spawn_with(&env, &[], Some(editor.clone()));
    zed::initialize(&mut agent).await;
    let session = zed::new_session(&mut agent, &folders, json!([])).await;
    let id = session["sessionId"].as_str().unwrap().to_string();
    (agent, id, editor)
}

/// Adds what the agent sends to `messages` until tool call `id` has a status other than
/// `in_progress`: a background command's end follows the turn's answer.
async fn until_ended(agent: &mut Agent, messages: &mut Vec<Value>, id: &str) {
    let ended = |m: &Value| {
        let update = &m["params"]["update"];
        update["toolCallId"] == id && update.get("status").is_some_and(|s| s != "in_progress")
    };
    let start = Instant::now();
    while !messages.iter().any(ended) {
        assert!(start.elapsed() < Duration::from_secs(15), "{messages:#?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
        messages.extend(agent.drain());
    }
}

/// Zed replaces a card's content with every update that carries some ("an update that
/// carries `content` replaces the card's content wholesale (an empty list empties the card)";
/// `update_fields` ends with "`self.content.truncate(new_content_len)`"), and labels a
/// terminal "`format!(\"{} {}\", args.command, args.args.join(\" \"))`" from `terminal/create`
/// until a title arrives once the card shows it (`update_fields`: "`for terminal in
/// self.terminals() { … terminal.update_command_label(&title, cx) }`", before the content).
/// A background command that outlives its call, and one that ended before the call
/// answered: each card still shows its terminal when the command has ended, the terminal is
/// labelled with the command the model wrote (not `tandem sandbox --policy … -- sh -c …`),
/// and the title lost the permission prompt's note. A `session/load` shows each as its call
/// answered, its output so far and where the command was, as text (its terminal is long
/// gone).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_commands_card_keeps_its_terminal_when_it_ends() {
    let long = "for w in first; do echo $w; done; sleep 2; echo second";
    let quick = "for w in quick; do echo $w; done";
    let mock = MockModel::start(vec![
        Reply::tools(&[(
            "r",
            "run_command",
            json!({"command": long, "background": true}),
        )]),
        Reply::tools(&[(
            "q",
            "run_command",
            json!({"command": quick, "background": true}),
        )]),
        Reply::text(&["started"]),
    ])
    .await;
    let ws = Workspace::new();
    let (mut agent, session, _editor) = zed_session(&ws, &mock, "ask").await;
    let (answer, mut messages) = agent.prompt(&session, "start them").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let requests = mock.requests();
    assert!(tool_result(&requests[1], "r").contains("keeps running"));
    // `q` ends at once, and its call says so, unless the machine is too busy to start it
    // within the call's first second and a half.
    let quick_ended = tool_result(&requests[2], "q").contains("already ended");
    // The user was asked with the policy's note in the title.
    let asked: Vec<String> = messages
        .iter()
        .filter(|m| m["method"] == "session/request_permission")
        .map(|m| {
            m["params"]["toolCall"]["title"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(asked.len(), 2, "{asked:?}");
    assert!(
        asked
            .iter()
            .all(|t| t.contains("may name a folder outside the project")),
        "{asked:?}"
    );
    until_ended(&mut agent, &mut messages, "r").await;
    until_ended(&mut agent, &mut messages, "q").await;
    assert_eq!(zed::thread_problems(&messages), Vec::<String>::new());
    let cards = zed::cards(&messages);
    for (id, command, terminal) in [("r", long, "term-1"), ("q", quick, "term-2")] {
        let card = zed::card(&cards, id);
        assert_eq!(card.status, "Completed", "{card:?}");
        assert_eq!(
            card.terminals(),
            [(terminal.to_string(), command.to_string())],
            "{card:?}"
        );
        assert_eq!(card.title, command, "{card:?}");
    }
    agent.assert_valid();
    agent.shutdown().await;

    let folders = [ws.project()];
    let mut agent = Agent::spawn_with(&ws.env(&mock), &[], Some(zed::editor(&folders)));
    zed::initialize(&mut agent).await;
    let (_, replayed) = zed::load_session(&mut agent, &session, &folders, json!([])).await;
    let cards = zed::cards(&replayed);
    let long_card = zed::card(&cards, "r");
    assert!(
        long_card.text().contains("in the background as `bg-1`"),
        "{long_card:?}"
    );
    let quick_card = zed::card(&cards, "q");
    let shown = if quick_ended { "quick" } else { "`bg-2`" };
    assert!(quick_card.text().contains(shown), "{quick_card:?}");
    assert_eq!(zed::thread_problems(&replayed), Vec::<String>::new());
    agent.assert_valid();
}

/// A command in the editor's terminal, asked about with the policy's note: once the card
/// shows the terminal, the terminal and the card are labelled with the command as the model
/// wrote it (see the test above for Zed's rule), not with the line `terminal/create` ran.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_cards_terminal_shows_the_command_the_model_wrote() {
    let command = "for w in one two; do echo $w; done";
    let mock = MockModel::start(vec![
        Reply::tools(&[("c", "run_command", json!({"command": command}))]),
        Reply::text(&["ran"]),
    ])
    .await;
    let ws = Workspace::new();
    let (mut agent, session, editor) = zed_session(&ws, &mock, "ask").await;
    let (answer, messages) = agent.prompt(&session, "run it").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    // `terminal/create` ran a shell (inside the sandbox, where there is one), not `for`.
    assert_ne!(editor.params_of("terminal/create")[0]["command"], "for");
    let card = zed::card(&zed::cards(&messages), "c");
    assert_eq!(card.status, "Completed", "{card:?}");
    assert_eq!(
        card.terminals(),
        [("term-1".to_string(), command.to_string())],
        "{card:?}"
    );
    assert_eq!(card.title, command);
    assert_eq!(zed::thread_problems(&messages), Vec::<String>::new());
    agent.assert_valid();
}

/// Zed does not advertise `subagents`, so it follows a subagent inside its `task` card, whose
/// content each update replaces (Zed's rule above). The card ends with the subagent's answer
/// once, as the model reads it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_task_card_shows_the_subagents_answer_once() {
    let mock = MockModel::start(vec![
        Reply::tools(&[(
            "t",
            "task",
            json!({"agent": "general", "description": "Say hi", "prompt": "Say hi."}),
        )]),
        Reply::text(&["child says hi"]),
        Reply::text(&["done"]),
    ])
    .await;
    let ws = Workspace::new();
    let (mut agent, session, _editor) = zed_session(&ws, &mock, "full-access").await;
    let (answer, messages) = agent.prompt(&session, "delegate").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert_eq!(tool_result(&mock.requests()[2], "t"), "child says hi");
    let card = zed::card(&zed::cards(&messages), "t");
    assert_eq!(card.status, "Completed", "{card:?}");
    assert_eq!(card.text().matches("child says hi").count(), 1, "{card:?}");
    assert_eq!(card.text().trim(), "child says hi", "{card:?}");
    agent.assert_valid();
}
