//! A fake editor that answers the agent's requests like a real one: `fs/*` against the disk
//! with unsaved-buffer overrides, `terminal/*` with real processes, and permission requests
//! from a scripted queue of answers. Every request is recorded.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::AsyncReadExt;
use tokio::sync::Notify;

/// A terminal the fake editor runs.
struct Term {
    output: Arc<Mutex<String>>,
    exit: Arc<Mutex<Option<Option<i32>>>>,
    exited: Arc<Notify>,
    pid: Option<u32>,
}

impl Term {
    /// Kills the terminal's command with all it started (its process group), as
    /// `terminal/kill` asks.
    fn kill(&self) {
        if let Some(pid) = self.pid {
            let group = if cfg!(unix) {
                format!("-{pid}")
            } else {
                pid.to_string()
            };
            let _ = std::process::Command::new("kill")
                .args(["-KILL", "--", &group])
                .status();
        }
    }
}

/// How the editor answers `session/request_permission`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Answer {
    /// Select this option id.
    Select(&'static str),
    /// The `cancelled` outcome.
    Cancelled,
    /// Never answer.
    Hang,
    /// A JSON-RPC error.
    Error,
}

/// The fake editor.
#[derive(Default)]
pub(crate) struct FakeEditor {
    /// Every request received: (method, params).
    pub requests: Mutex<Vec<(String, Value)>>,
    /// Unsaved buffers: path -> text, read instead of the disk.
    pub buffers: Mutex<HashMap<String, String>>,
    /// Answers to permission requests, in order; `allow_once` when empty.
    pub answers: Mutex<VecDeque<Answer>>,
    /// Results of `elicitation/create`, in order; `{"action": "cancel"}` when empty.
    pub elicited: Mutex<VecDeque<Value>>,
    /// Methods answered with an error instead (e.g. `fs/write_text_file`).
    pub failing: Mutex<Vec<String>>,
    /// Paths whose `fs/write_text_file` is answered with an error.
    pub failing_writes: Mutex<Vec<String>>,
    /// Methods never answered.
    pub hanging: Mutex<Vec<String>>,
    /// Methods answered only after this delay.
    pub delays: Mutex<HashMap<String, Duration>>,
    /// The most requests of each method that were in flight at once.
    pub max_in_flight: Mutex<HashMap<String, usize>>,
    in_flight: Mutex<HashMap<String, usize>>,
    terminals: Mutex<HashMap<String, Term>>,
    next_terminal: Mutex<u32>,
    /// Zed's rules for `fs/*` when set (see `zed::editor`): only paths inside these folders,
    /// and no read past the end.
    pub worktrees: Mutex<Option<Vec<std::path::PathBuf>>>,
}

impl FakeEditor {
    /// A fake editor behind an `Arc`, ready for `Agent::spawn_with`.
    pub(crate) fn new() -> Arc<FakeEditor> {
        Arc::new(FakeEditor::default())
    }

    /// Answers writes of `path` with an error (the user's disk is full, say).
    pub(crate) fn fail_writes_to(&self, path: &str) {
        self.failing_writes.lock().unwrap().push(path.to_string());
    }

    /// Queues permission answers.
    pub(crate) fn answer_with(&self, answers: &[Answer]) {
        self.answers.lock().unwrap().extend(answers.iter().cloned());
    }

    /// Queues the results of `elicitation/create` requests.
    pub(crate) fn elicit_with(&self, results: &[Value]) {
        self.elicited
            .lock()
            .unwrap()
            .extend(results.iter().cloned());
    }

    /// Makes `method` wait `delay` before answering.
    pub(crate) fn delay(&self, method: &str, delay: Duration) {
        self.delays.lock().unwrap().insert(method.into(), delay);
    }

    /// The most `method` requests in flight at once.
    pub(crate) fn peak(&self, method: &str) -> usize {
        self.max_in_flight
            .lock()
            .unwrap()
            .get(method)
            .copied()
            .unwrap_or(0)
    }

