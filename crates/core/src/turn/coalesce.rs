//! Merging streamed pieces that are already waiting: when a model (or a fast local server)
//! sends faster than the editor link carries them, the pieces queued up behind the one just
//! read go out as one `session/update` instead of one each. Nothing waits for more to
//! arrive, so a slow stream still goes out piece by piece, as it comes.

use futures::{FutureExt, StreamExt};

use crate::model::{EventStream, ModelError, ModelEvent};

/// Most bytes merged into one update, so the editor still sees progress in a flood.
const MAX_MERGED: usize = 64 * 1024;

/// What `stream` gave after the merged pieces: the next event to handle, or nothing ready.
pub(super) type Next = Option<Option<Result<ModelEvent, ModelError>>>;

/// Appends to `text` the pieces of the same kind (`reasoning` or answer text) that `stream`
/// has ready now, and returns the first other item it had ready, if any.
pub(super) fn gather(stream: &mut EventStream, text: &mut String, reasoning: bool) -> Next {
    while text.len() < MAX_MERGED {
        match stream.next().now_or_never() {
            Some(Some(Ok(ModelEvent::Text(more)))) if !reasoning => text.push_str(&more),
            Some(Some(Ok(ModelEvent::Reasoning(more)))) if reasoning => text.push_str(&more),
            None => return None,
            other => return other,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(events: Vec<ModelEvent>) -> EventStream {
        futures::stream::iter(events.into_iter().map(Ok)).boxed()
    }

    #[test]
    fn ready_pieces_of_one_kind_merge_and_the_next_kind_is_kept() {
        let mut s = stream(vec![
            ModelEvent::Text("b".into()),
            ModelEvent::Text("c".into()),
            ModelEvent::Reasoning("r".into()),
            ModelEvent::Text("d".into()),
        ]);
        let mut text = "a".to_string();
        let next = gather(&mut s, &mut text, false);
        assert_eq!(text, "abc");
        assert!(matches!(next, Some(Some(Ok(ModelEvent::Reasoning(ref r)))) if r == "r"));
        let mut rest = String::new();
        assert!(matches!(gather(&mut s, &mut rest, false), Some(None)));
        assert_eq!(rest, "d");
    }

    #[test]
    fn nothing_ready_means_nothing_waits() {
        let mut s: EventStream = futures::stream::pending().boxed();
        let mut text = "a".to_string();
        assert!(gather(&mut s, &mut text, false).is_none());
        assert_eq!(text, "a");
    }
}
