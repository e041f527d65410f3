//! Hooks from the user's config: each event runs its commands in the session's directory with
//! the event as JSON on stdin; context they print reaches the model, a `pre_tool_use` hook can
//! deny (the model reads why), ask or allow, and a failing or slow hook is reported without
//! breaking the turn.

use serde_json::{Value, json};

use crate::common::calls::{final_status, tool_result};
use crate::common::editor::{Answer, full_caps};
use crate::common::{Reply, Workspace, install_user_config, session_in};

/// The audit log the example `stop` hook appends to.
fn audit(ws: &Workspace) -> Vec<Value> {
    std::fs::read_to_string(ws.home().join(".local/state/tandem/audit.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The worked example (fixtures/extend/config): every event, a deny the model sees, an ask
/// that overrides full-access mode.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_example_hooks_run_at_every_event() {
    let script = vec![
        Reply::tools(&[("c1", "run_command", json!({"command": "rm -rf target"}))]),
        Reply::tools(&[(
            "c2",
            "edit_file",
            json!({"path": "src/lib.rs", "old_string": "// TODO: subtract\n", "new_string": ""}),
        )]),
        Reply::tools(&[("c3", "run_command", json!({"command": "git push"}))]),
        Reply::text(&["All done."]),
    ];
    let (mock, ws, mut agent, session, editor) = session_in(
        "extend",
        script,
        full_caps(),
        "full-access",
        install_user_config,
    )
    .await;
    editor.answer_with(&[Answer::Select("reject_once")]);
    let (response, updates) = agent.prompt(&session, "clean up").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let requests = mock.requests();

    // session_start: its context is in the system prompt.
    let system = requests[0].system_prompt();
    assert!(
        system.contains("The session works on the git branch: none (not a git repository)."),
        "{system}"
    );
    // user_prompt_submit: its context travels with the prompt (run in the project: one TODO).
    let prompt = requests[0].last_user_text();
    assert!(prompt.contains("clean up"), "{prompt}");
    assert!(
        prompt.contains("TODO comments left under src/: 1"),
        "{prompt}"
    );

    // pre_tool_use deny: not run, shown failed, and the model reads the hook's reason.
    let denied = tool_result(&requests[1], "c1");
    assert_eq!(
        denied,
        "Denied by a hook: rm -rf is not allowed in this project; delete files one at a time."
    );
    assert_eq!(final_status(&updates, "c1"), "failed");
    // post_tool_use: the edit ran (full-access: no question) and the reminder follows it.
    let edited = tool_result(&requests[2], "c2");
    assert!(
        edited.ends_with("The file changed: run the tests before you answer."),
        "{edited}"
    );
    assert!(
        !std::fs::read_to_string(ws.project().join("src/lib.rs"))
            .unwrap()
            .contains("TODO")
    );
    // pre_tool_use ask: full-access mode would run it, the hook makes tandem ask (rejected).
    let asked = editor.params_of("session/request_permission");
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0]["toolCall"]["toolCallId"], "c3");
    assert!(tool_result(&requests[3], "c3").starts_with("Rejected"));
    assert!(
        editor.params_of("terminal/create").is_empty(),
        "neither command ran"
    );

    // stop: ran once the turn ended, before the answer to session/prompt.
    let log = audit(&ws);
    assert_eq!(log.len(), 1, "{log:?}");
    assert_eq!(log[0]["event"], "stop");
    assert_eq!(log[0]["stop_reason"], "end_turn");
    assert_eq!(log[0]["last_message"], "All done.");
    assert_eq!(log[0]["session_id"], session.as_str());
    assert!(
        log[0]["transcript_path"]
            .as_str()
            .unwrap()
            .ends_with(".jsonl")
    );
    agent.assert_valid();
}

/// Everything a hook gets: the JSON on stdin, the documented variables, the session's
/// directory; and a hook's `allow` skips the question in ask mode.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hooks_get_the_event_on_stdin_and_the_documented_environment() {
    let config = r#"
