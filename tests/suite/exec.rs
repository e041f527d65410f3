//! `tandem exec`: the headless run README's first command uses.

use std::process::{Command, Stdio};

use crate::common::{MockModel, Reply, Workspace};

fn exec(
    ws: &Workspace,
    env: &[(String, String)],
    args: &[&str],
    stdin: Option<&str>,
) -> (i32, String, String) {
    let args: Vec<&str> = std::iter::once("exec")
        .chain(args.iter().copied())
        .collect();
    crate::common::run_tandem(&args, env, stdin, Some(&ws.project()))
}

/// `exec` from an async test: the blocking wait runs off the runtime that serves the mock model.
pub(super) async fn exec_blocking(
    ws: Workspace,
    env: Vec<(String, String)>,
    args: &[&str],
    stdin: Option<&'static str>,
) -> (i32, String, String) {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        exec(&ws, &env, &args, stdin)
    })
    .await
    .unwrap()
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

/// README's skills-and-subagents tour (fixtures/demo/extend.json) over the extend workspace.
#[test]
fn the_extend_tour_loads_a_skill_runs_the_scout_and_edits() {
    let ws = Workspace::new();
    crate::common::copy_fixture("extend", &ws.project());
    let tour = format!("{}/fixtures/demo/extend.json", env!("CARGO_MANIFEST_DIR"));
    let (code, stdout, stderr) = exec(
        &ws,
        &ws.base_env(),
        &[
            "--replay",
            &tour,
            "--mode",
            "full-access",
            "Write the release notes for 0.1.1",
        ],
        None,
    );
    assert_eq!(code, 0, "stderr:\n{stderr}");
    for line in [
        "✓ Load skill `release-notes`",
        "✓ Read CHANGELOG.md",
        "✓ scout: Map src/",
        "✓ Edit CHANGELOG.md",
    ] {
        assert!(stderr.contains(line), "{line} not in:\n{stderr}");
    }
    assert!(stdout.ends_with("which is not released yet.\n"), "{stdout}");
    let changelog = std::fs::read_to_string(ws.project().join("CHANGELOG.md")).unwrap();
    assert!(
        changelog.starts_with("# Changelog\n\n## 0.1.1\n"),
        "{changelog}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompt_from_stdin_with_a_chosen_model() {
    let mock = MockModel::start(vec![Reply::text(&["Four", "."])]).await;
    let ws = Workspace::new();
    let env = ws.env(&mock);
    let (code, stdout, stderr) = exec_blocking(
        ws,
        env,
        &["--model", "picked-model", "-"],
        Some("What is 2+2?\n"),
    )
    .await;
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout, "Four.\n");
    assert_eq!(mock.requests()[0].last_user_text(), "What is 2+2?\n");
    assert_eq!(mock.requests()[0].body["model"], "picked-model");
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
    let (code, stdout, stderr) = exec_blocking(ws, env, &["hi"], None).await;
    assert_eq!(code, 1);
    assert_eq!(stdout, "");
    assert!(
        stderr.contains("rejected the API key (401): bad key"),
        "{stderr}"
    );
}

#[test]
fn a_missing_key_is_a_configuration_error_in_one_line() {
    let ws = Workspace::new();
    // As a user runs it: no RUST_LOG.
    let env: Vec<_> = ws
        .base_env()
        .into_iter()
        .filter(|(name, _)| name != "RUST_LOG")
        .collect();
    let (code, stdout, stderr) = exec(&ws, &env, &["hi"], None);
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(stdout, "");
    assert!(stderr.contains("set OPENAI_API_KEY"), "{stderr}");
    assert!(stderr.contains("tandem login"), "{stderr}");
    assert_eq!(
        stderr.trim().lines().count(),
        1,
        "one line, no internal logs: {stderr}"
    );
}

