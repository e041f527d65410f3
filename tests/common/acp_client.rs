//! An ACP test client: spawns the built `tandem` binary, talks ndjson to it over real stdio
//! like an editor, and validates every line the agent writes against the official ACP v1
//! JSON Schema (`schema.rs`).

use std::collections::HashMap;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::{mpsc, oneshot};

pub(crate) use super::schema::{schema_violations, schema_violations_for};

/// How long any single wait may take before the test fails (a hang, not a slow machine).
pub(crate) const WAIT: Duration = Duration::from_secs(20);

type Pending = Arc<Mutex<HashMap<u64, (String, oneshot::Sender<Value>)>>>;
type Stdin = Arc<tokio::sync::Mutex<Option<ChildStdin>>>;

async fn write_line(stdin: &Stdin, line: &str) {
    write_bytes(stdin, line.as_bytes()).await;
}

async fn write_bytes(stdin: &Stdin, line: &[u8]) {
    let mut guard = stdin.lock().await;
    let stdin = guard.as_mut().expect("stdin open");
    stdin.write_all(line).await.unwrap();
    stdin.write_all(b"\n").await.unwrap();
    stdin.flush().await.unwrap();
}

/// A running agent process.
pub(crate) struct Agent {
    child: Child,
    stdin: Stdin,
    pending: Pending,
    updates: mpsc::UnboundedReceiver<Value>,
    violations: Arc<Mutex<Vec<String>>>,
    stderr: Arc<Mutex<String>>,
    stdout_lines: Arc<Mutex<Vec<String>>>,
    /// The task reading stdout; it ends when the agent's stdout closes.
    reader: tokio::task::JoinHandle<()>,
    next_id: u64,
    /// How long a response or message may take (`WAIT` unless [`Agent::patient`]).
    wait: Duration,
}

impl Agent {
    /// Spawns `tandem` with exactly these environment variables (plus PATH) and arguments.
    pub(crate) fn spawn(env: &[(String, String)], args: &[&str]) -> Agent {
        Self::spawn_with(env, args, None)
    }

    /// Like [`Agent::spawn`], with `editor` answering the agent's requests.
    pub(crate) fn spawn_with(
        env: &[(String, String)],
        args: &[&str],
        editor: Option<Arc<super::editor::FakeEditor>>,
    ) -> Agent {
        let mut command = match super::wine::exe() {
            Some(exe) => {
                let mut wine = Command::new("wine");
                wine.arg(exe);
                wine
            }
            None => Command::new(crate::common::tandem_bin()),
        };
        command.env_clear();
        for name in super::wine::PASSED {
            if let Some(value) = std::env::var_os(name).filter(|_| super::wine::active()) {
                command.env(name, value);
            }
        }
        command
            .args(args)
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        for (k, v) in env {
            command.env(k, v);
        }
        let mut child = command.spawn().expect("spawn tandem");
        let stdin: Stdin = Arc::new(tokio::sync::Mutex::new(child.stdin.take()));
        let stdout = child.stdout.take().unwrap();
        let mut stderr_pipe = child.stderr.take().unwrap();

        let pending: Pending = Arc::default();
        let violations: Arc<Mutex<Vec<String>>> = Arc::default();
        let stderr: Arc<Mutex<String>> = Arc::default();
        let stdout_lines: Arc<Mutex<Vec<String>>> = Arc::default();
        let (tx, updates) = mpsc::unbounded_channel();

        let (p, v, lines, input) = (
            pending.clone(),
            violations.clone(),
            stdout_lines.clone(),
            stdin.clone(),
        );
        let reader = tokio::spawn(async move {
            let mut reader = BufReader::new(stdout).lines();
            while let Ok(Some(line)) = reader.next_line().await {
                lines.lock().unwrap().push(line.clone());
                let message: Value = match serde_json::from_str(&line) {
                    Ok(m) => m,
                    Err(e) => {
                        v.lock()
                            .unwrap()
                            .push(format!("non-JSON line on stdout ({e}): {line}"));
                        continue;
                    }
                };
                let waiter = match message["id"].as_u64() {
                    Some(id) if message.get("method").is_none() => p.lock().unwrap().remove(&id),
                    _ => None,
                };
                let answered = waiter.as_ref().map(|(method, _)| method.as_str());
                for problem in schema_violations_for(&message, answered) {
                    v.lock().unwrap().push(format!("{problem}\n  in: {line}"));
                }
                if let (Some(editor), Some(_)) = (
                    &editor,
                    message
                        .get("id")
                        .filter(|_| message.get("method").is_some()),
                ) {
                    // A request from the agent: the fake editor answers it.
                    editor.record(&message);
                    let (editor, input, request) = (editor.clone(), input.clone(), message.clone());
                    tokio::spawn(async move {
                        if let Some(reply) = editor.answer(&request).await {
                            // An agent whose stdin the test closed still asks (as it ends);
                            // the answer then has nowhere to go.
                            let mut guard = input.lock().await;
                            if let Some(stdin) = guard.as_mut() {
                                let line = format!("{reply}\n");
                                let _ = stdin.write_all(line.as_bytes()).await;
                                let _ = stdin.flush().await;
                            }
                        }
                    });
                }
                if message.get("method").is_some() {
                    // Notifications and agent->client requests, in order.
                    let _ = tx.send(message);
                } else if let Some((_, waiter)) = waiter {
                    let _ = waiter.send(message);
                } else {
                    // Responses to ids we never sent (e.g. parse errors with id null).
                    let _ = tx.send(message);
                }
            }
        });
        let err = stderr.clone();
        tokio::spawn(async move {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stderr_pipe.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                err.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });

        Agent {
            child,
            stdin,
            pending,
            updates,
            violations,
            stderr,
            stdout_lines,
            reader,
            next_id: 1,
            wait: WAIT,
        }
    }

