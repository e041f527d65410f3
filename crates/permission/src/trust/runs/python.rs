//! What Python and uv run: a script, a folder's `__main__.py`, or the files `-m` imports
//! (found as Python finds them, in the folders the definition controls).

use std::path::{Path, PathBuf};

use super::{Cx, split_option, value};

/// Whether `name` is a Python interpreter's: `python`, `python3`, `python3.12`, `pythonw`,
/// `pypy3`, Windows' `py`.
pub(super) fn is_python(name: &str) -> bool {
    let rest = name
        .strip_prefix("python")
        .or_else(|| name.strip_prefix("pypy"));
    match rest {
        Some(rest) => rest == "w" || rest.chars().all(|c| c.is_ascii_digit() || c == '.'),
        None => name == "py",
    }
}

/// `python [options] (script | -m module | -c code) [args]`.
pub(super) fn python(cx: &mut Cx, args: &[String]) {
    // Without -I, -P or PYTHONSAFEPATH, `-m` looks in the current folder first.
    let mut safe_path = cx.env.get("PYTHONSAFEPATH").is_some_and(|v| !v.is_empty());
    let mut ignore_env = false;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        if arg == "--" {
            break;
        }
        if let Some(long) = arg.strip_prefix("--") {
            if long == "check-hash-based-pycs" {
                rest.next();
            }
            continue;
        }
        let Some(flags) = arg.strip_prefix('-').filter(|f| !f.is_empty()) else {
            script(cx, arg);
            return;
        };
        for (at, flag) in flags.char_indices() {
            let attached = &flags[at + flag.len_utf8()..];
            let attached = (!attached.is_empty()).then_some(attached);
            match flag {
                'm' => {
                    match value(attached, &mut rest) {
                        Some(name) => module(cx, name, safe_path, ignore_env),
                        None => cx.note("`python -m` names no module".into()),
                    }
                    return;
                }
                'c' => {
                    cx.note("the code given with `-c` is part of the definition; the modules it imports are not hashed".into());
                    return;
                }
                'W' | 'X' => {
                    if attached.is_none() {
                        rest.next();
                    }
                    break;
                }
                'I' => (safe_path, ignore_env) = (true, true),
                'P' => safe_path = true,
                'E' => ignore_env = true,
                _ => {}
            }
        }
    }
    match rest.next() {
        Some(path) => script(cx, path),
        None => {
            cx.note("Python reads its program from its input; tandem cannot tell what runs".into())
        }
    }
}

/// A script Python runs: a file, or a folder's (or zip's) `__main__`.
fn script(cx: &mut Cx, word: &str) {
    if word == "-" {
        cx.note("Python reads its program from its input; tandem cannot tell what runs".into());
        return;
    }
    let path = cx.local(word);
    if path.is_dir() {
        match module_file(&path, "__main__") {
            Some(main) => {
                cx.cover(&main, "the folder's __main__ Python runs");
            }
            None => cx.note(format!(
                "the folder `{word}` has no __main__.py tandem can find"
            )),
        }
        return;
    }
    cx.cover_named(word, "the script Python runs");
}

/// What one name of a dotted module path is, in the folders searched.
enum Found {
    /// A package: its folder and its `__init__` file.
    Package(PathBuf, PathBuf),
    /// A module file.
    Module(PathBuf),
    /// Folders without `__init__` (a namespace package), in search order.
    Namespace(Vec<PathBuf>),
}

