//! Tests a build without tandem's test features cannot compile: a plain `cargo test` (no
//! `--all-features`) leaves out the suites that need the test MCP server or the fuzzing
//! harness. So that its summary does not count them as passed or hide them, each group shows
//! as one ignored test whose name and reason say how many tests it stands for; asked for with
//! `--ignored`, it fails and says how to build them. README's test command builds them all.

/// The suites that need a feature, with their test counts as the reasons below state them
/// (checked against the files by `the_counts_left_out_are_the_suites_own`).
const LEFT_OUT: [(&str, usize); 4] = [
    ("mcp", 10),
    ("mcp_restart", 1),
    ("project_trust", 13),
    ("fuzz_corpus", 1),
];

#[cfg(not(feature = "test-mcp-server"))]
#[test]
#[ignore = "left out: 24 tests (suite::mcp 10, suite::mcp_restart 1, suite::project_trust 13) need the test MCP server; run cargo test --locked --all-features"]
fn left_out_24_mcp_and_project_trust_tests() {
    panic!("built without the test-mcp-server feature: run cargo test --locked --all-features");
}

#[cfg(not(feature = "fuzzing"))]
#[test]
#[ignore = "left out: 1 test (suite::fuzz_corpus 1) needs the fuzzing harness; run cargo test --locked --all-features"]
fn left_out_1_fuzz_corpus_test() {
    panic!("built without the fuzzing feature: run cargo test --locked --all-features");
}

#[test]
fn the_counts_left_out_are_the_suites_own() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/suite");
    let this = std::fs::read_to_string(dir.join("left_out.rs")).unwrap();
    for (suite, stated) in LEFT_OUT {
        let source = std::fs::read_to_string(dir.join(format!("{suite}.rs"))).unwrap();
        let tests = source.matches("#[tokio::test").count() + source.matches("#[test]").count();
        assert_eq!(tests, stated, "suite::{suite} has {tests} tests");
        assert!(
            this.contains(&format!("suite::{suite} {stated})"))
                || this.contains(&format!("suite::{suite} {stated},")),
            "the reason names suite::{suite} {stated}"
        );
    }
}
