//! Which model server tandem talks to, and with which key from the environment.
//!
//! A provider preset and a base URL are one choice, made at one level (flags > environment >
//! file): a preset named on the command line uses its own URL unless `--base-url` is given
//! there too, one named in the environment unless `--base-url` or `OPENAI_BASE_URL` is, and
//! one in the file takes the file's `base_url`. A URL from a lower level belongs to another
//! server (the one an earlier `tandem login` wrote, say): it is reported and left unused, so
//! neither requests nor the key stored for that URL go there. The same holds for the wire
//! API: one named below the level that chose the server was meant for another server, and is
//! reported and left unused too.

use super::file::FileConfig;
use super::presets::{self, Preset};
use super::{ApiKey, ConfigError, Endpoint, KeyFrom, Overrides};

/// Looks an environment variable up (unset and blank alike give `None`).
type Set<'a> = &'a dyn Fn(&str) -> Option<String>;

/// Where a setting was given; earlier variants win.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Level {
    /// The command line.
    Flag,
    /// The environment.
    Env,
    /// The config file.
    File,
}

/// A setting's value at each level, highest first.
struct Levels([(Level, Option<String>); 3]);

impl Levels {
    fn new(flag: Option<String>, env: Option<String>, file: Option<String>) -> Self {
        Self([(Level::Flag, flag), (Level::Env, env), (Level::File, file)])
    }

    /// The value of the highest level that gives one.
    fn first(&self) -> Option<(Level, &str)> {
        self.0
            .iter()
            .find_map(|(level, value)| value.as_deref().map(|v| (*level, v)))
    }

    /// The highest value given at `at` or above (any level when `at` is `None`).
    fn at_or_above(&self, at: Option<Level>) -> Option<(Level, &str)> {
        self.first()
            .filter(|(level, _)| at.is_none_or(|at| *level <= at))
    }
}

/// The base URL that goes with a provider named at `provider`: one given at that level or
/// above, else none (the preset's own). The second value is a URL given below it, unused.
fn base_for(provider: Option<Level>, bases: &Levels) -> (Option<String>, Option<(Level, String)>) {
    let chosen = bases.at_or_above(provider).map(|(_, url)| url.to_string());
    let unused = match chosen {
        Some(_) => None,
        None => bases.first().map(|(level, url)| (level, url.to_string())),
    };
    (chosen, unused)
}

/// The model server: its provider preset (if one is named), URL, key and whether it needs one.
pub(super) fn endpoint(
    overrides: &Overrides,
    set: Set<'_>,
    file: &FileConfig,
) -> Result<(Endpoint, Option<&'static Preset>), ConfigError> {
    let providers = Levels::new(
        overrides.provider.clone(),
        set("TANDEM_PROVIDER"),
        file.provider.clone(),
    );
    let named = providers.first();
    let preset = match named {
        Some((_, name)) => Some(presets::preset(name).ok_or_else(|| {
            ConfigError::Invalid(format!(
                "unknown provider `{name}`; known providers: {}",
                presets::preset_names()
            ))
        })?),
        None => None,
    };
    let bases = Levels::new(
        overrides.base_url.clone(),
        set("OPENAI_BASE_URL"),
        file.base_url.clone(),
    );
    let (explicit_base, unused) = base_for(named.map(|(level, _)| level), &bases);
    let chosen_by = server_chooser(named, &bases);
    let apis = Levels::new(overrides.api.clone(), set("TANDEM_API"), file.api.clone());
    let api = api_for(
        &apis,
        chosen_by.as_ref().map(|(level, _)| *level),
        preset,
        explicit_base.as_deref(),
    )?;
    if let (Some((level, url)), Some((by, _)), Some(p)) = (&unused, named, preset) {
        warn_once(unused_note(*level, url, by, p));
    }
    if let Some(note) = chosen_by.and_then(|(level, by)| unused_api_note(&apis, level, &by)) {
        warn_once(note);
    }
    let openai = &presets::PRESETS[0];
    let explicit_base = explicit_base
        .map(|url| super::check_url(&url))
        .transpose()
        .map_err(|e| ConfigError::Invalid(format!("the model server's URL: {e}")))?;
    let base_url = explicit_base
        .clone()
        .unwrap_or_else(|| preset.unwrap_or(openai).base_url.to_string())
        .trim_end_matches('/')
        .to_string();
    let api_key_env = file
        .api_key_env
        .clone()
        .unwrap_or_else(|| preset.unwrap_or(openai).api_key_env.to_string());
    // Anthropic is no OpenAI-compatible service: an OpenAI key set for the run is not its.
    let fallback = preset.is_none_or(|p| p.api != super::Api::AnthropicMessages);
    let (api_key, key_from) = env_key(set, &api_key_env, fallback)?;
    let requires_key = match preset {
        Some(p) => p.requires_key,
        // No preset: the OpenAI default needs a key; a custom endpoint is the user's call.
        None => explicit_base.is_none() || base_url == openai.base_url,
    };
    let provider = match (preset, &explicit_base) {
        (Some(p), _) => p.name.to_string(),
        (None, Some(_)) => "custom".to_string(),
        (None, None) => "openai".to_string(),
    };
    let endpoint = Endpoint {
        provider,
        base_url,
        api,
        api_key,
        api_key_env,
        requires_key,
        key_from,
        headers: Vec::new(),
    };
    Ok((endpoint, preset))
}

