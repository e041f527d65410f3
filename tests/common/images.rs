//! Where each API takes images, enforced the way its server does: a request that puts one
//! where the API does not take it, or sends bytes that are not the image they claim to be,
//! gets the provider's own 400.
//!
//! - Chat completions (OpenAI): images only in `user` messages; a `tool` message holds text.
//! - Responses: a `function_call_output` may be a list of `input_text` and `input_image`.
//! - Messages (Anthropic): a `tool_result` may hold `text` and `image` blocks; an image's
//!   `media_type` must be one of four and match its bytes.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};

use super::wire::Api;

/// A 1x1 PNG, base64: the image tests attach.
pub(crate) const PIXEL_PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

/// The API's refusal of `body` for an image out of place or broken, when there is one.
pub(crate) fn check(api: Api, body: &Value) -> Option<(u16, String)> {
    match api {
        Api::Chat => chat(body),
        Api::Responses => responses(body),
        Api::Anthropic => anthropic(body),
    }
}

/// What the bytes of a base64 image are, when they are one of the four formats.
fn sniffed(data: &str) -> Option<&'static str> {
    let bytes = STANDARD.decode(data).ok()?;
    match bytes.as_slice() {
        [0x89, b'P', b'N', b'G', ..] => Some("image/png"),
        [0xff, 0xd8, 0xff, ..] => Some("image/jpeg"),
        [b'G', b'I', b'F', b'8', ..] => Some("image/gif"),
        [
            b'R',
            b'I',
            b'F',
            b'F',
            _,
            _,
            _,
            _,
            b'W',
            b'E',
            b'B',
            b'P',
            ..,
        ] => Some("image/webp"),
        _ => None,
    }
}

/// A `data:` URL that OpenAI would not decode as an image.
fn bad_data_url(url: &str) -> bool {
    let Some((mime, data)) = url
        .strip_prefix("data:")
        .and_then(|r| r.split_once(";base64,"))
    else {
        return !url.starts_with("https://");
    };
    sniffed(data) != Some(mime)
}

fn openai(message: &str, param: &str, code: &str) -> Option<(u16, String)> {
    let body = json!({"error": {"message": message, "type": "invalid_request_error",
        "param": param, "code": code}});
    Some((400, body.to_string()))
}

fn unsupported_image(param: &str) -> Option<(u16, String)> {
    openai(
        "You uploaded an unsupported image. Please make sure your image has of one the following formats: ['png', 'jpeg', 'gif', 'webp'].",
        param,
        "invalid_image_format",
    )
}

fn chat(body: &Value) -> Option<(u16, String)> {
    let messages = body["messages"].as_array()?;
    for (i, message) in messages.iter().enumerate() {
        let role = message["role"].as_str().unwrap_or_default();
        for (j, part) in message["content"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            if part["type"] != "image_url" {
                continue;
            }
            let param = format!("messages.[{i}].content.[{j}]");
            if role != "user" {
                return openai(
                    &format!(
                        "Invalid 'messages[{i}]'. Image URLs are only allowed for messages with role 'user', but this message with role '{role}' contains an image URL."
                    ),
                    &format!("messages.[{i}].content"),
                    "invalid_value",
                );
            }
            if bad_data_url(part["image_url"]["url"].as_str().unwrap_or_default()) {
                return unsupported_image(&param);
            }
        }
    }
    None
}

fn responses(body: &Value) -> Option<(u16, String)> {
    let items = body["input"].as_array()?;
    for (i, item) in items.iter().enumerate() {
        let parts = match item["type"].as_str() {
            Some("function_call_output") => item["output"].as_array(),
            Some("message") | None => item["content"].as_array(),
            _ => None,
        };
        for (j, part) in parts.into_iter().flatten().enumerate() {
            let kind = part["type"].as_str().unwrap_or_default();
            let param = format!("input[{i}].output[{j}]");
            match kind {
                "input_text" | "input_file" => {}
                "input_image" => {
                    if bad_data_url(part["image_url"].as_str().unwrap_or_default()) {
                        return unsupported_image(&param);
                    }
                }
                "output_text" if item["role"] == "assistant" => {}
                _ => {
                    return openai(
                        &format!(
                            "Invalid value: '{kind}'. Supported values are: 'input_text', 'input_image', and 'input_file'."
                        ),
                        &format!("{param}.type"),
                        "invalid_value",
                    );
                }
            }
        }
    }
    None
}

fn anthropic_invalid(message: &str) -> Option<(u16, String)> {
    let body = json!({"type": "error", "error": {"type": "invalid_request_error",
        "message": message}});
    Some((400, body.to_string()))
}

fn anthropic(body: &Value) -> Option<(u16, String)> {
    let messages = body["messages"].as_array()?;
    for (i, message) in messages.iter().enumerate() {
        for (k, block) in message["content"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            let at = format!("messages.{i}.content.{k}");
            let refused = match block["type"].as_str() {
                Some("image") => anthropic_image(&at, block),
                Some("tool_result") => {
                    let inner = block["content"].as_array().into_iter().flatten();
                    inner.enumerate().find_map(|(j, b)| {
                        let at = format!("{at}.tool_result.content.{j}");
                        match b["type"].as_str().unwrap_or_default() {
                            "text" | "search_result" | "document" => None,
                            "image" => anthropic_image(&at, b),
                            other => anthropic_invalid(&format!(
                                "{at}.type: Input tag '{other}' found using 'type' does not match any of the expected tags: 'document', 'image', 'search_result', 'text'"
                            )),
                        }
                    })
                }
                _ => None,
            };
            if refused.is_some() {
                return refused;
            }
        }
    }
    None
}

fn anthropic_image(at: &str, block: &Value) -> Option<(u16, String)> {
    let source = &block["source"];
    if source["type"] == "url" {
        return None;
    }
    let claimed = source["media_type"].as_str().unwrap_or_default();
    if !["image/jpeg", "image/png", "image/gif", "image/webp"].contains(&claimed) {
        return anthropic_invalid(&format!(
            "{at}.source.base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'"
        ));
    }
    match sniffed(source["data"].as_str().unwrap_or_default()) {
        None => anthropic_invalid(&format!("{at}.source.base64.data: Could not process image")),
        Some(real) if real != claimed => anthropic_invalid(&format!(
            "{at}.source.base64.data: Image does not match the provided media type {claimed}"
        )),
        Some(_) => None,
    }
}
