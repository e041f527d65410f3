//! The rules in force for one session: the user's (allow, ask, deny) and the project's (ask
//! and deny only), compiled against the session's folder and the user's home.

use std::path::{Component, Path, PathBuf};

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use super::Subject;
use super::scope::{CommandScope, MatchReach};
use super::shell::{self, SimpleCommand, Word};
use crate::config::permissions::{PathAccess, Rule, RuleEffect, RuleTarget};

/// A rule ready to match calls.
#[derive(Debug)]
struct Compiled {
    rule: Rule,
    matcher: Matcher,
}

#[derive(Debug)]
enum Matcher {
    AnyCommand,
    Command(CommandScope),
    AnyPath(PathAccess),
    Path(PathAccess, GlobSet),
    Tool {
        name: String,
        prefix: bool,
    },
    Web {
        tool: String,
        domain: Option<String>,
    },
}

/// Every rule of a session.
#[derive(Debug, Default)]
pub struct Rules {
    rules: Vec<Compiled>,
}

impl Rules {
    /// Compiles `rules` for a session in `root`; `home` is what `~/` means.
    pub fn new(rules: impl IntoIterator<Item = Rule>, root: &Path, home: Option<&Path>) -> Rules {
        let rules = rules
            .into_iter()
            .filter_map(|rule| {
                let matcher = match &rule.target {
                    RuleTarget::AnyCommand => Matcher::AnyCommand,
                    RuleTarget::Command { words, prefix } => {
                        let words = words.iter().map(Word::literal).collect();
                        Matcher::Command(if *prefix {
                            CommandScope::Prefix(words)
                        } else {
                            CommandScope::Exact(words)
                        })
                    }
                    RuleTarget::AnyPath(access) => Matcher::AnyPath(*access),
                    RuleTarget::Path { access, glob } => match globs(glob, root, home) {
                        Ok(set) => Matcher::Path(*access, set),
                        Err(e) => {
                            tracing::warn!(rule = %rule.text, "ignoring a rule: {e}");
                            return None;
                        }
                    },
                    RuleTarget::Tool { name, prefix } => Matcher::Tool {
                        name: name.clone(),
                        prefix: *prefix,
                    },
                    RuleTarget::Web { tool, domain } => Matcher::Web {
                        tool: tool.clone(),
                        domain: domain.clone(),
                    },
                };
                Some(Compiled { rule, matcher })
            })
            .collect();
        Rules { rules }
    }

    /// Every rule, deny first, as written.
    pub(crate) fn list(&self) -> impl Iterator<Item = &Rule> {
        self.rules.iter().map(|c| &c.rule)
    }

    /// The first rule with `effect` that matches `subject`. For a command line, a rule
    /// matches when it may match any command the line may run (see [`shell::reachable`]
    /// and [`CommandScope::reaches`]): every simple command, those inside substitutions,
    /// those a wrapper (`sudo`, `sh -c '…'`, `xargs`) would run, and anything the line hides.
    /// A certain match is preferred to a possible one.
    pub(crate) fn find(&self, effect: RuleEffect, subject: &Subject) -> Option<Hit<'_>> {
        let mut rules = self
            .rules
            .iter()
            .filter(|c| c.rule.effect == effect)
            .peekable();
        rules.peek()?;
        let Subject::Command { parsed, .. } = subject else {
            return rules
                .find(|c| c.matcher.matches(subject))
                .map(|c| Hit::certain(&c.rule));
        };
        let reachable = shell::reachable(parsed);
        let mut maybe: Option<Hit> = None;
        for compiled in rules {
            for reached in reachable {
                for (words, open) in reached.candidates() {
                    match compiled.matcher.reaches(words, open) {
                        MatchReach::Certainly => return Some(Hit::certain(&compiled.rule)),
                        MatchReach::Maybe if maybe.is_none() => {
                            maybe = Some(Hit {
                                rule: &compiled.rule,
                                unseen: Some(unseen(words)),
                            });
                        }
                        _ => {}
                    }
                }
            }
        }
        maybe
    }

    /// The first deny rule on reading paths, if there is one.
    pub(crate) fn any_read_deny(&self) -> Option<&Rule> {
        self.rules
            .iter()
            .find(|c| {
                c.rule.effect == RuleEffect::Deny
                    && matches!(
                        c.matcher,
                        Matcher::AnyPath(PathAccess::Read) | Matcher::Path(PathAccess::Read, _)
                    )
            })
            .map(|c| &c.rule)
    }

    /// The allow rule that covers `command`, if one does.
    pub(crate) fn allowing(&self, command: &SimpleCommand) -> Option<&Rule> {
        self.rules
            .iter()
            .find(|c| c.rule.effect == RuleEffect::Allow && c.matcher.command(command))
            .map(|c| &c.rule)
    }
}

