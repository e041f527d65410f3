//! Where core types and ACP wire types meet: prompt content in, session state (modes,
//! config options, commands, stop reasons) out; events out are in `updates.rs`.

use agent_client_protocol::v1::schema::{
    self as acp, ContentBlock, EmbeddedResourceResource, SessionConfigOption,
    SessionConfigOptionCategory, SessionConfigSelectOption, SessionMode, SessionModeState,
};

use crate::tools::image;
use crate::types::Mode;
use crate::types::StopReason;
use crate::types::{OptionCategory, OptionKind, OptionView};
use crate::types::{UserPart, context_text};

/// The text of a base64 `blob` whose MIME type is a text type, when it decodes to UTF-8.
fn text_blob(mime: &str, blob: &str) -> Option<String> {
    use base64::Engine;
    let essence = mime.split(';').next().unwrap_or("").trim();
    let textual = essence.starts_with("text/")
        || essence.ends_with("+json")
        || essence.ends_with("+xml")
        || matches!(
            essence,
            "application/json"
                | "application/xml"
                | "application/javascript"
                | "application/typescript"
                | "application/toml"
                | "application/yaml"
                | "application/x-yaml"
                | "application/x-sh"
                | "application/sql"
                | "application/graphql"
        );
    if !textual {
        return None;
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(blob.trim())
        .ok()?;
    String::from_utf8(bytes).ok()
}

/// An attached image as the model is sent it: only one a model server takes (the prompt stays
/// in every later request, so one it refuses would fail them all); else a note of why not.
fn checked_image(mime: &str, data: &str) -> UserPart {
    match image::from_base64(data) {
        Ok(url) => UserPart::Image { url },
        Err(why) => UserPart::Text(format!("[Attached image ({mime}) not sent: {why}]")),
    }
}

/// A prompt's content blocks as a session takes them: what the model reads, and the blocks as
/// the editor sent them (see [`prompt_parts`]).
pub(crate) fn prompt(blocks: Vec<ContentBlock>) -> Result<crate::types::Prompt, String> {
    let sent = super::sent::prompt_blocks(&blocks);
    Ok(crate::types::Prompt {
        parts: prompt_parts(blocks)?,
        sent,
    })
}

/// Turns a prompt's content blocks into what the model reads. Text stays text; a resource
/// link becomes a reference the model can follow; an embedded resource becomes context;
/// images become image parts. Audio is refused: tandem does not advertise it.
pub(crate) fn prompt_parts(blocks: Vec<ContentBlock>) -> Result<Vec<UserPart>, String> {
    if blocks.is_empty() {
        return Err("prompt must contain at least one content block".to_string());
    }
    let mut parts = Vec::with_capacity(blocks.len());
    for block in blocks {
        match block {
            ContentBlock::Text(t) => parts.push(UserPart::Text(t.text)),
            ContentBlock::Image(image) => match image.uri.filter(|u| u.starts_with("http")) {
                Some(url) if image.data.is_empty() => parts.push(UserPart::Image { url }),
                _ => parts.push(checked_image(&image.mime_type, &image.data)),
            },
            // Expanded by the turn when it names a small file or a folder in the workspace.
            ContentBlock::ResourceLink(link) => parts.push(UserPart::Link {
                uri: link.uri,
                name: link.name,
                description: link.description,
            }),
            ContentBlock::Resource(embedded) => match embedded.resource {
                EmbeddedResourceResource::TextResourceContents(r) => {
                    parts.push(UserPart::Text(context_text(&r.uri, &r.text)));
                }
                EmbeddedResourceResource::BlobResourceContents(r) => {
                    let mime = r.mime_type.unwrap_or_default();
                    // Some clients (toad) send @-files as base64 with a text type.
                    if let Some(text) = text_blob(&mime, &r.blob) {
                        parts.push(UserPart::Text(context_text(&r.uri, &text)));
                    } else if mime.starts_with("image/") {
                        parts.push(checked_image(&mime, &r.blob));
                    } else {
                        parts.push(UserPart::Text(format!(
                            "[Attached binary resource {} ({}), not shown]",
                            r.uri,
                            if mime.is_empty() {
                                "unknown type"
                            } else {
                                &mime
                            }
                        )));
                    }
                }
                _ => return Err("unsupported embedded resource kind".to_string()),
            },
            ContentBlock::Audio(_) => {
                return Err(
                    "audio prompts are not supported (promptCapabilities.audio is false)"
                        .to_string(),
                );
            }
            _ => return Err("unsupported content block type".to_string()),
        }
    }
    Ok(parts)
}

/// An editor's `systemPrompt` for a session opening: its text, to be added after tandem's own
/// instructions. tandem advertises `append` only, so another mode is refused, as is anything
/// but text (ACP asks for an error rather than a session without them).
pub(crate) fn system_prompt(prompt: Option<acp::SystemPrompt>) -> Result<Option<String>, String> {
    let Some(prompt) = prompt else {
        return Ok(None);
    };
    match &prompt.mode {
        acp::SystemPromptMode::Append => {}
        acp::SystemPromptMode::Override => {
            return Err("systemPrompt mode `override` is not supported: tandem only adds an editor's instructions to its own (`append`)".into());
        }
        other => {
            let name = serde_json::to_value(other).unwrap_or_default();
            return Err(format!(
                "systemPrompt mode {name} is not supported: tandem only adds an editor's instructions to its own (`append`)"
            ));
        }
    }
    if prompt.content.is_empty() {
        return Err("systemPrompt.content is empty: send at least one text block, or leave systemPrompt out".into());
    }
    let mut texts = Vec::with_capacity(prompt.content.len());
    for block in prompt.content {
        match block {
            ContentBlock::Text(t) => texts.push(t.text),
            _ => {
                return Err("systemPrompt.content may hold only text blocks".into());
            }
        }
    }
    Ok(Some(texts.join("\n\n")))
}

/// What a turn spent, as the prompt's answer reports it (unstable in ACP); nothing for a
/// turn that made no model request that reported usage.
pub(crate) fn turn_usage(spent: &crate::turn::Totals) -> Option<acp::Usage> {
    spent.tokens().map(super::children::usage_of)
}

/// The session's modes as ACP lists them.
pub(crate) fn mode_state(current: Mode) -> SessionModeState {
    SessionModeState::new(
        current.id(),
        Mode::ALL
            .iter()
            .map(|m| SessionMode::new(m.id(), m.name()).description(m.description()))
            .collect(),
    )
}

/// The session's config options as ACP lists them.
pub(crate) fn config_options(views: &[OptionView]) -> Vec<SessionConfigOption> {
    views
        .iter()
        .map(|v| {
            let option = match v.kind {
                OptionKind::Boolean => SessionConfigOption::boolean(
                    v.id.to_string(),
                    v.name.to_string(),
                    v.current == "true",
                ),
                OptionKind::Select => {
                    let values: Vec<SessionConfigSelectOption> = v
                        .values
                        .iter()
                        .map(|value| {
                            SessionConfigSelectOption::new(value.id.clone(), value.name.clone())
                                .description(value.description.clone())
                        })
                        .collect();
                    SessionConfigOption::select(
                        v.id.to_string(),
                        v.name.to_string(),
                        v.current.clone(),
                        values,
                    )
                }
            };
            option
                .description(v.description.to_string())
                .category(v.category.map(|c| match c {
                    OptionCategory::Mode => SessionConfigOptionCategory::Mode,
                    OptionCategory::Model => SessionConfigOptionCategory::Model,
                    OptionCategory::ThoughtLevel => SessionConfigOptionCategory::ThoughtLevel,
                }))
        })
        .collect()
}

/// The session's slash commands as ACP lists them.
pub(crate) fn commands(
    commands: &[crate::session::commands::SlashCommand],
) -> acp::AvailableCommandsUpdate {
    acp::AvailableCommandsUpdate::new(
        commands
            .iter()
            .map(|c| {
                let mut command = acp::AvailableCommand::new(c.name.clone(), c.description.clone());
                if let Some(hint) = &c.hint {
                    command = command.input(acp::AvailableCommandInput::Unstructured(
                        acp::UnstructuredCommandInput::new(hint.clone()),
                    ));
                }
                command
            })
            .collect(),
    )
}

/// The editor's MCP servers as tandem connects to them.
pub(crate) fn mcp_servers(servers: Vec<acp::McpServer>) -> Vec<crate::mcp::ServerSpec> {
    servers
        .into_iter()
        .filter_map(|server| match server {
            acp::McpServer::Stdio(s) => Some(crate::mcp::ServerSpec::local(
                s.name,
                s.command,
                s.args,
                s.env.into_iter().map(|v| (v.name, v.value)).collect(),
            )),
            acp::McpServer::Http(s) => Some(crate::mcp::ServerSpec::remote(
                s.name,
                s.url,
                s.headers.into_iter().map(|h| (h.name, h.value)).collect(),
                false,
            )),
            acp::McpServer::Sse(s) => Some(crate::mcp::ServerSpec::remote(
                s.name,
                s.url,
                s.headers.into_iter().map(|h| (h.name, h.value)).collect(),
                true,
            )),
            other => {
                tracing::warn!("ignoring an MCP server of a kind tandem does not know: {other:?}");
                None
            }
        })
        .collect()
}

/// The ACP stop reason.
pub(crate) fn stop_reason(stop: StopReason) -> acp::StopReason {
    match stop {
        StopReason::EndTurn => acp::StopReason::EndTurn,
        StopReason::MaxTokens => acp::StopReason::MaxTokens,
        StopReason::MaxTurnRequests => acp::StopReason::MaxTurnRequests,
        StopReason::Refusal => acp::StopReason::Refusal,
        StopReason::Cancelled => acp::StopReason::Cancelled,
    }
}

/// tandem's stop reason for an ACP one (`None` for a reason tandem never sends).
pub(crate) fn stop_reason_of(stop: acp::StopReason) -> Option<StopReason> {
    Some(match stop {
        acp::StopReason::EndTurn => StopReason::EndTurn,
        acp::StopReason::MaxTokens => StopReason::MaxTokens,
        acp::StopReason::MaxTurnRequests => StopReason::MaxTurnRequests,
        acp::StopReason::Refusal => StopReason::Refusal,
        acp::StopReason::Cancelled => StopReason::Cancelled,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol::v1::schema::{
        EmbeddedResource, ImageContent, ResourceLink, TextContent, TextResourceContents,
    };

    /// A 1x1 PNG.
    const PIXEL: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

    #[test]
    fn every_prompt_block_kind() {
        let parts = prompt_parts(vec![
            ContentBlock::Text(TextContent::new("hi")),
            ContentBlock::ResourceLink(ResourceLink::new("main.rs", "file:///p/main.rs")),
            ContentBlock::Resource(EmbeddedResource::new(
                EmbeddedResourceResource::TextResourceContents(TextResourceContents::new(
                    "fn main() {}",
                    "file:///p/main.rs",
                )),
            )),
            ContentBlock::Image(ImageContent::new(PIXEL, "image/png")),
            ContentBlock::Image(ImageContent::new("Qk0eAAAAAAAAAA==", "image/bmp")),
        ])
        .unwrap();
        assert_eq!(parts[0], UserPart::Text("hi".into()));
        assert_eq!(
            parts[1].as_text().unwrap(),
            "[Referenced: main.rs](file:///p/main.rs)"
        );
        assert_eq!(
            parts[2],
            UserPart::Text("<context uri=\"file:///p/main.rs\">\nfn main() {}\n</context>".into())
        );
        assert_eq!(
            parts[3],
            UserPart::Image {
                url: format!("data:image/png;base64,{PIXEL}")
            }
        );
        // A format model servers do not take is named, not sent.
        let Some(note) = parts[4].as_text() else {
            panic!("{:?}", parts[4])
        };
        assert!(
            note.starts_with("[Attached image (image/bmp) not sent: not in a format"),
            "{note}"
        );
    }

    #[test]
    fn a_text_blob_is_read_as_text_and_a_binary_one_is_not() {
        use agent_client_protocol::v1::schema::BlobResourceContents;
        let blob = |data: &str, mime: &str| {
            ContentBlock::Resource(EmbeddedResource::new(
                EmbeddedResourceResource::BlobResourceContents(
                    BlobResourceContents::new(data, "file:///p/a").mime_type(mime.to_string()),
                ),
            ))
        };
        let parts = prompt_parts(vec![
            blob("Zm4gbWFpbigpIHt9", "text/x-rust"),
            blob("eyJhIjoxfQ==", "application/json; charset=utf-8"),
            blob("//79", "application/octet-stream"),
            blob("//79", "text/plain"),
        ])
        .unwrap();
        assert_eq!(
            parts[0],
            UserPart::Text("<context uri=\"file:///p/a\">\nfn main() {}\n</context>".into())
        );
        assert!(matches!(&parts[1], UserPart::Text(t) if t.contains("{\"a\":1}")));
        for part in &parts[2..] {
            assert!(
                matches!(part, UserPart::Text(t) if t.starts_with("[Attached binary")),
                "{part:?}"
            );
        }
    }

    #[test]
    fn empty_prompt_is_refused() {
        assert!(prompt_parts(vec![]).is_err());
    }
}
