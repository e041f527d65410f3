//! The paths one word of a command may name: the word itself, an option's value (attached,
//! after `=`, or after a cluster of flags: `-qF../x`), an assignment's value (`O=/etc`), a
//! file named after `@` (`curl -d @.env`), the path after a `:` (`git show HEAD:.env`) or in
//! a `file://` address, and what a tilde, `$PWD`, `$HOME` or `~+` stand for. Resolved as the
//! kernel resolves them, at the folder the command works in.

use std::path::PathBuf;

use super::Named;
use crate::platform::named::PathBase;
use crate::shell::Word;

/// The paths `word` may name at `place` (several readings, each resolved).
pub(super) fn paths(word: &Word, place: &PathBase) -> Vec<Named> {
    let text = match expand(&word.text, word.literal, place) {
        Ok(text) => text,
        Err(unknown) => return vec![Named::Unknown(unknown)],
    };
    let mut out = Vec::new();
    for candidate in candidates(&text) {
        let pattern = candidate.contains(['*', '?', '[']);
        let candidate = if word.literal || !pattern {
            candidate.to_string()
        } else {
            match pattern_folder(candidate) {
                Some(folder) => folder,
                None => continue,
            }
        };
        if candidate.is_empty() || candidate == "-" {
            continue;
        }
        let named = at_home(&candidate, word, place);
        if !out.contains(&named) {
            out.push(named);
        }
    }
    out
}

/// `text` with what tandem knows put in: `$PWD`, `${PWD}` and `~+` at the start are the
/// command's folder, `$HOME`, `${HOME}` its home. Any other expansion (`$DIR`, `` `…` ``)
/// cannot be known: `Err` with the word.
fn expand(text: &str, literal: bool, place: &PathBase) -> Result<String, String> {
    if literal {
        return Ok(text.to_string());
    }
    let unquoted: String = text.chars().filter(|c| !matches!(c, '\'' | '"')).collect();
    let cwd = place.cwd.to_string_lossy();
    let home = place
        .home
        .as_ref()
        .map(|h| h.to_string_lossy().into_owned());
    let mut known = unquoted.replace("${PWD}", &cwd).replace("$PWD", &cwd);
    if let Some(home) = &home {
        known = known.replace("${HOME}", home).replace("$HOME", home);
    }
    if let Some(rest) = known.strip_prefix("~+") {
        known = format!("{cwd}{rest}");
    }
    if known.contains(['$', '`']) {
        return Err(text.to_string());
    }
    Ok(known)
}

/// The readings of a word that may be paths.
fn candidates(text: &str) -> Vec<&str> {
    fn push<'a>(out: &mut Vec<&'a str>, c: &'a str) {
        let c = c.strip_prefix('@').unwrap_or(c);
        let c = c.strip_prefix("file://").unwrap_or(c);
        out.push(c);
        // `HEAD:.env`, `origin:x`: what follows a colon, when it is no address.
        if !c.contains("://")
            && let Some((_, after)) = c.split_once(':')
        {
            out.push(after);
        }
    }
    let mut out: Vec<&str> = Vec::new();
    if let Some(long) = text.strip_prefix("--") {
        if let Some((_, value)) = long.split_once('=') {
            push(&mut out, value);
        }
        return out;
    }
    if let Some(short) = text.strip_prefix('-') {
        if let Some((_, value)) = short.split_once('=') {
            push(&mut out, value);
        }
        // A cluster of flags: any of them may take the rest as its value (`-qF../x`).
        // Each flag of the leading run of letters may take the rest as its value.
        for (at, c) in short.char_indices().skip(1) {
            push(&mut out, &short[at..]);
            if !c.is_ascii_alphabetic() {
                break;
            }
        }
        return out;
    }
    match text.split_once('=') {
        Some((name, value)) if !name.is_empty() && !name.contains('/') => {
            push(&mut out, value);
            push(&mut out, text);
        }
        _ => push(&mut out, text),
    }
    out
}

/// A pattern's folder: the part before its first wildcard, up to its last `/` (`~/.ssh/*` is
/// `~/.ssh/`); `None` for a pattern in the command's own folder.
fn pattern_folder(pattern: &str) -> Option<String> {
    let plain: String = pattern.chars().filter(|c| *c != '\\').collect();
    let fixed = plain.split(['*', '?', '[', '{']).next().unwrap_or("");
    match fixed.rfind('/') {
        Some(at) => Some(fixed[..=at].to_string()),
        None if fixed.starts_with('~') => Some(fixed.to_string()),
        None => None,
    }
}

/// `text` resolved at `place`; a tilde is the home folder only as `~` or `~/…`: `~user`
/// and `~-` name folders tandem does not know. `/proc/self/cwd` is the command's folder.
fn at_home(text: &str, word: &Word, place: &PathBase) -> Named {
    if let Some(rest) = ["/proc/self/cwd", "/proc/thread-self/cwd"]
        .iter()
        .find_map(|p| text.strip_prefix(p))
    {
        return Named::Path(place.resolve(&format!(".{rest}")));
    }
    match text.strip_prefix('~') {
        Some("") => Named::Path(place.resolve("~/")),
        Some(rest) if !rest.starts_with('/') => Named::Unknown(word.text.clone()),
        _ => Named::Path(plain_name(text, place).unwrap_or_else(|| place.resolve(text))),
    }
}

/// The most common word, a plain name in the folder (`status`, `README.md`), without
/// resolving a whole path: one look at the disk says it is nothing or no link.
fn plain_name(text: &str, place: &PathBase) -> Option<PathBuf> {
    if text.contains(['/', '\\']) || text == ".." || text == "." {
        return None;
    }
    let path = place.cwd.join(text);
    match std::fs::symlink_metadata(&path) {
        Ok(meta) if !meta.file_type().is_symlink() => Some(path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some(path),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readings_of_a_word() {
        assert_eq!(candidates("--manifest-path=../x"), ["../x"]);
        assert_eq!(candidates("--all"), Vec::<&str>::new());
        assert_eq!(candidates("-qF../x"), ["F../x", "../x"]);
        assert_eq!(candidates("-sC../o"), ["C../o", "../o"]);
        assert_eq!(candidates("-o/tmp/x"), ["/tmp/x"]);
        assert_eq!(candidates("-I/usr/include"), ["/usr/include"]);
        assert_eq!(candidates("O=/etc"), ["/etc", "O=/etc"]);
        assert_eq!(candidates("@.env"), [".env"]);
        assert_eq!(candidates("-d@.env"), [".env"]);
        assert_eq!(candidates("-la"), ["a"]);
        assert_eq!(candidates("HEAD:.env"), ["HEAD:.env", ".env"]);
        assert_eq!(candidates("file:///etc/passwd"), ["/etc/passwd"]);
        assert_eq!(
            candidates("https://example.com/x"),
            ["https://example.com/x"]
        );
        assert_eq!(pattern_folder("~/.ssh/*").as_deref(), Some("~/.ssh/"));
        assert_eq!(pattern_folder("*.rs"), None);
    }
}
