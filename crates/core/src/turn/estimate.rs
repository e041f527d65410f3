//! How big a conversation is for the model (the tokens it will take: the server's last count
//! plus an estimate of what was added since) and which images a request carries: none to a
//! model that takes no images, and no more than a model server takes to any other.

use std::sync::Arc;

use super::context::TurnContext;
use crate::config::ModelSpec;
use crate::model::Message;
use crate::types::UserPart;

/// The tokens `messages` will take: the last reported count plus an estimate of what was
/// added since, or a whole estimate before the first report.
pub(super) fn projected<M: std::borrow::Borrow<Message>>(ctx: &TurnContext, messages: &[M]) -> u64 {
    let estimate = estimate_tokens(messages);
    match *ctx.usage.borrow() {
        Some((used, estimated_then)) => used + estimate.saturating_sub(estimated_then),
        None => estimate,
    }
}

/// Replaces images (the user's, and those tool results gave) with a note for models that do
/// not take images, so switching to such a model mid-session keeps working. A message that
/// needs no change is shared as it is.
pub(super) fn fit_to_model(message: Arc<Message>, spec: &ModelSpec) -> Arc<Message> {
    let holds_images = match &*message {
        Message::User(parts) => parts.iter().any(|p| matches!(p, UserPart::Image { .. })),
        Message::Tool { images, .. } => !images.is_empty(),
        _ => false,
    };
    if spec.images || !holds_images {
        return message;
    }
    Arc::new(without_images(Arc::unwrap_or_clone(message), spec))
}

