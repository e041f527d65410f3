//! `list_dir`: a directory's entries, directories marked with `/`.

use std::path::{Path, PathBuf};

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;

use super::{Call, Place, Prepared, ToolEnv, ToolError, ToolOutput, TypedTool};
use crate::types::Access;
use crate::types::{Location, ToolKind};

/// Most entries listed.
const MAX_ENTRIES: usize = 1000;

/// Arguments of `list_dir`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListDirArgs {
    /// Directory path, absolute or relative to the working directory (default: the working
    /// directory, followed by the workspace's other folders).
    #[serde(default)]
    pub path: Option<String>,
}

pub struct ListDir;

impl TypedTool for ListDir {
    type Args = ListDirArgs;
    const NAME: &'static str = "list_dir";
    const KIND: ToolKind = ToolKind::Read;
    fn description(&self) -> &str {
        "List a directory's entries (directories end with `/`)."
    }
    fn prepare(&self, args: ListDirArgs, place: &Place) -> Result<Prepared, ToolError> {
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

fn list(path: &Path) -> std::io::Result<(Vec<String>, usize)> {
    let mut entries: Vec<String> = std::fs::read_dir(path)?
        .filter_map(Result::ok)
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let is_dir = std::fs::metadata(e.path()).is_ok_and(|m| m.is_dir());
            if is_dir { format!("{name}/") } else { name }
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