/// A mode from the environment or the config file is for editor sessions: `exec` stays
/// read-only unless its own `--mode` says otherwise, as its help says.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_ignores_a_configured_mode_and_stays_read_only() {
    let mock = MockModel::start(vec![
        Reply::tools(&[(
            "call_1",
            "write_file",
            serde_json::json!({"path": "new.txt", "content": "x"}),
        )]),
        Reply::text(&["done"]),
    ])
    .await;
    let ws = Workspace::new();
    let config = ws.write("config.toml", "mode = \"full-access\"\n");
    let mut env = ws.env(&mock);
    env.push(("TANDEM_MODE".into(), "full-access".into()));
    env.push((
        "TANDEM_CONFIG".into(),
        config.to_string_lossy().into_owned(),
    ));
    let ((code, _, stderr), written) = tokio::task::spawn_blocking(move || {
        let ran = exec(&ws, &env, &["write new.txt"], None);
        (ran, ws.project().join("new.txt").exists())
    })
    .await
    .unwrap();
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("mode read-only"), "{stderr}");
    assert!(!written, "exec wrote a file with no --mode");
    assert_eq!(
        mock.requests().len(),
        2,
        "the refusal went back to the model"
    );
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
fn tandem_demo_runs_the_tour_on_a_built_in_project_from_any_folder() {
    // No clone, no fixture path, no model: the project and the script are in the binary.
    let ws = Workspace::new();
    let temp = ws.home().join("tmp");
    let elsewhere = ws.home().join("elsewhere");
    std::fs::create_dir_all(&temp).unwrap();
    std::fs::create_dir_all(&elsewhere).unwrap();
    let mut env = ws.base_env();
    env.push(("TMPDIR".into(), temp.to_string_lossy().into_owned()));
    let (code, stdout, stderr) = crate::common::run_tandem(&["demo"], &env, None, Some(&elsewhere));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.ends_with("say if you want that too.\n"), "{stdout}");
    assert!(stderr.contains("✓ Read src/lib.rs"), "{stderr}");
    assert!(
        stderr.contains("tandem demo: done. The project it changed is in"),
        "{stderr}"
    );
    assert!(stderr.contains("login` connects a real model"), "{stderr}");
    let made: Vec<_> = std::fs::read_dir(&temp)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(made.len(), 1, "{made:?}");
    let lib = std::fs::read_to_string(made[0].join("project/src/lib.rs")).unwrap();
    assert!(
        lib.contains("fn greets()") && !lib.contains("TODO: add a test"),
        "{lib}"
    );
    assert_eq!(
        std::fs::read_dir(&elsewhere).unwrap().count(),
        0,
        "the folder it ran from is untouched"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&made[0]).unwrap().permissions().mode();
        assert_eq!(
            mode & 0o777,
            0o700,
            "only the user may enter the demo's folder"
        );
    }
}

/// The tour runs on a setup of its own: the user's config file (its hooks, its MCP servers,
/// its rules, or a file that does not parse) and server variables neither run in it nor stop
/// it, and its session is not stored among the user's.
#[test]
fn tandem_demo_ignores_the_users_setup_and_stores_nothing_of_theirs() {
    let ws = Workspace::new();
    let temp = ws.home().join("tmp");
    std::fs::create_dir_all(&temp).unwrap();
    let marker = ws.home().join("hook-ran");
    let hooked = ws.write(
        "config.toml",
        &format!(
            "[[hooks.session_start]]\ncommand = \"touch '{}'\"\n[permissions]\ndeny = [\"run_command\"]\n",
            marker.display()
        ),
    );
    let broken = ws.write("broken.toml", "model = \"a\"\n[retry\n");
    for (config, provider) in [(&hooked, "openai"), (&broken, "olama")] {
        let mut env = ws.base_env();
        env.push(("TMPDIR".into(), temp.to_string_lossy().into_owned()));
        env.push((
            "TANDEM_CONFIG".into(),
            config.to_string_lossy().into_owned(),
        ));
        env.push(("TANDEM_PROVIDER".into(), provider.into()));
        env.push(("OPENAI_BASE_URL".into(), "http://127.0.0.1:9/v1".into()));
        let (code, stdout, stderr) =
            crate::common::run_tandem(&["demo"], &env, None, Some(&ws.project()));
        assert_eq!(code, 0, "{}: {stderr}", config.display());
        assert!(stdout.ends_with("say if you want that too.\n"), "{stdout}");
        assert!(
            stderr.contains("✓ Run `grep"),
            "the rule did not apply: {stderr}"
        );
    }
    assert!(!marker.exists(), "the user's hook ran in the demo");
    assert!(
        !ws.home().join("data").exists(),
        "the demo stored a session in the user's TANDEM_HOME"
    );
    assert_eq!(std::fs::read_dir(&temp).unwrap().count(), 2);
}

