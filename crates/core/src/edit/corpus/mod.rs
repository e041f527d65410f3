//! The edit corpus (`fixtures/edits/`): edit attempts modelled on how models quote files
//! wrongly, each with the file it must produce or the refusal it must get. The test suite
//! checks every case; `cargo bench --bench edits` reports how many land at each tier.
//!
//! A case file holds `[[case]]` tables. An `edit_file` case names one file (`file`, from
//! `files/`, or inline `text`; `eol = "crlf"` and `bom = true` convert it), its
//! replacements (`old`/`new`/`all`, or an `edits` list) and what must happen: `expect` is
//! the tier that must match, with `want` swaps that turn the file into the expected one, or
//! a refusal (`ambiguous` with its `lines`, `not-found`, `empty`, `unchanged`, and
//! `not-applied` for a quote found whose replacement would not change the file as asked).
//! Files named `*-adversarial.toml` hold hand-written cases where a wrong place or a false
//! success is possible; the benchmark reports them on their own. A patch case
//! has a V4A `patch`, the files `before` it, their state `after` it, and `expect` a tier or
//! a refusal (`invalid`, `missing`, `exists`, `twice`, `anchor`, `not-found`, `ambiguous`).

use std::collections::HashMap;
use std::path::Path;

use serde::Deserialize;

use super::{Replacement, Tier};

/// One attempt and what must come of it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// Unique within the corpus.
    pub name: String,
    /// The file an `edit_file` case edits, under `files/`.
    pub file: Option<String>,
    /// Or its text.
    pub(crate) text: Option<String>,
    /// `"crlf"`: the file (and the expected file) end lines with CRLF.
    pub(crate) eol: Option<String>,
    /// The file (and the expected file) start with a byte order mark.
    #[serde(default)]
    pub(crate) bom: bool,
    /// One replacement: what the model quoted.
    pub(crate) old: Option<String>,
    /// What it wrote instead.
    pub(crate) new: Option<String>,
    /// `replace_all`.
    #[serde(default)]
    pub(crate) all: bool,
    /// Several replacements, in order.
    #[serde(default)]
    pub(crate) edits: Vec<Swap>,
    /// A V4A patch.
    pub patch: Option<String>,
    /// The files before the patch.
    #[serde(default)]
    pub before: Vec<FileSpec>,
    /// What the files must be after it.
    #[serde(default)]
    pub after: Vec<AfterSpec>,
    /// A tier name, or the refusal.
    pub expect: String,
    /// For `ambiguous`: the candidate lines the refusal names.
    #[serde(default)]
    pub(crate) lines: Vec<usize>,
    /// For an `edit_file` case that applies: swaps (each found once) that turn the file
    /// into the expected one.
    #[serde(default)]
    pub(crate) want: Vec<Swap>,
    /// The case file it came from, without `.toml` (set when the corpus is read).
    #[serde(skip)]
    pub group: String,
}

/// A text and its replacement.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Swap {
    /// What is there.
    pub(crate) old: String,
    /// What goes there.
    pub(crate) new: String,
    /// `replace_all` (for `edits`).
    #[serde(default)]
    pub(crate) all: bool,
}

/// A file before a patch.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileSpec {
    /// Its path in the workspace.
    pub path: String,
    /// Its content from `files/`.
    pub file: Option<String>,
    /// Or inline.
    pub text: Option<String>,
    /// `"crlf"` to convert it.
    pub eol: Option<String>,
    /// A byte order mark.
    #[serde(default)]
    pub bom: bool,
}

/// A file after a patch: a whole `text`, `deleted`, or swaps applied to its content before
/// (or to the content of `from`, for a moved file).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AfterSpec {
    /// Its path.
    pub path: String,
    /// The whole text.
    pub(crate) text: Option<String>,
    /// Gone.
    #[serde(default)]
    pub deleted: bool,
    /// Start from this file's content before.
    pub(crate) from: Option<String>,
    /// Swap this …
    pub(crate) old: Option<String>,
    /// … for this.
    pub(crate) new: Option<String>,
}

/// The corpus: its cases and the files they name.
pub struct Corpus {
    /// Every case, file by file.
    pub cases: Vec<Case>,
    files: HashMap<String, String>,
}

mod run;

pub use run::CaseOutcome;

