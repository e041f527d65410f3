//! What well-known models cost at their vendor's own API, for `usage_update.cost` and
//! `_tandem/usage` when neither the config (`price` under `[[models]]`) nor the server
//! (OpenRouter's list, or its `usage.cost`) says. Prices change: this table holds the prices
//! the vendors published as of [`CHECKED`], only for models they still list, and applies only
//! at the vendor's own host, to the model id exactly or a dated snapshot of it
//! (`claude-sonnet-4-5-20250929`, `gpt-4o-2024-08-06`): never to a proxy, a local server, a
//! newer model whose name merely starts the same, nor a model of tiered pricing. `_tandem/status`
//! says which source a price came from.

/// What a model's tokens cost, in US dollars per million.
#[derive(Debug, Clone, Copy, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    /// A prompt token.
    pub input: f64,
    /// A generated token.
    pub output: f64,
    /// A prompt token read from the server's cache (default: as `input`).
    #[serde(default)]
    pub cached_input: Option<f64>,
    /// Where the price comes from (a config file's is the config's).
    #[serde(skip)]
    pub source: PriceSource,
}

/// Where a model's price comes from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum PriceSource {
    /// `price` under the model's `[[models]]` entry.
    #[default]
    Config,
    /// The server's model list (OpenRouter's `pricing`).
    Server,
    /// tandem's table of the vendors' published prices (prices.rs).
    BuiltIn,
}

impl PriceSource {
    /// How `_tandem/status` names it.
    pub fn name(self) -> String {
        match self {
            PriceSource::Config => "config".to_string(),
            PriceSource::Server => "server".to_string(),
            PriceSource::BuiltIn => format!("built-in (vendor prices as of {})", CHECKED),
        }
    }
}

impl Price {
    /// The cost of `input` prompt tokens (of which `cached` from the cache) and `output`
    /// generated ones, in US dollars.
    pub fn cost(&self, input: u64, cached: u64, output: u64) -> f64 {
        let cached = cached.min(input);
        let fresh = (input - cached) as f64 * self.input;
        let read = cached as f64 * self.cached_input.unwrap_or(self.input);
        (fresh + read + output as f64 * self.output) / 1_000_000.0
    }
}

/// When the vendors' price lists were last read for this table.
pub(crate) const CHECKED: &str = "2026-11-27";

/// (host, model id, input, cached input, output), US dollars per million tokens.
const TABLE: &[(&str, &str, f64, f64, f64)] = &[
    ("api.openai.com", "gpt-5.5", 5.00, 0.50, 30.00),
    ("api.openai.com", "gpt-5.4", 2.50, 0.25, 15.00),
    ("api.openai.com", "gpt-5.4-mini", 0.75, 0.075, 4.50),
    ("api.openai.com", "gpt-5.4-nano", 0.20, 0.02, 1.25),
    ("api.openai.com", "gpt-5", 1.25, 0.125, 10.00),
    ("api.openai.com", "gpt-5-mini", 0.25, 0.025, 2.00),
    ("api.openai.com", "gpt-5-nano", 0.05, 0.005, 0.40),
    ("api.openai.com", "gpt-4.1", 2.00, 0.50, 8.00),
    ("api.openai.com", "gpt-4.1-mini", 0.40, 0.10, 1.60),
    ("api.openai.com", "gpt-4.1-nano", 0.10, 0.025, 0.40),
    ("api.openai.com", "gpt-4o", 2.50, 1.25, 10.00),
    ("api.openai.com", "gpt-4o-mini", 0.15, 0.075, 0.60),
    ("api.openai.com", "o3", 2.00, 0.50, 8.00),
    ("api.openai.com", "o4-mini", 1.10, 0.275, 4.40),
    ("api.anthropic.com", "claude-opus-4-5", 5.00, 0.50, 25.00),
    ("api.anthropic.com", "claude-opus-4-1", 15.00, 1.50, 75.00),
    ("api.anthropic.com", "claude-sonnet-4-5", 3.00, 0.30, 15.00),
    ("api.anthropic.com", "claude-sonnet-4", 3.00, 0.30, 15.00),
    ("api.anthropic.com", "claude-haiku-4-5", 1.00, 0.10, 5.00),
    ("api.anthropic.com", "claude-3-5-haiku", 0.80, 0.08, 4.00),
    ("api.groq.com", "llama-3.3-70b-versatile", 0.59, 0.59, 0.79),
    ("api.groq.com", "llama-3.1-8b-instant", 0.05, 0.05, 0.08),
];

/// The built-in price of `model` at the server `base_url`, if the table has one for that host.
pub fn built_in(base_url: &str, model: &str) -> Option<Price> {
    let host = reqwest::Url::parse(base_url)
        .ok()?
        .host_str()?
        .to_ascii_lowercase();
    TABLE
        .iter()
        .find(|(h, id, ..)| *h == host && names(model, id))
        .map(|&(_, _, input, cached, output)| Price {
            input,
            output,
            cached_input: Some(cached),
            source: PriceSource::BuiltIn,
        })
}

/// Whether `model` is `id` itself, `-latest`, or a dated snapshot of it (`-20250929`,
/// `-2024-08-06`).
fn names(model: &str, id: &str) -> bool {
    let Some(rest) = model.strip_prefix(id) else {
        return false;
    };
    let Some(suffix) = rest.strip_prefix('-') else {
        return rest.is_empty();
    };
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let dashed = suffix.len() == 10
        && suffix.split('-').map(str::len).eq([4, 2, 2])
        && digits(&suffix.replace('-', ""));
    suffix == "latest" || (suffix.len() == 8 && digits(suffix)) || dashed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_price_is_known_only_at_the_vendors_host_for_that_model_or_its_snapshots() {
        let at = |url: &str, model: &str| built_in(url, model).map(|p| (p.input, p.output));
        assert_eq!(
            at("https://api.openai.com/v1", "gpt-4o-mini"),
            Some((0.15, 0.60))
        );
        assert_eq!(
            at("https://api.openai.com/v1", "gpt-4o-2024-08-06"),
            Some((2.50, 10.00))
        );
        assert_eq!(
            at("https://api.anthropic.com/v1", "claude-sonnet-4-5-20250929"),
            Some((3.00, 15.00))
        );
        // A newer model that merely starts the same is not priced as the older one.
        assert_eq!(at("https://api.anthropic.com/v1", "claude-opus-4-6"), None);
        assert_eq!(at("https://api.openai.com/v1", "gpt-4o-mini-search"), None);
        // Not through a proxy, a local server or another vendor's host.
        assert_eq!(at("http://localhost:11434/v1", "gpt-4o-mini"), None);
        assert_eq!(
            at("https://openrouter.ai/api/v1", "openai/gpt-4o-mini"),
            None
        );
        assert_eq!(at("https://api.groq.com/openai/v1", "gpt-4o"), None);
        let p = built_in("https://api.openai.com/v1", "gpt-4.1").unwrap();
        assert_eq!(p.cached_input, Some(0.50));
        assert_eq!(p.source, PriceSource::BuiltIn);
    }
}
