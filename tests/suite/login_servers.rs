//! Issue 31: `tandem login` and `tandem doctor` against servers a new user points them at by
//! mistake — a web server, an address without its `/v1`, one that is down — and the words
//! each gives: short, about the server, with the way out, and no log lines among prompts.

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Html;
use axum::routing::get;
use serde_json::json;

use super::login::{home_only, tandem_blocking};
use crate::common::mock_model::serve_local;
use crate::common::{Reply, Workspace, listing_mock};

/// The page a web server answers for a path it does not have.
const NOT_FOUND_PAGE: &str = "<!DOCTYPE html>\n<html>\n<head><title>404 Not Found</title></head>\n<body>\n<center><h1>404 Not Found</h1></center>\n<hr><center>nginx/1.24.0</center>\n<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua.</p>\n</body>\n</html>\n";

/// A web server with no API: every path is its 404 page. Its address, without a path.
async fn web_server() -> String {
    let app = Router::new().fallback(|| async { (StatusCode::NOT_FOUND, Html(NOT_FOUND_PAGE)) });
    serve_local(app).await.trim_end_matches("/v1").to_string()
}

/// An OpenAI-compatible API under `/v1` (listing its models, or refusing without a key when
/// `locked`), and the web server's 404 page everywhere else. Its address without the `/v1`,
/// and the `Authorization` headers `/v1/models` was sent.
async fn api_under_v1(locked: bool) -> (String, Arc<Mutex<Vec<String>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    let models = move |headers: HeaderMap| {
        let record = record.clone();
        async move {
            if let Some(auth) = headers.get("authorization") {
                record
                    .lock()
                    .unwrap()
                    .push(auth.to_str().unwrap_or("?").to_string());
            }
            if locked {
                let refusal = json!({"error": {"message": "no key"}});
                return (StatusCode::UNAUTHORIZED, axum::Json(refusal));
            }
            (
                StatusCode::OK,
                axum::Json(json!({"object": "list", "data": [{"id": "m"}]})),
            )
        }
    };
    let app = Router::new()
        .route("/v1/models", get(models))
        .fallback(|| async { (StatusCode::NOT_FOUND, Html(NOT_FOUND_PAGE)) });
    (
        serve_local(app).await.trim_end_matches("/v1").to_string(),
        seen,
    )
}

/// A home of its own, keys in the file store, and no RUST_LOG: log lines must not show.
fn file_store(ws: &Workspace) -> Vec<(String, String)> {
    let mut env = home_only(ws);
    env.retain(|(k, _)| k != "RUST_LOG");
    env
}

