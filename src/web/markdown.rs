//! A web page's HTML as Markdown the model reads (htmd, a port of turndown): headings,
//! links, lists, tables and code kept; scripts, styles, navigation chrome and forms left
//! out; runs of blank lines folded.

/// The Markdown of `html`; the text with tags stripped should the converter fail.
pub fn of_html(html: &str) -> String {
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