/// `-m name`: each package's `__init__` on the way (they run on import), then the module's
/// file, or a package's `__init__` and `__main__`. Searched: the server's folder (unless
/// `safe_path`), then the folders of the definition's `PYTHONPATH` (unless `ignore_env`).
pub(super) fn module(cx: &mut Cx, name: &str, safe_path: bool, ignore_env: bool) {
    let mut roots = Vec::new();
    if !safe_path {
        roots.push(cx.dir.clone());
    }
    if !ignore_env && let Some(dirs) = cx.env.get("PYTHONPATH") {
        roots.extend(std::env::split_paths(dirs).map(|d| cx.dir.join(d)));
    }
    let parts: Vec<&str> = name.split('.').collect();
    let mut search = roots.clone();
    for (at, part) in parts.iter().enumerate() {
        let last = at + 1 == parts.len();
        match find(&search, part) {
            Some(Found::Package(dir, init)) => {
                cx.cover(&init, &format!("a package `-m {name}` imports"));
                if last {
                    main_of(cx, name, std::slice::from_ref(&dir));
                }
                search = vec![dir];
            }
            Some(Found::Module(file)) if last => {
                cx.cover(&file, &format!("the module `-m {name}` runs"));
            }
            Some(Found::Namespace(dirs)) => {
                if last {
                    main_of(cx, name, &dirs);
                }
                search = dirs;
            }
            Some(Found::Module(_)) | None => {
                let searched = match roots.is_empty() {
                    true => "no folder of the project is searched".to_string(),
                    false => format!(
                        "searched: {}",
                        roots
                            .iter()
                            .map(|r| format!("`{}`", r.display()))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                };
                cx.note(format!(
                    "the module `{name}` is not in the project's folders ({searched}): Python would import it from its own library or installed packages, which tandem does not hash; a change to it will not be asked about again"
                ));
                return;
            }
        }
    }
}

/// The `__main__` of the package `name`, whose folders are `dirs`.
fn main_of(cx: &mut Cx, name: &str, dirs: &[PathBuf]) {
    match dirs.iter().find_map(|d| module_file(d, "__main__")) {
        Some(main) => {
            cx.cover(&main, &format!("the package's __main__ `-m {name}` runs"));
        }
        None => cx.note(format!(
            "the package `{name}` has no __main__ tandem can find"
        )),
    }
}

/// The name `part` in the folders `search`, as Python's path finder looks: in each folder a
/// package (`part/__init__.*`), then a module file, else a namespace portion.
fn find(search: &[PathBuf], part: &str) -> Option<Found> {
    let mut portions = Vec::new();
    for dir in search {
        let base = dir.join(part);
        if base.is_dir()
            && let Some(init) = module_file(&base, "__init__")
        {
            return Some(Found::Package(base, init));
        }
        if let Some(file) = module_file(dir, part) {
            return Some(Found::Module(file));
        }
        if base.is_dir() {
            portions.push(base);
        }
    }
    (!portions.is_empty()).then_some(Found::Namespace(portions))
}

/// The file Python loads for the module `stem` in `dir`, in its order: an extension module
/// (`stem.so`, `stem.cpython-….so`, `stem.pyd`), the source `stem.py`, a sourceless
/// `stem.pyc`.
fn module_file(dir: &Path, stem: &str) -> Option<PathBuf> {
    let prefix = format!("{stem}.");
    let mut extensions: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            name.starts_with(&prefix) && (name.ends_with(".so") || name.ends_with(".pyd"))
        })
        .map(|entry| entry.path())
        .filter(|path| path.is_file())
        .collect();
    extensions.sort();
    extensions
        .into_iter()
        .chain(["py", "pyc"].map(|ext| dir.join(format!("{stem}.{ext}"))))
        .find(|path| path.is_file())
}

/// `uv [global options] run [options] (script.py | -m module | program) [args]`; other uv
/// commands are noted.
pub(super) fn uv(cx: &mut Cx, args: &[String]) {
    let mut rest = args.iter();
    let mut project = None;
    while let Some(arg) = rest.next() {
        let (opt, inline) = split_option(arg);
        match opt {
            "run" => return run(cx, rest.as_slice(), project),
            "tool" if rest.as_slice().first().is_some_and(|a| a == "run") => {
                return uvx(cx, &rest.as_slice()[1..]);
            }
            "--directory" => {
                if let Some(dir) = value(inline, &mut rest) {
                    cx.dir = cx.local(dir);
                }
            }
            "--project" => project = value(inline, &mut rest).map(|d| cx.local(d)),
            "--cache-dir"
            | "--config-file"
            | "--color"
            | "--python-preference"
            | "--allow-insecure-host" => {
                value(inline, &mut rest);
            }
            a if a.starts_with('-') => {}
            _ => break,
        }
    }
    cx.unknown(
        &std::iter::once("uv".to_string())
            .chain(args.iter().cloned())
            .collect::<Vec<_>>(),
    );
}

