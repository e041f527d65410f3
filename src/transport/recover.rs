//! The id of a request tandem cannot read whole (over the size limit, not UTF-8, not JSON),
//! from the line's leading bytes, so its error answers that request and the editor does not
//! wait forever for it. Only an `id` found at the top level of the object, once, and whole
//! counts; anything less certain gives `None` and the answer goes to id null.

use serde_json::Value;

/// How many leading bytes of an over-long line are kept to look for its id.
pub(super) const HEAD_BYTES: usize = 4096;

/// The top-level `id` of the JSON object `bytes` starts, when it is there unambiguously.
pub(super) fn id(bytes: &[u8]) -> Option<Value> {
    top_level(bytes).id
}

/// Whether `bytes` start an answer (a `result` or an `error`, no `method`) with a certain
/// id: the editor answering one of tandem's requests.
pub(super) fn answer_id(bytes: &[u8]) -> Option<Value> {
    let top = top_level(bytes);
    let answer = top.keys.iter().any(|k| k == b"result" || k == b"error");
    let request = top.keys.iter().any(|k| k == b"method");
    top.id.filter(|_| answer && !request)
}

/// What the leading bytes of an object tell for sure: its `id` (`None` when missing,
/// repeated, cut off or not an id) and the top-level keys seen before the cut.
struct TopLevel {
    id: Option<Value>,
    keys: Vec<Vec<u8>>,
}

fn top_level(bytes: &[u8]) -> TopLevel {
    let mut scan = Scan { bytes, at: 0 };
    let mut top = TopLevel {
        id: None,
        keys: Vec::new(),
    };
    scan.ws();
    if scan.eat(b'{').is_none() {
        return top;
    }
    loop {
        scan.ws();
        match scan.peek() {
            Some(b'}') | None => return top,
            Some(b',') => {
                scan.at += 1;
                continue;
            }
            _ => {}
        }
        // Cut off inside a key: what was found so far is all there is to find.
        let Some(key) = scan.string() else {
            return top;
        };
        let is_id = key == b"id";
        top.keys.push(key.to_vec());
        scan.ws();
        if scan.eat(b':').is_none() {
            if scan.peek().is_some() {
                top.id = None;
            }
            return top;
        }
        scan.ws();
        if is_id {
            let value = scan.id_value();
            match (value, &top.id) {
                // A second id (ambiguous), or one cut off or not usable as an id.
                (Some(_), Some(_)) | (None, _) => {
                    top.id = None;
                    return top;
                }
                (Some(v), None) => top.id = Some(v),
            }
        } else if scan.skip_value().is_none() {
            // The rest is cut off: what was found so far is all there is to find.
            return top;
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
    fn an_answer_is_told_from_a_request_by_its_keys() {
        let head = br#"{"jsonrpc":"2.0","id":7,"result":{"content":"aaaa"#;
        assert_eq!(answer_id(head), Some(serde_json::json!(7)));
        let error = br#"{"id":"x","jsonrpc":"2.0","error":{"code":1,"message":"aaa"#;
        assert_eq!(answer_id(error), Some(serde_json::json!("x")));
        let request = br#"{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"a"#;
        assert_eq!(answer_id(request), None);
        assert_eq!(answer_id(br#"{"jsonrpc":"2.0","result":{"a"#), None);
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
