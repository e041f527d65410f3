//! A server's answer in a few words, for a message a person reads: a web page is named as one
//! (with its title), any other text is cut to one short line. A proxy's or a web server's
//! answer can be a whole HTML page, which has no place in an error line.

/// The longest excerpt, in characters.
const MOST: usize = 160;

/// `body` as one short line: `an HTML page titled "…"`, or its text with whitespace folded,
/// cut at [`MOST`] characters with `…`. Keys tandem knows are redacted.
pub(crate) fn of(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    // Redacted whole, before any cut: a key the cut went through would no longer be known.
    let text = crate::secrets::redact(text.trim());
    if looks_like_html(&text) {
        match title(&text) {
            Some(title) => format!("an HTML page titled \"{}\"", cut(&fold(&title))),
            None => "an HTML page".to_string(),
        }
    } else {
        cut(&fold(&text))
    }
}

/// Whether `text` reads as a web page rather than an API's answer.
pub(crate) fn looks_like_html(text: &str) -> bool {
    let head: String = text
        .chars()
        .take(512)
        .collect::<String>()
        .to_ascii_lowercase();
    head.starts_with('<')
        && ["<!doctype html", "<html", "<head", "<body", "<title"]
            .iter()
            .any(|tag| head.contains(tag))
}

/// The text of the page's `<title>` element.
fn title(html: &str) -> Option<String> {
    let lower = html.to_ascii_lowercase();
    let open = lower.find("<title")?;
    let start = open + lower[open..].find('>')? + 1;
    let end = start + lower[start..].find("</title")?;
    let title = html.get(start..end)?.trim();
    (!title.is_empty()).then(|| title.to_string())
}

/// Every run of whitespace (newlines among them) as one space, and no control characters: a
/// server's escape sequences must not reach the user's terminal.
fn fold(text: &str) -> String {
    text.split_whitespace()
        .map(|word| word.chars().filter(|c| !c.is_control()).collect::<String>())
        .filter(|word| !word.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// At most [`MOST`] characters, `…` where cut.
fn cut(text: &str) -> String {
    if text.chars().count() <= MOST {
        return text.to_string();
    }
    let mut short: String = text.chars().take(MOST).collect();
    short.push('…');
    short
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_across_the_cut_is_redacted_whole() {
        let key = "sk-excerpt-test-0123456789abcdefghijklmnopqrstuv";
        crate::secrets::protect(key, Vec::new());
        let body = format!("{} {key}", "x".repeat(130));
        let short = of(body.as_bytes());
        assert!(!short.contains("sk-excerpt"), "{short}");
    }

    #[test]
    fn a_web_page_is_named_with_its_title() {
        let page = b"<!DOCTYPE html>\n<html><head><TITLE>404 Not\n Found</TITLE></head><body><h1>Not Found</h1>\n<p>The requested URL was not found on this server.</p></body></html>";
        assert_eq!(of(page), "an HTML page titled \"404 Not Found\"");
        assert_eq!(of(b"<html><body>Bad Gateway</body></html>"), "an HTML page");
    }

    #[test]
    fn other_text_is_one_short_line() {
        assert_eq!(of(b"  404 page not found\n"), "404 page not found");
        let long = "word ".repeat(100);
        let short = of(long.as_bytes());
        assert_eq!(short.chars().count(), MOST + 1);
        assert!(short.ends_with('…') && !short.contains('\n'));
        assert_eq!(of("é".repeat(200).as_bytes()).chars().count(), MOST + 1);
        assert_eq!(
            of(b"<not html> just angle brackets"),
            "<not html> just angle brackets"
        );
    }
}
