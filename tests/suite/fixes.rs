//! Issue 58: every message a newcomer meets on a wrong setting names its fix, the way
//! `tandem login` and `tandem doctor` do: a base URL without `/v1`, a bad `mode` in the
//! config file, a broken config file under `tandem doctor`, a server that wants a key when
//! none is set, a server that is down, and a login that stored no key.

use crate::common::{MockModel, Reply, TEST_KEY, Workspace, path_str, run_tandem};

/// The environment a user's shell gives: no RUST_LOG, so tandem's own plain output shows.
fn user_env(ws: &Workspace) -> Vec<(String, String)> {
    let mut env = ws.base_env();
    env.retain(|(name, _)| name != "RUST_LOG");
    env
}

/// `tandem ARGS` in the project, stdin closed at once, from an async test: run off the
/// runtime that serves the mock.
async fn tandem_blocking(
    ws: Workspace,
    env: Vec<(String, String)>,
    args: &[&str],
) -> (i32, String, String) {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        run_tandem(&args, &env, None, Some(&ws.project()))
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_base_url_without_v1_that_answers_404_is_told_to_add_it() {
    let mock = MockModel::start(vec![Reply::status(
        404,
        "<html><head><title>404 Not Found</title></head><body>Not Found</body></html>",
    )])
    .await;
    let ws = Workspace::new();
    let bare = mock.base_url.trim_end_matches("/v1").to_string();
    let mut env = user_env(&ws);
    env.push(("OPENAI_API_KEY".into(), TEST_KEY.into()));
    let args = ["exec", "--base-url", &bare, "--model", "m", "hi"];
    let (code, stdout, stderr) = tandem_blocking(ws, env, &args).await;
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(stdout, "");
    assert!(stderr.contains("(404)"), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "try {bare}/v1 (--base-url, or base_url in the config file)"
        )),
        "{stderr}"
    );
    assert!(stderr.contains("tandem doctor"), "{stderr}");
}

#[test]
fn a_bad_mode_in_the_config_file_names_the_file() {
    let ws = Workspace::new();
    let config = ws.write("config.toml", "mode = \"yolo\"\n");
    let mut env = user_env(&ws);
    env.push(("TANDEM_CONFIG".into(), path_str(&config)));
    // The editor's command: the mode is resolved before a session starts.
    let (code, stdout, stderr) = run_tandem(&[], &env, Some(""), Some(&ws.project()));
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(stdout, "");
    assert!(
        stderr.contains(&format!(
            "unknown mode `yolo` (`mode` in {}); modes:",
            config.display()
        )),
        "{stderr}"
    );
}

#[test]
fn doctor_reports_a_broken_config_file_and_runs_the_other_checks() {
    let ws = Workspace::new();
    let config = ws.write("config.toml", "model = \"a\"\n[retry\n");
    let mut env = user_env(&ws);
    env.push(("TANDEM_CONFIG".into(), path_str(&config)));
    env.push(("OPENAI_BASE_URL".into(), "http://127.0.0.1:9/v1".into()));
    let (code, report) = crate::suite::doctor::doctor(&ws, &env);
    assert_eq!(code, 1, "{report}");
    let checks: Vec<&str> = report
        .lines()
        .filter(|l| l.starts_with("✓ ") || l.starts_with("✗ "))
        .collect();
    assert!(
        checks[0].starts_with("✗ cannot parse config file") && checks[0].contains("line 2"),
        "the file's check comes first: {report}"
    );
    assert!(
        report.contains("the checks below ran without it"),
        "{report}"
    );
    assert!(
        report.contains("✓ data directory") && report.contains("is writable"),
        "{report}"
    );
    assert!(
        report.contains("cannot reach http://127.0.0.1:9/v1/models"),
        "{report}"
    );
    assert!(
        report.contains("named by your flags or environment is checked too"),
        "{report}"
    );
}

