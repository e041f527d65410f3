//! Two questions for a model server, asked by `tandem doctor` and `tandem login`: which
//! models it lists (`GET /models`), and whether a one-token completion works.

use std::time::Duration;

use futures::StreamExt;

use super::{Message, ModelError, ModelRequest};
use crate::config::{ApiKey, Config};
use crate::types::UserPart;

/// How long either question may take.
const PATIENCE: Duration = Duration::from_secs(60);

/// Why the model list could not be had.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ListError {
    /// 401 or 403: the key is wrong, or one is needed.
    #[error("the server refused the request (HTTP {status}){}", detail_suffix(.detail))]
    Refused {
        /// The status.
        status: u16,
        /// The server's words, shortened.
        detail: String,
    },
    /// Another error status.
    #[error("the server answered HTTP {status}{}", detail_suffix(.detail))]
    Failed {
        /// The status.
        status: u16,
        /// The server's words, shortened.
        detail: String,
    },
    /// Something answered, but not as an OpenAI-compatible server does: a web page, or no
    /// model list where one was asked for. `suggest` is the same address with `/v1` when
    /// that one answers with a model list.
    #[error("{answered}: this does not look like an OpenAI-compatible server's API{}", suggest_suffix(.suggest))]
    NotCompatible {
        /// What it answered, shortened (`HTTP 404 with an HTML page titled "Not Found"`).
        answered: String,
        /// The base URL to use instead, when one was found.
        suggest: Option<String>,
    },
    /// Nothing answered: the cause in words ("could not resolve host …").
    #[error("{0}")]
    Unreachable(String),
}

fn suggest_suffix(suggest: &Option<String>) -> String {
    match suggest {
        Some(url) => format!(" at this address, but {url} is: use that as the base URL"),
        None => {
            " (the base URL is the part before /chat/completions, often ending in /v1)".to_string()
        }
    }
}

fn detail_suffix(detail: &str) -> String {
    if detail.is_empty() {
        String::new()
    } else {
        format!(": {detail}")
    }
}

/// What `GET /models` gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listing {
    /// The model ids, sorted.
    Models(Vec<String>),
    /// The server has no model list: `GET /models` answered 404 or 405 (what it said,
    /// shortened). It may still chat; the one-token request tells.
    NotOffered(String),
}

/// The models `base_url` lists, asked with `key` when there is one.
pub async fn list_models(
    base_url: &str,
    api: crate::conversation::Api,
    key: Option<&ApiKey>,
) -> Result<Listing, ListError> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::builder()
        .timeout(PATIENCE)
        .redirect(super::wire::same_server_redirects())
        .build()
        .map_err(|e| ListError::Unreachable(crate::platform::net::describe_reqwest(&e)))?;
    let (status, body) = get_models(&client, base_url, api, key).await?;
    let detail = || short_detail(&body);
    let answered = || answered(status, &body);
    match status {
        200..=299 => match model_ids(&body) {
            Some(ids) => Ok(Listing::Models(ids)),
            None => Err(ListError::NotCompatible {
                answered: answered(),
                suggest: with_v1(&client, base_url).await,
            }),
        },
        404 | 405 => match with_v1(&client, base_url).await {
            Some(url) => Err(ListError::NotCompatible {
                answered: answered(),
                suggest: Some(url),
            }),
            None if looks_like_a_page(&body) => Err(ListError::NotCompatible {
                answered: answered(),
                suggest: None,
            }),
            None => Ok(Listing::NotOffered(answered())),
        },
        401 | 403 => Err(ListError::Refused {
            status,
            detail: detail(),
        }),
        _ => Err(ListError::Failed {
            status,
            detail: detail(),
        }),
    }
}

/// `GET {base_url}/models`: the status and the body.
async fn get_models(
    client: &reqwest::Client,
    base_url: &str,
    api: crate::conversation::Api,
    key: Option<&ApiKey>,
) -> Result<(u16, Vec<u8>), ListError> {
    let request = client
        .get(format!("{base_url}/models"))
        .headers(super::wire::auth_headers(api, key));
    let response = request
        .send()
        .await
        .map_err(|e| ListError::Unreachable(crate::platform::net::describe_reqwest(&e)))?;
    let status = response.status().as_u16();
    Ok((
        status,
        crate::platform::net::read_capped(response, super::http::MOST_LIST_BODY).await,
    ))
}

