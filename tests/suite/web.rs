//! `web_fetch` and `web_search` through the binary. Pages come from a local server that acts
//! as the HTTP proxy of the environment (so made-up host names reach it, as through a
//! company proxy): HTML as Markdown, JSON as it is, other types refused, the byte cap said,
//! redirects to the user's own machine refused, a key never sent in a URL, and permission
//! asked per host and remembered per host. Search goes to local stand-ins for SearXNG's and
//! Brave's APIs.

use std::sync::Arc;

use axum::extract::{Query, Request};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use parking_lot::Mutex;
use serde_json::{Value, json};

use crate::common::calls::{call_events, tool_result};
use crate::common::editor::Answer;
use crate::common::{Reply, TEST_KEY, session_with_env};

/// What the local server was asked: each request's full URI.
type Seen = Arc<Mutex<Vec<String>>>;

/// The stand-in web: pages by path, whatever the host; starts on a free port.
async fn web() -> (String, Seen) {
    let seen: Seen = Arc::default();
    let log = seen.clone();
    let app = axum::Router::new().fallback(move |request: Request| {
        let log = log.clone();
        async move {
            log.lock().push(request.uri().to_string());
            page(request.uri().path())
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, seen)
}

fn page(path: &str) -> Response {
    let html = "<html><head><script>steal()</script></head><body><h1>Guide</h1>\
        <p>Use <code>cargo doc</code>, see <a href=\"https://docs.rs\">docs</a>.</p></body></html>";
    match path {
        "/guide" => ([("content-type", "text/html; charset=utf-8")], html).into_response(),
        "/data" => ([("content-type", "application/json")], r#"{"answer": 42}"#).into_response(),
        "/logo.png" => (
            [("content-type", "image/png")],
            vec![0x89u8, b'P', b'N', b'G'],
        )
            .into_response(),
        "/big" => ([("content-type", "text/plain")], "x".repeat(10_000)).into_response(),
        "/to-home" => (
            StatusCode::FOUND,
            [("location", "http://127.0.0.1:9/admin")],
        )
            .into_response(),
        "/to-localhost" => {
            (StatusCode::FOUND, [("location", "http://localhost/admin")]).into_response()
        }
        "/to-guide" => (StatusCode::MOVED_PERMANENTLY, [("location", "/guide")]).into_response(),
        "/to-other" => (
            StatusCode::FOUND,
            [("location", "http://other.example/data")],
        )
            .into_response(),
        "/deep" => (
            [("content-type", "text/html")],
            format!(
                "{}still here{}",
                "<div>".repeat(50_000),
                "</div>".repeat(50_000)
            ),
        )
            .into_response(),
        _ => StatusCode::NOT_FOUND.into_response(),
    }
}

/// A session whose web goes through the stand-in as its proxy, with `config` as the user's.
async fn web_session(
    script: Vec<Reply>,
    mode: &str,
    config: &'static str,
) -> (crate::common::EditorSession, Seen) {
    let (proxy, seen) = web().await;
    let session = session_with_env("small", script, json!({}), mode, move |ws| {
        ws.write("home/.config/tandem/config.toml", config);
        // The model server (on 127.0.0.1) is reached directly, the web through the proxy.
        vec![
            ("HTTP_PROXY".into(), proxy.clone()),
            ("NO_PROXY".into(), "127.0.0.1".into()),
        ]
    })
    .await;
    (session, seen)
}

fn fetch(id: &str, url: &str) -> (&'static str, &'static str, Value) {
    let id: &'static str = Box::leak(id.to_string().into_boxed_str());
    (id, "web_fetch", json!({"url": url}))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_read_as_markdown_or_as_they_are_and_the_rest_is_refused_or_cut() {
    let script = vec![
        Reply::tools(&[
            fetch("a", "http://docs.example/guide"),
            fetch("b", "http://docs.example/data"),
            fetch("c", "http://docs.example/logo.png"),
            fetch("d", "http://docs.example/big"),
            fetch("e", "http://docs.example/to-guide"),
            fetch("f", "http://docs.example/missing"),
            fetch("g", "http://docs.example/to-other"),
        ]),
        Reply::text(&["read"]),
    ];
    let ((mock, _ws, mut agent, session, _editor), _seen) =
        web_session(script, "full-access", "[web]\nmax_bytes = 2048\n").await;
    let (answer, updates) = agent.prompt(&session, "read the docs").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let second = &mock.requests()[1];
    let guide = tool_result(second, "a");
    assert!(guide.contains("URL: http://docs.example/guide"), "{guide}");
    assert!(guide.contains("# Guide"), "{guide}");
    assert!(guide.contains("`cargo doc`") && guide.contains("[docs](https://docs.rs)"));
    assert!(!guide.contains("steal"), "{guide}");
    assert!(tool_result(second, "b").contains(r#"{"answer": 42}"#));
    let png = tool_result(second, "c");
    assert!(
        png.starts_with("Error:") && png.contains("image/png"),
        "{png}"
    );
    let big = tool_result(second, "d");
    assert!(big.contains("longer than 2048 bytes"), "{big}");
    assert!(big.matches('x').count() <= 2048 + 10, "cut at the cap");
    let moved = tool_result(second, "e");
    assert!(moved.contains("URL: http://docs.example/guide") && moved.contains("# Guide"));
    assert!(tool_result(second, "f").contains("404"));
    // Another host is the model's to fetch, and the user's to allow: not followed.
    let elsewhere = tool_result(second, "g");
    assert!(
        elsewhere.contains("redirects to http://other.example/data, on another host"),
        "{elsewhere}"
    );

    // Shown to the editor as fetches, with the URL in the title.
    let shown = call_events(&updates, "a");
    assert_eq!(shown[0]["kind"], "fetch", "{:?}", shown[0]);
    assert!(
        shown
            .iter()
            .any(|e| e["title"] == "Fetch http://docs.example/guide"),
        "{shown:?}"
    );
    agent.assert_valid();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_users_own_machine_is_out_of_reach_at_every_hop_and_keys_stay_home() {
    let key_url = format!("http://docs.example/guide?token={TEST_KEY}");
    let script = vec![
        Reply::tools(&[
            fetch("a", "http://docs.example/to-home"),
            fetch("b", "http://docs.example/to-localhost"),
            fetch("c", "http://127.0.0.1:9/admin"),
            fetch("d", "http://[::ffff:127.0.0.1]/admin"),
            fetch("e", &key_url),
            fetch("f", "file:///etc/passwd"),
            fetch("h", "http://docs.example/deep"),
        ]),
        Reply::text(&["blocked"]),
    ];
    let ((mock, _ws, mut agent, session, _editor), seen) =
        web_session(script, "full-access", "").await;
    let (answer, _) = agent.prompt(&session, "go").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let second = &mock.requests()[1];
    for id in ["a", "b", "c", "d"] {
        let result = tool_result(second, id);
        assert!(
            result.contains("does not fetch from the user's own machine or network"),
            "{id}: {result}"
        );
    }
    assert!(
        tool_result(second, "e").contains("secrets"),
        "{}",
        tool_result(second, "e")
    );
    assert!(tool_result(second, "f").contains("not an http or https URL"));
    // A page nested deeper than any document needs (the converter recurses) is read as
    // text; tandem lives on.
    assert!(tool_result(second, "h").contains("still here"));
    let asked = seen.lock().clone();
    assert!(
        asked
            .iter()
            .all(|u| !u.contains("admin") && !u.contains(TEST_KEY)),
        "{asked:?}"
    );
    agent.assert_valid();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetching_asks_per_host_and_always_means_that_host() {
    let script = vec![
        Reply::tools(&[fetch("a", "http://docs.example/guide")]),
        Reply::tools(&[fetch("b", "http://docs.example/data")]),
        Reply::tools(&[fetch("c", "http://other.example/data")]),
        Reply::text(&["done"]),
    ];
    let ((mock, _ws, mut agent, session, editor), _seen) =
        web_session(script, "read-only", "").await;
    editor.answer_with(&[
        Answer::Select("allow_always"),
        Answer::Select("reject_once"),
    ]);
    let (answer, _) = agent.prompt(&session, "go").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let asked = editor.params_of("session/request_permission");
    assert_eq!(
        asked.len(),
        2,
        "docs.example once, other.example once: {asked:?}"
    );
    let always = asked[0]["options"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["optionId"] == "allow_always")
        .unwrap()["name"]
        .clone();
    assert!(
        always
            .as_str()
            .unwrap()
            .contains("fetching from docs.example"),
        "{always}"
    );
    assert_eq!(asked[1]["toolCall"]["toolCallId"], "c");
    let requests = mock.requests();
    assert!(tool_result(&requests[2], "b").contains("answer"));
    assert!(!tool_result(&requests[3], "c").contains("answer"));
    agent.assert_valid();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rule_allows_a_domain_and_its_subdomains_only() {
    let script = vec![
        Reply::tools(&[
            fetch("a", "http://api.docs.example/data"),
            fetch("b", "http://evildocs.example/data"),
        ]),
        Reply::text(&["done"]),
    ];
    let ((mock, _ws, mut agent, session, editor), _seen) = web_session(
        script,
        "ask",
        "[permissions]\nallow = [\"web_fetch(domain:docs.example)\"]\n",
    )
    .await;
    editor.answer_with(&[Answer::Select("reject_once")]);
    let (answer, _) = agent.prompt(&session, "go").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let asked = editor.params_of("session/request_permission");
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0]["toolCall"]["toolCallId"], "b");
    assert!(tool_result(&mock.requests()[1], "a").contains("answer"));
    agent.assert_valid();
}

/// The stand-ins for the search providers' APIs.
async fn search_server() -> (String, Arc<Mutex<Vec<HeaderMap>>>) {
    let headers: Arc<Mutex<Vec<HeaderMap>>> = Arc::default();
    let seen = headers.clone();
    let app = axum::Router::new()
        .route(
            "/search",
            axum::routing::get(|Query(q): Query<std::collections::HashMap<String, String>>| async move {
                assert_eq!(q.get("format").map(String::as_str), Some("json"));
                axum::Json(json!({"results": [
                    {"title": "Tokio docs", "url": "https://docs.rs/tokio", "content": format!("About {}", q["q"])},
                    {"title": "Tokio site", "url": "https://tokio.rs", "content": "Runtime"},
                ]}))
            }),
        )
        .route(
            "/res/v1/web/search",
            axum::routing::get(move |h: HeaderMap, Query(q): Query<std::collections::HashMap<String, String>>| {
                let seen = seen.clone();
                async move {
                    seen.lock().push(h.clone());
                    if h.get("x-subscription-token").is_none_or(|v| v != "brave-key-1234567890") {
                        return StatusCode::UNAUTHORIZED.into_response();
                    }
                    axum::Json(json!({"web": {"results": [
                        {"title": "Serde", "url": "https://serde.rs", "description": format!("<strong>{}</strong> guide", q["q"])},
                    ]}}))
                    .into_response()
                }
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, headers)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_through_searxng_and_brave_and_only_when_configured() {
    let (url, headers) = search_server().await;
    // SearXNG, self-hosted: no key.
    let script = vec![
        Reply::tools(&[("s", "web_search", json!({"query": "tokio runtime"}))]),
        Reply::text(&["found"]),
    ];
    let config: &'static str = Box::leak(
        format!("[web.search]\nprovider = \"searxng\"\nurl = \"{url}\"\n").into_boxed_str(),
    );
    let ((mock, _ws, mut agent, session, _editor), _) =
        web_session(script, "full-access", config).await;
    let (answer, updates) = agent.prompt(&session, "search").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let found = tool_result(&mock.requests()[1], "s");
    assert!(
        found.contains("1. Tokio docs\n   https://docs.rs/tokio\n   About tokio runtime"),
        "{found}"
    );
    let shown = call_events(&updates, "s");
    assert_eq!(shown[0]["kind"], "search");
    assert!(
        shown
            .iter()
            .any(|e| e["title"] == "Search the web: tokio runtime")
    );
    agent.assert_valid();

    // Brave, hosted: its key in its header, from the environment.
    let script = vec![
        Reply::tools(&[("s", "web_search", json!({"query": "serde"}))]),
        Reply::text(&["found"]),
    ];
    let config = format!("[web.search]\nprovider = \"brave\"\nurl = \"{url}\"\n");
    let (mock, _ws, mut agent, session, _editor) =
        session_with_env("small", script, json!({}), "full-access", move |ws| {
            ws.write("home/.config/tandem/config.toml", &config);
            vec![("BRAVE_API_KEY".into(), "brave-key-1234567890".into())]
        })
        .await;
    agent.prompt(&session, "search").await;
    let found = tool_result(&mock.requests()[1], "s");
    assert!(
        found.contains("1. Serde\n   https://serde.rs\n   serde guide"),
        "{found}"
    );
    assert_eq!(headers.lock().len(), 1);
    agent.assert_valid();

    // Not configured: not offered.
    let ((mock, _ws, mut agent, session, _editor), _) =
        web_session(vec![Reply::text(&["hi"])], "ask", "").await;
    agent.prompt(&session, "hi").await;
    let tools = mock.requests()[0].body["tools"].to_string();
    assert!(
        tools.contains("web_fetch") && !tools.contains("web_search"),
        "{tools}"
    );
}

/// `tandem doctor` asks the configured provider a query, and says when it does not answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_checks_the_search_provider() {
    let (url, _) = search_server().await;
    let mock = crate::common::MockModel::start(vec![Reply::text(&["O"])]).await;
    let ws = crate::common::Workspace::new();
    ws.write(
        "home/.config/tandem/config.toml",
        &format!("[web.search]\nprovider = \"searxng\"\nurl = \"{url}\"\n"),
    );
    let (_, out) = super::doctor::doctor(&ws, &ws.env(&mock));
    assert!(
        out.contains(&format!("✓ web_search: searxng at {url} answers")),
        "{out}"
    );
    assert!(
        out.contains("✓ web_fetch is offered; it does not reach this machine"),
        "{out}"
    );
    ws.write(
        "home/.config/tandem/config.toml",
        &format!("[web.search]\nprovider = \"brave\"\nurl = \"{url}\"\n"),
    );
    let (code, out) = super::doctor::doctor(&ws, &ws.env(&mock));
    assert_ne!(code, 0);
    assert!(out.contains("✗ web_search: brave at"), "{out}");
    assert!(out.contains("no key for brave: set BRAVE_API_KEY"), "{out}");
}

/// `tandem login --search brave`: one query with the key first (a refused key saves
/// nothing), then the key in the credential store and `[web.search]` in the config file;
/// sessions then search with the stored key. SearXNG needs only its URL.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_sets_up_search_and_keeps_the_key_in_the_store() {
    use crate::common::{Agent, MockModel, Workspace, run_tandem};
    let (url, _) = search_server().await;
    let mock = MockModel::start(vec![
        Reply::tools(&[("s", "web_search", json!({"query": "serde"}))]),
        Reply::text(&["found"]),
    ])
    .await;
    let ws = Workspace::new();
    let mut env = ws.env(&mock);
    env.push(("TANDEM_CREDENTIAL_STORE".into(), "file".into()));
    env.push(("TANDEM_MODE".into(), "full-access".into()));
    let config_file = ws.home().join(".config/tandem/config.toml");
    let login = |key: &'static str| {
        let (env, url) = (env.clone(), url.clone());
        move || {
            run_tandem(
                &[
                    "login",
                    "--search",
                    "brave",
                    "--search-url",
                    &url,
                    "--key-stdin",
                ],
                &env,
                Some(key),
                None,
            )
        }
    };
    let (code, _, err) = tokio::task::spawn_blocking(login("wrong-key-1234567890"))
        .await
        .unwrap();
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("nothing was saved"), "{err}");
    assert!(
        !config_file.exists()
            || !std::fs::read_to_string(&config_file)
                .unwrap()
                .contains("search")
    );
    let (code, _, err) = tokio::task::spawn_blocking(login("brave-key-1234567890"))
        .await
        .unwrap();
    assert_eq!(code, 0, "{err}");
    let written = std::fs::read_to_string(&config_file).unwrap();
    assert!(
        written.contains("[web.search]") && written.contains("provider = \"brave\""),
        "{written}"
    );
    assert!(
        !written.contains("brave-key"),
        "the key is not in the config file"
    );

    let mut agent = Agent::spawn(&env, &[]);
    let session = agent.open_session(&ws.project()).await;
    agent.prompt(&session, "search").await;
    let found = tool_result(&mock.requests()[1], "s");
    assert!(found.contains("1. Serde"), "{found}");

    let (code, _, err) = run_tandem(&["login", "--search", "searxng"], &env, None, None);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("needs --search-url"), "{err}");
}

/// A listener on one of this machine's own addresses other than loopback, standing in for a
/// service the user runs: what it serves, and how many connections it has had.
#[cfg(unix)]
pub(crate) struct OwnService {
    /// `http://<address>:<port>/`.
    pub url: String,
    /// The same address IPv4-mapped (`http://[::ffff:<address>]:<port>/`), for an IPv4 one.
    pub mapped: Option<String>,
    /// The interface that has the address.
    pub interface: String,
    /// Connections accepted so far.
    pub connections: Arc<std::sync::atomic::AtomicUsize>,
}

/// This machine's own addresses other than loopback and IPv6 link-local (which needs a scope
/// in a URL), IPv4 first, found here with getifaddrs, independently of tandem.
#[cfg(unix)]
fn own_addresses() -> Vec<(std::net::IpAddr, String)> {
    use std::net::IpAddr;
    let mut found: Vec<(IpAddr, String)> = nix::ifaddrs::getifaddrs()
        .unwrap()
        .filter_map(|entry| {
            let address = entry.address?;
            let ip = match address.as_sockaddr_in() {
                Some(v4) => IpAddr::V4(v4.ip()),
                None => IpAddr::V6(address.as_sockaddr_in6()?.ip()),
            };
            Some((ip, entry.interface_name))
        })
        .filter(|(ip, _)| {
            !ip.is_loopback()
                && !ip.is_unspecified()
                && !matches!(ip, IpAddr::V6(v6) if v6.is_unicast_link_local())
        })
        .collect();
    found.sort_by_key(|(ip, _)| ip.is_ipv6());
    found
}

/// A service on this machine's first own address that can be listened on, or `None` (with
/// the reason printed) when the machine has no address but loopback.
#[cfg(unix)]
pub(crate) async fn own_service() -> Option<OwnService> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let addresses = own_addresses();
    if addresses.is_empty() {
        // The test harness shows a test's stderr; a skipped check must say so.
        #[allow(clippy::print_stderr)]
        {
            eprintln!("skipped: this machine has no address but loopback");
        }
        return None;
    }
    for (ip, interface) in addresses {
        let Ok(listener) = tokio::net::TcpListener::bind((ip, 0)).await else {
            continue;
        };
        let at = listener.local_addr().unwrap();
        let url = format!("http://{at}/");
        let mapped = match at.ip() {
            std::net::IpAddr::V4(v4) => Some(format!("http://[::ffff:{v4}]:{}/", at.port())),
            std::net::IpAddr::V6(_) => None,
        };
        let connections = Arc::new(AtomicUsize::new(0));
        let count = connections.clone();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                count.fetch_add(1, Ordering::SeqCst);
                let mut request = [0u8; 4096];
                let _ = stream.read(&mut request).await;
                let body = "the user's local service";
                let reply = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: {}\r\n\
                     connection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(reply.as_bytes()).await;
            }
        });
        return Some(OwnService {
            url,
            mapped,
            interface,
            connections,
        });
    }
    panic!(
        "no own address of this machine could be listened on: {:?}",
        own_addresses()
    );
}

