//! A session's title: the user's own words from its first prompt, never a client's markup.
//!
//! Clients wrap what they add to a prompt in tags: avante.nvim sends earlier messages as
//! `<previous_user_message>…</previous_user_message>` and selections as
//! `<context uri=…>…</context>`. Those elements are left out whole; the title is the first
//! line of what remains. Only when a prompt is nothing but markup do the words inside the
//! last element count (a client that wraps the user's own message in a tag).

use crate::types::UserPart;

/// Characters a title keeps; a longer first line is cut with an ellipsis.
const MAX: usize = 80;

/// The title the first prompt `parts` gives a session, if any of it is words.
pub(crate) fn from_prompt(parts: &[UserPart]) -> Option<String> {
    parts.iter().find_map(|p| match p {
        UserPart::Text(text) => from_text(text),
        _ => None,
    })
}

/// The title one text of a prompt gives, if it has words.
pub(crate) fn from_text(text: &str) -> Option<String> {
    let pieces = split(text);
    // An element ends the line it is on: the words around it are not one sentence.
    let outside: String = pieces
        .iter()
        .map(|p| match p {
            Piece::Words(w) => w,
            Piece::Element(_) => "\n",
        })
        .collect();
    first_line(&outside).or_else(|| {
        pieces.iter().rev().find_map(|p| match p {
            Piece::Element(inner) => from_text(inner),
            Piece::Words(_) => None,
        })
    })
}

/// The first line with words, its spaces folded, cut to [`MAX`] characters.
fn first_line(text: &str) -> Option<String> {
    let line = text
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .find(|l| !l.is_empty())?;
    Some(if line.chars().count() > MAX {
        format!("{}…", line.chars().take(MAX - 1).collect::<String>())
    } else {
        line
    })
}

/// A stretch of a prompt's text: words of the user's, or an element of markup (its content).
enum Piece<'a> {
    Words(&'a str),
    Element(&'a str),
}

/// `text` cut into words and elements. An element is `<name …>…</name>`, or `<name …/>`
/// with no content; a `<` that starts neither is words (`a < b`, `Vec<u8>`, a lone `</b>`).
fn split(text: &str) -> Vec<Piece<'_>> {
    let mut pieces = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find('<') {
        let Some((name, after_open)) = opening_tag(&rest[at..]) else {
            let next = at + 1;
            pieces.push(Piece::Words(&rest[..next]));
            rest = &rest[next..];
            continue;
        };
        let tag = &rest[at..][..after_open];
        let after = &rest[at..][after_open..];
        let close = format!("</{name}>");
        let content = if tag.ends_with("/>") {
            Some(("", after))
        } else {
            after
                .find(&close)
                .map(|end| (&after[..end], &after[end + close.len()..]))
        };
        match content {
            Some((inner, next)) => {
                pieces.push(Piece::Words(&rest[..at]));
                pieces.push(Piece::Element(inner));
                rest = next;
            }
            None => {
                // Never closed: no markup (`Vec<u8>`).
                let next = at + 1;
                pieces.push(Piece::Words(&rest[..next]));
                rest = &rest[next..];
            }
        }
    }
    pieces.push(Piece::Words(rest));
    pieces
}

/// When `text` starts with an opening (or self-closing) tag: the tag's name and the length
/// of the tag.
fn opening_tag(text: &str) -> Option<(&str, usize)> {
    let inner = text.strip_prefix('<')?;
    let name_len = inner
        .char_indices()
        .take_while(|(i, c)| {
            c.is_ascii_alphabetic()
                || *c == '_'
                || (*i > 0 && (c.is_ascii_alphanumeric() || "-.:".contains(*c)))
        })
        .count();
    if name_len == 0 {
        return None;
    }
    let name = &inner[..name_len];
    let after_name = &inner[name_len..];
    if !after_name.starts_with(['>', ' ', '\t', '\n', '/']) {
        return None;
    }
    let end = after_name.find('>')?;
    let consumed = text.len() - after_name.len() + end + 1;
    Some((name, consumed))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn title(text: &str) -> Option<String> {
        from_prompt(&[UserPart::Text(text.into())])
    }

    #[test]
    fn the_first_line_folded_and_cut() {
        assert_eq!(
            title("  Fix   the build\nand more").as_deref(),
            Some("Fix the build")
        );
        assert_eq!(title(&"x".repeat(200)).unwrap().chars().count(), MAX);
        assert_eq!(
            from_prompt(&[UserPart::Image {
                url: "data:".into()
            }]),
            None
        );
        assert_eq!(title(" \n \n"), None);
    }

    /// avante.nvim's markup (its ACP prompts): earlier messages and selected context.
    #[test]
    fn markup_is_never_the_title() {
        let avante = "<previous_user_message>make it faster</previous_user_message>\n\
                      <context uri=\"file:///p/src/main.rs\">\nfn main() {}\n</context>\n\
                      rename the main function";
        assert_eq!(title(avante).as_deref(), Some("rename the main function"));
        assert_eq!(
            title("<selected_code path=\"a.rs\"/>\nexplain this").as_deref(),
            Some("explain this")
        );
        // Nothing but markup: the words of the last element.
        assert_eq!(
            title("<user_message>\n  add a test\n</user_message>").as_deref(),
            Some("add a test")
        );
    }

    #[test]
    fn a_less_than_sign_is_words() {
        assert_eq!(
            title("why is a < b here? <3").as_deref(),
            Some("why is a < b here? <3")
        );
        assert_eq!(
            title("use Vec<u8> instead of </b>").as_deref(),
            Some("use Vec<u8> instead of </b>")
        );
    }
}