/// The options of `uv run` that take a value (the others are flags).
const UV_VALUES: &[&str] = &[
    "--extra",
    "--no-extra",
    "--group",
    "--no-group",
    "--only-group",
    "--with",
    "--with-editable",
    "--package",
    "--python",
    "-p",
    "--index",
    "--default-index",
    "--index-url",
    "-i",
    "--extra-index-url",
    "--find-links",
    "-f",
    "--index-strategy",
    "--keyring-provider",
    "--resolution",
    "--prerelease",
    "--fork-strategy",
    "--exclude-newer",
    "--exclude-newer-package",
    "--config-setting",
    "-C",
    "--no-build-isolation-package",
    "--no-build-package",
    "--no-binary-package",
    "--no-sources-package",
    "--link-mode",
    "--refresh-package",
    "--reinstall-package",
    "--upgrade-package",
    "-P",
    "--cache-dir",
    "--config-file",
    "--color",
    "--allow-insecure-host",
    "--python-platform",
    "--python-preference",
];

/// `uv run [options] command`: the script or module, the project's manifest and lock.
fn run(cx: &mut Cx, args: &[String], mut project: Option<PathBuf>) {
    let (mut as_module, mut as_script, mut no_project) = (false, false, false);
    let mut rest = args.iter();
    let mut command = None;
    while let Some(arg) = rest.next() {
        let (opt, inline) = split_option(arg);
        match opt {
            "--" => {
                command = rest.next();
                break;
            }
            "-m" | "--module" => as_module = true,
            "-s" | "--script" | "--gui-script" => as_script = true,
            "--no-project" | "--isolated" => no_project = true,
            "--directory" => {
                if let Some(dir) = value(inline, &mut rest) {
                    cx.dir = cx.local(dir);
                }
            }
            "--project" => project = value(inline, &mut rest).map(|d| cx.local(d)),
            "--with-requirements" => {
                if let Some(file) = value(inline, &mut rest) {
                    cx.cover_named(file, "the requirements `uv run --with-requirements` reads");
                }
            }
            "--env-file" => {
                if let Some(file) = value(inline, &mut rest) {
                    cx.cover_named(file, "the environment file uv reads");
                }
            }
            o if UV_VALUES.contains(&o) => {
                value(inline, &mut rest);
            }
            o if o.starts_with('-') => {}
            _ => {
                command = Some(arg);
                break;
            }
        }
    }
    let project = project.unwrap_or_else(|| cx.dir.clone());
    if !no_project {
        for manifest in ["pyproject.toml", "uv.lock"] {
            cx.cover(
                &project.join(manifest),
                "the project uv syncs before it runs",
            );
        }
    }
    cx.note(
        "the packages uv installs (its lock, `--with`) are not hashed; a new version of one will not be asked about again"
            .into(),
    );
    let Some(command) = command else {
        cx.note("`uv run` names no command".into());
        return;
    };
    let after: Vec<String> = rest.cloned().collect();
    if as_module {
        module(cx, command, false, false);
    } else if command.starts_with("http://") || command.starts_with("https://") {
        cx.note(format!(
            "`{command}` is downloaded when it runs; tandem cannot hash it"
        ));
    } else if as_script || command.ends_with(".py") || command.ends_with(".pyw") || command == "-" {
        script(cx, command);
    } else {
        // A program of the project's environment comes first.
        let bin = if cfg!(windows) { "Scripts" } else { "bin" };
        let venv = project.join(".venv").join(bin).join(command);
        let program = match venv.is_file() {
            true => venv.to_string_lossy().into_owned(),
            false => command.clone(),
        };
        let mut words = vec![program];
        words.extend(after);
        cx.program(&words);
    }
}

