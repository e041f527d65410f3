//! Provider presets and per-model defaults: what a user gets by naming a provider or a model
//! without spelling out every setting.

/// A known OpenAI-compatible provider: where it listens and which variable holds its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Preset {
    /// The name users write in `--provider` / `TANDEM_PROVIDER` / `provider = "…"`.
    pub name: &'static str,
    /// The chat-completions base URL (without `/chat/completions`).
    pub base_url: &'static str,
    /// The wire API it is spoken to in unless `api` says otherwise.
    pub(crate) api: super::Api,
    /// The environment variable the key is read from.
    pub api_key_env: &'static str,
    /// Whether requests without a key are pointless (hosted services) or normal (local servers).
    pub requires_key: bool,
    /// Context window assumed for models this table does not know.
    pub default_context_window: u64,
    /// Whether the server takes `response_format: {"type": "json_schema", …}` alongside tools
    /// (used by `--output-schema`; otherwise the schema is only asked for and checked).
    pub(crate) structured_output: bool,
}

/// Every preset tandem knows, in the order the README lists them.
pub const PRESETS: &[Preset] = &[
    Preset {
        name: "openai",
        base_url: "https://api.openai.com/v1",
        // Reasoning models keep their reasoning across tool calls only here.
        api: super::Api::Responses,
        api_key_env: "OPENAI_API_KEY",
        requires_key: true,
        default_context_window: 128_000,
        structured_output: true,
    },
    Preset {
        name: "anthropic",
        base_url: "https://api.anthropic.com/v1",
        api: super::Api::AnthropicMessages,
        api_key_env: "ANTHROPIC_API_KEY",
        requires_key: true,
        default_context_window: 200_000,
        structured_output: false,
    },
    Preset {
        name: "gemini",
        base_url: "https://generativelanguage.googleapis.com/v1beta/openai",
        api: super::Api::ChatCompletions,
        api_key_env: "GEMINI_API_KEY",
        requires_key: true,
        default_context_window: 1_048_576,
        structured_output: true,
    },
    Preset {
        name: "ollama",
        base_url: "http://localhost:11434/v1",
        api: super::Api::ChatCompletions,
        api_key_env: "OLLAMA_API_KEY",
        requires_key: false,
        default_context_window: 8_192,
        structured_output: true,
    },
    Preset {
        name: "openrouter",
        base_url: "https://openrouter.ai/api/v1",
        api: super::Api::ChatCompletions,
        api_key_env: "OPENROUTER_API_KEY",
        requires_key: true,
        default_context_window: 128_000,
        structured_output: true,
    },
    Preset {
        name: "vllm",
        base_url: "http://localhost:8000/v1",
        api: super::Api::ChatCompletions,
        api_key_env: "VLLM_API_KEY",
        requires_key: false,
        default_context_window: 32_768,
        structured_output: true,
    },
    Preset {
        name: "llamacpp",
        base_url: "http://localhost:8080/v1",
        api: super::Api::ChatCompletions,
        api_key_env: "LLAMACPP_API_KEY",
        requires_key: false,
        default_context_window: 8_192,
        structured_output: true,
    },
    Preset {
        name: "lmstudio",
        base_url: "http://localhost:1234/v1",
        api: super::Api::ChatCompletions,
        api_key_env: "LMSTUDIO_API_KEY",
        requires_key: false,
        default_context_window: 32_768,
        structured_output: true,
    },
    Preset {
        name: "deepseek",
        base_url: "https://api.deepseek.com/v1",
        api: super::Api::ChatCompletions,
        api_key_env: "DEEPSEEK_API_KEY",
        requires_key: true,
        default_context_window: 128_000,
        structured_output: false,
    },
    Preset {
        name: "groq",
        base_url: "https://api.groq.com/openai/v1",
        api: super::Api::ChatCompletions,
        api_key_env: "GROQ_API_KEY",
        requires_key: true,
        default_context_window: 131_072,
        structured_output: false,
    },
];

/// The API a server is spoken to in when none is named: its preset's, except that OpenAI's
/// Responses API is the `openai` preset's only at OpenAI's own URL (another server under that
/// preset, a proxy or a gateway, most likely speaks chat completions, as every compatible
/// server does); no preset and no URL is OpenAI itself; a bare URL, chat completions.
pub fn api_at(preset: Option<&Preset>, base_url: Option<&str>) -> super::Api {
    let own = |p: &Preset| base_url.is_none_or(|url| url.trim_end_matches('/') == p.base_url);
    match preset {
        Some(p) if p.api == super::Api::Responses && !own(p) => super::Api::ChatCompletions,
        Some(p) => p.api,
        None if base_url.is_none() => PRESETS[0].api,
        None => super::Api::default(),
    }
}

/// Looks a preset up by name, case-insensitively.
pub fn preset(name: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.name.eq_ignore_ascii_case(name))
}