impl Corpus {
    /// Reads every `*.toml` in `dir` and the files under `dir/files/`.
    pub fn load(dir: &Path) -> anyhow::Result<Corpus> {
        let mut files = HashMap::new();
        for entry in std::fs::read_dir(dir.join("files"))? {
            let path = entry?.path();
            if let Some(name) = path.file_name().and_then(|n| n.to_str()) {
                files.insert(name.to_string(), std::fs::read_to_string(&path)?);
            }
        }
        let mut names: Vec<_> = std::fs::read_dir(dir)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "toml"))
            .collect();
        names.sort();
        #[derive(Deserialize)]
        struct CaseFile {
            case: Vec<Case>,
        }
        let mut cases = Vec::new();
        for path in names {
            let parsed: CaseFile = toml::from_str(&std::fs::read_to_string(&path)?)
                .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
            let group = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            cases.extend(parsed.case.into_iter().map(|case| Case {
                group: group.clone(),
                ..case
            }));
        }
        Ok(Corpus { cases, files })
    }

    /// The text a case's file starts as (for the stdio sample, which serves it).
    pub fn source(
        &self,
        file: Option<&str>,
        text: Option<&str>,
        eol: Option<&str>,
        bom: bool,
    ) -> anyhow::Result<String> {
        let raw = match (file, text) {
            (Some(name), None) => self
                .files
                .get(name)
                .cloned()
                .ok_or_else(|| anyhow::anyhow!("no file {name} under files/"))?,
            (None, Some(text)) => text.to_string(),
            _ => anyhow::bail!("give either `file` or `text`"),
        };
        let converted = convert(&raw, eol);
        Ok(if bom {
            format!("\u{FEFF}{converted}")
        } else {
            converted
        })
    }

    /// The file an `edit_file` case starts from, and the one it must end as (`None` for a
    /// refusal).
    pub fn edit_files(&self, case: &Case) -> anyhow::Result<(String, Option<String>)> {
        let before = self.source(
            case.file.as_deref(),
            case.text.as_deref(),
            case.eol.as_deref(),
            case.bom,
        )?;
        if refusal(&case.expect) {
            return Ok((before, None));
        }
        let mut expected = before.clone();
        for swap in &case.want {
            expected = swapped(
                &expected,
                &convert(&swap.old, case.eol.as_deref()),
                &convert(&swap.new, case.eol.as_deref()),
            )?;
        }
        Ok((before, Some(expected)))
    }

    /// The replacements an `edit_file` case makes.
    pub fn replacements(case: &Case) -> Vec<Replacement> {
        match (&case.old, &case.new) {
            (Some(old), Some(new)) => vec![Replacement {
                old: old.clone(),
                new: new.clone(),
                all: case.all,
            }],
            _ => case
                .edits
                .iter()
                .map(|s| Replacement {
                    old: s.old.clone(),
                    new: s.new.clone(),
                    all: s.all,
                })
                .collect(),
        }
    }
}

/// Whether `expect` names a refusal rather than a tier.
fn refusal(expect: &str) -> bool {
    !Tier::ALL.iter().any(|t| t.name() == expect)
}

/// `text` in the line ends `eol` names.
fn convert(text: &str, eol: Option<&str>) -> String {
    match eol {
        Some("crlf") => text.replace("\r\n", "\n").replace('\n', "\r\n"),
        _ => text.to_string(),
    }
}

/// `text` with its one `old` swapped for `new`.
fn swapped(text: &str, old: &str, new: &str) -> anyhow::Result<String> {
    match text.matches(old).count() {
        1 => Ok(text.replacen(old, new, 1)),
        n => anyhow::bail!("a `want` text must be found exactly once, found {n} times: {old:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn corpus() -> Corpus {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/edits");
        Corpus::load(&dir).unwrap()
    }

    #[test]
    fn every_case_lands_or_is_refused_as_it_expects() {
        let corpus = corpus();
        let mut names = std::collections::HashSet::new();
        let mut failures = Vec::new();
        for case in &corpus.cases {
            assert!(
                names.insert(case.name.clone()),
                "two cases named {}",
                case.name
            );
            match corpus.run(case, Tier::Punctuation) {
                Ok(CaseOutcome::Applied(_) | CaseOutcome::Refused(_)) => {}
                Ok(other) => failures.push(format!("{}: {other:?}", case.name)),
                Err(e) => failures.push(format!("{}: the case is broken: {e}", case.name)),
            }
        }
        assert!(
            failures.is_empty(),
            "{} failing cases:\n{}",
            failures.len(),
            failures.join("\n")
        );
    }

    #[test]
    fn the_corpus_is_large_enough() {
        let corpus = corpus();
        let patches = corpus.cases.iter().filter(|c| c.patch.is_some()).count();
        let edits = corpus.cases.len() - patches;
        assert!(edits >= 150, "{edits} edit_file cases");
        assert!(patches >= 30, "{patches} patches");
    }
}
