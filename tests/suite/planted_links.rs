//! Issue 53 over real stdio: a command the user allowed (or the repository's own script)
//! plants symbolic links in the workspace, and a prompt-injected model then has tandem read
//! or write. Nothing may land or be read outside the workspace without a question:
//!
//! - a link waiting under the name tandem used to write its temp file under
//!   (`.<name>.tandem-<pid>.tmp`) for `write_file`, an approved `edit_file`, `/rewind` and
//!   `tandem exec` with an allow rule;
//! - a name flipped between a plain file and a link to a key while `read_file` runs, on
//!   disk and through an editor that reads the path it is given.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{Value, json};

use crate::common::editor::Answer;
use crate::common::{Reply, Workspace, session_with_env};

/// What the user's own files hold; it must never change or reach the model.
const PRECIOUS: &str = "export PATH=/usr/bin # the user's own\n";

fn call(id: &str, tool: &str, args: Value) -> Reply {
    Reply::tools(&[(id, tool, args)])
}

/// The user's `~/.bashrc`, outside the project.
fn bashrc(ws: &Workspace) -> PathBuf {
    ws.write("home/.bashrc", PRECIOUS)
}

/// A script in the project that links every name the old temp-file scheme could use for
/// `name` (the pid is read from `pidfile`, written once tandem runs) to `target`.
fn planting_script(ws: &Workspace, name: &str, target: &Path) -> PathBuf {
    let pidfile = ws.project().join(".tandem-pid");
    ws.write(
        "project/plant.sh",
        &format!(
            "while [ ! -s '{pidfile}' ]; do sleep 0.05; done\nln -sfn '{target}' \".{name}.tandem-$(cat '{pidfile}').tmp\"\n",
            pidfile = pidfile.display(),
            target = target.display(),
        ),
    )
}

fn write_pid(ws: &Workspace, pid: u32) {
    std::fs::write(ws.project().join(".tandem-pid"), pid.to_string()).unwrap();
}

/// Links `.<name>.tandem-<pid>.tmp` to `target`, as `plant.sh` does.
fn plant(ws: &Workspace, name: &str, pid: u32, target: &Path) {
    let link = ws.project().join(format!(".{name}.tandem-{pid}.tmp"));
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(target, link).unwrap();
}

/// accept-edits, one "Always allow" on the planting command, then `write_file a.txt`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_never_lands_through_a_link_an_allowed_command_planted() {
    for caps in [json!({}), json!({"terminal": true})] {
        let script = vec![
            call("plant", "run_command", json!({"command": "sh plant.sh"})),
            call(
                "w",
                "write_file",
                json!({"path": "a.txt", "content": "the model's text\n"}),
            ),
            Reply::text(&["done"]),
        ];
        let (_mock, ws, mut agent, id, editor) =
            session_with_env("small", script, caps.clone(), "accept-edits", |_| {
                Vec::new()
            })
            .await;
        let home = bashrc(&ws);
        planting_script(&ws, "a.txt", &home);
        write_pid(&ws, agent.pid());
        editor.answer_with(&[Answer::Select("allow_always")]);
        let (response, _) = agent.prompt(&id, "go").await;
        assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
        assert!(
            ws.project()
                .join(format!(".a.txt.tandem-{}.tmp", agent.pid()))
                .is_symlink(),
            "the command planted its link ({caps})"
        );
        assert_eq!(std::fs::read_to_string(&home).unwrap(), PRECIOUS, "{caps}");
        assert_eq!(
            std::fs::read_to_string(ws.project().join("a.txt")).unwrap(),
            "the model's text\n",
            "{caps}"
        );
        agent.assert_valid();
    }
}

/// Ask mode: the user approves a harmless diff of `a.txt`; the write must land in `a.txt`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approved_edit_never_lands_through_a_planted_link() {
    let script = vec![
        call(
            "e",
            "edit_file",
            json!({"path": "a.txt", "old_string": "one", "new_string": "two"}),
        ),
        Reply::text(&["edited"]),
    ];
    let (_mock, ws, mut agent, id, editor) =
        session_with_env("small", script, json!({}), "ask", |ws| {
            ws.write("project/a.txt", "one\n");
            Vec::new()
        })
        .await;
    let home = bashrc(&ws);
    plant(&ws, "a.txt", agent.pid(), &home);
    editor.answer_with(&[Answer::Select("allow_once")]);
    agent.prompt(&id, "edit").await;
    assert_eq!(editor.params_of("session/request_permission").len(), 1);
    assert_eq!(std::fs::read_to_string(&home).unwrap(), PRECIOUS);
    assert_eq!(
        std::fs::read_to_string(ws.project().join("a.txt")).unwrap(),
        "two\n"
    );
    agent.assert_valid();
}

