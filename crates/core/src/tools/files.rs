//! File reads and writes for tools: through the editor when it advertised the capability
//! (unsaved buffers are read, writes are reviewable), on disk otherwise, through
//! [`crate::local`]'s file layer, which no planted link redirects. An editor may refuse a
//! file outside the folders it has open (Zed does); once the call is allowed, tandem reads
//! or writes such a file on disk itself, and before that it says the editor refused.
//!
//! An editor opens the path it is given following links, so tandem looks at every name on
//! the way before and after it asks ([`local::PathWatch`]): a link there is refused, and when a
//! name on the way was replaced while the editor read, its answer is dropped and the file
//! that was judged is read on disk instead.

use std::path::{Path, PathBuf};

use super::{Call, PathBase, Prepared, ToolEnv, text};
use crate::edit::Document;
use crate::local;
use crate::types::{Access, Effect, Location, ToolContent};

/// The editor's "resource not found" code.
const NOT_FOUND: i32 = -32002;

/// Why a read failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ReadError {
    /// No such file.
    Missing,
    /// The editor would not open the file, which is outside the folders it has open (what
    /// it said); tandem reads such a file itself only once the call is allowed.
    Refused(String),
    /// The file is binary; the size in bytes.
    Binary(usize),
    /// Text in an encoding tandem does not edit (why, in words).
    Encoding(String),
    /// Anything else, in words.
    Other(String),
}

impl ReadError {
    /// A sentence for the model.
    pub(crate) fn describe(&self, shown: &str) -> String {
        match self {
            ReadError::Missing => format!("{shown} does not exist"),
            ReadError::Refused(said) => format!(
                "the editor would not open {shown}, which is outside the folders it has open ({said})"
            ),
            ReadError::Binary(n) => format!("{shown} is a binary file ({n} bytes); not shown"),
            ReadError::Encoding(why) => format!("{shown} {why}"),
            ReadError::Other(e) => format!("cannot read {shown}: {e}"),
        }
    }
}

/// Reads a whole text file.
pub(crate) async fn read(env: &ToolEnv, path: &Path) -> Result<String, ReadError> {
    read_some(env, path, None).await
}

/// Reads a whole text file to edit it: its byte order mark set aside, and, on disk, only
/// UTF-8 (other encodings are refused rather than rewritten as replacement characters).
pub(crate) async fn read_document(env: &ToolEnv, path: &Path) -> Result<Document, ReadError> {
    if let Some(why) = local::unreadable(path).await {
        return Err(ReadError::Other(why.to_string()));
    }
    if env.scope.caps.read_text_file {
        // The editor decoded the file and will encode the write the same way.
        match through_editor(env, path, None).await {
            Err(ReadError::Refused(said)) if env.permitted => {
                on_disk_instead(env, path, &said).map_err(ReadError::Other)?;
            }
            Ok(None) => {}
            other => return other.map(|text| Document::from_text(text.unwrap_or_default())),
        }
    }
    match local::read_text(path).await {
        Ok(bytes) if bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]) => {
            Document::from_bytes(bytes).map_err(|e| ReadError::Encoding(e.to_string()))
        }
        Ok(bytes) if text::is_binary(&bytes) => Err(ReadError::Binary(bytes.len())),
        Ok(bytes) => Document::from_bytes(bytes).map_err(|e| ReadError::Encoding(e.to_string())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(ReadError::Missing),
        Err(e) => Err(ReadError::Other(e.to_string())),
    }
}

/// Reads a text file's first `limit` lines (through the editor; the whole file on disk).
pub(crate) async fn read_lines(
    env: &ToolEnv,
    path: &Path,
    limit: u32,
) -> Result<String, ReadError> {
    read_some(env, path, Some(limit)).await
}

