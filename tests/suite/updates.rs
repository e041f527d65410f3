//! ACP's newer session updates, each sent only to an editor that advertised it and replaced
//! by the older form for others: `notice` for tandem's own notes, `plan_update` /
//! `plan_removed`, `compaction_summary_chunk`, and a `messageId` on every message chunk.

use serde_json::{Value, json};

use crate::common::mock_model::{self, Reply};
use crate::common::{Agent, MockModel, Workspace, joined, of_kind, tool_session};

/// A model that repeats one call three times (the third is not run), then answers.
fn repeating() -> Vec<Reply> {
    let read = || json!({"path": "README.md"});
    let mut script: Vec<Reply> = (1..=3)
        .map(|i| Reply::tools(&[(&*format!("c{i}"), "read_file", read())]))
        .collect();
    script.push(Reply::text(&["Here is my answer."]));
    script
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notes_are_notices_for_editors_that_take_them_and_answer_text_for_others() {
    let caps = json!({"session": {"notices": {}}});
    let (_mock, _ws, mut agent, id, _editor) = tool_session(repeating(), caps, "ask").await;
    let (response, updates) = agent.prompt(&id, "read the readme").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let notices = of_kind(&updates, "notice");
    assert_eq!(notices.len(), 1, "{updates:#?}");
    assert_eq!(notices[0]["severity"], "warning");
    assert!(
        notices[0]["title"]
            .as_str()
            .unwrap()
            .contains("same tool calls 3 times in a row"),
        "{}",
        notices[0]
    );
    assert_eq!(
        joined(&updates, "agent_message_chunk"),
        "Here is my answer.",
        "the note is not part of the answer"
    );

    let (_mock, _ws, mut agent, id, _editor) = tool_session(repeating(), json!({}), "ask").await;
    let (_, updates) = agent.prompt(&id, "read the readme").await;
    assert!(of_kind(&updates, "notice").is_empty());
    let shown = joined(&updates, "agent_message_chunk");
    assert!(
        shown.contains("_tandem: the model made the same tool calls 3 times in a row")
            && shown.ends_with("Here is my answer."),
        "{shown}"
    );
}

fn plan_call(entries: Value) -> Vec<Reply> {
    vec![
        Reply::tools(&[("p1", "update_plan", json!({"entries": entries}))]),
        Reply::tools(&[("p2", "update_plan", json!({"entries": []}))]),
        Reply::text(&["done"]),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plans_are_plan_updates_and_an_empty_plan_is_removed_for_editors_that_take_them() {
    let entries = json!([{"content": "Fix the bug", "status": "in_progress", "priority": "high"}]);
    let (_mock, _ws, mut agent, id, _editor) =
        tool_session(plan_call(entries.clone()), json!({"plan": {}}), "ask").await;
    let (_, updates) = agent.prompt(&id, "plan").await;
    assert!(of_kind(&updates, "plan").is_empty(), "{updates:#?}");
    let update = of_kind(&updates, "plan_update");
    assert_eq!(update.len(), 1, "{updates:#?}");
    assert_eq!(update[0]["plan"]["type"], "items");
    assert_eq!(update[0]["plan"]["planId"], "plan");
    assert_eq!(update[0]["plan"]["entries"], entries);
    let removed = of_kind(&updates, "plan_removed");
    assert_eq!(removed.len(), 1);
    assert_eq!(removed[0]["planId"], "plan");

    let (mock, ws, mut agent, id, _editor) =
        tool_session(plan_call(entries.clone()), json!({}), "ask").await;
    let (_, updates) = agent.prompt(&id, "plan").await;
    assert!(of_kind(&updates, "plan_update").is_empty());
    assert!(of_kind(&updates, "plan_removed").is_empty());
    let plans = of_kind(&updates, "plan");
    assert_eq!(plans.len(), 2);
    assert_eq!(plans[0]["entries"], entries);
    assert_eq!(plans[1]["entries"], json!([]));
    assert!(agent.shutdown().await.0.success());

    // A replay shows the plan as the editor takes it.
    let mut again = Agent::spawn(&ws.env(&mock), &[]);
    again.initialize_with(json!({"plan": {}})).await;
    let (_, replayed) = again.open_stored("session/load", &id, &ws.project()).await;
    assert_eq!(of_kind(&replayed, "plan_update").len(), 1, "{replayed:#?}");
    assert_eq!(of_kind(&replayed, "plan_removed").len(), 1);
}

/// The messages the chunks of `kind` make, in order: each `messageId` with its text.
fn messages(updates: &[Value], kind: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for u in of_kind(updates, kind) {
        let id = u["messageId"].as_str().expect("a messageId").to_string();
        let text = u["content"]["text"].as_str().unwrap_or_default();
        match out.last_mut() {
            Some((last, whole)) if *last == id => whole.push_str(text),
            _ => {
                assert!(
                    out.iter().all(|(seen, _)| *seen != id),
                    "a message's chunks come together: {updates:#?}"
                );
                out.push((id, text.to_string()));
            }
        }
    }
    out
}

fn texts(messages: &[(String, String)]) -> Vec<&str> {
    messages.iter().map(|(_, t)| t.as_str()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chunks_of_one_message_share_a_message_id_and_each_message_has_its_own() {
    let script = vec![
        Reply::chunks(vec![
            mock_model::reasoning("Let me "),
            mock_model::reasoning("look."),
            mock_model::text("Reading "),
            mock_model::text("it."),
            mock_model::tool_call(0, "r", "read_file", "{\"path\": \"README.md\"}"),
            mock_model::finish("tool_calls"),
        ]),
        Reply::text(&["It is ", "small."]),
        Reply::text(&["Second ", "answer."]),
    ];
    let (mock, ws, mut agent, id, _editor) = tool_session(script, json!({}), "ask").await;
    let (_, first) = agent.prompt(&id, "read the readme").await;
    let (_, second) = agent.prompt(&id, "again").await;
    let thoughts = messages(&first, "agent_thought_chunk");
    assert_eq!(texts(&thoughts), ["Let me look."]);
    let answers = messages(&first, "agent_message_chunk");
    assert_eq!(texts(&answers), ["Reading it.", "It is small."]);
    assert_ne!(
        thoughts[0].0, answers[0].0,
        "reasoning and answer are two messages"
    );
    let later = messages(&second, "agent_message_chunk");
    assert_eq!(texts(&later), ["Second answer."]);
    assert!(
        answers.iter().all(|(id, _)| *id != later[0].0),
        "a new prompt's answer is a new message"
    );
    assert!(agent.shutdown().await.0.success());

    // A replay gives every chunk an id too: each user message and each answer its own.
    let mut again = Agent::spawn(&ws.env(&mock), &[]);
    again.initialize().await;
    let (_, replayed) = again.open_stored("session/load", &id, &ws.project()).await;
    let users = messages(&replayed, "user_message_chunk");
    assert_eq!(texts(&users), ["read the readme", "again"]);
    let answers = messages(&replayed, "agent_message_chunk");
    assert_eq!(
        texts(&answers),
        ["Reading it.", "It is small.", "Second answer."]
    );
}

/// Two exchanges, then `/compact` with a summary streamed in two pieces.
async fn compacting(caps: Value) -> (MockModel, Workspace, String, Vec<Value>) {
    let script = vec![
        Reply::text(&["Paris."]),
        Reply::text(&["About 2 million."]),
        Reply::text(&["The user asked ", "about Paris."]),
    ];
    let (mock, ws, mut agent, id, _editor) = tool_session(script, caps, "ask").await;
    agent.prompt(&id, "Capital of France?").await;
    agent.prompt(&id, "How many people live there?").await;
    let (response, updates) = agent.prompt(&id, "/compact").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert!(agent.shutdown().await.0.success());
    (mock, ws, id, updates)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_compactions_summary_streams_as_chunks_to_editors_that_show_compactions() {
    let (mock, ws, id, updates) = compacting(json!({"session": {"compaction": {}}})).await;
    let chunks = of_kind(&updates, "compaction_summary_chunk");
    assert_eq!(chunks.len(), 2, "{updates:#?}");
    let status = of_kind(&updates, "compaction_update");
    let compaction = &status[0]["compactionId"];
    assert!(chunks.iter().all(|c| &c["compactionId"] == compaction));
    let text: String = chunks
        .iter()
        .map(|c| c["content"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(text, "The user asked about Paris.");
    assert_eq!(status.last().unwrap()["status"], "completed");

    // Replayed: the compaction with its summary.
    let mut again = Agent::spawn(&ws.env(&mock), &[]);
    again
        .initialize_with(json!({"session": {"compaction": {}}}))
        .await;
    let (_, replayed) = again.open_stored("session/load", &id, &ws.project()).await;
    let status = of_kind(&replayed, "compaction_update");
    assert_eq!(status.len(), 1, "{replayed:#?}");
    assert_eq!(status[0]["status"], "completed");
    assert_eq!(
        status[0]["summary"][0]["text"],
        "The user asked about Paris."
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_compaction_updates_a_compaction_is_one_notice_or_one_note() {
    let (_mock, _ws, _id, updates) = compacting(json!({"session": {"notices": {}}})).await;
    assert!(of_kind(&updates, "compaction_summary_chunk").is_empty());
    assert!(of_kind(&updates, "compaction_update").is_empty());
    let notices = of_kind(&updates, "notice");
    assert_eq!(notices.len(), 1, "{updates:#?}");
    assert_eq!(notices[0]["severity"], "info");
    assert!(notices[0]["title"].as_str().unwrap().contains("compacted"));

    let (_mock, _ws, _id, updates) = compacting(json!({})).await;
    assert!(of_kind(&updates, "notice").is_empty());
    assert!(joined(&updates, "agent_message_chunk").contains("Earlier conversation compacted"));
}