/// The names of all presets, for error messages.
pub(crate) fn preset_names() -> String {
    PRESETS
        .iter()
        .map(|p| p.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Context windows of well-known model families, matched by prefix of the model id
/// (after any `vendor/` prefix, as OpenRouter writes them). Longest prefix wins.
const KNOWN_WINDOWS: &[(&str, u64)] = &[
    ("gpt-5", 400_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-4", 8_192),
    ("gpt-3.5-turbo", 16_385),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4-mini", 200_000),
    ("deepseek-chat", 128_000),
    ("deepseek-reasoner", 128_000),
    ("claude", 200_000),
    ("gemini", 1_048_576),
    ("qwen2.5-coder", 32_768),
    ("llama-3.1", 131_072),
    ("llama-3.3", 131_072),
];

/// The context window of a known model family, if the id names one.
pub fn known_context_window(model: &str) -> Option<u64> {
    let bare = model.rsplit('/').next().unwrap_or(model);
    KNOWN_WINDOWS
        .iter()
        .filter(|(prefix, _)| bare.starts_with(prefix))
        .max_by_key(|(prefix, _)| prefix.len())
        .map(|(_, window)| *window)
}

/// Whether the id names a family only its vendor serves (OpenAI's, Anthropic's, Google's,
/// DeepSeek's, xAI's): a local address serving one is a proxy in front of that vendor (LiteLLM
/// and the like), whose own output limits hold, not a small model on this machine.
pub fn known_hosted_family(model: &str) -> bool {
    let bare = model.rsplit('/').next().unwrap_or(model);
    [
        "gpt-",
        "o1",
        "o3",
        "o4",
        "chatgpt",
        "claude",
        "gemini",
        "deepseek-chat",
        "deepseek-reasoner",
        "grok",
    ]
    .iter()
    .any(|p| bare.starts_with(p))
}

/// Whether a model family takes a reasoning effort: OpenAI's `reasoning_effort`, Gemini's
/// through its OpenAI-compatible endpoint, Claude's extended thinking (a thinking budget).
pub fn known_reasoning_effort(model: &str) -> bool {
    let bare = model.rsplit('/').next().unwrap_or(model);
    [
        "o1",
        "o3",
        "o4",
        "gpt-5",
        "gemini-2.5",
        "gemini-3",
        "claude-3-7",
        "claude-sonnet-4",
        "claude-opus-4",
        "claude-haiku-4",
    ]
    .iter()
    .any(|p| bare.starts_with(p))
}

/// Whether a Claude family thinks between tool calls when asked to with Anthropic's
/// interleaved-thinking beta: the Claude 4 families (Sonnet, Opus, Haiku 4 and later
/// versions of them), not Claude 3.7.
pub fn known_interleaved_thinking(model: &str) -> bool {
    let bare = model.rsplit('/').next().unwrap_or(model);
    ["claude-sonnet-4", "claude-opus-4", "claude-haiku-4"]
        .iter()
        .any(|p| bare.starts_with(p))
}

/// The most output tokens a family takes, where it is below what tandem would ask for: the
/// Claude 3 models (not 3.5 or 3.7) take 4,096.
pub fn known_output_limit(model: &str) -> Option<u32> {
    let bare = model.rsplit('/').next().unwrap_or(model);
    ["claude-3-haiku", "claude-3-opus", "claude-3-sonnet"]
        .iter()
        .any(|p| bare.starts_with(p))
        .then_some(4096)
}

/// Whether a model family accepts image parts in user messages.
pub fn known_images(model: &str) -> bool {
    let bare = model.rsplit('/').next().unwrap_or(model);
    ["gpt-4o", "gpt-4.1", "gpt-5", "o3", "o4", "claude", "gemini"]
        .iter()
        .any(|p| bare.starts_with(p))
}

/// How a model family edits files: `apply_patch` for the families trained on the V4A
/// format (GPT-4.1 and later GPT versions, the o-series, codex models), `edit_file` for
/// every other.
pub fn known_edit_tool(model: &str) -> super::EditTool {
    let bare = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase();
    let o_series = bare
        .strip_prefix('o')
        .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()));
    let gpt_version = bare.strip_prefix("gpt-").and_then(|rest| {
        let end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let mut parts = rest[..end].split('.');
        let major: u32 = parts.next()?.parse().ok()?;
        let minor: u32 = parts.next().map_or(Some(0), |m| m.parse().ok())?;
        Some((major, minor))
    });
    if o_series || bare.contains("codex") || gpt_version.is_some_and(|v| v >= (4, 1)) {
        super::EditTool::ApplyPatch
    } else {
        super::EditTool::EditFile
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpt_4_1_and_later_o_series_and_codex_patch() {
        use super::super::EditTool::{ApplyPatch, EditFile};
        for id in [
            "gpt-4.1",
            "gpt-4.1-mini",
            "openai/gpt-4.1-nano",
            "gpt-5",
            "gpt-5.1-codex",
            "GPT-5-mini",
            "o3",
            "o4-mini",
            "o1",
            "codex-mini-latest",
        ] {
            assert_eq!(known_edit_tool(id), ApplyPatch, "{id}");
        }
        for id in [
            "gpt-4o",
            "gpt-4o-mini",
            "gpt-4",
            "gpt-3.5-turbo",
            "qwen2.5-coder:7b",
            "llama3.1",
            "deepseek-chat",
            "claude-sonnet-4",
            "ollama/olmo2",
        ] {
            assert_eq!(known_edit_tool(id), EditFile, "{id}");
        }
    }

    #[test]
    fn longest_prefix_wins() {
        assert_eq!(known_context_window("gpt-4o-mini"), Some(128_000));
        assert_eq!(known_context_window("gpt-4"), Some(8_192));
        assert_eq!(known_context_window("openai/gpt-4.1-mini"), Some(1_047_576));
        assert_eq!(known_context_window("my-local-model"), None);
    }

    #[test]
    fn presets_are_found_case_insensitively() {
        assert_eq!(preset("Ollama").map(|p| p.requires_key), Some(false));
        assert!(preset("nope").is_none());
        assert!(preset_names().contains("llamacpp"));
    }

    #[test]
    fn reasoning_and_images_by_family() {
        assert!(known_reasoning_effort("o4-mini"));
        assert!(!known_reasoning_effort("gpt-4o"));
        assert!(known_images("gpt-4o"));
        assert!(!known_images("qwen2.5-coder:7b"));
        assert!(known_interleaved_thinking("claude-sonnet-4-5"));
        assert!(known_interleaved_thinking("anthropic/claude-opus-4.1"));
        assert!(!known_interleaved_thinking("claude-3-7-sonnet-latest"));
    }
}
