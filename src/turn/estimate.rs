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

/// Replaces image parts with a note for models that do not take images, so switching to such
/// a model mid-session keeps working.
pub(super) fn fit_to_model(message: Message, spec: &ModelSpec) -> Message {
    match message {
        Message::User(parts) if !spec.images => Message::User(
            parts
                .into_iter()
                .map(|p| match p {
                    UserPart::Image { .. } => UserPart::Text(format!(
                        "[image omitted: model `{}` does not accept images]",
                        spec.id
                    )),
                    text => text,
                })
                .collect(),
        ),
        other => other,
    }
}

/// What the user is told when the prompt's images are left out because the model does not
/// take images (or is not known to); `None` when nothing was left out.
pub(super) fn images_left_out(messages: &[Message], spec: &ModelSpec) -> Option<String> {
    if spec.images {
        return None;
    }
    let prompt = messages.iter().rev().find_map(|m| match m {
        Message::User(parts) => Some(parts),
        _ => None,
    })?;
    let images = prompt
        .iter()
        .filter(|p| matches!(p, UserPart::Image { .. }))
        .count();
    let what = match images {
        0 => return None,
        1 => "The image was".to_string(),
        n => format!("The {n} images were"),
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

pub(super) fn estimate_tokens(messages: &[Message]) -> u64 {
    messages
        .iter()
        .map(|m| match m {
            Message::System(t) | Message::Tool { content: t, .. } => estimate_text(t),
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
                    // Providers bill a typical image at several hundred tokens.
                    None => 800,
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