/// No page, no log line: what the user reads is a few lines of tandem's own.
fn assert_brief(stderr: &str) {
    assert!(
        !stderr.contains("<html") && !stderr.contains("Lorem"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("WARN") && !stderr.contains("ERROR"),
        "{stderr}"
    );
    assert!(stderr.lines().count() <= 6, "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_web_server_is_not_taken_for_a_model_server() {
    let web = web_server().await;
    let ws = Workspace::new();
    let args = ["login", "--base-url", &web, "--key-stdin", "--model", "m"];
    let (status, _, stderr) = tandem_blocking(file_store(&ws), &args, "sk-abc").await;
    assert_eq!(status, 1, "{stderr}");
    assert!(
        stderr.contains("does not look like an OpenAI-compatible server"),
        "{stderr}"
    );
    assert!(
        stderr.contains("an HTML page titled \"404 Not Found\""),
        "{stderr}"
    );
    assert!(stderr.contains("Nothing was saved"), "{stderr}");
    assert_brief(&stderr);
    assert!(!ws.home().join(".config/tandem").exists());

    let (status, stdout, stderr) = tandem_blocking(
        file_store(&ws),
        &["doctor", "--base-url", &web, "--model", "m"],
        "",
    )
    .await;
    assert_eq!(status, 1, "{stdout}{stderr}");
    assert!(
        stdout.contains("does not look like an OpenAI-compatible server"),
        "{stdout}"
    );
    assert!(!stdout.contains("<html"), "{stdout}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_address_without_its_v1_gets_the_v1_suggested() {
    let ws = Workspace::new();
    for locked in [false, true] {
        let (host, seen) = api_under_v1(locked).await;
        let args = ["login", "--base-url", &host, "--key-stdin", "--model", "m"];
        let (status, _, stderr) = tandem_blocking(file_store(&ws), &args, "sk-given-123456").await;
        assert_eq!(status, 1, "{stderr}");
        assert!(
            stderr.contains(&format!("{host}/v1 is: use that as the base URL")),
            "locked {locked}: {stderr}"
        );
        assert_brief(&stderr);
        // The key goes only to the address the user gave, not to one tandem guessed.
        assert!(
            seen.lock().unwrap().is_empty(),
            "{:?}",
            seen.lock().unwrap()
        );
    }
    let (host, _) = api_under_v1(false).await;

    let (status, stdout, _) = tandem_blocking(
        file_store(&ws),
        &["doctor", "--base-url", &host, "--model", "m"],
        "",
    )
    .await;
    assert_eq!(status, 1, "{stdout}");
    assert!(
        stdout.contains(&format!("use {host}/v1 as the base URL")),
        "{stdout}"
    );
}

/// A server whose model list takes any key but whose chat refuses it: the refusal names the
/// key given to the login, not a variable nobody set, in one sentence.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_refused_at_the_test_request_is_the_key_given() {
    let refused = r#"{"error":{"message":"Invalid API key."}}"#;
    let mock = listing_mock(vec![Reply::status(401, refused)]).await;
    let ws = Workspace::new();
    let args = [
        "login",
        "--base-url",
        &mock.base_url,
        "--key-stdin",
        "--model",
        "mock-model",
    ];
    let (status, _, stderr) = tandem_blocking(file_store(&ws), &args, "sk-wrong-1234").await;
    assert_eq!(status, 1, "{stderr}");
    assert!(
        stderr.contains("rejected the API key (401): Invalid API key. Check the key you gave."),
        "{stderr}"
    );
    assert!(
        !stderr.contains("OPENAI_API_KEY") && !stderr.contains(".."),
        "{stderr}"
    );
}

/// Started by npm's wrapper under npx, tandem names the command as the user runs it: there is
/// no `tandem` on the PATH to run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_npx_the_advice_names_npx() {
    let ws = Workspace::new();
    let mut env = file_store(&ws);
    env.retain(|(k, _)| !k.ends_with("API_KEY"));
    env.push(("TANDEM_INVOKED_AS".into(), "npx tandem-acp".into()));
    let (status, _, stderr) = tandem_blocking(env.clone(), &["exec", "hi"], "").await;
    assert_eq!(status, 2, "{stderr}");
    assert!(
        stderr.contains("run `npx tandem-acp login` in a terminal"),
        "{stderr}"
    );
    let (status, stdout, _) = tandem_blocking(env.clone(), &["login", "--help"], "").await;
    assert_eq!(status, 0);
    assert!(stdout.contains("Usage: npx tandem-acp login"), "{stdout}");
    assert!(
        stdout.contains("\n  npx tandem-acp login --provider ollama"),
        "{stdout}"
    );
    assert!(!stdout.contains("  tandem login"), "{stdout}");
    let (_, stdout, _) = tandem_blocking(env, &["doctor"], "").await;
    assert!(stdout.contains("run `npx tandem-acp login`"), "{stdout}");
}

/// In a terminal: a server that is down is said before any key is asked, and the user
/// chooses again; an empty key shows as nothing typed; a second login starts from the
/// server and model the first one saved.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_is_down_is_said_first_and_the_user_chooses_again() {
    use super::login::login_terminal;
    use crate::common::terminal::type_secret;
    let mock = listing_mock(vec![Reply::text(&["OK"]), Reply::text(&["OK"])]).await;
    let down = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!(
            "http://127.0.0.1:{}/v1",
            listener.local_addr().unwrap().port()
        )
    };
    let ws = Workspace::new();
    let env = file_store(&ws);
    let base_url = mock.base_url.clone();
    let first = env.clone();
    let typed_url = base_url.clone();
    tokio::task::spawn_blocking(move || {
        use expectrl::Expect;
        let mut term = login_terminal(&first, &[]);
        term.expect("Which model server?").unwrap();
        for _ in 0..10 {
            term.send("\x1b[B").unwrap();
        }
        term.send("\r").unwrap();
        term.expect("Base URL").unwrap();
        term.send(format!("{down}\r")).unwrap();
        let said = term.expect("Choose the server again").unwrap();
        let said = String::from_utf8_lossy(said.before()).to_string();
        assert!(said.contains("cannot reach"), "{said}");
        assert!(!said.contains("API key"), "asked for a key first: {said}");
        // The menu again, on the URL just typed: replace it.
        term.expect("Which model server?").unwrap();
        term.send("\r").unwrap();
        term.expect("Base URL").unwrap();
        term.send("\x7f".repeat(down.len())).unwrap();
        term.send(format!("{typed_url}\r")).unwrap();
        term.expect("API key for").unwrap();
        type_secret(&mut term, "\r");
        term.expect("(nothing typed)").unwrap();
        term.expect("Which model?").unwrap();
        term.send("other").unwrap();
        term.send("\r").unwrap();
        term.expect("tandem is ready").unwrap();
    })
    .await
    .unwrap();
    let config_path = ws.home().join(".config/tandem/config.toml");
    let config = std::fs::read_to_string(&config_path).unwrap();
    assert!(config.contains("model = \"other-model\""), "{config}");
    assert!(config.contains(&base_url), "{config}");

    // Again: Enter at every question keeps the server and the model.
    tokio::task::spawn_blocking(move || {
        use expectrl::Expect;
        let mut term = login_terminal(&env, &[]);
        term.expect("Which model server?").unwrap();
        term.send("\r").unwrap();
        term.expect("Base URL").unwrap();
        term.send("\r").unwrap();
        term.expect("API key for").unwrap();
        type_secret(&mut term, "\r");
        term.expect("Which model?").unwrap();
        term.send("\r").unwrap();
        term.expect("tandem is ready").unwrap();
    })
    .await
    .unwrap();
    assert_eq!(std::fs::read_to_string(&config_path).unwrap(), config);
    let asked: Vec<_> = mock
        .requests()
        .iter()
        .map(|r| r.body["model"].clone())
        .collect();
    assert_eq!(asked, [json!("other-model"), json!("other-model")]);
}
