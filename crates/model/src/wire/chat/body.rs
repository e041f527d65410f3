//! The JSON body of a chat-completions request: what a [`ModelRequest`] looks like on the
//! wire to any OpenAI-compatible server. The keys tandem knows are taken out of it, as out of
//! every API's body, where it is sent (`wire::Link::open`).
//!
//! An assistant message's provider state goes back when it came from the same server and
//! model ([`Origin`]): its reasoning in the field it arrived in (`reasoning_content` for
//! DeepSeek, vLLM and llama.cpp; `reasoning` for Ollama and OpenRouter), OpenRouter's
//! `reasoning_details` unchanged, and each call's `extra_content` (Gemini's thought
//! signatures). What the target demands of messages another server wrote — call ids in its
//! shape, an empty `reasoning_content` for DeepSeek's and Kimi's thinking modes — comes from
//! its [`Dialect`].

use serde_json::{Value, json};

use crate::dialect::Dialect;
use crate::{Carried, Message, ModelRequest, Origin, UserPart};

/// The JSON body of a streaming chat-completions request to `origin`, whose rules are
/// `dialect`'s.
pub(crate) fn request_body(request: &ModelRequest, origin: &Origin, dialect: &Dialect) -> Value {
    let conformed = dialect.conform_ids(&request.messages);
    let conversation = conformed.as_deref().unwrap_or(&request.messages);
    let messages = messages_json(conversation, origin, dialect);
    let mut body = json!({
        "model": request.model,
        "messages": messages,
        "stream": true,
        "stream_options": { "include_usage": true },
    });
    if let Some(effort) = &request.reasoning_effort {
        body["reasoning_effort"] = json!(effort);
    }
    if let Some(max) = request.max_tokens {
        body["max_tokens"] = json!(max);
    }
    if let Some(schema) = &request.response_format {
        // Not `strict`: OpenAI's strict mode refuses most hand-written schemas; the answer is
        // validated (and repaired once) by tandem either way.
        body["response_format"] = json!({"type": "json_schema", "json_schema": {
            "name": "answer", "schema": schema, "strict": false}});
    }
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| {
                json!({"type": "function", "function": {
                    "name": t.name, "description": t.description, "parameters": t.parameters}})
            })
            .collect();
        body["tools"] = json!(tools);
    }
    body
}

/// The messages on the wire. A `tool` message holds only text, so the images tool results
/// gave go in a user message right after the results (or at the start of the user message
/// that follows them, so roles still alternate), each call's images after a line naming it.
fn messages_json(
    messages: &[std::sync::Arc<Message>],
    origin: &Origin,
    dialect: &Dialect,
) -> Vec<Value> {
    let mut out = Vec::with_capacity(messages.len() + 1);
    let mut images: Vec<Value> = Vec::new();
    for message in messages {
        let message = &**message;
        if !images.is_empty() && !matches!(message, Message::Tool { .. }) {
            let mut content = std::mem::take(&mut images);
            if let Message::User(parts) = message {
                content.extend(parts.iter().map(user_part));
                out.push(json!({ "role": "user", "content": content }));
                continue;
            }
            out.push(json!({ "role": "user", "content": content }));
        }
        if let Message::Tool {
            call_id,
            images: given,
            ..
        } = message
            && !given.is_empty()
        {
            let note = format!("The images the `{call_id}` call gave:");
            images.push(json!({ "type": "text", "text": note }));
            images.extend(given.iter().map(|url| image_part(url)));
        }
        out.push(message_json(message, origin, dialect));
    }
    if !images.is_empty() {
        out.push(json!({ "role": "user", "content": images }));
    }
    out
}

fn image_part(url: &str) -> Value {
    json!({ "type": "image_url", "image_url": { "url": url } })
}

fn user_part(part: &UserPart) -> Value {
    match (part, part.as_text()) {
        (UserPart::Image { url }, _) => image_part(url),
        (_, text) => json!({ "type": "text", "text": text.unwrap_or_default() }),
    }
}

