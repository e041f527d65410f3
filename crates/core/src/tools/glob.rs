//! `glob`: files whose path matches a pattern, respecting `.gitignore`.

use std::path::{Path, PathBuf};

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;

use super::{Call, PathBase, Prepared, ToolEnv, ToolError, ToolOutput, TypedTool};
use crate::local;
use crate::platform::named;
use crate::types::Access;
use crate::types::{Location, ToolKind};

/// Most paths returned.
const MAX_MATCHES: usize = 500;

/// Arguments of `glob`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GlobArgs {
    /// Glob pattern matched against paths relative to `path`, e.g. `**/*.rs` or `src/*.toml`.
    pub(crate) pattern: String,
    /// Directory to search (default: the working directory and the workspace's other folders).
    pub(crate) path: Option<String>,
}

pub(crate) struct Glob;

impl TypedTool for Glob {
    type Args = GlobArgs;
    const NAME: &'static str = "glob";
    const KIND: ToolKind = ToolKind::Search;
    const LABEL: &'static str = "Find files";
    fn description(&self) -> &str {
        "Find files by glob pattern (e.g. `**/*.rs`). Skips files ignored by .gitignore and hidden files."
    }
    fn prepare(&self, args: GlobArgs, place: &PathBase) -> Result<Prepared, ToolError> {
        let roots = place.search_roots(args.path.as_deref());
        let matcher = globset::GlobBuilder::new(&crate::platform::glob_pattern(&args.pattern))
            .literal_separator(false)
            .build()
            .map_err(|e| {
                ToolError::Refused(format!("invalid glob pattern `{}`: {e}", args.pattern))
            })?
            .compile_matcher();
        let shown = place.display_roots(&roots);
        Ok(Prepared {
            title: format!("Find `{}` in {shown}", args.pattern),
            locations: roots
                .iter()
                .map(|root| Location {
                    path: root.clone(),
                    line: None,
                })
                .collect(),
            // The first folder is judged; files in the others are checked one by one as the
            // walk meets them (`unreadable`).
            access: Access::Read(roots[0].clone()),
            call: Box::new(GlobCall {
                roots,
                cwd: place.cwd.clone(),
                matcher,
            }),
        })
    }
}

struct GlobCall {
    /// Never empty.
    roots: Vec<PathBuf>,
    cwd: PathBuf,
    matcher: globset::GlobMatcher,
}

/// A `.gitignore`-aware walk of `root`, also outside git repositories.
pub(crate) fn walker(root: &Path) -> ignore::Walk {
    ignore::WalkBuilder::new(root).require_git(false).build()
}

/// The files under `call`'s folders whose path relative to their folder matches; shown
/// relative to the working directory when inside it, absolute otherwise.
fn find(call: &GlobCall, unreadable: &dyn Fn(&Path) -> bool) -> (Vec<String>, usize) {
    let mut found: Vec<String> = call
        .roots
        .iter()
        .flat_map(|root| walker(root).filter_map(Result::ok).map(move |e| (root, e)))
        .filter(|(_, e)| e.file_type().is_some_and(|t| t.is_file()) && !unreadable(e.path()))
        // The walk opens folders by path: a folder swapped for a link while it ran would list
        // another folder's names as the workspace's. Only files reached without a link count.
        .filter(|(_, e)| local::is_file(e.path()))
        .filter_map(|(root, e)| {
            let rel = e.path().strip_prefix(root).ok()?;
            call.matcher
                .is_match(rel)
                .then(|| named::display(e.path(), &call.cwd))
        })
        .collect();
    found.sort();
    let total = found.len();
    found.truncate(MAX_MATCHES);
    (found, total)
}

impl Call for GlobCall {
    fn run(self: Box<Self>, env: ToolEnv) -> BoxFuture<'static, ToolOutput> {
        Box::pin(async move {
            let unreadable = env.scope.unreadable.clone();
            let search = tokio::task::spawn_blocking(move || find(&self, unreadable.as_ref()));
            let (found, total) = tokio::select! {
                r = search => match r {
                    Ok(r) => r,
                    Err(e) => return ToolOutput::error(format!("search failed: {e}")),
                },
                () = env.cancel.cancelled() => return ToolOutput::error("cancelled"),
            };
            if found.is_empty() {
                return ToolOutput::text("No files matched.");
            }
            let mut text = found.join("\n");
            if total > found.len() {
                text.push_str(&format!(
                    "\n[… {} more matches not shown; narrow the pattern]",
                    total - found.len()
                ));
            }
            ToolOutput::text(text)
        })
    }
}
