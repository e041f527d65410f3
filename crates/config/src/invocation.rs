//! How the user starts tandem, for every command tandem tells them to type (`tandem login`,
//! `tandem doctor`, the help's examples).
//!
//! Installed from a release or with cargo, that is `tandem`. Started through npm's wrapper it
//! may be `npx tandem-acp`, and npx puts no `tandem` on the PATH: the wrapper says how it was
//! run in `TANDEM_INVOKED_AS`, and tandem spells its advice that way. The value is shown as a
//! command to type, so only a short, plain command line is taken from it.

use std::sync::OnceLock;

/// The variable the npm wrapper sets.
pub(crate) const ENV: &str = "TANDEM_INVOKED_AS";

/// The command that starts tandem, as the user typed it: `tandem` unless a launcher said
/// otherwise.
pub fn command() -> &'static str {
    static COMMAND: OnceLock<String> = OnceLock::new();
    COMMAND.get_or_init(|| from(std::env::var(ENV).ok().as_deref()))
}

/// `text` with every `{tandem}` spelled as [`command`].
pub fn spell(text: &str) -> String {
    text.replace("{tandem}", command())
}

/// The command named by a launcher's `value`, else `tandem`.
fn from(value: Option<&str>) -> String {
    match value.map(str::trim) {
        Some(value) if plain(value) => value.to_string(),
        _ => "tandem".to_string(),
    }
}

/// A short command of plain words (`npx tandem-acp`, `bunx tandem-acp@1.2`): nothing a
/// terminal or a shell would read as more than that.
fn plain(value: &str) -> bool {
    !value.is_empty()
        && value.len() <= 64
        && value.split(' ').all(|word| {
            !word.is_empty()
                && !word.starts_with('-')
                && word
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./@:".contains(c))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_launcher_names_the_command_and_anything_odd_is_ignored() {
        assert_eq!(from(None), "tandem");
        assert_eq!(from(Some("npx tandem-acp")), "npx tandem-acp");
        assert_eq!(from(Some(" tandem-acp ")), "tandem-acp");
        assert_eq!(from(Some("bunx tandem-acp@1.2.0")), "bunx tandem-acp@1.2.0");
        for odd in [
            "",
            "npx  tandem-acp",
            "npx tandem-acp; rm -rf ~",
            "$(id)",
            "npx --yes tandem-acp",
            "tandem\nlogin",
            "\u{1b}[31mtandem",
            &"x".repeat(65),
        ] {
            assert_eq!(from(Some(odd)), "tandem", "{odd:?}");
        }
    }
}
