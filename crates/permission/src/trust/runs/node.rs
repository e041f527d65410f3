//! What the JavaScript runners run: `node` (a file, or a folder's `package.json` `main`,
//! else `index.js`), `npx` (a local folder's or the project's installed package's `bin`),
//! `deno run`, `bun`.

use std::path::{Path, PathBuf};

use super::{Cx, split_option, value};

/// The options of `node` that take a value (the others are flags).
const NODE_VALUES: &[&str] = &[
    "-C",
    "--conditions",
    "--input-type",
    "--title",
    "--inspect-port",
    "--debug-port",
    "--watch-path",
    "--redirect-warnings",
    "--report-dir",
    "--report-directory",
    "--report-filename",
    "--diagnostic-dir",
    "--cpu-prof-dir",
    "--cpu-prof-name",
    "--heap-prof-dir",
    "--heap-prof-name",
    "--icu-data-dir",
    "--openssl-config",
    "--tls-keylog",
    "--unhandled-rejections",
    "--secure-heap",
    "--secure-heap-min",
    "--experimental-config-file",
    "--stack-trace-limit",
    "--disable-warning",
    "--localstorage-file",
    "--trace-event-categories",
    "--trace-event-file-pattern",
];

/// `node [options] entry [args]`.
pub(super) fn node(cx: &mut Cx, args: &[String]) {
    if let Some(options) = cx.env.get("NODE_OPTIONS").cloned() {
        let words = shlex::split(&options).unwrap_or_default();
        node_options(cx, &words, "NODE_OPTIONS");
    }
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        let (opt, inline) = split_option(arg);
        match opt {
            "--" => break,
            "-e" | "--eval" | "-p" | "--print" => {
                cx.note("the code given with `--eval` is part of the definition; the modules it loads are not hashed".into());
                return;
            }
            "-" => {
                cx.note(
                    "node reads its program from its input; tandem cannot tell what runs".into(),
                );
                return;
            }
            "-r" | "--require" | "--import" | "--loader" | "--experimental-loader" => {
                if let Some(module) = value(inline, &mut rest) {
                    preload(cx, module, opt);
                }
            }
            "--env-file" | "--env-file-if-exists" => {
                if let Some(file) = value(inline, &mut rest) {
                    cx.cover(&cx.local(file), "the environment file node reads");
                }
            }
            o if NODE_VALUES.contains(&o) => {
                value(inline, &mut rest);
            }
            o if o.starts_with('-') => {}
            _ => return main(cx, arg),
        }
    }
    match rest.next() {
        Some(entry) => main(cx, entry),
        None => {
            cx.note("node reads its program from its input; tandem cannot tell what runs".into())
        }
    }
}

/// The preloads among node options given elsewhere (`NODE_OPTIONS`, npm's `node-options`).
fn node_options(cx: &mut Cx, words: &[String], from: &str) {
    let mut rest = words.iter();
    while let Some(word) = rest.next() {
        let (opt, inline) = split_option(word);
        if matches!(
            opt,
            "-r" | "--require" | "--import" | "--loader" | "--experimental-loader"
        ) && let Some(module) = value(inline, &mut rest)
        {
            preload(cx, module, from);
        }
    }
}

/// A module node loads before the entry: covered when it is a path, else noted.
fn preload(cx: &mut Cx, module: &str, by: &str) {
    let path = module.strip_prefix("file://").unwrap_or(module);
    if path.starts_with("./") || path.starts_with("../") || Path::new(path).is_absolute() {
        match as_file(&cx.local(path)) {
            Some(file) => {
                cx.cover(&file, &format!("a module `{by}` loads first"));
            }
            None => cx.note(format!(
                "`{module}` (loaded first by `{by}`) is not a file tandem can find"
            )),
        }
        return;
    }
    cx.note(format!(
        "the package `{module}` that `{by}` loads first is not hashed; a change to it will not be asked about again"
    ));
}

/// The main entry node runs for `entry`: a file (trying `.js`, `.json`, `.node`), else a
/// folder's `package.json` `main`, else its `index.js`.
fn main(cx: &mut Cx, entry: &str) {
    let path = cx.local(entry);
    if let Some(file) = as_file(&path) {
        cx.cover(&file, "the script node runs");
        return;
    }
    if path.is_dir() {
        folder(cx, &path, entry);
        return;
    }
    cx.note(format!(
        "`{entry}` (the script node runs) is not a file tandem can find, so nothing there is hashed"
    ));
}

