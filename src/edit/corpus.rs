//! The edit corpus (`fixtures/edits/`): edit attempts modelled on how models quote files
//! wrongly, each with the file it must produce or the refusal it must get. The test suite
//! checks every case; `cargo bench --bench edits` reports how many land at each tier.
//!
//! A case file holds `[[case]]` tables. An `edit_file` case names one file (`file`, from
//! `files/`, or inline `text`; `eol = "crlf"` and `bom = true` convert it), its
//! replacements (`old`/`new`/`all`, or an `edits` list) and what must happen: `expect` is
//! the tier that must match, with `want` swaps that turn the file into the expected one, or
//! a refusal (`ambiguous` with its `lines`, `not-found`, `empty`, `unchanged`). A patch case
//! has a V4A `patch`, the files `before` it, their state `after` it, and `expect` a tier or
//! a refusal (`invalid`, `missing`, `exists`, `twice`, `anchor`, `not-found`, `ambiguous`).

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use serde::Deserialize;

use super::{Document, EditError, Replacement, Tier, apply_edits, v4a};

/// One attempt and what must come of it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// Unique within the corpus.
    pub name: String,
    /// The file an `edit_file` case edits, under `files/`.
    pub file: Option<String>,
    /// Or its text.
    pub text: Option<String>,
    /// `"crlf"`: the file (and the expected file) end lines with CRLF.
    pub eol: Option<String>,
    /// The file (and the expected file) start with a byte order mark.
    #[serde(default)]
    pub bom: bool,
    /// One replacement: what the model quoted.
    pub old: Option<String>,
    /// What it wrote instead.
    pub new: Option<String>,
    /// `replace_all`.
    #[serde(default)]
    pub all: bool,
    /// Several replacements, in order.
    #[serde(default)]
    pub edits: Vec<Swap>,
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
    pub lines: Vec<usize>,
    /// For an `edit_file` case that applies: swaps (each found once) that turn the file
    /// into the expected one.
    #[serde(default)]
    pub want: Vec<Swap>,
}

/// A text and its replacement.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Swap {
    /// What is there.
    pub old: String,
    /// What goes there.
    pub new: String,
    /// `replace_all` (for `edits`).
    #[serde(default)]
    pub all: bool,
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
    pub text: Option<String>,
    /// Gone.
    #[serde(default)]
    pub deleted: bool,
    /// Start from this file's content before.
    pub from: Option<String>,
    /// Swap this …
    pub old: Option<String>,
    /// … for this.
    pub new: Option<String>,
}

/// The corpus: its cases and the files they name.
pub struct Corpus {
    /// Every case, file by file.
    pub cases: Vec<Case>,
    files: HashMap<String, String>,
}

