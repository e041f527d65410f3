//! Tests of `files.rs`: reads and writes through the editor, the local fallback, and the
//! disk standing in for an editor that refuses a path only once the call was allowed.

use super::*;
use crate::client::{ClientCaps, ClientError, ClientOps, ExitStatus, TerminalOutput, TerminalSpec};
use crate::types::{PermissionAnswer, PermissionChoice};
use futures::future::BoxFuture;

fn texts(content: &[ToolContent]) -> Vec<String> {
    content
        .iter()
        .filter_map(|c| match c {
            ToolContent::Text { text } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn small_changes_travel_whole_and_large_ones_as_their_changed_part() {
    let path = Path::new("/p/f.txt");
    let small = diff(path, Some("a\n"), "b\n");
    assert!(matches!(&small[..], [ToolContent::Diff { old: Some(o), .. }] if o == "a\n"));
    let big: String = (0..100_000).map(|i| format!("line {i}\n")).collect();
    let changed = big.replace("line 500\n", "LINE 500\n");
    let part = diff(path, Some(&big), &changed);
    match &part[0] {
        ToolContent::Diff {
            old: Some(old),
            new,
            ..
        } => {
            assert_eq!(
                old,
                "line 497\nline 498\nline 499\nline 500\nline 501\nline 502\nline 503\n"
            );
            assert!(new.contains("LINE 500\n"));
        }
        other => panic!("{other:?}"),
    }
    assert!(
        texts(&part)[0].contains("lines 498-504"),
        "{:?}",
        texts(&part)
    );
    // Changes at both ends: even the changed part is too large, so a note.
    let both = format!("X{}Y", &big[1..big.len() - 1]);
    let note = diff(path, Some(&big), &both);
    assert!(matches!(&note[..], [ToolContent::Text { .. }]), "{note:?}");
    // A huge new file is described, not sent.
    assert!(texts(&diff(path, None, &big))[0].starts_with("New file of"));
}

/// An editor that refuses every file, as Zed refuses one outside its worktrees.
struct Refusing;

fn refused<T>() -> BoxFuture<'static, Result<T, ClientError>> {
    Box::pin(async {
        Err(ClientError {
            code: Some(NOT_FOUND),
            message: "Resource not found".into(),
        })
    })
}

impl ClientOps for Refusing {
    fn read_text_file<'a>(
        &'a self,
        _: &'a str,
        _: &'a Path,
        _: Option<u32>,
        _: Option<u32>,
    ) -> BoxFuture<'a, Result<String, ClientError>> {
        refused()
    }
    fn write_text_file<'a>(
        &'a self,
        _: &'a str,
        _: &'a Path,
        _: &'a str,
    ) -> BoxFuture<'a, Result<(), ClientError>> {
        refused()
    }
    fn request_permission<'a>(
        &'a self,
        _: &'a str,
        _: &'a crate::types::ToolCallView,
        _: &'a [PermissionChoice],
    ) -> BoxFuture<'a, Result<PermissionAnswer, ClientError>> {
        refused()
    }
    fn create_terminal<'a>(
        &'a self,
        _: &'a str,
        _: &'a TerminalSpec,
    ) -> BoxFuture<'a, Result<String, ClientError>> {
        refused()
    }
    fn wait_for_terminal_exit<'a>(
        &'a self,
        _: &'a str,
        _: &'a str,
    ) -> BoxFuture<'a, Result<ExitStatus, ClientError>> {
        refused()
    }
    fn terminal_output<'a>(
        &'a self,
        _: &'a str,
        _: &'a str,
    ) -> BoxFuture<'a, Result<TerminalOutput, ClientError>> {
        refused()
    }
    fn kill_terminal<'a>(
        &'a self,
        _: &'a str,
        _: &'a str,
    ) -> BoxFuture<'a, Result<(), ClientError>> {
        refused()
    }
    fn release_terminal<'a>(
        &'a self,
        _: &'a str,
        _: &'a str,
    ) -> BoxFuture<'a, Result<(), ClientError>> {
        refused()
    }
}

struct Nowhere;

impl crate::types::EventSink for Nowhere {
    fn emit(&self, _: &str, _: crate::types::TurnEvent) {}
}

/// A call in `cwd` whose editor refuses every file; `denied` files are under a deny rule.
fn env(cwd: &Path, permitted: bool, denied: &'static str) -> ToolEnv {
    let scope = crate::tools::ToolScope {
        session_id: "s".into(),
        cwd: cwd.to_path_buf(),
        client: std::sync::Arc::new(Refusing),
        caps: ClientCaps {
            read_text_file: true,
            write_text_file: true,
            ..ClientCaps::default()
        },
        sink: std::sync::Arc::new(Nowhere),
        unreadable: std::sync::Arc::new(move |p: &Path| p.ends_with(denied)),
        shell: crate::platform::Shell::system(),
        background: std::sync::Arc::new(crate::tools::background::Background::new(1)),
        folders: Vec::new(),
    };
    ToolEnv {
        scope: std::sync::Arc::new(scope),
        call_id: "c".into(),
        cancel: tokio_util::sync::CancellationToken::new(),
        subagents: None,
        permitted,
        sandbox: None,
        journal: crate::types::Journal::default(),
    }
}

/// Outside the folders the editor has open, a file the editor refused is read and written
/// on disk only by an allowed call, and never one a deny rule covers.
#[tokio::test]
async fn the_disk_stands_in_for_a_refusing_editor_only_once_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().join("project");
    std::fs::create_dir_all(&cwd).unwrap();
    let notes = dir.path().join("notes.txt");
    let secret = dir.path().join("secret.txt");
    std::fs::write(&notes, "far\n").unwrap();
    std::fs::write(&secret, "hunter2\n").unwrap();

    let asking = env(&cwd, false, "secret.txt");
    assert!(matches!(
        read(&asking, &notes).await,
        Err(ReadError::Refused(_))
    ));
    assert!(
        write(&asking, &notes, Some("far\n"), "changed\n")
            .await
            .is_err()
    );
    assert!(
        asking.journal.take().is_empty(),
        "nothing changed, nothing noted"
    );

    let allowed = env(&cwd, true, "secret.txt");
    assert_eq!(read(&allowed, &notes).await, Ok("far\n".to_string()));
    assert_eq!(
        read_document(&allowed, &notes).await.map(|d| d.text),
        Ok("far\n".into())
    );
    assert_eq!(
        write(&allowed, &notes, Some("far\n"), "near\n").await,
        Ok(())
    );
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "near\n");
    assert_eq!(
        allowed.journal.take(),
        [crate::types::Effect::File {
            path: notes.clone(),
            before: Some("far\n".into()),
            after: Some("near\n".into()),
        }]
    );

    let denied = read(&allowed, &secret).await;
    assert!(
        matches!(&denied, Err(ReadError::Other(why)) if why.contains("deny rule")),
        "{denied:?}"
    );
    assert!(read_document(&allowed, &secret).await.is_err());
    assert!(write(&allowed, &secret, None, "x").await.is_err());
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "hunter2\n");

    // Inside the editor's folders a refusal is the editor's word, even for an allowed call.
    let inside = cwd.join("in.txt");
    std::fs::write(&inside, "in\n").unwrap();
    assert!(read(&allowed, &inside).await.is_err());
    assert!(write(&allowed, &inside, None, "x").await.is_err());
    assert_eq!(std::fs::read_to_string(&inside).unwrap(), "in\n");
}
