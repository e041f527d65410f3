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
//! The tests take turns: two servers at once would share two cores.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::sync::{Mutex, MutexGuard};

static TURN: Mutex<()> = Mutex::const_new(());

/// How long one answer may take: tandem's ~2,000-token system prompt takes the 135M model
/// about 6 s to read on an idle 2-core machine, and the other tests keep the machine busy.
pub const PATIENCE: Duration = Duration::from_secs(180);

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
pub enum Kind {
    /// llama.cpp's llama-server.
    LlamaServer,
    /// llama-cpp-python's OpenAI-compatible server, over the same GGUF.
    LlamaCppPython,
    /// The LiteLLM proxy in front of llama-server.
    LiteLlm,
}

/// The server these tests run against.
pub fn kind() -> Kind {
    match std::env::var("TANDEM_REAL_SERVER").as_deref() {
        Ok("llama-cpp-python") => Kind::LlamaCppPython,
        Ok("litellm") => Kind::LiteLlm,
        Ok("llama-server") | Err(_) => Kind::LlamaServer,
        Ok(other) => panic!("unknown TANDEM_REAL_SERVER `{other}`"),
    }
}

/// The cache, and this test's turn; fails the test when the cache lacks what the chosen
/// server needs.
pub async fn turn() -> (MutexGuard<'static, ()>, PathBuf) {
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
    (TURN.lock().await, cache)
}

/// Whether this test does not apply to the chosen server, saying why when it does not.
pub fn not_for(kinds: &[Kind], why: &str) -> bool {
    let skip = kinds.contains(&kind());
    if skip {
        skipped(&format!("not for {:?}: {why}", kind()));
    }
    skip
}

/// Says on the test run's own stderr (not the captured output, which a passing test never
/// shows) that the current test did not run, so `cargo test` shows it among the `ok`s.
pub fn skipped(why: &str) {
    use std::io::Write;
    let name = std::thread::current()
        .name()
        .unwrap_or("a real-model test")
        .to_string();
    let _ = writeln!(std::io::stderr().lock(), "SKIPPED {name}: {why}");
}

/// A free loopback port.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A running model server (and, behind a proxy, the server it forwards to).
pub struct Server {
    child: tokio::process::Child,
    upstream: Option<Box<Server>>,
    pub port: u16,
}

impl Server {
    /// The chosen server on a free port.
    pub async fn start(cache: &Path) -> Server {
        Server::start_on(cache, free_port()).await
    }

    /// The chosen server on `port`.
    pub async fn start_on(cache: &Path, port: u16) -> Server {
        match kind() {
            Kind::LlamaServer => Server::llama_server(cache, port, false).await,
            Kind::LlamaCppPython => Server::llama_cpp_python(cache, port).await,
            Kind::LiteLlm => Server::litellm(cache, port).await,
        }
    }

    /// llama-server, whichever server the suite was asked for (for what only it reports).
    pub async fn start_llama_server(cache: &Path) -> Server {
        Server::llama_server(cache, free_port(), false).await
    }

    /// llama-server without jinja templates (`--no-jinja`; older builds' default, and how
    /// many guides start it): it then refuses requests that carry tools.
    pub async fn start_plain(cache: &Path) -> Server {
        Server::llama_server(cache, free_port(), true).await
    }

    async fn llama_server(cache: &Path, port: u16, plain: bool) -> Server {
        let template =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/real-model/smollm2-tools.jinja");
        let mut command = tokio::process::Command::new(cache.join("bin/llama-server"));
        command
            .arg("-m")
            .arg(cache.join("SmolLM2-135M-Instruct.Q4_1.gguf"))
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            // -n: at most 256 tokens an answer, so a rambling tiny model ends in seconds.
            // Greedy sampling: the same prompt gets the same answer (a tool call for the
            // read), so the tests do not depend on the dice.
            .args([
                "-c", "4096", "-n", "256", "-t", "2", "--temp", "0", "--seed", "1",
            ])
            .arg("--log-disable");
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
        Server::spawn(command, port, "/health", None).await
    }

    async fn llama_cpp_python(cache: &Path, port: u16) -> Server {
        let mut command = tokio::process::Command::new(cache.join("llama-cpp-python/bin/python"));
        command
            .args(["-m", "llama_cpp.server", "--model"])
            .arg(cache.join("SmolLM2-135M-Instruct.Q4_1.gguf"))
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .args(["--n_ctx", "4096", "--n_threads", "2", "--seed", "1"])
            .args(["--model_alias", "smollm2-135m"])
            .args(["--chat_format", "chatml-function-calling"]);
        Server::spawn(command, port, "/v1/models", None).await
    }

    async fn litellm(cache: &Path, port: u16) -> Server {
        let upstream = Box::pin(Server::llama_server(cache, free_port(), false)).await;
        let config = std::env::temp_dir().join(format!("tandem-litellm-{port}.yaml"));
        std::fs::write(
            &config,
            format!(
                "model_list:\n  - model_name: smollm2-135m\n    litellm_params:\n      model: openai/smollm2-135m\n      api_base: {}\n      api_key: none\n",
                upstream.base_url()
            ),
        )
        .unwrap();
        let mut command = tokio::process::Command::new(cache.join("litellm/bin/litellm"));
        command
            .arg("--config")
            .arg(&config)
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .env("LITELLM_LOG", "ERROR")
            // Offline: its bundled price list, not the one it would fetch from GitHub.
            .env("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            .env("LITELLM_TELEMETRY", "False");
        Server::spawn(command, port, "/health/liveliness", Some(upstream)).await
    }

    async fn spawn(
        mut command: tokio::process::Command,
        port: u16,
        health: &str,
        upstream: Option<Server>,
    ) -> Server {
        let child = command
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("the model server starts");
        let server = Server {
            child,
            upstream: upstream.map(Box::new),
            port,
        };
        for _ in 0..1200 {
            if healthy(port, health).await {
                return server;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("the model server did not become healthy on {port}{health}");
    }

    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    pub async fn stop(mut self) {
        let _ = self.child.kill().await;
        if let Some(upstream) = self.upstream.take() {
            Box::pin(upstream.stop()).await;
        }
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