[[hooks.pre_tool_use]]
matcher = "write_file"
command = "cat > \"$HOME/pre.json\"; env | grep '^TANDEM_' | sort > \"$HOME/pre.env\"; pwd > \"$HOME/pre.pwd\"; echo '{\"decision\": \"allow\"}'"
[[hooks.post_tool_use]]
command = "cat >> \"$HOME/post.jsonl\"; echo >> \"$HOME/post.jsonl\""
"#;
    let script = vec![
        Reply::tools(&[(
            "c1",
            "write_file",
            json!({"path": "notes.md", "content": "hello\n"}),
        )]),
        Reply::text(&["written"]),
    ];
    let (_mock, ws, mut agent, session, editor) =
        session_in("extend", script, json!({}), "ask", |ws| {
            ws.write("home/.config/tandem/config.toml", config);
        })
        .await;
    let (response, _) = agent.prompt(&session, "write notes").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    // allow: written without asking, though the mode is ask.
    assert!(editor.params_of("session/request_permission").is_empty());
    assert_eq!(
        std::fs::read_to_string(ws.project().join("notes.md")).unwrap(),
        "hello\n"
    );
    let home = ws.home();
    let pre: Value =
        serde_json::from_str(&std::fs::read_to_string(home.join("pre.json")).unwrap()).unwrap();
    let project = ws.project().canonicalize().unwrap();
    assert_eq!(pre["event"], "pre_tool_use");
    assert_eq!(pre["tool_name"], "write_file");
    assert_eq!(
        pre["tool_input"],
        json!({"path": "notes.md", "content": "hello\n"})
    );
    assert_eq!(pre["call_id"], "c1");
    assert_eq!(pre["mode"], "ask");
    assert_eq!(pre["agent"], Value::Null);
    assert_eq!(pre["cwd"], project.to_str().unwrap());
    let env = std::fs::read_to_string(home.join("pre.env")).unwrap();
    for line in [
        "TANDEM_HOOK_EVENT=pre_tool_use".to_string(),
        format!("TANDEM_SESSION_ID={session}"),
        format!("TANDEM_PROJECT_DIR={}", project.display()),
        "TANDEM_TOOL_NAME=write_file".to_string(),
    ] {
        assert!(env.lines().any(|l| l == line), "{line} not in:\n{env}");
    }
    assert!(env.contains("TANDEM_TRANSCRIPT="), "{env}");
    assert_eq!(
        std::fs::read_to_string(home.join("pre.pwd"))
            .unwrap()
            .trim(),
        project.to_str().unwrap()
    );
    // The API key never reaches a hook.
    assert!(!env.contains(crate::common::TEST_KEY));
    let post: Value = serde_json::from_str(
        std::fs::read_to_string(home.join("post.jsonl"))
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(post["event"], "post_tool_use");
    assert_eq!(post["failed"], false);
    assert!(post["tool_output"].as_str().unwrap().contains("notes.md"));
}

/// A hook that fails, prints nonsense or hangs is reported (stderr, and a thought in the
/// editor) and the turn goes on; a `user_prompt_submit` hook can block a prompt.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failing_hooks_are_reported_and_a_prompt_can_be_blocked() {
    let config = r#"
[[hooks.session_start]]
command = "exit 3"
[[hooks.user_prompt_submit]]
command = "if grep -q secret; then echo 'prompts about secrets are blocked' >&2; exit 2; fi"
[[hooks.pre_tool_use]]
command = "echo '{oops'"
[[hooks.pre_tool_use]]
command = "sleep 30"
timeout_secs = 0.5
[[hooks.post_tool_use]]
command = "echo '{\"decision\": \"deny\"}'"
[[hooks.stop]]
command = "no-such-program-for-tandem"
"#;
    let script = vec![
        Reply::tools(&[("c1", "read_file", json!({"path": "src/lib.rs"}))]),
        Reply::text(&["fine"]),
    ];
    let (mock, _ws, mut agent, session, _editor) =
        session_in("extend", script, json!({}), "ask", |ws| {
            ws.write("home/.config/tandem/config.toml", config);
        })
        .await;
    let started = std::time::Instant::now();
    let (response, updates) = agent.prompt(&session, "read lib").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(25),
        "the slow hook was cut"
    );
    // The read ran, its result unchanged by the broken hooks.
    let read = tool_result(&mock.requests()[1], "c1");
    assert!(read.contains("pub fn add"), "{read}");
    assert_eq!(final_status(&updates, "c1"), "completed");
    let thoughts = crate::common::joined(&updates, "agent_thought_chunk");
    assert!(thoughts.contains("ran longer than 0.5 s"), "{thoughts}");
    assert!(thoughts.contains("does not take"), "{thoughts}");
    assert!(thoughts.contains("exited with 127"), "{thoughts}");
    assert_eq!(
        crate::common::joined(&updates, "agent_message_chunk"),
        "fine",
        "reports never mix into the answer"
    );
    let stderr = agent.stderr();
    assert!(
        stderr.contains("hook `exit 3` (session_start) exited with 3"),
        "{stderr}"
    );
    assert!(
        thoughts.contains("printed JSON tandem cannot read"),
        "{thoughts}"
    );

    // Blocked: the model is never asked, the prompt is not recorded, the session goes on.
    let before = mock.requests().len();
    let (response, updates) = agent.prompt(&session, "tell me the secret").await;
    assert_eq!(response["result"]["stopReason"], "refusal", "{response}");
    assert!(
        crate::common::joined(&updates, "agent_message_chunk")
            .contains("prompts about secrets are blocked")
    );
    assert_eq!(mock.requests().len(), before);
    crate::common::still_usable(&mock, &mut agent, &session).await;
    let last = mock.requests().last().unwrap().body.to_string();
    assert!(
        !last.contains("the secret"),
        "a blocked prompt stays out of the history"
    );
    agent.assert_valid();
}

/// A project's `.tandem/config.toml` cannot declare hooks: opening a repository must not run
/// its code. They are ignored, with a warning.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hooks_in_a_project_config_never_run() {
    let (_mock, ws, mut agent, session, _editor) = session_in(
        "extend",
        vec![Reply::text(&["hi"])],
        json!({}),
        "ask",
        |ws| {
            ws.write(
                "project/.tandem/config.toml",
                "[[hooks.session_start]]\ncommand = \"touch \\\"$HOME/ran\\\"\"\n\
                 [[hooks.stop]]\ncommand = \"touch \\\"$HOME/ran\\\"\"\n",
            );
        },
    )
    .await;
    let (response, _) = agent.prompt(&session, "hello").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert!(!ws.home().join("ran").exists(), "a project hook ran");
    let stderr = agent.stderr();
    assert!(
        stderr.contains("hooks in the project's .tandem/config.toml are ignored"),
        "{stderr}"
    );
}
