//! The shell a command line runs in, chosen once: the user's `shell = [...]`, else `sh -c` on
//! Unix and PowerShell (`pwsh`, else Windows PowerShell) or `cmd /C` on Windows. Named in the
//! system prompt so the model writes commands for it, and shown by `tandem doctor`.

/// Which language a shell speaks, for the model and for what may start without it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// `sh` and its kin (bash, zsh, dash, ksh).
    Posix,
    /// PowerShell 7 (`pwsh`) or Windows PowerShell.
    PowerShell,
    /// Windows' `cmd.exe`.
    Cmd,
    /// Anything else the user configured (fish, nu…).
    Other,
}

/// A shell: its program, the arguments that come before the command line, and its dialect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shell {
    program: String,
    args: Vec<String>,
    dialect: Dialect,
}

/// Commands a POSIX shell runs itself (no program of that name to start), so a line that
/// uses one must go to the shell.
const SHELL_BUILTINS: &[&str] = &[
    ".", ":", "alias", "bg", "bind", "builtin", "cd", "command", "declare", "dirs", "eval", "exec",
    "exit", "export", "fg", "hash", "jobs", "let", "local", "popd", "pushd", "read", "readonly",
    "return", "set", "shift", "source", "trap", "type", "typeset", "ulimit", "umask", "unalias",
    "unset", "wait",
];

impl Shell {
    /// The shell `words` names (a program and the arguments before the line, e.g.
    /// `["bash", "-c"]`); `None` when `words` is empty.
    pub fn configured(words: &[String]) -> Option<Shell> {
        let (program, args) = words.split_first()?;
        Some(Shell {
            program: program.clone(),
            args: args.to_vec(),
            dialect: dialect_of(program),
        })
    }

    /// This system's shell when none is configured.
    pub fn system() -> Shell {
        let (program, args) = super::native::system_shell();
        Shell {
            dialect: dialect_of(&program),
            program,
            args,
        }
    }

    /// The shell's program name: its file name, lower case, without `.exe`.
    pub fn name(&self) -> String {
        base_name(&self.program)
    }

    /// The dialect the shell speaks.
    #[cfg(test)]
    pub(crate) fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// How the system prompt and `tandem doctor` name the shell: its program and
    /// arguments, and what it is.
    pub fn describe(&self) -> String {
        let what = match self.dialect {
            Dialect::Posix => "a POSIX shell",
            Dialect::PowerShell => "PowerShell",
            Dialect::Cmd => "Windows cmd.exe",
            Dialect::Other => "a shell",
        };
        let mut words = vec![self.program.as_str()];
        words.extend(self.args.iter().map(String::as_str));
        format!("{} ({what}; write command lines for it)", words.join(" "))
    }

    /// Where the shell's program is: the path it names, or the first folder of the PATH
    /// that has it. `None` when it cannot be found.
    pub fn locate(&self) -> Option<std::path::PathBuf> {
        let program = std::path::Path::new(&self.program);
        if program.components().count() > 1 {
            return program.is_file().then(|| program.to_path_buf());
        }
        super::paths::on_path(&self.program)
    }

    /// The program and arguments that run `line` in this shell.
    pub fn line(&self, line: &str) -> (String, Vec<String>) {
        let mut args = self.args.clone();
        args.push(line.to_string());
        (self.program.clone(), args)
    }

    /// Builds the command that runs `line` in the shell; the caller adds the directory, the
    /// environment and the pipes.
    pub fn command(&self, line: &str) -> tokio::process::Command {
        let mut command = tokio::process::Command::new(&self.program);
        command.args(&self.args);
        super::native::add_line(&mut command, self.dialect, line);
        command
    }

    /// [`Shell::command`] tied to tandem's life where the system can tie it (Linux: through
    /// `tandem tie`, see ties.rs): what a command outside the sandbox starts does not outlive
    /// tandem, even when tandem is killed.
    pub fn tied_command(&self, line: &str) -> tokio::process::Command {
        #[cfg(target_os = "linux")]
        if super::ties::enabled()
            && let Some(tandem) = own_binary()
        {
            let (program, args) = self.line(line);
            let mut command = tokio::process::Command::new(tandem);
            command.args(["tie", "--"]).arg(program).args(args);
            return command;
        }
        self.command(line)
    }

