//! Shared test helpers: the mock model server, the ACP client, and temp workspaces.
#![allow(dead_code)]

pub(crate) mod acp_client;
pub(crate) mod agent_shell;
pub(crate) mod anthropic_wire;
pub(crate) mod calls;
pub(crate) mod codecompanion;
pub(crate) mod contract;
#[cfg(target_os = "linux")]
pub(crate) mod cpus;
pub(crate) mod dice;
pub(crate) mod editor;
pub(crate) mod gate;
pub(crate) mod images;
pub(crate) mod mock_model;
pub(crate) mod pipe;
pub(crate) mod proxy;
pub(crate) mod real_server;
pub(crate) mod responses_wire;
pub(crate) mod schema;
pub(crate) mod stubs;
#[cfg(unix)]
pub(crate) mod terminal;
pub(crate) mod tmpfs;
pub(crate) mod wine;
pub(crate) mod wire;
pub(crate) mod wire_client;
pub(crate) mod zed;

use std::path::{Path, PathBuf};

pub(crate) use acp_client::{Agent, assert_error, joined, of_kind, response};
pub(crate) use mock_model::{MockModel, Reply};
pub(crate) use wire::fnv_hex;

/// The tandem binary the suite drives: `TANDEM_TEST_BIN` when set, else the one cargo built
/// beside this test binary. tests/platforms/run.sh points it at a static musl build with the
/// same features, so the same suite proves that build over real stdio without compiling the
/// suite a second time for musl.
pub(crate) fn tandem_bin() -> String {
    std::env::var("TANDEM_TEST_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_tandem").to_string())
}

/// The key every test plants; tests check it never leaks.
pub(crate) const TEST_KEY: &str = "sk-test-7f3a9c1e5b";

/// A temp home (TANDEM_HOME, HOME) and a project directory, deleted on drop.
pub(crate) struct Workspace {
    dir: tempfile::TempDir,
}

impl Workspace {
    /// An empty workspace.
    pub(crate) fn new() -> Workspace {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("project")).unwrap();
        std::fs::create_dir_all(dir.path().join("home")).unwrap();
        Workspace { dir }
    }
    /// The project directory sessions run in.
    pub(crate) fn project(&self) -> PathBuf {
        self.dir.path().join("project")
    }
    /// HOME and TANDEM_HOME.
    pub(crate) fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }
    /// Writes a file under the workspace root and returns its path.
    pub(crate) fn write(&self, relative: &str, text: &str) -> PathBuf {
        let path = self.dir.path().join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }
    /// The environment for an agent that talks to `mock` with the test key.
    pub(crate) fn env(&self, mock: &MockModel) -> Vec<(String, String)> {
        let mut env = self.base_env();
        env.push(("OPENAI_BASE_URL".into(), mock.base_url.clone()));
        env.push(("OPENAI_API_KEY".into(), TEST_KEY.into()));
        env.push(("TANDEM_MODEL".into(), "mock-model".into()));
        env
    }
    /// HOME, TANDEM_HOME and logging, nothing about the model.
    pub(crate) fn base_env(&self) -> Vec<(String, String)> {
        vec![
            ("HOME".into(), path_str(&self.home())),
            ("TANDEM_HOME".into(), path_str(&self.home().join("data"))),
            ("RUST_LOG".into(), "debug".into()),
        ]
    }
}

