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
    /// Nothing answered: the cause in words ("could not resolve host …").
    #[error("{0}")]
    Unreachable(String),
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
    /// The server has no such endpoint (404 or 405).
    NotOffered,
}

/// The models `base_url` lists, asked with `key` when there is one.
pub async fn list_models(base_url: &str, key: Option<&ApiKey>) -> Result<Listing, ListError> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::builder()
        .timeout(PATIENCE)
        .build()
        .map_err(|e| ListError::Unreachable(super::http::describe_reqwest(&e)))?;
    let mut request = client.get(format!("{base_url}/models"));
    if let Some(key) = key {
        request = request.bearer_auth(key.expose());
    }
    let response = request
        .send()
        .await
        .map_err(|e| ListError::Unreachable(super::http::describe_reqwest(&e)))?;
    let status = response.status().as_u16();
    let body = response.bytes().await.unwrap_or_default();
    let detail = || short_detail(&body);
    match status {
        200..=299 => Ok(Listing::Models(model_ids(&body))),
        404 | 405 => Ok(Listing::NotOffered),
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

/// The ids in an OpenAI-style model list, sorted and without repeats.
fn model_ids(body: &[u8]) -> Vec<String> {
    let mut ids: Vec<String> = serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v["data"].as_array().cloned())
        .unwrap_or_default()
        .iter()
        .filter_map(|m| m["id"].as_str().map(String::from))
        .collect();
    ids.sort();
    ids.dedup();
    ids
}

/// The server's error message (`error.message`, else the body), on one short line.
fn short_detail(body: &[u8]) -> String {
    let text = serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|v| {
            v["error"]["message"]
                .as_str()
                .or_else(|| v["error"].as_str())
                .or_else(|| v["message"].as_str())
                .map(String::from)
        })
        .unwrap_or_else(|| String::from_utf8_lossy(body).into_owned());
    let line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut short: String = line.chars().take(200).collect();
    if short.len() < line.len() {
        short.push('…');
    }
    crate::secrets::redact(&short).into_owned()
}

/// Sends `config`'s default model a one-token chat completion and reads the answer through.
pub async fn one_token(config: &Config) -> Result<(), ModelError> {
    let client = super::client_for(config)?;
    let request = ModelRequest {
        model: config.default_model.clone(),
        messages: vec![Message::User(vec![UserPart::Text("Reply with OK.".into())])],
        reasoning_effort: None,
        tools: Vec::new(),
        max_tokens: Some(1),
        response_format: None,
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
        assert_eq!(model_ids(body), ["a", "b"]);
        assert_eq!(model_ids(b"not json"), Vec::<String>::new());
        assert_eq!(
            short_detail(br#"{"error":{"message":"Incorrect  API\nkey"}}"#),
            "Incorrect API key"
        );
        assert_eq!(short_detail(&[b'x'; 300]).chars().count(), 201);
    }
}
