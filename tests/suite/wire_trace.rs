//! `--trace-wire FILE` / `TANDEM_TRACE_WIRE` records the protocol as it crossed stdin and
//! stdout, timed and redacted, for bug reports; and no log level writes giant lines.

use crate::common::{Agent, MockModel, Reply, TEST_KEY, Workspace, path_str};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_wire_is_traced_redacted_and_logs_stay_proportionate() {
    let mock = MockModel::start(vec![Reply::text(&[&format!("your key is {TEST_KEY}")])]).await;
    let ws = Workspace::new();
    let trace = ws.home().join("wire.log");
    let mut env = ws.env(&mock);
    env.push(("RUST_LOG".into(), "trace".into()));
    for (flag, by_env) in [(true, false), (false, true)] {
        let _ = std::fs::remove_file(&trace);
        let mut env = env.clone();
        let mut args = Vec::new();
        let path = path_str(&trace);
        if flag {
            args = vec!["--trace-wire", path.as_str()];
        }
        if by_env {
            env.push(("TANDEM_TRACE_WIRE".into(), path.clone()));
            mock.push(Reply::text(&["again"]));
        }
        let mut agent = Agent::spawn(&env, &args);
        let session = agent.open_session(&ws.project()).await;
        let (response, _) = agent.prompt(&session, &"long prompt ".repeat(2_000)).await;
        assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
        let stderr = agent.stderr();
        let (status, _) = agent.shutdown().await;
        assert!(status.success());
        let text = std::fs::read_to_string(&trace).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines[0].contains(" <- ") && lines[0].contains("\"initialize\""),
            "{}",
            lines[0]
        );
        assert!(
            lines
                .iter()
                .any(|l| l.contains(" -> ") && l.contains("protocolVersion"))
        );
        assert!(
            lines
                .iter()
                .any(|l| l.contains(" <- ") && l.contains("session/prompt"))
        );
        assert!(
            lines
                .iter()
                .any(|l| l.contains("\"stopReason\":\"end_turn\""))
        );
        assert!(
            lines
                .iter()
                .all(|l| l.get(..4).is_some_and(|y| y.starts_with("20"))),
            "timed"
        );
        assert!(!text.contains(TEST_KEY), "redacted");
        let longest = stderr.lines().map(str::len).max().unwrap_or(0);
        assert!(
            longest < 4_200,
            "a {longest}-byte log line at RUST_LOG=trace"
        );
    }
}
