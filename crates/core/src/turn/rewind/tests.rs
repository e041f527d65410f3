//! Taking turns back, in process, over the fakes: what a rewind does to each file — through
//! the editor's buffers or on the disk, a file changed by hand, files a patch deleted or
//! moved, a link or a FIFO put in a file's place — and what its report says. What crosses
//! the process boundary (the editor's `fs/write_text_file`, a reload in a second process,
//! `_tandem/session/rewind` and forks) stays in tests/suite/rewind.rs.

use std::path::{Path, PathBuf};

use serde_json::json;

use super::{Back, Conflicts, FileResult};
use crate::model::Message;
use crate::testkit::{FakeEditor, Reply, Session};
use crate::types::{PermissionAnswer, StopReason, ToolContent, UserPart};

fn write(id: &str, path: &str, content: &str) -> Reply {
    Reply::calls(&[(id, "write_file", json!({"path": path, "content": content}))])
}

/// The text a slash command answered with (the report of a rewind).
async fn slash(s: &Session, line: &str) -> String {
    let before = s.events.text().len();
    assert_eq!(s.prompt(line).await.unwrap(), StopReason::EndTurn);
    s.events.text()[before..].to_string()
}

/// A session in `accept-edits` whose editor has no file access (tandem writes the disk), in
/// a project holding `files` (name, text), answering questions with `answers`.
async fn on_disk(
    replies: Vec<Reply>,
    answers: &[PermissionAnswer],
    files: &[(&str, &str)],
    vars: &[(&str, &str)],
) -> Session {
    let mut vars = vars.to_vec();
    vars.push(("TANDEM_MODE", "accept-edits"));
    let s = Session::on_disk(replies, FakeEditor::answering(answers), "", &vars).await;
    for (name, text) in files {
        std::fs::write(s.scratch.project().join(name), text).unwrap();
    }
    s
}

fn bytes(s: &Session, name: &str) -> Option<Vec<u8>> {
    std::fs::read(s.scratch.project().join(name)).ok()
}

/// The user's words in `message`, or the role of another kind of message.
fn said(message: &Message) -> String {
    match message {
        Message::User(parts) => parts
            .iter()
            .filter_map(UserPart::as_text)
            .collect::<Vec<_>>()
            .join(" "),
        other => format!("{other:?}"),
    }
}

/// A session in `accept-edits` whose editor (in memory) answers `answers`, after three turns:
/// a.txt edited (CRLF), new.txt created, a.txt edited again; with a.txt and new.txt's paths.
async fn three_turns_of_edits(answers: &[PermissionAnswer]) -> (Session, PathBuf, PathBuf) {
    let replies = vec![
        write("w1", "a.txt", "a1\r\n"),
        Reply::text("one"),
        write("w2", "new.txt", "new\n"),
        Reply::text("two"),
        write("w3", "a.txt", "a2\r\n"),
        Reply::text("three"),
    ];
    let s = Session::open(
        replies,
        FakeEditor::answering(answers),
        "",
        &[("TANDEM_MODE", "accept-edits")],
    )
    .await;
    let a = s.scratch.project().join("a.txt");
    let fresh = s.scratch.project().join("new.txt");
    s.editor.clone().with_file(&a, "a0\r\n");
    for prompt in ["one", "two", "three"] {
        assert_eq!(s.prompt(prompt).await.unwrap(), StopReason::EndTurn);
    }
    (s, a, fresh)
}

#[tokio::test]
async fn a_rewind_through_the_editor_puts_back_edits_empties_created_files_and_asks_about_changed_ones()
 {
    let (s, a, fresh) = three_turns_of_edits(&[PermissionAnswer::RejectOnce]).await;
    let editor = s.editor.clone();
    // Someone else changes a.txt after tandem's last write.
    editor.clone().with_file(&a, "a2 edited by hand\r\n");
    let report = s
        .manager
        .rewind(&s.id, Back::Turn(2), Conflicts::Ask)
        .await
        .unwrap()
        .rewound
        .unwrap();
    assert_eq!(report.taken_back.len(), 2);
    let result = |path: &Path| {
        report
            .files
            .iter()
            .find(|f| f.path == path)
            .map(|f| f.result.clone())
    };
    assert!(
        matches!(result(&a), Some(FileResult::LeftChanged { .. })),
        "{report:?}"
    );
    assert_eq!(result(&fresh), Some(FileResult::Emptied), "{report:?}");
    assert_eq!(editor.file(&a).as_deref(), Some("a2 edited by hand\r\n"));
    assert_eq!(editor.file(&fresh).as_deref(), Some(""));
    assert_eq!(editor.asked().len(), 1, "one question, about a.txt");
    // Past the kept change, overwriting it: back to before turn one.
    let report = s
        .manager
        .rewind(&s.id, Back::Turn(1), Conflicts::Overwrite)
        .await
        .unwrap()
        .rewound
        .unwrap();
    assert!(matches!(
        report.files.iter().find(|f| f.path == a).map(|f| &f.result),
        Some(FileResult::Overwritten { .. })
    ));
    assert_eq!(
        editor.file(&a).as_deref(),
        Some("a0\r\n"),
        "CRLF kept, byte for byte"
    );
    assert!(report.turns.is_empty());
    // The model no longer sees any of it.
    s.prompt("fresh start").await.unwrap_err();
    let last = s.requests().pop().unwrap();
    let users: Vec<String> = last
        .messages
        .iter()
        .filter(|m| matches!(&***m, Message::User(_)))
        .map(|m| said(m))
        .collect();
    assert_eq!(users, ["fresh start"]);
}