    /// Waits until a request of `method` has arrived.
    pub(crate) async fn wait_for(&self, method: &str) {
        for _ in 0..400 {
            if self.methods().iter().any(|m| m == method) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("no {method} request arrived; got {:?}", self.methods());
    }

    /// The methods received, in order.
    pub(crate) fn methods(&self) -> Vec<String> {
        self.requests
            .lock()
            .unwrap()
            .iter()
            .map(|(m, _)| m.clone())
            .collect()
    }

    /// The params of every request of `method`.
    pub(crate) fn params_of(&self, method: &str) -> Vec<Value> {
        self.requests
            .lock()
            .unwrap()
            .iter()
            .filter(|(m, _)| m == method)
            .map(|(_, p)| p.clone())
            .collect()
    }

    /// Records `request` as it arrives, before it is answered (requests are answered in tasks
    /// of their own, in any order).
    pub(crate) fn record(&self, request: &Value) {
        let method = request["method"].as_str().unwrap_or("").to_string();
        self.requests
            .lock()
            .unwrap()
            .push((method, request["params"].clone()));
    }

    /// The full JSON-RPC response to `request` (already [recorded](Self::record)), or `None`
    /// to leave it unanswered.
    pub(crate) async fn answer(&self, request: &Value) -> Option<Value> {
        let id = request["id"].clone();
        let method = request["method"].as_str().unwrap_or("").to_string();
        let params = request["params"].clone();
        if self.hanging.lock().unwrap().contains(&method) {
            return None;
        }
        let delay = self.delays.lock().unwrap().get(&method).copied();
        if let Some(delay) = delay {
            {
                let mut now = self.in_flight.lock().unwrap();
                let n = now.entry(method.clone()).or_default();
                *n += 1;
                let mut max = self.max_in_flight.lock().unwrap();
                let m = max.entry(method.clone()).or_default();
                *m = (*m).max(*n);
            }
            tokio::time::sleep(delay).await;
            *self.in_flight.lock().unwrap().get_mut(&method).unwrap() -= 1;
        }
        let refused_write = method == "fs/write_text_file"
            && self
                .failing_writes
                .lock()
                .unwrap()
                .iter()
                .any(|p| params["path"] == p.as_str());
        if refused_write || self.failing.lock().unwrap().contains(&method) {
            return Some(
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": format!("{method} failed in the editor")}}),
            );
        }
        if let Some(error) = self.zed_refusal(&method, &params) {
            return Some(json!({"jsonrpc": "2.0", "id": id, "error": error}));
        }
        let result = match method.as_str() {
            "fs/read_text_file" => {
                let path = super::wine::host_path(params["path"].as_str().unwrap_or(""))
                    .to_string_lossy()
                    .into_owned();
                let buffered = self.buffers.lock().unwrap().get(&path).cloned();
                match buffered
                    .map(Ok)
                    .unwrap_or_else(|| std::fs::read_to_string(&path))
                {
                    // `line` (1-based) and `limit` pick lines, as Zed does.
                    Ok(text) => {
                        let line = params["line"].as_u64().unwrap_or(1).max(1) as usize;
                        let text = match params["limit"].as_u64() {
                            Some(limit) => text
                                .split_inclusive('\n')
                                .skip(line - 1)
                                .take(limit as usize)
                                .collect(),
                            None if line > 1 => text.split_inclusive('\n').skip(line - 1).collect(),
                            None => text,
                        };
                        Ok(json!({"content": text}))
                    }
                    Err(_) => Err((-32002, format!("Resource not found: {path}"))),
                }
            }
            "fs/write_text_file" => {
                let path = super::wine::host_path(params["path"].as_str().unwrap_or(""));
                std::fs::write(path, params["content"].as_str().unwrap_or("")).unwrap();
                Ok(json!({}))
            }
            "session/request_permission" => {
                let answer = self
                    .answers
                    .lock()
                    .unwrap()
                    .pop_front()
                    .unwrap_or(Answer::Select("allow_once"));
                match answer {
                    Answer::Select(option) => {
                        Ok(json!({"outcome": {"outcome": "selected", "optionId": option}}))
                    }
                    Answer::Cancelled => Ok(json!({"outcome": {"outcome": "cancelled"}})),
                    Answer::Hang => return None,
                    Answer::Error => Err((-32603, "permission dialog failed".into())),
                }
            }
            "elicitation/create" => Ok(self
                .elicited
                .lock()
                .unwrap()
                .pop_front()
                .unwrap_or_else(|| json!({"action": "cancel"}))),
            "terminal/create" => Ok(self.create_terminal(&params)),
            "terminal/wait_for_exit" => {
                let (exit, exited) = {
                    let terms = self.terminals.lock().unwrap();
                    let t = &terms[params["terminalId"].as_str().unwrap()];
                    (t.exit.clone(), t.exited.clone())
                };
                loop {
                    let notified = exited.notified();
                    if let Some(code) = *exit.lock().unwrap() {
                        break Ok(
                            json!({"exitCode": code, "signal": if code.is_none() { json!("SIGKILL") } else { Value::Null }}),
                        );
                    }
                    notified.await;
                }
            }
            "terminal/output" => {
                let terms = self.terminals.lock().unwrap();
                let t = &terms[params["terminalId"].as_str().unwrap()];
                let output = t.output.lock().unwrap().clone();
                let exit = *t.exit.lock().unwrap();
                let mut result = json!({"output": output, "truncated": false});
                if let Some(code) = exit {
                    result["exitStatus"] = json!({"exitCode": code});
                }
                Ok(result)
            }
            "terminal/kill" => {
                let terms = self.terminals.lock().unwrap();
                match terms.get(params["terminalId"].as_str().unwrap()) {
                    Some(term) => {
                        term.kill();
                        Ok(json!({}))
                    }
                    None => Err((-32602, "no such terminal".to_string())),
                }
            }
            // As ACP says: the command is killed if it has not exited yet.
            "terminal/release" => {
                let released = self
                    .terminals
                    .lock()
                    .unwrap()
                    .remove(params["terminalId"].as_str().unwrap());
                if let Some(term) = released
                    && term.exit.lock().unwrap().is_none()
                {
                    term.kill();
                }
                Ok(json!({}))
            }
            other => Err((-32601, format!("method not found: {other}"))),
        };
        Some(match result {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err((code, message)) => {
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
            }
        })
    }

    /// Zed's answer to an `fs/*` request it refuses, when [`Self::worktrees`] is set: a read
    /// outside every worktree is `resource_not_found` (-32002, `data.uri`), a write there an
    /// internal error whose `data` is "invalid path" (`write_text_file` in
    /// `crates/acp_thread/src/acp_thread.rs`: `project_path_for_absolute_path(&path, cx)
    /// .context("invalid path")?`), a `line` past the end of the file `invalid_params`
    /// (-32602).
    fn zed_refusal(&self, method: &str, params: &Value) -> Option<Value> {
        let worktrees = self.worktrees.lock().unwrap().clone()?;
        if !method.starts_with("fs/") {
            return None;
        }
        let path = std::path::PathBuf::from(params["path"].as_str().unwrap_or_default());
        if !worktrees.iter().any(|w| path.starts_with(w)) {
            if method == "fs/write_text_file" {
                return Some(
                    json!({"code": -32603, "message": "Internal error", "data": "invalid path"}),
                );
            }
            return Some(json!({"code": -32002, "message": "Resource not found",
                               "data": {"uri": path.display().to_string()}}));
        }
        if method == "fs/read_text_file"
            && let Some(line) = params["line"].as_u64()
            && let Ok(text) = std::fs::read_to_string(&path)
            && line as usize > text.lines().count().max(1)
        {
            return Some(json!({"code": -32602,
                               "message": format!("Invalid params: line {line} is past the end")}));
        }
        None
    }

    fn create_terminal(&self, params: &Value) -> Value {
        let args: Vec<String> = params["args"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default();
        // The Windows build's terminals run Windows programs: under wine too.
        let program = params["command"].as_str().unwrap();
        let mut command = match super::wine::active() {
            true => {
                let mut wine = tokio::process::Command::new("wine");
                wine.arg(program);
                wine
            }
            false => tokio::process::Command::new(program),
        };
        let cwd = super::wine::host_path(params["cwd"].as_str().unwrap_or("/"));
        // A terminal's command leads a process group of its own, as in a real terminal, and
        // terminal/kill ends all of it.
        #[cfg(unix)]
        command.process_group(0);
        let mut child = command
            .args(&args)
            .current_dir(cwd)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let output = Arc::new(Mutex::new(String::new()));
        let exit = Arc::new(Mutex::new(None));
        let exited = Arc::new(Notify::new());
        let pid = child.id();
        let (mut out, mut err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
        let (o, e, x) = (output.clone(), exit.clone(), exited.clone());
        tokio::spawn(async move {
            let mut text = String::new();
            let _ = out.read_to_string(&mut text).await;
            let _ = err.read_to_string(&mut text).await;
            o.lock().unwrap().push_str(&text);
            let status = child.wait().await.ok();
            *e.lock().unwrap() = Some(status.and_then(|s| s.code()));
            x.notify_waiters();
        });
        let mut next = self.next_terminal.lock().unwrap();
        *next += 1;
        let id = format!("term-{next}");
        self.terminals.lock().unwrap().insert(
            id.clone(),
            Term {
                output,
                exit,
                exited,
                pid,
            },
        );
        json!({"terminalId": id})
    }
}

/// Client capabilities of an editor that does everything.
pub(crate) fn full_caps() -> Value {
    json!({"fs": {"readTextFile": true, "writeTextFile": true}, "terminal": true})
}