/// A rule that matched a call.
#[derive(Debug, Clone, Copy)]
pub struct Hit<'a> {
    /// The rule.
    pub(crate) rule: &'a Rule,
    /// When the rule only may match: the part of the line that cannot be seen through.
    pub(crate) unseen: Option<&'static str>,
}

impl<'a> Hit<'a> {
    fn certain(rule: &'a Rule) -> Hit<'a> {
        Hit { rule, unseen: None }
    }
}

/// Why a command a rule may match cannot be read: what stands where the rule's words would.
fn unseen(words: &[Word]) -> &'static str {
    if words
        .first()
        .is_some_and(|w| w.text == shell::ANYTHING && !w.literal)
    {
        "part of the line cannot be read completely"
    } else {
        "a word of the command is computed (a variable, a pattern, words read from input)"
    }
}

impl Matcher {
    /// How this rule meets a command with `words` (deny and ask rules err towards a match).
    fn reaches(&self, words: &[Word], open: bool) -> MatchReach {
        match self {
            Matcher::AnyCommand => MatchReach::Certainly,
            Matcher::Command(scope) => scope.reaches(words, open),
            _ => MatchReach::Never,
        }
    }

    fn command(&self, command: &SimpleCommand) -> bool {
        match self {
            Matcher::AnyCommand => true,
            Matcher::Command(scope) => scope.covers(command),
            _ => false,
        }
    }

    fn matches(&self, subject: &Subject) -> bool {
        match (self, subject) {
            (Matcher::AnyPath(want), Subject::Path { access, .. }) => want == access,
            (Matcher::Path(want, set), Subject::Path { access, path }) => {
                want == access && set.is_match(path)
            }
            (Matcher::Web { tool, domain }, Subject::Web { tool: t, host }) => {
                tool == t
                    && domain.as_deref().is_none_or(|d| {
                        *host == d || host.strip_suffix(d).is_some_and(|rest| rest.ends_with('.'))
                    })
            }
            (Matcher::Tool { name, prefix }, Subject::Tool { name: called, .. }) => {
                if *prefix {
                    called.starts_with(name.as_str())
                } else {
                    called == name
                }
            }
            _ => false,
        }
    }
}

/// The glob as an absolute pattern, matching the paths it names and everything beneath
/// them. Its leading literal folders are resolved like the paths tools judge (symlinks
/// followed), so `/tmp/**` still matches on a system where `/tmp` is a link.
fn globs(glob: &str, root: &Path, home: Option<&Path>) -> Result<GlobSet, globset::Error> {
    let expanded = match (glob.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => home.join(rest),
        _ => PathBuf::from(glob),
    };
    let absolute = if expanded.is_absolute() {
        expanded
    } else {
        root.join(expanded)
    };
    let pattern = resolve_literal_prefix(&absolute);
    let pattern = pattern.to_string_lossy().replace('\\', "/");
    let mut set = GlobSetBuilder::new();
    for p in [
        pattern.clone(),
        format!("{}/**", pattern.trim_end_matches('/')),
    ] {
        set.add(
            GlobBuilder::new(&p)
                .literal_separator(true)
                .case_insensitive(crate::platform::PATHS_IGNORE_CASE)
                .build()?,
        );
    }
    set.build()
}

