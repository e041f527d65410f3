//! `tandem --help` and each subcommand's help explain themselves: examples, exit statuses and
//! every option a CI script needs; `--version` prints the crate version.

use std::process::Command;

fn help(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_tandem"))
        .args(args)
        .arg("--help")
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?} --help failed");
    assert!(out.stderr.is_empty(), "help goes to stdout only");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn every_help_has_examples() {
    for args in [&[][..], &["exec"], &["doctor"]] {
        let text = help(args);
        assert!(text.contains("Examples:\n  tandem"), "{args:?}:\n{text}");
        assert!(text.contains("Usage: tandem"), "{args:?}:\n{text}");
    }
}

#[test]
fn exec_help_names_every_option_and_exit_status() {
    let text = help(&["exec"]);
    for option in [
        "--mode",
        "--cwd",
        "--model",
        "--output",
        "--max-turns",
        "--timeout",
        "--session",
        "ndjson",
        "read-only",
    ] {
        assert!(text.contains(option), "exec --help lacks {option}:\n{text}");
    }
    for status in [
        "0 when", "1 on", "2 on", "3 when", "4 when", "5 when", "130 when",
    ] {
        assert!(
            text.contains(status),
            "exec --help lacks `{status}`:\n{text}"
        );
    }
}

#[test]
fn version_prints_the_crate_version() {
    let out = Command::new(env!("CARGO_BIN_EXE_tandem"))
        .arg("--version")
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8(out.stdout).unwrap().trim(),
        format!("tandem {}", env!("CARGO_PKG_VERSION"))
    );
}