    /// Waits up to `wait` for each response and message (a real model on a busy machine).
    pub(crate) fn patient(mut self, wait: Duration) -> Agent {
        self.wait = wait;
        self
    }

    /// Writes one line of arbitrary bytes (not necessarily UTF-8) to the agent's stdin.
    pub(crate) async fn send_bytes(&mut self, line: &[u8]) {
        write_bytes(&self.stdin, line).await;
    }

    /// Writes one raw line to the agent's stdin.
    pub(crate) async fn send_line(&mut self, line: &str) {
        write_line(&self.stdin, line).await;
    }

    /// Sends a request without waiting; returns its id and the receiver of its response.
    pub(crate) async fn start_request(
        &mut self,
        method: &str,
        params: Value,
    ) -> (u64, oneshot::Receiver<Value>) {
        let id = self.next_id;
        self.next_id += 1;
        let (tx, rx) = oneshot::channel();
        self.pending
            .lock()
            .unwrap()
            .insert(id, (method.to_string(), tx));
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send_line(&line.to_string()).await;
        (id, rx)
    }

    /// Sends a request and waits for the whole response (result or error).
    pub(crate) async fn request(&mut self, method: &str, params: Value) -> Value {
        let (_, rx) = self.start_request(method, params).await;
        let response = tokio::time::timeout(self.wait, rx)
            .await
            .unwrap_or_else(|_| panic!("no response to {method}; stderr:\n{}", self.stderr()))
            .expect("reader alive");
        self.assert_valid();
        response
    }

    /// Sends a request and returns its `result`, failing the test on an error response.
    pub(crate) async fn request_ok(&mut self, method: &str, params: Value) -> Value {
        let response = self.request(method, params).await;
        assert!(
            response.get("error").is_none(),
            "{method} failed: {response}"
        );
        response["result"].clone()
    }

    /// Sends a notification.
    pub(crate) async fn notify(&mut self, method: &str, params: Value) {
        let line = json!({"jsonrpc": "2.0", "method": method, "params": params});
        self.send_line(&line.to_string()).await;
    }

    /// `initialize` as an editor without fs/terminal capabilities sends it.
    pub(crate) async fn initialize(&mut self) -> Value {
        self.initialize_with(json!({})).await
    }

