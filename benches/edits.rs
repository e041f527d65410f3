//! The edit corpus as a benchmark of where edits land (not of speed): for every case under
//! `fixtures/edits/`, tried exact-only and with every tier, how many apply correctly at each
//! tier, how many are refused as they should be (ambiguous ones among them), how many are
//! missed, and how many land in the wrong place or wrongly, which must be none.
//!
//!     cargo bench --bench edits
//!
//! Exits with an error when any case lands wrongly.
// The report is what this program is for.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use tandem_core::edit::Tier;
use tandem_core::edit::corpus::{CaseOutcome, Corpus};

/// Counts for one kind of case under one setting.
#[derive(Default)]
struct Tally {
    cases: usize,
    applied: BTreeMap<Tier, usize>,
    refused: usize,
    ambiguous: usize,
    missed: usize,
    wrong: Vec<String>,
    unexpected: usize,
}

impl Tally {
    fn add(&mut self, name: &str, expects_refusal: bool, verdict: CaseOutcome) {
        self.cases += 1;
        match verdict {
            CaseOutcome::Applied(tier) => *self.applied.entry(tier).or_default() += 1,
            CaseOutcome::Refused(kind) => {
                self.refused += 1;
                if kind == "ambiguous" {
                    self.ambiguous += 1;
                }
            }
            CaseOutcome::Missed(_) => self.missed += 1,
            CaseOutcome::Wrong(why) => self.wrong.push(format!("{name}: {why}")),
            // Exact-only: an ambiguity the lenient tiers would find is "not found" here.
            CaseOutcome::Unexpected(_) if expects_refusal => self.refused += 1,
            CaseOutcome::Unexpected(_) => self.unexpected += 1,
        }
    }

    fn applied(&self) -> usize {
        self.applied.values().sum()
    }
}

fn share(n: usize, of: usize) -> String {
    if of == 0 {
        return "-".into();
    }
    format!("{n} ({:.1}%)", 100.0 * n as f64 / of as f64)
}

fn table(title: &str, exact: &Tally, tiered: &Tally) -> String {
    let mut out = format!(
        "\n### {title}: {} cases\n\n| | exact only | tiered |\n|---|---|---|\n",
        tiered.cases
    );
    let row = |label: &str, a: usize, b: usize| {
        format!(
            "| {label} | {} | {} |\n",
            share(a, exact.cases),
            share(b, tiered.cases)
        )
    };
    out.push_str(&row("applied correctly", exact.applied(), tiered.applied()));
    for tier in Tier::ALL {
        let get = |t: &Tally| t.applied.get(&tier).copied().unwrap_or(0);
        out.push_str(&row(
            &format!("… at tier {}", tier.name()),
            get(exact),
            get(tiered),
        ));
    }
    out.push_str(&row(
        "refused as the case expects",
        exact.refused,
        tiered.refused,
    ));
    out.push_str(&row(
        "… as ambiguous, naming the lines",
        exact.ambiguous,
        tiered.ambiguous,
    ));
    out.push_str(&row(
        "not applied (should have been)",
        exact.missed,
        tiered.missed,
    ));
    out.push_str(&row(
        "applied right, at another tier than expected",
        exact.unexpected,
        tiered.unexpected,
    ));
    out.push_str(&row(
        "**wrong place or wrong result**",
        exact.wrong.len(),
        tiered.wrong.len(),
    ));
    out
}

fn main() -> ExitCode {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/edits");
    let corpus = match Corpus::load(&dir) {
        Ok(corpus) => corpus,
        Err(e) => {
            eprintln!("cannot load the corpus: {e}");
            return ExitCode::FAILURE;
        }
    };
    // Keyed by (hand-written adversarial case, patch case, most lenient tier tried).
    let mut tallies: BTreeMap<(bool, bool, Tier), Tally> = BTreeMap::new();
    let started = Instant::now();
    for max in [Tier::Exact, Tier::Punctuation] {
        for case in &corpus.cases {
            let verdict = match corpus.run(case, max) {
                Ok(verdict) => verdict,
                Err(e) => {
                    eprintln!("{}: the case is broken: {e}", case.name);
                    return ExitCode::FAILURE;
                }
            };
            let expects_refusal = !Tier::ALL.iter().any(|t| t.name() == case.expect);
            let adversarial = case.group.ends_with("-adversarial");
            tallies
                .entry((adversarial, case.patch.is_some(), max))
                .or_default()
                .add(&case.name, expects_refusal, verdict);
        }
    }
    let elapsed = started.elapsed();
    let get = |adversarial: bool, patch: bool, max: Tier| tallies.get(&(adversarial, patch, max));
    let mut report = String::from("## Edit corpus (fixtures/edits/)\n");
    for (adversarial, patch, title) in [
        (false, false, "edit_file"),
        (false, true, "apply_patch (V4A)"),
        (true, false, "edit_file, hand-written adversarial cases"),
        (
            true,
            true,
            "apply_patch (V4A), hand-written adversarial cases",
        ),
    ] {
        let (Some(exact), Some(tiered)) = (
            get(adversarial, patch, Tier::Exact),
            get(adversarial, patch, Tier::Punctuation),
        ) else {
            continue;
        };
        report.push_str(&table(title, exact, tiered));
    }
    report.push_str(&format!(
        "\nBoth settings over all {} cases took {:.1} ms.\n",
        corpus.cases.len(),
        elapsed.as_secs_f64() * 1000.0
    ));
    println!("{report}");
    let wrong: Vec<&String> = tallies
        .iter()
        .filter(|((_, _, max), _)| *max == Tier::Punctuation)
        .flat_map(|(_, t)| &t.wrong)
        .collect();
    if wrong.is_empty() {
        ExitCode::SUCCESS
    } else {
        for w in wrong {
            eprintln!("WRONG: {w}");
        }
        ExitCode::FAILURE
    }
}
