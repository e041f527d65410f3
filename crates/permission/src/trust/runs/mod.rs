//! What a project's MCP server definition will run, as far as tandem can tell without
//! running it: the files whose content decides the code that starts (the entry a runner
//! picks, the manifest that selects it, files loaded before it), and, in words, what tandem
//! cannot cover. The trust fingerprint hashes these files (declared.rs), so a change to any
//! of them is a new definition that is asked about again.
//!
//! Runners known here, each with the files it picks (relative paths mean the server's
//! folder, the project):
//! - `python`/`python3`/`python3.X` (python.rs): a script; a folder's `__main__.py`; for
//!   `-m pkg.mod`, each package's `__init__` and the module file (`pkg/mod.py`, or the
//!   package's `__init__` and `__main__`) found in the server's folder, then in the folders of
//!   a `PYTHONPATH` the definition sets (the folder is not searched with `-I`/`-P` or
//!   `PYTHONSAFEPATH`), in Python's order (a package, then an extension module, `.py`,
//!   `.pyc`); a module found nowhere there comes from Python's own library or installed
//!   packages, which are not hashed.
//! - `uv run` (python.rs): the script or module as for Python, the project's
//!   `pyproject.toml` and `uv.lock`, a `--with-requirements` or `--env-file` file, a program
//!   of the project's `.venv`; packages from an index (`--with`, the lock) are not hashed.
//! - `node` (node.rs): a file (`x`, `x.js`, `x.json`, `x.node`), or a folder's
//!   `package.json` and its `main` (else `index.js`); files preloaded with `-r`/`--import`
//!   (also in a `NODE_OPTIONS` the definition sets) and an `--env-file`.
//! - `npx` (node.rs): a local folder's (`./x`, `file:x`) or the project's `node_modules`
//!   copy's `package.json` and its `bin` (else `main`, else `index.js`), and the project's
//!   `.npmrc`; a package from the npm registry is not hashed.
//! - `deno run` and `bun` (node.rs): the script, and the config the runner reads by itself
//!   (`deno.json`, `bunfig.toml`), a preload, an `--env-file`; a URL or `jsr:`/`npm:` entry
//!   is not hashed.
//! - `sh`/`bash`/`dash`/`zsh`/`ksh` (here): the script, a `BASH_ENV` file; for `-c`, the
//!   command when it is one simple command, resolved again.
//! - `env NAME=VALUE … program`: the program, resolved again.
//! - any other program: itself when it is a file in the project (found by its path, or in a
//!   `PATH` the definition sets); when its first line is an interpreter line (`#!`), the
//!   interpreter named there is noted and resolved again with the script. A program outside
//!   the project (`/usr/bin/tool`, a name found on your PATH) is not hashed, and tandem cannot
//!   tell which files it runs.
//!
//! Not hashed anywhere: the runners themselves (python3, node, uv), code the entry files load
//! in turn (imports, `require`, dependencies), and caches a runner writes itself
//! (`__pycache__`).

mod node;
mod python;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::config::ServerSpec;

/// How deep `env`, interpreter lines and wrappers may nest before tandem stops following.
const MAX_DEPTH: u8 = 6;

/// What a definition runs, as far as tandem can tell.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Runs {
    /// The files whose content decides what runs (canonical paths, each once), with what each
    /// is for.
    pub(crate) files: Vec<Covered>,
    /// What the files do not cover, one sentence each for people.
    pub(crate) uncovered: Vec<String>,
}

/// One file the trust check covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Covered {
    /// Its canonical path.
    pub(crate) path: PathBuf,
    /// What it is, for people: "the script", "the folder's package.json".
    pub(crate) what: String,
}