/// `message` with its images replaced by a note that `spec`'s model takes none.
fn without_images(message: Message, spec: &ModelSpec) -> Message {
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

/// Most images one request carries (Anthropic takes at most 100 a request, and smaller ones
/// past 20; each costs hundreds of tokens).
const MAX_REQUEST_IMAGES: usize = 20;

/// Most image data (base64) one request carries: well under the smallest request limit of
/// the APIs tandem speaks (Anthropic's 32 MB).
const MAX_REQUEST_IMAGE_BYTES: usize = 20 * 1024 * 1024;

const EARLIER_IMAGE: &str = "[image omitted: an earlier image, left out to keep the request within what model servers take]";

/// Leaves out the oldest images of a conversation that holds more than one request may carry
/// (by count, then by size), each replaced by a note; the history keeps them all.
pub(super) fn thin_images(messages: &mut [Arc<Message>]) {
    let mut sizes: Vec<usize> = Vec::new();
    for message in messages.iter() {
        match &**message {
            Message::User(parts) => sizes.extend(parts.iter().filter_map(|p| match p {
                UserPart::Image { url } => Some(url.len()),
                _ => None,
            })),
            Message::Tool { images, .. } => sizes.extend(images.iter().map(String::len)),
            _ => {}
        }
    }
    // Past either bound the oldest go until half of each is left, so the requests between
    // two drops still extend each other byte for byte (and reuse the server's cache).
    let (mut first_kept, mut bytes) = (0, 0);
    for (i, size) in sizes.iter().enumerate() {
        bytes += size;
        if i + 1 - first_kept <= MAX_REQUEST_IMAGES && bytes <= MAX_REQUEST_IMAGE_BYTES {
            continue;
        }
        while first_kept < i
            && (i + 1 - first_kept > MAX_REQUEST_IMAGES / 2 || bytes > MAX_REQUEST_IMAGE_BYTES / 2)
        {
            bytes -= sizes[first_kept];
            first_kept += 1;
        }
    }
    if first_kept == 0 {
        return;
    }
    let mut seen = 0;
    let dropped = |seen: &mut usize| {
        *seen += 1;
        *seen <= first_kept
    };
    for message in messages.iter_mut() {
        if seen >= first_kept {
            break;
        }
        if !message.holds_images() {
            continue;
        }
        // Only a message that loses an image is copied; the request shares the rest.
        Arc::make_mut(message).drop_images(EARLIER_IMAGE, || dropped(&mut seen));
    }
}

/// What the user is told when the prompt's images are left out because the model does not
/// take images (or is not known to); `None` when nothing was left out.
pub(super) fn images_left_out(messages: &[Arc<Message>], spec: &ModelSpec) -> Option<String> {
    let prompt = messages.iter().rev().find_map(|m| match &**m {
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

/// How much of an answer cut off at `max_response_bytes` the history keeps: its end.
const RUNAWAY_TAIL: usize = 4 * 1024;

/// The last [`RUNAWAY_TAIL`] bytes of a runaway answer's `text` (on a character boundary),
/// after a note saying how much was left out; shorter text as it is.
pub(super) fn runaway_tail(text: &str) -> String {
    if text.len() <= RUNAWAY_TAIL {
        return text.to_string();
    }
    let mut start = text.len() - RUNAWAY_TAIL;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    format!(
        "[… this answer ran past max_response_bytes and was cut off; its first {start} bytes are not kept …]\n{}",
        &text[start..]
    )
}

/// About four characters a token: good enough to show the context filling up.
pub(super) fn estimate_text(text: &str) -> u64 {
    (text.chars().count() as u64).div_ceil(4)
}

/// Providers bill a typical image at several hundred tokens.
const IMAGE_TOKENS: u64 = 800;

pub(super) fn estimate_tokens<M: std::borrow::Borrow<Message>>(messages: &[M]) -> u64 {
    messages
        .iter()
        .map(|m| match std::borrow::Borrow::<Message>::borrow(m) {
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

    fn shot(id: usize) -> Arc<Message> {
        Arc::new(Message::Tool {
            call_id: format!("c{id}"),
            content: format!("shot {id}"),
            images: vec![format!("data:image/png;base64,{id}")],
        })
    }

    fn kept(messages: &[Arc<Message>]) -> Vec<String> {
        messages
            .iter()
            .flat_map(|m| match &**m {
                Message::Tool { images, .. } => images.clone(),
                Message::User(parts) => parts
                    .iter()
                    .filter_map(|p| match p {
                        UserPart::Image { url } => Some(url.clone()),
                        _ => None,
                    })
                    .collect(),
                _ => Vec::new(),
            })
            .collect()
    }

    #[test]
    fn past_the_bound_the_oldest_go_until_half_is_left() {
        let mut few: Vec<Arc<Message>> = (0..20).map(shot).collect();
        thin_images(&mut few);
        assert_eq!(kept(&few).len(), 20, "up to the limit, all go");
        for (total, first) in [(21, 11), (31, 11), (32, 22), (42, 22), (43, 33)] {
            let mut many: Vec<Arc<Message>> = (0..total).map(shot).collect();
            thin_images(&mut many);
            let left = kept(&many);
            assert_eq!(left.len(), total - first, "{total}");
            assert_eq!(left[0], format!("data:image/png;base64,{first}"));
            let Message::Tool { content, .. } = &*many[0] else {
                panic!()
            };
            assert!(content.starts_with("shot 0\n[image omitted: an earlier image"));
        }
        // A user's image counts and is left out the same way.
        let mut mixed = vec![Arc::new(Message::User(vec![UserPart::Image {
            url: "data:image/png;base64,u".into(),
        }]))];
        mixed.extend((0..20).map(shot));
        thin_images(&mut mixed);
        assert!(
            matches!(&*mixed[0], Message::User(p) if matches!(&p[0], UserPart::Text(t) if t == EARLIER_IMAGE))
        );
    }

    #[test]
    fn big_images_are_left_out_by_size_from_the_oldest() {
        let big = |id: usize| {
            Arc::new(Message::Tool {
                call_id: format!("c{id}"),
                content: String::new(),
                images: vec![format!("{id}{}", "A".repeat(8 * 1024 * 1024))],
            })
        };
        let mut messages: Vec<Arc<Message>> = (0..4).map(big).collect();
        thin_images(&mut messages);
        let left = kept(&messages);
        assert_eq!(
            left.len(),
            2,
            "the third of 8 MB goes past 20 MB: one is left, then two"
        );
        assert!(left[0].starts_with('2') && left[1].starts_with('3'));
        // Images just over 4 MiB: five go past 20 MiB, and three go at a time, not one by one.
        let four = |id: usize| {
            Arc::new(Message::Tool {
                call_id: format!("c{id}"),
                content: String::new(),
                images: vec![format!("{id:02}{}", "A".repeat(4 * 1024 * 1024))],
            })
        };
        let firsts: Vec<String> = (6..=10)
            .map(|n| {
                let mut messages: Vec<Arc<Message>> = (0..n).map(four).collect();
                thin_images(&mut messages);
                kept(&messages)[0][..2].to_string()
            })
            .collect();
        assert_eq!(firsts, ["03", "03", "06", "06", "06"]);
    }

    #[test]
    fn estimates_round_up() {
        assert_eq!(estimate_text(""), 0);
        assert_eq!(estimate_text("abcde"), 2);
    }
}