#[tokio::test]
async fn a_file_changed_by_hand_is_left_alone_and_reported_with_a_diff() {
    let replies = vec![
        write("w1", "a.txt", "tandem wrote this\n"),
        Reply::text("written"),
        write("w2", "b.txt", "b from tandem\n"),
        Reply::text("b written"),
    ];
    let s = on_disk(
        replies,
        &[PermissionAnswer::RejectOnce],
        &[("a.txt", "original\n")],
        &[],
    )
    .await;
    s.prompt("write a").await.unwrap();
    s.prompt("write b").await.unwrap();
    std::fs::write(s.scratch.project().join("a.txt"), "the user's own text\n").unwrap();

    let report = slash(&s, "/rewind 1").await;
    assert_eq!(
        bytes(&s, "a.txt").unwrap(),
        b"the user's own text\n",
        "not overwritten"
    );
    assert!(report.contains("a.txt: **left as it is**"), "{report}");
    assert!(
        report.contains("-tandem wrote this") && report.contains("+the user's own text"),
        "{report}"
    );
    assert!(report.contains("b.txt: removed from the disk"), "{report}");
    assert!(bytes(&s, "b.txt").is_none());
    let asked = s.editor.asked();
    assert_eq!(asked.len(), 1, "one question, about a.txt: {asked:?}");
    let labels: Vec<&str> = asked[0].choices.iter().map(|c| c.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "Put back the version from before turn 1",
            "Leave it as it is"
        ]
    );
    // The diff first (CodeCompanion shows one only as `content[0]`), the question after it.
    match asked[0].content.first() {
        Some(ToolContent::Diff { new, .. }) => assert_eq!(new, "original\n"),
        other => panic!("the question does not open with the diff: {other:?}"),
    }
}

#[tokio::test]
async fn files_a_patch_deleted_or_moved_come_back() {
    let patch = "*** Begin Patch\n*** Delete File: old.txt\n*** Update File: keep.txt\n*** Move to: moved.txt\n@@\n-keep\n+kept\n*** End Patch\n";
    let replies = vec![
        Reply::calls(&[("p1", "apply_patch", json!({"input": patch}))]),
        Reply::text("patched"),
    ];
    let s = on_disk(
        replies,
        &[],
        &[("old.txt", "old\r\n"), ("keep.txt", "keep\n")],
        &[("TANDEM_MODEL", "gpt-5-mini")],
    )
    .await;
    assert_eq!(s.prompt("patch it").await.unwrap(), StopReason::EndTurn);
    assert!(bytes(&s, "old.txt").is_none() && bytes(&s, "keep.txt").is_none());
    assert_eq!(bytes(&s, "moved.txt").unwrap(), b"kept\n");
    let report = slash(&s, "/undo").await;
    assert!(report.contains("old.txt: written again"), "{report}");
    assert!(
        report.contains("moved.txt: removed from the disk"),
        "{report}"
    );
    assert_eq!(bytes(&s, "old.txt").unwrap(), b"old\r\n");
    assert_eq!(bytes(&s, "keep.txt").unwrap(), b"keep\n");
    assert!(bytes(&s, "moved.txt").is_none());
}

