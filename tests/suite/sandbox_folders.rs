//! The sandbox's private folders (`tandem-sandbox-*` in the temp folder) over real stdio
//! (Linux): a session's folder goes before `session/close` answers, every way tandem ends
//! removes its folders, and the folders of a tandem that was killed are reclaimed by the next
//! one, by the lock their process held, never a folder still in use, never through a link.
//! Each agent gets a temp folder of its own (`TMPDIR`), so the counts are exact.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use nix::sys::signal::Signal;
use serde_json::{Value, json};

use super::background::{running, until};
use super::sandbox::sandbox_here;
use crate::common::calls::{batch, command, tool_result};
use crate::common::editor::FakeEditor;
use crate::common::{Agent, MockModel, Reply, Workspace, copy_fixture, path_str, response};

/// What every private folder's name starts with.
const PREFIX: &str = "tandem-sandbox-";

/// The agent's own temp folder: beside the project, outside what commands may write.
fn own_tmp(ws: &Workspace) -> PathBuf {
    let tmp = ws.home().parent().unwrap().join("tmpdir");
    std::fs::create_dir_all(&tmp).unwrap();
    tmp
}

/// The private folders in `tmp`, sorted.
fn folders(tmp: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(tmp)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(PREFIX))
        .map(|e| e.path())
        .collect();
    found.sort();
    found
}

/// A command no other run shares: `sleep` for a long time, with this process's id in it.
fn long_sleep(n: u32) -> String {
    format!("sleep {}{n}", std::process::id())
}

fn background(line: &str) -> (String, String, Value) {
    (
        "bg".into(),
        "run_command".into(),
        json!({"command": line, "background": true}),
    )
}

/// An agent in `ask` mode (commands run sandboxed) whose temp folder is `tmp`, with a session
/// open over the `small` fixture: the agent, its session and its editor.
async fn agent_in(
    ws: &Workspace,
    mock: &MockModel,
    tmp: &Path,
    caps: Value,
) -> (Agent, String, Arc<FakeEditor>) {
    let mut env = ws.env(mock);
    env.push(("TANDEM_MODE".into(), "ask".into()));
    env.push(("TMPDIR".into(), path_str(tmp)));
    let editor = FakeEditor::new();
    let mut agent = Agent::spawn_with(&env, &[], Some(editor.clone()));
    agent.initialize_with(caps).await;
    let session = agent.new_session(&ws.project()).await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    (agent, session, editor)
}

/// A workspace over the `small` fixture, a mock model with `script`, and the agent's own
/// temp folder.
async fn setup(script: Vec<Reply>) -> (Workspace, MockModel, PathBuf) {
    let ws = Workspace::new();
    copy_fixture("small", &ws.project());
    let mock = MockModel::start(script).await;
    let tmp = own_tmp(&ws);
    (ws, mock, tmp)
}

