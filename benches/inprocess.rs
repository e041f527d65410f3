//! In-process benchmarks (criterion): the parts of tandem whose cost grows with the user's
//! data rather than with the protocol. Run with `cargo bench --bench inprocess`.
//!
//! - `grep/50k_files`: the `grep` tool over a 50,000-file tree for a pattern found once,
//!   so every file is opened (the walk honours .gitignore like the tool does).
//! - `transcript/read_{2000,20000}`: parsing a stored session of that many messages, the
//!   first step of `session/load`.
//! - `permission/parse_2kb` and `permission/judge_2kb`: taking a 2 KB compound command line
//!   apart with the shell parser, and the whole permission decision on it (rules, a grant
//!   per command), which every `run_command` call pays before it runs or asks;
//!   `permission/parse_typical` the same for a one-line pipeline.
//!
//! Whole-process figures (start-up, streaming, session/load over stdio, tool round trips)
//! are in `benches/process.py`.

use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;

fn tree(root: &Path, files: usize) {
    for i in 0..files {
        let dir = root.join(format!("crate{}/src/mod{}", i % 50, i % 20));
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
        let mut text = String::new();
        for line in 0..30 {
            text.push_str(&format!("fn item_{i}_{line}() -> u32 {{ {line} }}\n"));
        }
        if i == files / 2 {
            text.push_str("// the needle: unmistakable_marker_42\n");
        }
        std::fs::write(dir.join(format!("file{i}.rs")), text).unwrap_or_else(|e| panic!("{e}"));
    }
}

fn grep(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    tree(dir.path(), 50_000);
    let mut group = c.benchmark_group("grep");
    group.sample_size(10);
    group.bench_function("50k_files", |b| {
        b.iter(|| {
            let args = serde_json::from_value(json!({"pattern": "unmistakable_marker_\\d+"}))
                .unwrap_or_else(|e| panic!("{e}"));
            let (hits, _) = tandem_core::tools::grep::search_now(args, dir.path())
                .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(hits.len(), 1);
        })
    });
    group.finish();
}

fn transcript(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut group = c.benchmark_group("transcript");
    for messages in [2_000usize, 20_000] {
        let path = dir.path().join(format!("s{messages}.jsonl"));
        let mut text = String::new();
        let at = "2026-11-21T06:00:00.000Z";
        text.push_str(
            &json!({"v": 1, "at": at, "type": "meta", "id": "s", "cwd": "/tmp"}).to_string(),
        );
        text.push('\n');
        let words = "the quick brown fox jumps over the lazy dog ".repeat(5);
        for i in 0..messages {
            let record = match i % 3 {
                0 => json!({"v": 1, "at": at, "type": "user", "parts": [{"text": words}]}),
                1 => {
                    json!({"v": 1, "at": at, "type": "assistant", "text": words, "reasoning": words,
                            "tool_calls": [{"id": format!("c{i}"), "name": "read_file",
                                            "arguments": "{\"path\": \"src/lib.rs\"}"}]})
                }
                _ => {
                    json!({"v": 1, "at": at, "type": "tool_result", "call_id": format!("c{}", i - 1),
                            "content": words})
                }
            };
            text.push_str(&record.to_string());
            text.push('\n');
        }
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("{e}"));
        group.bench_function(format!("read_{messages}"), |b| {
            b.iter(|| {
                let lines =
                    tandem_core::store::transcript::read(&path).unwrap_or_else(|e| panic!("{e}"));
                assert_eq!(lines.len(), messages + 1);
            })
        });
    }
    group.finish();
}

/// A compound line of about 2 KB: pipes, `&&`, `;`, a subshell, quotes and redirections, as
/// an agent writes when it chains a build, tests and a search. (No variable: a word whose
/// value is unknown may name a folder outside the project, so it always asks.)
fn compound_line() -> String {
    let piece = "(cd crates/core && cargo test --all -- --nocapture 2>&1) | grep -v 'warning: unused' | tail -n 40; git status --short && echo \"done: all\"; ";
    let mut line = String::new();
    while line.len() < 2048 {
        line.push_str(piece);
    }
    line
}

fn permission(c: &mut Criterion) {
    use tandem_permission::{Grants, Policy, Protected, Rules, Workspace, shell};
    let line = compound_line();
    let mut group = c.benchmark_group("permission");
    group.bench_function("parse_2kb", |b| {
        b.iter(|| {
            let parsed = shell::parse(std::hint::black_box(&line));
            assert!(parsed.hazards.is_empty());
        })
    });
    let typical = "cargo test --all 2>&1 | tail -n 20";
    group.bench_function("parse_typical", |b| {
        b.iter(|| {
            let parsed = shell::parse(std::hint::black_box(typical));
            assert_eq!(parsed.commands.len(), 2);
        })
    });
    let root = std::env::temp_dir();
    let policy = Policy {
        rules: Rules::default(),
        workspace: Workspace::new(root.clone(), Vec::new(), None),
        protected: Protected::default(),
        grammar: shell::Grammar::Posix,
        sandbox: None,
    };
    let access = tandem_types::Access::Execute {
        command: line.clone(),
        cwd: root.clone(),
        outside_sandbox: None,
    };
    let mode = tandem_types::Mode::Ask;
    let mut grants = Grants::default();
    let asked = policy.judge("run_command", &access, mode, &grants);
    grants.remember(&asked.offer.allow_always.unwrap_or_default(), true);
    group.bench_function("judge_2kb", |b| {
        b.iter(|| {
            let judged = policy.judge("run_command", std::hint::black_box(&access), mode, &grants);
            assert_eq!(judged.decision, tandem_permission::Decision::Allow);
        })
    });
    // With a deny rule every command the line may reach is matched against it.
    let rule = tandem_config::permissions::Rule {
        effect: tandem_config::permissions::RuleEffect::Deny,
        text: "run_command(git push:*)".into(),
        target: tandem_config::permissions::parse_rule("run_command(git push:*)")
            .unwrap_or_else(|e| panic!("{e}")),
        source: root.join("config.toml"),
    };
    let denying = Policy {
        rules: Rules::new([rule], &root, None),
        ..policy
    };
    group.bench_function("judge_2kb_deny_rule", |b| {
        b.iter(|| {
            let judged = denying.judge("run_command", std::hint::black_box(&access), mode, &grants);
            assert_eq!(judged.decision, tandem_permission::Decision::Allow);
        })
    });
    // A hostile line: wrappers nested eight deep around a long command string, which a deny
    // rule must read through (a review once found this took seconds at 80 KB).
    for kb in [2usize, 40] {
        let words = "a ".repeat(kb * 512);
        let hostile = format!("{}'{words}'", "sudo ".repeat(8));
        let access = tandem_types::Access::Execute {
            command: hostile,
            cwd: root.clone(),
            outside_sandbox: None,
        };
        group.bench_function(format!("judge_hostile_{kb}kb_deny_rule"), |b| {
            b.iter(|| {
                let judged =
                    denying.judge("run_command", std::hint::black_box(&access), mode, &grants);
                assert_eq!(judged.decision, tandem_permission::Decision::Ask);
            })
        });
    }
    group.finish();
}

criterion_group!(benches, grep, transcript, permission);
criterion_main!(benches);