/// A command (or a hostile model) that swaps a folder for a link after tandem wrote in it
/// cannot make a rewind write or remove files elsewhere.
#[cfg(unix)]
#[tokio::test]
async fn a_rewind_never_writes_through_a_link_put_in_the_files_place() {
    let replies = vec![
        Reply::calls(&[
            (
                "w1",
                "write_file",
                json!({"path": "sub/a.txt", "content": "from tandem\n"}),
            ),
            (
                "w2",
                "write_file",
                json!({"path": "b.txt", "content": "b\n"}),
            ),
        ]),
        Reply::text("written"),
    ];
    let s = on_disk(replies, &[], &[("b.txt", "b0\n")], &[]).await;
    s.prompt("write them").await.unwrap();
    assert_eq!(bytes(&s, "sub/a.txt").unwrap(), b"from tandem\n");
    // The folder becomes a link to a place outside the project holding the same text, and
    // b.txt a link to a file outside.
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("a.txt"), "from tandem\n").unwrap();
    let elsewhere = outside.path().join("elsewhere.txt");
    std::fs::write(&elsewhere, "b\n").unwrap();
    let project = s.scratch.project();
    std::fs::remove_dir_all(project.join("sub")).unwrap();
    std::os::unix::fs::symlink(outside.path(), project.join("sub")).unwrap();
    std::fs::remove_file(project.join("b.txt")).unwrap();
    std::os::unix::fs::symlink(&elsewhere, project.join("b.txt")).unwrap();

    let report = slash(&s, "/undo").await;
    assert!(
        report.contains("sub/a.txt: **not put back**: a folder on its path is now a symbolic link"),
        "{report}"
    );
    assert!(
        report.contains("b.txt: **not put back**: it is now a symbolic link"),
        "{report}"
    );
    assert_eq!(
        std::fs::read_to_string(outside.path().join("a.txt")).unwrap(),
        "from tandem\n"
    );
    assert_eq!(std::fs::read_to_string(&elsewhere).unwrap(), "b\n");
}

/// A FIFO put where a file was cannot hold a rewind (or the session) up.
#[cfg(unix)]
#[tokio::test]
async fn a_fifo_in_a_files_place_is_reported_not_read() {
    let replies = vec![write("w1", "a.txt", "a\n"), Reply::text("written")];
    let s = on_disk(replies, &[], &[], &[]).await;
    s.prompt("write a").await.unwrap();
    let a = s.scratch.project().join("a.txt");
    std::fs::remove_file(&a).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(&a)
        .status()
        .unwrap();
    assert!(made.success());
    let report = tokio::time::timeout(std::time::Duration::from_secs(10), slash(&s, "/undo"))
        .await
        .expect("the rewind is not held up by the FIFO");
    assert!(
        report.contains("a.txt: **not put back**: it is a FIFO"),
        "{report}"
    );
}

#[tokio::test]
async fn an_action_is_a_turn_a_rewind_takes_back_on_its_own() {
    let config = "[[actions]]\nname = \"hello\"\ncommand = \"echo hi\"\n";
    let replies = vec![write("w1", "a.txt", "a\n"), Reply::text("written")];
    let s = Session::open(
        replies,
        FakeEditor::answering(&[PermissionAnswer::AllowOnce]),
        config,
        &[("TANDEM_MODE", "accept-edits")],
    )
    .await;
    s.prompt("write a").await.unwrap();
    s.prompt("/hello").await.unwrap();
    let a = s.scratch.project().join("a.txt");
    let report = s
        .manager
        .rewind(&s.id, Back::Last, Conflicts::Ask)
        .await
        .unwrap()
        .rewound
        .unwrap();
    assert_eq!(report.taken_back.len(), 1);
    assert!(
        report.taken_back[0].first_line.contains("`hello` action"),
        "{report:?}"
    );
    assert_eq!(report.commands, ["echo hi"]);
    assert_eq!(
        s.editor.file(&a).as_deref(),
        Some("a\n"),
        "the earlier turn stays"
    );
    assert_eq!(report.turns.len(), 1);
}

#[tokio::test]
async fn undo_with_nothing_done_and_a_turn_past_the_last_say_so() {
    let replies = vec![write("w1", "a.txt", "a\n"), Reply::text("written")];
    let s = on_disk(replies, &[], &[], &[]).await;
    let report = slash(&s, "/undo").await;
    assert!(report.contains("nothing to rewind"), "{report}");
    s.prompt("write a").await.unwrap();
    let report = slash(&s, "/rewind 5").await;
    assert!(
        report.contains("There is no turn 5: this session has 1 turn(s), 1 to 1."),
        "{report}"
    );
    assert_eq!(
        bytes(&s, "a.txt").unwrap(),
        b"a\n",
        "nothing was taken back"
    );
    let report = slash(&s, "/rewind soon").await;
    assert!(
        report.contains("`/rewind soon`: give the number of a turn (`/rewind` lists them)"),
        "{report}"
    );
    assert_eq!(bytes(&s, "a.txt").unwrap(), b"a\n");
}
