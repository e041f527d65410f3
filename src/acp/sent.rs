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

/// A replayed prompt: each block as a chunk of its own, as it was sent.
pub(super) fn user_chunks(blocks: Vec<PromptBlock>) -> Vec<SessionUpdate> {
    blocks
        .into_iter()
        .map(|b| SessionUpdate::UserMessageChunk(ContentChunk::new(user_block(b))))
        .collect()
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
}
