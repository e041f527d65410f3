//! The id of a request tandem cannot read whole (over the size limit, not UTF-8, not JSON),
//! from the line's leading bytes, so its error answers that request and the editor does not
//! wait forever for it. Only an `id` found at the top level of the object, once, and whole
//! counts; anything less certain gives `None` and the answer goes to id null.

use serde_json::Value;

/// How many leading bytes of an over-long line are kept to look for its id.
pub(super) const HEAD_BYTES: usize = 4096;

/// The top-level `id` of the JSON object `bytes` starts, when it is there unambiguously.
pub(super) fn id(bytes: &[u8]) -> Option<Value> {
    let mut scan = Scan { bytes, at: 0 };
    scan.ws();
    scan.eat(b'{')?;
    let mut found: Option<Value> = None;
    loop {
        scan.ws();
        match scan.peek() {
            Some(b'}') | None => return found,
            Some(b',') => {
                scan.at += 1;
                continue;
            }
            _ => {}
        }
        // Cut off inside a key: what was found so far is all there is to find.
        let Some(key) = scan.string() else {
            return found;
        };
        let is_id = key == b"id";
        scan.ws();
        if scan.eat(b':').is_none() {
            return found.filter(|_| scan.peek().is_none());
        }
        scan.ws();
        if is_id {
            let value = scan.id_value();
            match (value, &found) {
                // A second id: ambiguous.
                (Some(_), Some(_)) => return None,
                (Some(v), None) => found = Some(v),
                // Truncated or not a usable id.
                (None, _) => return None,
            }
        } else if scan.skip_value().is_none() {
            // The rest is cut off: what was found so far is all there is to find.
            return found;
        }
    }
}

struct Scan<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Scan<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\r' | b'\n')) {
            self.at += 1;
        }
    }

    fn eat(&mut self, byte: u8) -> Option<()> {
        (self.peek()? == byte).then(|| self.at += 1)
    }

    /// A whole string's raw bytes (escapes left as they are), or `None` if cut off.
    fn string(&mut self) -> Option<&'_ [u8]> {
        self.eat(b'"')?;
        let start = self.at;
        loop {
            match self.peek()? {
                b'\\' => self.at += 2,
                b'"' => {
                    let raw = &self.bytes[start..self.at];
                    self.at += 1;
                    return Some(raw);
                }
                _ => self.at += 1,
            }
        }
    }

    /// A string or number id followed by a delimiter (so it is known to be whole).
    fn id_value(&mut self) -> Option<Value> {
        let start = self.at;
        match self.peek()? {
            b'"' => {
                self.string()?;
            }
            b'-' | b'0'..=b'9' => {
                while matches!(self.peek()?, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9') {
                    self.at += 1;
                }
            }
            _ => return None,
        }
        let text = &self.bytes[start..self.at];
        self.ws();
        if !matches!(self.peek()?, b',' | b'}') {
            return None;
        }
        let value: Value = serde_json::from_slice(text).ok()?;
        (value.is_string() || value.is_i64() || value.is_u64()).then_some(value)
    }

    /// Skips one value; `None` when the bytes end first.
    fn skip_value(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => self.string().map(|_| ()),
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    match self.peek()? {
                        b'"' => {
                            self.string()?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                self.at += 1;
                                return Some(());
                            }
                        }
                        _ => {}
                    }
                    self.at += 1;
                }
            }
            _ => {
                while !matches!(self.peek()?, b',' | b'}' | b']') {
                    self.at += 1;
                }
                Some(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_top_level_id_is_found_before_the_cut() {
        let cut = |s: &str| id(s.as_bytes());
        assert_eq!(
            cut(
                r#"{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"prompt":[{"text":"xxxxx"#
            ),
            Some(json!(7))
        );
        assert_eq!(
            cut(r#"{"method":"x","params":{"id":1,"a":[1,{"id":2}]},"id":"abc","x"#),
            Some(json!("abc"))
        );
        assert_eq!(cut(r#" { "id" : 12 , "method": "#), Some(json!(12)));
    }

    #[test]
    fn anything_uncertain_is_none() {
        let cut = |s: &str| id(s.as_bytes());
        // Cut inside the id, or before it.
        assert_eq!(cut(r#"{"jsonrpc":"2.0","id":12"#), None);
        assert_eq!(cut(r#"{"jsonrpc":"2.0","params":{"id":3,"text":"xx"#), None);
        // Twice, not an object, null or a fraction.
        assert_eq!(cut(r#"{"id":1,"id":2,"method":"x"}"#), None);
        assert_eq!(cut(r#"[{"id":1}]"#), None);
        assert_eq!(cut(r#"{"id":null,"method":"x"}"#), None);
        assert_eq!(cut(r#"{"id":1.5,"method":"x"}"#), None);
        assert_eq!(cut(r#"{"a":"\"id\":4","method":"x""#), None);
    }
}
