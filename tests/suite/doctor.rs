//! `tandem doctor`: what it checks, and that it names one cause once, with the fix.

use std::process::Command;

use crate::common::{MockModel, Reply, Workspace};

pub(super) fn doctor(ws: &Workspace, env: &[(String, String)]) -> (i32, String) {
    let out = Command::new(crate::common::tandem_bin())
        .arg("doctor")
        .env_clear()
        .envs(env.iter().cloned())
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .current_dir(ws.project())
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_checks_the_server_and_never_prints_the_key() {
    let mock = MockModel::start(vec![
        Reply::text(&["O"]),
        Reply::status(401, r#"{"error":{"message":"bad key"}}"#),
    ])
    .await;
    mock.serve_info(
        "/v1/models",
        200,
        serde_json::json!({"object":"list","data":[{"id":"mock-model"},{"id":"other"}]}),
    );
    mock.serve_info(
        "/props",
        200,
        serde_json::json!({"default_generation_settings": {"n_ctx": 4096}}),
    );
    let ws = Workspace::new();
    let env = ws.env(&mock);
    let (good, ws, env) = tokio::task::spawn_blocking(move || (doctor(&ws, &env), ws, env))
        .await
        .unwrap();
    mock.serve_info(
        "/v1/models",
        401,
        serde_json::json!({"error":{"message":"bad key"}}),
    );
    let (bad, ws) = tokio::task::spawn_blocking(move || (doctor(&ws, &env), ws))
        .await
        .unwrap();
    assert_eq!(good.0, 0, "{}", good.1);
    #[cfg(target_os = "linux")]
    if crate::suite::sandbox::sandbox_here() {
        assert!(
            good.1
                .contains("✓ commands run in a sandbox (Linux namespaces and Landlock)"),
            "{}",
            good.1
        );
    }
    assert!(
        good.1.contains("✓ GET") && good.1.contains("2 models, including mock-model"),
        "{}",
        good.1
    );
    assert!(
        good.1
            .contains("✓ a one-token chat completion with mock-model works"),
        "{}",
        good.1
    );
    assert!(good.1.contains("✓ an API key is set"), "{}", good.1);
    assert!(
        good.1.contains(
            "✓ context window of mock-model: 4096 tokens, reported by the server: llama.cpp GET /props (n_ctx)"
        ),
        "{}",
        good.1
    );
    let requests = mock.requests();
    assert_eq!(requests[0].body["max_tokens"], 1);
    assert_eq!(bad.0, 1, "{}", bad.1);
    assert!(
        bad.1.contains("refused the request (HTTP 401): bad key")
            && bad
                .1
                .contains("the server rejected the key from OPENAI_API_KEY: correct it"),
        "{}",
        bad.1
    );
    assert_eq!(
        bad.1.matches('✗').count(),
        1,
        "one ✗ for one cause: {}",
        bad.1
    );
    for output in [&good.1, &bad.1] {
        assert!(
            !output.contains(crate::common::TEST_KEY),
            "the key was printed"
        );
    }
    drop(ws);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_host_is_one_cross_naming_it() {
    let ws = Workspace::new();
    let mut env = ws.base_env();
    env.push((
        "OPENAI_BASE_URL".into(),
        "http://no-such-host.invalid/v1".into(),
    ));
    let ((code, out), ws) = tokio::task::spawn_blocking(move || (doctor(&ws, &env), ws))
        .await
        .unwrap();
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("could not resolve host `no-such-host.invalid`"),
        "{out}"
    );
    assert_eq!(out.matches('✗').count(), 1, "one cause, one ✗: {out}");
    // Where it looked for a config file, though there is none.
    let looked = ws.home().join(".config/tandem/config.toml");
    assert!(
        out.contains(&format!("no config file at {}", looked.display())),
        "{out}"
    );
}

#[test]
fn no_key_for_a_hosted_server_points_to_login_and_to_a_local_model() {
    let ws = Workspace::new();
    let (code, out) = doctor(&ws, &ws.base_env());
    assert_eq!(code, 1, "{out}");
    assert_eq!(out.matches('✗').count(), 1, "{out}");
    assert!(out.contains("run `tandem login`"), "{out}");
    assert!(out.contains("--provider ollama"), "{out}");
}

/// README's config once pointed a `pre_tool_use` hook at a script that did not exist: under
/// `sh` that exits 2, which denies every tool call. Doctor names the missing script.
#[test]
fn a_hook_whose_script_is_missing_is_named() {
    let ws = Workspace::new();
    let config = ws.write(
        "home/.config/tandem/config.toml",
        "provider = \"ollama\"\n[[hooks.pre_tool_use]]\ncommand = \"sh ~/.config/tandem/hooks/guard-commands.sh\"\n[[hooks.session_start]]\ncommand = \"git branch --show-current | sed 's/^/on /'\"\n",
    );
    let mut env = ws.base_env();
    env.push(("OPENAI_BASE_URL".into(), "http://127.0.0.1:9/v1".into()));
    let (code, out) = doctor(&ws, &env);
    assert_eq!(code, 1, "{out}");
    let script = ws.home().join(".config/tandem/hooks/guard-commands.sh");
    assert!(
        out.contains(&format!(
            "pre_tool_use hook `sh ~/.config/tandem/hooks/guard-commands.sh`: {} does not exist",
            script.display()
        )),
        "{out}"
    );
    assert!(
        out.contains("every tool call it matches is refused"),
        "{out}"
    );
    assert!(
        out.contains(&format!("remove the hook from {}", config.display())),
        "{out}"
    );
    assert!(
        !out.contains("session_start hook"),
        "the inline hook can run: {out}"
    );
    assert!(out.contains("connection refused"), "{out}");
}

/// The configuration reference's "config with every key" (docs/configuration.md), copied as
/// a user would: it parses, and every hook in it can run (none names a script the user does
/// not have).
#[test]
fn documented_config_with_every_key_is_safe_to_copy() {
    let reference = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/docs/configuration.md"
    ))
    .unwrap();
    let start = reference
        .find("with every key:\n\n```toml\n")
        .expect("docs/configuration.md has the config with every key")
        + "with every key:\n\n```toml\n".len();
    let toml = &reference[start..start + reference[start..].find("```").unwrap()];
    let ws = Workspace::new();
    ws.write("home/.config/tandem/config.toml", toml);
    let mut env = ws.base_env();
    env.push(("OPENAI_BASE_URL".into(), "http://127.0.0.1:9/v1".into()));
    let (_, out) = doctor(&ws, &env);
    assert!(out.contains("config.toml parses"), "{out}");
    assert!(out.contains("✓ 1 configured hook can run"), "{out}");
    assert!(!out.contains(" hook `"), "a hook that cannot run: {out}");
}

