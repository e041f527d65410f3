//! Whether the start of an answer can still grow into the unmarked form: the whole answer one
//! JSON call object (or an array of them) naming an offered tool, bare or in one ```` ```json ````
//! fence. Read byte by byte as the answer streams, so the answer is held back only while it
//! can: `[1, 2]`, `[link](url)`, `{"a": 1}` or `{"name": "Alice"}` are told apart from a call
//! within their first few bytes.
//!
//! The reading follows [`super::forms`]'s rule for the unmarked form (its keys, a name among
//! the offered tools, arguments an object, a string or null, nothing but whitespace and the
//! closing fence after the value), but it does not parse the JSON in full: the watch takes a
//! call only when none of it was shown (see [`super::Watch::finish`]), so where the two could
//! differ (an escape in a key, a key written twice) the text is shown and nothing runs.

use super::forms::{CALL_KEYS, WRAPPER_KEYS};

/// What the bytes read so far say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reading {
    /// They can still become a call: hold them.
    Maybe,
    /// They can no longer be one: show them.
    Never,
}

/// The reader of an answer's start.
#[derive(Debug)]
pub(crate) struct Prefix {
    /// The tools offered: a call must name one.
    offered: Vec<String>,
    /// Where the reading is outside the call objects.
    at: Outside,
    /// The call objects open now: a call, or a wrapper and the call in its `function`.
    frames: Vec<Frame>,
    /// Whether the answer opened with a fence (so it must close with one).
    fenced: bool,
}

/// Where the reading is outside the call objects.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Outside {
    /// Whitespace before anything.
    Lead,
    /// This many backticks of an opening fence.
    Ticks(u8),
    /// The opening fence's info string so far.
    Info(String),
    /// After the fence line: whitespace, then the value.
    Value,
    /// Just inside the array (or after one of its commas): whitespace, then a call.
    ArrayCall {
        /// Whether `]` may close it here (after a call, not right after `[` or a comma).
        may_close: bool,
    },
    /// After a call in the array: whitespace, then `,` or `]`.
    ArrayNext,
    /// Inside a call object (see the frames).
    InCall {
        /// Whether the call is an element of the array.
        in_array: bool,
    },
    /// After the value: whitespace, then the closing fence (if one opened).
    After,
    /// This many backticks of the closing fence.
    CloseTicks(u8),
    /// After the closing fence: whitespace only.
    Closed,
    /// Not a call.
    Never,
}

/// One open call object, or a wrapper around one.
#[derive(Debug)]
struct Frame {
    /// The object in a wrapper's `function` (whose keys are a call's, and no `function`).
    inner: bool,
    /// It has a key of a call's own (`name`, `arguments`, `parameters`).
    own: bool,
    /// It has a `function` (so it is a wrapper).
    wraps: bool,
    /// It has its name.
    named: bool,
    /// Where in the object the reading is.
    at: InObject,
}

/// Where the reading is in one object.
#[derive(Debug)]
enum InObject {
    /// After `{` or a comma: whitespace, then a key (or `}` right after `{`).
    Key {
        /// Whether `}` may close it here.
        may_close: bool,
    },
    /// Inside a key string, what it holds so far.
    KeyText(Vec<u8>),
    /// After a key: whitespace, then `:`.
    Colon(Key),
    /// After `:`: whitespace, then the value.
    Value(Key),
    /// Inside the name string, what it holds so far.
    Name(Vec<u8>),
    /// Inside another value, skipped.
    Skip(Skip),
    /// After a value: whitespace, then `,` or `}`.
    Next,
}

/// The keys a call object may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Key {
    /// `name`.
    Name,
    /// `arguments` or `parameters`.
    Arguments,
    /// A wrapper's `function`.
    Function,
    /// `type` or `id`, whatever they hold.
    Other,
}

/// A JSON value being skipped: its nesting, and whether the reading is in a string.
#[derive(Debug, Default)]
struct Skip {
    depth: u32,
    in_string: bool,
    escaped: bool,
    /// A number or a literal, which ends at the byte after it.
    scalar: bool,
}

/// What one byte did to a skipped value.
enum Skipped {
    /// The value goes on.
    More,
    /// The byte ended it.
    Done,
    /// It had ended before the byte, which belongs to what follows.
    Before,
}

impl Prefix {
    /// A reader for an answer to a request that offered these tools.
    pub(crate) fn new(offered: Vec<String>) -> Self {
        Self {
            offered,
            at: Outside::Lead,
            frames: Vec::new(),
            fenced: false,
        }
    }

    /// Reads the next piece of the answer; returns what all of it read so far says.
    pub(crate) fn read(&mut self, piece: &str) -> Reading {
        for &byte in piece.as_bytes() {
            if self.at == Outside::Never {
                break;
            }
            self.byte(byte);
        }
        self.verdict()
    }

