//! `tandem exec --output-schema FILE` (and `_meta.tandem.outputSchema` on `session/prompt`):
//! the final answer is one JSON value valid against the schema, sent as `response_format`
//! where the server takes it, else asked for, checked, and repaired once; a run whose answer
//! still does not validate exits 6 with the answer on stderr.

use serde_json::{Value, json};

use super::exec::exec_blocking;
use crate::common::{MockModel, Reply, Workspace, session_with};

fn schema_file() -> String {
    format!(
        "{}/fixtures/exec/review.schema.json",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn schema() -> Value {
    serde_json::from_str(&std::fs::read_to_string(schema_file()).unwrap()).unwrap()
}

const VALID: &str = r#"{"verdict": "request_changes", "issues": [{"file": "src/lib.rs", "line": 8, "problem": "TODO left in"}]}"#;

/// `tandem exec --output-schema … PROMPT` against `mock`, with `structured_output` set in
/// the user's config when `structured`; returns exit code, stdout and stderr.
async fn review(mock: &MockModel, structured: bool, prompt: &str) -> (i32, String, String) {
    let ws = Workspace::new();
    if structured {
        ws.write(
            "home/.config/tandem/config.toml",
            "structured_output = true\n",
        );
    }
    let env = ws.env(mock);
    exec_blocking(ws, env, &["--output-schema", &schema_file(), prompt], None).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_takes_json_schema_gets_it_and_stdout_is_the_value() {
    let mock = MockModel::start(vec![Reply::text(&[&VALID[..30], &VALID[30..]])]).await;
    let ws = Workspace::new();
    ws.write(
        "home/.config/tandem/config.toml",
        "structured_output = true\n",
    );
    let mut env = ws.env(&mock);
    // Quiet logs: the answer's pieces on stderr would have debug lines between them.
    env.retain(|(k, _)| k != "RUST_LOG");
    env.push(("RUST_LOG".into(), "warn".into()));
    let (code, stdout, stderr) = exec_blocking(
        ws,
        env,
        &["--output-schema", &schema_file(), "Review src/lib.rs"],
        None,
    )
    .await;
    assert_eq!(code, 0, "{stderr}");
    let value: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(value, serde_json::from_str::<Value>(VALID).unwrap());
    assert_eq!(
        stdout.lines().count(),
        1,
        "only the value on stdout: {stdout}"
    );
    // The answer streamed to stderr, its two pieces joined on one line.
    assert!(stderr.contains(VALID), "{stderr}");
    let request = &mock.requests()[0];
    assert_eq!(request.body["response_format"]["type"], "json_schema");
    assert_eq!(
        request.body["response_format"]["json_schema"]["schema"],
        schema()
    );
    // The format is told with the prompt, so the system prompt stays the same.
    assert!(!request.system_prompt().contains("## Answer format"));
    assert!(request.last_user_text().contains("## Answer format"));
    assert!(request.last_user_text().contains("\"request_changes\""));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invalid_answer_is_repaired_once_with_the_validation_error() {
    let mock = MockModel::start(vec![
        Reply::text(&["Sure! ", r#"{"verdict": "maybe"}"#]),
        Reply::text(&[
            "```json\n",
            r#"{"verdict": "approve", "issues": []}"#,
            "\n```",
        ]),
    ])
    .await;
    let ws = Workspace::new();
    let env = ws.env(&mock);
    let (code, stdout, stderr) = exec_blocking(
        ws,
        env,
        &[
            "--output-schema",
            &schema_file(),
            "--output",
            "json",
            "Review",
        ],
        None,
    )
    .await;
    assert_eq!(code, 0, "{stderr}");
    let summary: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        summary["structuredOutput"],
        json!({"verdict": "approve", "issues": []})
    );
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    // A custom endpoint is not assumed to take response_format: asked and checked instead.
    assert!(requests[0].body.get("response_format").is_none());
    assert!(requests[0].last_user_text().contains("## Answer format"));
    let repair = requests[1].last_user_text();
    assert!(repair.contains("not a single JSON value"), "{repair}");
    assert!(
        repair.contains("Answer again with only the corrected JSON"),
        "{repair}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_that_stays_invalid_exits_6_with_the_text_on_stderr() {
    let mock = MockModel::start(vec![
        Reply::text(&[r#"{"verdict": "maybe", "issues": []}"#]),
        Reply::text(&[r#"{"verdict": "still maybe", "issues": []}"#]),
    ])
    .await;
    let (code, stdout, stderr) = review(&mock, false, "Review").await;
    assert_eq!(code, 6, "{stderr}");
    assert_eq!(stdout, "", "nothing that fails the schema reaches stdout");
    assert!(
        stderr.contains("the answer does not match the output schema"),
        "{stderr}"
    );
    assert!(stderr.contains("/verdict"), "{stderr}");
    assert!(
        stderr.contains("still maybe"),
        "the partial answer: {stderr}"
    );
    let repair = mock.requests()[1].last_user_text();
    assert!(repair.contains("does not match the schema"), "{repair}");
    assert_eq!(mock.requests().len(), 2, "one repair only");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_schema_that_is_not_json_schema_is_a_usage_error() {
    let mock = MockModel::start(vec![]).await;
    let ws = Workspace::new();
    let bad = ws.write("bad.json", r#"{"type": "no-such-type"}"#);
    let missing = ws.project().join("missing.json");
    let env = ws.env(&mock);
    for (file, needle) in [(bad, "not a valid JSON Schema"), (missing, "cannot read")] {
        let (code, stdout, stderr) = exec_blocking(
            Workspace::new(),
            env.clone(),
            &["--output-schema", file.to_str().unwrap(), "Review"],
            None,
        )
        .await;
        assert_eq!(code, 2, "{stderr}");
        assert_eq!(stdout, "");
        assert!(stderr.contains(needle), "{stderr}");
    }
    assert!(mock.requests().is_empty());
    drop(ws);
}

/// Over ACP: `_meta.tandem.outputSchema` on the prompt, the value in the answer's `_meta`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_prompt_takes_an_output_schema_in_meta() {
    let (mock, _ws, mut agent, session) = session_with(vec![
        Reply::text(&[VALID]),
        Reply::text(&["not json"]),
        Reply::text(&["still not json"]),
    ])
    .await;
    let prompt = |text: &str, schema: Value| {
        json!({"sessionId": session, "prompt": [{"type": "text", "text": text}],
               "_meta": {"tandem": {"outputSchema": schema}}})
    };
    let r = agent
        .request("session/prompt", prompt("review", schema()))
        .await;
    assert_eq!(r["result"]["stopReason"], "end_turn", "{r}");
    assert_eq!(
        r["result"]["_meta"]["tandem"]["structuredOutput"],
        serde_json::from_str::<Value>(VALID).unwrap()
    );
    let r = agent
        .request("session/prompt", prompt("again", schema()))
        .await;
    assert_eq!(r["result"]["stopReason"], "end_turn", "{r}");
    let error = r["result"]["_meta"]["tandem"]["structuredOutputError"]
        .as_str()
        .unwrap();
    assert!(error.contains("not a single JSON value"), "{error}");
    let r = agent
        .request("session/prompt", prompt("bad", json!({"type": 7})))
        .await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("outputSchema")
    );
    // A prompt without a schema is unchanged.
    agent.drain();
    crate::common::still_usable(&mock, &mut agent, &session).await;
    let last = mock.requests().last().unwrap().clone();
    assert!(!last.system_prompt().contains("## Answer format"));
    assert!(
        last.last_user_text().contains("no longer applies"),
        "{}",
        last.last_user_text()
    );
    agent.assert_valid();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_refuses_json_schema_is_asked_without_it_at_once() {
    // llama-cpp-python's answer to a json_schema response_format.
    let refusal = r#"{"detail":[{"type":"literal_error","loc":["body","response_format","type"],"msg":"Input should be 'text' or 'json_object'","input":"json_schema"}]}"#;
    let mock = MockModel::start(vec![Reply::status(500, refusal), Reply::text(&[VALID])]).await;
    let (code, stdout, stderr) = review(&mock, true, "Review").await;
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        serde_json::from_str::<Value>(&stdout).unwrap(),
        serde_json::from_str::<Value>(VALID).unwrap()
    );
    let requests = mock.requests();
    assert_eq!(requests.len(), 2, "refused once, not retried");
    assert!(requests[0].body.get("response_format").is_some());
    assert!(requests[1].body.get("response_format").is_none());
    assert!(requests[1].last_user_text().contains("## Answer format"));
}