/// What `spec` runs: the files resolved for its runner and any argument that names a file
/// in the project, and what they do not cover. A definition without a command (a URL), or
/// without a folder of its own (not a project's), runs nothing here.
pub(crate) fn resolve(spec: &ServerSpec) -> Runs {
    let (Some(command), Some(declared)) = (&spec.command, &spec.cwd) else {
        return Runs::default();
    };
    let project = crate::platform::canonical(declared).unwrap_or_else(|_| declared.clone());
    let mut cx = Cx {
        dir: project.clone(),
        project,
        env: spec.env.clone(),
        runs: Runs::default(),
        depth: 0,
    };
    let mut words = vec![command.to_string_lossy().into_owned()];
    words.extend(spec.args.iter().cloned());
    cx.program(&words);
    // Any argument (or the program) that names a file of the project: a config file the
    // server reads, a script a runner not known here runs.
    for word in &words {
        let path = cx.project.join(word);
        if cx.inside(&path) {
            cx.cover(&path, "named in the definition");
        }
    }
    cx.runs
}

/// The state of one resolution: where relative paths point, the environment the server gets
/// from its definition, and what was found so far.
struct Cx {
    /// The folder relative paths mean (the server's; `uv run --directory` moves it).
    dir: PathBuf,
    /// The project (the server's folder as declared, canonical).
    project: PathBuf,
    /// The variables the definition sets (`env NAME=VALUE` adds to them).
    env: HashMap<String, String>,
    runs: Runs,
    depth: u8,
}

impl Cx {
    /// `word` as the path it names: relative ones mean [`Cx::dir`].
    fn local(&self, word: &str) -> PathBuf {
        self.dir.join(word)
    }

    /// Whether `path` is a file inside the project.
    fn inside(&self, path: &Path) -> bool {
        crate::platform::canonical(path).is_ok_and(|real| {
            real.is_file() && crate::platform::same_or_inside(&real, &self.project)
        })
    }

    /// Covers the file at `path` when there is one; whether there was.
    fn cover(&mut self, path: &Path, what: &str) -> bool {
        let Ok(real) = crate::platform::canonical(path) else {
            return false;
        };
        if !real.is_file() {
            return false;
        }
        if !self.runs.files.iter().any(|c| c.path == real) {
            self.runs.files.push(Covered {
                path: real,
                what: what.to_string(),
            });
        }
        true
    }

    /// Covers the file `word` names, or says that it names none.
    fn cover_named(&mut self, word: &str, what: &str) {
        let path = self.local(word);
        if !self.cover(&path, what) {
            self.note(format!(
                "`{word}` ({what}) is not a file tandem can find, so nothing there is hashed"
            ));
        }
    }

    /// Records what is not covered (each sentence once).
    fn note(&mut self, text: String) {
        if !self.runs.uncovered.contains(&text) {
            self.runs.uncovered.push(text);
        }
    }

    /// The note for a program whose files tandem cannot tell.
    fn unknown(&mut self, words: &[String]) {
        let line = shown(words);
        self.note(format!(
            "tandem cannot tell which files `{line}` runs; a change to them will not be asked about again"
        ));
    }

    /// Resolves `words` (a program and its arguments).
    fn program(&mut self, words: &[String]) {
        let Some(program) = words.first() else {
            return;
        };
        let args = &words[1..];
        if self.depth >= MAX_DEPTH {
            self.unknown(words);
            return;
        }
        self.depth += 1;
        let located = self.locate(program);
        // A runner inside the project (a `.venv/bin/python` that is a real file, a planted
        // `node`) is the project's code too.
        if let Some(path) = &located
            && self.inside(path)
        {
            self.cover(path, "the program");
        }
        match runner(program).as_str() {
            name if python::is_python(name) => python::python(self, args),
            "uv" => python::uv(self, args),
            "uvx" => python::uvx(self, args),
            "node" | "nodejs" => node::node(self, args),
            "npx" => node::npx(self, args),
            "deno" => node::deno(self, args),
            "bun" => node::bun(self, args),
            "sh" | "bash" | "dash" | "zsh" | "ksh" => self.shell(args),
            "env" => self.env_wrapper(args),
            _ => self.other(words, located),
        }
        self.depth -= 1;
    }

