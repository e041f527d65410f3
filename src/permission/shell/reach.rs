//! What a command line may run beyond its own simple commands, for deny and ask rules.
//!
//! Over-approximates on purpose: a deny rule had better refuse too much than too little.
//! Where the line may run something no walk can name (a hazard that
//! [hides commands](super::Hazard::hides_commands), a command string nested too deeply), the
//! answer holds [`anything`]: a command whose one word is not a literal, which a rule's
//! words may always match.

use super::{CommandLine, SimpleCommand, Word, parse, programs};

/// How many wrappers deep [`reachable`] looks into command strings; deeper is [`anything`].
const MAX_UNWRAP: usize = 8;

/// Most commands [`reachable`] lists for one line before it answers [`anything`] instead
/// (a hostile line of nested wrappers must not take long to judge).
const MAX_REACHED: usize = 4096;

/// The placeholder word of [`anything`].
pub const ANYTHING: &str = "…";

/// A command that stands for anything: a rule's words may always match it.
pub fn anything(source: &str) -> SimpleCommand {
    SimpleCommand {
        words: vec![Word {
            text: ANYTHING.to_string(),
            literal: false,
        }],
        assignments: 0,
        source: source.to_string(),
    }
}

/// Programs that add words read from their input to the command they run.
const APPENDING: &[&str] = &["xargs", "parallel"];

/// Every command `line` may run, as far as can be seen: its simple commands; for a program
/// that runs code from its arguments, what those arguments would run (`sudo git push` may
/// run `git push`, so may `sh -c 'git push'`, and `echo push | xargs git` may run `git`
/// with any words after it); and [`anything`] when part of the line cannot be seen.
pub fn reachable(line: &CommandLine) -> Vec<SimpleCommand> {
    let mut reach = Reach {
        out: Vec::new(),
        cut: false,
    };
    if let Some(hazard) = line.hazards.iter().find(|h| h.hides_commands()) {
        reach.out.push(anything(&hazard.to_string()));
    }
    for command in &line.commands {
        reach.unwrap(command, 0);
    }
    reach.out
}

struct Reach {
    out: Vec<SimpleCommand>,
    /// Whether [`MAX_REACHED`] was hit (and [`anything`] added).
    cut: bool,
}

impl Reach {
    fn full(&mut self, source: &str) -> bool {
        if self.out.len() < MAX_REACHED {
            return false;
        }
        if !self.cut {
            self.cut = true;
            self.out.push(anything(source));
        }
        true
    }

    fn unwrap(&mut self, command: &SimpleCommand, depth: usize) {
        if self.full(&command.source) {
            return;
        }
        self.variants(command);
        let Some(super::Hazard::RunsCode(name)) = programs::judge(command) else {
            return;
        };
        if depth >= MAX_UNWRAP {
            self.out.push(anything(&command.source));
            return;
        }
        let args = command.arguments();
        let appends = APPENDING.contains(&name.as_str());
        for (i, arg) in args.iter().enumerate() {
            // Whatever follows the wrapper's own options may be the command it runs.
            let mut words = args[i..].to_vec();
            if appends {
                words.push(Word {
                    text: ANYTHING.to_string(),
                    literal: false,
                });
            }
            let rest = SimpleCommand {
                words,
                assignments: 0,
                source: command.source.clone(),
            };
            self.unwrap(&rest, depth + 1);
            // A command string (`sh -c 'a; b'`, `eval "…"`, `su -c 'git${IFS}push'`).
            if arg.literal {
                let inner = parse(&arg.text);
                if let Some(hazard) = inner.hazards.iter().find(|h| h.hides_commands()) {
                    self.out.push(anything(&hazard.to_string()));
                }
                for nested in &inner.commands {
                    self.unwrap(nested, depth + 1);
                }
            }
            if self.full(&command.source) {
                return;
            }
        }
    }

    /// `command`, and the same command without its assignments (`X=1 git push`) and named
    /// by its program's base name (`/usr/bin/git push`).
    fn variants(&mut self, command: &SimpleCommand) {
        self.out.push(command.clone());
        let bare = command.words.get(command.assignments..).unwrap_or(&[]);
        if let Some((program, args)) = bare.split_first() {
            let base = program
                .text
                .rsplit(['/', '\\'])
                .next()
                .unwrap_or(&program.text);
            let mut words = vec![Word {
                text: base.to_string(),
                literal: program.literal,
            }];
            words.extend_from_slice(args);
            if words.as_slice() != command.words.as_slice() {
                self.out.push(SimpleCommand {
                    words,
                    assignments: 0,
                    source: command.source.clone(),
                });
            }
        }
    }
}
