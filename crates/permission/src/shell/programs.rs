//! Programs whose arguments are themselves code: wrappers that run another command, shells
//! given a command string, interpreters reading their program from stdin. A grant on their
//! words would say nothing about what they run, so they are never approved ahead of time.

use super::{Hazard, SimpleCommand};

/// Run the command in their arguments (`sudo git push`, `xargs rm`, `timeout 5 make`).
const WRAPPERS: &[&str] = &[
    "sudo",
    "doas",
    "su",
    "runuser",
    "pkexec",
    "env",
    "xargs",
    "nohup",
    "timeout",
    "gtimeout",
    "time",
    "nice",
    "ionice",
    "stdbuf",
    "setsid",
    "chroot",
    "unshare",
    "nsenter",
    "watch",
    "strace",
    "ltrace",
    "flock",
    "parallel",
    "script",
    "fakeroot",
    "busybox",
    "caffeinate",
    "chrt",
    "taskset",
    "systemd-run",
    "firejail",
    "coproc",
    "prlimit",
    "setarch",
    "linux32",
    "linux64",
    "setpriv",
    "choom",
    "ssh-agent",
    "numactl",
    "cpulimit",
    "chpst",
    "sg",
    "dbus-launch",
    "xvfb-run",
    "valgrind",
    "torsocks",
    "proxychains",
    "proxychains4",
    "bwrap",
    "unbuffer",
    "rlwrap",
    "catchsegv",
    "eatmydata",
    "fakechroot",
    "trickle",
    "sshpass",
    "schroot",
];

/// Run their arguments as shell code in this shell (or, `enable -f`, load it).
const BUILTINS: &[&str] = &[
    "eval", "exec", "source", ".", "trap", "builtin", "command", "enable", "fc", "complete",
    "compgen", "bind",
];

/// bash builtins that assign to a variable named in their arguments: a name with an array
/// subscript (`a[$(…)]`) is evaluated as arithmetic, which runs what it holds.
const ASSIGNING: &[&str] = &["printf", "read", "mapfile", "readarray", "getopts", "wait"];

/// Shells: `-c` runs a string; without a script they read commands from stdin.
const SHELLS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "posh", "fish", "csh", "tcsh",
];

/// Interpreters that read their program from stdin when given no script.
const INTERPRETERS: &[&str] = &[
    "node",
    "nodejs",
    "deno",
    "bun",
    "perl",
    "ruby",
    "php",
    "lua",
    "luajit",
    "rscript",
    "osascript",
    "pwsh",
    "powershell",
    "tclsh",
    "wish",
    "irb",
    "ipython",
    "julia",
    "awk",
    "gawk",
    "mawk",
    "nawk",
];

/// `find` options that run a command for each file, delete files or write them.
const FIND_EXEC: &[&str] = &[
    "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls",
];

/// Why `command` can never be approved ahead of time, if it cannot (git's own options are
/// judged by [`super::git::hazard`]).
pub(crate) fn judge(command: &SimpleCommand) -> Option<Hazard> {
    let Some(program) = command.program() else {
        return Some(Hazard::Variables(command.source.clone()));
    };
    if !program.literal {
        return Some(Hazard::NotLiteral(program.text.clone()));
    }
    let name = base_name(&program.text);
    let args = command.arguments();
    let runs_code = || Some(Hazard::RunsCode(name.clone()));
    if name == "command" && matches!(args.first().map(|w| w.text.as_str()), Some("-v" | "-V")) {
        return None;
    }
    if BUILTINS.contains(&name.as_str()) {
        return runs_code();
    }
    if let Some(hazard) = evaluates(&name, command) {
        return Some(hazard);
    }
    if name == "alias" && args.iter().any(|w| !w.literal || w.text.contains('=')) {
        return Some(Hazard::Defines(command.source.clone()));
    }
    // `hash -p PATH NAME` (also in a cluster: `-rp`, `-dp`) makes NAME run PATH.
    if name == "hash" && !args.is_empty() {
        return Some(Hazard::Defines(command.source.clone()));
    }
    if name == "env" {
        // `env` alone prints the environment; with a command or assignments it runs one.
        return args
            .iter()
            .any(|w| !w.text.starts_with('-'))
            .then_some(Hazard::RunsCode(name));
    }
    if WRAPPERS.contains(&name.as_str()) {
        return runs_code();
    }
    if name == "find" && args.iter().any(|w| FIND_EXEC.contains(&w.text.as_str())) {
        return runs_code();
    }
    let shell = SHELLS.contains(&name.as_str());
    if shell && args.iter().any(|w| is_command_flag(&w.text)) {
        return runs_code();
    }
    if shell || is_python(&name) || INTERPRETERS.contains(&name.as_str()) {
        return reads_stdin(shell, args).then_some(Hazard::Stdin(name));
    }
    None
}