/// A demo whose folder cannot be made says why, and not that it is done.
#[test]
fn a_demo_without_a_usable_temp_folder_says_why() {
    let ws = Workspace::new();
    let file = ws.write("not-a-folder", "x");
    let mut env = ws.base_env();
    env.push(("TMPDIR".into(), file.to_string_lossy().into_owned()));
    let (code, _, stderr) = crate::common::run_tandem(&["demo"], &env, None, Some(&ws.project()));
    assert_ne!(code, 0, "{stderr}");
    assert!(stderr.contains("cannot make the demo's folder"), "{stderr}");
    assert!(!stderr.contains("tandem demo: done"), "{stderr}");
}

#[test]
fn exec_defaults_to_read_only_and_rejects_what_needs_asking() {
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
    assert!(stderr.contains("mode read-only"), "{stderr}");
    assert!(
        stderr.contains("✗ Edit src/lib.rs: Refused: the session is in read-only mode"),
        "{stderr}"
    );
    // In ask mode the prompt cannot be answered headless: the call is rejected.
    let (code, _, stderr) = exec(
        &ws,
        &ws.base_env(),
        &["--replay", &tour(), "--cwd", &cwd, "--mode", "ask", "go"],
        None,
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("rejected Edit src/lib.rs: it needs permission and exec cannot ask"),
        "{stderr}"
    );
    let lib = std::fs::read_to_string(ws.project().join("src/lib.rs")).unwrap();
    assert!(lib.contains("TODO: add a test"), "nothing was changed");
}

#[test]
fn json_output_is_one_summary_object() {
    let ws = Workspace::new();
    crate::common::copy_fixture("small", &ws.project());
    let cwd = ws.project().to_string_lossy().into_owned();
    let args = [
        "--replay",
        &tour(),
        "--cwd",
        &cwd,
        "--mode",
        "full-access",
        "--output",
        "json",
        "go",
    ];
    let (code, stdout, stderr) = exec(&ws, &ws.base_env(), &args, None);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    let summary: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(summary["stopReason"], "end_turn");
    assert!(
        summary["answer"]
            .as_str()
            .unwrap()
            .ends_with("say if you want that too.\n")
    );
    assert_eq!(summary["usage"]["used"], 2672);
    let calls = summary["toolCalls"].as_array().unwrap();
    assert!(
        calls
            .iter()
            .any(|c| c["title"] == "Edit src/lib.rs" && c["status"] == "completed"),
        "{calls:?}"
    );
    assert!(!summary["sessionId"].as_str().unwrap().is_empty());
}

#[test]
fn ndjson_output_is_the_raw_update_stream() {
    let ws = Workspace::new();
    let (code, stdout, stderr) = exec(
        &ws,
        &ws.base_env(),
        &["--replay", &fixture(), "--output", "ndjson", "hi"],
        None,
    );
    assert_eq!(code, 0, "{stderr}");
    let kinds: Vec<String> = stdout
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            assert!(v["sessionId"].is_string());
            v["update"]["sessionUpdate"].as_str().unwrap().to_string()
        })
        .collect();
    assert_eq!(
        kinds.first().map(String::as_str),
        Some("available_commands_update")
    );
    assert!(kinds.iter().filter(|k| *k == "agent_message_chunk").count() > 3);
    assert!(kinds.contains(&"usage_update".to_string()));
}