/// Waits until `path` is gone.
async fn gone(what: &str, path: &Path) {
    let start = Instant::now();
    while path.exists() {
        assert!(start.elapsed() < Duration::from_secs(20), "{what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// One prompt that runs a sandboxed command, which writes in its temp folder.
fn one_command() -> Vec<Reply> {
    vec![
        batch(&[command("c", "echo note > \"$TMPDIR/note\" && echo ran")]),
        Reply::text(&["done"]),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_close_removes_the_folder_before_it_answers() {
    if !sandbox_here() {
        return;
    }
    let (fg, bg) = (long_sleep(71), long_sleep(72));
    let script = vec![
        batch(&[command("c", "echo ran"), background(&bg)]),
        Reply::text(&["started"]),
        batch(&[command("slow", &fg)]),
    ];
    let (ws, mock, tmp) = setup(script).await;
    let (mut agent, session, _editor) = agent_in(&ws, &mock, &tmp, json!({})).await;
    agent.prompt(&session, "start").await;
    assert!(tool_result(&mock.requests()[1], "c").contains("ran"));
    assert_eq!(folders(&tmp).len(), 1, "one folder for the session");
    until("the background command runs", || running(&bg)).await;
    // Closed while a command runs in the foreground too.
    let pending = agent.start_prompt(&session, "slow").await;
    until("the foreground command runs", || running(&fg)).await;
    agent
        .request_ok("session/close", json!({"sessionId": session}))
        .await;
    assert_eq!(
        folders(&tmp),
        Vec::<PathBuf>::new(),
        "the folder is gone before the answer"
    );
    let prompt = response(pending).await;
    assert_eq!(prompt["result"]["stopReason"], "cancelled", "{prompt}");
    until("the commands are stopped", || {
        !running(&fg) && !running(&bg)
    })
    .await;
    agent.assert_valid();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_end_of_input_removes_the_folders() {
    if !sandbox_here() {
        return;
    }
    let bg = long_sleep(73);
    let script = vec![
        batch(&[command("c", "echo ran"), background(&bg)]),
        Reply::text(&["started"]),
    ];
    let (ws, mock, tmp) = setup(script).await;
    let (mut agent, session, _editor) = agent_in(&ws, &mock, &tmp, json!({})).await;
    agent.prompt(&session, "start").await;
    assert_eq!(folders(&tmp).len(), 1);
    until("the background command runs", || running(&bg)).await;
    let (status, stderr) = agent.shutdown().await;
    assert!(status.success(), "{status}\n{stderr}");
    assert_eq!(folders(&tmp), Vec::<PathBuf>::new(), "{stderr}");
    until("the background command is stopped", || !running(&bg)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_removes_the_folders() {
    if !sandbox_here() {
        return;
    }
    let bg = long_sleep(74);
    let script = vec![
        batch(&[command("c", "echo ran"), background(&bg)]),
        Reply::text(&["started"]),
    ];
    let (ws, mock, tmp) = setup(script).await;
    let (mut agent, session, _editor) = agent_in(&ws, &mock, &tmp, json!({})).await;
    agent.prompt(&session, "start").await;
    assert_eq!(folders(&tmp).len(), 1);
    until("the background command runs", || running(&bg)).await;
    let (_, stderr) = agent.stop_with(Signal::SIGTERM).await;
    assert_eq!(folders(&tmp), Vec::<PathBuf>::new(), "{stderr}");
    until("the background command is stopped", || !running(&bg)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tandem_exec_removes_its_folder_as_it_ends() {
    if !sandbox_here() {
        return;
    }
    let script = vec![batch(&[command("c", "echo ran")]), Reply::text(&["done"])];
    let (ws, mock, _) = setup(script).await;
    // The run takes the workspace (and removes it as it ends): the temp folder is apart.
    let own = tempfile::tempdir().unwrap();
    let tmp = own.path().to_path_buf();
    let config = ws.write(
        "config.toml",
        "[permissions]\nallow = [\"run_command(echo:*)\"]\n",
    );
    let mut env = ws.env(&mock);
    env.push(("TMPDIR".into(), path_str(&tmp)));
    env.push(("PATH".into(), std::env::var("PATH").unwrap()));
    let config = path_str(&config);
    let (code, _, stderr) = super::exec::exec_blocking(
        ws,
        env,
        &["--config", &config, "--mode", "ask", "run it"],
        None,
    )
    .await;
    assert_eq!(code, 0, "{stderr}");
    assert!(
        tool_result(&mock.requests()[1], "c").contains("ran"),
        "{stderr}"
    );
    assert_eq!(folders(&tmp), Vec::<PathBuf>::new(), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_tandems_folder_is_reclaimed_by_the_next_start() {
    if !sandbox_here() {
        return;
    }
    let (ws, mock, tmp) = setup(one_command()).await;
    let (mut agent, session, _) = agent_in(&ws, &mock, &tmp, json!({})).await;
    agent.prompt(&session, "run").await;
    let left = folders(&tmp);
    assert_eq!(left.len(), 1);
    agent.kill().await;
    assert_eq!(folders(&tmp), left, "a killed process removes nothing");
    // The next start reclaims it (its own first folder, the sandbox check's, sets it off).
    for reply in one_command() {
        mock.push(reply);
    }
    let (mut next, session, _) = agent_in(&ws, &mock, &tmp, json!({})).await;
    gone("the killed tandem's folder is reclaimed", &left[0]).await;
    // Its own folder is not another's to reclaim.
    next.prompt(&session, "run").await;
    assert!(tool_result(&mock.requests()[3], "c").contains("ran"));
    let own = folders(&tmp);
    assert_eq!(own.len(), 1);
    assert_ne!(own, left);
    let (_, stderr) = next.shutdown().await;
    assert_eq!(folders(&tmp), Vec::<PathBuf>::new(), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn five_killed_tandems_then_one_start_leave_none() {
    if !sandbox_here() {
        return;
    }
    let (ws, mock, tmp) = setup(Vec::new()).await;
    // All five at once (a tandem that starts after one was killed reclaims its folder).
    let mut five = Vec::new();
    for _ in 0..5 {
        for reply in one_command() {
            mock.push(reply);
        }
        let (mut agent, session, _) = agent_in(&ws, &mock, &tmp, json!({})).await;
        agent.prompt(&session, "run").await;
        five.push(agent);
    }
    for agent in five {
        agent.kill().await;
    }
    let left = folders(&tmp);
    assert_eq!(left.len(), 5, "{left:?}");
    let (next, _, _) = agent_in(&ws, &mock, &tmp, json!({})).await;
    for folder in &left {
        gone("every killed tandem's folder is reclaimed", folder).await;
    }
    next.shutdown().await;
    assert_eq!(folders(&tmp), Vec::<PathBuf>::new());
}

/// A folder as a tandem before the lock made it (no lock file, `0755`), last changed `age` ago.
fn old_folder(tmp: &Path, name: &str, age: Duration) -> PathBuf {
    let folder = tmp.join(format!("{PREFIX}{name}"));
    std::fs::create_dir_all(folder.join("tmp")).unwrap();
    std::fs::write(folder.join("policy.json"), "{}").unwrap();
    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o755)).unwrap();
    let then = SystemTime::now() - age;
    for changed in [folder.join("tmp"), folder.clone()] {
        std::fs::File::open(&changed)
            .unwrap()
            .set_modified(then)
            .unwrap();
    }
    folder
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn old_folders_go_when_stale_and_nothing_is_followed_or_taken_that_is_not_tandems() {
    if !sandbox_here() {
        return;
    }
    let (ws, mock, tmp) = setup(Vec::new()).await;
    let day = Duration::from_secs(24 * 60 * 60);
    // Outside the temp folder: what a link planted in a stale folder points at.
    let outside = ws.home().parent().unwrap().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("precious"), "keep me").unwrap();
    let stale = old_folder(&tmp, "stale", 2 * day);
    std::os::unix::fs::symlink(&outside, stale.join("tmp/link")).unwrap();
    std::os::unix::fs::symlink(outside.join("precious"), stale.join("tmp/file-link")).unwrap();
    // Set the times again: the links changed `tmp/`.
    let then = SystemTime::now() - 2 * day;
    std::fs::File::open(stale.join("tmp"))
        .unwrap()
        .set_modified(then)
        .unwrap();
    let fresh = old_folder(&tmp, "fresh", Duration::from_secs(60));
    // Not a private folder: writable by others, or a link to one.
    let open = old_folder(&tmp, "open", 2 * day);
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    let link = tmp.join(format!("{PREFIX}link"));
    std::os::unix::fs::symlink(&outside, &link).unwrap();
    let (agent, _, _) = agent_in(&ws, &mock, &tmp, json!({})).await;
    gone("a stale folder of an older tandem is reclaimed", &stale).await;
    agent.shutdown().await;
    assert_eq!(
        std::fs::read_to_string(outside.join("precious")).unwrap(),
        "keep me"
    );
    assert!(fresh.exists(), "an older tandem's folder in use stays");
    assert!(open.exists(), "a folder others may write is not tandem's");
    assert!(link.exists() && outside.exists(), "a link is not followed");
}

/// The folder's lock, by identity (device and inode).
fn lock_of(folder: &Path) -> (u64, u64) {
    let meta = std::fs::symlink_metadata(folder.join("lock")).unwrap();
    (meta.dev(), meta.ino())
}

/// What a command tries against its own folder `folder`: remove it, swap its lock.
fn attack(folder: &Path) -> Vec<Reply> {
    let f = folder.display();
    vec![
        batch(&[
            command("rm", &format!("rm -rf '{f}'; ls '{f}'")),
            command(
                "swap",
                &format!("mv '{f}/lock' '{f}/old'; rm -f '{f}/lock'; : > '{f}/lock'; ls -la '{f}'"),
            ),
        ]),
        Reply::text(&["tried"]),
    ]
}

/// Runs [`attack`] in a session whose temp folder is `tmp`, then starts a second tandem with
/// the same temp folder: the folder and its lock are what they were, and the second does not
/// reclaim it while the first runs.
async fn a_command_cannot_free_its_folder(ws: Workspace, mock: MockModel, tmp: PathBuf) {
    let (mut agent, session, _) = agent_in(&ws, &mock, &tmp, json!({})).await;
    agent.prompt(&session, "run").await;
    let made = folders(&tmp);
    assert_eq!(made.len(), 1);
    let folder = made[0].clone();
    let lock = lock_of(&folder);
    for reply in attack(&folder) {
        mock.push(reply);
    }
    agent.prompt(&session, "attack").await;
    let tried = &mock.requests()[3];
    assert!(
        folder.join("policy.json").exists(),
        "{}",
        tool_result(tried, "rm")
    );
    assert_eq!(lock_of(&folder), lock, "{}", tool_result(tried, "swap"));
    // A second tandem's reclaiming, on the same temp folder, leaves it alone.
    for reply in one_command() {
        mock.push(reply);
    }
    let (mut second, other, _) = agent_in(&ws, &mock, &tmp, json!({})).await;
    second.prompt(&other, "run").await;
    assert!(tool_result(&mock.requests()[5], "c").contains("ran"));
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(folder.join("lock").exists() && folder.join("policy.json").exists());
    second.shutdown().await;
    let (_, stderr) = agent.shutdown().await;
    assert_eq!(folders(&tmp), Vec::<PathBuf>::new(), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_cannot_remove_its_folder_or_swap_its_lock() {
    if !sandbox_here() {
        return;
    }
    let (ws, mock, tmp) = setup(one_command()).await;
    a_command_cannot_free_its_folder(ws, mock, tmp).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nor_when_its_temp_folder_is_in_the_workspace() {
    if !sandbox_here() {
        return;
    }
    let (ws, mock, _) = setup(one_command()).await;
    // Inside the project, which commands may write.
    let tmp = ws.project().join("scratch-tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    a_command_cannot_free_its_folder(ws, mock, tmp).await;
}
