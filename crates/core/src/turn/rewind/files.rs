//! The files of a rewind: what each holds now, whether that is what tandem left in it, and
//! putting it back (through the editor when it writes files, so the editor shows the
//! restore; on disk otherwise). A file tandem created is removed from the disk, since ACP
//! has no way to ask an editor to delete one; when only the editor has it, it is emptied.

use std::path::Path;

use crate::store::Snapshot;
use crate::turn::context::TurnContext;

/// Most lines of a short diff in a rewind's answer.
const SHORT_DIFF_LINES: usize = 24;

/// What a file holds now: its text (`None`: there is no file), or why it could not be read.
pub(super) async fn read_now(ctx: &TurnContext, path: &Path) -> Result<Option<String>, String> {
    // A FIFO or device where the file was would block the read (and the editor's).
    if let Some(why) = crate::local::unreadable(path).await {
        return Err(format!("it {why}, which tandem does not read"));
    }
    let on_disk = tokio::fs::symlink_metadata(path).await;
    if let Ok(meta) = &on_disk
        && meta.file_type().is_symlink()
    {
        let to = tokio::fs::read_link(path)
            .await
            .map(|t| t.display().to_string())
            .unwrap_or_default();
        return Err(format!(
            "it is now a symbolic link (to {to}), which tandem never writes through"
        ));
    }
    // tandem recorded the file's physical path; a folder on it that is now a link would send
    // the restore somewhere else.
    let resolved = ctx.facts.place().resolve(&path.to_string_lossy());
    if resolved != path {
        return Err(format!(
            "a folder on its path is now a symbolic link (it leads to {}), which tandem never writes through",
            resolved.display()
        ));
    }
    let missing = matches!(&on_disk, Err(e) if e.kind() == std::io::ErrorKind::NotFound);
    let services = &ctx.services;
    if services.caps.read_text_file {
        // The editor's buffer, unsaved changes included, is what the user sees; when a name
        // on the way changed while the editor read, the disk says instead (the editor may
        // have read another file).
        let watch = crate::local::PathWatch::start(path, &ctx.tool_scope().roots());
        match services
            .editor
            .read_text_file(&ctx.facts.session_id, path, None, None)
            .await
        {
            Ok(_) if !watch.unchanged(path) => {}
            Ok(text) => return Ok(Some(text)),
            Err(_) if missing => return Ok(None),
            Err(e) if ctx.tool_scope().in_editor_folders(path) => {
                return Err(format!("the editor could not read it: {}", e.message));
            }
            // Outside the editor's folders: the disk says.
            Err(_) => {}
        }
    }
    // Opened exactly: a link planted since the checks above is refused, not followed.
    match crate::local::read_text(path).await {
        Ok(bytes) => Ok(Some(String::from_utf8_lossy(&bytes).into_owned())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e.to_string()),
    }
}

/// Whether `now` is what `snapshot` was taken of. Read through an editor, line ends may come
/// back as the editor keeps them in its buffer (`\n`), so those alone do not count.
pub(super) fn holds(ctx: &TurnContext, snapshot: &Snapshot, now: Option<&str>) -> bool {
    if snapshot.matches(now) {
        return true;
    }
    let Some(now) = now.filter(|_| ctx.services.caps.read_text_file) else {
        return false;
    };
    match snapshot {
        Snapshot::Text(kept) => kept.replace("\r\n", "\n") == now.replace("\r\n", "\n"),
        Snapshot::Withheld { .. } if !now.contains('\r') => {
            snapshot.matches(Some(&now.replace('\n', "\r\n")))
        }
        Snapshot::Withheld { .. } => false,
        Snapshot::Missing => false,
    }
}

/// How a file was put back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PutBack {
    /// Its earlier text was written.
    Written,
    /// tandem had created it: removed from the disk.
    Removed,
    /// tandem had created it, and only the editor has it: emptied (the user deletes it).
    Emptied,
    /// tandem had created it, and it is gone already.
    Gone,
}

/// Puts `target` back into `path`, which holds `now`; what was done, or why it failed.
pub(super) async fn put_back(
    ctx: &TurnContext,
    path: &Path,
    target: Option<&str>,
    now: Option<&str>,
) -> Result<PutBack, String> {
    let Some(text) = target else {
        return remove(ctx, path, now).await;
    };
    let services = &ctx.services;
    if services.caps.write_text_file {
        let scope = ctx.tool_scope();
        // The editor follows links: one planted since the file was read is refused here.
        if crate::local::PathWatch::start(path, &scope.roots()).saw_link() {
            return Err(
                "it now leads through a symbolic link, which tandem never writes through".into(),
            );
        }
        // A running command could swap a folder on the way before the editor writes: tandem
        // writes it itself then, exactly where it was (see `tools::files`).
        if scope.background.running() {
            return crate::local::write_atomic(path, text)
                .await
                .map(|()| PutBack::Written)
                .map_err(|e| e.to_string());
        }
        match services
            .editor
            .write_text_file(&ctx.facts.session_id, path, text)
            .await
        {
            Ok(()) => return Ok(PutBack::Written),
            Err(e) if ctx.tool_scope().in_editor_folders(path) => {
                return Err(format!("the editor refused the write: {}", e.message));
            }
            // Outside the editor's folders tandem wrote it on disk before, and does again.
            Err(_) => {}
        }
    }
    crate::local::write_atomic(path, text)
        .await
        .map(|()| PutBack::Written)
        .map_err(|e| e.to_string())
}

async fn remove(ctx: &TurnContext, path: &Path, now: Option<&str>) -> Result<PutBack, String> {
    // From the exactly opened folder: a planted link is what would go, never its target.
    match crate::local::remove(path).await {
        Ok(()) => return Ok(PutBack::Removed),
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e.to_string()),
        Err(_) => {}
    }
    if now.is_none() {
        return Ok(PutBack::Gone);
    }
    if !ctx.services.caps.write_text_file {
        return Err("it is not on the disk, and the editor does not write files".into());
    }
    ctx.services
        .editor
        .write_text_file(&ctx.facts.session_id, path, "")
        .await
        .map(|()| PutBack::Emptied)
        .map_err(|e| format!("the editor refused to empty it: {}", e.message))
}

/// A short unified diff from `old` to `new` (at most [`SHORT_DIFF_LINES`] lines).
pub(super) fn short_diff(old: Option<&str>, new: Option<&str>) -> String {
    let (old, new) = (old.unwrap_or(""), new.unwrap_or(""));
    let diff = similar::TextDiff::from_lines(old, new);
    let text = diff
        .unified_diff()
        .context_radius(2)
        .header("what tandem wrote", "what is there now")
        .to_string();
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() <= SHORT_DIFF_LINES {
        return text;
    }
    format!(
        "{}\n… {} more lines\n",
        lines[..SHORT_DIFF_LINES].join("\n"),
        lines.len() - SHORT_DIFF_LINES
    )
}