/// Each `[[providers]]` server is checked too, in its own API, and named on its lines.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_checks_each_provider_in_its_own_api() {
    let main = MockModel::start(vec![Reply::text(&["O"])]).await;
    let hosted = MockModel::start(vec![Reply::text(&["K"])]).await;
    hosted.serve_info(
        "/v1/models",
        200,
        serde_json::json!({"data": [{"id": "claude-sonnet-4-5"}]}),
    );
    let ws = Workspace::new();
    ws.write(
        "home/.config/tandem/config.toml",
        &format!(
            "[[providers]]\nname = \"hosted\"\nbase_url = \"{}\"\napi = \"anthropic-messages\"\napi_key_env = \"HOSTED_KEY\"\n\n[[models]]\nid = \"mock-model\"\n\n[[models]]\nid = \"claude-sonnet-4-5\"\nprovider = \"hosted\"\n",
            hosted.base_url
        ),
    );
    let mut env = ws.env(&main);
    env.push(("HOSTED_KEY".into(), "sk-hosted-0123456789".into()));
    let (code, out) = tokio::task::spawn_blocking(move || doctor(&ws, &env))
        .await
        .unwrap();
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("✓ provider hosted: an API key is set in HOSTED_KEY"),
        "{out}"
    );
    assert!(
        out.contains("✓ provider hosted: a one-token chat completion with claude-sonnet-4-5 works"),
        "{out}"
    );
    assert!(!out.contains("sk-hosted-0123456789"), "{out}");
    let asked = &hosted.requests()[0];
    assert!(asked.path.ends_with("/v1/messages"), "{}", asked.path);
}
