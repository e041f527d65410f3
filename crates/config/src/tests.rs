//! Tests of configuration precedence and validation.

use super::*;
use std::collections::HashMap;

fn resolve(overrides: Overrides, vars: &[(&str, &str)]) -> Result<Config, ConfigError> {
    let map: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let mut vars_with_home = map.clone();
    vars_with_home
        .entry("HOME".into())
        .or_insert_with(|| "/nonexistent-home".into());
    Config::resolve(&overrides, &move |k| vars_with_home.get(k).cloned())
}

#[test]
fn defaults_are_openai() {
    let c = resolve(Overrides::default(), &[]).unwrap();
    assert_eq!(c.endpoint.base_url, "https://api.openai.com/v1");
    assert!(c.endpoint.requires_key);
    assert_eq!(c.default_model, "gpt-4o-mini");
    assert_eq!(c.default_mode, Mode::Ask);
    assert_eq!(
        c.home,
        PathBuf::from("/nonexistent-home/.local/share/tandem")
    );
    assert_eq!(c.retry, RetryPolicy::default());
}

#[test]
fn flags_beat_env() {
    let overrides = Overrides {
        base_url: Some("http://flag/v1/".into()),
        model: Some("flag-model".into()),
        ..Overrides::default()
    };
    let c = resolve(
        overrides,
        &[
            ("OPENAI_BASE_URL", "http://env/v1"),
            ("TANDEM_MODEL", "env-model"),
        ],
    )
    .unwrap();
    assert_eq!(c.endpoint.base_url, "http://flag/v1");
    assert_eq!(c.default_model, "flag-model");
    assert!(
        !c.endpoint.requires_key,
        "a custom endpoint does not demand a key"
    );
}

#[test]
fn preset_sets_url_and_key_variable() {
    let c = resolve(
        Overrides::default(),
        &[("TANDEM_PROVIDER", "groq"), ("GROQ_API_KEY", "gsk-1")],
    )
    .unwrap();
    assert_eq!(c.endpoint.base_url, "https://api.groq.com/openai/v1");
    assert_eq!(c.endpoint.api_key_env, "GROQ_API_KEY");
    assert_eq!(
        c.endpoint.api_key.as_ref().map(ApiKey::expose),
        Some("gsk-1")
    );
}

#[test]
fn unknown_provider_and_mode_are_errors() {
    let err = resolve(Overrides::default(), &[("TANDEM_PROVIDER", "acme")]).unwrap_err();
    assert!(err.to_string().contains("known providers: openai"));
    let err = resolve(Overrides::default(), &[("TANDEM_MODE", "yolo")]).unwrap_err();
    assert!(err.to_string().contains("accept-edits"));
}

#[test]
fn models_list_always_holds_the_default() {
    let c = resolve(
        Overrides::default(),
        &[
            ("TANDEM_MODEL", "o3"),
            ("TANDEM_MODELS", "gpt-4o, gpt-4o ,llama"),
        ],
    )
    .unwrap();
    let ids: Vec<_> = c.models.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, ["o3", "gpt-4o", "llama"]);
    assert!(c.models[0].reasoning_effort);
    assert_eq!(c.models[2].context_window, 128_000);
}

#[test]
fn keys_are_trimmed_and_checked() {
    let c = resolve(Overrides::default(), &[("OPENAI_API_KEY", "sk-abc\n")]).unwrap();
    assert_eq!(c.endpoint.api_key.unwrap().expose(), "sk-abc");
    let err = resolve(Overrides::default(), &[("OPENAI_API_KEY", "sk-a\u{7}bc")]).unwrap_err();
    assert!(
        err.to_string()
            .contains("OPENAI_API_KEY contains control or non-ASCII")
    );
    assert!(resolve(Overrides::default(), &[("OPENAI_API_KEY", "sk-ключ")]).is_err());
}

#[test]
fn api_key_debug_is_redacted() {
    let key = ApiKey::new("sk-secret");
    assert!(!format!("{key:?}").contains("secret"));
}

#[test]
fn transport_settings_come_from_the_environment_and_are_checked() {
    let c = resolve(Overrides::default(), &[]).unwrap();
    assert_eq!(c.max_message_bytes, 64 * 1024 * 1024);
    assert_eq!(c.eof_grace, Duration::from_secs(300));
    let c = resolve(
        Overrides::default(),
        &[
            ("TANDEM_MAX_MESSAGE_BYTES", "4096"),
            ("TANDEM_EOF_GRACE_SECS", "0.5"),
        ],
    )
    .unwrap();
    assert_eq!(c.max_message_bytes, 4096);
    assert_eq!(c.eof_grace, Duration::from_millis(500));
    for (var, value, needle) in [
        (
            "TANDEM_MAX_MESSAGE_BYTES",
            "0",
            "a positive number of bytes",
        ),
        ("TANDEM_MAX_MESSAGE_BYTES", "lots", "got `lots`"),
        ("TANDEM_EOF_GRACE_SECS", "-1", "a number of seconds"),
    ] {
        let err = resolve(Overrides::default(), &[(var, value)]).unwrap_err();
        assert!(err.to_string().contains(needle), "{err}");
    }
}

