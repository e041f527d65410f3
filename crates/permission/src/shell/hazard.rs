//! Why a command line can never be approved ahead of time, in words for the user, and which
//! of those reasons leave commands the walk cannot see.

use std::fmt;

use super::{one_line, programs};

/// Something in a command line that no grant or allow rule may approve ahead of time.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Hazard {
    /// The grammar could not parse the line.
    Unparsable,
    /// A command, process or arithmetic substitution (its source).
    Substitution(String),
    /// Output written to a file (the redirection's source).
    Redirect(String),
    /// A program that runs code given in its arguments (`eval`, `sh -c`, `sudo`, `xargs`).
    RunsCode(String),
    /// An interpreter reading its program from stdin (a pipe or a here-document).
    Stdin(String),
    /// Shell variables or functions defined (the source).
    Variables(String),
    /// A command name that is not a literal word.
    NotLiteral(String),
    /// A construct the walk does not know (its grammar name).
    Construct(String),
    /// Nesting deeper than tandem judges.
    TooDeep,
    /// Text the grammar and the shell would split differently (what it is).
    Lexical(String),
    /// A construct bash and the POSIX `sh` read differently (what it is); the judge names
    /// what either shell runs.
    Divergence(String),
    /// Quoting bash and the POSIX `sh` end in different places (`$'…'`), so the two may run
    /// different commands, which the judge cannot both name (what it is).
    Quoting(String),
    /// Text bash evaluates as code where it does not look like a command: arithmetic
    /// (`let`, `$(( ))`, array subscripts) and the expansions beyond `${NAME}` (its source).
    Evaluates(String),
    /// It defines what a command name runs (`alias`, `hash -p`; the source).
    Defines(String),
    /// The session's shell is one whose grammar tandem does not read, and the line is more
    /// than plain words (the shell's name).
    Foreign(String),
    /// It sets a variable that decides which programs run or where they read their settings
    /// (its name).
    Environment(String),
    /// No command at all.
    Empty,
}

impl Hazard {
    /// Whether the line may run commands the walk cannot see: no deny rule can be proven to
    /// hold for it. Substitutions, redirections and wrappers are visible (their commands are
    /// collected or unwrapped); a shell reading its program from a pipe is not.
    pub(crate) fn hides_commands(&self) -> bool {
        match self {
            // Arithmetic on numbers alone (`$((1 + 2))`) evaluates nothing hidden.
            Hazard::Evaluates(source) => !numeric(source),
            Hazard::Unparsable
            | Hazard::NotLiteral(_)
            | Hazard::Construct(_)
            | Hazard::TooDeep
            | Hazard::Lexical(_)
            | Hazard::Defines(_)
            | Hazard::Quoting(_)
            | Hazard::Foreign(_)
            | Hazard::Environment(_) => true,
            // What sh reads differently is named by the judge both ways (`&>`'s trailing words
            // are a command of their own too).
            Hazard::Divergence(_) => false,
            Hazard::Stdin(program) => programs::is_shell(program),
            Hazard::Substitution(_)
            | Hazard::Redirect(_)
            | Hazard::RunsCode(_)
            | Hazard::Variables(_)
            | Hazard::Empty => false,
        }
    }
}

impl fmt::Display for Hazard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Hazard::Unparsable => f.write_str("the command line cannot be parsed"),
            Hazard::Substitution(s) => write!(f, "`{}` is a substitution", short(s)),
            Hazard::Redirect(s) => write!(f, "`{}` writes to a file", short(s)),
            Hazard::RunsCode(p) => write!(f, "`{p}` runs code given in its arguments"),
            Hazard::Stdin(p) => write!(f, "`{p}` reads a program from its input"),
            Hazard::Variables(s) => write!(f, "`{}` sets shell variables or functions", short(s)),
            Hazard::NotLiteral(s) => write!(f, "the command name `{}` is computed", short(s)),
            Hazard::Construct(kind) => write!(
                f,
                "it uses a shell construct ({kind}) tandem does not judge"
            ),
            Hazard::TooDeep => f.write_str("it is nested too deeply to judge"),
            Hazard::Lexical(what) => write!(f, "it contains {what}, which tandem does not judge"),
            Hazard::Divergence(what) | Hazard::Quoting(what) => write!(
                f,
                "it uses {what}, which bash and sh read differently (commands run with `sh -c`)"
            ),
            Hazard::Evaluates(s) => write!(
                f,
                "`{}` makes bash evaluate text as code, which tandem cannot see",
                short(s)
            ),
            Hazard::Defines(s) => write!(f, "`{}` defines what a command name runs", short(s)),
            Hazard::Environment(name) => write!(
                f,
                "it sets `{name}`, which decides which programs run or where they read their settings"
            ),
            Hazard::Foreign(shell) => write!(
                f,
                "commands run in {shell}, and tandem reads only plain lines for it (words of letters, digits and `-_./:=+,@`)"
            ),
            Hazard::Empty => f.write_str("it names no command"),
        }
    }
}

/// Whether `source` is arithmetic on numbers only: `$(( … ))` or `(( … ))` around digits,
/// blanks and operators.
fn numeric(source: &str) -> bool {
    let inner = source
        .strip_prefix("$((")
        .or_else(|| source.strip_prefix("(("))
        .and_then(|s| s.strip_suffix("))"));
    inner.is_some_and(|s| {
        s.chars()
            .all(|c| c.is_ascii_digit() || c.is_whitespace() || "+-*/%()<>=!&|^~?:,".contains(c))
    })
}

/// At most 60 characters of `s`, on one line.
fn short(s: &str) -> String {
    one_line(s, 60)
}