/// `path` as node's loader finds a file: itself, or with `.js`, `.json`, `.node` added.
fn as_file(path: &Path) -> Option<PathBuf> {
    if path.is_file() {
        return Some(path.to_path_buf());
    }
    let name = path.file_name()?.to_string_lossy().into_owned();
    ["js", "json", "node"]
        .iter()
        .map(|ext| path.with_file_name(format!("{name}.{ext}")))
        .find(|p| p.is_file())
}

/// A folder's `index.js` (`.json`, `.node`).
fn index(dir: &Path) -> Option<PathBuf> {
    as_file(&dir.join("index"))
}

/// The `package.json` of `dir`, when it is one.
fn manifest(dir: &Path) -> Option<serde_json::Value> {
    let text = std::fs::read_to_string(dir.join("package.json")).ok()?;
    serde_json::from_str(&text).ok()
}

/// A folder node runs: its `package.json` and the `main` it names, else its `index.js`.
fn folder(cx: &mut Cx, dir: &Path, entry: &str) {
    cx.cover(&dir.join("package.json"), "the folder's package.json");
    let main = manifest(dir)
        .and_then(|m| m.get("main").and_then(|v| v.as_str()).map(String::from))
        .and_then(|main| {
            let path = dir.join(main);
            as_file(&path).or_else(|| index(&path))
        });
    match main.or_else(|| index(dir)) {
        Some(file) => {
            cx.cover(&file, "the folder's main script");
        }
        None => cx.note(format!(
            "the folder `{entry}` has neither a package.json `main` nor an index.js tandem can find"
        )),
    }
}

/// A package folder run as a program (`npx`): its `package.json` and the `bin` named `bin`
/// (or its only one, or the one named after the package), else its `main`, else `index.js`.
fn package(cx: &mut Cx, dir: &Path, bin: Option<&str>, shown: &str) {
    cx.cover(&dir.join("package.json"), "the package's package.json");
    let manifest = manifest(dir).unwrap_or_default();
    let name = manifest.get("name").and_then(|n| n.as_str()).unwrap_or("");
    let unscoped = name.rsplit('/').next().unwrap_or(name);
    let entry = match manifest.get("bin") {
        Some(serde_json::Value::String(path)) => Some(path.clone()),
        Some(serde_json::Value::Object(bins)) => {
            let pick = |key: &str| bins.get(key).and_then(|v| v.as_str()).map(String::from);
            bin.and_then(pick)
                .or_else(|| match bins.len() {
                    1 => bins
                        .values()
                        .next()
                        .and_then(|v| v.as_str())
                        .map(String::from),
                    _ => None,
                })
                .or_else(|| pick(unscoped))
        }
        _ => None,
    }
    .or_else(|| {
        manifest
            .get("main")
            .and_then(|m| m.as_str())
            .map(String::from)
    });
    let file = match entry {
        Some(entry) => {
            let path = dir.join(entry);
            as_file(&path).or_else(|| index(&path))
        }
        None => index(dir),
    };
    match file {
        Some(file) => {
            cx.cover(&file, "the package's program");
        }
        None => cx.note(format!(
            "the package `{shown}` names no program (bin, main or index.js) tandem can find"
        )),
    }
}

/// Whether an npm package spec names a local folder or file.
fn is_local(spec: &str) -> bool {
    spec.starts_with("./")
        || spec.starts_with("../")
        || spec.starts_with("file:")
        || spec.starts_with('/')
        || spec == "."
        || spec == ".."
}

/// A registry spec's package name (`@scope/name@1.2` → `@scope/name`), and whether it names
/// a version.
fn package_name(spec: &str) -> (&str, bool) {
    let from = usize::from(spec.starts_with('@'));
    match spec[from..].find('@') {
        Some(at) => (&spec[..from + at], true),
        None => (spec, false),
    }
}