#[test]
fn errors_in_a_config_file_name_the_file_and_the_table() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    let with_file = |text: &str| {
        std::fs::write(&path, text).unwrap();
        let overrides = Overrides {
            config_file: Some(path.clone()),
            ..Overrides::default()
        };
        resolve(overrides, &[]).unwrap_err().to_string()
    };
    assert_eq!(
        with_file("[permissions]\nask = [\"nonsense(x)\"]\n"),
        format!(
            "{}: permissions.ask: {}",
            path.display(),
            permissions::parse_rule("nonsense(x)").unwrap_err()
        )
    );
    assert_eq!(
        with_file("[[hooks.stop]]\ncommand = \" \"\n"),
        "hooks.stop: `command` is empty"
    );
    assert_eq!(
        with_file("[[hooks.stop]]\ncommand = \"true\"\nmatcher = \"x\"\n"),
        "hooks.stop: `matcher` only applies to tool events"
    );
}

#[test]
fn the_api_comes_from_flag_env_file_or_the_preset() {
    let api = |overrides: Overrides, vars: &[(&str, &str)]| {
        resolve(overrides, vars).map(|c| c.endpoint.api)
    };
    assert_eq!(
        api(Overrides::default(), &[]).unwrap(),
        Api::Responses,
        "OpenAI itself"
    );
    assert_eq!(
        api(
            Overrides::default(),
            &[("OPENAI_BASE_URL", "http://box:8080/v1")]
        )
        .unwrap(),
        Api::ChatCompletions,
        "a bare URL"
    );
    assert_eq!(
        api(Overrides::default(), &[("TANDEM_PROVIDER", "anthropic")]).unwrap(),
        Api::AnthropicMessages
    );
    assert_eq!(
        api(Overrides::default(), &[("TANDEM_PROVIDER", "gemini")]).unwrap(),
        Api::ChatCompletions
    );
    assert_eq!(
        api(Overrides::default(), &[("TANDEM_PROVIDER", "openai")]).unwrap(),
        Api::Responses
    );
    assert_eq!(
        api(
            Overrides::default(),
            &[
                ("TANDEM_PROVIDER", "openai"),
                ("OPENAI_BASE_URL", "http://gateway/v1")
            ]
        )
        .unwrap(),
        Api::ChatCompletions,
        "another server under OpenAI's preset"
    );
}

#[test]
fn a_named_api_wins_over_what_the_server_would_speak() {
    let api = |overrides: Overrides, vars: &[(&str, &str)]| {
        resolve(overrides, vars).map(|c| c.endpoint.api)
    };
    let flag = Overrides {
        api: Some("anthropic-messages".into()),
        base_url: Some("http://box:8080/v1".into()),
        ..Overrides::default()
    };
    assert_eq!(
        api(flag, &[("TANDEM_API", "responses")]).unwrap(),
        Api::AnthropicMessages
    );
    assert_eq!(
        api(
            Overrides::default(),
            &[
                ("OPENAI_BASE_URL", "http://box:8080/v1"),
                ("TANDEM_API", "responses")
            ]
        )
        .unwrap(),
        Api::Responses
    );
    // An API named below the level the server was chosen at belonged to another server.
    let by_flag = Overrides {
        provider: Some("ollama".into()),
        ..Overrides::default()
    };
    assert_eq!(
        api(by_flag, &[("TANDEM_API", "anthropic-messages")]).unwrap(),
        Api::ChatCompletions
    );
    let wrong = Overrides {
        api: Some("soap".into()),
        ..Overrides::default()
    };
    let e = api(wrong, &[]).unwrap_err().to_string();
    assert!(
        e.contains("unknown api `soap`") && e.contains("anthropic-messages"),
        "{e}"
    );
}

#[test]
fn an_openai_key_does_not_go_to_anthropic() {
    let c = resolve(
        Overrides::default(),
        &[
            ("TANDEM_PROVIDER", "anthropic"),
            ("OPENAI_API_KEY", "sk-openai-12345678"),
        ],
    )
    .unwrap();
    assert!(c.endpoint.api_key.is_none());
    let c = resolve(
        Overrides::default(),
        &[
            ("TANDEM_PROVIDER", "groq"),
            ("OPENAI_API_KEY", "sk-openai-12345678"),
        ],
    )
    .unwrap();
    assert!(
        c.endpoint.api_key.is_some(),
        "OpenAI-compatible services keep the fallback"
    );
}
