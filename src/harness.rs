//! The fuzz harness for tandem's whole message path (feature `fuzzing`): bytes go in where
//! stdin would be, through the real transport, the ACP dispatch, sessions, turns against the
//! replay model and the tools, and every line that comes out must be a JSON-RPC message.
//!
//! Raw bytes rarely make a valid request, so a line that starts with a control byte is a
//! *template* line: the byte picks a request (every method tandem answers, with valid
//! surroundings) and the rest of the line, parsed as JSON when it is JSON, fills in one
//! field. Other lines pass through as they are. Each run starts with `initialize` and a
//! `session/new` whose id is `fz`, so templates reach prompts, modes and the extensions.
//!
//! `fuzz/` holds the cargo-fuzz target; `tests/suite/fuzz_corpus.rs` replays the saved
//! corpus on stable Rust in CI.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::config::{Config, Overrides};
use crate::model::replay::{ReplayClient, Script};

/// The session every run opens.
pub(crate) const SESSION: &str = "fz";

/// The name of every thread tandem runs on under the harness, so a panic hook can tell
/// tandem's panics (which tokio would otherwise swallow) from the caller's.
pub const THREAD_NAME: &str = "tandem-harness";

/// Longest a single run may take before it counts as a hang.
const HANG: Duration = Duration::from_secs(30);

struct Fixed {
    runtime: tokio::runtime::Runtime,
    config: Arc<Config>,
    script: Script,
    cwd: PathBuf,
}

fn fixed() -> &'static Fixed {
    static FIXED: OnceLock<Fixed> = OnceLock::new();
    FIXED.get_or_init(|| {
        let root = std::env::temp_dir().join(format!("tandem-fuzz-{}", std::process::id()));
        let cwd = root.join("project");
        let _ = std::fs::create_dir_all(cwd.join("src"));
        let _ = std::fs::write(
            cwd.join("src/lib.rs"),
            "pub fn greets() {}\n// TODO: add a test\n",
        );
        let vars: Vec<(&str, PathBuf)> = vec![
            ("HOME", root.clone()),
            ("TANDEM_HOME", root.join("data")),
            ("XDG_CONFIG_HOME", root.join("config")),
        ];
        let env = move |name: &str| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string_lossy().into_owned())
                .or_else(|| (name == "TANDEM_MODE").then(|| "full-access".to_string()))
        };
        let overrides = Overrides {
            replay: Some(PathBuf::from("fuzz")),
            ..Overrides::default()
        };
        let mut config = match Config::resolve(&overrides, &env) {
            Ok(config) => config,
            Err(e) => panic!("the fuzz configuration does not resolve: {e}"),
        };
        // A run ends soon after its input: what still runs then is cancelled.
        config.eof_grace = Duration::from_millis(50);
        config.max_message_bytes = 1 << 20;
        let mut script: Script =
            match serde_json::from_str(include_str!("../fixtures/demo/tour.json")) {
                Ok(script) => script,
                Err(e) => panic!("the tour fixture does not parse: {e}"),
            };
        for turn in &mut script.turns {
            turn.delay_ms = 0;
        }
        let runtime = match tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name(THREAD_NAME)
            .enable_all()
            .build()
        {
            Ok(runtime) => runtime,
            Err(e) => panic!("no runtime: {e}"),
        };
        Fixed {
            runtime,
            config: Arc::new(config),
            script,
            cwd,
        }
    })
}