/// The level that chose the server (its preset's or its URL's, whichever is higher) and how
/// the user gave it there, as a note names it; `None` when nothing was named (the default).
fn server_chooser(named: Option<(Level, &str)>, bases: &Levels) -> Option<(Level, String)> {
    let url = |level| match level {
        Level::Flag => "--base-url".to_string(),
        Level::Env => "OPENAI_BASE_URL".to_string(),
        Level::File => "the config file's base_url".to_string(),
    };
    match (named, bases.first()) {
        (Some((by, _)), Some((level, _))) if level < by => Some((level, url(level))),
        (Some((level, name)), _) => Some((level, provider_named(level, name))),
        (None, Some((level, _))) => Some((level, url(level))),
        (None, None) => None,
    }
}

/// How a provider named at `level` reads in a note.
fn provider_named(level: Level, name: &str) -> String {
    match level {
        Level::Flag => format!("--provider {name}"),
        Level::Env => format!("TANDEM_PROVIDER={name}"),
        Level::File => format!("provider = \"{name}\""),
    }
}

/// The wire API: named at the level the server was chosen (`server_level`) or above (an API
/// named below was meant for another server: see [`unused_api_note`]), else what
/// [`presets::api_at`] says for the server.
fn api_for(
    apis: &Levels,
    server_level: Option<Level>,
    preset: Option<&Preset>,
    explicit_base: Option<&str>,
) -> Result<super::Api, ConfigError> {
    Ok(match apis.at_or_above(server_level) {
        Some((_, name)) => super::Api::parse(name).ok_or_else(|| {
            ConfigError::Invalid(format!(
                "unknown api `{name}`; known APIs: {}",
                super::Api::ALL.map(super::Api::name).join(", ")
            ))
        })?,
        None => presets::api_at(preset, explicit_base),
    })
}

/// The key from the environment: the preset's own variable first, then (with `fallback`)
/// `OPENAI_API_KEY`, which every OpenAI-compatible client honours. The user set it for this
/// run, so it goes to the server chosen, whichever that is, unless that server is no
/// OpenAI-compatible one (Anthropic's).
fn env_key(
    set: Set<'_>,
    api_key_env: &str,
    fallback: bool,
) -> Result<(Option<super::ApiKey>, KeyFrom), ConfigError> {
    let vars: &[&str] = if fallback {
        &[api_key_env, "OPENAI_API_KEY"]
    } else {
        &[api_key_env]
    };
    for &var in vars {
        if let Some(key) = set(var) {
            return Ok((Some(checked_key(var, &key)?), KeyFrom::Env(var.to_string())));
        }
    }
    Ok((None, KeyFrom::Nowhere))
}

/// Says that the URL given at `level` is not used, because a preset was named above it.
fn unused_note(level: Level, url: &str, by: Level, preset: &Preset) -> String {
    let given = match level {
        Level::Flag => "--base-url",
        Level::Env => "OPENAI_BASE_URL",
        Level::File => "the config file's base_url",
    };
    let (named, instead) = match by {
        Level::Flag => (format!("--provider {}", preset.name), "--base-url"),
        Level::Env => (
            format!("TANDEM_PROVIDER={}", preset.name),
            "OPENAI_BASE_URL or --base-url",
        ),
        Level::File => (
            format!("provider = \"{}\"", preset.name),
            "the config file's base_url",
        ),
    };
    format!(
        "{given} ({url}) is not used: {named} names its own server, {}; to reach another, give {instead} as well",
        preset.base_url
    )
}

/// Says that the API named below `server_level` (where `chooser` chose the server) is not
/// used: it went with the server named at its own level, which is not the one in use. `None`
/// when no API is named below it.
fn unused_api_note(apis: &Levels, server_level: Level, chooser: &str) -> Option<String> {
    let (level, name) = apis.first().filter(|(level, _)| *level > server_level)?;
    let given = match level {
        Level::Flag => "--api",
        Level::Env => "TANDEM_API",
        Level::File => "the config file's api",
    };
    let instead = match server_level {
        Level::Flag => "--api",
        Level::Env | Level::File => "TANDEM_API or --api",
    };
    let goes_with = match level {
        Level::File => "the file's API goes with the file's server",
        Level::Flag | Level::Env => "it goes with the server named beside it",
    };
    Some(format!(
        "{given} ({name}) is not used: {chooser} chooses the server, and {goes_with}; to name this server's API, give {instead}"
    ))
}

