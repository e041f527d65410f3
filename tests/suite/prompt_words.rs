//! What a prompt's words mean when a client adds to them (issue 55): a slash command takes
//! its arguments from its own line only (agent-shell appends the line the user was on to the
//! first prompt), and a session's title comes from the user's words, never a client's markup
//! (avante.nvim's `<previous_user_message>`, `<context uri=…>`), and follows a rewind, live,
//! after a reload and in `session/list`.

use serde_json::{Value, json};

use crate::common::mock_model::user_texts;
use crate::common::{Agent, MockModel, Reply, Workspace, joined, of_kind};

/// The titles `updates` told the editor, in order.
fn titles(updates: &[Value]) -> Vec<String> {
    of_kind(updates, "session_info_update")
        .iter()
        .map(|u| u["title"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// agent-shell "appends the current line of the buffer it was opened from (auto-context) to
/// the first prompt" (../shared/clients/README.md): the lines after a command's own are not
/// its arguments, for a built-in command and for a prompt command alike.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slash_commands_arguments_are_its_own_line() {
    let mock = MockModel::start(vec![Reply::text(&["one"]), Reply::text(&["reviewed"])]).await;
    let ws = Workspace::new();
    ws.write(
        "project/.tandem/commands/review.md",
        "Review $ARGUMENTS carefully.\n",
    );
    let mut agent = Agent::spawn(&ws.env(&mock), &[]);
    let session = agent.open_session(&ws.project()).await;
    agent.prompt(&session, "first question").await;

    let context = "src/main.rs:12: fn main() {";
    let (response, updates) = agent.prompt(&session, &format!("/rewind\n{context}")).await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let said = joined(&updates, "agent_message_chunk");
    assert!(
        said.contains("1. first question"),
        "the turns listed: {said}"
    );

    let (response, _) = agent
        .prompt(&session, &format!("/review src/a.rs\n{context}"))
        .await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let sent = user_texts(&mock.requests()[1].body);
    let last = sent.last().unwrap();
    assert!(
        last.starts_with("Review src/a.rs carefully.\n\n"),
        "the arguments are the command's line: {last}"
    );
    assert!(
        last.ends_with(context),
        "what followed still reaches the model: {last}"
    );
    agent.assert_valid();
}

/// avante.nvim sends earlier messages and selections wrapped in tags: the title is the
/// user's words. A rewind that takes back every turn leaves the title to the next prompt,
/// live, after a restart and in `session/list`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_title_is_the_users_words_and_follows_a_rewind() {
    let mock = MockModel::start(vec![
        Reply::text(&["one"]),
        Reply::text(&["two"]),
        Reply::text(&["three"]),
        Reply::text(&["four"]),
    ])
    .await;
    let ws = Workspace::new();
    let mut agent = Agent::spawn(&ws.env(&mock), &[]);
    let session = agent.open_session(&ws.project()).await;
    let avante = "<previous_user_message>make it faster</previous_user_message>\n\
                  <context uri=\"file:///p/src/main.rs\">\nfn main() {}\n</context>\n\
                  rename the main function";
    let (_, updates) = agent.prompt(&session, avante).await;
    assert_eq!(titles(&updates), ["rename the main function"]);
    let (_, updates) = agent.prompt(&session, "add a test for it").await;
    assert!(titles(&updates).is_empty(), "titled once: {updates:?}");
    let (_, updates) = agent.prompt(&session, "/rewind").await;
    let listed = joined(&updates, "agent_message_chunk");
    assert!(listed.contains("1. rename the main function"), "{listed}");

    let (response, updates) = agent.prompt(&session, "/rewind 1").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert!(
        titles(&updates).is_empty(),
        "nothing is kept to give a title"
    );
    let (_, updates) = agent
        .prompt(
            &session,
            "<context uri=\"file:///p/a\">x</context>\nwrite the docs",
        )
        .await;
    assert_eq!(
        titles(&updates),
        ["write the docs"],
        "the next prompt titles it"
    );
    let (_, updates) = agent.prompt(&session, "then a changelog").await;
    assert!(titles(&updates).is_empty());
    agent.assert_valid();
    let _ = agent.shutdown().await;

    let mut again = Agent::spawn(&ws.env(&mock), &[]);
    again.initialize().await;
    let listed = again.request_ok("session/list", json!({})).await;
    let shown: Vec<&str> = listed["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["sessionId"] == session.as_str())
        .filter_map(|s| s["title"].as_str())
        .collect();
    assert_eq!(shown, ["write the docs"], "{listed}");
    again.assert_valid();
}
