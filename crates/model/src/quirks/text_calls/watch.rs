//! Holding back streamed answer text that may turn out to be a call, so the editor is never
//! shown a call that then runs, and is shown everything else as it arrives.

use super::forms::{self, Found, MARKERS, first_marker_from};
use super::prefix::{Prefix, Reading};

/// One answer's text as it streams, and how much of it the editor may see yet.
#[derive(Debug)]
pub struct Watch {
    /// Everything pushed so far.
    seen: String,
    /// How much of `seen` has been released.
    shown: usize,
    /// A marker was found: from there on nothing is released until the answer ends.
    holding: bool,
    /// Whether the answer's start can still be a whole-answer JSON call.
    start: Prefix,
    /// The tools the request offered.
    offered: Vec<String>,
}

impl Watch {
    /// A watch over the answer to a request that offered `offered`.
    pub fn new(offered: Vec<String>) -> Self {
        Self {
            seen: String::new(),
            shown: 0,
            holding: false,
            start: Prefix::new(offered.clone()),
            offered,
        }
    }

    /// Takes the next piece of answer text; returns what may be shown now.
    pub fn push(&mut self, piece: &str) -> String {
        self.seen.push_str(piece);
        if self.holding {
            return String::new();
        }
        // Held only while the start can still grow into a call; once it cannot, it is shown
        // at once, and the rest streams (markers aside).
        if self.start.verdict() == Reading::Maybe && self.start.read(piece) == Reading::Maybe {
            return String::new();
        }
        // Everything before `shown` was released: no marker starts there, so only the new
        // text is searched (a long answer streams in thousands of pieces).
        let safe = match first_marker_from(&self.seen, self.shown) {
            Some((at, _)) => {
                self.holding = true;
                at
            }
            None => self.seen.len() - partial_marker(&self.seen),
        };
        self.release(safe)
    }

    /// The server returned calls in their own field, so it reads the model's calls itself and
    /// nothing in this answer's text is one: returns everything held.
    pub fn native(mut self) -> String {
        self.release(self.seen.len())
    }

    /// The answer ended: returns the calls it holds, taken only when none of their text was
    /// shown, and the held text to show now (all of it when there are no calls; else what
    /// comes before them).
    pub fn finish(mut self) -> (Option<Found>, String) {
        let found = forms::extract(&self.seen, &self.offered).filter(|f| f.from >= self.shown);
        let upto = found.as_ref().map_or(self.seen.len(), |f| f.from);
        let rest = self.release(upto);
        (found, rest)
    }

    fn release(&mut self, upto: usize) -> String {
        let upto = upto.max(self.shown);
        let out = self.seen[self.shown..upto].to_string();
        self.shown = upto;
        out
    }
}

/// How many bytes at the end of `text` could be the start of a marker.
fn partial_marker(text: &str) -> usize {
    MARKERS
        .iter()
        .flat_map(|m| (1..m.len()).map(move |n| &m[..n]))
        .filter(|prefix| text.ends_with(prefix))
        .map(str::len)
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn watch() -> Watch {
        Watch::new(vec!["read_file".into(), "run_command".into()])
    }

    /// What the editor is shown of `pieces`, piece by piece, and whether the answer held calls.
    fn shown(pieces: &[&str]) -> (Vec<String>, bool) {
        let mut watch = watch();
        let mut out: Vec<String> = pieces.iter().map(|p| watch.push(p)).collect();
        let (found, rest) = watch.finish();
        out.push(rest);
        (out, found.is_some())
    }

    #[test]
    fn plain_text_shows_at_once_and_marked_calls_are_held_back() {
        assert_eq!(
            shown(&[
                "Let me ",
                "look.\n<tool",
                "_call>{\"name\"",
                ": \"read_file\"}</tool_call>"
            ]),
            (
                vec![
                    "Let me ".into(),
                    "look.\n".into(),
                    "".into(),
                    "".into(),
                    "".into()
                ],
                true
            )
        );
        assert_eq!(
            shown(&["a <tool", "bar> b"]),
            (vec!["a ".into(), "<toolbar> b".into(), "".into()], false)
        );
        assert_eq!(
            shown(&["``", "`rust\nfn main"]),
            (vec!["".into(), "```rust\nfn main".into(), "".into()], false)
        );
    }

    #[test]
    fn an_answer_opening_with_a_bracket_streams_once_it_cannot_be_a_call() {
        // Data, a list, a link, markdown: each shown from the first piece that rules out a
        // call, and on as it comes.
        assert_eq!(
            shown(&["{\"a\"", ": 1}\n\nThat is ", "the object."]),
            (
                vec![
                    "{\"a\"".into(),
                    ": 1}\n\nThat is ".into(),
                    "the object.".into(),
                    "".into()
                ],
                false
            )
        );
        assert_eq!(
            shown(&["[", "1, 2", "]"]),
            (
                vec!["".into(), "[1, 2".into(), "]".into(), "".into()],
                false
            )
        );
        assert_eq!(
            shown(&["  [", "link](url) and more"]),
            (
                vec!["".into(), "  [link](url) and more".into(), "".into()],
                false
            )
        );
        assert_eq!(
            shown(&["{\"name\": \"Al", "ice\", \"age\": 3}"]),
            (
                vec![
                    "{\"name\": \"Al".into(),
                    "ice\", \"age\": 3}".into(),
                    "".into()
                ],
                false
            )
        );
        // (A `[` at the end waits for the next piece: it may open `[TOOL_CALLS]`.)
        assert_eq!(
            shown(&["```json\n{\"users\": [", "{\"id\": 1}]}\n```"]),
            (
                vec![
                    "```json\n{\"users\": ".into(),
                    "[{\"id\": 1}]}\n```".into(),
                    "".into()
                ],
                false
            )
        );
    }

    #[test]
    fn a_whole_answer_call_is_held_to_the_end_and_never_shown() {
        let pieces = [
            "```json\n{\"name\": \"re",
            "ad_file\", \"arguments\": {\"path\": \"a\"}}",
            "\n```\n",
        ];
        assert_eq!(shown(&pieces), (vec![String::new(); 4], true));
        // Held to the end, it turns out not to be one: then all of it is shown.
        let pieces = [
            "{\"name\": \"read_file\", \"arguments\": {\"path\": ",
            "\"a\"}",
        ];
        assert_eq!(
            shown(&pieces),
            (vec![String::new(), String::new(), pieces.concat()], false)
        );
    }

    #[test]
    fn what_was_shown_never_runs() {
        // A key written twice reads as data to the watch (it is shown), though the parser
        // keeps the last: the answer stays text.
        let text = "{\"name\": \"notes\", \"name\": \"read_file\"}";
        assert!(forms::extract(text, &["read_file".to_string()]).is_some());
        let (out, calls) = shown(&[text]);
        assert_eq!((out.concat(), calls), (text.to_string(), false));
    }

    #[test]
    fn calls_in_their_own_field_release_what_was_held() {
        let mut watch = watch();
        assert_eq!(watch.push("{\"name\": \"read_file\""), "");
        assert_eq!(watch.native(), "{\"name\": \"read_file\"");
    }
}
