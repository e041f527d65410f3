//! What tandem keeps is the user's alone, whatever the umask: under umask 022 the data
//! directory and `sessions/` are 0700, and transcripts, their side files, the wire trace and
//! the credentials file 0600. A data directory or file an older tandem (or the user) left
//! open to others is tightened when tandem opens it.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::json;

use crate::common::{Agent, MockModel, Reply, TEST_KEY, Workspace, listing_mock, path_str};

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o777
}

fn set_mode(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// The umask every process of this test makes its files under (the usual one, set in case
/// the runner's is stricter).
fn umask_022() {
    #[cfg(target_os = "linux")]
    nix::sys::stat::umask(nix::sys::stat::Mode::from_bits_truncate(0o022));
}

/// Every mode that must be private: (what, path, mode).
fn modes(ws: &Workspace, session: &str, trace: &Path) -> Vec<(String, u32)> {
    let data = ws.home().join("data");
    let sessions = data.join("sessions");
    [
        data.clone(),
        sessions.clone(),
        sessions.join(format!("{session}.jsonl")),
        sessions.join(format!("{session}.lock")),
        trace.to_path_buf(),
    ]
    .iter()
    .map(|p| (p.display().to_string(), mode(p)))
    .collect()
}

fn assert_private(modes: &[(String, u32)]) {
    let open: Vec<String> = modes
        .iter()
        .filter(|(path, mode)| {
            let want = if path.ends_with("data") || path.ends_with("sessions") {
                0o700
            } else {
                0o600
            };
            *mode != want
        })
        .map(|(path, mode)| format!("{path}: {mode:o}"))
        .collect();
    assert!(open.is_empty(), "open to other users: {open:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_data_directory_transcripts_and_trace_are_private_under_umask_022() {
    umask_022();
    let ws = Workspace::new();
    let mock = MockModel::start(vec![Reply::text(&["One."]), Reply::text(&["Two."])]).await;
    let trace = ws.home().join("wire.log");
    let mut env = ws.env(&mock);
    env.push(("TANDEM_TRACE_WIRE".into(), path_str(&trace)));
    let mut agent = Agent::spawn(&env, &[]);
    let session = agent.open_session(&ws.project()).await;
    let (r, _) = agent.prompt(&session, "hello").await;
    assert_eq!(r["result"]["stopReason"], "end_turn", "{r}");
    agent.shutdown().await;
    assert_private(&modes(&ws, &session, &trace));

    // Left open to others (an older tandem, a copy, a hand-made trace): tightened as tandem
    // opens them again, and the side file of a torn tail is made private too.
    let data = ws.home().join("data");
    let file = data.join(format!("sessions/{session}.jsonl"));
    set_mode(&data, 0o755);
    set_mode(&data.join("sessions"), 0o755);
    set_mode(&file, 0o644);
    set_mode(&trace, 0o644);
    set_mode(&data.join(format!("sessions/{session}.lock")), 0o644);
    let mut torn = std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .unwrap();
    std::io::Write::write_all(&mut torn, b"{\"v\":1,\"at\":\"x\",\"type\":\"ti").unwrap();
    let mut agent = Agent::spawn(&env, &[]);
    agent.initialize().await;
    assert_eq!(mode(&data), 0o700, "the data directory at start");
    assert_eq!(mode(&data.join("sessions")), 0o700);
    let listed = agent.request_ok("session/list", json!({})).await;
    assert_eq!(listed["sessions"][0]["sessionId"], session.as_str());
    assert_eq!(mode(&file), 0o600, "a listed transcript");
    agent
        .open_stored("session/load", &session, &ws.project())
        .await;
    let (r, _) = agent.prompt(&session, "again").await;
    assert_eq!(r["result"]["stopReason"], "end_turn", "{r}");
    agent.shutdown().await;
    assert_private(&modes(&ws, &session, &trace));
    assert_eq!(
        mode(&data.join(format!("sessions/{session}.jsonl.torn"))),
        0o600
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_credentials_file_left_open_to_others_is_tightened_when_tandem_reads_it() {
    umask_022();
    let mock = listing_mock(vec![Reply::text(&["hello"])]).await;
    let ws = Workspace::new();
    let mut env = ws.base_env();
    env.push(("TANDEM_CREDENTIAL_STORE".into(), "file".into()));
    let config = ws.home().join(".config/tandem");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("config.toml"),
        format!(
            "provider = \"openai\"\nbase_url = \"{}\"\nmodel = \"mock-model\"\n",
            mock.base_url
        ),
    )
    .unwrap();
    let stored = config.join("credentials.toml");
    std::fs::write(
        &stored,
        format!("[keys]\n\"{}\" = \"{TEST_KEY}\"\n", mock.base_url),
    )
    .unwrap();
    set_mode(&stored, 0o644);

    let mut agent = Agent::spawn(&env, &[]);
    let session = agent.open_session(&ws.project()).await;
    let (r, _) = agent.prompt(&session, "hi").await;
    assert_eq!(r["result"]["stopReason"], "end_turn", "{r}");
    assert_eq!(
        mock.requests().last().unwrap().authorization().as_deref(),
        Some(format!("Bearer {TEST_KEY}").as_str()),
        "the stored key was used"
    );
    agent.shutdown().await;
    assert_eq!(mode(&stored), 0o600, "the credentials file");
}