    /// What the bytes read so far say.
    pub(crate) fn verdict(&self) -> Reading {
        match self.at {
            Outside::Never => Reading::Never,
            _ => Reading::Maybe,
        }
    }

    fn byte(&mut self, b: u8) {
        let space = is_space(b);
        self.at = match std::mem::replace(&mut self.at, Outside::Never) {
            Outside::Lead if space => Outside::Lead,
            Outside::Lead | Outside::Value if b == b'`' && !self.fenced => Outside::Ticks(1),
            Outside::Lead | Outside::Value => match b {
                _ if space => Outside::Value,
                b'[' => Outside::ArrayCall { may_close: false },
                b'{' => self.open_call(false),
                _ => Outside::Never,
            },
            Outside::Ticks(n) if b == b'`' && n < 3 => Outside::Ticks(n + 1),
            Outside::Ticks(3) => {
                self.fenced = true;
                Self::info(String::new(), b)
            }
            Outside::Info(info) => Self::info(info, b),
            Outside::ArrayCall { may_close } => match b {
                _ if space => Outside::ArrayCall { may_close },
                b'{' => self.open_call(true),
                b']' if may_close => Outside::After,
                _ => Outside::Never,
            },
            Outside::ArrayNext => match b {
                _ if space => Outside::ArrayNext,
                b',' => Outside::ArrayCall { may_close: false },
                b']' => Outside::After,
                _ => Outside::Never,
            },
            Outside::InCall { in_array } => self.in_call(b, in_array),
            Outside::After if space => Outside::After,
            Outside::After if b == b'`' && self.fenced => Outside::CloseTicks(1),
            Outside::CloseTicks(2) if b == b'`' => Outside::Closed,
            Outside::CloseTicks(n) if b == b'`' => Outside::CloseTicks(n + 1),
            Outside::Closed if space => Outside::Closed,
            _ => Outside::Never,
        };
    }

    /// One byte of the opening fence's info string (`json`, `JSON` or none, then a newline).
    fn info(mut info: String, b: u8) -> Outside {
        if b == b'\n' {
            return match info.trim() {
                "" | "json" | "JSON" => Outside::Value,
                _ => Outside::Never,
            };
        }
        info.push(char::from(b));
        let word = info.trim();
        if "json".starts_with(word) || "JSON".starts_with(word) {
            Outside::Info(info)
        } else {
            Outside::Never
        }
    }

    /// A call object opens (its `{` was read).
    fn open_call(&mut self, in_array: bool) -> Outside {
        self.frames.push(Frame::new(false));
        Outside::InCall { in_array }
    }

    /// One byte inside the open call objects.
    fn in_call(&mut self, b: u8, in_array: bool) -> Outside {
        let inside = Outside::InCall { in_array };
        let Some(frame) = self.frames.last_mut() else {
            return Outside::Never;
        };
        match frame.byte(b, &self.offered) {
            Step::On => inside,
            Step::Never => Outside::Never,
            Step::Open => {
                self.frames.push(Frame::new(true));
                inside
            }
            Step::Closed => {
                self.frames.pop();
                match self.frames.last_mut() {
                    // The wrapper's `function` was a whole call.
                    Some(wrapper) => {
                        wrapper.named = true;
                        wrapper.at = InObject::Next;
                        inside
                    }
                    None if in_array => Outside::ArrayNext,
                    None => Outside::After,
                }
            }
        }
    }
}

/// What one byte did inside an object.
enum Step {
    /// The object goes on.
    On,
    /// It is not a call.
    Never,
    /// A wrapper's `function` object opened.
    Open,
    /// The object closed, a call (or a wrapper of one).
    Closed,
}

impl Frame {
    fn new(inner: bool) -> Self {
        Self {
            inner,
            own: false,
            wraps: false,
            named: false,
            at: InObject::Key { may_close: true },
        }
    }

