//! A prompt's blocks as the user sent them: kept from `session/prompt`, and shown again as
//! they were when a stored session is loaded (mentions as the editor's chips, not as the
//! context the model read).

use agent_client_protocol::v1::schema::{
    self as acp, ContentBlock, ContentChunk, EmbeddedResourceResource, SessionUpdate, TextContent,
};

use crate::types::PromptBlock;

/// A prompt's blocks as tandem keeps them, to show them again as they were sent. Blocks
/// [`super::convert::prompt_parts`] refuses are left out (the prompt is refused anyway).
pub(super) fn prompt_blocks(blocks: &[ContentBlock]) -> Vec<PromptBlock> {
    blocks
        .iter()
        .filter_map(|block| {
            Some(match block {
                ContentBlock::Text(t) => PromptBlock::text(t.text.clone()),
                ContentBlock::Image(i) => PromptBlock::Image {
                    mime_type: i.mime_type.clone(),
                    data: i.data.clone(),
                    uri: i.uri.clone(),
                },
                ContentBlock::ResourceLink(l) => PromptBlock::Link {
                    uri: l.uri.clone(),
                    name: l.name.clone(),
                    title: l.title.clone(),
                    description: l.description.clone(),
                    mime_type: l.mime_type.clone(),
                    size: l.size,
                },
                ContentBlock::Resource(r) => match &r.resource {
                    EmbeddedResourceResource::TextResourceContents(t) => PromptBlock::Resource {
                        uri: t.uri.clone(),
                        mime_type: t.mime_type.clone(),
                        text: t.text.clone(),
                    },
                    EmbeddedResourceResource::BlobResourceContents(b) => PromptBlock::Blob {
                        uri: b.uri.clone(),
                        mime_type: b.mime_type.clone(),
                        blob: b.blob.clone(),
                    },
                    _ => return None,
                },
                _ => return None,
            })
        })
        .collect()
}

/// What separates two text blocks of one replayed prompt. Editors join a message's chunks
/// as they come (CodeCompanion with `table.concat`, Zed appending to one Markdown block), so
/// texts sent as blocks of their own would run into each other; the model reads them apart
/// too (chat requests join them with a blank line).
const TEXT_SEPARATOR: &str = "\n\n";

/// A replayed prompt: each block as a chunk of its own, as it was sent, with
/// [`TEXT_SEPARATOR`] between two texts.
pub(super) fn user_chunks(blocks: Vec<PromptBlock>) -> Vec<SessionUpdate> {
    let chunk = |block| SessionUpdate::UserMessageChunk(ContentChunk::new(block));
    let mut updates = Vec::with_capacity(blocks.len());
    let mut after_text = false;
    for block in blocks {
        let text = matches!(block, PromptBlock::Text { .. });
        if text && after_text {
            updates.push(chunk(ContentBlock::Text(TextContent::new(TEXT_SEPARATOR))));
        }
        after_text = text;
        updates.push(chunk(user_block(block)));
    }
    updates
}

/// A prompt's block as the editor sent it.
fn user_block(block: PromptBlock) -> ContentBlock {
    match block {
        PromptBlock::Text { text } => ContentBlock::Text(TextContent::new(text)),
        PromptBlock::Image {
            mime_type,
            data,
            uri,
        } => ContentBlock::Image(acp::ImageContent::new(data, mime_type).uri(uri)),
        PromptBlock::Link {
            uri,
            name,
            title,
            description,
            mime_type,
            size,
        } => ContentBlock::ResourceLink(
            acp::ResourceLink::new(name, uri)
                .title(title)
                .description(description)
                .mime_type(mime_type)
                .size(size),
        ),
        PromptBlock::Resource {
            uri,
            mime_type,
            text,
        } => ContentBlock::Resource(acp::EmbeddedResource::new(
            EmbeddedResourceResource::TextResourceContents(
                acp::TextResourceContents::new(text, uri).mime_type(mime_type),
            ),
        )),
        PromptBlock::Blob {
            uri,
            mime_type,
            blob,
        } => ContentBlock::Resource(acp::EmbeddedResource::new(
            EmbeddedResourceResource::BlobResourceContents(
                acp::BlobResourceContents::new(blob, uri).mime_type(mime_type),
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn chunks(updates: Vec<SessionUpdate>) -> Vec<Value> {
        updates
            .into_iter()
            .map(|u| match u {
                SessionUpdate::UserMessageChunk(chunk) => {
                    serde_json::to_value(chunk.content).unwrap()
                }
                other => panic!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn every_block_comes_back_as_it_was_sent() {
        let sent: Vec<ContentBlock> = serde_json::from_value(json!([
            {"type": "text", "text": "see"},
            {"type": "image", "mimeType": "image/png", "data": "AAAA", "uri": "file:///p/a.png"},
            {"type": "resource_link", "name": "src", "uri": "file:///p/src/", "title": "Sources",
             "description": "the code", "mimeType": "inode/directory", "size": 3},
            {"type": "resource", "resource": {"uri": "file:///p/a.rs#L1:2", "text": "fn a",
                                              "mimeType": "text/x-rust"}},
            {"type": "resource", "resource": {"uri": "file:///p/b.bin", "blob": "AAEC"}},
        ]))
        .unwrap();
        let blocks = prompt_blocks(&sent);
        assert_eq!(
            chunks(user_chunks(blocks)),
            serde_json::to_value(&sent)
                .unwrap()
                .as_array()
                .unwrap()
                .clone()
        );
    }

    #[test]
    fn texts_sent_apart_are_shown_apart() {
        let blocks = vec![
            PromptBlock::text("write a long text"),
            PromptBlock::text("are you still there?"),
            PromptBlock::Resource {
                uri: "file:///p/a".into(),
                mime_type: None,
                text: "a".into(),
            },
            PromptBlock::text(" and this"),
        ];
        let texts: Vec<Value> = chunks(user_chunks(blocks))
            .into_iter()
            .map(|c| c.get("text").cloned().unwrap_or(Value::Null))
            .collect();
        assert_eq!(
            texts,
            [
                json!("write a long text"),
                json!("\n\n"),
                json!("are you still there?"),
                Value::Null,
                json!(" and this")
            ]
        );
    }
}
