//! What a sandboxed command can reach beyond files (Linux): Unix sockets only of the
//! workspace's own and those the user's config names, whatever the path; tandem's own binary
//! wherever it is installed, `/tmp` included.

use std::os::unix::net::UnixListener;
use std::path::PathBuf;

use serde_json::json;

use crate::common::calls::{batch, command, tool_result};
use crate::common::{Reply, session_with_env};
use crate::suite::sandbox::sandbox_here;

/// Where Docker Desktop, Docker's rootless mode, Colima and Rancher Desktop put their
/// daemon's socket under the home folder.
const DAEMON_SOCKETS: [&str; 4] = [
    ".docker/desktop/docker.sock",
    ".docker/run/docker.sock",
    ".colima/default/docker.sock",
    ".rd/docker.sock",
];

/// A fake home outside `/tmp` (the sandbox covers `/tmp` with a private folder, which would
/// hide the sockets for another reason), with a listening stand-in at each daemon socket.
fn home_with_daemons() -> (tempfile::TempDir, Vec<UnixListener>) {
    let home = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let listeners = DAEMON_SOCKETS
        .iter()
        .map(|relative| {
            let path = home.path().join(relative);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            let listener = UnixListener::bind(&path).unwrap();
            listener.set_nonblocking(true).unwrap();
            listener
        })
        .collect();
    (home, listeners)
}

/// A Python line that tries to connect to each of `paths` and prints what happened.
fn connect_each(paths: &[PathBuf]) -> String {
    let list: Vec<String> = paths
        .iter()
        .map(|p| format!("{:?}", p.display().to_string()))
        .collect();
    format!(
        "python3 -c 'import socket\nfor p in [{}]:\n  s = socket.socket(socket.AF_UNIX)\n  try:\n    s.connect(p); print(\"CONNECTED\", p)\n  except OSError as e: print(\"refused\", p, e.errno)'",
        list.join(", ")
    )
}

/// Whether any of `listeners` was connected to.
fn any_connected(listeners: &[UnixListener]) -> bool {
    listeners.iter().any(|l| l.accept().is_ok())
}

#[test]
fn daemon_sockets_under_the_home_folder_cannot_be_reached() {
    if !sandbox_here() {
        return;
    }
    let (home, listeners) = home_with_daemons();
    let work = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let temp = work.path().join("tmp");
    std::fs::create_dir(&temp).unwrap();
    let ws = work.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    let policy = json!({
        "writable": [ws], "readOnly": [], "hidden": [], "network": false, "temp": temp
    })
    .to_string();
    let paths: Vec<PathBuf> = DAEMON_SOCKETS.iter().map(|r| home.path().join(r)).collect();
    // Through a link the command plants in the workspace, too.
    let planted = format!("ln -s {} ws-link.sock", paths[0].display());
    let line = format!(
        "{planted}; {}",
        connect_each(&[paths.clone(), vec![ws.join("ws-link.sock")]].concat())
    );
    let out = std::process::Command::new(crate::common::tandem_bin())
        .args(["sandbox", "--policy", &policy, "--", "sh", "-c", &line])
        .current_dir(&ws)
        .env("HOME", home.path())
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!said.contains("CONNECTED"), "{said}");
    assert_eq!(said.matches("refused /").count(), 5, "{said}");
    assert!(
        said.contains("add it to `unix_sockets` under [sandbox]"),
        "{said}"
    );
    assert!(
        !any_connected(&listeners),
        "a daemon's socket was connected to"
    );
}