    fn byte(&mut self, b: u8, offered: &[String]) -> Step {
        let space = is_space(b);
        let (at, step) = match std::mem::replace(&mut self.at, InObject::Next) {
            InObject::Key { may_close } => match b {
                _ if space => (InObject::Key { may_close }, Step::On),
                b'"' => (InObject::KeyText(Vec::new()), Step::On),
                b'}' if may_close => return self.close(),
                _ => return Step::Never,
            },
            InObject::KeyText(mut key) => match b {
                b'"' => match self.key(&key) {
                    Some(key) => (InObject::Colon(key), Step::On),
                    None => return Step::Never,
                },
                // An escaped key is read as text (see the module's note).
                b'\\' => return Step::Never,
                _ => {
                    key.push(b);
                    if !self.keys().iter().any(|k| k.as_bytes().starts_with(&key)) {
                        return Step::Never;
                    }
                    (InObject::KeyText(key), Step::On)
                }
            },
            InObject::Colon(key) => match b {
                _ if space => (InObject::Colon(key), Step::On),
                b':' => (InObject::Value(key), Step::On),
                _ => return Step::Never,
            },
            InObject::Value(key) => match (key, b) {
                (_, _) if space => (InObject::Value(key), Step::On),
                (Key::Name, b'"') => (InObject::Name(Vec::new()), Step::On),
                (Key::Function, b'{') => (InObject::Next, Step::Open),
                (Key::Arguments, b'{' | b'"' | b'n') | (Key::Other, _) => {
                    (InObject::Skip(Skip::start(b)), Step::On)
                }
                _ => return Step::Never,
            },
            InObject::Name(mut name) => match b {
                b'"' if names_a_tool(&name, offered) => {
                    self.named = true;
                    (InObject::Next, Step::On)
                }
                b'"' | b'\\' => return Step::Never,
                _ => {
                    name.push(b);
                    if !may_name_a_tool(&name, offered) {
                        return Step::Never;
                    }
                    (InObject::Name(name), Step::On)
                }
            },
            InObject::Skip(mut skip) => match skip.byte(b) {
                Skipped::More => (InObject::Skip(skip), Step::On),
                Skipped::Done => (InObject::Next, Step::On),
                Skipped::Before => return self.next(b),
            },
            InObject::Next => return self.next(b),
        };
        self.at = at;
        step
    }

    /// A byte after a value: whitespace, then `,` or `}`.
    fn next(&mut self, b: u8) -> Step {
        match b {
            _ if is_space(b) => {
                self.at = InObject::Next;
                Step::On
            }
            b',' => {
                self.at = InObject::Key { may_close: false };
                Step::On
            }
            b'}' => self.close(),
            _ => Step::Never,
        }
    }

    /// The object's `}`: a call has its name; a wrapper's was in its `function`.
    fn close(&mut self) -> Step {
        if self.named {
            Step::Closed
        } else {
            Step::Never
        }
    }

    /// The keys this object may still take.
    fn keys(&self) -> &'static [&'static str] {
        if self.inner {
            &CALL_KEYS
        } else if self.wraps {
            &WRAPPER_KEYS
        } else if self.own {
            &CALL_KEYS
        } else {
            &ALL_KEYS
        }
    }

    /// The key `text` names, if this object may have it; notes what kind of object it makes.
    fn key(&mut self, text: &[u8]) -> Option<Key> {
        let text = std::str::from_utf8(text).ok()?;
        if !self.keys().contains(&text) {
            return None;
        }
        let key = match text {
            "name" => Key::Name,
            "arguments" | "parameters" => Key::Arguments,
            "function" => Key::Function,
            _ => Key::Other,
        };
        match key {
            Key::Function => self.wraps = true,
            Key::Name | Key::Arguments => self.own = true,
            Key::Other => {}
        }
        Some(key)
    }
}

/// The keys of an object not yet known to be a call or a wrapper.
const ALL_KEYS: [&str; 6] = ["name", "arguments", "parameters", "type", "id", "function"];

impl Skip {
    /// Starts skipping the value whose first byte is `b`.
    fn start(b: u8) -> Skip {
        let mut skip = Skip::default();
        match b {
            b'{' | b'[' => skip.depth = 1,
            b'"' => skip.in_string = true,
            _ => skip.scalar = true,
        }
        skip
    }

    fn byte(&mut self, b: u8) -> Skipped {
        if self.in_string {
            match b {
                _ if self.escaped => self.escaped = false,
                b'\\' => self.escaped = true,
                b'"' => {
                    self.in_string = false;
                    if self.depth == 0 {
                        return Skipped::Done;
                    }
                }
                _ => {}
            }
            return Skipped::More;
        }
        if self.scalar {
            return match b {
                b',' | b'}' | b']' => Skipped::Before,
                _ if is_space(b) => Skipped::Done,
                _ => Skipped::More,
            };
        }
        match b {
            b'"' => self.in_string = true,
            b'{' | b'[' => self.depth += 1,
            b'}' | b']' => {
                self.depth = self.depth.saturating_sub(1);
                if self.depth == 0 {
                    return Skipped::Done;
                }
            }
            _ => {}
        }
        Skipped::More
    }
}

/// JSON's whitespace.
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// Whether a name string that holds `so_far` can still name an offered tool (the name is
/// read trimmed).
fn may_name_a_tool(so_far: &[u8], offered: &[String]) -> bool {
    let text = so_far.trim_ascii_start();
    let word = text.trim_ascii_end();
    offered.iter().any(|tool| {
        let tool = tool.as_bytes();
        tool.starts_with(word) && (word.len() == text.len() || word == tool)
    })
}