    /// `initialize` with these client capabilities.
    pub(crate) async fn initialize_with(&mut self, capabilities: Value) -> Value {
        self.request_ok(
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": capabilities,
                   "clientInfo": {"name": "tandem-tests", "version": "0"}}),
        )
        .await
    }

    /// `session/new` in `cwd`; returns the whole result, with the session's
    /// `available_commands_update` (which follows the response) under `"commands"`.
    pub(crate) async fn new_session(&mut self, cwd: &Path) -> Value {
        let mut result = self
            .request_ok(
                "session/new",
                json!({"cwd": super::path_str(cwd), "mcpServers": []}),
            )
            .await;
        let commands = self.next_message().await;
        assert_eq!(
            commands["params"]["update"]["sessionUpdate"], "available_commands_update",
            "{commands}"
        );
        assert_eq!(commands["params"]["sessionId"], result["sessionId"]);
        result["commands"] = commands["params"]["update"]["availableCommands"].clone();
        result
    }

    /// `session/load` (or `session/resume`) of `session` in `cwd`; returns the result and the
    /// updates that came with it, at least up to the `available_commands_update` that follows
    /// the response.
    pub(crate) async fn open_stored(
        &mut self,
        method: &str,
        session: &str,
        cwd: &Path,
    ) -> (Value, Vec<Value>) {
        let params = json!({"sessionId": session, "cwd": super::path_str(cwd), "mcpServers": []});
        self.open_stored_with(method, params).await
    }

    /// [`Agent::open_stored`] with these exact parameters.
    pub(crate) async fn open_stored_with(
        &mut self,
        method: &str,
        params: Value,
    ) -> (Value, Vec<Value>) {
        let result = self.request_ok(method, params).await;
        // Not only the last: a live notice (the session's sandbox check ending) may come
        // after the commands update.
        let commands =
            |u: &Value| u["params"]["update"]["sessionUpdate"] == "available_commands_update";
        let mut updates = self.drain();
        while !updates.iter().any(commands) {
            updates.push(self.next_message().await);
        }
        (result, updates)
    }

    /// `initialize` then `session/new` in `cwd`; returns the session id.
    pub(crate) async fn open_session(&mut self, cwd: &Path) -> String {
        self.initialize().await;
        let session = self.new_session(cwd).await;
        session["sessionId"].as_str().unwrap().to_string()
    }

    /// Starts a text prompt without waiting; returns the receiver of its response.
    pub(crate) async fn start_prompt(
        &mut self,
        session: &str,
        text: &str,
    ) -> oneshot::Receiver<Value> {
        let params = json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]});
        self.start_request("session/prompt", params).await.1
    }

    /// Sends `session/set_config_option` with a value id; returns the whole response.
    pub(crate) async fn set_option(&mut self, session: &str, option: &str, value: &str) -> Value {
        let params = json!({"sessionId": session, "configId": option, "value": value});
        self.request("session/set_config_option", params).await
    }

    /// Sends a text prompt and waits for its response; returns it with the updates before it.
    pub(crate) async fn prompt(&mut self, session: &str, text: &str) -> (Value, Vec<Value>) {
        let response = self
            .request(
                "session/prompt",
                json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]}),
            )
            .await;
        (response, self.drain())
    }

    /// Every message received so far that is not a response to one of our requests.
    pub(crate) fn drain(&mut self) -> Vec<Value> {
        let mut out = Vec::new();
        while let Ok(m) = self.updates.try_recv() {
            out.push(m);
        }
        out
    }

    /// Waits for the next notification (or unsolicited message).
    pub(crate) async fn next_message(&mut self) -> Value {
        tokio::time::timeout(self.wait, self.updates.recv())
            .await
            .expect("a message in time")
            .expect("agent alive")
    }

    /// What the agent wrote to stderr so far.
    pub(crate) fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Every line the agent wrote to stdout so far.
    pub(crate) fn stdout_lines(&self) -> Vec<String> {
        self.stdout_lines.lock().unwrap().clone()
    }

    /// Fails the test if any message so far broke the schema.
    pub(crate) fn assert_valid(&self) {
        let v = self.violations.lock().unwrap();
        assert!(
            v.is_empty(),
            "agent messages violate the ACP schema:\n{}",
            v.join("\n")
        );
    }

    /// Whether the process is still running.
    pub(crate) fn is_running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    /// The process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id().expect("the agent has not been waited for")
    }

    /// Kills the process with SIGKILL, as a crash would, and waits for it; how it ended
    /// (it may have died of something else first).
    pub(crate) async fn kill(mut self) -> ExitStatus {
        self.child.start_kill().unwrap();
        self.child.wait().await.unwrap()
    }

    /// Sends `signal` (stdin stays open) and waits for the process to exit.
    pub(crate) async fn stop_with(self, signal: nix::sys::signal::Signal) -> (ExitStatus, String) {
        let pid = nix::unistd::Pid::from_raw(self.child.id().unwrap() as i32);
        nix::sys::signal::kill(pid, signal).unwrap();
        self.exited("the signal").await
    }

    /// Waits for the process to end by itself (a crash the test arranged); its status.
    pub(crate) async fn dies(self) -> (ExitStatus, String) {
        self.exited("its crash").await
    }

    /// Closes stdin, keeping the agent to watch it end ([`Agent::stderr`],
    /// [`Agent::messages_until_closed`], then [`Agent::dies`]).
    pub(crate) async fn close_stdin(&mut self) {
        self.stdin.lock().await.take();
    }

    /// Every message the agent sends from now until its stdout closes (what it says as it
    /// ends, after [`Agent::close_stdin`] or a signal).
    pub(crate) async fn messages_until_closed(&mut self) -> Vec<Value> {
        let mut out = Vec::new();
        while let Some(m) = tokio::time::timeout(WAIT, self.updates.recv())
            .await
            .expect("the agent's stdout closes in time")
        {
            out.push(m);
        }
        out
    }

    /// Closes stdin and waits for the process to exit.
    pub(crate) async fn shutdown(self) -> (ExitStatus, String) {
        self.stdin.lock().await.take();
        self.exited("stdin closes").await
    }

    /// Waits for the exit that `after` caused; checks every message it sent.
    async fn exited(mut self, after: &str) -> (ExitStatus, String) {
        let status = tokio::time::timeout(WAIT, self.child.wait())
            .await
            .unwrap_or_else(|_| panic!("agent exits after {after}"))
            .unwrap();
        // Every line it wrote has been read (and checked) once its stdout is at its end.
        tokio::time::timeout(WAIT, &mut self.reader)
            .await
            .unwrap_or_else(|_| panic!("the agent's stdout stays open after it exited"))
            .unwrap();
        self.assert_valid();
        (status, self.stderr())
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            self.assert_valid();
        }
    }
}