/// `base_url` with `/v1` added, when it lacks it and an API answers there: the usual slip
/// is the server's address without its API's path. The key is not sent: it goes only to the
/// address the user gave. A list of models, or a JSON refusal for want of a key, is an API.
async fn with_v1(client: &reqwest::Client, base_url: &str) -> Option<String> {
    let path = reqwest::Url::parse(base_url).ok()?.path().to_string();
    if path.split('/').any(|part| part == "v1") {
        return None;
    }
    let candidate = format!("{}/v1", base_url.trim_end_matches('/'));
    match get_models(client, &candidate, Default::default(), None).await {
        Ok((200..=299, body)) if model_ids(&body).is_some() => Some(candidate),
        Ok((401 | 403, body)) if serde_json::from_slice::<serde_json::Value>(&body).is_ok() => {
            Some(candidate)
        }
        _ => None,
    }
}

/// A web page, where an API answers JSON or a short line.
fn looks_like_a_page(body: &[u8]) -> bool {
    super::excerpt::looks_like_html(String::from_utf8_lossy(body).trim())
}

/// `HTTP 404 with …`: the status and the body in a few words.
fn answered(status: u16, body: &[u8]) -> String {
    if body.iter().all(u8::is_ascii_whitespace) {
        format!("HTTP {status} with an empty body")
    } else {
        format!("HTTP {status} with {}", quoted(&super::excerpt::of(body)))
    }
}

/// An excerpt in quotes, unless it already names what it is (`an HTML page …`).
fn quoted(excerpt: &str) -> String {
    if excerpt.starts_with("an HTML page") {
        excerpt.to_string()
    } else {
        format!("\"{excerpt}\"")
    }
}

/// The ids in an OpenAI-style model list (`discover::model_entries`), sorted and without
/// repeats; `None` when the body is not such a list.
fn model_ids(body: &[u8]) -> Option<Vec<String>> {
    let value = serde_json::from_slice::<serde_json::Value>(body).ok()?;
    let models = super::discover::model_entries(&value)?;
    let mut ids: Vec<String> = models
        .iter()
        .filter_map(|m| m["id"].as_str().map(String::from))
        .collect();
    ids.sort();
    ids.dedup();
    Some(ids)
}

/// The server's error message (`error.message`, else the body), on one short line.
fn short_detail(body: &[u8]) -> String {
    let message = serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|v| {
            v["error"]["message"]
                .as_str()
                .or_else(|| v["error"].as_str())
                .or_else(|| v["message"].as_str())
                .map(String::from)
        });
    match message {
        Some(message) => super::excerpt::of(message.as_bytes()),
        None => super::excerpt::of(body),
    }
}

/// Sends `config`'s default model a one-token chat completion and reads the answer through.
pub async fn one_token(config: &Config) -> Result<(), ModelError> {
    let client = super::client_for(config)?;
    let request = ModelRequest {
        model: config.default_model.clone(),
        messages: vec![std::sync::Arc::new(Message::User(vec![UserPart::Text(
            "Reply with OK.".into(),
        )]))],
        reasoning_effort: None,
        tools: Vec::new(),
        max_tokens: Some(1),
        response_format: None,
        cache_key: None,
    };
    let answer = async {
        let mut stream = client.open(request).await?;
        while let Some(event) = stream.next().await {
            event?;
        }
        Ok(())
    };
    match tokio::time::timeout(PATIENCE, answer).await {
        Ok(result) => result,
        Err(_) => Err(ModelError::new(
            super::error::ErrorClass::Timeout,
            format!(
                "the chat completion did not finish within {} s",
                PATIENCE.as_secs()
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_ids_are_sorted_and_unique_and_errors_are_short() {
        let body = br#"{"data":[{"id":"b"},{"id":"a"},{"id":"b"},{"x":1}]}"#;
        assert_eq!(
            model_ids(body),
            Some(vec!["a".to_string(), "b".to_string()])
        );
        assert_eq!(model_ids(b"not json"), None);
        assert_eq!(model_ids(br#"{"models": []}"#), None);
        assert_eq!(model_ids(br#"{"data": []}"#), Some(Vec::new()));
        assert_eq!(
            model_ids(br#"{"object": "list", "data": null}"#),
            Some(Vec::new())
        );
        assert_eq!(model_ids(br#"[{"id": "x"}]"#), Some(vec!["x".to_string()]));
        assert_eq!(model_ids(br#"{"data": "no"}"#), None);
        assert_eq!(
            short_detail(br#"{"error":{"message":"Incorrect  API\nkey"}}"#),
            "Incorrect API key"
        );
        assert_eq!(short_detail(&[b'x'; 300]).chars().count(), 161);
    }
}