/// Canonicalises the folders of `pattern` before its first wildcard, when they exist.
fn resolve_literal_prefix(pattern: &Path) -> PathBuf {
    let wild = |c: &Component| {
        c.as_os_str()
            .to_string_lossy()
            .contains(['*', '?', '[', '{'])
    };
    let components: Vec<Component> = pattern.components().collect();
    let literal = components.iter().take_while(|c| !wild(c)).count();
    let head: PathBuf = components[..literal].iter().collect();
    let Ok(real) = crate::platform::canonical(&head) else {
        return pattern.to_path_buf();
    };
    components[literal..].iter().fold(real, |mut out, c| {
        out.push(c);
        out
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::permissions::parse_rule;

    fn rules(list: &[(RuleEffect, &str)]) -> Rules {
        let rules = list.iter().map(|(effect, text)| Rule {
            effect: *effect,
            text: text.to_string(),
            target: parse_rule(text).unwrap(),
            source: PathBuf::from("/config.toml"),
        });
        Rules::new(rules, Path::new("/ws"), Some(Path::new("/home/u")))
    }

    fn command(line: &str) -> Subject<'_> {
        Subject::Command {
            line,
            parsed: shell::parse(line),
            cwd: Path::new("/ws"),
        }
    }

    #[test]
    fn command_rules_see_every_command_a_line_may_run() {
        let deny = rules(&[(RuleEffect::Deny, "run_command(git push:*)")]);
        for line in [
            "git push",
            "git push --force origin main",
            "cargo test && git push",
            "echo $(git push)",
            "sudo git push",
            "bash -c 'git status; git push'",
            "timeout 60 git push",
        ] {
            assert!(
                deny.find(RuleEffect::Deny, &command(line)).is_some(),
                "{line}"
            );
        }
        // `git pushx` is no git command: it may be an alias of `git push`, so it matches.
        assert!(deny.find(RuleEffect::Deny, &command("git pushx")).is_some());
        for line in ["git status", "echo git push", "git log --grep push"] {
            assert!(
                deny.find(RuleEffect::Deny, &command(line)).is_none(),
                "{line}"
            );
        }
    }

    #[test]
    fn allow_rules_cover_single_commands() {
        let allow = rules(&[(RuleEffect::Allow, "run_command(npm run test:*)")]);
        let covered = |line: &str| {
            shell::parse(line)
                .commands
                .iter()
                .all(|c| allow.allowing(c).is_some())
        };
        assert!(covered("npm run test -- --watch"));
        assert!(!covered("npm run build"));
    }

    #[test]
    fn path_rules_match_by_access_and_glob() {
        let set = rules(&[
            (RuleEffect::Deny, "read_file(~/.ssh/**)"),
            (RuleEffect::Ask, "edit_file(src/**)"),
            (RuleEffect::Deny, "write_file(secrets)"),
        ]);
        let read = |p: &'static str| Subject::Path {
            access: PathAccess::Read,
            path: Path::new(p),
        };
        let edit = |p: &'static str| Subject::Path {
            access: PathAccess::Edit,
            path: Path::new(p),
        };
        assert!(
            set.find(RuleEffect::Deny, &read("/home/u/.ssh/id_rsa"))
                .is_some()
        );
        assert!(set.find(RuleEffect::Deny, &read("/home/u/.sshx")).is_none());
        assert!(
            set.find(RuleEffect::Deny, &edit("/home/u/.ssh/id_rsa"))
                .is_none()
        );
        assert!(set.find(RuleEffect::Ask, &edit("/ws/src/a/b.rs")).is_some());
        assert!(set.find(RuleEffect::Ask, &edit("/ws/tests/a.rs")).is_none());
        // A pattern without wildcards covers what lies beneath it.
        assert!(
            set.find(RuleEffect::Deny, &edit("/ws/secrets/key.pem"))
                .is_some()
        );
    }

    #[test]
    fn tool_rules_match_names() {
        let set = rules(&[
            (RuleEffect::Deny, "mcp__github__delete_repo"),
            (RuleEffect::Ask, "mcp__tracker"),
        ]);
        let tool = |name: &'static str| Subject::Tool {
            name,
            read_only: false,
        };
        assert!(
            set.find(RuleEffect::Deny, &tool("mcp__github__delete_repo"))
                .is_some()
        );
        assert!(
            set.find(RuleEffect::Deny, &tool("mcp__github__delete_repos"))
                .is_none()
        );
        assert!(
            set.find(RuleEffect::Ask, &tool("mcp__tracker__open"))
                .is_some()
        );
        assert!(
            set.find(RuleEffect::Ask, &tool("mcp__trackers__open"))
                .is_none()
        );
    }
}
