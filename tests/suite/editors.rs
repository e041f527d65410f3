//! The editor snippets under `editors/` name the real binary and real flags: each snippet's
//! arguments are run through `tandem … --version`, which clap refuses when a flag is wrong.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

fn editors() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("editors")
}

/// Runs the binary with a snippet's arguments; clap exits 2 on an unknown flag or value.
fn assert_flags_accepted(source: &str, args: &[String]) {
    let out = Command::new(env!("CARGO_BIN_EXE_tandem"))
        .args(args)
        .arg("--version")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{source}: `tandem {}` is refused: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn json_snippets_parse_and_use_real_flags() {
    for file in ["zed.json", "jetbrains-acp.json"] {
        let text = std::fs::read_to_string(editors().join(file)).unwrap();
        let doc: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
        let servers = doc["agent_servers"]
            .as_object()
            .unwrap_or_else(|| panic!("{file}: no agent_servers"));
        assert!(!servers.is_empty());
        for (name, server) in servers {
            assert_eq!(server["command"], "tandem", "{file} {name}");
            assert!(server["env"].is_object(), "{file} {name}: env is an object");
            assert_flags_accepted(&format!("{file} {name}"), &strings(&server["args"]));
        }
        if file == "zed.json" {
            assert!(
                servers.values().all(|s| s["type"] == "custom"),
                "Zed custom agents are `type: custom`"
            );
        }
    }
}

/// The quoted strings in `text` between `open` and the matching `close`.
fn quoted_between(text: &str, open: &str, close: char) -> Vec<String> {
    let start = text
        .find(open)
        .unwrap_or_else(|| panic!("`{open}` not found"))
        + open.len();
    let end = start + text[start..].find(close).unwrap();
    text[start..end]
        .split('"')
        .skip(1)
        .step_by(2)
        .map(String::from)
        .collect()
}

#[test]
fn lua_and_elisp_snippets_use_the_real_binary_and_flags() {
    let codecompanion =
        std::fs::read_to_string(editors().join("neovim-codecompanion.lua")).unwrap();
    let command = quoted_between(&codecompanion, "default = {", '}');
    assert_eq!(command[0], "tandem");
    assert_flags_accepted("neovim-codecompanion.lua", &command[1..]);

    let avante = std::fs::read_to_string(editors().join("neovim-avante.lua")).unwrap();
    assert!(avante.contains("command = \"tandem\""));
    assert_flags_accepted(
        "neovim-avante.lua",
        &quoted_between(&avante, "args = {", '}'),
    );

    let emacs = std::fs::read_to_string(editors().join("emacs-agent-shell.el")).unwrap();
    assert!(emacs.contains(":command \"tandem\""));
    assert_flags_accepted(
        "emacs-agent-shell.el",
        &quoted_between(&emacs, ":command-params '(", ')'),
    );
    // Balanced parentheses: the snippet evaluates as pasted.
    let depth = emacs
        .lines()
        .filter(|l| !l.trim_start().starts_with(';'))
        .flat_map(str::chars)
        .try_fold(0i32, |d, c| {
            let d = d + match c {
                '(' => 1,
                ')' => -1,
                _ => 0,
            };
            (d >= 0).then_some(d)
        });
    assert_eq!(
        depth,
        Some(0),
        "unbalanced parentheses in emacs-agent-shell.el"
    );
}

#[test]
fn a_wrong_flag_would_be_caught() {
    let out = Command::new(env!("CARGO_BIN_EXE_tandem"))
        .args(["--modle", "x", "--version"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}