/// Whether a whole name string `text` names an offered tool.
fn names_a_tool(text: &[u8], offered: &[String]) -> bool {
    let word = text.trim_ascii();
    !word.is_empty() && offered.iter().any(|tool| tool.as_bytes() == word)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(text: &str) -> Reading {
        let mut prefix = Prefix::new(vec!["read_file".into(), "run_command".into()]);
        prefix.read(text)
    }

    /// Reads `text` one byte at a time, as the slowest stream would bring it.
    fn verdict_bytewise(text: &str) -> Reading {
        let mut prefix = Prefix::new(vec!["read_file".into(), "run_command".into()]);
        let mut last = prefix.verdict();
        for c in text.chars() {
            last = prefix.read(c.encode_utf8(&mut [0; 4]));
        }
        last
    }

    #[test]
    fn starts_that_can_still_be_calls_are_held() {
        for text in [
            "",
            "  \n",
            "{",
            "[",
            "[ \n{",
            "{\"",
            "{\"na",
            "{\"name\"",
            "{\"name\" : ",
            "{\"name\": \"re",
            "{\"name\": \" read_file ",
            "{\"name\": \"read_file\"",
            "{\"name\": \"read_file\", \"arguments\": {\"path\": \"a}\\\"\", \"n\": [1, {",
            "{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}",
            "{\"name\": \"read_file\", \"arguments\": \"{\\\"path\\\": 1}\"}\n",
            "{\"name\": \"read_file\", \"arguments\": null, \"id\": 7}",
            "{\"name\": \"read_file\", \"arguments\": null, \"id\": 7 ,\"type\":\"function\"}",
            "{\"type\": \"function\", \"function\": {\"name\": \"run_command\"}}",
            "{\"function\": {\"name\": \"run_command\", \"arguments\": {}}, \"id\": \"x\"}",
            "[{\"name\": \"read_file\"}, {\"parameters\": {}, \"name\": \"run_command\"}]",
            "`",
            "``",
            "```",
            "```js",
            " ```JSON\r\n",
            "```json\n{\"name\": \"read_file\"}\n``",
            "```\n[{\"name\": \"read_file\"}]\n```\n",
        ] {
            assert_eq!(verdict(text), Reading::Maybe, "{text}");
            assert_eq!(verdict_bytewise(text), Reading::Maybe, "{text}");
        }
    }

    #[test]
    fn starts_that_cannot_be_calls_are_shown() {
        for text in [
            // Not an array of calls: numbers, a markdown link, an empty array.
            "[1",
            "[link](https://example.com)",
            "[]",
            "[{\"name\": \"read_file\"} {",
            // An object that is data, not a call.
            "{\"a\"",
            "{\"users\": [",
            "{\"name\": \"Alice\"",
            "{\"name\": 3",
            "{\"name\": \"read\"",
            "{\"name\": \"read file\"",
            "{\"name\": \"read_file\", \"arguments\": [",
            "{\"name\": \"read_file\", \"version\": 2",
            "{\"arguments\": {}}",
            "{}",
            "{\"type\": \"function\", \"function\": \"read_file\"",
            "{\"function\": {\"function\"",
            "{\"name\": \"read_file\", \"function\": {",
            "{\"function\": {}, \"name\"",
            "{\"na\\u006de\"",
            // Whatever follows a whole call that is not whitespace.
            "{\"name\": \"read_file\"} is a call",
            "{\"name\": \"read_file\"}\n```",
            "```json\n{\"name\": \"read_file\"}\n```\nThat reads a file.",
            // Fences of another language, or text in one.
            "```rust",
            "````",
            "```json x",
            "```json\nfn",
            // Prose.
            "Hello",
            "  - item",
        ] {
            assert_eq!(verdict(text), Reading::Never, "{text}");
            assert_eq!(verdict_bytewise(text), Reading::Never, "{text}");
        }
    }

    #[test]
    fn every_whole_call_the_forms_take_reads_as_maybe_to_its_end() {
        let offered: Vec<String> = vec!["read_file".into(), "run_command".into()];
        for text in [
            "{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}",
            "  {\"name\": \"read_file\", \"parameters\": {\"path\": \"a\"}}\n",
            "{\"type\": \"function\", \"function\": {\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}}",
            "```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}\n```",
            "[{\"name\": \"read_file\", \"arguments\": \"{\\\"path\\\":\\\"b\\\"}\"}, {\"name\": \"run_command\", \"arguments\": {\"command\": \"ls\"}}]",
            "{\"id\": 1, \"name\": \" run_command\", \"arguments\": null}",
        ] {
            assert!(
                super::super::forms::extract(text, &offered).is_some(),
                "{text}"
            );
            assert_eq!(verdict_bytewise(text), Reading::Maybe, "{text}");
        }
    }
}