/// Logs `note` as a warning, once per process: an agent reads its configuration again while
/// it runs (after a login in a terminal, say), and the same note again says nothing new.
fn warn_once(note: String) {
    static SAID: parking_lot::Mutex<Vec<String>> = parking_lot::Mutex::new(Vec::new());
    let mut said = SAID.lock();
    if !said.contains(&note) {
        tracing::warn!("{note}");
        said.push(note);
    }
}

/// A key goes into an `Authorization` header: surrounding whitespace (a trailing newline from
/// `$(cat keyfile)`) is dropped, and what a header cannot carry (control or non-ASCII
/// characters) is refused with a clear message.
pub fn checked_key(var: &str, key: &str) -> Result<ApiKey, ConfigError> {
    let key = key.trim();
    if key.chars().any(|c| c.is_control() || !c.is_ascii()) {
        return Err(ConfigError::Invalid(format!(
            "the API key in {var} contains control or non-ASCII characters and cannot be sent in an HTTP header"
        )));
    }
    Ok(ApiKey::new(key))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn levels(flag: Option<&str>, env: Option<&str>, file: Option<&str>) -> Levels {
        let own = |v: Option<&str>| v.map(String::from);
        Levels::new(own(flag), own(env), own(file))
    }

    #[test]
    fn a_url_counts_only_at_the_providers_level_or_above() {
        let all = levels(Some("flag"), Some("env"), Some("file"));
        let file_only = levels(None, None, Some("file"));
        let env_and_file = levels(None, Some("env"), Some("file"));
        let cases = [
            // (provider named at, URLs, chosen, unused)
            (None, &file_only, Some("file"), None),
            (None, &all, Some("flag"), None),
            (Some(Level::Flag), &all, Some("flag"), None),
            (
                Some(Level::Flag),
                &env_and_file,
                None,
                Some((Level::Env, "env")),
            ),
            (
                Some(Level::Flag),
                &file_only,
                None,
                Some((Level::File, "file")),
            ),
            (Some(Level::Env), &env_and_file, Some("env"), None),
            (
                Some(Level::Env),
                &file_only,
                None,
                Some((Level::File, "file")),
            ),
            (Some(Level::File), &file_only, Some("file"), None),
            (Some(Level::File), &env_and_file, Some("env"), None),
        ];
        for (at, bases, chosen, unused) in cases {
            let (got, left) = base_for(at, bases);
            assert_eq!(got.as_deref(), chosen, "{at:?}");
            assert_eq!(
                left.as_ref().map(|(l, u)| (*l, u.as_str())),
                unused,
                "{at:?}"
            );
        }
        let none = levels(None, None, None);
        assert_eq!(base_for(Some(Level::Flag), &none), (None, None));
    }

    #[test]
    fn an_api_named_below_the_servers_level_is_said_to_be_unused() {
        let file_api = levels(None, None, Some("responses"));
        let note = unused_api_note(&file_api, Level::Env, "OPENAI_BASE_URL").unwrap();
        assert_eq!(
            note,
            "the config file's api (responses) is not used: OPENAI_BASE_URL chooses the server, and the file's API goes with the file's server; to name this server's API, give TANDEM_API or --api"
        );
        let env_api = levels(None, Some("responses"), Some("anthropic-messages"));
        let note = unused_api_note(&env_api, Level::Flag, "--base-url").unwrap();
        assert!(note.starts_with("TANDEM_API (responses) is not used: --base-url chooses"));
        assert!(note.ends_with("give --api"), "{note}");
        // Named at the server's level or above: used, nothing to say.
        assert_eq!(
            unused_api_note(&env_api, Level::Env, "OPENAI_BASE_URL"),
            None
        );
        assert_eq!(unused_api_note(&file_api, Level::File, "x"), None);
        let none = levels(None, None, None);
        assert_eq!(unused_api_note(&none, Level::Flag, "x"), None);
    }

    #[test]
    fn the_server_is_chosen_by_the_higher_of_its_preset_and_its_url() {
        let env_url = levels(None, Some("http://box/v1"), Some("http://old/v1"));
        assert_eq!(
            server_chooser(Some((Level::File, "openai")), &env_url),
            Some((Level::Env, "OPENAI_BASE_URL".to_string()))
        );
        assert_eq!(
            server_chooser(Some((Level::Flag, "ollama")), &env_url),
            Some((Level::Flag, "--provider ollama".to_string()))
        );
        let none = levels(None, None, None);
        assert_eq!(server_chooser(None, &none), None);
    }

    #[test]
    fn the_note_says_what_is_unused_and_how_to_use_it() {
        let ollama = presets::preset("ollama").unwrap();
        let note = unused_note(Level::File, "http://box/v1", Level::Flag, ollama);
        assert_eq!(
            note,
            "the config file's base_url (http://box/v1) is not used: --provider ollama names its own server, http://localhost:11434/v1; to reach another, give --base-url as well"
        );
        let note = unused_note(Level::File, "http://box/v1", Level::Env, ollama);
        assert!(note.contains("TANDEM_PROVIDER=ollama"), "{note}");
        assert!(note.contains("OPENAI_BASE_URL or --base-url"), "{note}");
    }
}
