//! `ask_user`: the model asks the user a question mid-turn. An editor that advertised form
//! elicitation gets `elicitation/create` (scoped to the session and the tool call); another
//! gets a question with choices as a permission-style request, and one it cannot show that
//! way in the answer, with the model told to end its turn.

use serde_json::{Value, json};

use crate::common::calls::{call_events, tool_result};
use crate::common::editor::Answer;
use crate::common::mock_model::Reply;
use crate::common::{joined, response, tool_session};

fn asking(args: Value) -> Vec<Reply> {
    asking_as("q", args)
}

/// The model calls `ask_user` as call `id`, then thanks the user.
fn asking_as(id: &str, args: Value) -> Vec<Reply> {
    vec![
        Reply::tools(&[(id, "ask_user", args)]),
        Reply::text(&["Thanks."]),
    ]
}

const ELICITING: &str = r#"{"elicitation": {"form": {}}}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_editor_with_elicitation_is_sent_a_form_and_the_model_reads_the_answer() {
    let args = json!({"question": "Which database?", "choices": ["postgres", "sqlite"]});
    let caps: Value = serde_json::from_str(ELICITING).unwrap();
    let (mock, _ws, mut agent, id, editor) = tool_session(asking(args), caps, "ask").await;
    editor.elicit_with(&[json!({"action": "accept", "content": {"answer": "sqlite"}})]);
    let (response, updates) = agent.prompt(&id, "set up storage").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let asked = editor.params_of("elicitation/create");
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0]["message"], "The model asks: Which database?");
    assert_eq!(asked[0]["mode"], "form");
    assert_eq!(asked[0]["sessionId"], id.as_str());
    assert_eq!(asked[0]["toolCallId"], "q");
    assert_eq!(
        asked[0]["requestedSchema"]["properties"]["answer"]["enum"],
        json!(["postgres", "sqlite"])
    );
    assert!(editor.params_of("session/request_permission").is_empty());
    assert_eq!(
        tool_result(&mock.requests()[1], "q"),
        "The user answered: sqlite"
    );
    let shown = call_events(&updates, "q");
    assert!(
        shown.iter().any(|u| u["title"]
            .as_str()
            .is_some_and(|t| t.contains("Which database?"))),
        "{shown:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_form_declined_or_dismissed_is_told_to_the_model() {
    let form = json!({"question": "Deploy settings?", "fields": [
        {"name": "port", "type": "integer", "label": "Port"},
        {"name": "tls", "type": "boolean", "required": false}
    ]});
    let caps: Value = serde_json::from_str(ELICITING).unwrap();
    let mut script = asking_as("q1", form.clone());
    script.extend(asking_as("q2", form.clone()));
    script.extend(asking_as("q3", form));
    let (mock, _ws, mut agent, id, editor) = tool_session(script, caps, "ask").await;
    editor.elicit_with(&[
        json!({"action": "accept", "content": {"port": 8080, "tls": true}}),
        json!({"action": "decline"}),
    ]);
    agent.prompt(&id, "one").await;
    agent.prompt(&id, "two").await;
    agent.prompt(&id, "three").await;
    let asked = editor.params_of("elicitation/create");
    assert_eq!(
        asked[0]["requestedSchema"]["properties"]["port"]["type"],
        "integer"
    );
    assert_eq!(asked[0]["requestedSchema"]["required"], json!(["port"]));
    let requests = mock.requests();
    let first = tool_result(&requests[1], "q1");
    assert!(
        first.contains("\"port\": 8080") && first.contains("\"tls\": true"),
        "{first}"
    );
    assert_eq!(
        tool_result(&requests[3], "q2"),
        "The user chose not to answer."
    );
    assert_eq!(
        tool_result(&requests[5], "q3"),
        "The user dismissed the question without answering."
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_elicitation_choices_become_a_permission_style_request() {
    let args = json!({"question": "Which database?", "choices": ["postgres", "sqlite"]});
    let mut script = asking_as("q1", args.clone());
    script.extend(asking_as("q2", args));
    let (mock, _ws, mut agent, id, editor) = tool_session(script, json!({}), "ask").await;
    editor.answer_with(&[Answer::Select("choice-1"), Answer::Select("decline")]);
    agent.prompt(&id, "set up storage").await;
    agent.prompt(&id, "again").await;
    let asked = editor.params_of("session/request_permission");
    assert_eq!(asked.len(), 2);
    let options = crate::common::calls::option_names(&asked[0]);
    assert_eq!(options, ["postgres", "sqlite", "Don't answer"]);
    assert!(editor.params_of("elicitation/create").is_empty());
    let requests = mock.requests();
    assert_eq!(tool_result(&requests[1], "q1"), "The user answered: sqlite");
    assert_eq!(
        tool_result(&requests[3], "q2"),
        "The user chose not to answer."
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_the_editor_cannot_show_is_written_into_the_answer() {
    let args = json!({"question": "What should the service be called?"});
    let (mock, _ws, mut agent, id, editor) = tool_session(asking(args), json!({}), "ask").await;
    let (_, updates) = agent.prompt(&id, "name it").await;
    assert!(editor.params_of("session/request_permission").is_empty());
    assert!(editor.params_of("elicitation/create").is_empty());
    assert!(
        joined(&updates, "agent_message_chunk")
            .contains("**Question:** What should the service be called?"),
        "{updates:#?}"
    );
    assert!(tool_result(&mock.requests()[1], "q").contains("End your turn now"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_while_the_user_is_asked_ends_the_turn() {
    let args = json!({"question": "Which?", "choices": ["a", "b"]});
    let caps: Value = serde_json::from_str(ELICITING).unwrap();
    let (_mock, _ws, mut agent, id, editor) = tool_session(asking(args), caps, "ask").await;
    editor
        .hanging
        .lock()
        .unwrap()
        .push("elicitation/create".into());
    let pending = agent.start_prompt(&id, "ask me").await;
    editor.wait_for("elicitation/create").await;
    agent
        .notify("session/cancel", json!({"sessionId": id}))
        .await;
    let response = response(pending).await;
    assert_eq!(response["result"]["stopReason"], "cancelled", "{response}");
}