fn message_json(message: &Message, origin: &Origin, dialect: &Dialect) -> Value {
    match message {
        Message::System(text) => json!({ "role": "system", "content": text }),
        Message::Assistant {
            text,
            reasoning,
            tool_calls,
            carried,
        } => {
            let state = Carried::for_origin(carried.as_deref(), origin);
            let mut out = if tool_calls.is_empty() {
                json!({ "role": "assistant", "content": text })
            } else {
                let calls: Vec<Value> = tool_calls
                    .iter()
                    .map(|c| {
                        let mut call = json!({"id": c.id, "type": "function",
                               "function": {"name": c.name, "arguments": c.arguments}});
                        if let (Some(extra), Some(_)) = (&c.extra, state) {
                            call["extra_content"] = (**extra).clone();
                        }
                        call
                    })
                    .collect();
                let content = if text.is_empty() {
                    Value::Null
                } else {
                    json!(text)
                };
                let mut calls = calls;
                if let (Some(signature), Some(first)) =
                    (dialect.foreign_call_signature(), calls.first_mut())
                    && first.get("extra_content").is_none()
                {
                    first["extra_content"] = json!({"google": {"thought_signature": signature}});
                }
                json!({ "role": "assistant", "content": content, "tool_calls": calls })
            };
            if let Some(state) = state {
                if let Some(field) = state["reasoning_field"].as_str() {
                    out[field] = json!(reasoning);
                }
                if let Some(details) = state.get("reasoning_details") {
                    out["reasoning_details"] = details.clone();
                }
            }
            if let Some(field) = dialect.reasoning_placeholder()
                && !tool_calls.is_empty()
                && out.get(field).is_none()
            {
                out[field] = json!("");
            }
            out
        }
        Message::Tool {
            call_id, content, ..
        } => {
            json!({ "role": "tool", "tool_call_id": call_id, "content": content })
        }
        Message::User(parts) => {
            let texts: Option<Vec<_>> = parts.iter().map(UserPart::as_text).collect();
            if let Some(texts) = texts {
                // Plain string content: the form every compatible server accepts.
                json!({ "role": "user", "content": texts.join("\n\n") })
            } else {
                let content: Vec<Value> = parts.iter().map(user_part).collect();
                json!({ "role": "user", "content": content })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn any() -> Dialect {
        Dialect::of(
            crate::conversation::Api::ChatCompletions,
            "http://s/v1",
            "m",
        )
    }

    fn origin() -> Origin {
        Origin {
            api: crate::conversation::Api::ChatCompletions,
            server: "http://s/v1".into(),
            model: "m".into(),
        }
    }

    #[test]
    fn state_goes_back_to_its_own_server_and_model_only() {
        let said = |model: &str| Message::Assistant {
            text: String::new(),
            reasoning: "because".into(),
            tool_calls: vec![crate::ToolCall {
                extra: Some(Box::new(json!({"google": {"thought_signature": "T"}}))),
                ..crate::ToolCall::new("c1", "read_file", "{}")
            }],
            carried: Some(Box::new(Carried {
                origin: Origin {
                    model: model.into(),
                    ..origin()
                },
                data: json!({"reasoning_field": "reasoning_content",
                             "reasoning_details": [{"type": "reasoning.text", "text": "because"}]}),
            })),
        };
        let req = |model: &str| ModelRequest {
            model: "m".into(),
            messages: vec![said(model).into()],
            reasoning_effort: None,
            tools: Vec::new(),
            max_tokens: None,
            response_format: None,
            cache_key: None,
        };
        let body = request_body(&req("m"), &origin(), &any());
        let m = &body["messages"][0];
        assert_eq!(m["reasoning_content"], "because");
        assert_eq!(m["reasoning_details"][0]["text"], "because");
        assert_eq!(
            m["tool_calls"][0]["extra_content"]["google"]["thought_signature"],
            "T"
        );
        let body = request_body(&req("other"), &origin(), &any());
        let m = &body["messages"][0];
        assert!(m.get("reasoning_content").is_none() && m.get("reasoning_details").is_none());
        assert!(m["tool_calls"][0].get("extra_content").is_none());
    }

    #[test]
    fn text_only_user_content_is_a_string() {
        let req = ModelRequest {
            model: "m".into(),
            messages: vec![
                Message::System("sys".into()).into(),
                Message::User(vec![UserPart::Text("a".into()), UserPart::Text("b".into())]).into(),
            ],
            reasoning_effort: Some("low".into()),
            tools: Vec::new(),
            max_tokens: None,
            response_format: None,
            cache_key: None,
        };
        let body = request_body(&req, &origin(), &any());
        assert_eq!(body["messages"][1]["content"], "a\n\nb");
        assert_eq!(body["stream_options"]["include_usage"], true);
        assert_eq!(body["reasoning_effort"], "low");
    }

    #[test]
    fn tool_calls_and_results_round_trip() {
        let req = ModelRequest {
            model: "m".into(),
            messages: vec![
                Message::Assistant {
                    text: String::new(),
                    reasoning: String::new(),
                    tool_calls: vec![crate::ToolCall::new("c1", "read_file", "{}")],
                    carried: None,
                }
                .into(),
                Message::Tool {
                    call_id: "c1".into(),
                    content: "text".into(),
                    images: Vec::new(),
                }
                .into(),
            ],
            reasoning_effort: None,
            tools: vec![crate::ToolSpec {
                name: "read_file".into(),
                description: "d".into(),
                parameters: json!({"type": "object"}),
            }],
            max_tokens: Some(1),
            response_format: None,
            cache_key: None,
        };
        let body = request_body(&req, &origin(), &any());
        assert_eq!(body["messages"][0]["content"], Value::Null);
        assert_eq!(body["max_tokens"], 1);
        assert_eq!(
            body["messages"][0]["tool_calls"][0]["function"]["name"],
            "read_file"
        );
        assert_eq!(body["messages"][1]["tool_call_id"], "c1");
        assert_eq!(body["tools"][0]["function"]["parameters"]["type"], "object");
    }

    #[test]
    fn images_make_content_parts() {
        let req = ModelRequest {
            model: "m".into(),
            messages: vec![
                Message::User(vec![
                    UserPart::Text("look".into()),
                    UserPart::Image {
                        url: "data:image/png;base64,AA==".into(),
                    },
                ])
                .into(),
            ],
            reasoning_effort: None,
            tools: Vec::new(),
            max_tokens: None,
            response_format: None,
            cache_key: None,
        };
        let body = request_body(&req, &origin(), &any());
        assert_eq!(body["messages"][0]["content"][1]["type"], "image_url");
        assert!(body.get("reasoning_effort").is_none());
    }

    #[test]
    fn tool_images_follow_the_results_and_join_a_prompt_after_them() {
        let tool = |id: &str, images: &[&str]| Message::Tool {
            call_id: id.into(),
            content: format!("result {id}"),
            images: images.iter().map(|s| s.to_string()).collect(),
        };
        let calls = Message::Assistant {
            text: String::new(),
            reasoning: String::new(),
            tool_calls: vec![
                crate::ToolCall::new("a", "x", "{}"),
                crate::ToolCall::new("b", "y", "{}"),
            ],
            carried: None,
        };
        let req = |messages: Vec<Message>| ModelRequest {
            model: "m".into(),
            messages: messages.into_iter().map(std::sync::Arc::new).collect(),
            reasoning_effort: None,
            tools: Vec::new(),
            max_tokens: None,
            response_format: None,
            cache_key: None,
        };
        // At the end of the conversation: a user message of their own after the results.
        let body = request_body(
            &req(vec![calls.clone(), tool("a", &["data:A"]), tool("b", &[])]),
            &origin(),
            &any(),
        );
        let messages = body["messages"].as_array().unwrap();
        let roles: Vec<&str> = messages.iter().filter_map(|m| m["role"].as_str()).collect();
        assert_eq!(roles, ["assistant", "tool", "tool", "user"]);
        assert_eq!(messages[1]["content"], "result a");
        assert_eq!(
            messages[3]["content"],
            json!([{"type": "text", "text": "The images the `a` call gave:"},
                   {"type": "image_url", "image_url": {"url": "data:A"}}])
        );
        // A prompt after them takes them at its start, so roles still alternate.
        let body = request_body(
            &req(vec![
                calls,
                tool("a", &[]),
                tool("b", &["data:B1", "data:B2"]),
                Message::User(vec![UserPart::Text("go on".into())]),
            ]),
            &origin(),
            &any(),
        );
        let messages = body["messages"].as_array().unwrap();
        assert_eq!(messages.len(), 4);
        let content = messages[3]["content"].as_array().unwrap();
        assert_eq!(content.len(), 4);
        assert_eq!(content[2]["image_url"]["url"], "data:B2");
        assert_eq!(content[3], json!({"type": "text", "text": "go on"}));
    }
}
