//! What each provider's contract demands of a conversation that another provider wrote part
//! of. A conversation is the user's, not one server's: the model picker lets them go from
//! Kimi to DeepSeek to Claude in one session, and each request must be one its server
//! accepts. So before a request's body is built, the wire adapter asks this file for the
//! target's [`Dialect`] and sends what it requires:
//!
//! - **call ids** in the shape the target takes ([`Dialect::conform_ids`]): Anthropic's
//!   `^[a-zA-Z0-9_-]+$`, Mistral's nine letters and digits, OpenAI's 40 characters at most,
//!   Kimi's own `functions.NAME:N`, the Responses API's 64; unique within the request everywhere (a server that sends
//!   calls without ids gives `call_0` on every answer). A valid, unused id is kept as it is,
//!   so a provider's own calls go back unchanged; a rewritten one depends only on the
//!   conversation before it, so the same history gives the same ids on every request and
//!   the prompt prefix (and the server's cache of it) stays the same. Results follow their
//!   call's new id. The stored conversation keeps the ids it was given.
//! - **a reasoning field on every assistant message with calls**
//!   ([`Dialect::reasoning_placeholder`]): DeepSeek's and Kimi's thinking modes refuse an
//!   assistant tool-call message without `reasoning_content`. A message written by that same
//!   server and model carries its own (see `carried`); any other gets the empty string both
//!   accept. Every other provider is sent no such field (strict OpenAI-compatible servers
//!   refuse it).
//! - **a thought signature on every call** ([`Dialect::foreign_call_signature`]): Gemini 3
//!   refuses a call without one; a call another model wrote gets the value Google documents
//!   for that case.
//!
//! Another provider's opaque state (signatures, encrypted reasoning, Gemini's
//! `extra_content`) never goes anywhere but its origin: that rule lives with the state
//! (`carried`, [`crate::conversation::Carried::for_origin`]). Each provider's rules are its
//! entry in [`PROVIDERS`].

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::conversation::Api;
use crate::conversation::Message;

/// The rules of the server a request goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Dialect {
    /// The provider whose rules these are, for logs and tests.
    pub(crate) provider: &'static str,
    ids: Ids,
    placeholder: Option<&'static str>,
    signature: Option<&'static str>,
}

/// The call ids a provider takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ids {
    /// Any non-empty id, unique in the request.
    Unique,
    /// Letters, digits, `_` and `-` only (Anthropic's pattern).
    Word,
    /// At most this many characters (OpenAI's chat completions take 40).
    AtMost(usize),
    /// Exactly nine letters and digits (Mistral, and vLLM serving Mistral's models).
    NineAlnum,
    /// `functions.NAME:N`, the form Kimi's models are trained on.
    Kimi,
}

/// Who a request goes to, as the rules tell providers apart.
struct ModelTarget {
    api: Api,
    host: String,
    /// The model id without a router's `vendor/` prefix, lowercase.
    model: String,
}

/// One provider's rules and how its server is recognised.
struct Provider {
    name: &'static str,
    recognise: fn(&ModelTarget) -> bool,
    ids: Ids,
    placeholder: Option<&'static str>,
    /// The thought signature a call another model wrote carries, where the provider
    /// demands one on every call and takes this value for calls it did not write.
    signature: Option<&'static str>,
}

/// Routers that speak for many providers and translate themselves (OpenRouter answers with
/// its own fields): a model id naming DeepSeek or Kimi there does not mean their rules.
const ROUTERS: [&str; 1] = ["openrouter.ai"];

