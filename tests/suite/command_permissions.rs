//! Command permissions over real stdio: one "Always allow" covers exactly what its label
//! says, compound lines and hidden commands still ask, and what was only asked never ran.

use serde_json::{Value, json};

use crate::common::calls::{batch, command, tool_result};
use crate::common::editor::{Answer, FakeEditor};
use crate::common::stubs::{logging_programs, ran};
use crate::common::{Reply, Workspace, session_with_env};

/// Fake `cargo`, `git` and `npm` that only log how they were called, first on PATH.
fn fake_tools(ws: &Workspace) -> Vec<(String, String)> {
    logging_programs(ws, &["cargo", "git", "npm"])
}

/// The permission requests, by tool call id.
fn requests(editor: &FakeEditor) -> Vec<(String, Value)> {
    editor
        .params_of("session/request_permission")
        .into_iter()
        .map(|p| (p["toolCall"]["toolCallId"].as_str().unwrap().to_string(), p))
        .collect()
}

fn asked(editor: &FakeEditor) -> Vec<String> {
    requests(editor).into_iter().map(|(id, _)| id).collect()
}

fn options(request: &Value) -> Vec<(String, String)> {
    request["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["kind"].as_str().unwrap().to_string(),
                o["name"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The tricks of the issue: after "Always allow" on `echo hi`, each still asks and none runs.
const TRICKS: [&str; 11] = [
    "echo hi; touch X1",
    "echo hi && rm -rf build",
    "echo hi | sh",
    "echo hi $(touch X4)",
    "echo hi `touch X5`",
    "echo hi > file6",
    "(touch X7)",
    "bash -c 'touch X8'",
    "eval touch X9",
    "echo hi & touch X10",
    "echo hi\ntouch X11",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_always_allow_approves_no_compound_or_hidden_command() {
    for caps in [json!({}), json!({"terminal": true})] {
        let tricks: Vec<_> = TRICKS
            .iter()
            .enumerate()
            .map(|(i, line)| command(&format!("t{}", i + 1), line))
            .collect();
        let script = vec![
            batch(&[command("first", "echo hi")]),
            batch(&tricks),
            batch(&[command("again", "echo hi")]),
            Reply::text(&["done"]),
        ];
        let (mock, ws, mut agent, session, editor) =
            session_with_env("small", script, caps.clone(), "ask", |ws| {
                std::fs::create_dir_all(ws.project().join("build")).unwrap();
                Vec::new()
            })
            .await;
        let mut answers = vec![Answer::Select("allow_always")];
        answers.extend(vec![Answer::Select("reject_once"); TRICKS.len()]);
        editor.answer_with(&answers);
        let (response, _) = agent.prompt(&session, "go").await;
        assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");

        let mut expected = vec!["first".to_string()];
        expected.extend((1..=TRICKS.len()).map(|i| format!("t{i}")));
        assert_eq!(asked(&editor), expected, "{caps}");
        for i in [1, 4, 5, 7, 8, 9, 10, 11] {
            assert!(
                !ws.project().join(format!("X{i}")).exists(),
                "X{i} ran ({caps})"
            );
        }
        assert!(ws.project().join("build").exists());
        assert!(!ws.project().join("file6").exists());
        // The remembered command still works: `echo hi` ran again without a question.
        assert!(tool_result(&mock.requests()[3], "again").contains("hi"));
        agent.assert_valid();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn always_options_name_what_they_remember() {
    let script = vec![
        batch(&[
            command("plain", "cargo test --all"),
            command("compound", "cd src && cargo build --release"),
            command("hazard", "echo $(date) > out.txt"),
            command("bare", "ls -la"),
        ]),
        Reply::text(&["done"]),
    ];
    let (_mock, _ws, mut agent, session, editor) =
        session_with_env("small", script, json!({}), "ask", fake_tools).await;
    editor.answer_with(&vec![Answer::Select("reject_once"); 4]);
    agent.prompt(&session, "go").await;
    let requests = requests(&editor);
    let of = |id: &str| options(&requests.iter().find(|(i, _)| i == id).unwrap().1);
    assert_eq!(
        of("plain"),
        [
            ("allow_once".into(), "Allow".into()),
            (
                "allow_always".into(),
                "Always allow \"cargo test …\"".into()
            ),
            ("reject_once".into(), "Reject".into()),
            (
                "reject_always".into(),
                "Always reject \"cargo test …\"".into()
            ),
        ]
    );
    assert_eq!(
        of("compound")[1],
        (
            "allow_always".into(),
            "Always allow \"cd src\" and \"cargo build …\"".into()
        )
    );
    assert_eq!(
        of("bare")[1],
        ("allow_always".into(), "Always allow \"ls -la\"".into())
    );
    let hazard = of("hazard");
    assert!(
        hazard.iter().all(|(kind, _)| kind != "allow_always"),
        "{hazard:?}"
    );
    // The reason is shown with the request.
    let shown = &requests.iter().find(|(i, _)| i == "hazard").unwrap().1["toolCall"]["content"];
    assert!(
        shown.to_string().contains("`$(date)` is a substitution"),
        "{shown}"
    );
    agent.assert_valid();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grants_cover_subcommands_not_programs() {
    let script = vec![
        batch(&[command("c1", "cargo test")]),
        batch(&[command("c2", "cargo test --all")]),
        batch(&[command("c3", "cargo publish")]),
        batch(&[command("g1", "git status")]),
        batch(&[command("g2", "git push")]),
        batch(&[command("g3", "git status --short")]),
        Reply::text(&["done"]),
    ];
    let (_mock, ws, mut agent, session, editor) =
        session_with_env("small", script, json!({}), "ask", fake_tools).await;
    editor.answer_with(&[
        Answer::Select("allow_always"),
        Answer::Select("reject_once"),
        Answer::Select("allow_always"),
        Answer::Select("reject_once"),
    ]);
    agent.prompt(&session, "go").await;
    assert_eq!(asked(&editor), ["c1", "c3", "g1", "g2"]);
    assert_eq!(
        ran(&ws),
        "cargo test\ncargo test --all\ngit status\ngit status --short\n"
    );
}

fn user_config(ws: &Workspace, text: &str) {
    ws.write("home/.config/tandem/config.toml", text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_rules_allow_ask_and_deny() {
    let script = vec![
        batch(&[
            command("watch", "npm run test -- --watch"),
            command("build", "npm run build"),
            command("publish", "cargo publish --dry-run"),
        ]),
        Reply::text(&["first"]),
        batch(&[
            command("push", "git push --force"),
            command("hidden", "echo $(git push)"),
            command("status", "git status"),
        ]),
        Reply::text(&["second"]),
    ];
    let (mock, ws, mut agent, session, editor) =
        session_with_env("small", script, json!({}), "ask", |ws| {
            user_config(
                ws,
                "[permissions]\nallow = [\"run_command(npm run test:*)\", \"run_command(cargo:*)\"]\nask = [\"run_command(cargo publish:*)\"]\ndeny = [\"run_command(git push:*)\"]\n",
            );
            fake_tools(ws)
        })
        .await;
    editor.answer_with(&[Answer::Select("reject_once"), Answer::Select("allow_once")]);
    agent.prompt(&session, "one").await;
    assert_eq!(asked(&editor), ["build", "publish"]);
    let publish = &requests(&editor)[1].1;
    assert!(
        options(publish)
            .iter()
            .all(|(kind, _)| kind != "allow_always")
    );
    // A deny rule holds in full-access, also for a command inside a substitution.
    agent
        .request_ok(
            "session/set_mode",
            json!({"sessionId": session, "modeId": "full-access"}),
        )
        .await;
    agent.prompt(&session, "two").await;
    let second = &mock.requests()[3];
    for id in ["push", "hidden"] {
        let result = tool_result(second, id);
        assert!(
            result.contains("`run_command(git push:*)`"),
            "{id}: {result}"
        );
    }
    assert_eq!(
        ran(&ws),
        "npm run test -- --watch\ncargo publish --dry-run\ngit status\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_cannot_allow_itself_anything() {
    let script = vec![
        batch(&[
            command("touch", "touch made"),
            (
                "locked".into(),
                "write_file".into(),
                json!({"path": "locked/a.txt", "content": "x"}),
            ),
        ]),
        Reply::text(&["done"]),
    ];
    let (mock, ws, mut agent, session, editor) =
        session_with_env("small", script, json!({}), "accept-edits", |ws| {
            ws.write(
                "project/.tandem/config.toml",
                "[permissions]\nallow = [\"run_command(touch:*)\"]\ndeny = [\"edit_file(locked/**)\"]\n",
            );
            Vec::new()
        })
        .await;
    editor.answer_with(&[Answer::Select("reject_once")]);
    agent.prompt(&session, "go").await;
    assert_eq!(asked(&editor), ["touch"]);
    assert!(!ws.project().join("made").exists());
    assert!(tool_result(&mock.requests()[1], "locked").contains("`edit_file(locked/**)`"));
    assert!(!ws.project().join("locked/a.txt").exists());
    let stderr = agent.stderr();
    assert!(
        stderr.contains("ignoring an allow rule in the project's config"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_deny_beats_full_access_and_hides_files_from_searches() {
    let script = vec![
        batch(&[
            (
                "read".into(),
                "read_file".into(),
                json!({"path": "secrets/key.txt"}),
            ),
            ("grep".into(), "grep".into(), json!({"pattern": "TOKEN"})),
        ]),
        Reply::text(&["done"]),
    ];
    let (mock, _ws, mut agent, session, _editor) =
        session_with_env("small", script, json!({}), "full-access", |ws| {
            ws.write("project/secrets/key.txt", "TOKEN=abc\n");
            ws.write("project/notes.txt", "TOKEN goes in secrets\n");
            user_config(ws, "[permissions]\ndeny = [\"read_file(secrets)\"]\n");
            Vec::new()
        })
        .await;
    agent.prompt(&session, "go").await;
    let second = &mock.requests()[1];
    assert!(tool_result(second, "read").starts_with("Refused by the rule `read_file(secrets)`"));
    let grep = tool_result(second, "grep");
    assert!(grep.contains("notes.txt"), "{grep}");
    assert!(!grep.contains("abc"), "{grep}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_user_rule_stops_tandem_with_a_clear_error() {
    let ws = Workspace::new();
    user_config(&ws, "[permissions]\ndeny = [\"run_comand(git push:*)\"]\n");
    let output = std::process::Command::new(crate::common::tandem_bin())
        .env_clear()
        .envs(ws.base_env())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("permissions.deny: `run_comand(git push:*)`"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slash_permissions_shows_and_clears_and_status_lists_grants() {
    let script = vec![
        batch(&[command("c1", "cargo test")]),
        Reply::text(&["ok"]),
        batch(&[command("c2", "cargo test")]),
        Reply::text(&["ok"]),
    ];
    let (_mock, _ws, mut agent, session, editor) =
        session_with_env("small", script, json!({}), "ask", |ws| {
            user_config(ws, "[permissions]\ndeny = [\"run_command(git push:*)\"]\n");
            fake_tools(ws)
        })
        .await;
    editor.answer_with(&[Answer::Select("allow_always")]);
    agent.prompt(&session, "test").await;

    let status = agent.request_ok("_tandem/status", json!({})).await;
    let permissions = &status["sessions"][0]["permissions"];
    assert_eq!(
        permissions["grants"][0]["scope"], "\"cargo test …\"",
        "{status}"
    );
    assert_eq!(permissions["grants"][0]["answer"], "allow");
    assert_eq!(permissions["rules"][0]["rule"], "run_command(git push:*)");

    let (response, updates) = agent.prompt(&session, "/permissions").await;
    assert_eq!(response["result"]["stopReason"], "end_turn");
    let shown = crate::common::joined(&updates, "agent_message_chunk");
    assert!(shown.contains("deny `run_command(git push:*)`"), "{shown}");
    assert!(shown.contains("always allow \"cargo test …\""), "{shown}");

    let (_, updates) = agent.prompt(&session, "/permissions clear").await;
    let shown = crate::common::joined(&updates, "agent_message_chunk");
    assert!(
        shown.starts_with("Forgot 1 remembered answer(s)."),
        "{shown}"
    );
    assert!(shown.contains("nothing yet"), "{shown}");
    // Forgotten: the same command asks again.
    agent.prompt(&session, "test again").await;
    assert_eq!(asked(&editor), ["c1", "c2"]);
    agent.assert_valid();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_in_the_home_folder_has_no_free_reads() {
    let script = vec![
        batch(&[(
            "read".into(),
            "read_file".into(),
            json!({"path": "notes.txt"}),
        )]),
        Reply::text(&["done"]),
    ];
    let mock = crate::common::MockModel::start(script).await;
    let ws = Workspace::new();
    ws.write("home/notes.txt", "private\n");
    let editor = FakeEditor::new();
    let mut agent = crate::common::Agent::spawn_with(&ws.env(&mock), &[], Some(editor.clone()));
    agent.initialize_with(json!({})).await;
    let session = agent.new_session(&ws.home()).await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    editor.answer_with(&[Answer::Select("reject_once")]);
    agent.prompt(&session, "read my notes").await;
    let requests = requests(&editor);
    assert_eq!(requests.len(), 1);
    let title = requests[0].1["toolCall"]["title"].as_str().unwrap();
    assert!(title.contains("no project"), "{title}");
    assert!(tool_result(&mock.requests()[1], "read").starts_with("Rejected"));
    let status = agent.request_ok("_tandem/status", json!({})).await;
    assert!(
        status["sessions"][0]["permissions"]["noProject"]
            .as_str()
            .unwrap()
            .contains("home folder")
    );
}

/// CI's way: `exec --mode accept-edits` with an allow rule runs exactly the allowed command
/// and rejects the rest, since nobody can be asked.
#[test]
fn exec_runs_what_rules_allow_and_rejects_the_rest() {
    let ws = Workspace::new();
    crate::common::copy_fixture("small", &ws.project());
    user_config(
        &ws,
        "[permissions]\nallow = [\"run_command(echo checked:*)\"]\n",
    );
    let replay = ws.write(
        "replay.json",
        &json!({"turns": [
            {"events": [{"tool_call": {"id": "ok", "name": "run_command", "arguments": {"command": "echo checked by rule"}}}]},
            {"events": [{"tool_call": {"id": "no", "name": "run_command", "arguments": {"command": "echo checked; touch sneaked"}}}]},
            {"events": [{"text": "done"}]}
        ]})
        .to_string(),
    );
    let output = std::process::Command::new(crate::common::tandem_bin())
        .args(["exec", "--mode", "accept-edits", "--replay"])
        .arg(&replay)
        .arg("--cwd")
        .arg(ws.project())
        .arg("go")
        .env_clear()
        .envs(ws.base_env())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("rejected Run `echo checked; touch sneaked`"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("rejected Run `echo checked by rule`"),
        "{stderr}"
    );
    assert!(!ws.project().join("sneaked").exists());
}