/// The broken file may be what names the user's own server: a key from the environment,
/// meant for that server, is not tried on the default one instead.
#[test]
fn doctor_with_a_broken_config_file_asks_no_server_the_file_did_not_name() {
    let ws = Workspace::new();
    let config = ws.write(
        "config.toml",
        "base_url = \"http://127.0.0.1:9/v1\"\nmodel = \"mine\"\n[retry\n",
    );
    let mut env = user_env(&ws);
    env.push(("TANDEM_CONFIG".into(), path_str(&config)));
    env.push(("OPENAI_API_KEY".into(), TEST_KEY.into()));
    let (code, report) = crate::suite::doctor::doctor(&ws, &env);
    assert_eq!(code, 1, "{report}");
    assert!(report.contains("the model server is not asked"), "{report}");
    assert!(
        !report.contains("GET ")
            && !report.contains("cannot reach")
            && !report.contains("completion"),
        "a server was asked: {report}"
    );
    assert!(report.contains("✓ data directory"), "{report}");
    assert!(!report.contains(TEST_KEY), "{report}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_with_no_key_against_a_server_that_wants_one_says_so_once() {
    let mock = MockModel::start(Vec::new()).await;
    mock.serve_info(
        "/v1/models",
        401,
        serde_json::json!({"error": {"message": "missing API key"}}),
    );
    let ws = Workspace::new();
    let mut env = user_env(&ws);
    env.push(("OPENAI_BASE_URL".into(), mock.base_url.clone()));
    env.push(("TANDEM_MODEL".into(), "mock-model".into()));
    let (code, report) =
        tokio::task::spawn_blocking(move || crate::suite::doctor::doctor(&ws, &env))
            .await
            .unwrap();
    assert_eq!(code, 1, "{report}");
    assert!(!report.contains("needs none"), "{report}");
    let crosses: Vec<&str> = report.lines().filter(|l| l.starts_with("✗")).collect();
    assert_eq!(crosses.len(), 1, "one cause, one ✗: {report}");
    assert!(
        crosses[0].contains("no API key, and GET")
            && crosses[0].contains("was refused without one"),
        "{report}"
    );
    assert!(
        report.contains("this server wants a key: run `tandem login`"),
        "{report}"
    );
    assert!(mock.requests().is_empty(), "no completion was tried");
}

#[test]
fn a_server_that_is_down_gets_plain_warnings_and_a_fix() {
    let ws = Workspace::new();
    let config = ws.write(
        "config.toml",
        "[retry]\nmax_attempts = 3\ninitial_delay_ms = 10\nmax_total_secs = 5\n",
    );
    let mut env = user_env(&ws);
    env.push(("OPENAI_API_KEY".into(), TEST_KEY.into()));
    env.push(("TANDEM_CONFIG".into(), path_str(&config)));
    let args = [
        "exec",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--model",
        "m",
        "hi",
    ];
    let (code, stdout, stderr) = run_tandem(&args, &env, None, Some(&ws.project()));
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(stdout, "");
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("tandem: warning: model request failed"))
        .collect();
    assert_eq!(warnings.len(), 2, "one per retry: {stderr}");
    assert!(warnings[0].contains("(attempt 2 of 3)"), "{stderr}");
    assert!(
        !stderr.contains(" WARN "),
        "no timestamped log lines: {stderr}"
    );
    let last = stderr.trim_end().lines().last().unwrap_or_default();
    assert!(
        last.contains("Check that it is running at that address")
            && last.contains("`tandem doctor`"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_login_that_stores_no_key_does_not_offer_to_remove_one() {
    let mock = MockModel::start(vec![Reply::text(&["OK"])]).await;
    mock.serve_info(
        "/v1/models",
        200,
        serde_json::json!({"object": "list", "data": [{"id": "mock-model"}]}),
    );
    let ws = Workspace::new();
    let mut env = user_env(&ws);
    env.push(("TANDEM_CREDENTIAL_STORE".into(), "file".into()));
    // An empty stdin: no key piped in.
    let args = [
        "login",
        "--base-url",
        &mock.base_url,
        "--model",
        "mock-model",
        "--key-stdin",
    ];
    let (code, _, stderr) = tandem_blocking(ws, env, &args).await;
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("tandem is ready"), "{stderr}");
    assert!(
        stderr.contains("`tandem doctor` checks the setup."),
        "{stderr}"
    );
    assert!(!stderr.contains("logout"), "no key was stored: {stderr}");
    assert!(!stderr.contains("key saved"), "{stderr}");
}

/// A plain warning keeps what names its subject: here the project file that was ignored.
#[test]
fn a_plain_warning_names_the_file_it_is_about() {
    let ws = Workspace::new();
    ws.write("project/.tandem/config.toml", "[[mcp_servers]\n");
    let fixture = format!("{}/fixtures/demo/hello.json", env!("CARGO_MANIFEST_DIR"));
    let args = ["exec", "--replay", &fixture, "hi"];
    let (code, _, stderr) = run_tandem(&args, &user_env(&ws), None, Some(&ws.project()));
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("tandem: warning: ignoring the project's config"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "(path={})",
            ws.project().join(".tandem/config.toml").display()
        )),
        "{stderr}"
    );
}
