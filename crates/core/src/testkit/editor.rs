//! A scripted editor for in-process tests: files in memory, permission answers from a queue,
//! and a record of every question it was asked. Terminals are not offered (a fake editor
//! advertises no `terminal` capability; commands then run locally).

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures::future::BoxFuture;
use parking_lot::Mutex;

use crate::client::{ClientError, ClientOps, ExitStatus, TerminalOutput, TerminalSpec};
use crate::types::{PermissionAnswer, PermissionChoice, ToolCallView, ToolContent};

/// One permission question, as the user would have seen it.
#[derive(Debug, Clone)]
pub struct Asked {
    /// The call's title.
    pub title: String,
    /// The answers offered, with their labels.
    pub choices: Vec<PermissionChoice>,
    /// What the question showed, in order (a change's diff first).
    pub content: Vec<ToolContent>,
}

/// The scripted editor.
#[derive(Default)]
pub struct FakeEditor {
    files: Mutex<HashMap<PathBuf, String>>,
    answers: Mutex<VecDeque<PermissionAnswer>>,
    asked: Mutex<Vec<Asked>>,
    /// When set, a permission question is never answered (the turn must be cancelled).
    never_answers: std::sync::atomic::AtomicBool,
}

impl FakeEditor {
    /// An editor that answers permission questions with `answers`, in order.
    pub fn answering(answers: &[PermissionAnswer]) -> Arc<Self> {
        Arc::new(Self {
            answers: Mutex::new(answers.iter().copied().collect()),
            ..Self::default()
        })
    }

    /// An editor that asks the user and never hears back.
    pub fn silent() -> Arc<Self> {
        let editor = Self::default();
        editor
            .never_answers
            .store(true, std::sync::atomic::Ordering::SeqCst);
        Arc::new(editor)
    }

    /// An editor buffer holding `content` at `path`.
    pub fn with_file(self: Arc<Self>, path: &Path, content: &str) -> Arc<Self> {
        self.files.lock().insert(path.to_path_buf(), content.into());
        self
    }

    /// The buffer at `path`, if any.
    pub fn file(&self, path: &Path) -> Option<String> {
        self.files.lock().get(path).cloned()
    }

    /// Waits until `n` questions were asked (at most ten seconds).
    pub async fn asked_times(&self, n: usize) {
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
        while self.asked.lock().len() < n {
            assert!(
                tokio::time::Instant::now() < deadline,
                "the editor was not asked {n} times"
            );
            tokio::time::sleep(std::time::Duration::from_millis(2)).await;
        }
    }

    /// Every question asked so far.
    pub fn asked(&self) -> Vec<Asked> {
        self.asked.lock().clone()
    }
}

fn no_terminals() -> ClientError {
    ClientError {
        code: Some(-32601),
        message: "the fake editor has no terminals".into(),
    }
}

impl ClientOps for FakeEditor {
    fn read_text_file<'a>(
        &'a self,
        _session: &'a str,
        path: &'a Path,
        _line: Option<u32>,
        _limit: Option<u32>,
    ) -> BoxFuture<'a, Result<String, ClientError>> {
        let found = self.files.lock().get(path).cloned();
        Box::pin(async move {
            found.ok_or_else(|| ClientError {
                code: Some(-32002),
                message: format!("{} not found", path.display()),
            })
        })
    }

    fn write_text_file<'a>(
        &'a self,
        _session: &'a str,
        path: &'a Path,
        content: &'a str,
    ) -> BoxFuture<'a, Result<(), ClientError>> {
        self.files.lock().insert(path.to_path_buf(), content.into());
        Box::pin(async { Ok(()) })
    }

    fn request_permission<'a>(
        &'a self,
        _session: &'a str,
        call: &'a ToolCallView,
        choices: &'a [PermissionChoice],
    ) -> BoxFuture<'a, Result<PermissionAnswer, ClientError>> {
        self.asked.lock().push(Asked {
            title: call.title.clone(),
            choices: choices.to_vec(),
            content: call.content.clone(),
        });
        let silent = self.never_answers.load(std::sync::atomic::Ordering::SeqCst);
        let answer = self.answers.lock().pop_front();
        Box::pin(async move {
            if silent {
                std::future::pending::<()>().await;
            }
            answer.ok_or_else(|| ClientError {
                code: None,
                message: "the fake editor has no answer scripted".into(),
            })
        })
    }

    fn create_terminal<'a>(
        &'a self,
        _session: &'a str,
        _spec: &'a TerminalSpec,
    ) -> BoxFuture<'a, Result<String, ClientError>> {
        Box::pin(async { Err(no_terminals()) })
    }

    fn wait_for_terminal_exit<'a>(
        &'a self,
        _session: &'a str,
        _terminal: &'a str,
    ) -> BoxFuture<'a, Result<ExitStatus, ClientError>> {
        Box::pin(async { Err(no_terminals()) })
    }

    fn terminal_output<'a>(
        &'a self,
        _session: &'a str,
        _terminal: &'a str,
    ) -> BoxFuture<'a, Result<TerminalOutput, ClientError>> {
        Box::pin(async { Err(no_terminals()) })
    }

    fn kill_terminal<'a>(
        &'a self,
        _session: &'a str,
        _terminal: &'a str,
    ) -> BoxFuture<'a, Result<(), ClientError>> {
        Box::pin(async { Err(no_terminals()) })
    }

    fn release_terminal<'a>(
        &'a self,
        _session: &'a str,
        _terminal: &'a str,
    ) -> BoxFuture<'a, Result<(), ClientError>> {
        Box::pin(async { Err(no_terminals()) })
    }
}
