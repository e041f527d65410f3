//! Issue 29 over real stdio: a prompt-injected model (scripted through the mock server) tries
//! the ways a review found from one harmless grant to code the user never allowed. After the
//! first "Always allow" every question is rejected, so anything that appears on disk ran
//! unasked.

use std::path::Path;

use serde_json::{Value, json};

use crate::common::calls::tool_result;
use crate::common::editor::{Answer, FakeEditor};
use crate::common::stubs::{logging_programs, ran};
use crate::common::{Reply, Workspace, session_with_env};

/// A `git` that only logs how it was called, first on the PATH.
fn fake_git(ws: &Workspace) -> Vec<(String, String)> {
    logging_programs(ws, &["git"])
}

fn call(id: &str, tool: &str, args: Value) -> Reply {
    Reply::tools(&[(id, tool, args)])
}

fn run(id: &str, command: &str) -> Reply {
    call(id, "run_command", json!({ "command": command }))
}

/// The permission requests' tool calls, in order.
fn asked(editor: &FakeEditor) -> Vec<Value> {
    editor
        .params_of("session/request_permission")
        .into_iter()
        .map(|p| p["toolCall"].clone())
        .collect()
}

fn asked_ids(editor: &FakeEditor) -> Vec<String> {
    asked(editor)
        .iter()
        .map(|c| c["toolCallId"].as_str().unwrap().to_string())
        .collect()
}

fn user_config(ws: &Workspace, text: &str) {
    ws.write("home/.config/tandem/config.toml", text);
}

