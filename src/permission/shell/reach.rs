//! What a command line may run beyond its own simple commands, for deny and ask rules.

use super::{CommandLine, Hazard, SimpleCommand, Word, parse, programs};

/// Every command `line` may run, as far as can be seen, for deny and ask rules: its simple
/// commands and, for a program that runs code from its arguments, what those arguments
/// would run (`sudo git push` may run `git push`; so may `sh -c 'git push'`). This
/// over-approximates on purpose: a deny rule had better refuse too much than too little.
pub fn reachable(line: &CommandLine) -> Vec<SimpleCommand> {
    let mut out = Vec::new();
    for command in &line.commands {
        unwrap(command, 0, &mut out);
    }
    out
}

/// How many wrappers deep [`reachable`] looks into command strings.
const MAX_UNWRAP: usize = 3;

fn unwrap(command: &SimpleCommand, depth: usize, out: &mut Vec<SimpleCommand>) {
    variants(command, out);
    if depth >= MAX_UNWRAP || !matches!(programs::judge(command), Some(Hazard::RunsCode(_))) {
        return;
    }
    let args = command.arguments();
    for (i, arg) in args.iter().enumerate() {
        // Whatever follows the wrapper's own options may be the command it runs.
        let rest = SimpleCommand {
            words: args[i..].to_vec(),
            assignments: 0,
            source: command.source.clone(),
        };
        variants(&rest, out);
        // A quoted command string (`sh -c 'a; b'`, `eval "…"`).
        if arg.literal && arg.text.contains(char::is_whitespace) {
            for inner in parse(&arg.text).commands {
                unwrap(&inner, depth + 1, out);
            }
        }
    }
}

/// `command`, and the same command without its assignments (`X=1 git push`) and named by
/// its program's base name (`/usr/bin/git push`).
fn variants(command: &SimpleCommand, out: &mut Vec<SimpleCommand>) {
    out.push(command.clone());
    let bare = command.words.get(command.assignments..).unwrap_or(&[]);
    if let Some((program, args)) = bare.split_first() {
        let base = program.text.rsplit('/').next().unwrap_or(&program.text);
        let mut words = vec![Word {
            text: base.to_string(),
            literal: program.literal,
        }];
        words.extend_from_slice(args);
        if words.as_slice() != command.words.as_slice() {
            out.push(SimpleCommand {
                words,
                assignments: 0,
                source: command.source.clone(),
            });
        }
    }
}
