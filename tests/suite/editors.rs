//! The editor snippets under `editors/` name the real binary and real flags: each snippet's
//! arguments are run through `tandem … --version`, which clap refuses when a flag is wrong.
//! Every auth method a snippet names is one tandem, started with that snippet's arguments,
//! advertises and accepts; and the CodeCompanion adapter is standalone, so it cannot inherit
//! a preset's auth method (gemini_cli's "oauth-personal") that tandem does not offer.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::common::{Agent, TEST_KEY, Workspace};

fn editors() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("editors")
}

fn snippet(file: &str) -> String {
    std::fs::read_to_string(editors().join(file)).unwrap_or_else(|e| panic!("{file}: {e}"))
}

/// Runs the binary with a snippet's arguments; clap exits 2 on an unknown flag or value.
fn assert_flags_accepted(source: &str, args: &[String]) {
    let out = Command::new(crate::common::tandem_bin())
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
        let doc: Value =
            serde_json::from_str(&snippet(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        let servers = doc["agent_servers"]
            .as_object()
            .unwrap_or_else(|| panic!("{file}: no agent_servers"));
        assert!(!servers.is_empty());
        for (name, server) in servers {
            let args = strings(&server["args"]);
            // The binary on the PATH, or the npm launcher, whose own arguments come first.
            let flags = match server["command"].as_str() {
                Some("tandem") => args,
                Some("npx") => {
                    assert_eq!(args[..2], ["-y", "tandem-acp"], "{file} {name}");
                    args[2..].to_vec()
                }
                other => panic!("{file} {name}: command {other:?}"),
            };
            assert!(server["env"].is_object(), "{file} {name}: env is an object");
            assert_flags_accepted(&format!("{file} {name}"), &flags);
        }
        if file == "zed.json" {
            assert!(
                servers.values().all(|s| s["type"] == "custom"),
                "Zed custom agents are `type: custom`"
            );
        }
    }
}

/// `text` without comments (from `marker` to the end of a line, outside a "string"), so
/// that what a snippet's comments mention is not mistaken for what its code does.
fn code_only(text: &str, marker: &str) -> String {
    let mut code = String::new();
    for line in text.lines() {
        let (mut in_string, mut escaped) = (false, false);
        let mut end = line.len();
        for (i, c) in line.char_indices() {
            match c {
                _ if escaped => escaped = false,
                '\\' if in_string => escaped = true,
                '"' => in_string = !in_string,
                _ if !in_string && line[i..].starts_with(marker) => {
                    end = i;
                    break;
                }
                _ => {}
            }
        }
        code.push_str(&line[..end]);
        code.push('\n');
    }
    code
}

#[test]
fn comments_are_stripped_but_strings_are_kept() {
    let lua = code_only(
        "x = { \"--provider\", \"a\" } -- gemini_cli\n-- extend(\n",
        "--",
    );
    assert_eq!(lua, "x = { \"--provider\", \"a\" } \n\n");
    let elisp = code_only(";; oauth-personal\n(f \"a;b\") ; note\n", ";");
    assert_eq!(elisp, "\n(f \"a;b\") \n");
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

/// The arguments agent-shell's snippet starts tandem with (`:command-params`, none when it
/// gives none).
fn emacs_args(code: &str) -> Vec<String> {
    match code.contains(":command-params") {
        true => quoted_between(code, ":command-params '(", ')'),
        false => Vec::new(),
    }
}

/// The string that follows each `key "` in `code`, e.g. every `auth_method = "…"`.
fn values_after(code: &str, key: &str) -> Vec<String> {
    code.match_indices(key)
        .map(|(i, _)| {
            let rest = &code[i + key.len()..];
            rest[..rest.find('"').unwrap()].to_string()
        })
        .collect()
}

#[test]
fn lua_and_elisp_snippets_use_the_real_binary_and_flags() {
    let codecompanion = code_only(&snippet("neovim-codecompanion.lua"), "--");
    let command = quoted_between(&codecompanion, "default = {", '}');
    assert_eq!(command[0], "tandem");
    assert_flags_accepted("neovim-codecompanion.lua", &command[1..]);

    let avante = code_only(&snippet("neovim-avante.lua"), "--");
    assert!(avante.contains("command = \"tandem\""));
    assert_flags_accepted(
        "neovim-avante.lua",
        &quoted_between(&avante, "args = {", '}'),
    );

    let emacs = code_only(&snippet("emacs-agent-shell.el"), ";");
    assert!(emacs.contains(":command \"tandem\""));
    assert_flags_accepted("emacs-agent-shell.el", &emacs_args(&emacs));
    // Balanced parentheses: the snippet evaluates as pasted.
    let depth = emacs.chars().try_fold(0i32, |d, c| {
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

/// Extending a preset (`adapters.extend("gemini_cli", …)`) inherits its `defaults.auth_method`,
/// and CodeCompanion refuses to connect when the agent does not advertise that method.
#[test]
fn codecompanion_adapter_is_standalone_and_names_its_auth_method() {
    let code = code_only(&snippet("neovim-codecompanion.lua"), "--");
    assert!(
        !code.contains(".extend("),
        "the tandem adapter must not extend a preset: it would inherit the preset's auth method"
    );
    for foreign in ["gemini_cli", "oauth-personal"] {
        assert!(
            !code.contains(foreign),
            "the snippet's code names {foreign}"
        );
    }
    assert!(
        code.contains("type = \"acp\""),
        "a standalone ACP adapter says `type = \"acp\"`"
    );
    assert_eq!(values_after(&code, "auth_method = \""), ["api-key"]);
}

/// avante starts an ACP agent with PATH and the provider's `env` only; without HOME tandem
/// would look for its config and sessions relative to the project.
#[test]
fn avante_passes_home_to_tandem() {
    let code = code_only(&snippet("neovim-avante.lua"), "--");
    let start = code
        .find("env = {")
        .expect("avante's provider has an `env` table");
    let env = &code[start..start + code[start..].find('}').unwrap()];
    assert!(
        env.contains("HOME = os.getenv(\"HOME\")"),
        "avante's `env` must carry HOME: {env}"
    );
}

/// Starts tandem with `args` (and a key), and checks that each of `named` is advertised at
/// `initialize` and accepted by `authenticate`, as the editor will ask.
async fn assert_auth_methods_offered(source: &str, args: &[String], named: &[String]) {
    let ws = Workspace::new();
    let mut env = ws.base_env();
    env.push(("OPENAI_API_KEY".into(), TEST_KEY.into()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut agent = Agent::spawn(&env, &args);
    let init = agent.initialize().await;
    let advertised: Vec<&str> = init["authMethods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    for method in named {
        assert!(
            advertised.contains(&method.as_str()),
            "{source} names auth method {method:?}; `tandem {}` advertises {advertised:?}",
            args.join(" ")
        );
        let answer = agent
            .request("authenticate", json!({"methodId": method}))
            .await;
        assert_eq!(answer["result"], json!({}), "{source}: {answer}");
    }
    agent.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_auth_method_a_snippet_names_is_one_tandem_offers() {
    let codecompanion = code_only(&snippet("neovim-codecompanion.lua"), "--");
    let command = quoted_between(&codecompanion, "default = {", '}');
    assert_auth_methods_offered(
        "neovim-codecompanion.lua",
        &command[1..],
        &values_after(&codecompanion, "auth_method = \""),
    )
    .await;

    // avante's snippet names no method in its code (a key-less login needs none); its comment
    // tells the user which `auth_method` to add with a key, and that one must be real too.
    let avante_text = snippet("neovim-avante.lua");
    let avante = code_only(&avante_text, "--");
    let documented = values_after(&avante_text, "auth_method = \"");
    assert!(
        !documented.is_empty(),
        "the avante snippet says which auth_method to add"
    );
    assert!(values_after(&avante, "auth_method = \"").is_empty());
    assert_auth_methods_offered(
        "neovim-avante.lua",
        &quoted_between(&avante, "args = {", '}'),
        &documented,
    )
    .await;

    let emacs = code_only(&snippet("emacs-agent-shell.el"), ";");
    let named = values_after(&emacs, ":method-id \"");
    assert!(
        !named.is_empty() || !emacs.contains(":needs-authentication t"),
        "`:needs-authentication t` needs an authenticate request naming a method"
    );
    assert_auth_methods_offered("emacs-agent-shell.el", &emacs_args(&emacs), &named).await;
}

#[test]
fn a_wrong_flag_would_be_caught() {
    let out = Command::new(crate::common::tandem_bin())
        .args(["--modle", "x", "--version"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// Every Neovim and Emacs snippet's command line, with the auth methods the snippet names.
fn lua_and_elisp_command_lines() -> Vec<(&'static str, Vec<String>, Vec<String>)> {
    let codecompanion = code_only(&snippet("neovim-codecompanion.lua"), "--");
    let avante = code_only(&snippet("neovim-avante.lua"), "--");
    let emacs = code_only(&snippet("emacs-agent-shell.el"), ";");
    vec![
        (
            "neovim-codecompanion.lua",
            quoted_between(&codecompanion, "default = {", '}')[1..].to_vec(),
            values_after(&codecompanion, "auth_method = \""),
        ),
        (
            "neovim-avante.lua",
            quoted_between(&avante, "args = {", '}'),
            values_after(&avante, "auth_method = \""),
        ),
        (
            "emacs-agent-shell.el",
            emacs_args(&emacs),
            values_after(&emacs, ":method-id \""),
        ),
    ]
}

/// `tandem login ARGS` (with `key` piped in, if any) as a user runs it once, off the runtime
/// that serves the mock model.
async fn log_in(env: &[(String, String)], args: &[&str], key: Option<&str>) {
    let mut env = env.to_vec();
    env.push(("PATH".into(), std::env::var("PATH").unwrap_or_default()));
    let mut args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    if key.is_some() {
        args.push("--key-stdin".into());
    }
    let stdin = key.unwrap_or_default().to_string();
    let (status, _, stderr) = tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        crate::common::run_tandem(
            &["login"].into_iter().chain(args).collect::<Vec<_>>(),
            &env,
            Some(&stdin),
            None,
        )
    })
    .await
    .unwrap();
    assert_eq!(status, 0, "tandem login: {stderr}");
}

/// The snippets need no flags once `tandem login` has run (editors/README.md): started with
/// exactly a snippet's arguments after a login to a server of the user's own, tandem talks
/// to that server with the saved model (and key), and accepts the auth method the snippet
/// names. Flags in a snippet would beat the login: `--provider openai` asks a keyless vLLM
/// server for a key, `--model` forces another model on a keyed login.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_lua_and_elisp_snippet_uses_what_tandem_login_saved() {
    let snippets = lua_and_elisp_command_lines();
    for key in [None, Some(TEST_KEY)] {
        let mock = crate::common::MockModel::start(vec![crate::common::Reply::text(&["OK"])]).await;
        mock.serve_info(
            "/v1/models",
            200,
            json!({"object": "list", "data": [{"id": "saved-model"}]}),
        );
        let ws = Workspace::new();
        let mut env = ws.base_env();
        env.push(("TANDEM_CREDENTIAL_STORE".into(), "file".into()));
        // A keyless vLLM server, or a keyed server of the user's own.
        let provider = if key.is_some() { "openai" } else { "vllm" };
        let login = [
            "--provider",
            provider,
            "--base-url",
            &mock.base_url,
            "--model",
            "saved-model",
        ];
        log_in(&env, &login, key).await;
        for (source, args, methods) in &snippets {
            mock.push(crate::common::Reply::text(&["hello"]));
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let mut agent = Agent::spawn(&env, &args);
            agent.initialize().await;
            for method in methods {
                let answer = agent
                    .request("authenticate", json!({"methodId": method}))
                    .await;
                assert_eq!(
                    answer["result"],
                    json!({}),
                    "{source}, key {key:?}: {answer}"
                );
            }
            let session = agent
                .request(
                    "session/new",
                    json!({"cwd": crate::common::path_str(&ws.project()), "mcpServers": []}),
                )
                .await;
            assert!(
                session.get("error").is_none(),
                "{source}, key {key:?}: {session}"
            );
            let id = session["result"]["sessionId"].as_str().unwrap().to_string();
            let (answer, _) = agent.prompt(&id, "hi").await;
            assert_eq!(
                answer["result"]["stopReason"], "end_turn",
                "{source}: {answer}"
            );
            let sent = mock.requests().last().cloned().unwrap();
            assert_eq!(sent.body["model"], "saved-model", "{source}, key {key:?}");
            let header = sent.authorization();
            match key {
                Some(key) => assert_eq!(header, Some(format!("Bearer {key}")), "{source}"),
                None => assert!(
                    header.as_deref().is_none_or(|h| h.trim() == "Bearer"),
                    "{header:?}"
                ),
            }
            agent.shutdown().await;
        }
    }
}