    /// A program no runner here knows: covered when it is the project's file, followed
    /// through its interpreter line.
    fn other(&mut self, words: &[String], located: Option<PathBuf>) {
        let Some(path) = located.filter(|p| self.inside(p)) else {
            self.unknown(words);
            return;
        };
        let Some(line) = interpreter_line(&path) else {
            // A program of the project's own (covered above): what it loads is not known.
            return;
        };
        let mut interpreter = interpreter_words(&line);
        if interpreter.is_empty() {
            return;
        }
        self.note(format!(
            "`{}` is run by `{line}` (its first line); that program itself is not hashed",
            shown(&words[..1])
        ));
        interpreter.push(path.to_string_lossy().into_owned());
        interpreter.extend(words[1..].iter().cloned());
        self.program(&interpreter);
    }

    /// Where the program `word` is: a path (relative to the server's folder), or a name looked
    /// up in the `PATH` the definition sets, else in tandem's own.
    fn locate(&self, word: &str) -> Option<PathBuf> {
        let named = Path::new(word);
        if named.components().count() > 1 || named.is_absolute() {
            let path = self.local(word);
            return path.is_file().then_some(path);
        }
        match self.env.get("PATH") {
            Some(dirs) => std::env::split_paths(dirs).find_map(|dir| {
                let path = self.dir.join(dir).join(word);
                path.is_file().then_some(path)
            }),
            None => crate::platform::on_path(word),
        }
    }

    /// `sh`/`bash …`: a script, or a `-c` command.
    fn shell(&mut self, args: &[String]) {
        if let Some(file) = self.env.get("BASH_ENV").cloned() {
            self.cover_named(&file, "the BASH_ENV file the shell reads first");
        }
        let mut rest = args.iter();
        while let Some(arg) = rest.next() {
            match arg.as_str() {
                "--" => break,
                "-o" | "+o" | "-O" | "+O" | "--rcfile" | "--init-file" => {
                    rest.next();
                }
                a if a.starts_with('-') || a.starts_with('+') => {
                    let flags = a.trim_start_matches(['-', '+']);
                    if flags.contains('c') && !a.starts_with("--") {
                        match rest.next() {
                            Some(command) => self.shell_command(command),
                            None => self.unknown(args),
                        }
                        return;
                    }
                    if flags.contains('s') && !a.starts_with("--") {
                        self.note("the shell reads its commands from its input; tandem cannot tell what runs".into());
                        return;
                    }
                }
                script => {
                    self.cover_named(script, "the shell script");
                    return;
                }
            }
        }
        match rest.next() {
            Some(script) => self.cover_named(script, "the shell script"),
            None => self.note(
                "the shell reads its commands from its input; tandem cannot tell what runs".into(),
            ),
        }
    }

    /// A shell command line (`sh -c`, a package.json script): followed when it is one simple
    /// command without expansions, else noted.
    fn shell_command(&mut self, line: &str) {
        const SPECIAL: &[char] = &[
            ';', '&', '|', '<', '>', '$', '`', '(', ')', '{', '}', '*', '?', '[', ']', '~', '!',
            '#', '\n',
        ];
        let words = match line.contains(SPECIAL) {
            true => None,
            false => shlex::split(line),
        };
        let Some(mut words) = words.filter(|w| !w.is_empty()) else {
            self.note(format!(
                "tandem cannot tell which files the shell command `{line}` runs; a change to them will not be asked about again"
            ));
            return;
        };
        if words[0] == "exec" {
            words.remove(0);
        }
        self.program(&words);
    }

