//! Tools for servers that take none: when a server refuses `tools` for a model (llama.cpp
//! without `--jinja`, an Ollama model without a tool template), the same request is sent
//! with the tools described in the system prompt and the conversation's calls and results
//! written as text, in the Hermes form most instruction-tuned models know. The model's
//! answer is then read for calls written as text (see [`super::text_calls`]). The rewrite
//! depends on the request alone, so successive requests still extend each other.

use std::fmt::Write as _;

use crate::types::{ToolSpec, UserPart};
use crate::{Message, ModelRequest};

/// `request` with its tools moved into the system prompt and its calls and results as text.
pub(crate) fn prompted(request: &ModelRequest) -> ModelRequest {
    let mut messages: Vec<Message> = Vec::with_capacity(request.messages.len());
    let mut in_results = false;
    for message in &request.messages {
        let was_in_results =
            std::mem::replace(&mut in_results, matches!(**message, Message::Tool { .. }));
        match &**message {
            Message::System(text) => {
                messages.push(Message::System(format!(
                    "{text}{}",
                    tools_section(&request.tools)
                )));
            }
            Message::Assistant {
                text, tool_calls, ..
            } if !tool_calls.is_empty() => {
                let mut written = text.clone();
                for call in tool_calls {
                    let arguments: serde_json::Value =
                        serde_json::from_str(&call.arguments).unwrap_or_default();
                    let name = serde_json::Value::String(call.name.clone());
                    let _ = write!(
                        written,
                        "\n<tool_call>\n{{\"name\": {name}, \"arguments\": {arguments}}}\n</tool_call>"
                    );
                }
                messages.push(Message::assistant(written.trim_start().to_string()));
            }
            Message::Tool {
                content, images, ..
            } => {
                let block = format!("<tool_response>\n{content}\n</tool_response>");
                let mut given = vec![UserPart::Text(block)];
                given.extend(
                    images
                        .iter()
                        .map(|url| UserPart::Image { url: url.clone() }),
                );
                // The results of one response's calls share one user message.
                match messages.last_mut() {
                    Some(Message::User(parts)) if was_in_results => parts.extend(given),
                    _ => messages.push(Message::User(given)),
                }
            }
            other => messages.push(other.clone()),
        }
    }
    ModelRequest {
        messages: messages.into_iter().map(std::sync::Arc::new).collect(),
        tools: Vec::new(),
        ..request.clone()
    }
}

/// The tools and how to call them, for the system prompt.
fn tools_section(tools: &[ToolSpec]) -> String {
    let mut section = String::from(
        "\n\n## Tools\n\nTo use a tool, end your answer with one block per call and nothing \
         after it:\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \
         \"README.md\"}}\n</tool_call>\nEach result comes back in a <tool_response> block. \
         The tools:",
    );
    for tool in tools {
        let _ = write!(
            section,
            "\n- {}: {}\n  arguments (JSON Schema): {}",
            tool.name,
            tool.description.trim(),
            tool.parameters
        );
    }
    section
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ToolCall;

    fn request() -> ModelRequest {
        ModelRequest {
            model: "m".into(),
            messages: vec![
                Message::System("Be brief.".into()).into(),
                Message::User(vec![UserPart::Text("look".into())]).into(),
                Message::Assistant {
                    text: "Looking.".into(),
                    reasoning: String::new(),
                    carried: None,
                    tool_calls: vec![
                        ToolCall::new("a", "read_file", r#"{"path":"x"}"#),
                        ToolCall::new("b", "list_dir", r#"{"path":"."}"#),
                    ],
                }
                .into(),
                Message::Tool {
                    call_id: "a".into(),
                    content: "X".into(),
                    images: vec!["data:image/png;base64,AA==".into()],
                }
                .into(),
                Message::Tool {
                    call_id: "b".into(),
                    content: "x\ny".into(),
                    images: Vec::new(),
                }
                .into(),
            ],
            reasoning_effort: None,
            tools: vec![ToolSpec {
                name: "read_file".into(),
                description: "Reads a file.".into(),
                parameters: serde_json::json!({"type": "object"}),
            }],
            max_tokens: None,
            response_format: None,
            cache_key: None,
        }
    }

    #[test]
    fn calls_and_results_become_text_and_tools_join_the_system_prompt() {
        let out = prompted(&request());
        assert!(out.tools.is_empty());
        let Message::System(system) = &*out.messages[0] else {
            panic!("{out:?}")
        };
        assert!(system.starts_with("Be brief.\n\n## Tools"));
        assert!(system.contains(r#"- read_file: Reads a file."#));
        assert_eq!(
            out.messages[2],
            Message::assistant(
                "Looking.\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\":\"x\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"list_dir\", \"arguments\": {\"path\":\".\"}}\n</tool_call>"
            ).into()
        );
        assert_eq!(
            out.messages[3],
            Message::User(vec![
                UserPart::Text("<tool_response>\nX\n</tool_response>".into()),
                // A result's images follow it, and the next result still joins them.
                UserPart::Image {
                    url: "data:image/png;base64,AA==".into()
                },
                UserPart::Text("<tool_response>\nx\ny\n</tool_response>".into()),
            ])
            .into()
        );
        assert_eq!(out.messages.len(), 4);
    }

    #[test]
    fn a_longer_request_extends_the_shorter_one() {
        let mut short = request();
        short.messages.truncate(2);
        let long = prompted(&request());
        assert_eq!(prompted(&short).messages[..], long.messages[..2]);
    }
}