/// `npx [options] package [args]` or `npx -p package… command [args]`.
pub(super) fn npx(cx: &mut Cx, args: &[String]) {
    cx.cover(&cx.local(".npmrc"), "npm's settings for the project");
    let mut packages: Vec<&str> = Vec::new();
    let mut command = None;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        let (opt, inline) = split_option(arg);
        match opt {
            "--" => {
                command = rest.next().map(String::as_str);
                break;
            }
            "-p" | "--package" => packages.extend(value(inline, &mut rest)),
            "-c" | "--call" => {
                match value(inline, &mut rest) {
                    Some(line) => cx.shell_command(line),
                    None => cx.note("`npx --call` names no command".into()),
                }
                return;
            }
            "--node-options" => {
                if let Some(options) = value(inline, &mut rest) {
                    let words = shlex::split(options).unwrap_or_default();
                    node_options(cx, &words, "--node-options");
                }
            }
            "--registry" | "--cache" | "--userconfig" | "--prefix" | "-w" | "--workspace"
            | "--loglevel" => {
                value(inline, &mut rest);
            }
            o if o.starts_with('-') => {}
            _ => {
                command = Some(arg.as_str());
                break;
            }
        }
    }
    let (bin, specs) = match packages.is_empty() {
        true => (None, command.into_iter().collect::<Vec<_>>()),
        false => (command, packages),
    };
    if specs.is_empty() {
        cx.note("`npx` names no package".into());
    }
    for spec in specs {
        npm_package(cx, spec, bin);
    }
}

/// One package `npx` runs: a local folder or tarball, the project's installed copy, or the
/// registry's (noted).
fn npm_package(cx: &mut Cx, spec: &str, bin: Option<&str>) {
    if is_local(spec) {
        let path = cx.local(spec.strip_prefix("file:").unwrap_or(spec));
        if path.is_dir() {
            package(cx, &path, bin, spec);
        } else if !cx.cover(&path, "the package npx installs") {
            cx.note(format!("`{spec}` is not a folder tandem can find"));
        } else {
            cx.note(format!(
                "npx unpacks `{spec}` before running it: the archive is hashed, not what it holds once installed"
            ));
        }
        return;
    }
    let (name, versioned) = package_name(spec);
    let installed = cx.local("node_modules").join(name);
    if installed.join("package.json").is_file() {
        package(cx, &installed, bin, name);
        cx.note(format!(
            "npx runs the project's installed `{name}` (its dependencies are not hashed)"
        ));
        if !versioned {
            return;
        }
    }
    cx.note(format!(
        "`{spec}` comes from the npm registry (or npm's cache): tandem cannot hash it; a new version will not be asked about again"
    ));
}

/// Whether an entry is fetched, not a file: a URL or a `jsr:`/`npm:` specifier.
fn remote(entry: &str) -> bool {
    ["http://", "https://", "jsr:", "npm:"]
        .iter()
        .any(|p| entry.starts_with(p))
}

/// `deno run [options] entry [args]` (or `deno entry`, Deno 2's short form).
pub(super) fn deno(cx: &mut Cx, args: &[String]) {
    let args = match args.first().map(String::as_str) {
        Some("run" | "serve") => &args[1..],
        Some(first) if !first.starts_with('-') && cx.local(first).is_file() => args,
        _ => {
            cx.unknown(
                &std::iter::once("deno".to_string())
                    .chain(args.iter().cloned())
                    .collect::<Vec<_>>(),
            );
            return;
        }
    };
    let (mut config, mut no_config) = (None, false);
    let mut rest = args.iter();
    let mut entry = None;
    while let Some(arg) = rest.next() {
        let (opt, inline) = split_option(arg);
        match opt {
            "--" => {
                entry = rest.next();
                break;
            }
            "-c" | "--config" => config = value(inline, &mut rest),
            "--no-config" => no_config = true,
            "--import-map" => {
                if let Some(map) = value(inline, &mut rest)
                    && !remote(map)
                {
                    cx.cover_named(map, "the import map deno reads");
                }
            }
            "--env-file" | "--env" => {
                let file = inline.unwrap_or(".env");
                cx.cover(&cx.local(file), "the environment file deno reads");
            }
            "--preload" | "--import" => {
                if let Some(module) = value(inline, &mut rest)
                    && !remote(module)
                {
                    cx.cover_named(module, "a module deno loads first");
                }
            }
            "--cert" | "--location" | "--seed" | "-L" | "--log-level" | "--ext"
            | "--inspect-port" => {
                value(inline, &mut rest);
            }
            o if o.starts_with('-') => {}
            _ => {
                entry = Some(arg);
                break;
            }
        }
    }
    match config {
        Some(file) => cx.cover_named(file, "the config deno reads"),
        None if !no_config => {
            for name in ["deno.json", "deno.jsonc"] {
                cx.cover(&cx.local(name), "the config deno reads");
            }
        }
        None => {}
    }
    match entry {
        Some(entry) if remote(entry) => cx.note(format!(
            "`{entry}` is fetched when it runs: tandem cannot hash it; a change to it will not be asked about again"
        )),
        Some(entry) => cx.cover_named(entry, "the script deno runs"),
        None => cx.note("`deno run` names no script".into()),
    }
}

