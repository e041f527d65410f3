//! A web page's HTML as Markdown the model reads (htmd, a port of turndown): headings,
//! links, lists, tables and code kept; scripts, styles, navigation chrome and forms left
//! out; runs of blank lines folded.

/// Deepest nesting converted; a page nested deeper (a hostile one: the converter recurses)
/// is read as its text.
const MOST_DEPTH: usize = 2_000;

/// Stack of the thread that converts: enough for [`MOST_DEPTH`] levels many times over.
const STACK: usize = 64 << 20;

/// The Markdown of `html`, converted on a thread of its own with a large stack (the
/// converter recurses, and a stack overflow would end the whole process); the text with tags
/// stripped when the page nests deeper than [`MOST_DEPTH`] or the converter fails. Blocks:
/// call it from a blocking task.
pub(crate) fn of_html(html: &str) -> String {
    if depth(html) > MOST_DEPTH {
        return fold_blank_lines(&strip_tags(html));
    }
    let owned = html.to_string();
    let converted = std::thread::Builder::new()
        .name("tandem-markdown".into())
        .stack_size(STACK)
        .spawn(move || convert(&owned))
        .ok()
        .and_then(|thread| thread.join().ok());
    converted.unwrap_or_else(|| fold_blank_lines(&strip_tags(html)))
}

/// How deep `html`'s tags nest, counting every opening tag that is not void or self-closed
/// against its closing one (unclosed tags count too: a bound, not a parse).
fn depth(html: &str) -> usize {
    const VOID: [&str; 14] = [
        "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr", "param",
    ];
    let (mut now, mut most) = (0usize, 0usize);
    for tag in html.split('<').skip(1) {
        let tag = tag.split('>').next().unwrap_or("");
        if tag.starts_with('/') {
            now = now.saturating_sub(1);
        } else if !(tag.starts_with('!') || tag.starts_with('?') || tag.ends_with('/')) {
            let name: String = tag
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric())
                .collect::<String>()
                .to_ascii_lowercase();
            if !name.is_empty() && !VOID.contains(&name.as_str()) {
                now += 1;
                most = most.max(now);
            }
        }
    }
    most
}

fn convert(html: &str) -> String {
    let converter = htmd::HtmlToMarkdown::builder()
        .skip_tags(vec![
            "script", "style", "noscript", "template", "svg", "canvas", "iframe", "form", "button",
            "input", "select", "textarea", "nav", "head",
        ])
        .build();
    let markdown = converter.convert(html).unwrap_or_else(|_| strip_tags(html));
    fold_blank_lines(&markdown)
}

/// At most one blank line in a row, no trailing spaces.
fn fold_blank_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank = 0;
    for line in text.lines() {
        let line = line.trim_end();
        if line.is_empty() {
            blank += 1;
            if blank > 1 {
                continue;
            }
        } else {
            blank = 0;
        }
        out.push_str(line);
        out.push('\n');
    }
    out.trim().to_string()
}

/// The text of `html` without its tags (a fallback).
fn strip_tags(html: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for c in html.chars() {
        match c {
            '<' => inside = true,
            '>' => inside = false,
            c if !inside => out.push(c),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_nested_too_deep_is_read_as_text_and_does_not_end_the_process() {
        let hostile = format!("{}deep{}", "<div>".repeat(100_000), "</div>".repeat(10));
        assert_eq!(of_html(&hostile), "deep");
        // Deep, but within the bound: converted on the big stack.
        let deep = format!("{}x{}", "<div>".repeat(1_900), "</div>".repeat(1_900));
        assert!(of_html(&deep).contains('x'));
    }

    #[test]
    fn a_page_reads_as_markdown_without_its_scripts() {
        let html = "<html><head><title>T</title><style>p{}</style></head><body>\
            <nav><a href='/'>Home</a></nav><h1>Guide</h1><p>Use <code>cargo</code> and \
            <a href='https://docs.rs'>docs</a>.</p><script>alert(1)</script>\
            <ul><li>one</li><li>two</li></ul></body></html>";
        let md = of_html(html);
        assert!(md.starts_with("# Guide"), "{md}");
        assert!(md.contains("`cargo`"), "{md}");
        assert!(md.contains("[docs](https://docs.rs)"), "{md}");
        assert!(md.contains("one") && md.contains("two"), "{md}");
        assert!(
            !md.contains("alert") && !md.contains("p{}") && !md.contains("Home"),
            "{md}"
        );
    }
}
