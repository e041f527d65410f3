//! The TOML config file's shape (`$XDG_CONFIG_HOME/tandem/config.toml` or `--config`).

use std::path::Path;
use std::time::Duration;

use serde::Deserialize;

use super::{ConfigError, RetryPolicy};

/// The file as written by the user; every key is optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FileConfig {
    pub(crate) provider: Option<String>,
    pub(crate) base_url: Option<String>,
    pub(crate) api: Option<String>,
    pub(crate) api_key_env: Option<String>,
    pub(crate) model: Option<String>,
    pub(crate) mode: Option<String>,
    pub(crate) instructions: Option<String>,
    pub(crate) max_turn_requests: Option<u32>,
    pub(crate) max_output_tokens: Option<u32>,
    pub(crate) compact_threshold: Option<f64>,
    pub(crate) auto_compact: Option<bool>,
    pub(crate) max_message_bytes: Option<u64>,
    #[serde(default)]
    pub(crate) models: Vec<FileModel>,
    #[serde(default)]
    pub(crate) providers: Vec<super::providers::FileProvider>,
    #[serde(default)]
    pub(crate) retry: FileRetry,
    pub(crate) max_response_bytes: Option<u64>,
    pub(crate) share_api_key: Option<bool>,
    pub(crate) structured_output: Option<bool>,
    #[serde(default)]
    pub(crate) queued_prompts: super::QueuedPrompts,
    #[serde(default)]
    pub(crate) timeouts: super::limits::FileTimeouts,
    #[serde(default)]
    pub(crate) loops: super::limits::FileLoops,
    #[serde(default)]
    pub(crate) tool_budgets: std::collections::BTreeMap<String, u32>,
    #[serde(default)]
    pub(crate) mcp_servers: Vec<super::ServerSpec>,
    #[serde(default)]
    pub(crate) actions: Vec<super::ActionSpec>,
    #[serde(default)]
    pub(crate) skill_dirs: Vec<std::path::PathBuf>,
    #[serde(default)]
    pub(crate) hooks: super::hooks::HooksSpec,
    #[serde(default)]
    pub(crate) permissions: super::permissions::PermissionsSpec,
    pub(crate) shell: Option<Vec<String>>,
    pub(crate) background_commands: Option<usize>,
    #[serde(default)]
    pub(crate) sandbox: super::sandbox::FileSandbox,
    #[serde(default)]
    pub(crate) web: super::web::FileWeb,
}

/// One `[[models]]` entry.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FileModel {
    pub(crate) id: String,
    pub(crate) name: Option<String>,
    pub(crate) context_window: Option<u64>,
    pub(crate) reasoning_effort: Option<bool>,
    pub(crate) images: Option<bool>,
    pub(crate) edit_tool: Option<super::EditTool>,
    pub(crate) provider: Option<String>,
    pub(crate) max_output_tokens: Option<u32>,
    pub(crate) price: Option<super::Price>,
}

/// The `[retry]` table.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FileRetry {
    pub(crate) max_attempts: Option<u32>,
    pub(crate) initial_delay_ms: Option<u64>,
    pub(crate) max_total_secs: Option<f64>,
    pub(crate) stream_retries: Option<u32>,
}

impl FileConfig {
    pub(super) fn read(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        toml::from_str(&text).map_err(|e| ConfigError::Parse {
            path: path.to_path_buf(),
            message: e.to_string(),
        })
    }
}

impl FileRetry {
    pub(super) fn resolve(&self) -> Result<RetryPolicy, ConfigError> {
        let default = RetryPolicy::default();
        let max_attempts = self.max_attempts.unwrap_or(default.max_attempts);
        if max_attempts == 0 {
            return Err(ConfigError::Invalid(
                "retry.max_attempts must be at least 1".into(),
            ));
        }
        let max_total = match self.max_total_secs {
            Some(secs) if secs.is_finite() && secs >= 0.0 => Duration::from_secs_f64(secs),
            Some(_) => {
                return Err(ConfigError::Invalid(
                    "retry.max_total_secs must be a non-negative number".into(),
                ));
            }
            None => default.max_total,
        };
        Ok(RetryPolicy {
            max_attempts,
            initial_delay: self
                .initial_delay_ms
                .map(Duration::from_millis)
                .unwrap_or(default.initial_delay),
            max_total,
            stream_retries: self.stream_retries.unwrap_or(default.stream_retries),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_full_file() {
        let file: FileConfig = toml::from_str(
            r#"
            provider = "ollama"
            model = "qwen2.5-coder:7b"
            [[models]]
            id = "qwen2.5-coder:7b"
            context_window = 32768
            [retry]
            max_attempts = 2
            initial_delay_ms = 10
            max_total_secs = 1.5
            "#,
        )
        .unwrap();
        assert_eq!(file.models[0].context_window, Some(32768));
        let retry = file.retry.resolve().unwrap();
        assert_eq!(retry.max_attempts, 2);
        assert_eq!(retry.max_total, Duration::from_millis(1500));
    }

    /// Every `toml` block in README.md, the pages of docs/ that show config and the
    /// permissions reference is a config file a user may paste: it must parse, rules included.
    #[test]
    fn documented_examples_parse() {
        let docs = [
            include_str!("../../../README.md"),
            include_str!("../../../docs/configuration.md"),
            include_str!("../../../docs/permissions.md"),
            include_str!("../../../docs/web.md"),
            include_str!("../../../docs/extending.md"),
            include_str!("../../../docs/mcp.md"),
            include_str!("../../../protocol/permissions.md"),
        ];
        for doc in docs {
            let blocks: Vec<&str> = doc
                .split("```toml\n")
                .skip(1)
                .map(|rest| rest.split("```").next().unwrap())
                .collect();
            assert!(!blocks.is_empty());
            for block in blocks {
                let parsed = toml::from_str::<FileConfig>(block);
                assert!(parsed.is_ok(), "{block}\n{parsed:?}");
                let rules = super::super::permissions::parse_all(
                    &parsed.unwrap().permissions,
                    Path::new("/doc.toml"),
                );
                assert!(rules.is_ok(), "{block}\n{rules:?}");
            }
        }
    }

    #[test]
    fn unknown_keys_are_rejected() {
        assert!(toml::from_str::<FileConfig>("modle = \"x\"").is_err());
    }

    #[test]
    fn an_mcp_server_of_the_old_sse_transport_says_so_with_its_type() {
        let servers = |kind: &str| {
            toml::from_str::<FileConfig>(&format!(
                "[[mcp_servers]]\nname = \"old\"\nurl = \"http://127.0.0.1:1/sse\"\n{kind}"
            ))
            .map(|f| f.mcp_servers[0].sse)
        };
        assert!(servers("type = \"sse\"").unwrap());
        assert!(!servers("type = \"http\"").unwrap());
        assert!(!servers("").unwrap());
        let wrong = servers("type = \"websocket\"").unwrap_err().to_string();
        assert!(
            wrong.contains("unknown MCP transport type `websocket`"),
            "{wrong}"
        );
    }
}
