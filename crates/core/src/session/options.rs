//! A session's settings (mode, model, reasoning effort) and the config options that show and
//! change them. Both `session/set_mode` and `session/set_config_option` land here.

use crate::config::{Config, Settings};
use crate::model::discover::Discovered;
use crate::types::{Mode, OptionCategory, OptionKind, OptionValue, OptionView};

/// The reasoning levels offered for models that take `reasoning_effort`.
pub(crate) const REASONING_EFFORTS: [(&str, &str); 3] =
    [("low", "Low"), ("medium", "Medium"), ("high", "High")];

/// Why a setting could not be changed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum OptionError {
    /// No option has that id.
    #[error("unknown config option `{id}`; this session has: {available}")]
    UnknownOption {
        /// The id asked for.
        id: String,
        /// The ids that exist.
        available: String,
    },
    /// The option exists but not with that value.
    #[error("`{value}` is not a value of `{id}`; choose one of: {allowed}")]
    InvalidValue {
        /// The option.
        id: String,
        /// The value asked for.
        value: String,
        /// The values that exist.
        allowed: String,
    },
}

/// The options the session currently offers; `reasoning_effort` only for models that take it
/// (by the config, or by the model's family for one picked from the server's list),
/// `auto_compact` only to an editor that shows on/off options (`booleans`). Without models in
/// the config, the model picker lists what the server serves.
pub(crate) fn views(
    settings: &Settings,
    config: &Config,
    server: Option<&Discovered>,
    booleans: bool,
) -> Vec<OptionView> {
    let mut views = vec![
        OptionView {
            id: "mode",
            name: "Mode",
            description: "How much tandem may do without asking.",
            category: Some(OptionCategory::Mode),
            kind: OptionKind::Select,
            current: settings.mode.id().to_string(),
            values: Mode::ALL
                .iter()
                .map(|m| OptionValue {
                    id: m.id().to_string(),
                    name: m.name().to_string(),
                    description: Some(m.description().to_string()),
                })
                .collect(),
        },
        OptionView {
            id: "model",
            name: "Model",
            description: "The model that answers.",
            category: Some(OptionCategory::Model),
            kind: OptionKind::Select,
            current: settings.model.clone(),
            values: models(config, server, &settings.model),
        },
    ];
    if settings.effort_for_request(config).is_some() {
        views.push(OptionView {
            id: "reasoning_effort",
            name: "Reasoning effort",
            description: "How much the model reasons before it answers.",
            category: Some(OptionCategory::ThoughtLevel),
            kind: OptionKind::Select,
            current: settings.reasoning_effort.clone(),
            values: REASONING_EFFORTS
                .iter()
                .map(|(id, name)| OptionValue {
                    id: id.to_string(),
                    name: name.to_string(),
                    description: None,
                })
                .collect(),
        });
    }
    if booleans {
        views.push(OptionView {
            id: "auto_compact",
            name: "Automatic compaction",
            description: "Summarize the older conversation on its own when it nears the model's window (/compact works either way).",
            category: None,
            kind: OptionKind::Boolean,
            current: settings.auto_compact.to_string(),
            values: [true, false]
                .iter()
                .map(|on| OptionValue {
                    id: on.to_string(),
                    name: if *on { "On" } else { "Off" }.to_string(),
                    description: None,
                })
                .collect(),
        });
    }
    views
}

/// The models offered: the configured ones, or (with none configured) those the server
/// lists, the session's default first. With none configured, the session's `current` model
/// is always among them: a reopened session keeps a model chosen from the server's list
/// before the server has said what it serves.
fn models(config: &Config, server: Option<&Discovered>, current: &str) -> Vec<OptionValue> {
    let mut values: Vec<OptionValue> = config
        .models
        .iter()
        .map(|m| OptionValue {
            id: m.id.clone(),
            name: m.name.clone(),
            description: None,
        })
        .collect();
    if config.models_configured {
        return values;
    }
    let listed = server.map_or(&[][..], |s| s.models.as_slice());
    for id in listed.iter().map(String::as_str).chain([current]) {
        if !values.iter().any(|v| v.id == id) {
            values.push(OptionValue {
                id: id.to_string(),
                name: id.to_string(),
                description: None,
            });
        }
    }
    values
}

