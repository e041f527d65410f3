//! An answer that repeats itself: a small local model can fall into writing one sentence (or
//! one line, or one word) over and over until its output limit or the answer timeout, which
//! on a laptop is minutes of nothing. The streamed text and reasoning are each watched; once
//! the last [`SPAN`] bytes are one piece of text repeated at least four times, the answer is
//! stopped there (stream.rs) and the user told why (loop.rs). `[loops] stop_repeated_text =
//! false` turns the watch off.

/// How many of the latest bytes must all be repeats of one piece.
pub(super) const SPAN: usize = 2048;
/// The longest piece looked for: a quarter of the span, so that it came at least four times.
const LONGEST_PIECE: usize = SPAN / 4;
/// How many new bytes come between two looks (each look compares the span at most
/// [`LONGEST_PIECE`] times).
const LOOK_EVERY: usize = 256;

/// Watches one stream of text for a piece repeated over the whole [`SPAN`].
#[derive(Default)]
pub(super) struct Repeats {
    /// The latest bytes (between one and two spans of them).
    tail: Vec<u8>,
    /// Bytes come since the last look.
    fresh: usize,
    /// How much of the watched text has been taken ([`Repeats::catch_up`]).
    seen: usize,
}

impl Repeats {
    /// Takes what `text`, the whole text so far, holds beyond what was taken before.
    pub(super) fn catch_up(&mut self, text: &str) -> Option<usize> {
        let new = text.get(self.seen..)?;
        self.seen = text.len();
        if new.is_empty() {
            return None;
        }
        self.push(new)
    }

    /// Takes the next piece of the stream; the length in bytes of the repeated piece once the
    /// stream is only repeating it.
    pub(super) fn push(&mut self, text: &str) -> Option<usize> {
        self.tail.extend_from_slice(text.as_bytes());
        if self.tail.len() > 2 * SPAN {
            let extra = self.tail.len() - SPAN;
            self.tail.drain(..extra);
        }
        self.fresh += text.len();
        if self.fresh < LOOK_EVERY || self.tail.len() < SPAN {
            return None;
        }
        self.fresh = 0;
        let span = &self.tail[self.tail.len() - SPAN..];
        (1..=LONGEST_PIECE).find(|&piece| span[piece..] == span[..SPAN - piece])
    }
}

/// What the user is told when an answer was stopped for repeating a piece of `piece` bytes.
pub(super) fn told(piece: usize) -> String {
    let what = if piece == 1 {
        "one character".to_string()
    } else {
        format!("the same {piece} bytes of text")
    };
    format!(
        "The model kept repeating {what}, so tandem stopped its answer there. A larger model \
         or a lower temperature usually helps; `[loops] stop_repeated_text = false` in the \
         config file turns this check off."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `text` in pieces of `step` bytes (ASCII) and says whether and when it tripped.
    fn fed(text: &str, step: usize) -> Option<(usize, usize)> {
        let mut watch = Repeats::default();
        let mut at = 0;
        while at < text.len() {
            let end = (at + step).min(text.len());
            if let Some(piece) = watch.push(&text[at..end]) {
                return Some((end, piece));
            }
            at = end;
        }
        None
    }

    #[test]
    fn a_sentence_said_over_and_over_is_stopped_soon_after_one_span() {
        let start = "Here is the answer you asked for. ";
        let looped = "I am a helpful assistant and I will help you. ".repeat(200);
        let (at, piece) = fed(&format!("{start}{looped}"), 7).expect("stopped");
        assert_eq!(piece, 46, "the sentence's length");
        assert!(
            at <= start.len() + SPAN + 2 * LOOK_EVERY,
            "stopped at byte {at}"
        );
    }

    #[test]
    fn one_character_or_blank_lines_forever_are_stopped() {
        assert_eq!(fed(&"\n".repeat(5000), 13).map(|(_, p)| p), Some(1));
        assert_eq!(fed(&"ha".repeat(3000), 64).map(|(_, p)| p), Some(2));
    }

    #[test]
    fn a_long_answer_that_varies_is_never_stopped() {
        // Lines alike in shape but each its own (a table, numbered steps, code).
        let table: String = (0..400)
            .map(|i| format!("| row {i} | value {} | ok |\n", i * 7))
            .collect();
        assert_eq!(fed(&table, 32), None);
        let code: String = (0..300)
            .map(|i| format!("    let x{i} = compute({i});\n"))
            .collect();
        assert_eq!(fed(&code, 17), None);
    }

    #[test]
    fn a_repeat_shorter_than_the_span_or_a_piece_too_long_to_come_four_times_is_left() {
        // A line repeated a few times, as a model may when it quotes.
        let few = "the same line again\n".repeat(50);
        assert_eq!(fed(&few, 10), None, "{} bytes", few.len());
        // A 720-byte paragraph said four times: too long a piece to be sure it is a loop.
        let long_piece: String = (0..120).map(|i| format!("p{i:04} ")).collect();
        assert_eq!(fed(&long_piece.repeat(4), 50), None);
    }

    #[test]
    fn text_in_many_scripts_is_taken_byte_by_byte_without_panicking() {
        let looped = "données répétées — 繰り返し 🙂 ".repeat(200);
        let (_, piece) = fed_chars(&looped).expect("stopped");
        assert_eq!(piece, "données répétées — 繰り返し 🙂 ".len());
    }

    /// Feeds `text` a character at a time.
    fn fed_chars(text: &str) -> Option<(usize, usize)> {
        let mut watch = Repeats::default();
        let mut buffer = [0u8; 4];
        for (i, c) in text.chars().enumerate() {
            if let Some(piece) = watch.push(c.encode_utf8(&mut buffer)) {
                return Some((i, piece));
            }
        }
        None
    }
}