/// Waits for a response started with [`Agent::start_request`] or [`Agent::start_prompt`].
pub(crate) async fn response(rx: oneshot::Receiver<Value>) -> Value {
    tokio::time::timeout(WAIT, rx)
        .await
        .expect("response in time")
        .expect("agent alive")
}

/// Asserts `response` is a JSON-RPC error with `code` whose message contains `needle`.
pub(crate) fn assert_error(response: &Value, code: i64, needle: &str) {
    assert_eq!(response["error"]["code"], code, "{response}");
    let message = response["error"]["message"].as_str().unwrap_or("");
    assert!(message.contains(needle), "`{needle}` not in: {response}");
}

/// The text of every `agent_message_chunk` (or `agent_thought_chunk`) in `updates`, joined.
pub(crate) fn joined(updates: &[Value], kind: &str) -> String {
    updates
        .iter()
        .filter(|u| u["params"]["update"]["sessionUpdate"] == kind)
        .map(|u| {
            u["params"]["update"]["content"]["text"]
                .as_str()
                .unwrap_or("")
                .to_string()
        })
        .collect()
}

/// The `session/update` payloads of one kind.
pub(crate) fn of_kind<'a>(updates: &'a [Value], kind: &str) -> Vec<&'a Value> {
    updates
        .iter()
        .filter(|u| u["params"]["update"]["sessionUpdate"] == kind)
        .map(|u| &u["params"]["update"])
        .collect()
}
