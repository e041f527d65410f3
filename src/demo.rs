//! `tandem demo`: the offline tour from any install, with no model, no key and no clone. A
//! small project built into the binary is copied to a fresh folder, and one headless prompt
//! runs there against the scripted model of the same tour (fixtures/demo/tour.json): a plan,
//! a search, a read, an edit shown as a diff, and a command. It is exactly `tandem exec
//! --replay TOUR --mode full-access --cwd COPY "Add the missing test"`, parsed as such, but on a
//! configuration of its own ([`Demo::config`]): none of the user's config file, hooks, MCP
//! servers, rules or server variables applies, and its session is stored in its own folder,
//! which is left for the user to look at.

use std::io;
use std::path::PathBuf;

use crate::cli::Cli;
use crate::config::{Config, ConfigError, Overrides};

/// The project the tour works on: fixtures/workspaces/small, file by file.
const PROJECT: &[(&str, &[u8])] = &[
    (
        ".gitignore",
        include_bytes!("../fixtures/workspaces/small/.gitignore"),
    ),
    (
        "README.md",
        include_bytes!("../fixtures/workspaces/small/README.md"),
    ),
    (
        "build.log",
        include_bytes!("../fixtures/workspaces/small/build.log"),
    ),
    (
        "logo.bin",
        include_bytes!("../fixtures/workspaces/small/logo.bin"),
    ),
    (
        "notes/todo.txt",
        include_bytes!("../fixtures/workspaces/small/notes/todo.txt"),
    ),
    (
        "src/lib.rs",
        include_bytes!("../fixtures/workspaces/small/src/lib.rs"),
    ),
    (
        "src/main.rs",
        include_bytes!("../fixtures/workspaces/small/src/main.rs"),
    ),
];

/// The scripted model's answers.
const TOUR: &str = include_str!("../fixtures/demo/tour.json");

/// What the tour asks.
const PROMPT: &str = "Add the missing test";

/// A tour made ready: its folder, with the project copy and the script beside it.
#[derive(Debug)]
pub struct Demo {
    /// The folder holding both.
    pub folder: PathBuf,
    /// The copy of the project the prompt works on.
    pub project: PathBuf,
    /// The scripted model's answers.
    pub tour: PathBuf,
}

impl Demo {
    /// Writes the project and the script into a new folder `tandem-demo-*` in the temp
    /// folder (only this user may enter it); nothing is left when that fails.
    pub fn prepare() -> io::Result<Self> {
        let mut builder = tempfile::Builder::new();
        builder.prefix("tandem-demo-");
        #[cfg(unix)]
        builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700));
        let folder = builder.tempdir()?;
        let demo = Self::prepare_in(folder.path().to_path_buf())?;
        let _ = folder.keep();
        Ok(demo)
    }

    fn prepare_in(folder: PathBuf) -> io::Result<Self> {
        let project = folder.join("project");
        for (name, bytes) in PROJECT {
            let path = project.join(name);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(&path, bytes)?;
        }
        let tour = folder.join("tour.json");
        std::fs::write(&tour, TOUR)?;
        Ok(Self {
            folder,
            project,
            tour,
        })
    }

    /// The `tandem exec` command line the tour is, with `-v` when the user gave it.
    pub fn exec_command(&self, verbose: bool) -> Result<Cli, clap::Error> {
        let mut words: Vec<std::ffi::OsString> = vec!["tandem".into()];
        if verbose {
            words.push("-v".into());
        }
        words.extend(["exec".into(), "--replay".into(), self.tour.clone().into()]);
        words.extend(["--mode".into(), "full-access".into(), "--cwd".into()]);
        words.push(self.project.clone().into());
        words.push(PROMPT.into());
        <Cli as clap::Parser>::try_parse_from(words)
    }

    /// The tour's configuration: `overrides` (the exec command line's) with no config file,
    /// and an environment that has only a home in the demo's folder, where the session is
    /// stored too. So the user's own setup (hooks, MCP servers, rules, a broken file, a
    /// misspelt TANDEM_PROVIDER) neither runs in the tour nor stops it.
    pub fn config(&self, overrides: &Overrides) -> Result<Config, ConfigError> {
        let own = Overrides {
            without_config_file: true,
            ..overrides.clone()
        };
        let home = self.folder.to_string_lossy().into_owned();
        let data = self.folder.join("data").to_string_lossy().into_owned();
        Config::resolve(&own, &|name| match name {
            "HOME" | "USERPROFILE" => Some(home.clone()),
            "TANDEM_HOME" => Some(data.clone()),
            _ => None,
        })
    }

    /// Removes the tour's folder (after it failed).
    pub fn remove(&self) -> io::Result<()> {
        std::fs::remove_dir_all(&self.folder)
    }

    /// What the user is told before the tour.
    pub fn before(&self) -> String {
        format!(
            "tandem demo: a scripted model (no server, no key) works on a copy of a small project in {}; the prompt: \"{PROMPT}\"\n",
            self.project.display()
        )
    }

    /// What the user is told after it.
    pub fn after(&self) -> String {
        format!(
            "\ntandem demo: done. The project it changed is in {} (src/lib.rs has the new test); delete {} when you are done. Next: `{} login` connects a real model.\n",
            self.project.display(),
            self.folder.display(),
            crate::config::invocation::command()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn the_project_is_the_fixture_file_for_file_and_the_command_is_the_readme_tour() {
        let dir = tempfile::tempdir().unwrap();
        let demo = Demo::prepare_in(dir.path().join("tandem-demo-x")).unwrap();
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/workspaces/small");
        let mut listed = Vec::new();
        for entry in walk(&fixture) {
            let name = entry.strip_prefix(&fixture).unwrap().to_path_buf();
            assert_eq!(
                std::fs::read(demo.project.join(&name)).unwrap(),
                std::fs::read(&entry).unwrap(),
                "{}",
                name.display()
            );
            listed.push(name);
        }
        assert_eq!(
            listed.len(),
            PROJECT.len(),
            "every fixture file is built in"
        );
        let cli = demo.exec_command(false).unwrap();
        let Some(crate::cli::Command::Exec(args)) = &cli.command else {
            panic!("not an exec: {cli:?}");
        };
        assert_eq!(args.cwd.as_deref(), Some(demo.project.as_path()));
        assert_eq!(args.prompt, [PROMPT]);
        let overrides = cli.overrides();
        assert_eq!(overrides.replay.as_deref(), Some(demo.tour.as_path()));
        assert_eq!(overrides.mode.as_deref(), Some("full-access"));
    }

    fn walk(dir: &Path) -> Vec<PathBuf> {
        let mut files = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                files.extend(walk(&path));
            } else {
                files.push(path);
            }
        }
        files
    }
}