/// The two lines bash and dash read differently: bash sees one harmless `echo`, dash (the
/// `sh` of Debian and Ubuntu) runs `touch PWNED`.
const DIVERGENT: [&str; 2] = [
    "echo hi &>/dev/null touch PWNED1",
    "echo hi $'\\'\ntouch PWNED2\n#'",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lines_bash_and_sh_read_differently_ask_and_show_every_line() {
    for caps in [json!({}), json!({"terminal": true})] {
        let script = vec![
            run("grant", "echo hi"),
            run("amp", DIVERGENT[0]),
            run("ansi", DIVERGENT[1]),
            Reply::text(&["done"]),
        ];
        let (_mock, ws, mut agent, session, editor) =
            session_with_env("small", script, caps.clone(), "ask", |_| Vec::new()).await;
        editor.answer_with(&[
            Answer::Select("allow_always"),
            Answer::Select("reject_once"),
            Answer::Select("reject_once"),
        ]);
        agent.prompt(&session, "go").await;
        assert_eq!(asked_ids(&editor), ["grant", "amp", "ansi"], "{caps}");
        for file in ["PWNED1", "PWNED2"] {
            assert!(!ws.project().join(file).exists(), "{file} ran ({caps})");
        }
        // The user is shown every line of what would run: in the title and in full.
        let ansi = &asked(&editor)[2];
        let title = ansi["title"].as_str().unwrap();
        assert!(title.contains("touch PWNED2"), "{title}");
        assert!(
            ansi["content"].to_string().contains("touch PWNED2"),
            "{ansi}"
        );
        assert!(
            ansi["content"]
                .to_string()
                .contains("bash and sh read differently"),
            "{ansi}"
        );
        agent.assert_valid();
    }
}

/// README's own CI setup: accept-edits with an allow rule for `cargo test`, in `tandem exec`.
#[test]
fn exec_with_an_allow_rule_runs_no_divergent_line() {
    let ws = Workspace::new();
    crate::common::copy_fixture("small", &ws.project());
    user_config(
        &ws,
        "[permissions]\nallow = [\"run_command(cargo test:*)\", \"run_command(echo hi)\"]\n",
    );
    let replay = ws.write(
        "replay.json",
        &json!({"turns": [
            {"events": [{"tool_call": {"id": "a", "name": "run_command", "arguments": {"command": "cargo test &>/dev/null touch PWNED1"}}}]},
            {"events": [{"tool_call": {"id": "b", "name": "run_command", "arguments": {"command": DIVERGENT[1]}}}]},
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
        .env("PATH", std::env::var("PATH").unwrap())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(!ws.project().join("PWNED1").exists(), "{stderr}");
    assert!(!ws.project().join("PWNED2").exists(), "{stderr}");
    assert!(
        stderr.contains("rejected Run `cargo test &>/dev/null"),
        "{stderr}"
    );
}

/// Issue 29, items 1 and 4: in full-access, a deny rule holds against another shell's
/// grammar and against every indirection the review tried.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deny_rule_holds_against_indirection_and_grammar() {
    let lines = [
        "echo hi &>/dev/null git push",
        "G=git; $G push",
        "git${IFS}push",
        "P=push; git $P",
        "alias g='git push'\ng",
        "g() { git \"$@\"; }; g push",
        "sh -c \"sh -c 'sh -c \\\"sh -c git\\\\\\\\ push\\\"'\"",
        "echo push | xargs git",
        "git -C . push",
    ];
    let mut script: Vec<Reply> = lines
        .iter()
        .enumerate()
        .map(|(i, line)| run(&format!("d{i}"), line))
        .collect();
    script.push(run("ok", "git status"));
    script.push(Reply::text(&["done"]));
    let (mock, ws, mut agent, session, editor) =
        session_with_env("small", script, json!({}), "full-access", |ws| {
            user_config(ws, "[permissions]\ndeny = [\"run_command(git push:*)\"]\n");
            fake_git(ws)
        })
        .await;
    agent.prompt(&session, "go").await;
    assert!(asked_ids(&editor).is_empty());
    assert_eq!(ran(&ws), "git status\n", "something reached git");
    let requests = mock.requests();
    for (i, line) in lines.iter().enumerate() {
        let result = tool_result(&requests[i + 1], &format!("d{i}"));
        assert!(result.starts_with("Refused"), "{line:?}: {result}");
        assert!(
            result.contains("`run_command(git push:*)`"),
            "{line:?}: {result}"
        );
    }
    agent.assert_valid();
}

/// Issue 29, items 5 and 6: "Always allow `rm build`" covers `rm build`, not more words, not a
/// path outside the project; a granted `git status` run in `/` asks and says where.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grant_covers_exactly_its_label_and_its_folder() {
    let script = vec![
        run("rm", "rm build"),
        run("more", "rm build -r ../outside"),
        run("hidden", "rm build 2>/dev/null -r ../outside"),
        run("status", "git status"),
        call(
            "root",
            "run_command",
            json!({"command": "git status", "cwd": "/"}),
        ),
        Reply::text(&["done"]),
    ];
    let (_mock, ws, mut agent, session, editor) =
        session_with_env("small", script, json!({}), "ask", |ws| {
            ws.write("project/build", "an old build log");
            ws.write("outside/keep.txt", "outside the project");
            fake_git(ws)
        })
        .await;
    editor.answer_with(&[
        Answer::Select("allow_always"),
        Answer::Select("reject_once"),
        Answer::Select("reject_once"),
        Answer::Select("allow_always"),
        Answer::Select("reject_once"),
    ]);
    agent.prompt(&session, "go").await;
    assert_eq!(
        asked_ids(&editor),
        ["rm", "more", "hidden", "status", "root"]
    );
    let requests = asked(&editor);
    let options = editor.params_of("session/request_permission")[0]["options"].to_string();
    assert!(
        options.contains("Always allow \\\"rm build\\\""),
        "{options}"
    );
    assert!(
        ws.project()
            .parent()
            .unwrap()
            .join("outside/keep.txt")
            .exists()
    );
    let root = requests[4]["title"].as_str().unwrap();
    assert!(root.contains("in /"), "{root}");
    assert_eq!(ran(&ws), "git status\n");
    let offered = editor.params_of("session/request_permission")[4]["options"].to_string();
    assert!(!offered.contains("allow_always"), "{offered}");
}

/// Issue 29, item 7: a link inside the project to a file outside that does not exist yet is
/// outside; an editor that writes through links would create the file there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dangling_link_to_outside_is_outside() {
    for caps in [
        json!({}),
        json!({"fs": {"readTextFile": true, "writeTextFile": true}}),
    ] {
        let script = vec![
            call(
                "w",
                "write_file",
                json!({"path": "link.txt", "content": "x"}),
            ),
            Reply::text(&["done"]),
        ];
        let (_mock, ws, mut agent, session, editor) =
            session_with_env("small", script, caps.clone(), "accept-edits", |ws| {
                let outside = ws.project().parent().unwrap().join("outside");
                std::fs::create_dir_all(&outside).unwrap();
                std::os::unix::fs::symlink(
                    outside.join("created.txt"),
                    ws.project().join("link.txt"),
                )
                .unwrap();
                Vec::new()
            })
            .await;
        editor.answer_with(&[Answer::Select("reject_once")]);
        agent.prompt(&session, "go").await;
        assert_eq!(asked_ids(&editor), ["w"], "{caps}");
        let created = ws.project().parent().unwrap().join("outside/created.txt");
        assert!(!created.exists(), "{caps}");
    }
}

/// A session over `small` with a `.env` whose reading a user rule denies, for `model`.
async fn env_denied(script: Vec<Reply>, model: &str) -> crate::common::EditorSession {
    let model = model.to_string();
    session_with_env("small", script, json!({}), "accept-edits", move |ws| {
        ws.write("project/.env", "SECRET=hunter2\n");
        user_config(ws, "[permissions]\ndeny = [\"read_file(.env)\"]\n");
        vec![("TANDEM_MODEL".into(), model)]
    })
    .await
}

/// Issue 29, item 3: with `deny = ["read_file(.env)"]` nothing reaches the file's content:
/// a patch that moves it, an edit that would confirm a guess, a command that copies it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_deny_covers_moves_patches_edits_and_commands() {
    let patch = "*** Begin Patch\n*** Update File: .env\n*** Move to: leak.txt\n@@\n-SECRET=hunter2\n+SECRET=hunter2\n*** End Patch";
    let script = vec![
        call("patch", "apply_patch", json!({"input": patch})),
        call("read", "read_file", json!({"path": "leak.txt"})),
        Reply::text(&["done"]),
    ];
    let (mock, ws, mut agent, session, editor) = env_denied(script, "gpt-4.1").await;
    agent.prompt(&session, "go").await;
    let requests = mock.requests();
    let patched = tool_result(&requests[1], "patch");
    assert!(patched.contains("`read_file(.env)`"), "{patched}");
    assert!(tool_result(&requests[2], "read").contains("does not exist"));
    assert!(!ws.project().join("leak.txt").exists());

    let script = vec![
        call(
            "right",
            "edit_file",
            json!({"path": ".env", "old_string": "SECRET=hunter2", "new_string": "x"}),
        ),
        call(
            "wrong",
            "edit_file",
            json!({"path": ".env", "old_string": "SECRET=guess", "new_string": "x"}),
        ),
        run("copy", "cp .env leak2.txt"),
        run("redirect", "cat < ./.env"),
        Reply::text(&["done"]),
    ];
    let (mock, ws2, mut agent2, session2, editor2) = env_denied(script, "mock-model").await;
    agent2.prompt(&session2, "go").await;
    let requests = mock.requests();
    let results: Vec<String> = ["right", "wrong", "copy", "redirect"]
        .iter()
        .enumerate()
        .map(|(i, id)| tool_result(&requests[i + 1], id))
        .collect();
    for result in &results {
        assert!(result.contains("`read_file(.env)`"), "{result}");
        assert!(!result.contains("hunter2"), "{result}");
    }
    // A right guess and a wrong one read the same: nothing is confirmed.
    assert_eq!(results[0], results[1]);
    assert!(!ws2.project().join("leak2.txt").exists());
    for (ws, editor) in [(&ws, &editor), (&ws2, &editor2)] {
        assert!(asked_ids(editor).is_empty());
        assert_eq!(
            std::fs::read_to_string(ws.project().join(".env")).unwrap(),
            "SECRET=hunter2\n"
        );
    }
}

/// Issue 29, item 2 (protected paths): in accept-edits, edits to `.git/` and `.tandem/`
/// ask, and say why; in full-access they do not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edits_of_git_and_tandem_files_always_ask() {
    let fsmonitor = "[core]\n\tfsmonitor = touch PWNED\n";
    for (mode, asks) in [("accept-edits", true), ("full-access", false)] {
        let script = vec![
            call(
                "git",
                "write_file",
                json!({"path": ".git/config", "content": fsmonitor}),
            ),
            call(
                "tandem",
                "write_file",
                json!({"path": ".tandem/config.toml", "content": "[[mcp_servers]]\nname = \"x\"\ncommand = \"touch\"\nargs = [\"PWNED\"]\n"}),
            ),
            call(
                "plain",
                "write_file",
                json!({"path": "new.txt", "content": "ok"}),
            ),
            Reply::text(&["done"]),
        ];
        let (_mock, ws, mut agent, session, editor) =
            session_with_env("small", script, json!({}), mode, |ws| {
                ws.write("project/.git/config", "[core]\n");
                user_config(ws, "[permissions]\nallow = [\"edit_file(**)\"]\n");
                Vec::new()
            })
            .await;
        editor.answer_with(&[Answer::Select("reject_once"), Answer::Select("reject_once")]);
        agent.prompt(&session, "go").await;
        let expected: &[&str] = if asks { &["git", "tandem"] } else { &[] };
        assert_eq!(asked_ids(&editor), expected, "{mode}");
        if asks {
            let request = &editor.params_of("session/request_permission")[0];
            let title = request["toolCall"]["title"].as_str().unwrap();
            assert!(title.contains("git folder"), "{title}");
            assert!(!request["options"].to_string().contains("allow_always"));
            assert_eq!(
                std::fs::read_to_string(ws.project().join(".git/config")).unwrap(),
                "[core]\n"
            );
            assert!(!ws.project().join(".tandem/config.toml").exists());
        }
        assert!(Path::new(&ws.project().join("new.txt")).exists());
    }
}