#[test]
fn limits_and_timeouts_have_their_own_exit_status() {
    let ws = Workspace::new();
    crate::common::copy_fixture("small", &ws.project());
    let cwd = ws.project().to_string_lossy().into_owned();
    let (code, _, stderr) = exec(
        &ws,
        &ws.base_env(),
        &["--replay", &tour(), "--cwd", &cwd, "--max-turns", "2", "go"],
        None,
    );
    assert_eq!(code, 4, "{stderr}");
    assert!(stderr.contains("stopped: max_turn_requests"), "{stderr}");
    let slow = ws.write("slow.json", &{
        let events: Vec<serde_json::Value> = (0..400)
            .map(|i| serde_json::json!({"text": format!("t{i} ")}))
            .collect();
        serde_json::json!({"turns": [{"delay_ms": 50, "events": events}]}).to_string()
    });
    let start = std::time::Instant::now();
    let (code, _, stderr) = exec(
        &ws,
        &ws.base_env(),
        &[
            "--replay",
            &slow.to_string_lossy(),
            "--timeout",
            "0.5",
            "go",
        ],
        None,
    );
    assert_eq!(code, 5, "{stderr}");
    assert!(start.elapsed() < std::time::Duration::from_secs(10));
    assert!(
        stderr.contains("timed out, cancelling") && stderr.contains("stopped: timeout"),
        "{stderr}"
    );
    let (code, _, stderr) = exec(
        &ws,
        &ws.base_env(),
        &["--replay", &fixture(), "--timeout=0", "go"],
        None,
    );
    assert_eq!(code, 2, "a usage error");
    assert!(
        stderr.contains("`0` is not a positive number of seconds"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_id_continues_a_stored_session() {
    let mock = MockModel::start(vec![
        Reply::text(&["First answer."]),
        Reply::text(&["Second answer."]),
    ])
    .await;
    let ws = Workspace::new();
    let env = ws.env(&mock);
    let (first, second, ws) = tokio::task::spawn_blocking(move || {
        let first = exec(&ws, &env, &["--session", "ci-run", "first question"], None);
        let second = exec(&ws, &env, &["--session", "ci-run", "second question"], None);
        (first, second, ws)
    })
    .await
    .unwrap();
    assert_eq!(first.0, 0, "{}", first.2);
    assert_eq!(second.0, 0, "{}", second.2);
    assert!(first.2.contains("session ci-run"), "{}", first.2);
    let messages = mock.requests()[1].body["messages"].clone();
    let texts: Vec<String> = messages
        .as_array()
        .unwrap()
        .iter()
        .map(|m| crate::common::mock_model::content_text(&m["content"]))
        .collect();
    assert_eq!(
        texts[1..],
        ["first question", "First answer.", "second question"]
    );
    assert!(ws.home().join("data/sessions/ci-run.jsonl").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_exits_3() {
    let mock = MockModel::start(vec![Reply::chunks(vec![
        crate::common::mock_model::text("I can't help with that."),
        crate::common::mock_model::finish("content_filter"),
    ])])
    .await;
    let ws = Workspace::new();
    let env = ws.env(&mock);
    let (code, stdout, stderr) = exec_blocking(ws, env, &["do something bad"], None).await;
    assert_eq!(code, 3, "{stderr}");
    assert_eq!(stdout, "I can't help with that.\n");
    assert!(stderr.contains("stopped: refusal"), "{stderr}");
}

#[test]
fn an_interrupt_cancels_the_prompt_and_exits_130() {
    let ws = Workspace::new();
    let slow = ws.write("slow.json", &{
        let events: Vec<serde_json::Value> = (0..400)
            .map(|i| serde_json::json!({"text": format!("t{i} ")}))
            .collect();
        serde_json::json!({"turns": [{"delay_ms": 50, "events": events}]}).to_string()
    });
    let mut child = Command::new(crate::common::tandem_bin())
        .args(["exec", "--replay", &slow.to_string_lossy(), "go"])
        .env_clear()
        .envs(ws.base_env())
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .current_dir(ws.project())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The interrupt comes while the answer streams: its first word is out.
    let printed = crate::common::pipe::Pipe::read(child.stdout.take().unwrap());
    printed.wait_for("t0 ");
    let pid = child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .unwrap()
            .success()
    );
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains("interrupted, cancelling") && stderr.contains("stopped: cancelled"),
        "{stderr}"
    );
    // What was printed is the start of the answer, cut off by the interrupt.
    let stdout = String::from_utf8(printed.join()).unwrap();
    assert!(
        stdout.starts_with("t0 ") && !stdout.contains("t399"),
        "{stdout}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_echoed_key_is_redacted_in_every_output_format() {
    let key = crate::common::TEST_KEY;
    let echo = format!("the key is {key}");
    let mock = MockModel::start(vec![
        Reply::text(&[&echo]),
        Reply::text(&[&echo]),
        Reply::text(&[&echo]),
    ])
    .await;
    for format in ["text", "json", "ndjson"] {
        let ws = Workspace::new();
        let env = ws.env(&mock);
        let (code, stdout, stderr) =
            exec_blocking(ws, env, &["--output", format, "hi"], None).await;
        assert_eq!(code, 0, "{stderr}");
        assert!(
            stdout.contains("the key is [redacted]"),
            "{format}: {stdout}"
        );
        assert!(!stdout.contains(key) && !stderr.contains(key), "{format}");
    }
}