/// `uvx`/`uv tool run`: a tool from the package index, or a local folder's.
pub(super) fn uvx(cx: &mut Cx, args: &[String]) {
    let mut rest = args.iter();
    let mut from = None;
    let mut tool = None;
    while let Some(arg) = rest.next() {
        let (opt, inline) = split_option(arg);
        match opt {
            "--from" => from = value(inline, &mut rest),
            "--with-requirements" => {
                if let Some(file) = value(inline, &mut rest) {
                    cx.cover_named(file, "the requirements uvx reads");
                }
            }
            o if UV_VALUES.contains(&o) => {
                value(inline, &mut rest);
            }
            o if o.starts_with('-') => {}
            _ => {
                tool = Some(arg.as_str());
                break;
            }
        }
    }
    let package = from.or(tool).unwrap_or("?");
    let local = cx.local(package);
    if (package.starts_with('.') || Path::new(package).is_absolute()) && local.is_dir() {
        cx.cover(
            &local.join("pyproject.toml"),
            "the local package uvx installs",
        );
        cx.note(format!(
            "uvx installs `{package}` before running it; its code is not hashed, only its pyproject.toml"
        ));
        return;
    }
    cx.note(format!(
        "`{package}` comes from the Python package index (or uv's cache): tandem cannot hash it; a new version will not be asked about again"
    ));
}

#[cfg(test)]
mod tests {
    use super::super::tests::{covered, files, project, runs_with};
    use super::*;

    #[test]
    fn python_names_are_known() {
        for name in ["python", "python3", "python3.12", "pythonw", "py", "pypy3"] {
            assert!(is_python(name), "{name}");
        }
        for name in ["pythonista", "pyright", "node"] {
            assert!(!is_python(name), "{name}");
        }
    }

    #[test]
    fn a_script_or_a_folders_main_is_covered() {
        let dir = project(&[("srv.py", ""), ("app/__main__.py", "")]);
        assert_eq!(files(dir.path(), &["python3", "srv.py"]), ["srv.py"]);
        assert_eq!(
            files(
                dir.path(),
                &["python3", "-u", "-W", "ignore", "srv.py", "-x"]
            ),
            ["srv.py"]
        );
        assert_eq!(
            files(dir.path(), &["/usr/bin/python3.12", "app"]),
            ["app/__main__.py"]
        );
        let runs = runs_with(dir.path(), &["python3", "-c", "import srv"], &[]);
        assert!(runs.uncovered[0].contains("`-c`"), "{runs:?}");
    }

    #[test]
    fn dash_m_finds_a_module_file_or_a_package_and_its_parents() {
        let dir = project(&[
            ("srv.py", ""),
            ("pkg/__init__.py", ""),
            ("pkg/mod.py", ""),
            ("pkg/sub/__init__.py", ""),
            ("pkg/sub/__main__.py", ""),
            ("ns/part/__main__.py", ""),
        ]);
        let d = dir.path();
        assert_eq!(files(d, &["python3", "-m", "srv"]), ["srv.py"]);
        assert_eq!(files(d, &["python3", "-msrv"]), ["srv.py"]);
        assert_eq!(files(d, &["python3", "-um", "srv"]), ["srv.py"]);
        assert_eq!(
            files(d, &["python3", "-m", "pkg.mod", "--port", "1"]),
            ["pkg/__init__.py", "pkg/mod.py"]
        );
        assert_eq!(
            files(d, &["python", "-m", "pkg.sub"]),
            [
                "pkg/__init__.py",
                "pkg/sub/__init__.py",
                "pkg/sub/__main__.py"
            ]
        );
        // Namespace packages (no __init__) are followed too.
        assert_eq!(
            files(d, &["python3", "-m", "ns.part"]),
            ["ns/part/__main__.py"]
        );
    }

    #[test]
    fn dash_m_follows_pythons_order_within_a_folder() {
        // A package wins over a module of the same name; an extension module over source;
        // a sourceless .pyc is what runs when no source is there.
        let dir = project(&[
            ("both.py", ""),
            ("both/__init__.py", ""),
            ("both/__main__.py", ""),
            ("fast.py", ""),
            ("fast.cpython-312-x86_64-linux-gnu.so", ""),
            ("compiled.pyc", ""),
        ]);
        let d = dir.path();
        assert_eq!(
            files(d, &["python3", "-m", "both"]),
            ["both/__init__.py", "both/__main__.py"]
        );
        assert_eq!(
            files(d, &["python3", "-m", "fast"]),
            ["fast.cpython-312-x86_64-linux-gnu.so"]
        );
        assert_eq!(files(d, &["python3", "-m", "compiled"]), ["compiled.pyc"]);
    }