/// The options of `bun` that take a value (the others are flags).
const BUN_VALUES: &[&str] = &[
    "--tsconfig-override",
    "-d",
    "--define",
    "-l",
    "--loader",
    "--main-fields",
    "--extension-order",
    "--conditions",
    "--port",
    "--shell",
    "--filter",
    "-F",
    "--elide-lines",
    "--jsx-factory",
    "--jsx-fragment",
    "--jsx-import-source",
    "--jsx-runtime",
    "--install",
    "-e",
    "--external",
    "--inspect",
    "--console-depth",
];

/// `bun [run] [options] entry [args]`.
pub(super) fn bun(cx: &mut Cx, args: &[String]) {
    let args = match args.first().map(String::as_str) {
        Some("run") => &args[1..],
        Some(
            "x" | "exec" | "install" | "i" | "add" | "remove" | "update" | "test" | "build"
            | "create" | "init" | "link" | "pm" | "upgrade" | "repl",
        ) => {
            cx.unknown(
                &std::iter::once("bun".to_string())
                    .chain(args.iter().cloned())
                    .collect::<Vec<_>>(),
            );
            return;
        }
        _ => args,
    };
    let mut config = None;
    let mut rest = args.iter();
    let mut entry = None;
    while let Some(arg) = rest.next() {
        let (opt, inline) = split_option(arg);
        match opt {
            "--" => {
                entry = rest.next();
                break;
            }
            "-r" | "--preload" => {
                if let Some(module) = value(inline, &mut rest) {
                    preload(cx, module, "--preload");
                }
            }
            "--cwd" => {
                if let Some(dir) = value(inline, &mut rest) {
                    cx.dir = cx.local(dir);
                }
            }
            "--env-file" => {
                if let Some(file) = value(inline, &mut rest) {
                    cx.cover(&cx.local(file), "the environment file bun reads");
                }
            }
            "-c" | "--config" => config = value(inline, &mut rest),
            o if BUN_VALUES.contains(&o) => {
                value(inline, &mut rest);
            }
            o if o.starts_with('-') => {}
            _ => {
                entry = Some(arg);
                break;
            }
        }
    }
    match config {
        Some(file) => cx.cover_named(file, "the config bun reads"),
        None => {
            cx.cover(&cx.local("bunfig.toml"), "the config bun reads");
        }
    }
    let Some(entry) = entry else {
        cx.note("`bun` names no script".into());
        return;
    };
    bun_entry(cx, entry);
}

/// What `bun entry` runs: a file (trying the usual extensions), a folder, a package.json
/// script, or a program of the project's `node_modules/.bin`.
fn bun_entry(cx: &mut Cx, entry: &str) {
    let path = cx.local(entry);
    let file = path.is_file().then(|| path.clone()).or_else(|| {
        let name = path.file_name()?.to_string_lossy().into_owned();
        ["ts", "tsx", "js", "jsx", "mjs", "cjs", "mts", "cts"]
            .iter()
            .map(|ext| path.with_file_name(format!("{name}.{ext}")))
            .find(|p| p.is_file())
    });
    if let Some(file) = file {
        cx.cover(&file, "the script bun runs");
        return;
    }
    if path.is_dir() {
        folder(cx, &path, entry);
        return;
    }
    let script =
        manifest(&cx.dir).and_then(|m| m.get("scripts")?.get(entry)?.as_str().map(String::from));
    if let Some(line) = script {
        cx.cover(
            &cx.local("package.json"),
            "the package.json whose script bun runs",
        );
        cx.shell_command(&line);
        return;
    }
    let bin = cx.local("node_modules").join(".bin").join(entry);
    if bin.is_file() {
        cx.program(&[bin.to_string_lossy().into_owned()]);
        return;
    }
    cx.unknown(&["bun".to_string(), entry.to_string()]);
}