/// Every provider with rules of its own, the first that recognises a target wins; a target
/// none recognises gets [`DEFAULT`].
const PROVIDERS: &[Provider] = &[
    // Messages API: Anthropic, and every server that speaks it, checks tool_use ids.
    Provider {
        name: "anthropic",
        recognise: |t| t.api == Api::AnthropicMessages,
        ids: Ids::Word,
        placeholder: None,
        signature: None,
    },
    // Mistral's models check ids wherever they run (Mistral's API, vLLM's Mistral mode).
    Provider {
        name: "mistral",
        recognise: |t| {
            host_is(&t.host, "mistral.ai")
                || [
                    "mistral",
                    "codestral",
                    "devstral",
                    "magistral",
                    "ministral",
                    "pixtral",
                    "open-mistral",
                    "open-mixtral",
                ]
                .iter()
                .any(|p| t.model.starts_with(p))
        },
        ids: Ids::NineAlnum,
        placeholder: None,
        signature: None,
    },
    // DeepSeek's thinking mode: "Missing `reasoning_content` field" otherwise.
    Provider {
        name: "deepseek",
        recognise: |t| {
            t.api == Api::ChatCompletions
                && (host_is(&t.host, "deepseek.com")
                    || (t.model.starts_with("deepseek") && !routed(&t.host)))
        },
        ids: Ids::Unique,
        placeholder: Some("reasoning_content"),
        signature: None,
    },
    // Kimi's thinking mode: "thinking is enabled but reasoning_content is missing in
    // assistant tool call message"; its models read calls as `functions.NAME:N`.
    Provider {
        name: "kimi",
        recognise: |t| {
            t.api == Api::ChatCompletions
                && (host_is(&t.host, "moonshot.ai")
                    || host_is(&t.host, "moonshot.cn")
                    || host_is(&t.host, "kimi.com")
                    || (t.model.starts_with("kimi") && !routed(&t.host)))
        },
        ids: Ids::Kimi,
        placeholder: Some("reasoning_content"),
        signature: None,
    },
    // Gemini 3 on its OpenAI-compatible endpoint: "Function call is missing a
    // thought_signature"; Google's documented value for calls from another model passes.
    Provider {
        name: "gemini",
        recognise: |t| {
            t.api == Api::ChatCompletions
                && (host_is(&t.host, "generativelanguage.googleapis.com")
                    || host_is(&t.host, "aiplatform.googleapis.com")
                    || (gemini_3_or_later(&t.model) && !routed(&t.host)))
        },
        ids: Ids::Unique,
        placeholder: None,
        signature: Some("skip_thought_signature_validator"),
    },
    // OpenAI's chat completions (and Azure's): "string too long. Expected a string with
    // maximum length 40".
    Provider {
        name: "openai",
        recognise: |t| {
            t.api == Api::ChatCompletions
                && (host_is(&t.host, "openai.com") || host_is(&t.host, "openai.azure.com"))
        },
        ids: Ids::AtMost(40),
        placeholder: None,
        signature: None,
    },
    // The Responses API, wherever it is served: a `call_id` over 64 characters is refused
    // (`string_above_max_length`), and Gemini's ids through some proxies run to ninety.
    Provider {
        name: "responses",
        recognise: |t| t.api == Api::Responses,
        ids: Ids::AtMost(64),
        placeholder: None,
        signature: None,
    },
];

/// The rules of a server no entry recognises: ids unique in the request, nothing else.
const DEFAULT: Dialect = Dialect {
    provider: "any",
    ids: Ids::Unique,
    placeholder: None,
    signature: None,
};

/// Whether `model` (bare, lowercase) is Gemini 3 or later, the versions that refuse a call
/// without a thought signature.
fn gemini_3_or_later(model: &str) -> bool {
    let Some(rest) = model.strip_prefix("gemini-") else {
        return false;
    };
    let major: String = rest.chars().take_while(char::is_ascii_digit).collect();
    major.parse::<u32>().is_ok_and(|m| m >= 3)
}

/// Whether `host` is `domain` or one of its subdomains.
fn host_is(host: &str, domain: &str) -> bool {
    host == domain || host.ends_with(&format!(".{domain}"))
}

/// Whether `host` is a router that translates for the providers behind it.
fn routed(host: &str) -> bool {
    ROUTERS.iter().any(|r| host_is(host, r))
}