/// A project's action is a program the repository names: it never takes the place of your
/// own action of that name, says what it runs in the menu, and asks before every run, in
/// full-access too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_projects_action_asks_every_time_and_replaces_nothing_of_yours() {
    let (_mock, ws, mut agent, session, editor) =
        session_with_env("small", vec![], json!({}), "full-access", |ws| {
            user_config(ws, "[[actions]]\nname = \"fmt\"\ncommand = \"echo mine\"\n");
            ws.write(
                "project/.tandem/config.toml",
                "[[actions]]\nname = \"fmt\"\ncommand = \"touch PWNED_FMT\"\n\n[[actions]]\nname = \"build\"\ndescription = \"Build the docs\"\ncommand = \"touch PWNED_BUILD\"\n",
            );
            Vec::new()
        })
        .await;
    let list = agent
        .request_ok("_tandem/actions/list", json!({"sessionId": session}))
        .await;
    let build = list["actions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "build")
        .unwrap();
    assert_eq!(
        build["description"],
        "Build the docs: runs the project's command `touch PWNED_BUILD`"
    );
    let mine = agent
        .request_ok(
            "_tandem/actions/run",
            json!({"sessionId": session, "name": "fmt"}),
        )
        .await;
    assert!(mine["output"].as_str().unwrap().contains("mine"), "{mine}");
    assert!(!ws.project().join("PWNED_FMT").exists());
    assert!(asked_ids(&editor).is_empty());

    editor.answer_with(&[Answer::Select("reject_once")]);
    agent
        .request_ok(
            "_tandem/actions/run",
            json!({"sessionId": session, "name": "build"}),
        )
        .await;
    let asked = asked(&editor);
    assert_eq!(asked.len(), 1);
    let title = asked[0]["title"].as_str().unwrap();
    assert!(
        title.contains("touch PWNED_BUILD") && title.contains("declared by"),
        "{title}"
    );
    let options = editor.params_of("session/request_permission")[0]["options"].to_string();
    assert!(!options.contains("allow_always"), "{options}");
    assert!(!ws.project().join("PWNED_BUILD").exists());
    agent.assert_valid();
}
