//! Unicode punctuation folded to ASCII: the quotes, dashes and spaces a model (or a word
//! processor) writes in place of the plain ones code uses.

/// The ASCII text `c` stands for, when it is typographic punctuation; `None` otherwise.
pub(crate) fn ascii_for(c: char) -> Option<&'static str> {
    Some(match c {
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' | '\u{02BC}' => "'",
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' | '\u{00AB}'
        | '\u{00BB}' => "\"",
        '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2015}'
        | '\u{2212}' => "-",
        '\u{00A0}' | '\u{2002}' | '\u{2003}' | '\u{2007}' | '\u{2009}' | '\u{200A}'
        | '\u{202F}' | '\u{3000}' => " ",
        '\u{2026}' => "...",
        '\u{200B}' | '\u{200C}' | '\u{200D}' | '\u{2060}' | '\u{FEFF}' => "",
        _ => return None,
    })
}

/// `text` with its typographic punctuation folded to ASCII.
pub(crate) fn fold(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match ascii_for(c) {
            Some(ascii) => out.push_str(ascii),
            None => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_dashes_and_spaces_fold() {
        assert_eq!(
            fold("say(\u{201C}hi\u{201D}) \u{2014} it\u{2019}s"),
            "say(\"hi\") - it's"
        );
        assert_eq!(fold("a\u{00A0}=\u{00A0}1\u{2026}"), "a = 1...");
    }
}
