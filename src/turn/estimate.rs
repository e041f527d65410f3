//! How big a conversation is for the model: the tokens it will take (the server's last count
//! plus an estimate of what was added since) and what a model that takes no images is sent.

use super::TurnContext;
use crate::config::ModelSpec;
use crate::model::Message;
use crate::types::UserPart;

/// The tokens `messages` will take: the last reported count plus an estimate of what was
/// added since, or a whole estimate before the first report.
pub(super) fn projected(ctx: &TurnContext, messages: &[Message]) -> u64 {
    let estimate = estimate_tokens(messages);
    match *ctx.usage.borrow() {
        Some((used, estimated_then)) => used + estimate.saturating_sub(estimated_then),
        None => estimate,
    }
}

/// Replaces images (the user's, and those tool results gave) with a note for models that do
/// not take images, so switching to such a model mid-session keeps working.
pub(super) fn fit_to_model(message: Message, spec: &ModelSpec) -> Message {
    if spec.images {
        return message;
    }
    let omitted = format!(
        "[image omitted: model `{}` does not accept images]",
        spec.id
    );
    match message {
        Message::User(parts) => Message::User(
            parts
                .into_iter()
                .map(|p| match p {
                    UserPart::Image { .. } => UserPart::Text(omitted.clone()),
                    text => text,
                })
                .collect(),
        ),
        Message::Tool {
            call_id,
            mut content,
            images,
        } if !images.is_empty() => {
            for _ in &images {
                content.push('\n');
                content.push_str(&omitted);
            }
            Message::Tool {
                call_id,
                content,
                images: Vec::new(),
            }
        }
        other => other,
    }
}

/// What the user is told when the prompt's images are left out because the model does not
/// take images (or is not known to); `None` when nothing was left out.
pub(super) fn images_left_out(messages: &[Message], spec: &ModelSpec) -> Option<String> {
    let prompt = messages.iter().rev().find_map(|m| match m {
        Message::User(parts) => Some(parts),
        _ => None,
    })?;
    let images = prompt
        .iter()
        .filter(|p| matches!(p, UserPart::Image { .. }))
        .count();
    not_sent(images, "", spec)
}

/// What the user is told when `count` images a call gave (the editor shows them) are left
/// out for the model; `None` when nothing was left out.
pub(super) fn call_images_left_out(count: usize, spec: &ModelSpec) -> Option<String> {
    not_sent(count, " the call gave", spec)
}

fn not_sent(count: usize, source: &str, spec: &ModelSpec) -> Option<String> {
    if spec.images {
        return None;
    }
    let what = match count {
        0 => return None,
        1 => format!("The image{source} was"),
        n => format!("The {n} images{source} were"),
    };
    Some(format!(
        "{what} not sent: tandem does not know model `{}` to take images, so it was told only that an image was left out. If the model does take images, set `images = true` for it under `[[models]]` in tandem's config.",
        spec.id
    ))
}

/// About four characters a token: good enough to show the context filling up.
pub(super) fn estimate_text(text: &str) -> u64 {
    (text.chars().count() as u64).div_ceil(4)
}

/// Providers bill a typical image at several hundred tokens.
const IMAGE_TOKENS: u64 = 800;

pub(super) fn estimate_tokens(messages: &[Message]) -> u64 {
    messages
        .iter()
        .map(|m| match m {
            Message::System(t) => estimate_text(t),
            Message::Tool {
                content, images, ..
            } => estimate_text(content) + IMAGE_TOKENS * images.len() as u64,
            Message::Assistant {
                text,
                reasoning,
                tool_calls,
                carried,
            } => {
                // Reasoning goes back (and counts) only with state to carry it.
                let reasoning = if carried.is_some() {
                    reasoning.as_str()
                } else {
                    ""
                };
                estimate_text(text)
                    + estimate_text(reasoning)
                    + tool_calls
                        .iter()
                        .map(|c| estimate_text(&c.arguments) + 8)
                        .sum::<u64>()
            }
            Message::User(parts) => parts
                .iter()
                .map(|p| match p.as_text() {
                    Some(t) => estimate_text(&t),
                    None => IMAGE_TOKENS,
                })
                .sum(),
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimates_round_up() {
        assert_eq!(estimate_text(""), 0);
        assert_eq!(estimate_text("abcde"), 2);
    }
}
