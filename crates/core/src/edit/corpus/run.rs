//! Running a case and judging what came of it.

use std::collections::{BTreeMap, HashMap};

use super::{Case, Corpus, refusal, swapped};
use crate::edit::{Document, EditError, Tier, apply_edits, v4a};

/// How one case went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CaseOutcome {
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
    /// Runs one case with tiers up to `max`.
    pub fn run(&self, case: &Case, max: Tier) -> anyhow::Result<CaseOutcome> {
        match &case.patch {
            Some(patch) => self.run_patch(case, patch, max),
            None => self.run_edit(case, max),
        }
    }

    fn run_edit(&self, case: &Case, max: Tier) -> anyhow::Result<CaseOutcome> {
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
            (Ok(applied), None) => CaseOutcome::Wrong(format!(
                "applied at tier {} where it must be refused as {}",
                applied.tier().name(),
                case.expect
            )),
            (Err((_, error)), expected) => {
                let (kind, lines) = match &error {
                    EditError::Empty => ("empty", Vec::new()),
                    EditError::Unchanged => ("unchanged", Vec::new()),
                    EditError::NotApplied(_) => ("not-applied", Vec::new()),
                    EditError::NotFound(_) => ("not-found", Vec::new()),
                    EditError::Ambiguous(c) => ("ambiguous", c.lines.clone()),
                };
                judge_refused(case, kind, &lines, expected.is_some(), &error.to_string())
            }
        })
    }

    fn run_patch(&self, case: &Case, patch: &str, max: Tier) -> anyhow::Result<CaseOutcome> {
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
        let outcomes = match v4a::apply(&parsed, &documents(&files, &parsed), max) {
            Ok(outcomes) => outcomes,
            Err(error) => {
                let (kind, lines) = patch_refusal(&error);
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
            None => CaseOutcome::Wrong(format!(
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

fn judge_applied(case: &Case, tier: Tier, same: bool, diff: impl Fn() -> String) -> CaseOutcome {
    if !same {
        return CaseOutcome::Wrong(format!(
            "applied at tier {} with the wrong result: {}",
            tier.name(),
            diff()
        ));
    }
    if tier.name() != case.expect {
        return CaseOutcome::Unexpected(format!(
            "applied correctly, but at tier {} where the case expects {}",
            tier.name(),
            case.expect
        ));
    }
    CaseOutcome::Applied(tier)
}

fn judge_refused(
    case: &Case,
    kind: &str,
    lines: &[usize],
    should_apply: bool,
    message: &str,
) -> CaseOutcome {
    if should_apply {
        return CaseOutcome::Missed(format!("refused as {kind}: {message}"));
    }
    if kind != case.expect {
        return CaseOutcome::Unexpected(format!(
            "refused as {kind} where the case expects {}: {message}",
            case.expect
        ));
    }
    if !case.lines.is_empty() && case.lines != lines {
        return CaseOutcome::Unexpected(format!(
            "refused naming lines {lines:?} where the case expects {:?}",
            case.lines
        ));
    }
    CaseOutcome::Refused(kind.to_string())
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

/// The documents a patch reads: every file of the case, and `None` for each other path the
/// patch names.
fn documents(
    files: &BTreeMap<String, Option<String>>,
    parsed: &v4a::Patch,
) -> HashMap<String, Option<Document>> {
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
    docs
}

/// A patch's refusal as the corpus names it, with the lines it names.
fn patch_refusal(error: &v4a::PatchError) -> (&'static str, Vec<usize>) {
    match error {
        v4a::PatchError::Missing(_) => ("missing", Vec::new()),
        v4a::PatchError::Exists(_) => ("exists", Vec::new()),
        v4a::PatchError::Twice(_) => ("twice", Vec::new()),
        v4a::PatchError::Anchor { .. } => ("anchor", Vec::new()),
        v4a::PatchError::NotFound { .. } => ("not-found", Vec::new()),
        v4a::PatchError::Ambiguous { found, .. } => ("ambiguous", found.lines.clone()),
    }
}