#[cfg(test)]
mod tests {
    use super::super::tests::{covered, files, project, runs_with};
    use super::*;

    #[test]
    fn node_runs_a_file_trying_its_extensions() {
        let dir = project(&[
            ("srv.js", ""),
            ("tools/mcp.mjs", ""),
            ("pre.js", ""),
            ("e", ""),
        ]);
        let d = dir.path();
        assert_eq!(files(d, &["node", "srv.js"]), ["srv.js"]);
        assert_eq!(files(d, &["node", "srv"]), ["srv.js"]);
        assert_eq!(
            files(d, &["node", "--title", "x", "tools/mcp.mjs", "--port", "1"]),
            ["tools/mcp.mjs"]
        );
        assert_eq!(
            files(
                d,
                &["/usr/local/bin/node", "-r", "./pre", "--env-file=e", "srv"]
            ),
            ["pre.js", "e", "srv.js"]
        );
        let runs = runs_with(
            d,
            &["node", "srv"],
            &[("NODE_OPTIONS", "--require ./pre.js")],
        );
        assert_eq!(covered(d, &runs), ["pre.js", "srv.js"]);
        let runs = runs_with(d, &["node", "-r", "dotenv/config", "srv"], &[]);
        assert!(
            runs.uncovered[0].contains("the package `dotenv/config`"),
            "{runs:?}"
        );
    }

