//! `list_dir`: a directory's entries, directories marked with `/` and links with where they
//! point.

use std::path::{Path, PathBuf};

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;

use super::{Call, PathBase, Prepared, ToolEnv, ToolError, ToolOutput, TypedTool};
use crate::local;
use crate::platform::exact::EntryKind as Kind;
use crate::types::Access;
use crate::types::{Location, ToolKind};

/// Most entries listed.
const MAX_ENTRIES: usize = 1000;

/// Arguments of `list_dir`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListDirArgs {
    /// Directory path, absolute or relative to the working directory (default: the working
    /// directory, followed by the workspace's other folders).
    #[serde(default)]
    pub(crate) path: Option<String>,
}

pub(crate) struct ListDir;

impl TypedTool for ListDir {
    type Args = ListDirArgs;
    const NAME: &'static str = "list_dir";
    const KIND: ToolKind = ToolKind::Read;
    const LABEL: &'static str = "List folder";
    fn description(&self) -> &str {
        "List a directory's entries (directories end with `/`)."
    }
    fn prepare(&self, args: ListDirArgs, place: &PathBase) -> Result<Prepared, ToolError> {
        let path = place.resolve(args.path.as_deref().unwrap_or("."));
        let shown = place.display(&path);
        // Without a path, the listing also names the workspace's other folders.
        let also = match args.path {
            None => place.folders.clone(),
            Some(_) => Vec::new(),
        };
        Ok(Prepared {
            title: format!("List {shown}"),
            locations: vec![Location {
                path: path.clone(),
                line: None,
            }],
            access: Access::Read(path.clone()),
            call: Box::new(ListCall { path, shown, also }),
        })
    }
}

struct ListCall {
    path: PathBuf,
    shown: String,
    /// Other workspace folders to name after the entries.
    also: Vec<PathBuf>,
}

/// The folder's names (a folder's with `/`, a link's with ` -> target` and no `/`: what it
/// points to is not looked at), from the folder opened exactly, so a folder swapped for a
/// link since the call was judged is refused, not listed.
fn list(path: &Path) -> std::io::Result<(Vec<String>, usize)> {
    let mut entries: Vec<String> = local::list(path)?
        .into_iter()
        .map(|(name, kind)| {
            let name = name.to_string_lossy().into_owned();
            match kind {
                Kind::Folder => format!("{name}/"),
                Kind::Link => match std::fs::read_link(path.join(&name)) {
                    Ok(to) => format!("{name} -> {}", to.display()),
                    Err(_) => name,
                },
                Kind::File | Kind::Special => name,
            }
        })
        .collect();
    entries.sort();
    let total = entries.len();
    entries.truncate(MAX_ENTRIES);
    Ok((entries, total))
}

impl Call for ListCall {
    fn run(self: Box<Self>, _env: ToolEnv) -> BoxFuture<'static, ToolOutput> {
        Box::pin(async move {
            let path = self.path.clone();
            match tokio::task::spawn_blocking(move || list(&path)).await {
                Ok(Ok((entries, total))) => {
                    let mut text = if entries.is_empty() {
                        "(empty directory)".to_string()
                    } else {
                        entries.join("\n")
                    };
                    if total > entries.len() {
                        text.push_str(&format!(
                            "\n[… {} more entries not shown]",
                            total - entries.len()
                        ));
                    }
                    if !self.also.is_empty() {
                        text.push_str("\n\nThe workspace's other folders (list them by path):");
                        for folder in &self.also {
                            text.push_str(&format!("\n{}/", folder.display()));
                        }
                    }
                    ToolOutput::text(text)
                }
                Ok(Err(e)) => ToolOutput::error(format!("cannot list {}: {e}", self.shown)),
                Err(e) => ToolOutput::error(format!("cannot list {}: {e}", self.shown)),
            }
        })
    }
}