    /// `env [-i] [-u NAME] [NAME=VALUE]… program args`.
    fn env_wrapper(&mut self, args: &[String]) {
        let mut rest = args.iter().enumerate();
        while let Some((at, arg)) = rest.next() {
            match arg.as_str() {
                "-u" | "--unset" | "-C" | "--chdir" => {
                    rest.next();
                }
                "-S" | "--split-string" => {
                    let Some((_, line)) = rest.next() else { return };
                    let mut words = shlex::split(line).unwrap_or_default();
                    words.extend(args[at + 2..].iter().cloned());
                    self.program(&words);
                    return;
                }
                a if a.starts_with('-') => {}
                a if a.contains('=') => {
                    if let Some((name, value)) = a.split_once('=') {
                        self.env.insert(name.to_string(), value.to_string());
                    }
                }
                _ => {
                    self.program(&args[at..]);
                    return;
                }
            }
        }
    }
}

/// The name a runner goes by: the program's file name without a Windows suffix.
fn runner(program: &str) -> String {
    let name = Path::new(program)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let lower = name.to_ascii_lowercase();
    for suffix in [".exe", ".cmd", ".bat"] {
        if let Some(stem) = lower.strip_suffix(suffix) {
            return stem.to_string();
        }
    }
    name
}

/// The first line of `path` without `#!`, when it starts with one.
fn interpreter_line(path: &Path) -> Option<String> {
    use std::io::Read;
    let mut head = [0u8; 512];
    let mut file = std::fs::File::open(path).ok()?;
    let n = file.read(&mut head).ok()?;
    let text = String::from_utf8_lossy(&head[..n]);
    let line = text.strip_prefix("#!")?.lines().next()?.trim();
    Some(line.to_string())
}

/// The program and arguments of an interpreter line, `env` (with `-S`) taken off.
fn interpreter_words(line: &str) -> Vec<String> {
    let mut words: Vec<String> = line.split_whitespace().map(String::from).collect();
    if words.first().is_some_and(|w| runner(w) == "env") {
        words.remove(0);
        while words.first().is_some_and(|w| w.starts_with('-')) {
            words.remove(0);
        }
    }
    words
}

