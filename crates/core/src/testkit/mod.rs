//! What in-process tests share (built only for `cargo test`): a configuration rooted in a
//! scratch directory, and fakes of the two seams the core talks through — the model
//! ([`FakeModel`], a `ModelClient` that plays scripted responses and records each request)
//! and the editor ([`FakeEditor`], a `ClientOps` that answers from a script and records each
//! call) — with a sink that keeps every event ([`Events`]).

mod editor;
mod model;
mod session;

use std::path::{Path, PathBuf};

use crate::config::{Config, Overrides};
use crate::types::{EventSink, TurnEvent};

pub use editor::FakeEditor;
pub use model::{FakeModel, Reply};
pub use session::{Session, results};

/// A scratch home, data directory and project, removed when dropped.
pub struct Scratch {
    dir: tempfile::TempDir,
}

impl Default for Scratch {
    fn default() -> Self {
        Self::new()
    }
}

impl Scratch {
    /// A fresh scratch directory with an empty project folder.
    pub fn new() -> Self {
        let dir = match tempfile::tempdir() {
            Ok(dir) => dir,
            Err(e) => panic!("no temporary directory: {e}"),
        };
        let scratch = Self { dir };
        let _ = std::fs::create_dir_all(scratch.project());
        scratch
    }

    /// The project (a session's working directory).
    pub fn project(&self) -> PathBuf {
        self.dir.path().join("project")
    }

    /// Where the user's `config.toml` goes.
    pub fn config_dir(&self) -> PathBuf {
        self.dir.path().join("config").join("tandem")
    }

    /// A configuration whose home, data and config directories are in the scratch directory,
    /// with `vars` (environment variable, value) as the only environment (the command sandbox
    /// off unless `vars` says otherwise); a replay model is named so no key is needed.
    pub fn config(&self, vars: &[(&str, &str)]) -> Config {
        let root = self.dir.path().to_path_buf();
        let mut env: Vec<(String, String)> = vec![
            ("HOME".into(), path(&root)),
            ("TANDEM_HOME".into(), path(&root.join("data"))),
            ("XDG_CONFIG_HOME".into(), path(&root.join("config"))),
            // The sandbox starts tandem's own binary, which a test process is not; the
            // integration tests drive it through the real binary.
            ("TANDEM_SANDBOX".into(), "off".into()),
        ];
        env.extend(vars.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        let lookup = move |name: &str| env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
        let overrides = Overrides {
            replay: Some(PathBuf::from("in-process")),
            ..Overrides::default()
        };
        match Config::resolve(&overrides, &lookup) {
            Ok(config) => config,
            Err(e) => panic!("the test configuration does not resolve: {e}"),
        }
    }
}

fn path(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// Every event a turn or session emitted, in order.
#[derive(Default)]
pub struct Events(parking_lot::Mutex<Vec<TurnEvent>>);

impl Events {
    /// A new, empty sink.
    pub fn new() -> std::sync::Arc<Self> {
        std::sync::Arc::new(Self::default())
    }

    /// The events so far.
    pub fn all(&self) -> Vec<TurnEvent> {
        self.0.lock().clone()
    }

    /// The answer's text so far.
    pub fn text(&self) -> String {
        self.0
            .lock()
            .iter()
            .filter_map(|e| match e {
                TurnEvent::Text(t) => Some(t.as_str()),
                _ => None,
            })
            .collect()
    }
}

impl EventSink for Events {
    fn emit(&self, _session_id: &str, event: TurnEvent) {
        self.0.lock().push(event);
    }
}