/// `result` refuses `service` as this machine's own address (naming the interface when
/// `named`), and the service saw no connection.
#[cfg(unix)]
pub(crate) fn assert_refused_unreached(result: &str, service: &OwnService, named: bool) {
    let interface = if named {
        format!(
            "an address of this machine (interface {})",
            service.interface
        )
    } else {
        "an address of this machine (interface ".to_string()
    };
    assert!(
        result.starts_with("Error:")
            && result.contains(&interface)
            && result.contains("does not fetch from the user's own machine or network"),
        "{result}"
    );
    assert!(!result.contains("local service"), "{result}");
    assert_eq!(
        service
            .connections
            .load(std::sync::atomic::Ordering::SeqCst),
        0,
        "the service on {} was reached",
        service.url
    );
}

/// In full-access, where it used to be fetched, a service on this machine's own interface
/// address (not loopback) is refused before any connection is made, written as it is and,
/// for IPv4, as an IPv4-mapped IPv6 address.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_service_on_this_machines_own_interface_address_is_refused() {
    let Some(service) = own_service().await else {
        return;
    };
    let mut calls = vec![fetch("a", &service.url)];
    if let Some(mapped) = &service.mapped {
        calls.push(fetch("b", mapped));
    }
    let script = vec![Reply::tools(&calls), Reply::text(&["refused"])];
    let (mock, _ws, mut agent, session, _editor) =
        session_with_env("small", script, json!({}), "full-access", |_| Vec::new()).await;
    let (answer, _) = agent.prompt(&session, "read the local service").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    for (id, ..) in &calls {
        let result = tool_result(&mock.requests()[1], id);
        assert_refused_unreached(&result, &service, true);
    }
    agent.assert_valid();
}
