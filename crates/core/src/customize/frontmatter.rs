//! Markdown files with a YAML front-matter block (`---` … `---` at the top), as skills,
//! subagent definitions and custom commands are written.

use serde::de::DeserializeOwned;

/// (front matter, body) of a Markdown file; the front matter is empty when the file has none.
pub(crate) fn split(text: &str) -> (&str, &str) {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return ("", text);
    };
    // The closing fence may also be the file's last line.
    let end = rest
        .find("\n---")
        .or_else(|| rest.starts_with("---").then_some(0));
    match end {
        Some(end) => {
            let after = &rest[end..];
            let after = after.strip_prefix('\n').unwrap_or(after);
            let after = after.strip_prefix("---").unwrap_or(after);
            let after = after
                .strip_prefix('\n')
                .or_else(|| after.strip_prefix("\r\n"))
                .unwrap_or(after);
            (&rest[..end], after)
        }
        None => ("", text),
    }
}

/// Why a front-matter block could not be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub(crate) enum FrontMatterError {
    /// The file does not start with a `---` block.
    #[error("no front matter (a `---` block at the top with `name` and `description`)")]
    Missing,
    /// The block is not the YAML expected.
    #[error("invalid front matter: {0}")]
    Invalid(String),
}

/// Parses the front matter of `text` into `T`, and returns it with the body.
pub(crate) fn parse<T: DeserializeOwned>(text: &str) -> Result<(T, &str), FrontMatterError> {
    let (front, body) = split(text);
    if front.trim().is_empty() {
        return Err(FrontMatterError::Missing);
    }
    let value: T =
        serde_norway::from_str(front).map_err(|e| FrontMatterError::Invalid(e.to_string()))?;
    Ok((value, body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize, PartialEq)]
    struct Front {
        name: String,
        #[serde(default)]
        tools: Vec<String>,
    }

    #[test]
    fn splits_and_parses() {
        let (front, body) =
            parse::<Front>("---\nname: a\ntools: [read_file, grep]\n---\nBody\n").unwrap();
        assert_eq!(front.name, "a");
        assert_eq!(front.tools, ["read_file", "grep"]);
        assert_eq!(body, "Body\n");
        assert_eq!(split("no front\n"), ("", "no front\n"));
        assert_eq!(split("---\r\nname: b\r\n---\r\nx"), ("name: b\r", "x"));
        assert_eq!(split("---\nname: c\n---"), ("name: c", ""));
    }

    #[test]
    fn missing_or_broken_front_matter_is_an_error() {
        assert_eq!(
            parse::<Front>("just text").unwrap_err(),
            FrontMatterError::Missing
        );
        assert!(matches!(
            parse::<Front>("---\nname: [unclosed\n---\n"),
            Err(FrontMatterError::Invalid(_))
        ));
        assert!(matches!(
            parse::<Front>("---\ndescription: no name\n---\n"),
            Err(FrontMatterError::Invalid(_))
        ));
    }
}
