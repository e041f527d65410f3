//! What users add to tandem without changing it: skills, subagents and hooks, gathered for
//! each session when it opens.

pub(crate) mod agents;
pub(crate) mod frontmatter;
pub(crate) mod hooks;
pub(crate) mod skills;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures::FutureExt;
use futures::future::{BoxFuture, Shared};
use serde_json::json;

use crate::config::Config;
use crate::customize::hooks::{Event, SessionHooks};

/// A session's skills, subagents, hooks, and the context its `session_start` hooks added.
pub(crate) struct Extras {
    /// Its skills.
    pub(crate) skills: Arc<skills::Catalog>,
    /// The subagents the `task` tool can run.
    pub(crate) agents: Vec<agents::AgentDef>,
    /// Its hooks.
    pub(crate) hooks: SessionHooks,
    /// What the `session_start` hooks added; the first turn waits for them.
    started: Shared<BoxFuture<'static, Option<String>>>,
}

impl Extras {
    /// Gathers the extras of a session `id` in `cwd` (opened as `source`: `new`, `load`,
    /// `resume` or `fork`) and starts its `session_start` hooks.
    pub(crate) fn open(
        config: &Config,
        id: &str,
        cwd: &Path,
        transcript: &Path,
        source: &str,
    ) -> Self {
        let skills = Arc::new(skills::Catalog::discover(&skill_dirs(config, cwd)));
        let hooks = SessionHooks::new(
            config.hooks.clone(),
            config.shell.clone(),
            id,
            cwd,
            transcript,
        );
        let started = {
            let hooks = hooks.clone();
            let source = source.to_string();
            async move {
                let said = hooks
                    .run(Event::SessionStart, None, json!({ "source": source }))
                    .await;
                said.context_text()
            }
            .boxed()
            .shared()
        };
        if hooks.hooks.any(Event::SessionStart) {
            // Run now, not at the first prompt: a hook may prepare the workspace.
            tokio::spawn(started.clone());
        }
        Self {
            skills,
            agents: agents::discover(cwd, &config.config_dir),
            hooks,
            started,
        }
    }

    /// Waits for the `session_start` hooks (each bounded by its timeout).
    pub(crate) async fn started(&self) {
        self.started.clone().await;
    }

    /// What the `session_start` hooks added, once they finished.
    pub(crate) fn start_context(&self) -> Option<&str> {
        self.started.peek().and_then(|c| c.as_deref())
    }

    /// Folders whose files the model may read without asking: the skills'.
    pub(crate) fn read_roots(&self) -> impl Iterator<Item = &Path> {
        self.skills.skills().iter().map(|s| s.dir.as_path())
    }
}

/// Where a session's skills are looked for, first found first: the project's
/// `.tandem/skills/`, the folders in the config's `skill_dirs`, the user's `skills/`.
pub(crate) fn skill_dirs(config: &Config, cwd: &Path) -> Vec<PathBuf> {
    let mut dirs = vec![cwd.join(".tandem").join("skills")];
    dirs.extend(config.skill_dirs.iter().cloned());
    dirs.push(config.config_dir.join("skills"));
    dirs
}

/// The Markdown files of `subdir` (`agents`, `commands`) in the user's config directory, then
/// in the project's `.tandem/`, each folder's sorted by name: the order in which a later
/// definition replaces an earlier one of the same name. Only regular files are listed (a FIFO
/// named `x.md` would block the read); a missing folder lists nothing.
pub(crate) fn markdown_files(cwd: &Path, config_dir: &Path, subdir: &str) -> Vec<Markdown> {
    let project = cwd.join(".tandem").join(subdir);
    let mut all = Vec::new();
    for (dir, confined) in [
        (config_dir.join(subdir), None),
        (project.clone(), Some(project)),
    ] {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut files: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "md") && p.is_file())
            .collect();
        files.sort();
        all.extend(files.into_iter().map(|path| Markdown {
            path,
            confined: confined.clone(),
        }));
    }
    all
}

/// A Markdown definition [`markdown_files`] found.
#[derive(Debug, Clone)]
pub(crate) struct Markdown {
    /// Where it was found (its name is the definition's).
    pub(crate) path: PathBuf,
    /// The project's folder it must lie in; `None` for the user's own (which may well be
    /// links into a dotfiles repository).
    confined: Option<PathBuf>,
}

impl Markdown {
    /// Its text. A project's file is read only when it really lies in its folder (a cloned
    /// repository could link one to the user's keys, whose text would then reach the model):
    /// resolved once, checked, and that very path read with no link followed.
    pub(crate) fn read(&self) -> std::io::Result<String> {
        let real = crate::platform::canonical(&self.path)?;
        if let Some(folder) = &self.confined {
            let top = crate::platform::canonical(folder)?;
            if !crate::platform::same_or_inside(&real, &top) {
                return Err(std::io::Error::other(format!(
                    "it leads outside {} (to {})",
                    folder.display(),
                    real.display()
                )));
            }
        }
        let bytes = crate::local::read_now(&real)?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }
}