    /// The program and arguments an editor terminal starts for `line`. Terminal headers
    /// show them as the command line, so for a POSIX shell a plain line (a program and its
    /// arguments, quoted or not) is started as itself: `cargo test --all` reads as that
    /// rather than as a shell with `-c`. A line that needs the shell (pipes, `&&`,
    /// redirections, variables, globs, builtins, several lines) goes to [`Shell::line`], and
    /// so does every line for the other shells, whose commands are mostly their own.
    pub fn terminal_line(&self, line: &str) -> (String, Vec<String>) {
        let needs_shell = line.contains(|c: char| "|&;<>()$`\\*?[]{}~#!\n\r".contains(c));
        if self.dialect == Dialect::Posix
            && !needs_shell
            && let Some(mut words) = shlex::split(line)
            && let Some(program) = words.first()
            && !program.contains('=')
            && !SHELL_BUILTINS.contains(&program.as_str())
        {
            let program = words.remove(0);
            return (program, words);
        }
        self.line(line)
    }
}

/// A program's file name, lower case, without `.exe`.
fn base_name(program: &str) -> String {
    let name = program
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(program)
        .to_ascii_lowercase();
    match name.strip_suffix(".exe") {
        Some(stem) => stem.to_string(),
        None => name,
    }
}

/// The dialect of a shell program, from its file name.
fn dialect_of(program: &str) -> Dialect {
    match base_name(program).as_str() {
        "sh" | "bash" | "dash" | "zsh" | "ksh" | "mksh" | "ash" | "busybox" => Dialect::Posix,
        "pwsh" | "powershell" => Dialect::PowerShell,
        "cmd" => Dialect::Cmd,
        _ => Dialect::Other,
    }
}

/// tandem's own binary, looked up once.
#[cfg(target_os = "linux")]
fn own_binary() -> Option<&'static std::path::Path> {
    static OWN: std::sync::OnceLock<Option<std::path::PathBuf>> = std::sync::OnceLock::new();
    OWN.get_or_init(|| std::env::current_exe().ok()).as_deref()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh() -> Shell {
        Shell::configured(&["sh".to_string(), "-c".to_string()]).unwrap()
    }

    #[test]
    fn plain_lines_start_as_themselves_and_the_rest_in_the_shell() {
        let shell = sh();
        let direct = |line: &str, program: &str, args: &[&str]| {
            assert_eq!(
                shell.terminal_line(line),
                (
                    program.to_string(),
                    args.iter().map(|a| a.to_string()).collect::<Vec<_>>()
                ),
                "{line}"
            );
        };
        direct("cargo test --all", "cargo", &["test", "--all"]);
        direct(
            "git commit -m \"fix the bug\"",
            "git",
            &["commit", "-m", "fix the bug"],
        );
        direct("  ls  ", "ls", &[]);
        for line in [
            "cargo test | tail",
            "make && make install",
            "echo $HOME",
            "ls *.rs",
            "cd src",
            "FOO=1 cargo run",
            "echo 'unclosed",
            "echo hi > out.txt",
            "printf 'a\nb'\nls",
            "",
        ] {
            assert_eq!(shell.terminal_line(line), shell.line(line), "{line}");
        }
    }

    #[test]
    fn a_line_runs_in_the_configured_shell() {
        let (program, args) = sh().line("echo hi && ls");
        assert_eq!(program, "sh");
        assert_eq!(args, ["-c", "echo hi && ls"]);
        let pwsh = Shell::configured(&["C:\\Program Files\\PowerShell\\7\\pwsh.exe".into()]);
        assert_eq!(pwsh.as_ref().map(Shell::dialect), Some(Dialect::PowerShell));
        // Other shells never start a line as a program of its own: `dir` is PowerShell's.
        let pwsh = pwsh.unwrap();
        assert_eq!(pwsh.terminal_line("dir").0, pwsh.line("dir").0);
        assert_eq!(Shell::configured(&[]), None);
        assert_eq!(
            Shell::configured(&["fish".into(), "-c".into()]).map(|s| s.dialect()),
            Some(Dialect::Other)
        );
    }

    #[test]
    fn the_system_shell_is_found() {
        assert!(Shell::system().locate().is_some());
        let missing = Shell::configured(&["no-such-shell-anywhere".into()]).unwrap();
        assert_eq!(missing.locate(), None);
    }

    #[test]
    fn the_system_shell_is_named_for_the_model() {
        let described = Shell::system().describe();
        if cfg!(unix) {
            assert_eq!(
                described,
                "sh -c (a POSIX shell; write command lines for it)"
            );
        } else {
            assert!(described.contains("PowerShell") || described.contains("cmd"));
        }
    }
}
