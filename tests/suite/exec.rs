//! `tandem exec`: the headless run README's first command uses.

use std::process::{Command, Stdio};

use crate::common::{MockModel, Reply, Workspace};

fn exec(
    ws: &Workspace,
    env: &[(String, String)],
    args: &[&str],
    stdin: Option<&str>,
) -> (i32, String, String) {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_tandem"))
        .arg("exec")
        .args(args)
        .current_dir(ws.project())
        .env_clear()
        .envs(env.iter().cloned())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
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

fn fixture() -> String {
    format!("{}/fixtures/demo/hello.json", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn replay_demo_prints_the_answer_offline() {
    let ws = Workspace::new();
    let (code, stdout, stderr) = exec(
        &ws,
        &ws.base_env(),
        &["--replay", &fixture(), "What are you?"],
        None,
    );
    assert_eq!(code, 0, "stderr:\n{stderr}");
    assert!(
        stdout.starts_with("Hello from **tandem** — an Agent Client Protocol agent"),
        "{stdout}"
    );
    assert!(stdout.ends_with("for review.\n"), "{stdout:?}");
    assert!(
        !stdout.contains("The user wants"),
        "reasoning goes to stderr, not stdout"
    );
    assert!(
        stderr.contains("The user wants to know what tandem is."),
        "{stderr}"
    );
    assert!(stderr.contains("context 483 / 128000 tokens"), "{stderr}");
    assert!(stderr.contains("stopped: end_turn"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompt_from_stdin_against_a_server() {
    let mock = MockModel::start(vec![Reply::text(&["Four", "."])]).await;
    let ws = Workspace::new();
    let env = ws.env(&mock);
    let (code, stdout, stderr) = tokio::task::spawn_blocking(move || {
        let r = exec(&ws, &env, &[], Some("What is 2+2?\n"));
        drop(ws);
        r
    })
    .await
    .unwrap();
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout, "Four.\n");
    assert_eq!(mock.requests()[0].last_user_text(), "What is 2+2?\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_error_exits_non_zero_with_the_message() {
    let mock = MockModel::start(vec![Reply::status(
        401,
        r#"{"error":{"message":"bad key"}}"#,
    )])
    .await;
    let ws = Workspace::new();
    let env = ws.env(&mock);
    let (code, stdout, stderr) = tokio::task::spawn_blocking(move || {
        let r = exec(&ws, &env, &["hi"], None);
        drop(ws);
        r
    })
    .await
    .unwrap();
    assert_eq!(code, 1);
    assert_eq!(stdout, "");
    assert!(
        stderr.contains("rejected the API key (401): bad key"),
        "{stderr}"
    );
}

#[test]
fn a_missing_key_exits_non_zero_naming_the_variable() {
    let ws = Workspace::new();
    let (code, _, stderr) = exec(&ws, &ws.base_env(), &["hi"], None);
    assert_eq!(code, 1);
    assert!(stderr.contains("set OPENAI_API_KEY"), "{stderr}");
}

#[test]
fn a_bad_config_exits_2_with_the_reason() {
    let ws = Workspace::new();
    let config = ws.write("bad.toml", "provider = \"acme\"\n");
    let (code, _, stderr) = exec(
        &ws,
        &ws.base_env(),
        &["--config", &config.to_string_lossy(), "hi"],
        None,
    );
    assert_eq!(code, 2);
    assert!(stderr.contains("unknown provider `acme`"), "{stderr}");
}

#[test]
fn an_empty_prompt_is_refused() {
    let ws = Workspace::new();
    let (code, _, stderr) = exec(&ws, &ws.base_env(), &["--replay", &fixture()], Some("  \n"));
    assert_eq!(code, 1);
    assert!(stderr.contains("the prompt is empty"), "{stderr}");
}

fn tour() -> String {
    format!("{}/fixtures/demo/tour.json", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_offline_tool_tour_reads_plans_edits_and_runs() {
    let ws = Workspace::new();
    crate::common::copy_fixture("small", &ws.project());
    let cwd = ws.project().to_string_lossy().into_owned();
    let args = [
        "--replay",
        &tour(),
        "--mode",
        "full-access",
        "--cwd",
        &cwd,
        "Add the missing test",
    ];
    let (code, stdout, stderr) = exec(&ws, &ws.base_env(), &args, None);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.starts_with("I'll look around the project first.\n"),
        "{stdout}"
    );
    assert!(stdout.ends_with("say if you want that too.\n"), "{stdout}");
    for shown in [
        "[~] Find the TODOs",
        "✓ Search `TODO` in .",
        "✓ Read src/lib.rs",
        "+    fn greets() {",
        "-// TODO: add a test",
        "14:    fn greets() {",
        "✓ Run `grep",
        "[x] Check the result",
    ] {
        assert!(stderr.contains(shown), "`{shown}` missing from:\n{stderr}");
    }
    let lib = std::fs::read_to_string(ws.project().join("src/lib.rs")).unwrap();
    assert!(lib.contains("mod tests {") && !lib.contains("TODO: add a test"));
}

#[test]
fn headless_runs_reject_what_needs_permission() {
    let ws = Workspace::new();
    crate::common::copy_fixture("small", &ws.project());
    let cwd = ws.project().to_string_lossy().into_owned();
    let (code, _, stderr) = exec(
        &ws,
        &ws.base_env(),
        &["--replay", &tour(), "--cwd", &cwd, "go"],
        None,
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("rejected Edit src/lib.rs: it needs permission and exec cannot ask"),
        "{stderr}"
    );
    assert!(stderr.contains("✗ Edit src/lib.rs"), "{stderr}");
    let lib = std::fs::read_to_string(ws.project().join("src/lib.rs")).unwrap();
    assert!(lib.contains("TODO: add a test"), "nothing was changed");
}
