//! @-mentions the editor sent as links (`resource_link`): Zed sends folders this way,
//! agent-shell files over 100 KB, and clients without `embeddedContext` every file. A link
//! alone makes the model spend a call on reading it, so a small text file inside the
//! workspace is put in the prompt as context (bounded, with a note when cut) and a folder as
//! its listing; anything else (outside the workspace, denied, binary, not a file URI) stays
//! a reference.

use std::path::{Path, PathBuf};

use super::context::TurnContext;
use crate::local;
use crate::tools::text;
use crate::types::{UserPart, context_text, folder_context_text};

/// Most bytes of a mentioned file put in the prompt.
const MAX_FILE_BYTES: usize = 64 * 1024;
/// Most entries of a mentioned folder listed.
const MAX_ENTRIES: usize = 200;

/// `parts` with each link to a small file or a folder inside the workspace replaced by its
/// content; other parts as they are.
pub(super) async fn expand(ctx: &TurnContext, parts: Vec<UserPart>) -> Vec<UserPart> {
    let mut out = Vec::with_capacity(parts.len());
    for part in parts {
        let expanded = match &part {
            UserPart::Link { uri, .. } => match inside(ctx, uri) {
                Some(path) => content(uri, &path).await,
                None => None,
            },
            _ => None,
        };
        out.push(expanded.map_or(part, UserPart::Text));
    }
    out
}

/// The local path `uri` names, when it is a `file:` URI inside the workspace that no deny
/// rule keeps from being read.
fn inside(ctx: &TurnContext, uri: &str) -> Option<PathBuf> {
    let raw = url::Url::parse(uri).ok()?.to_file_path().ok()?;
    let path = ctx.facts.place().resolve(&raw.to_string_lossy());
    (ctx.services.policy.workspace.contains(&path) && !ctx.services.policy.denies_read(&path))
        .then_some(path)
}

/// A folder's listing or a text file's content as a context block; `None` for anything
/// else (missing, binary, unreadable).
async fn content(uri: &str, path: &Path) -> Option<String> {
    let meta = tokio::fs::metadata(path).await.ok()?;
    if meta.is_dir() {
        let listing = tokio::task::spawn_blocking({
            let path = path.to_path_buf();
            move || listing(&path)
        })
        .await
        .ok()??;
        return Some(folder_context_text(uri, &listing));
    }
    if local::unreadable(path).await.is_some() {
        return None;
    }
    let bytes = local::read_text(path).await.ok()?;
    if text::is_binary(&bytes) {
        return None;
    }
    let total = bytes.len();
    let mut end = total.min(MAX_FILE_BYTES);
    while end > 0 && end < total && (bytes[end] & 0b1100_0000) == 0b1000_0000 {
        end -= 1;
    }
    let mut body = String::from_utf8_lossy(&bytes[..end]).into_owned();
    if end < total {
        body.push_str(&format!(
            "\n[… cut at {end} of {total} bytes; read_file reads the rest]"
        ));
    }
    Some(context_text(uri, &body))
}

/// A folder's entries, directories ending in `/`, sorted and bounded.
fn listing(path: &Path) -> Option<String> {
    let mut entries: Vec<String> = std::fs::read_dir(path)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                format!("{name}/")
            } else {
                name
            }
        })
        .collect();
    entries.sort();
    let total = entries.len();
    entries.truncate(MAX_ENTRIES);
    let mut text = if entries.is_empty() {
        "(empty folder)".to_string()
    } else {
        entries.join("\n")
    };
    if total > entries.len() {
        text.push_str(&format!(
            "\n[… {} more entries; list_dir shows them]",
            total - entries.len()
        ));
    }
    Some(text)
}