/// Why `command` (named `name`) makes bash evaluate text as code, if it does: `let`; a test
/// with an arithmetic operator or an operator made by a pattern (`-[v]`); a builtin
/// assigning to a subscripted or computed name (`printf -v "$n"`, `read 'a[…]'`), or to a
/// prompt (`read PS4`); `set -x` (which expands `PS4`); `mapfile -C` (runs a callback).
fn evaluates(name: &str, command: &SimpleCommand) -> Option<Hazard> {
    let args = command.arguments();
    let test = matches!(name, "test" | "[")
        && (super::constructs::arithmetic_test(args.iter().map(|w| w.text.as_str()))
            || args.iter().any(|w| !w.literal && w.text.starts_with('-')));
    let assigns = ASSIGNING.contains(&name)
        && args.iter().any(|w| {
            !w.literal
                || w.text.contains('[')
                || super::constructs::PROMPTS.contains(&w.text.as_str())
        });
    let traces = name == "set"
        && args.iter().any(|w| {
            w.text == "xtrace" || (w.text.starts_with(['-', '+']) && w.text.contains('x'))
        });
    let callback = matches!(name, "mapfile" | "readarray")
        && args
            .iter()
            .any(|w| w.text.starts_with('-') && w.text.contains('C'));
    (name == "let" || test || assigns || traces || callback)
        .then(|| Hazard::Evaluates(command.source.clone()))
}

/// Whether `name` is a shell (whose program from stdin is shell code tandem cannot see).
pub(crate) fn is_shell(name: &str) -> bool {
    SHELLS.contains(&name)
}

/// The program's name without its folder and, on Windows, its `.exe`, in lower case where
/// the file system ignores case.
pub(crate) fn base_name(program: &str) -> String {
    let name = program.rsplit(['/', '\\']).next().unwrap_or(program);
    let lower = name.to_ascii_lowercase();
    match lower.strip_suffix(".exe") {
        Some(stem) => stem.to_string(),
        None => lower,
    }
}

/// `python`, `python3`, `python3.12`, `pypy3`.
fn is_python(name: &str) -> bool {
    ["python", "pypy"].iter().any(|stem| {
        name.strip_prefix(stem)
            .is_some_and(|rest| rest.chars().all(|c| c.is_ascii_digit() || c == '.'))
    })
}

/// `-c`, `-lc`, `-ec`, `--command`, `-Command` (PowerShell).
fn is_command_flag(word: &str) -> bool {
    match word.strip_prefix("--") {
        Some(long) => long == "command",
        None => word.strip_prefix('-').is_some_and(|short| {
            short.eq_ignore_ascii_case("command")
                || (!short.is_empty()
                    && short.chars().all(|c| c.is_ascii_alphabetic())
                    && short.contains('c'))
        }),
    }
}

/// Whether an interpreter given `args` takes its program from stdin: no script operand, a
/// `-` operand, or a shell's `-s`. `--version` and `--help` alone read nothing.
fn reads_stdin(shell: bool, args: &[super::Word]) -> bool {
    if let [only] = args
        && matches!(only.text.as_str(), "--version" | "--help" | "-V" | "-h")
    {
        return false;
    }
    let mut operands = args
        .iter()
        .filter(|w| !w.text.starts_with('-') || w.text == "-");
    let stdin_flag = shell && args.iter().any(|w| w.text == "-s");
    match operands.next() {
        None => true,
        Some(first) => first.text == "-" || stdin_flag,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_flags() {
        assert_eq!(base_name("/usr/bin/Bash.EXE"), "bash");
        assert!(is_python("python3.12") && is_python("python") && !is_python("pythonista"));
        for flag in ["-c", "-lc", "-ec", "--command", "-Command"] {
            assert!(is_command_flag(flag), "{flag}");
        }
        for flag in ["-l", "--norc", "-e", "--", "-"] {
            assert!(!is_command_flag(flag), "{flag}");
        }
    }
}