/// How one case went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Applied at this tier, and the result is the expected one.
    Applied(Tier),
    /// Refused as expected (the refusal's kind).
    Refused(String),
    /// Not applied though it should have been: what happened instead.
    Missed(String),
    /// Applied where it must not be, or with a result other than the expected one: the
    /// worst outcome, which must never happen.
    Wrong(String),
    /// Applied correctly or refused, but not the way the case expects (tier, kind, lines).
    Unexpected(String),
}

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
            cases.extend(parsed.case);
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

    /// Runs one case with tiers up to `max`.
    pub fn run(&self, case: &Case, max: Tier) -> anyhow::Result<Verdict> {
        match &case.patch {
            Some(patch) => self.run_patch(case, patch, max),
            None => self.run_edit(case, max),
        }
    }

    fn run_edit(&self, case: &Case, max: Tier) -> anyhow::Result<Verdict> {
        let (before, expected) = self.edit_files(case)?;
        let doc = Document::from_text(before);
        let result = apply_edits(&doc.text, &Self::replacements(case), max);
        Ok(match (result, expected) {
            (Ok(applied), Some(expected)) => {
                let got = doc.render(&applied.text);
                judge_applied(case, applied.tier(), got == expected, || {
                    diff_note(&expected, &got)
                })
            }
            (Ok(applied), None) => Verdict::Wrong(format!(
                "applied at tier {} where it must be refused as {}",
                applied.tier().name(),
                case.expect
            )),
            (Err((_, error)), expected) => {
                let (kind, lines) = match &error {
                    EditError::Empty => ("empty", Vec::new()),
                    EditError::Unchanged => ("unchanged", Vec::new()),
                    EditError::NotFound(_) => ("not-found", Vec::new()),
                    EditError::Ambiguous(c) => ("ambiguous", c.lines.clone()),
                };
                judge_refused(case, kind, &lines, expected.is_some(), &error.to_string())
            }
        })
    }

    fn run_patch(&self, case: &Case, patch: &str, max: Tier) -> anyhow::Result<Verdict> {
        let mut files: BTreeMap<String, Option<String>> = BTreeMap::new();
        for spec in &case.before {
            let text = self.source(
                spec.file.as_deref(),
                spec.text.as_deref(),
                spec.eol.as_deref(),
                spec.bom,
            )?;
            files.insert(spec.path.clone(), Some(text));
        }
        let expected = if refusal(&case.expect) {
            None
        } else {
            Some(self.expected_after(case, &files)?)
        };
        let parsed = match v4a::parse(patch) {
            Ok(parsed) => parsed,
            Err(e) => {
                return Ok(judge_refused(
                    case,
                    "invalid",
                    &[],
                    expected.is_some(),
                    &e.to_string(),
                ));
            }
        };
        let mut docs: HashMap<String, Option<Document>> = files
            .iter()
            .map(|(p, t)| (p.clone(), t.clone().map(Document::from_text)))
            .collect();
        for op in &parsed.ops {
            docs.entry(op.path().to_string()).or_insert(None);
            if let v4a::FileOp::Update {
                move_to: Some(to), ..
            } = op
            {
                docs.entry(to.clone()).or_insert(None);
            }
        }
        let outcomes = match v4a::apply(&parsed, &docs, max) {
            Ok(outcomes) => outcomes,
            Err(error) => {
                let (kind, lines) = match &error {
                    v4a::PatchError::Missing(_) => ("missing", Vec::new()),
                    v4a::PatchError::Exists(_) => ("exists", Vec::new()),
                    v4a::PatchError::Twice(_) => ("twice", Vec::new()),
                    v4a::PatchError::Anchor { .. } => ("anchor", Vec::new()),
                    v4a::PatchError::NotFound { .. } => ("not-found", Vec::new()),
                    v4a::PatchError::Ambiguous { found, .. } => ("ambiguous", found.lines.clone()),
                    v4a::PatchError::Unreadable(_) => ("unreadable", Vec::new()),
                };
                return Ok(judge_refused(
                    case,
                    kind,
                    &lines,
                    expected.is_some(),
                    &error.to_string(),
                ));
            }
        };
        let tier = outcomes.iter().map(|o| o.tier).max().unwrap_or(Tier::Exact);
        let mut got = files.clone();
        for o in &outcomes {
            match (&o.move_to, &o.after) {
                (Some(to), after) => {
                    got.insert(o.path.clone(), None);
                    got.insert(to.clone(), after.clone());
                }
                (None, after) => {
                    got.insert(o.path.clone(), after.clone());
                }
            }
        }
        got.retain(|_, v| v.is_some());
        Ok(match expected {
            None => Verdict::Wrong(format!(
                "applied at tier {} where it must be refused as {}",
                tier.name(),
                case.expect
            )),
            Some(mut expected) => {
                expected.retain(|_, v| v.is_some());
                judge_applied(case, tier, got == expected, || {
                    format!("expected {expected:?}, got {got:?}")
                })
            }
        })
    }

    fn expected_after(
        &self,
        case: &Case,
        before: &BTreeMap<String, Option<String>>,
    ) -> anyhow::Result<BTreeMap<String, Option<String>>> {
        let mut out = before.clone();
        for spec in &case.after {
            if spec.deleted {
                out.insert(spec.path.clone(), None);
                continue;
            }
            let start = match (&spec.text, &spec.from) {
                (Some(text), _) => text.clone(),
                (None, Some(from)) => before
                    .get(from)
                    .cloned()
                    .flatten()
                    .ok_or_else(|| anyhow::anyhow!("{}: no file {from} before", case.name))?,
                (None, None) => out.get(&spec.path).cloned().flatten().ok_or_else(|| {
                    anyhow::anyhow!("{}: no file {} before", case.name, spec.path)
                })?,
            };
            let text = match (&spec.old, &spec.new) {
                (Some(old), Some(new)) => {
                    swapped(&start, old, new).map_err(|e| anyhow::anyhow!("{}: {e}", case.name))?
                }
                _ => start,
            };
            out.insert(spec.path.clone(), Some(text));
        }
        Ok(out)
    }
}

/// Whether `expect` names a refusal rather than a tier.
fn refusal(expect: &str) -> bool {
    !Tier::ALL.iter().any(|t| t.name() == expect)
}

fn judge_applied(case: &Case, tier: Tier, same: bool, diff: impl Fn() -> String) -> Verdict {
    if !same {
        return Verdict::Wrong(format!(
            "applied at tier {} with the wrong result: {}",
            tier.name(),
            diff()
        ));
    }
    if tier.name() != case.expect {
        return Verdict::Unexpected(format!(
            "applied correctly, but at tier {} where the case expects {}",
            tier.name(),
            case.expect
        ));
    }
    Verdict::Applied(tier)
}

fn judge_refused(
    case: &Case,
    kind: &str,
    lines: &[usize],
    should_apply: bool,
    message: &str,
) -> Verdict {
    if should_apply {
        return Verdict::Missed(format!("refused as {kind}: {message}"));
    }
    if kind != case.expect {
        return Verdict::Unexpected(format!(
            "refused as {kind} where the case expects {}: {message}",
            case.expect
        ));
    }
    if !case.lines.is_empty() && case.lines != lines {
        return Verdict::Unexpected(format!(
            "refused naming lines {lines:?} where the case expects {:?}",
            case.lines
        ));
    }
    Verdict::Refused(kind.to_string())
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

/// Where two texts first differ, briefly.
fn diff_note(expected: &str, got: &str) -> String {
    let at = expected
        .char_indices()
        .zip(got.chars())
        .find(|((_, a), b)| a != b)
        .map_or(expected.len().min(got.len()), |((i, _), _)| i);
    let show = |s: &str| {
        s.get(at.saturating_sub(40)..(at + 60).min(s.len()))
            .unwrap_or("")
            .to_string()
    };
    format!(
        "first difference at byte {at}: expected {:?}, got {:?}",
        show(expected),
        show(got)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn corpus() -> Corpus {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/edits");
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
                Ok(Verdict::Applied(_) | Verdict::Refused(_)) => {}
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