/// Words as a person reads them (a shell would need them quoted so).
fn shown(words: &[String]) -> String {
    words
        .iter()
        .map(|w| {
            shlex::try_quote(w)
                .map(|q| q.into_owned())
                .unwrap_or_else(|_| format!("{w:?}"))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The value of an option: the rest of `--opt=value`, or the next argument.
fn value<'a>(
    inline: Option<&'a str>,
    rest: &mut impl Iterator<Item = &'a String>,
) -> Option<&'a str> {
    inline.or_else(|| rest.next().map(String::as_str))
}

/// `--opt=value` split into the option and its value.
fn split_option(arg: &str) -> (&str, Option<&str>) {
    match arg.split_once('=') {
        Some((opt, value)) if opt.starts_with("--") => (opt, Some(value)),
        _ => (arg, None),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A project folder with `files` (path, content) written in it.
    pub(crate) fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        dir
    }

    /// What `command args` runs in `dir`, with `env`.
    pub(crate) fn runs_with(dir: &Path, words: &[&str], env: &[(&str, &str)]) -> Runs {
        let mut spec = ServerSpec::local(
            "s".into(),
            words[0].into(),
            words[1..].iter().map(|w| w.to_string()).collect(),
            env.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        );
        spec.cwd = Some(dir.to_path_buf());
        resolve(&spec)
    }

    /// The covered files of `runs`, relative to `dir`.
    pub(crate) fn covered(dir: &Path, runs: &Runs) -> Vec<String> {
        let root = crate::platform::canonical(dir).unwrap();
        runs.files
            .iter()
            .map(|c| {
                c.path
                    .strip_prefix(&root)
                    .map(|p| p.to_string_lossy().replace('\\', "/"))
                    .unwrap_or_else(|_| c.path.display().to_string())
            })
            .collect()
    }

    /// The covered files of `words` run in `dir`.
    pub(crate) fn files(dir: &Path, words: &[&str]) -> Vec<String> {
        covered(dir, &runs_with(dir, words, &[]))
    }

    #[test]
    fn a_shell_script_and_its_bash_env_are_covered() {
        let dir = project(&[("tools/mcp.sh", "exec x"), ("env.sh", "")]);
        for shell in ["sh", "bash", "/bin/dash"] {
            assert_eq!(
                files(dir.path(), &[shell, "tools/mcp.sh"]),
                ["tools/mcp.sh"]
            );
            assert_eq!(
                files(
                    dir.path(),
                    &[shell, "-e", "-o", "pipefail", "tools/mcp.sh", "a"]
                ),
                ["tools/mcp.sh"]
            );
        }
        let runs = runs_with(
            dir.path(),
            &["bash", "tools/mcp.sh"],
            &[("BASH_ENV", "env.sh")],
        );
        assert_eq!(covered(dir.path(), &runs), ["env.sh", "tools/mcp.sh"]);
    }

    #[test]
    fn a_simple_shell_command_is_followed_and_any_other_is_named() {
        let dir = project(&[("srv/__main__.py", "")]);
        let runs = runs_with(dir.path(), &["sh", "-c", "exec python3 -m srv"], &[]);
        assert_eq!(covered(dir.path(), &runs), ["srv/__main__.py"]);
        let runs = runs_with(dir.path(), &["sh", "-c", "cd x && ./run"], &[]);
        assert!(runs.files.is_empty());
        assert!(
            runs.uncovered[0].contains("cannot tell which files the shell command `cd x && ./run`"),
            "{runs:?}"
        );
    }

    #[test]
    fn a_script_run_directly_is_covered_and_its_interpreter_followed() {
        let dir = project(&[
            ("tools/serve", "#!/usr/bin/env python3\nimport x\n"),
            ("tools/plain", "\x7fELF"),
            ("tools/pre.js", ""),
            ("tools/n", "#!/usr/bin/env -S node -r ./tools/pre.js\n"),
        ]);
        let path = dir.path().join("tools/serve");
        let runs = runs_with(dir.path(), &[path.to_str().unwrap()], &[]);
        assert_eq!(covered(dir.path(), &runs), ["tools/serve"]);
        assert!(
            runs.uncovered
                .iter()
                .any(|n| n.contains("is run by `/usr/bin/env python3` (its first line)")),
            "{runs:?}"
        );
        assert_eq!(files(dir.path(), &["./tools/plain"]), ["tools/plain"]);
        assert_eq!(
            files(dir.path(), &["./tools/n"]),
            ["tools/n", "tools/pre.js"]
        );
    }

    #[test]
    fn a_program_outside_the_project_is_named_not_hashed() {
        let dir = project(&[("conf.json", "{}")]);
        let runs = runs_with(dir.path(), &["some-server-nobody-has", "serve"], &[]);
        assert!(runs.files.is_empty());
        assert_eq!(
            runs.uncovered,
            [
                "tandem cannot tell which files `some-server-nobody-has serve` runs; a change to them will not be asked about again"
            ]
        );
        // A file of the project the definition names is still covered.
        let runs = runs_with(dir.path(), &["some-server-nobody-has", "conf.json"], &[]);
        assert_eq!(covered(dir.path(), &runs), ["conf.json"]);
    }

    #[test]
    fn a_program_found_on_the_definitions_path_in_the_project_is_covered() {
        let dir = project(&[("bin/python3", "#!/bin/sh\n"), ("app.py", "")]);
        let runs = runs_with(dir.path(), &["python3", "app.py"], &[("PATH", "bin")]);
        assert_eq!(covered(dir.path(), &runs), ["bin/python3", "app.py"]);
    }

    #[test]
    fn env_is_seen_through() {
        let dir = project(&[
            ("m/__init__.py", ""),
            ("m/__main__.py", ""),
            ("lib/x.py", ""),
        ]);
        assert_eq!(
            files(dir.path(), &["env", "A=1", "python3", "-m", "m"]),
            ["m/__init__.py", "m/__main__.py"]
        );
        assert_eq!(
            files(
                dir.path(),
                &["/usr/bin/env", "PYTHONPATH=lib", "python3", "-m", "x"]
            ),
            ["lib/x.py"]
        );
    }
}
