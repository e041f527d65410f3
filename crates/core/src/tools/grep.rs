//! `grep`: lines matching a regular expression, respecting `.gitignore`, with ripgrep's
//! searcher (binary files skipped).

use std::path::{Path, PathBuf};

use futures::future::BoxFuture;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::sinks::UTF8;
use grep_searcher::{BinaryDetection, SearcherBuilder};
use schemars::JsonSchema;
use serde::Deserialize;

use super::{Call, PathBase, Prepared, ToolEnv, ToolError, ToolOutput, TypedTool, glob::walker};
use crate::local;
use crate::platform::named;
use crate::types::{Access, Location, ToolKind};

/// Most matching lines returned.
const MAX_MATCHES: usize = 200;
/// Longest matching line kept whole.
const MAX_LINE: usize = 300;

/// Arguments of `grep`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GrepArgs {
    /// Regular expression (Rust regex syntax).
    pub(crate) pattern: String,
    /// File or directory to search (default: the working directory and the workspace's other
    /// folders).
    pub(crate) path: Option<String>,
    /// Only search files whose relative path matches this glob, e.g. `*.rs`.
    pub(crate) glob: Option<String>,
    /// Match regardless of case.
    #[serde(default)]
    pub(crate) case_insensitive: bool,
}

pub(crate) struct Grep;

impl TypedTool for Grep {
    type Args = GrepArgs;
    const NAME: &'static str = "grep";
    const KIND: ToolKind = ToolKind::Search;
    const LABEL: &'static str = "Search files";
    fn description(&self) -> &str {
        "Search file contents with a regular expression. Returns `path:line: text` for each match; skips ignored and binary files."
    }
    fn prepare(&self, args: GrepArgs, place: &PathBase) -> Result<Prepared, ToolError> {
        let call = GrepCall::new(args, place).map_err(ToolError::Refused)?;
        let shown = place.display_roots(&call.roots);
        Ok(Prepared {
            title: format!("Search `{}` in {shown}", call.pattern),
            locations: call
                .roots
                .iter()
                .map(|root| Location {
                    path: root.clone(),
                    line: None,
                })
                .collect(),
            // The first folder is judged; files in the others are checked one by one as the
            // search meets them (`unreadable`).
            access: Access::Read(call.roots[0].clone()),
            call: Box::new(call),
        })
    }
}

/// Runs a search outside a session, as the tool would (the in-process benchmarks use it):
/// the matching lines and whether it stopped at the match limit.
pub fn search_now(args: GrepArgs, cwd: &Path) -> Result<(Vec<String>, bool), String> {
    let place = PathBase {
        cwd: cwd.to_path_buf(),
        home: None,
        folders: Vec::new(),
    };
    Ok(search(&GrepCall::new(args, &place)?, &|_| false))
}

struct GrepCall {
    /// Never empty.
    roots: Vec<PathBuf>,
    cwd: PathBuf,
    pattern: String,
    matcher: RegexMatcher,
    filter: Option<globset::GlobMatcher>,
}

impl GrepCall {
    fn new(args: GrepArgs, place: &PathBase) -> Result<Self, String> {
        let roots = place.search_roots(args.path.as_deref());
        let matcher = RegexMatcherBuilder::new()
            .case_insensitive(args.case_insensitive)
            .build(&args.pattern)
            .map_err(|e| format!("invalid regular expression `{}`: {e}", args.pattern))?;
        let filter = match &args.glob {
            Some(g) => Some(
                globset::GlobBuilder::new(&crate::platform::glob_pattern(g))
                    .literal_separator(false)
                    .build()
                    .map_err(|e| format!("invalid glob `{g}`: {e}"))?
                    .compile_matcher(),
            ),
            None => None,
        };
        Ok(GrepCall {
            roots,
            cwd: place.cwd.clone(),
            pattern: args.pattern,
            matcher,
            filter,
        })
    }
}

fn search(call: &GrepCall, unreadable: &dyn Fn(&Path) -> bool) -> (Vec<String>, bool) {
    let mut searcher = SearcherBuilder::new()
        .binary_detection(BinaryDetection::quit(0))
        .line_number(true)
        .build();
    let mut hits = Vec::new();
    let mut more = false;
    let entries = call
        .roots
        .iter()
        .flat_map(|root| walker(root).filter_map(Result::ok).map(move |e| (root, e)));
    for (root, entry) in entries {
        if !entry.file_type().is_some_and(|t| t.is_file()) || unreadable(entry.path()) {
            continue;
        }
        let rel = entry.path().strip_prefix(root).unwrap_or(entry.path());
        if let Some(filter) = &call.filter
            && !filter.is_match(rel)
            && !rel.file_name().is_some_and(|n| filter.is_match(n))
        {
            continue;
        }
        // Opened exactly: a name (or a folder on the way) swapped for a link since the walk
        // met it is skipped, never followed out of the folder that was judged.
        let Ok(file) = local::open(entry.path()) else {
            continue;
        };
        let shown = named::display(entry.path(), &call.cwd);
        let _ = searcher.search_file(
            &call.matcher,
            &file,
            UTF8(|line, text| {
                if hits.len() >= MAX_MATCHES {
                    more = true;
                    return Ok(false);
                }
                let text = text.trim_end();
                let text: String = if text.chars().count() > MAX_LINE {
                    text.chars().take(MAX_LINE).chain(" […]".chars()).collect()
                } else {
                    text.to_string()
                };
                hits.push(format!("{shown}:{line}: {text}"));
                Ok(true)
            }),
        );
        if more {
            break;
        }
    }
    (hits, more)
}

impl Call for GrepCall {
    fn run(self: Box<Self>, env: ToolEnv) -> BoxFuture<'static, ToolOutput> {
        Box::pin(async move {
            let unreadable = env.scope.unreadable.clone();
            let task = tokio::task::spawn_blocking(move || search(&self, unreadable.as_ref()));
            let (hits, more) = tokio::select! {
                r = task => match r {
                    Ok(r) => r,
                    Err(e) => return ToolOutput::error(format!("search failed: {e}")),
                },
                () = env.cancel.cancelled() => return ToolOutput::error("cancelled"),
            };
            if hits.is_empty() {
                return ToolOutput::text("No matches.");
            }
            let mut text = hits.join("\n");
            if more {
                text.push_str(&format!(
                    "\n[stopped at {MAX_MATCHES} matches; narrow the pattern or path]"
                ));
            }
            ToolOutput::text(text)
        })
    }
}