/// Runs `tandem ARGS` to completion with exactly `env`, in `cwd` when given, with `stdin`
/// piped in (closed at once when `None`): (exit status, stdout, stderr).
pub(crate) fn run_tandem(
    args: &[&str],
    env: &[(String, String)],
    stdin: Option<&str>,
    cwd: Option<&Path>,
) -> (i32, String, String) {
    use std::io::Write;
    let mut command = std::process::Command::new(tandem_bin());
    command
        .args(args)
        .env_clear()
        .envs(env.iter().cloned())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    if let Some(dir) = cwd {
        command.current_dir(dir);
    }
    let mut child = command.spawn().unwrap();
    let mut pipe = child.stdin.take().unwrap();
    if let Some(text) = stdin {
        pipe.write_all(text.as_bytes()).unwrap();
    }
    drop(pipe);
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// A path as a string, as the agent under test spells it (see [`wine`]).
pub(crate) fn path_str(p: &Path) -> String {
    wine::agent_path(p)
}

/// A fixture workspace tree (`fixtures/workspaces/NAME`) copied into the project directory.
pub(crate) fn copy_fixture(name: &str, to: &Path) {
    let from = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/workspaces")
        .join(name);
    copy_dir(&from, to);
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// A mock model, a workspace, an agent with an open session (its id) and its fake editor.
pub(crate) type EditorSession = (
    MockModel,
    Workspace,
    Agent,
    String,
    std::sync::Arc<editor::FakeEditor>,
);

/// Copies `fixtures/extend/config` (hooks, skills) into the workspace's user config directory
/// (`$HOME/.config/tandem`).
pub(crate) fn install_user_config(ws: &Workspace) {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/extend/config");
    copy_dir(&from, &ws.home().join(".config/tandem"));
}

/// A session over the fixture workspace `fixture`, set up by `prepare` (user config, …)
/// before the agent starts; the editor has `caps` and the session starts in `mode`.
pub(crate) async fn session_in(
    fixture: &str,
    script: Vec<Reply>,
    caps: serde_json::Value,
    mode: &str,
    prepare: impl FnOnce(&Workspace),
) -> EditorSession {
    session_with_env(fixture, script, caps, mode, |ws| {
        prepare(ws);
        Vec::new()
    })
    .await
}

/// [`session_in`], where `prepare` also returns extra environment variables for the agent.
pub(crate) async fn session_with_env(
    fixture: &str,
    script: Vec<Reply>,
    caps: serde_json::Value,
    mode: &str,
    prepare: impl FnOnce(&Workspace) -> Vec<(String, String)>,
) -> EditorSession {
    let mock = MockModel::start(script).await;
    let ws = Workspace::new();
    copy_fixture(fixture, &ws.project());
    let extra = prepare(&ws);
    let editor = editor::FakeEditor::new();
    let mut env = ws.env(&mock);
    env.push(("TANDEM_MODE".into(), mode.into()));
    env.extend(extra);
    let mut agent = Agent::spawn_with(&env, &[], Some(editor.clone()));
    agent.initialize_with(caps).await;
    let id = agent.new_session(&ws.project()).await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    (mock, ws, agent, id, editor)
}

/// A session whose editor is `editor` with `caps`, in mode `mode`, over the `small` fixture.
pub(crate) async fn tool_session(
    script: Vec<Reply>,
    caps: serde_json::Value,
    mode: &str,
) -> EditorSession {
    session_in("small", script, caps, mode, |_| {}).await
}

/// Starts a mock with `script` and an initialized agent with a session in a fresh workspace.
pub(crate) async fn session_with(script: Vec<Reply>) -> (MockModel, Workspace, Agent, String) {
    let mock = MockModel::start(script).await;
    let ws = Workspace::new();
    let mut agent = Agent::spawn(&ws.env(&mock), &[]);
    let id = agent.open_session(&ws.project()).await;
    (mock, ws, agent, id)
}

/// Checks that `session` answers a normal prompt (after a failure, say).
pub(crate) async fn still_usable(mock: &MockModel, agent: &mut Agent, session: &str) {
    mock.push(Reply::text(&["recovered"]));
    let (response, updates) = agent.prompt(session, "again").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert_eq!(joined(&updates, "agent_message_chunk"), "recovered");
    assert!(agent.is_running());
}

/// A mock server that also lists two models (`mock-model`, `other-model`) at `/v1/models`, as
/// `tandem login` and model discovery ask.
pub(crate) async fn listing_mock(script: Vec<Reply>) -> MockModel {
    let mock = MockModel::start(script).await;
    mock.serve_info(
        "/v1/models",
        200,
        serde_json::json!({"object": "list", "data": [{"id": "mock-model"}, {"id": "other-model"}]}),
    );
    mock
}

/// A first answer that reports 900 tokens in use, then `then`: on a [`small_window`] model,
/// automatic compaction summarizes before the second request.
pub(crate) fn filling_the_window(then: Vec<Reply>) -> Vec<Reply> {
    let mut script = vec![Reply::chunks(vec![
        mock_model::text("First answer."),
        mock_model::finish("stop"),
        mock_model::usage(900, 10),
    ])];
    script.extend(then);
    script
}

/// A config file in `ws` whose one model, `mock-model`, has a 1,000-token window.
pub(crate) fn small_window(ws: &Workspace) -> PathBuf {
    ws.write(
        "config.toml",
        "[[models]]\nid = \"mock-model\"\ncontext_window = 1000\n",
    )
}
