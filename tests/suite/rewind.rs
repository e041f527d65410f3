//! Taking turns back over real stdio (issue 37), where it crosses the process boundary:
//! `/undo`, `/rewind N` and `_tandem/session/rewind` put the conversation and the files back
//! through the editor's `fs/write_text_file`, byte for byte; a rewind is a record a reload in
//! a second process reads, and a later rewind goes past it; a fork can stop at a turn. What a
//! rewind does to each file (changed by hand, deleted or moved by a patch, a link or a FIFO
//! in its place) is tested in process, in crates/core/src/turn/rewind/tests.rs.

use serde_json::{Value, json};

use crate::common::editor::{Answer, full_caps};
use crate::common::mock_model::user_texts;
use crate::common::{Agent, Reply, Workspace, path_str};

/// A session in `accept-edits` on `model` whose editor has `caps`, in a project that also
/// holds `files` (name, text).
async fn session(
    script: Vec<Reply>,
    caps: Value,
    model: &str,
    files: &[(&str, &str)],
) -> crate::common::EditorSession {
    let files: Vec<(String, String)> = files
        .iter()
        .map(|(name, text)| (format!("project/{name}"), text.to_string()))
        .collect();
    let model = model.to_string();
    crate::common::session_with_env("small", script, caps, "accept-edits", move |ws| {
        for (name, text) in &files {
            ws.write(name, text);
        }
        vec![("TANDEM_MODEL".into(), model)]
    })
    .await
}

fn edit(id: &str, path: &str, old: &str, new: &str) -> Reply {
    Reply::tools(&[(
        id,
        "edit_file",
        json!({"path": path, "old_string": old, "new_string": new}),
    )])
}

fn write(id: &str, path: &str, content: &str) -> Reply {
    Reply::tools(&[(id, "write_file", json!({"path": path, "content": content}))])
}

/// The text a slash command answered with.
async fn slash(agent: &mut Agent, session: &str, line: &str) -> String {
    let (response, updates) = agent.prompt(session, line).await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    crate::common::joined(&updates, "agent_message_chunk")
}