    #[test]
    fn node_runs_a_folders_main_else_its_index() {
        let dir = project(&[
            ("tools/index.js", ""),
            ("srv/package.json", r#"{"main": "lib/server.js"}"#),
            ("srv/lib/server.js", ""),
            ("srv/index.js", ""),
            ("bare/package.json", r#"{"main": "dist"}"#),
            ("bare/dist/index.js", ""),
            ("broken/package.json", r#"{"main": "gone.js"}"#),
            ("broken/index.js", ""),
        ]);
        let d = dir.path();
        assert_eq!(files(d, &["node", "tools"]), ["tools/index.js"]);
        assert_eq!(
            files(d, &["node", "srv"]),
            ["srv/package.json", "srv/lib/server.js"]
        );
        assert_eq!(
            files(d, &["node", "./bare"]),
            ["bare/package.json", "bare/dist/index.js"]
        );
        assert_eq!(
            files(d, &["node", "broken"]),
            ["broken/package.json", "broken/index.js"]
        );
        let runs = runs_with(d, &["node", "missing"], &[]);
        assert!(
            runs.files.is_empty() && runs.uncovered[0].contains("`missing`"),
            "{runs:?}"
        );
    }

    #[test]
    fn npx_of_a_local_folder_covers_its_bin() {
        let dir = project(&[
            (
                "srv/package.json",
                r#"{"name": "@me/srv", "bin": {"srv": "cli.js", "other": "o.js"}}"#,
            ),
            ("srv/cli.js", ""),
            ("srv/o.js", ""),
            ("one/package.json", r#"{"name": "one", "bin": "run.js"}"#),
            ("one/run.js", ""),
            ("lib/package.json", r#"{"name": "lib", "main": "main.js"}"#),
            ("lib/main.js", ""),
            (".npmrc", "node-options=--require ./x.js"),
        ]);
        let d = dir.path();
        assert_eq!(
            files(d, &["npx", "./srv"]),
            [".npmrc", "srv/package.json", "srv/cli.js"]
        );
        assert_eq!(
            files(d, &["npx", "-y", "file:one", "--stdio"]),
            [".npmrc", "one/package.json", "one/run.js"]
        );
        assert_eq!(
            files(d, &["npx", "--package", "./srv", "other"]),
            [".npmrc", "srv/package.json", "srv/o.js"]
        );
        assert_eq!(
            files(d, &["npx", "./lib"]),
            [".npmrc", "lib/package.json", "lib/main.js"]
        );
    }

    #[test]
    fn npx_of_a_registry_package_is_named_unless_the_project_has_it() {
        let dir = project(&[
            (
                "node_modules/@scope/tool/package.json",
                r#"{"name": "@scope/tool", "bin": "bin.js"}"#,
            ),
            ("node_modules/@scope/tool/bin.js", ""),
        ]);
        let d = dir.path();
        let runs = runs_with(
            d,
            &[
                "npx",
                "-y",
                "@modelcontextprotocol/server-filesystem",
                "/tmp",
            ],
            &[],
        );
        assert!(runs.files.is_empty());
        assert_eq!(
            runs.uncovered,
            [
                "`@modelcontextprotocol/server-filesystem` comes from the npm registry (or npm's cache): tandem cannot hash it; a new version will not be asked about again"
            ]
        );
        let runs = runs_with(d, &["npx", "@scope/tool"], &[]);
        assert_eq!(
            covered(d, &runs),
            [
                "node_modules/@scope/tool/package.json",
                "node_modules/@scope/tool/bin.js"
            ]
        );
        let runs = runs_with(d, &["npx", "@scope/tool@2"], &[]);
        assert!(
            runs.uncovered.iter().any(|n| n.contains("npm registry")),
            "{runs:?}"
        );
        assert_eq!(package_name("@scope/tool@2"), ("@scope/tool", true));
        assert_eq!(package_name("tool@latest"), ("tool", true));
        assert_eq!(package_name("tool"), ("tool", false));
    }

    #[test]
    fn deno_run_covers_the_script_and_its_config() {
        let dir = project(&[
            ("main.ts", ""),
            ("deno.json", "{}"),
            ("map.json", "{}"),
            (".env", ""),
        ]);
        let d = dir.path();
        assert_eq!(
            files(
                d,
                &["deno", "run", "--allow-read=.", "--allow-net", "main.ts"]
            ),
            ["deno.json", "main.ts"]
        );
        assert_eq!(
            files(
                d,
                &[
                    "deno",
                    "run",
                    "--no-config",
                    "--import-map",
                    "map.json",
                    "--env-file",
                    "main.ts"
                ]
            ),
            ["map.json", ".env", "main.ts"]
        );
        assert_eq!(files(d, &["deno", "main.ts"]), ["deno.json", "main.ts"]);
        let runs = runs_with(d, &["deno", "run", "-A", "jsr:@me/server"], &[]);
        assert!(
            runs.uncovered
                .iter()
                .any(|n| n.contains("`jsr:@me/server` is fetched")),
            "{runs:?}"
        );
        let runs = runs_with(d, &["deno", "task", "serve"], &[]);
        assert!(
            runs.uncovered[0].contains("cannot tell which files `deno task serve`"),
            "{runs:?}"
        );
    }

    #[test]
    fn bun_covers_the_script_its_config_and_a_package_script() {
        let dir = project(&[
            ("server.ts", ""),
            ("bunfig.toml", "preload = [\"./pre.ts\"]"),
            (
                "package.json",
                r#"{"scripts": {"mcp": "bun server.ts", "dev": "a && b"}}"#,
            ),
        ]);
        let d = dir.path();
        assert_eq!(
            files(d, &["bun", "server.ts"]),
            ["bunfig.toml", "server.ts"]
        );
        assert_eq!(
            files(d, &["bun", "run", "--smol", "server"]),
            ["bunfig.toml", "server.ts"]
        );
        assert_eq!(
            files(d, &["bun", "run", "mcp"]),
            ["bunfig.toml", "package.json", "server.ts"]
        );
        let runs = runs_with(d, &["bun", "dev"], &[]);
        assert!(
            runs.uncovered.iter().any(|n| n.contains("`a && b`")),
            "{runs:?}"
        );
        let runs = runs_with(d, &["bun", "x", "tool"], &[]);
        assert!(
            runs.uncovered[0].contains("cannot tell which files `bun x tool`"),
            "{runs:?}"
        );
    }
}
