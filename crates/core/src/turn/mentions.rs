//! @-mentions the editor sent as links (`resource_link`): Zed sends folders this way,
//! agent-shell files over 100 KB, and clients without `embeddedContext` every file. A link
//! alone makes the model spend a call on reading it, so a small text file inside the
//! workspace is put in the prompt as context (bounded, with a note when cut) and a folder as
//! its listing; anything else (outside the workspace, denied, binary, not a file URI) stays
//! a reference. A file is read as `read_file` reads it: through the editor when it reads
//! files, so an unsaved buffer is what the model sees.

use std::path::{Path, PathBuf};

use super::context::TurnContext;
use tokio_util::sync::CancellationToken;

use crate::tools::{ToolEnv, files};
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
                Some(path) => content(ctx, uri, &path).await,
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
async fn content(ctx: &TurnContext, uri: &str, path: &Path) -> Option<String> {
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
    // Inside the workspace and under no deny rule: read as an allowed `read_file` would be.
    let env = ToolEnv {
        scope: ctx.tool_scope(),
        call_id: "mention".into(),
        cancel: CancellationToken::new(),
        subagents: None,
        permitted: true,
        sandbox: None,
        journal: crate::types::Journal::default(),
    };
    let text = files::read(&env, path).await.ok()?;
    let total = text.len();
    let mut end = total.min(MAX_FILE_BYTES);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let mut body = text[..end].to_string();
    if end < total {
        body.push_str(&format!(
            "\n[… cut at {end} of {total} bytes; read_file reads the rest]"
        ));
    }
    Some(context_text(uri, &body))
}

/// A folder's entries, directories ending in `/`, sorted and bounded.
fn listing(path: &Path) -> Option<String> {
    // The folder opened exactly: one swapped for a link since it was judged is not listed.
    let mut entries: Vec<String> = crate::local::list(path)
        .ok()?
        .into_iter()
        .map(|(name, kind)| {
            let name = name.to_string_lossy().into_owned();
            if kind == crate::platform::exact::EntryKind::Folder {
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
