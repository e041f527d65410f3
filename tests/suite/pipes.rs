//! Plain pipes: `tandem < requests.ndjson > replies.ndjson` with a file written by hand.

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::common::Workspace;
use crate::common::acp_client::schema_violations_for;

fn run(
    ws: &Workspace,
    fixture: &str,
    requests: &str,
    extra_env: &[(&str, &str)],
) -> (i32, Vec<Value>, String) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new(crate::common::tandem_bin())
        .args(["--replay", &root.join(fixture).to_string_lossy()])
        .env_clear()
        .envs(ws.base_env())
        .envs(
            extra_env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string())),
        )
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .stdin(Stdio::from(
            std::fs::File::open(root.join(requests)).unwrap(),
        ))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let replies = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str(l).unwrap_or_else(|e| panic!("non-JSON on stdout ({e}): {l}"))
        })
        .collect();
    (
        out.status.code().unwrap_or(-1),
        replies,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The method of each request in `requests`, by id, to check responses against the schema.
fn methods(requests: &str) -> std::collections::HashMap<String, String> {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(requests))
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|m| Some((m.get("id")?.to_string(), m["method"].as_str()?.to_string())))
        .collect()
}

fn normalized(mut message: Value) -> Value {
    if let Some(update) = message
        .pointer_mut("/params/update")
        .filter(|u| u.get("updatedAt").is_some())
    {
        update["updatedAt"] = Value::from("<time>");
    }
    // The fixture shows the default build; `--all-features` adds ACP's unstable fork and
    // providers.
    if cfg!(feature = "acp-session-fork")
        && let Some(caps) = message
            .pointer_mut("/result/agentCapabilities/sessionCapabilities")
            .and_then(Value::as_object_mut)
    {
        caps.remove("fork");
    }
    if cfg!(feature = "acp-providers")
        && let Some(caps) = message
            .pointer_mut("/result/agentCapabilities")
            .and_then(Value::as_object_mut)
    {
        caps.remove("providers");
    }
    message
}

#[test]
fn the_hand_written_sample_gives_the_documented_replies() {
    let ws = Workspace::new();
    let (code, replies, stderr) = run(
        &ws,
        "fixtures/demo/hello.json",
        "fixtures/acp/hello.ndjson",
        &[],
    );
    assert_eq!(code, 0, "{stderr}");
    let methods = methods("fixtures/acp/hello.ndjson");
    for reply in &replies {
        let answered = reply
            .get("id")
            .and_then(|id| methods.get(&id.to_string()))
            .map(String::as_str);
        let problems = schema_violations_for(reply, answered);
        assert!(problems.is_empty(), "{problems:?}\n{reply}");
    }
    let expected: Vec<Value> = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/acp/hello.expected.ndjson"),
    )
    .unwrap()
    .lines()
    .map(|l| serde_json::from_str(l).unwrap())
    .collect();
    let mut got: Vec<Value> = replies.into_iter().map(normalized).collect();
    // Message ids are random: each becomes `<message N>` in the order they first appear.
    let mut ids: Vec<String> = Vec::new();
    for reply in &mut got {
        if let Some(id) = reply.pointer_mut("/params/update/messageId") {
            let text = id.as_str().unwrap_or_default().to_string();
            let n = match ids.iter().position(|seen| *seen == text) {
                Some(n) => n,
                None => {
                    ids.push(text);
                    ids.len() - 1
                }
            };
            *id = Value::from(format!("<message {}>", n + 1));
        }
    }
    assert_eq!(got.len(), expected.len(), "{got:#?}");
    for (g, e) in got.iter().zip(&expected) {
        assert_eq!(g, e);
    }
    // The last reply is the prompt's: it finished after stdin had ended.
    assert_eq!(got.last().unwrap()["result"]["stopReason"], "end_turn");
}

#[test]
fn a_prompt_still_running_after_the_grace_period_is_cancelled() {
    let ws = Workspace::new();
    let slow = ws.write("slow.json", &{
        let events: Vec<Value> = (0..400)
            .map(|i| serde_json::json!({"text": format!("t{i} ")}))
            .collect();
        serde_json::json!({"turns": [{"delay_ms": 50, "events": events}]}).to_string()
    });
    let start = std::time::Instant::now();
    let (code, replies, stderr) = run(
        &ws,
        &slow.to_string_lossy(),
        "fixtures/acp/hello.ndjson",
        &[("TANDEM_EOF_GRACE_SECS", "0.5")],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(
        start.elapsed() < std::time::Duration::from_secs(15),
        "not the 20 s the answer would take"
    );
    assert_eq!(
        replies.last().unwrap()["result"]["stopReason"],
        "cancelled",
        "{:?}",
        replies.last()
    );
    assert!(
        stderr.contains("stdin ended and requests are still running"),
        "{stderr}"
    );
}

#[test]
fn a_requested_session_id_must_be_new_and_plain() {
    let ws = Workspace::new();
    let requests = ws.write(
        "requests.ndjson",
        &[
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[],"_meta":{"tandem":{"sessionId":"dup"}}}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[],"_meta":{"tandem":{"sessionId":"dup"}}}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[],"_meta":{"tandem":{"sessionId":"../x"}}}}"#,
        ]
        .join("\n"),
    );
    let (code, replies, _) = run(
        &ws,
        "fixtures/demo/hello.json",
        &requests.to_string_lossy(),
        &[],
    );
    assert_eq!(code, 0);
    let by_id = |id: i64| replies.iter().find(|r| r["id"] == id).unwrap().clone();
    assert_eq!(by_id(2)["result"]["sessionId"], "dup");
    assert_eq!(by_id(3)["error"]["code"], -32602);
    assert_eq!(by_id(4)["error"]["code"], -32602);
}
