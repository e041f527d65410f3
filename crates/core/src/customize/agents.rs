//! Subagent definitions: Markdown files with front matter (`name`, `description`, `tools`,
//! `model`) whose body is the subagent's system prompt, in `.tandem/agents/` (project) and the
//! user's config directory (`agents/`), plus the built-in `general`.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::frontmatter;

/// The name of the built-in subagent.
pub(crate) const GENERAL: &str = "general";

/// One subagent the `task` tool can run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AgentDef {
    /// The name the model passes to `task`.
    pub(crate) name: String,
    /// When to use it, for the model.
    pub(crate) description: String,
    /// The tools it may use (`None`: every tool of the session but `task`).
    pub(crate) tools: Option<Vec<String>>,
    /// The model it asks (`None`: the session's current model).
    pub(crate) model: Option<String>,
    /// Its system prompt.
    pub(crate) prompt: String,
    /// Where it was defined (`None` for the built-in).
    pub(crate) source: Option<PathBuf>,
}

/// `tools` may be a YAML list or a comma-separated string.
#[derive(Deserialize)]
#[serde(untagged)]
enum ToolList {
    List(Vec<String>),
    Text(String),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Front {
    name: Option<String>,
    description: Option<String>,
    tools: Option<ToolList>,
    model: Option<String>,
}

/// The built-in general-purpose subagent.
pub(crate) fn general() -> AgentDef {
    AgentDef {
        name: GENERAL.into(),
        description: "General-purpose agent for researching a question, searching the code or \
                      carrying out a multi-step task on its own; returns a report."
            .into(),
        tools: None,
        model: None,
        prompt: "You are a subagent of tandem, a coding agent working in the user's editor. \
                 Another agent gave you the task below. Work on it on your own with the tools; \
                 you cannot ask questions. When you are done, answer with a concise, complete \
                 report of what you found or changed (with file paths): the other agent sees only \
                 your final answer."
            .into(),
        source: None,
    }
}

/// The built-in agent, then the user's, then the project's; a later definition replaces an
/// earlier one of the same name. Invalid files are reported on stderr and skipped.
pub(crate) fn discover(cwd: &Path, config_dir: &Path) -> Vec<AgentDef> {
    let mut agents = vec![general()];
    for file in super::markdown_files(cwd, config_dir, "agents") {
        let path = &file.path;
        match read(&file) {
            Ok(agent) => {
                agents.retain(|a| a.name != agent.name);
                agents.push(agent);
            }
            Err(why) => tracing::warn!(path = %path.display(), "subagent skipped: {why}"),
        }
    }
    agents
}

fn read(file: &super::Markdown) -> Result<AgentDef, String> {
    let path = &file.path;
    let text = file.read().map_err(|e| format!("cannot read it: {e}"))?;
    let (front, body) = frontmatter::parse::<Front>(&text).map_err(|e| e.to_string())?;
    let name = front
        .name
        .or_else(|| path.file_stem().map(|s| s.to_string_lossy().to_string()))
        .unwrap_or_default();
    if name.is_empty()
        || name.len() > 64
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(format!(
            "the name `{name}` must be 1-64 letters, digits, `-` or `_`"
        ));
    }
    let description = front
        .description
        .map(|d| d.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|d| !d.is_empty())
        .ok_or("no `description` in the front matter")?;
    let prompt = body.trim().to_string();
    if prompt.is_empty() {
        return Err("the body (the subagent's system prompt) is empty".into());
    }
    let tools = front.tools.map(|t| {
        let list = match t {
            ToolList::List(list) => list,
            ToolList::Text(text) => text.split(',').map(str::to_string).collect(),
        };
        list.into_iter()
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty())
            .collect()
    });
    Ok(AgentDef {
        name,
        description,
        tools,
        model: front.model.filter(|m| !m.trim().is_empty()),
        prompt,
        source: Some(path.to_path_buf()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_then_user_then_project() {
        let tmp = tempfile::tempdir().unwrap();
        let config = tmp.path().join("config");
        let cwd = tmp.path().join("p");
        std::fs::create_dir_all(config.join("agents")).unwrap();
        std::fs::create_dir_all(cwd.join(".tandem/agents")).unwrap();
        std::fs::write(
            config.join("agents/reviewer.md"),
            "---\ndescription: user reviewer\n---\nReview.\n",
        )
        .unwrap();
        std::fs::write(
            cwd.join(".tandem/agents/reviewer.md"),
            "---\nname: reviewer\ndescription: Reviews code\ntools: read_file, grep\nmodel: small\n---\nYou review code.\n",
        )
        .unwrap();
        std::fs::write(
            cwd.join(".tandem/agents/lister.md"),
            "---\ndescription: Lists\ntools: [list_dir]\n---\nList things.\n",
        )
        .unwrap();
        std::fs::write(cwd.join(".tandem/agents/broken.md"), "no front matter").unwrap();
        std::fs::write(
            cwd.join(".tandem/agents/typo.md"),
            "---\ndescription: d\ntool: [x]\n---\nBody\n",
        )
        .unwrap();
        let agents = discover(&cwd, &config);
        let names: Vec<_> = agents.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["general", "lister", "reviewer"]);
        let reviewer = &agents[2];
        assert_eq!(reviewer.description, "Reviews code");
        assert_eq!(
            reviewer.tools.as_deref(),
            Some(&["read_file".to_string(), "grep".to_string()][..])
        );
        assert_eq!(reviewer.model.as_deref(), Some("small"));
        assert_eq!(reviewer.prompt, "You review code.");
        assert_eq!(
            agents[1].tools.as_deref(),
            Some(&["list_dir".to_string()][..])
        );
    }
}