async fn read_some(env: &ToolEnv, path: &Path, limit: Option<u32>) -> Result<String, ReadError> {
    // Checked before the editor is asked too: it might block on a FIFO just as we would.
    if let Some(why) = local::unreadable(path).await {
        return Err(ReadError::Other(why.to_string()));
    }
    if env.scope.caps.read_text_file {
        match through_editor(env, path, limit).await {
            Err(ReadError::Refused(said)) if env.permitted => {
                on_disk_instead(env, path, &said).map_err(ReadError::Other)?;
            }
            Ok(None) => {}
            other => return other.map(Option::unwrap_or_default),
        }
    }
    match local::read_text(path).await {
        Ok(bytes) if text::is_binary(&bytes) => Err(ReadError::Binary(bytes.len())),
        Ok(bytes) => Ok(String::from_utf8_lossy(&bytes).into_owned()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(ReadError::Missing),
        Err(e) => Err(ReadError::Other(e.to_string())),
    }
}

/// Reads `path` through the editor; a refusal of a file that is there, outside the folders
/// the editor has open, is [`ReadError::Refused`], not a missing file. `None` when a name on
/// the way to the file was replaced while the editor read it: what it read may be another
/// file, so the caller reads the judged one on disk.
async fn through_editor(
    env: &ToolEnv,
    path: &Path,
    limit: Option<u32>,
) -> Result<Option<String>, ReadError> {
    let watch = local::PathWatch::start(path, &env.scope.roots());
    if watch.saw_link() {
        return Err(ReadError::Other(moved(path)));
    }
    let answer = env
        .scope
        .client
        .read_text_file(&env.scope.session_id, path, None, limit)
        .await;
    let error = match answer {
        Ok(_) if !watch.unchanged(path) => {
            tracing::warn!(path = %path.display(), "a name on the way to the file changed while the editor read it; its answer is dropped and the file is read on disk");
            return Ok(None);
        }
        Ok(text) => return Ok(Some(text)),
        Err(error) => error,
    };
    let there = !missing_on_disk(path).await;
    Err(match error.code {
        // Zed answers `resource_not_found` for any path outside its worktrees.
        Some(_) if there && !env.scope.in_editor_folders(path) => ReadError::Refused(error.message),
        Some(NOT_FOUND) => ReadError::Missing,
        // Editors answer a missing file in their own words and codes (the Python SDK:
        // -32603 "No such file or directory"); the project is on the disk tandem shares
        // with the editor, so the disk says whether the file is there.
        Some(_) if !there => ReadError::Missing,
        Some(_) => ReadError::Other(format!("the editor said: {}", error.message)),
        // No answer in time (the message says so) or an answer tandem cannot use.
        None => ReadError::Other(error.message),
    })
}

/// Whether tandem may do itself, on disk, what the editor refused for `path` (outside the
/// folders it has open; `said` is its answer): the call was allowed, by the policy or the
/// user, and no deny rule forbids reading the file (checked again here: such a file is never
/// read or written around the rule).
fn on_disk_instead(env: &ToolEnv, path: &Path, said: &str) -> Result<(), String> {
    if (env.scope.unreadable)(path) {
        return Err(format!(
            "the editor refused it ({said}) and a deny rule forbids reading it"
        ));
    }
    tracing::info!(path = %path.display(), "the editor refused a file outside its folders ({said}); tandem uses the disk");
    Ok(())
}

/// The refusal of a path that now leads through a link that was not there when the call was
/// judged.
fn moved(path: &Path) -> String {
    crate::platform::exact::Moved::of(path).to_string()
}

/// Whether nothing at all is at `path` (not even a broken link).
async fn missing_on_disk(path: &Path) -> bool {
    matches!(
        tokio::fs::symlink_metadata(path).await,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound
    )
}

/// Writes a whole text file that held `before` (`None`: there was none), write-ahead: the
/// call's journal records the change as intended before the file is touched and its outcome
/// after (see [`crate::types::Journal`]); a change it cannot record is not made.
pub(crate) async fn write(
    env: &ToolEnv,
    path: &Path,
    before: Option<&str>,
    content: &str,
) -> Result<(), String> {
    let intended = env
        .journal
        .intend(Effect::File {
            path: path.to_path_buf(),
            before: before.map(str::to_string),
            after: Some(content.to_string()),
        })
        .await?;
    crate::types::pause("write-intended").await;
    let written = write_unnoted(env, path, content).await;
    crate::types::pause("write-written").await;
    env.journal.settle(intended, &written);
    crate::types::pause("write-settled").await;
    written
}

async fn write_unnoted(env: &ToolEnv, path: &Path, content: &str) -> Result<(), String> {
    if env.scope.caps.write_text_file {
        // The editor follows links: one planted since the call was judged is refused here.
        if local::PathWatch::start(path, &env.scope.roots()).saw_link() {
            return Err(moved(path));
        }
        // A command still running could swap a folder on the way for a link between any
        // look and the editor's write; tandem then writes the file itself, exactly where it
        // was judged, and the editor sees the change on disk.
        if env.scope.background.running() {
            tracing::info!(path = %path.display(), "a background command is running: the file is written on disk, not through the editor");
            return local::write_atomic(path, content)
                .await
                .map_err(|e| e.to_string());
        }
        let refused = match env
            .scope
            .client
            .write_text_file(&env.scope.session_id, path, content)
            .await
        {
            Ok(()) => return Ok(()),
            Err(e) => e,
        };
        let outside = refused.code.is_some() && !env.scope.in_editor_folders(path);
        if !(outside && env.permitted) {
            return Err(format!("the editor refused the write: {}", refused.message));
        }
        on_disk_instead(env, path, &refused.message)?;
    }
    local::write_atomic(path, content)
        .await
        .map_err(|e| e.to_string())
}

/// What a change's preview shows instead of a diff when the editor would not open the file
/// (`shown`), which is outside the folders it has open: tandem reads the file only once the
/// change is allowed, so the diff comes afterwards.
pub(crate) fn unseen(shown: &str) -> ToolContent {
    ToolContent::Text {
        text: format!(
            "The editor would not open {shown}: it is outside the folders the editor has open. If you allow this change, tandem reads and writes the file itself and shows the change afterwards."
        ),
    }
}

/// Removes a file that held `before` (on disk: ACP has no way to ask the editor to delete
/// one), write-ahead like [`write`].
pub(crate) async fn remove(env: &ToolEnv, path: &Path, before: Option<&str>) -> Result<(), String> {
    let intended = env
        .journal
        .intend(Effect::File {
            path: path.to_path_buf(),
            before: before.map(str::to_string),
            after: None,
        })
        .await?;
    crate::types::pause("remove-intended").await;
    let removed = local::remove(path)
        .await
        .map_err(|e| format!("cannot remove {}: {e}", path.display()));
    env.journal.settle(intended, &removed);
    removed
}

/// Most bytes of old and new text a diff carries to the editor; a larger change is shown as
/// its changed lines with some context around them, or, when even those are too large, as a
/// note. The change itself is always made whole.
pub(crate) const MAX_DIFF_BYTES: usize = 256 * 1024;
/// Unchanged lines shown around a change that is cut down to its changed part.
const CONTEXT_LINES: usize = 3;

/// How the editor is shown a change of `path` from `old` (`None`: a new file) to `new`.
pub(crate) fn diff(path: &Path, old: Option<&str>, new: &str) -> Vec<ToolContent> {
    let whole = || ToolContent::Diff {
        path: path.to_path_buf(),
        old: old.map(str::to_string),
        new: new.to_string(),
    };
    let Some(before) = old else {
        if new.len() <= MAX_DIFF_BYTES {
            return vec![whole()];
        }
        return vec![ToolContent::Text {
            text: format!(
                "New file of {} bytes ({} lines): too large to show as a diff.",
                new.len(),
                new.lines().count()
            ),
        }];
    };
    if before.len() + new.len() <= MAX_DIFF_BYTES {
        return vec![whole()];
    }
    let a: Vec<&str> = before.split_inclusive('\n').collect();
    let b: Vec<&str> = new.split_inclusive('\n').collect();
    let same_start = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let same_end = a[same_start..]
        .iter()
        .rev()
        .zip(b[same_start..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let from = same_start.saturating_sub(CONTEXT_LINES);
    let a_to = (a.len() - same_end + CONTEXT_LINES).min(a.len());
    let b_to = (b.len() - same_end + CONTEXT_LINES).min(b.len());
    let old_part: String = a[from..a_to].concat();
    let new_part: String = b[from..b_to].concat();
    let note = format!(
        "{} is {} bytes; shown: lines {}-{} of the old text and {}-{} of the new, where it changed.",
        path.display(),
        before.len().max(new.len()),
        from + 1,
        a_to,
        from + 1,
        b_to
    );
    if old_part.len() + new_part.len() > MAX_DIFF_BYTES {
        return vec![ToolContent::Text {
            text: format!(
                "{} changed from {} to {} bytes, over lines {}-{}: too large to show as a diff.",
                path.display(),
                before.len(),
                new.len(),
                same_start + 1,
                a.len() - same_end
            ),
        }];
    }
    vec![
        ToolContent::Diff {
            path: path.to_path_buf(),
            old: Some(old_part),
            new: new_part,
        },
        ToolContent::Text { text: note },
    ]
}

/// The file an edit or write changes, resolved at `place`: its path and how titles show it.
pub(crate) struct EditTarget {
    /// The resolved path.
    pub(crate) path: PathBuf,
    /// The path as titles and messages show it.
    pub(crate) shown: String,
}

impl EditTarget {
    /// The file `raw` names.
    pub(crate) fn new(place: &PathBase, raw: &str) -> Self {
        let path = place.resolve(raw);
        let shown = place.display(&path);
        Self { path, shown }
    }

    /// A call that changes this file, titled "`verb` <file>", judged as an edit of it.
    pub(crate) fn changing(&self, verb: &str, call: Box<dyn Call>) -> Prepared {
        Prepared {
            title: format!("{verb} {}", self.shown),
            locations: vec![Location {
                path: self.path.clone(),
                line: None,
            }],
            access: Access::Edit(self.path.clone()),
            call,
        }
    }
}

#[cfg(test)]
#[path = "files_tests.rs"]
mod tests;