/// Applies `option = value`, checked against what [`views`] offers right now.
pub(crate) fn apply(
    settings: &mut Settings,
    config: &Config,
    server: Option<&Discovered>,
    option: &str,
    value: &str,
) -> Result<(), OptionError> {
    let current = views(settings, config, server, true);
    let Some(view) = current.iter().find(|v| v.id == option) else {
        return Err(OptionError::UnknownOption {
            id: option.to_string(),
            available: current.iter().map(|v| v.id).collect::<Vec<_>>().join(", "),
        });
    };
    if !view.values.iter().any(|v| v.id == value) {
        return Err(OptionError::InvalidValue {
            id: option.to_string(),
            value: value.to_string(),
            allowed: view
                .values
                .iter()
                .map(|v| v.id.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        });
    }
    match option {
        "mode" => {
            if let Some(mode) = Mode::parse(value) {
                settings.mode = mode;
            }
        }
        "model" => settings.model = value.to_string(),
        "auto_compact" => settings.auto_compact = value == "true",
        _ => settings.reasoning_effort = value.to_string(),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Overrides;

    fn config(models: &str) -> Config {
        let models = models.to_string();
        Config::resolve(&Overrides::default(), &move |k| match k {
            "TANDEM_MODEL" => Some("gpt-4o".into()),
            "TANDEM_MODELS" => Some(models.clone()),
            "HOME" => Some("/nonexistent".into()),
            _ => None,
        })
        .unwrap()
    }

    #[test]
    fn reasoning_option_follows_the_model() {
        let c = config("gpt-4o,o3");
        let mut s = Settings::initial(&c);
        assert_eq!(views(&s, &c, None, false).len(), 2);
        apply(&mut s, &c, None, "model", "o3").unwrap();
        let v = views(&s, &c, None, false);
        assert_eq!(v[2].id, "reasoning_effort");
        apply(&mut s, &c, None, "reasoning_effort", "high").unwrap();
        assert_eq!(s.effort_for_request(&c).as_deref(), Some("high"));
    }

    #[test]
    fn a_model_picked_from_the_servers_list_offers_its_familys_reasoning() {
        let server = Discovered {
            models: vec!["gpt-5.1".into(), "llama3".into()],
            ..Discovered::default()
        };
        let c = Config::resolve(&Overrides::default(), &|k| match k {
            "TANDEM_MODEL" => Some("gpt-4o".into()),
            "OPENAI_API_KEY" => Some("k".into()),
            _ => None,
        })
        .unwrap();
        let mut s = Settings::initial(&c);
        apply(&mut s, &c, Some(&server), "model", "gpt-5.1").unwrap();
        let v = views(&s, &c, Some(&server), false);
        assert_eq!(v[2].id, "reasoning_effort");
        apply(&mut s, &c, Some(&server), "reasoning_effort", "low").unwrap();
        assert_eq!(s.effort_for_request(&c).as_deref(), Some("low"));
        apply(&mut s, &c, Some(&server), "model", "llama3").unwrap();
        assert_eq!(views(&s, &c, Some(&server), false).len(), 2);
        assert_eq!(s.effort_for_request(&c), None);
    }

    #[test]
    fn bad_ids_and_values_say_what_exists() {
        let c = config("gpt-4o");
        let mut s = Settings::initial(&c);
        let e = apply(&mut s, &c, None, "reasoning_effort", "high").unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown config option `reasoning_effort`; this session has: mode, model, auto_compact"
        );
        let e = apply(&mut s, &c, None, "mode", "yolo").unwrap_err();
        assert!(
            e.to_string()
                .contains("ask, accept-edits, read-only, full-access")
        );
        apply(&mut s, &c, None, "mode", "read-only").unwrap();
        assert_eq!(s.mode, Mode::ReadOnly);
    }

    #[test]
    fn without_configured_models_the_server_list_is_offered() {
        let server = Discovered {
            models: vec!["llama3".into(), "gpt-4o".into(), "qwen".into()],
            ..Discovered::default()
        };
        let c = Config::resolve(&Overrides::default(), &|k| match k {
            "TANDEM_MODEL" => Some("gpt-4o".into()),
            "OPENAI_API_KEY" => Some("k".into()),
            _ => None,
        })
        .unwrap();
        let mut s = Settings::initial(&c);
        let ids = |views: Vec<OptionView>| -> Vec<String> {
            views[1].values.iter().map(|v| v.id.clone()).collect()
        };
        assert_eq!(
            ids(views(&s, &c, Some(&server), false)),
            ["gpt-4o", "llama3", "qwen"]
        );
        apply(&mut s, &c, Some(&server), "model", "qwen").unwrap();
        assert_eq!(s.model, "qwen");
        // A model chosen from the list stays offered while the server has not answered (a
        // reopened session), and is not offered twice once it has.
        assert!(ids(views(&s, &c, None, false)).contains(&"qwen".to_string()));
        assert_eq!(ids(views(&s, &c, Some(&server), false)).len(), 3);
        // Configured models win over the server's list.
        let c = config("a,b");
        assert_eq!(ids(views(&s, &c, Some(&server), false)).len(), 3);
        assert!(!ids(views(&s, &c, Some(&server), false)).contains(&"qwen".to_string()));
    }
}
