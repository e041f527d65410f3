//! @-mentions sent as links (`resource_link`: Zed for folders, agent-shell for large files,
//! clients without `embeddedContext` for all) and files sent as base64 blobs with a text
//! type (toad): the model reads the content, not a bare link.

use serde_json::{Value, json};

use crate::common::{Agent, MockModel, Reply, Workspace, copy_fixture};

fn link(path: &std::path::Path, name: &str) -> Value {
    let uri = url_of(path);
    json!({"type": "resource_link", "name": name, "uri": uri})
}

fn url_of(path: &std::path::Path) -> String {
    format!("file://{}", path.display())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn linked_files_and_folders_in_the_workspace_become_context() {
    let ws = Workspace::new();
    copy_fixture("small", &ws.project());
    let project = ws.project();
    std::fs::write(project.join("big.txt"), "line of text\n".repeat(10_000)).unwrap();
    let outside = ws.write("elsewhere/secret.txt", "not for the prompt");
    let mock = MockModel::start(vec![Reply::text(&["ok"])]).await;
    let mut agent = Agent::spawn(&ws.env(&mock), &[]);
    let session = agent.open_session(&project).await;
    let blob = json!({"type": "resource", "resource": {
        "uri": "file:///somewhere/notes.md", "mimeType": "text/markdown",
        "blob": "IyBOb3RlcwpibG9iLWJvZHk="}});
    let prompt = json!([
        {"type": "text", "text": "look"},
        link(&project.join("README.md"), "README.md"),
        link(&project.join("src"), "src"),
        link(&project.join("big.txt"), "big.txt"),
        link(&outside, "secret.txt"),
        {"type": "resource_link", "name": "docs", "uri": "https://example.com/docs"},
        blob,
    ]);
    let response = agent
        .request(
            "session/prompt",
            json!({"sessionId": session, "prompt": prompt}),
        )
        .await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let said = mock.requests()[0].last_user_text();
    let readme = std::fs::read_to_string(project.join("README.md")).unwrap();
    assert!(
        said.contains(&format!(
            "<context uri=\"{}\">\n{}",
            url_of(&project.join("README.md")),
            readme.trim_end()
        )),
        "a small file is embedded: {said}"
    );
    assert!(
        said.contains("kind=\"folder\">\nlib.rs\nmain.rs\n</context>"),
        "a folder is listed: {said}"
    );
    assert!(
        said.contains("cut at 65536 of 130000 bytes"),
        "a big file is cut with a note"
    );
    assert!(said.len() < 80_000, "{} bytes", said.len());
    assert!(
        !said.contains("not for the prompt"),
        "outside the workspace: only a link"
    );
    assert!(said.contains("[Referenced: secret.txt]"));
    assert!(said.contains("[Referenced: docs](https://example.com/docs)"));
    assert!(
        said.contains("# Notes\nblob-body"),
        "a text blob is decoded: {said}"
    );
}