fn bytes(ws: &Workspace, name: &str) -> Option<Vec<u8>> {
    std::fs::read(ws.project().join(name)).ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undo_and_rewind_through_the_editor_put_files_back_byte_for_byte() {
    let script = vec![
        edit("e1", "notes.txt", "two", "deux"),
        Reply::text(&["one done"]),
        write("w1", "made.txt", "made\n"),
        Reply::text(&["two done"]),
        Reply::tools(&[
            (
                "e2",
                "edit_file",
                json!({"path": "notes.txt", "old_string": "one", "new_string": "uno"}),
            ),
            (
                "c1",
                "run_command",
                json!({"command": "echo ran > ran.txt"}),
            ),
        ]),
        Reply::text(&["three done"]),
        Reply::text(&["fresh answer"]),
    ];
    let (mock, ws, mut agent, id, editor) = session(
        script,
        full_caps(),
        "mock-model",
        &[("notes.txt", "\u{feff}one\r\ntwo\r\n")],
    )
    .await;
    for prompt in ["translate two", "make a file", "translate one and run"] {
        let (r, _) = agent.prompt(&id, prompt).await;
        assert_eq!(r["result"]["stopReason"], "end_turn", "{r}");
    }
    assert_eq!(
        bytes(&ws, "notes.txt").unwrap(),
        "\u{feff}uno\r\ndeux\r\n".as_bytes()
    );
    assert!(bytes(&ws, "ran.txt").is_some());

    let listed = slash(&mut agent, &id, "/rewind").await;
    assert!(
        listed.contains("3. translate one and run — changed notes.txt; ran 1 command(s)"),
        "{listed}"
    );
    assert!(
        listed.contains("2. make a file — created made.txt"),
        "{listed}"
    );

    let writes_before = editor.params_of("fs/write_text_file").len();
    let undone = slash(&mut agent, &id, "/undo").await;
    assert!(undone.contains("Went back to before turn 3"), "{undone}");
    assert!(
        undone.contains("notes.txt: put back (through the editor)"),
        "{undone}"
    );
    assert!(
        undone.contains("`echo ran > ran.txt`"),
        "commands are named: {undone}"
    );
    assert_eq!(
        bytes(&ws, "notes.txt").unwrap(),
        "\u{feff}one\r\ndeux\r\n".as_bytes(),
        "the byte order mark and CRLF are kept"
    );
    let writes = editor.params_of("fs/write_text_file");
    assert_eq!(
        writes.len(),
        writes_before + 1,
        "the restore went through the editor"
    );
    assert_eq!(
        writes.last().unwrap()["path"],
        path_str(&ws.project().join("notes.txt"))
    );
    assert!(bytes(&ws, "ran.txt").is_some(), "a command's effects stay");

    let rewound = agent
        .request_ok(
            "_tandem/session/rewind",
            json!({"sessionId": id, "turn": 1}),
        )
        .await;
    assert_eq!(rewound["rewound"], true);
    assert_eq!(rewound["takenBack"].as_array().unwrap().len(), 2);
    let outcome = |name: &str| {
        rewound["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["path"] == path_str(&ws.project().join(name)))
            .map(|f| f["outcome"].as_str().unwrap().to_string())
    };
    assert_eq!(
        outcome("notes.txt").as_deref(),
        Some("restored"),
        "{rewound}"
    );
    assert_eq!(outcome("made.txt").as_deref(), Some("removed"), "{rewound}");
    assert_eq!(rewound["turns"], json!([]));
    assert_eq!(
        bytes(&ws, "notes.txt").unwrap(),
        "\u{feff}one\r\ntwo\r\n".as_bytes()
    );
    assert!(
        bytes(&ws, "made.txt").is_none(),
        "the file tandem created is gone"
    );

    agent.prompt(&id, "fresh start").await;
    let last = mock.requests().pop().unwrap();
    assert_eq!(
        user_texts(&last.body),
        ["fresh start"],
        "the model no longer sees the turns taken back"
    );
    agent.assert_valid();
}
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rewind_is_kept_across_a_reload_and_a_later_rewind_goes_past_it() {
    let script = vec![
        write("w1", "a.txt", "1\n"),
        Reply::text(&["one"]),
        edit("e1", "a.txt", "1", "2"),
        Reply::text(&["two"]),
        edit("e2", "a.txt", "2", "3"),
        Reply::text(&["three"]),
        edit("e3", "a.txt", "2", "4"),
        Reply::text(&["three again"]),
        Reply::text(&["after the reload"]),
    ];
    let (mock, ws, mut agent, id, _editor) = session(script, json!({}), "mock-model", &[]).await;
    for prompt in ["first", "second", "third"] {
        agent.prompt(&id, prompt).await;
    }
    slash(&mut agent, &id, "/rewind 3").await;
    assert_eq!(
        std::fs::read_to_string(ws.project().join("a.txt")).unwrap(),
        "2\n"
    );
    agent.prompt(&id, "third, differently").await;
    assert_eq!(
        std::fs::read_to_string(ws.project().join("a.txt")).unwrap(),
        "4\n"
    );
    agent.shutdown().await;

    // A new process: the load shows the conversation as it stands.
    let mut agent = Agent::spawn(&ws.env(&mock), &[]);
    agent.initialize().await;
    let (_, replayed) = agent.open_stored("session/load", &id, &ws.project()).await;
    let prompts: Vec<String> = replayed
        .iter()
        .filter(|u| u["params"]["update"]["sessionUpdate"] == "user_message_chunk")
        .map(|u| {
            u["params"]["update"]["content"]["text"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(prompts, ["first", "second", "third, differently"]);
    agent.prompt(&id, "go on").await;
    let last = mock.requests().pop().unwrap();
    assert_eq!(
        user_texts(&last.body),
        ["first", "second", "third, differently", "go on"]
    );

    // Past the earlier rewind: back to before turn two.
    let said = slash(&mut agent, &id, "/rewind 2").await;
    assert!(
        said.contains("3 turns are out of the conversation"),
        "{said}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.project().join("a.txt")).unwrap(),
        "1\n"
    );
    let said = slash(&mut agent, &id, "/undo").await;
    assert!(said.contains("a.txt: removed from the disk"), "{said}");
    assert!(bytes(&ws, "a.txt").is_none());
    let said = slash(&mut agent, &id, "/undo").await;
    assert!(said.contains("nothing to rewind"), "{said}");
    let r = agent
        .request(
            "_tandem/session/rewind",
            json!({"sessionId": id, "turn": 4}),
        )
        .await;
    crate::common::acp_client::assert_error(&r, -32602, "no turn");
    agent.assert_valid();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fork_at_a_turn_copies_the_conversation_up_to_it_and_touches_no_file() {
    let script = vec![
        write("w1", "a.txt", "1\n"),
        Reply::text(&["one"]),
        edit("e1", "a.txt", "1", "2"),
        Reply::text(&["two"]),
        Reply::text(&["in the fork"]),
    ];
    let (mock, ws, mut agent, id, _editor) = session(script, json!({}), "mock-model", &[]).await;
    agent.prompt(&id, "first").await;
    agent.prompt(&id, "second").await;
    let forked = agent
        .request_ok("_tandem/session/fork", json!({"sessionId": id, "turn": 2}))
        .await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        std::fs::read_to_string(ws.project().join("a.txt")).unwrap(),
        "2\n"
    );
    agent.prompt(&forked, "in the fork").await;
    let last = mock.requests().pop().unwrap();
    assert_eq!(user_texts(&last.body), ["first", "in the fork"]);
    let r = agent
        .request("_tandem/session/fork", json!({"sessionId": id, "turn": 9}))
        .await;
    crate::common::acp_client::assert_error(&r, -32602, "no turn 9");
    agent.assert_valid();
}
/// A fork working in another folder owns its copy of the conversation, not the files of the
/// source's workspace: a rewind there never writes them unasked, and a fork at a turn does
/// not own the source's later turns at all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fork_elsewhere_never_rewinds_the_sources_files_unasked() {
    let script = vec![
        write("w1", "a.txt", "1\n"),
        Reply::text(&["one"]),
        edit("e1", "a.txt", "1", "2"),
        Reply::text(&["two"]),
    ];
    let (_mock, ws, mut agent, id, editor) = session(script, json!({}), "mock-model", &[]).await;
    agent.prompt(&id, "first").await;
    agent.prompt(&id, "second").await;
    let elsewhere = ws.write("elsewhere/keep", "");
    let cwd = path_str(elsewhere.parent().unwrap());
    let fork = |turn: Option<usize>| {
        let mut params = json!({"sessionId": id, "cwd": cwd});
        if let Some(turn) = turn {
            params["turn"] = json!(turn);
        }
        params
    };
    let whole = agent.request_ok("_tandem/session/fork", fork(None)).await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let r = agent
        .request_ok(
            "_tandem/session/rewind",
            json!({"sessionId": whole, "turn": 1, "conflicts": "overwrite"}),
        )
        .await;
    assert_eq!(r["files"][0]["outcome"], "failed", "{r}");
    assert!(
        r["files"][0]["detail"]
            .as_str()
            .unwrap()
            .contains("outside this session's folders")
    );
    assert_eq!(
        std::fs::read_to_string(ws.project().join("a.txt")).unwrap(),
        "2\n"
    );

    // At turn 2: the source's second turn is not the fork's, so a.txt no longer holds what
    // the fork's tandem wrote, and asking is the only way.
    let at_two = agent
        .request_ok("_tandem/session/fork", fork(Some(2)))
        .await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    editor.answer_with(&[Answer::Select("reject_once")]);
    let r = agent
        .request_ok(
            "_tandem/session/rewind",
            json!({"sessionId": at_two, "turn": 1}),
        )
        .await;
    assert_eq!(r["files"][0]["outcome"], "kept", "{r}");
    assert_eq!(
        std::fs::read_to_string(ws.project().join("a.txt")).unwrap(),
        "2\n"
    );
    agent.assert_valid();
}