    #[test]
    fn dash_m_searches_the_folder_then_the_definitions_pythonpath() {
        let dir = project(&[("lib/tool.py", ""), ("tool.py", ""), ("lib/only.py", "")]);
        let d = dir.path();
        let env = [("PYTHONPATH", "lib")];
        let runs = runs_with(d, &["python3", "-m", "tool"], &env);
        assert_eq!(covered(d, &runs), ["tool.py"], "the folder comes first");
        let runs = runs_with(d, &["python3", "-m", "only"], &env);
        assert_eq!(covered(d, &runs), ["lib/only.py"]);
        // -P leaves the folder out; -I the folder and the environment.
        let runs = runs_with(d, &["python3", "-P", "-m", "tool"], &env);
        assert_eq!(covered(d, &runs), ["lib/tool.py"]);
        let runs = runs_with(d, &["python3", "-I", "-m", "tool"], &env);
        assert!(runs.files.is_empty());
        assert!(
            runs.uncovered[0].contains("no folder of the project is searched"),
            "{runs:?}"
        );
        let runs = runs_with(d, &["python3", "-m", "tool"], &[("PYTHONSAFEPATH", "1")]);
        assert!(runs.files.is_empty());
    }

    #[test]
    fn an_installed_module_is_named_as_not_covered() {
        let dir = project(&[]);
        let runs = runs_with(dir.path(), &["python3", "-m", "mcp_server_fetch"], &[]);
        assert!(runs.files.is_empty());
        assert_eq!(runs.uncovered.len(), 1);
        assert!(
            runs.uncovered[0]
                .starts_with("the module `mcp_server_fetch` is not in the project's folders")
                && runs.uncovered[0].contains("will not be asked about again"),
            "{runs:?}"
        );
    }

    #[test]
    fn uv_run_covers_the_script_the_manifest_and_the_requirements() {
        let dir = project(&[
            ("server.py", ""),
            ("pyproject.toml", ""),
            ("uv.lock", ""),
            ("reqs.txt", ""),
            ("srv/__main__.py", ""),
        ]);
        let d = dir.path();
        assert_eq!(
            files(d, &["uv", "run", "server.py"]),
            ["pyproject.toml", "uv.lock", "server.py"]
        );
        let runs = runs_with(
            d,
            &[
                "uv",
                "run",
                "--with",
                "mcp",
                "--with-requirements",
                "reqs.txt",
                "--python",
                "3.12",
                "server.py",
                "--x",
            ],
            &[],
        );
        assert_eq!(
            covered(d, &runs),
            ["reqs.txt", "pyproject.toml", "uv.lock", "server.py"]
        );
        assert!(
            runs.uncovered
                .iter()
                .any(|n| n.contains("packages uv installs")),
            "{runs:?}"
        );
        assert_eq!(
            files(d, &["uv", "run", "--no-project", "python", "-m", "srv"]),
            ["srv/__main__.py"]
        );
        assert_eq!(
            files(d, &["uv", "run", "--isolated", "-m", "srv"]),
            ["srv/__main__.py"]
        );
    }

    #[test]
    fn uv_run_moves_with_directory_and_prefers_the_projects_venv() {
        let dir = project(&[("sub/app.py", ""), (".venv/bin/serve", "#!/bin/sh\n")]);
        let d = dir.path();
        assert_eq!(
            files(
                d,
                &["uv", "--directory", "sub", "run", "--no-project", "app.py"]
            ),
            ["sub/app.py"]
        );
        assert_eq!(
            files(d, &["uv", "run", "--no-project", "serve"]),
            [".venv/bin/serve"]
        );
    }

    #[test]
    fn uvx_is_the_package_index_unless_local() {
        let dir = project(&[("tool/pyproject.toml", "")]);
        let runs = runs_with(dir.path(), &["uvx", "mcp-server-time"], &[]);
        assert!(runs.files.is_empty());
        assert!(
            runs.uncovered[0].contains("`mcp-server-time` comes from the Python package index")
        );
        let runs = runs_with(
            dir.path(),
            &["uv", "tool", "run", "--from", "./tool", "t"],
            &[],
        );
        assert_eq!(covered(dir.path(), &runs), ["tool/pyproject.toml"]);
    }
}