#[test]
fn the_workspaces_own_sockets_still_work() {
    if !sandbox_here() {
        return;
    }
    let work = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let temp = work.path().join("tmp");
    std::fs::create_dir(&temp).unwrap();
    let policy = json!({
        "writable": [work.path()], "readOnly": [], "hidden": [], "network": false, "temp": temp
    })
    .to_string();
    // A server and its client in the workspace, by absolute and relative path, in $TMPDIR,
    // and an abstract socket (private to the sandbox's network namespace).
    let script = r#"
import os, socket
def pair(addr, show):
    l = socket.socket(socket.AF_UNIX); l.bind(addr); l.listen()
    c = socket.socket(socket.AF_UNIX); c.connect(addr)
    a, _ = l.accept(); c.send(b"ok"); print(show, a.recv(2).decode())
    return l
kept = pair(os.path.abspath("srv.sock"), "absolute")
c = socket.socket(socket.AF_UNIX); c.connect("srv.sock"); print("relative ok")
pair(os.path.join(os.environ["TMPDIR"], "t.sock"), "tmpdir")
pair("\0tandem-test-abstract", "abstract")
a, b = socket.socketpair(); a.send(b"ok"); print("pair", b.recv(2).decode())
"#;
    let out = std::process::Command::new(crate::common::tandem_bin())
        .args([
            "sandbox", "--policy", &policy, "--", "python3", "-c", script,
        ])
        .current_dir(work.path())
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    for line in [
        "absolute ok",
        "relative ok",
        "tmpdir ok",
        "abstract ok",
        "pair ok",
    ] {
        assert!(said.contains(line), "{line}: {said}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_socket_the_config_names_is_reached_and_no_other() {
    if !sandbox_here() {
        return;
    }
    let (home, listeners) = home_with_daemons();
    let allowed = home.path().join(DAEMON_SOCKETS[1]);
    let denied = home.path().join(DAEMON_SOCKETS[0]);
    let line = connect_each(&[allowed.clone(), denied.clone()]);
    let script = vec![batch(&[command("c", &line)]), Reply::text(&["done"])];
    let config = format!("[sandbox]\nunix_sockets = [\"{}\"]\n", allowed.display());
    let (mock, _ws, mut agent, session, _editor) =
        session_with_env("small", script, json!({}), "ask", move |ws| {
            ws.write("home/.config/tandem/config.toml", &config);
            Vec::new()
        })
        .await;
    agent.prompt(&session, "connect").await;
    let result = tool_result(&mock.requests()[1], "c");
    assert!(
        result.contains(&format!("CONNECTED {}", allowed.display())),
        "{result}"
    );
    assert!(
        result.contains(&format!("refused {} 13", denied.display())),
        "{result}"
    );
    assert!(
        listeners[1].accept().is_ok(),
        "the allowed socket saw no connection"
    );
    assert!(
        listeners[0].accept().is_err(),
        "the other socket was connected to"
    );
}

/// A copy of tandem's binary in a clone-like folder under `/tmp`.
fn binary_under_tmp() -> (tempfile::TempDir, PathBuf) {
    let clone = tempfile::Builder::new()
        .prefix("tandem-clone-")
        .tempdir_in("/tmp")
        .unwrap();
    let bin = clone.path().join("target/debug/tandem");
    std::fs::create_dir_all(bin.parent().unwrap()).unwrap();
    std::fs::copy(crate::common::tandem_bin(), &bin).unwrap();
    (clone, bin)
}

#[test]
fn tandem_installed_under_tmp_still_sandboxes_its_commands() {
    if !sandbox_here() {
        return;
    }
    let (_clone, bin) = binary_under_tmp();
    let work = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let temp = work.path().join("tmp");
    std::fs::create_dir(&temp).unwrap();
    let policy = json!({
        "writable": [], "readOnly": [], "hidden": [], "network": false, "temp": temp
    })
    .to_string();
    // The self-check's own form: tandem's binary run inside its sandbox.
    let out = std::process::Command::new(&bin)
        .args(["sandbox", "--policy", &policy, "--"])
        .arg(&bin)
        .arg("--version")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    // Read-only there: a command cannot change the binary the next command runs in.
    let out = std::process::Command::new(&bin)
        .args(["sandbox", "--policy", &policy, "--", "sh", "-c"])
        .arg(format!("echo x >> {}", bin.display()))
        .output()
        .unwrap();
    assert!(!out.status.success(), "{out:?}");
    // And doctor, run from there, finds the sandbox in force.
    let ws = crate::common::Workspace::new();
    let mut env = ws.base_env();
    env.push(("PATH".into(), std::env::var("PATH").unwrap()));
    let doctor = std::process::Command::new(&bin)
        .args(["doctor", "--replay", "/nonexistent/replay.json"])
        .envs(env)
        .current_dir(ws.project())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&doctor.stdout);
    assert!(said.contains("✓ commands run in a sandbox"), "{said}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_editor_is_told_at_once_when_commands_cannot_be_sandboxed_and_why() {
    if !sandbox_here() {
        return;
    }
    // A temp folder that does not exist: the sandbox's private folder cannot be made.
    let script = vec![batch(&[command("c", "echo ran")]), Reply::text(&["done"])];
    let (mock, _ws, mut agent, session, _editor) =
        session_with_env("small", script, json!({}), "ask", |_| {
            vec![("TMPDIR".into(), "/nonexistent/tandem-test-tmp".into())]
        })
        .await;
    let mut told = None;
    while told.is_none() {
        let message = agent.next_message().await;
        let update = &message["params"]["update"];
        if message["params"]["sessionId"] == session.as_str()
            && update
                .to_string()
                .contains("Commands are not sandboxed here")
        {
            told = Some(update.clone());
        }
    }
    let told = told.unwrap().to_string();
    assert!(told.contains("cannot make"), "{told}");
    assert!(told.contains("To fix it"), "{told}");
    // Told once: the first command's card does not say it again.
    let (_, updates) = agent.prompt(&session, "run it").await;
    assert!(tool_result(&mock.requests()[1], "c").contains("ran"));
    let shown = serde_json::to_string(&updates).unwrap();
    assert!(
        !shown.contains("Commands are not sandboxed here"),
        "{shown}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_nested_repository_can_be_planted_or_changed_in_the_workspace() {
    if !sandbox_here() {
        return;
    }
    let plant = "git init -q vendor/new; git -C vendor/new config core.fsmonitor \"touch $PWD/PLANTED\"; \
                 mkdir -p v2; echo 'gitdir: ../vendor/lib/.git' > v2/.git; \
                 git -C vendor/lib config core.fsmonitor \"touch $PWD/CHANGED\"; \
                 mkdir -p \"$TMPDIR/r\" && git init -q \"$TMPDIR/r\" && echo temp-repo-ok";
    let script = vec![batch(&[command("plant", plant)]), Reply::text(&["done"])];
    let (mock, ws, mut agent, session, _editor) =
        session_with_env("small", script, json!({}), "ask", |ws| {
            // A vendored clone that was there before the session.
            let lib = ws.project().join("vendor/lib");
            std::fs::create_dir_all(&lib).unwrap();
            let made = std::process::Command::new("git")
                .args(["init", "-q"])
                .current_dir(&lib)
                .status()
                .unwrap();
            assert!(made.success());
            Vec::new()
        })
        .await;
    agent.prompt(&session, "plant").await;
    let result = tool_result(&mock.requests()[1], "plant");
    assert!(result.contains("temp-repo-ok"), "{result}");
    assert!(result.contains("refused making"), "{result}");
    // What an editor's git does next, outside any sandbox.
    for folder in ["vendor/new", "vendor/lib", "v2"] {
        let _ = std::process::Command::new("git")
            .args(["status", "--short"])
            .current_dir(ws.project().join(folder))
            .output();
    }
    assert!(!ws.project().join("PLANTED").exists(), "{result}");
    assert!(!ws.project().join("CHANGED").exists(), "{result}");
    assert!(!ws.project().join("vendor/new/.git").exists(), "{result}");
    assert!(!ws.project().join("v2/.git").exists(), "{result}");
}

/// The review's bypasses, each closed: a `.git` made through a dangling link, a folder with a
/// `.git` swapped in by `renameat2(RENAME_EXCHANGE)` from another writable folder on the same
/// disk, a `SOCK_RAW` Unix socket (which the kernel makes a datagram one) sending to a socket
/// outside; and what a command's other threads name still works.
#[test]
fn links_exchanges_and_raw_sockets_plant_nothing_and_reach_nothing() {
    if !sandbox_here() {
        return;
    }
    let work = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let (ws, extra, temp) = (
        work.path().join("ws"),
        work.path().join("extra"),
        work.path().join("t"),
    );
    for folder in [&ws, &extra, &temp] {
        std::fs::create_dir(folder).unwrap();
    }
    let outside = work.path().join("outside.sock");
    let datagrams = std::os::unix::net::UnixDatagram::bind(&outside).unwrap();
    datagrams.set_nonblocking(true).unwrap();
    let policy = json!({
        "writable": [ws, extra], "readOnly": [], "hidden": [], "network": false, "temp": temp,
        "noRepositories": [ws]
    })
    .to_string();
    let script = format!(
        r#"
import ctypes, os, socket, threading
libc = ctypes.CDLL(None, use_errno=True)
os.chdir({ws:?})
os.symlink(".git", "lnk")
try:
    open("lnk", "w").write("gitdir: elsewhere\n"); print("MADE-THROUGH-LINK")
except OSError as e: print("link refused", e.errno)
open("real", "w").write("a"); os.symlink("real", "to-real"); open("to-real", "a").write("b")
print("through a link to a file:", open("real").read())
os.makedirs({extra:?} + "/evil/.git"); os.mkdir("a")
r = libc.syscall(316, -100, b"a", -100, ({extra:?} + "/evil").encode(), 2)
print("exchange", r, ctypes.get_errno())
try:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_RAW); s.sendto(b"x", {outside:?}); print("SENT-RAW")
except OSError as e: print("raw refused", e.errno)
def work():
    fd = os.open("from-thread", os.O_CREAT | os.O_WRONLY, 0o600); os.close(fd)
    os.mkdir("dir-from-thread"); print("thread ok")
t = threading.Thread(target=work); t.start(); t.join()
"#,
        ws = ws.display().to_string(),
        extra = extra.display().to_string(),
        outside = outside.display().to_string(),
    );
    let out = std::process::Command::new(crate::common::tandem_bin())
        .args([
            "sandbox", "--policy", &policy, "--", "python3", "-c", &script,
        ])
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(said.contains("link refused 1"), "{said}");
    assert!(said.contains("through a link to a file: ab"), "{said}");
    assert!(said.contains("exchange -1 18"), "{said}");
    assert!(said.contains("raw refused 1"), "{said}");
    assert!(said.contains("thread ok"), "{said}");
    assert!(
        !ws.join(".git").exists() && !ws.join("a/.git").exists(),
        "{said}"
    );
    let mut buffer = [0u8; 8];
    assert!(
        datagrams.recv(&mut buffer).is_err(),
        "a datagram got out: {said}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_loads_in_a_second_process_when_commands_cannot_be_sandboxed() {
    if !sandbox_here() {
        return;
    }
    let unavailable = (
        "TMPDIR".to_string(),
        "/nonexistent/tandem-test-tmp".to_string(),
    );
    let first = unavailable.clone();
    let (_mock, ws, mut agent, session, _editor) = session_with_env(
        "small",
        vec![Reply::text(&["first answer"])],
        json!({}),
        "ask",
        |_| vec![first],
    )
    .await;
    let (response, _) = agent.prompt(&session, "first question").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let mut env = ws.base_env();
    env.push(unavailable);
    agent.shutdown().await;
    let replay = crate::common::path_str(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/demo/hello.json"),
    );
    let mut second = crate::common::acp_client::Agent::spawn(&env, &["--replay", &replay]);
    second.initialize().await;
    let (result, mut updates) = second
        .open_stored("session/load", &session, &ws.project())
        .await;
    assert!(result.get("modes").is_some(), "{result}");
    // The loaded session is told live too, before or after the commands update.
    let told = |updates: &[serde_json::Value]| {
        updates
            .iter()
            .any(|u| u.to_string().contains("Commands are not sandboxed here"))
    };
    while !told(&updates) {
        updates.push(second.next_message().await);
    }
    second.assert_valid();
}