impl Dialect {
    /// The rules of the server at `base_url` for `model` in `api`.
    pub(crate) fn of(api: Api, base_url: &str, model: &str) -> Dialect {
        let host = reqwest::Url::parse(base_url)
            .ok()
            .and_then(|u| u.host_str().map(str::to_ascii_lowercase))
            .unwrap_or_default();
        let bare = model
            .rsplit('/')
            .next()
            .unwrap_or(model)
            .to_ascii_lowercase();
        let target = ModelTarget {
            api,
            host,
            model: bare,
        };
        PROVIDERS
            .iter()
            .find(|p| (p.recognise)(&target))
            .map_or(DEFAULT, |p| Dialect {
                provider: p.name,
                ids: p.ids,
                placeholder: p.placeholder,
                signature: p.signature,
            })
    }

    /// The field an assistant message with calls must carry (sent empty when the message
    /// has no reasoning of this server's), if the provider demands one.
    pub(crate) fn reasoning_placeholder(&self) -> Option<&'static str> {
        self.placeholder
    }

    /// The thought signature the first call of an answer another model wrote carries
    /// (as `extra_content.google.thought_signature`), if the provider demands one. Every such
    /// answer gets it, not only the current turn's, so the prompt prefix stays the same from
    /// one turn to the next.
    pub(crate) fn foreign_call_signature(&self) -> Option<&'static str> {
        self.signature
    }

    /// These rules without the reasoning field or the signature: for a server that refused
    /// reasoning or `extra_content` sent back (`wire::chat`), which must not be sent a
    /// placeholder of either.
    pub(crate) fn without_reasoning(self) -> Dialect {
        Dialect {
            placeholder: None,
            signature: None,
            ..self
        }
    }

    /// Whether requests to this server carry a placeholder (a reasoning field or a
    /// signature) that [`Dialect::without_reasoning`] would leave out.
    pub(crate) fn adds_placeholders(&self) -> bool {
        self.placeholder.is_some() || self.signature.is_some()
    }

    /// `messages` with every call id the target takes: `None` when all of them already
    /// are (nothing is copied then), else the conversation with the assistant messages
    /// whose calls got new ids, and the results that answer them, rewritten.
    pub(crate) fn conform_ids(&self, messages: &[Arc<Message>]) -> Option<Vec<Arc<Message>>> {
        let mut ids = Relabel::new(self.ids);
        let mut out: Option<Vec<Arc<Message>>> = None;
        for (index, message) in messages.iter().enumerate() {
            let rewritten = match &**message {
                Message::Assistant { tool_calls, .. } if !tool_calls.is_empty() => {
                    ids.calls(message)
                }
                Message::Tool { call_id, .. } => ids.result(message, call_id),
                _ => None,
            };
            if let Some(rewritten) = rewritten {
                let out = out.get_or_insert_with(|| messages[..index].to_vec());
                out.push(Arc::new(rewritten));
            } else if let Some(out) = out.as_mut() {
                out.push(message.clone());
            }
        }
        out
    }
}

/// The ids given out while one request's conversation is walked, in order.
struct Relabel {
    rule: Ids,
    /// Every id the request uses so far.
    used: HashSet<String>,
    /// The id sent for each original id, its latest call.
    sent_as: HashMap<String, String>,
    /// Calls seen so far: a rewritten id is made from its call's place.
    seen: usize,
}

impl Relabel {
    fn new(rule: Ids) -> Self {
        Self {
            rule,
            used: HashSet::new(),
            sent_as: HashMap::new(),
            seen: 0,
        }
    }

    /// The assistant `message` with its calls' ids conformed, or `None` when each was kept.
    fn calls(&mut self, message: &Message) -> Option<Message> {
        let Message::Assistant { tool_calls, .. } = message else {
            return None;
        };
        let mut given = Vec::with_capacity(tool_calls.len());
        for call in tool_calls {
            let id = if accepts(self.rule, &call.id) && !self.used.contains(&call.id) {
                call.id.clone()
            } else {
                self.make(&call.id, &call.name)
            };
            self.seen += 1;
            self.used.insert(id.clone());
            self.sent_as.insert(call.id.clone(), id.clone());
            given.push(id);
        }
        if tool_calls.iter().zip(&given).all(|(c, id)| &c.id == id) {
            return None;
        }
        let mut rewritten = message.clone();
        if let Message::Assistant {
            tool_calls,
            carried,
            ..
        } = &mut rewritten
        {
            for (call, id) in tool_calls.iter_mut().zip(given) {
                call.id = id;
            }
            // The answer's recorded order names its calls by id: it follows them.
            if let Some(layout) = carried
                .as_mut()
                .and_then(|c| c.data.get_mut("layout"))
                .and_then(serde_json::Value::as_array_mut)
            {
                super::carried::relabel_calls(layout, tool_calls);
            }
        }
        Some(rewritten)
    }