/// `/rewind 1` writes the repository's original text back: into `a.txt`, not the link.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rewind_never_lands_through_a_planted_temp_link() {
    let script = vec![
        call(
            "w",
            "write_file",
            json!({"path": "a.txt", "content": "changed\n"}),
        ),
        Reply::text(&["written"]),
    ];
    let (_mock, ws, mut agent, id, _editor) =
        session_with_env("small", script, json!({}), "accept-edits", |ws| {
            ws.write("project/a.txt", "original\n");
            Vec::new()
        })
        .await;
    agent.prompt(&id, "write").await;
    let home = bashrc(&ws);
    plant(&ws, "a.txt", agent.pid(), &home);
    let (response, _) = agent.prompt(&id, "/rewind 1").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert_eq!(std::fs::read_to_string(&home).unwrap(), PRECIOUS);
    assert_eq!(
        std::fs::read_to_string(ws.project().join("a.txt")).unwrap(),
        "original\n"
    );
    agent.assert_valid();
}

/// README's CI setup: `tandem exec --mode accept-edits` with an allow rule for the command
/// that plants the link, then a write.
#[test]
fn exec_with_an_allow_rule_never_writes_through_a_planted_link() {
    let ws = Workspace::new();
    crate::common::copy_fixture("small", &ws.project());
    let profile = ws.write("home/.profile", PRECIOUS);
    planting_script(&ws, "a.txt", &profile);
    ws.write(
        "home/.config/tandem/config.toml",
        "[permissions]\nallow = [\"run_command(sh plant.sh)\"]\n",
    );
    let replay = ws.write(
        "replay.json",
        &json!({"turns": [
            {"events": [{"tool_call": {"id": "p", "name": "run_command", "arguments": {"command": "sh plant.sh"}}}]},
            {"events": [{"tool_call": {"id": "w", "name": "write_file", "arguments": {"path": "a.txt", "content": "the model's text\n"}}}]},
            {"events": [{"text": "done"}]}
        ]})
        .to_string(),
    );
    let child = std::process::Command::new(crate::common::tandem_bin())
        .args(["exec", "--mode", "accept-edits", "--replay"])
        .arg(&replay)
        .arg("--cwd")
        .arg(ws.project())
        .arg("go")
        .env_clear()
        .envs(ws.base_env())
        .env("PATH", std::env::var("PATH").unwrap())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    write_pid(&ws, child.id());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        ws.project()
            .join(format!(".a.txt.tandem-{}.tmp", out_pid(&ws)))
            .is_symlink(),
        "the allowed command planted its link: {stderr}"
    );
    assert_eq!(std::fs::read_to_string(&profile).unwrap(), PRECIOUS);
    assert_eq!(
        std::fs::read_to_string(ws.project().join("a.txt")).unwrap(),
        "the model's text\n"
    );
}

fn out_pid(ws: &Workspace) -> String {
    std::fs::read_to_string(ws.project().join(".tandem-pid")).unwrap()
}

/// The key a flipping link points to.
const KEY: &str = "-----BEGIN OPENSSH PRIVATE KEY----- planted-secret-9d1c";