/// The request a template line makes: method, params with `$` where the fuzzed value goes,
/// and whether it is a notification.
const TEMPLATES: &[(&str, &str, bool)] = &[
    (
        "initialize",
        r#"{"protocolVersion":"$","clientCapabilities":{}}"#,
        false,
    ),
    (
        "initialize",
        r#"{"protocolVersion":1,"clientCapabilities":"$"}"#,
        false,
    ),
    ("authenticate", r#"{"methodId":"$"}"#, false),
    ("session/new", r#"{"cwd":"$","mcpServers":[]}"#, false),
    ("session/new", r#"{"cwd":"@CWD","mcpServers":"$"}"#, false),
    (
        "session/load",
        r#"{"sessionId":"$","cwd":"@CWD","mcpServers":[]}"#,
        false,
    ),
    ("session/resume", r#"{"sessionId":"$","cwd":"@CWD"}"#, false),
    (
        "session/prompt",
        r#"{"sessionId":"fz","prompt":"$"}"#,
        false,
    ),
    (
        "session/prompt",
        r#"{"sessionId":"fz","prompt":[{"type":"text","text":"$"}]}"#,
        false,
    ),
    (
        "session/prompt",
        r#"{"sessionId":"$","prompt":[{"type":"text","text":"hi"}]}"#,
        false,
    ),
    ("session/cancel", r#"{"sessionId":"$"}"#, true),
    ("session/cancel", r#"{"sessionId":"fz"}"#, true),
    (
        "session/set_mode",
        r#"{"sessionId":"fz","modeId":"$"}"#,
        false,
    ),
    (
        "session/set_config_option",
        r#"{"sessionId":"fz","configId":"$","value":"ask"}"#,
        false,
    ),
    (
        "session/set_config_option",
        r#"{"sessionId":"fz","configId":"mode","value":"$"}"#,
        false,
    ),
    ("session/list", r#""$""#, false),
    ("session/close", r#"{"sessionId":"$"}"#, false),
    ("session/delete", r#"{"sessionId":"$"}"#, false),
    ("$/cancel_request", r#"{"requestId":"$"}"#, true),
    ("_tandem/status", r#""$""#, false),
    ("_tandem/usage", r#"{"sessionId":"$"}"#, false),
    (
        "_tandem/session/export",
        r#"{"sessionId":"fz","format":"$"}"#,
        false,
    ),
    ("_tandem/actions/list", r#"{"sessionId":"$"}"#, false),
    (
        "_tandem/actions/run",
        r#"{"sessionId":"fz","name":"$"}"#,
        false,
    ),
];

/// Turns fuzz input into the lines written to tandem: template lines expanded (see the
/// module docs), the rest unchanged, after the `initialize` + `session/new` prefix.
pub fn expand(input: &[u8]) -> Vec<u8> {
    let cwd = fixed().cwd.to_string_lossy().into_owned();
    let mut out = Vec::new();
    let prefix = [
        // No fs/terminal capabilities: nothing would answer those requests, so the tools run
        // locally, in a scratch project.
        json!({"jsonrpc":"2.0","id":"p0","method":"initialize","params":{"protocolVersion":1,
               "clientCapabilities":{}}}),
        json!({"jsonrpc":"2.0","id":"p1","method":"session/new","params":{"cwd":cwd,"mcpServers":[],
               "_meta":{"tandem":{"sessionId":SESSION}}}}),
    ];
    for line in prefix {
        out.extend_from_slice(line.to_string().as_bytes());
        out.push(b'\n');
    }
    for (n, line) in input.split(|b| *b == b'\n').enumerate() {
        match line.first() {
            Some(&b) if b < 0x20 && !matches!(b, b'\t' | b'\r') => {
                // The control bytes but tab, newline and carriage return, in order, pick
                // templates 0, 1, 2, …
                let rank = usize::from(b)
                    - usize::from(b > b'\t')
                    - usize::from(b > b'\n')
                    - usize::from(b > b'\r');
                let (method, params, notification) = TEMPLATES[rank % TEMPLATES.len()];
                let rest = &line[1..];
                let value = serde_json::from_slice::<Value>(rest)
                    .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(rest).into_owned()));
                let params = params
                    .replace("@CWD", &cwd.replace('\\', "\\\\").replace('"', "\\\""))
                    .replace("\"$\"", &value.to_string());
                let params: Value = serde_json::from_str(&params).unwrap_or(Value::Null);
                let mut message = json!({"jsonrpc": "2.0", "method": method, "params": params});
                if !notification {
                    message["id"] = json!(n);
                }
                out.extend_from_slice(message.to_string().as_bytes());
            }
            _ => out.extend_from_slice(line),
        }
        out.push(b'\n');
    }
    out
}

/// Runs tandem over `input` (already expanded, or raw) and returns what it wrote, split into
/// lines. Panics if the run takes longer than a hang would.
pub fn run(input: &[u8]) -> Vec<Vec<u8>> {
    let fixed = fixed();
    let input = input.to_vec();
    fixed.runtime.block_on(async move {
        let client = match ReplayClient::new(fixed.script.clone()) {
            Ok(client) => Arc::new(client),
            Err(e) => panic!("replay: {e}"),
        };
        let (editor, agent) = tokio::io::duplex(1 << 16);
        let (agent_in, agent_out) = tokio::io::split(agent);
        let framing = crate::transport::Framing {
            max_line: fixed.config.max_message_bytes,
            trace: None,
        };
        let wire = crate::transport::over(agent_in, agent_out, framing);
        let server = tokio::spawn(crate::serve(
            fixed.config.clone(),
            client,
            wire,
            std::future::pending(),
        ));
        let (mut from_agent, mut to_agent) = tokio::io::split(editor);
        let write = async move {
            let _ = to_agent.write_all(&input).await;
            let _ = to_agent.shutdown().await;
            // Keep the pipe open until tandem has closed its side.
            to_agent
        };
        let read = async move {
            let mut out = Vec::new();
            let _ = from_agent.read_to_end(&mut out).await;
            out
        };
        let both = async { tokio::join!(write, read) };
        let Ok((_, out)) = tokio::time::timeout(HANG, both).await else {
            panic!("tandem did not finish within {HANG:?}: a hang");
        };
        let _ = server.await;
        out.split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .map(<[u8]>::to_vec)
            .collect()
    })
}

/// What is wrong with one output line as a JSON-RPC 2.0 message, if anything.
pub fn check_line(line: &[u8]) -> Option<String> {
    let shown = || String::from_utf8_lossy(&line[..line.len().min(300)]).into_owned();
    let Ok(message) = serde_json::from_slice::<Value>(line) else {
        return Some(format!("not JSON: {}", shown()));
    };
    if message["jsonrpc"] != "2.0" {
        return Some(format!("not JSON-RPC 2.0: {}", shown()));
    }
    let is_call = message["method"].is_string();
    let is_answer = message.get("id").is_some()
        && (message.get("result").is_some() != message.get("error").is_some());
    if !is_call && !is_answer {
        return Some(format!("neither a call nor an answer: {}", shown()));
    }
    if let Some(error) = message.get("error")
        && !(error["code"].is_i64() && error["message"].is_string())
    {
        return Some(format!("a malformed error: {}", shown()));
    }
    None
}