    /// The result `message` answering `call_id` under its call's sent id, or `None` when
    /// that is the id it has.
    fn result(&mut self, message: &Message, call_id: &str) -> Option<Message> {
        let sent = match self.sent_as.get(call_id) {
            Some(sent) => sent.clone(),
            // A result whose call is not in the request (it never should be): its id still
            // has to be one the server takes.
            None if accepts(self.rule, call_id) => return None,
            None => {
                let id = self.make(call_id, "");
                self.used.insert(id.clone());
                self.sent_as.insert(call_id.to_string(), id.clone());
                id
            }
        };
        if sent == call_id {
            return None;
        }
        let mut rewritten = message.clone();
        if let Message::Tool { call_id, .. } = &mut rewritten {
            *call_id = sent;
        }
        Some(rewritten)
    }

    /// A new id for the call `original` (of tool `name`) that the rule takes and the request
    /// has not used: made from the original and the call's place, so the same conversation
    /// gives the same id every time.
    fn make(&self, original: &str, name: &str) -> String {
        let mut salt = 0u64;
        loop {
            let place = self.seen as u64 + salt;
            let id = match self.rule {
                Ids::Unique => format!("{}_{place}", nonempty(original)),
                Ids::Word => {
                    let word: String = original
                        .chars()
                        .map(|c| if word_char(c) { c } else { '_' })
                        .collect();
                    format!("{}_{place}", nonempty(&word))
                }
                Ids::AtMost(max) => {
                    let suffix = format!("_{place}");
                    let keep = max.saturating_sub(suffix.len());
                    let head: String = nonempty(original).chars().take(keep).collect();
                    format!("{head}{suffix}")
                }
                Ids::NineAlnum => nine_alnum(original, place),
                Ids::Kimi => {
                    let name: String = name.chars().filter(|c| !c.is_whitespace()).collect();
                    format!("functions.{}:{place}", nonempty(&name))
                }
            };
            if !self.used.contains(&id) && accepts(self.rule, &id) {
                return id;
            }
            salt += 1;
        }
    }
}

/// `text`, or `call` when it is empty.
fn nonempty(text: &str) -> &str {
    if text.is_empty() { "call" } else { text }
}

/// Whether `id` is one `rule` takes.
fn accepts(rule: Ids, id: &str) -> bool {
    if id.is_empty() {
        return false;
    }
    match rule {
        Ids::Unique => true,
        Ids::Kimi => id.strip_prefix("functions.").is_some_and(|rest| {
            rest.rsplit_once(':').is_some_and(|(name, n)| {
                !name.is_empty() && !n.is_empty() && n.chars().all(|c| c.is_ascii_digit())
            })
        }),
        Ids::Word => id.chars().all(word_char),
        Ids::AtMost(max) => id.chars().count() <= max,
        Ids::NineAlnum => id.len() == 9 && id.chars().all(|c| c.is_ascii_alphanumeric()),
    }
}

fn word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// Nine letters and digits from `original` and `place` (FNV-1a, fixed across runs and
/// builds, unlike the standard library's hasher).
fn nine_alnum(original: &str, place: u64) -> String {
    const ALPHABET: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in original.bytes().chain(place.to_le_bytes()) {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    (0..9)
        .map(|_| {
            let c = ALPHABET[(hash % 62) as usize] as char;
            hash /= 62;
            c
        })
        .collect()
}

#[cfg(test)]
#[path = "dialect_tests.rs"]
mod tests;