/// Flips `r.txt` between a plain file and a link to the key until stopped, each state put
/// in place by an atomic rename (so the name is never missing): mostly the plain file, so
/// most calls are judged as reads inside the workspace, with short windows of the link.
fn flipper(project: PathBuf, key: PathBuf, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<u64> {
    std::thread::spawn(move || {
        let name = project.join("r.txt");
        let (plain, link) = (project.join(".r.plain"), project.join(".r.link"));
        let mut flips = 0;
        while !stop.load(Ordering::Relaxed) {
            std::fs::write(&plain, "harmless\n").unwrap();
            std::fs::rename(&plain, &name).unwrap();
            std::thread::sleep(std::time::Duration::from_micros(3000));
            let _ = std::fs::remove_file(&link);
            std::os::unix::fs::symlink(&key, &link).unwrap();
            std::fs::rename(&link, &name).unwrap();
            std::thread::sleep(std::time::Duration::from_micros(500));
            flips += 1;
        }
        std::fs::write(&plain, "harmless\n").unwrap();
        std::fs::rename(&plain, &name).unwrap();
        flips
    })
}

/// 320 `read_file r.txt` while `r.txt` flips; every question is rejected, so a result with
/// the key was read without asking. On disk and through an editor that reads the path it
/// is given (following links, as editors do).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_judged_on_one_file_never_returns_another() {
    const TURNS: usize = 40;
    const PER_TURN: usize = 8;
    let mut leaks = Vec::new();
    for caps in [json!({}), json!({"fs": {"readTextFile": true}})] {
        let mut script: Vec<Reply> = (0..TURNS)
            .map(|turn| {
                let calls: Vec<(String, &str, Value)> = (0..PER_TURN)
                    // Each call a little different: the loop guard stops a call repeated unchanged.
                    .map(|i| {
                        let n = turn * PER_TURN + i;
                        (
                            format!("r{n}"),
                            "read_file",
                            json!({"path": "r.txt", "limit": 1000 + n}),
                        )
                    })
                    .collect();
                let calls: Vec<(&str, &str, Value)> = calls
                    .iter()
                    .map(|(id, tool, args)| (id.as_str(), *tool, args.clone()))
                    .collect();
                Reply::tools(&calls)
            })
            .collect();
        script.push(Reply::text(&["read"]));
        let (mock, ws, mut agent, id, editor) =
            session_with_env("small", script, caps.clone(), "ask", |ws| {
                ws.write("project/r.txt", "harmless\n");
                Vec::new()
            })
            .await;
        let key = ws.write("home/.ssh/id_test", KEY);
        editor.answer_with(&vec![Answer::Select("reject_once"); TURNS * PER_TURN]);
        let stop = Arc::new(AtomicBool::new(false));
        let flips = flipper(ws.project(), key, stop.clone());
        let (response, _) = agent.prompt(&id, "read it, many times").await;
        stop.store(true, Ordering::Relaxed);
        let flips = flips.join().unwrap();
        assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
        // The last request carries the whole conversation, every result once.
        let last = mock.requests().pop().unwrap();
        let results: Vec<String> = last.body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "tool")
            .map(|m| m["content"].to_string())
            .collect();
        let leaked = results
            .iter()
            .filter(|r| r.contains("planted-secret"))
            .count();
        let harmless = results.iter().filter(|r| r.contains("harmless")).count();
        #[allow(clippy::print_stderr)]
        {
            eprintln!(
                "{caps}: {flips} flips, {} results, {harmless} read the plain file, {leaked} leaked",
                results.len()
            );
        }
        assert!(harmless > 0, "some reads got the file ({caps})");
        agent.assert_valid();
        leaks.push((caps, leaked));
    }
    assert!(
        leaks.iter().all(|(_, leaked)| *leaked == 0),
        "the key was read without asking: {leaks:?}"
    );
}

/// While a background command runs it could swap a folder on the way for a link between any
/// look tandem takes and the editor's write (the editor follows links): tandem writes the
/// file itself then, exactly where it was judged, and the editor is not asked to.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn while_a_background_command_runs_writes_are_made_by_tandem_not_the_editor() {
    let script = vec![
        call(
            "bg",
            "run_command",
            json!({"command": "sleep 30", "background": true}),
        ),
        call(
            "w",
            "write_file",
            json!({"path": "h/a.txt", "content": "the model's text\n"}),
        ),
        Reply::text(&["done"]),
    ];
    let caps = json!({"fs": {"readTextFile": true, "writeTextFile": true}});
    let (_mock, ws, mut agent, id, editor) =
        session_with_env("small", script, caps, "accept-edits", |ws| {
            ws.write("project/h/a.txt", "before\n");
            Vec::new()
        })
        .await;
    editor.answer_with(&[Answer::Select("allow_once")]);
    let (response, _) = agent.prompt(&id, "go").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert!(
        editor.params_of("fs/write_text_file").is_empty(),
        "the editor was asked to write while a command ran"
    );
    assert_eq!(
        std::fs::read_to_string(ws.project().join("h/a.txt")).unwrap(),
        "the model's text\n"
    );
    agent.assert_valid();
}
