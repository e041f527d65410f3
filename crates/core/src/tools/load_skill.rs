//! `load_skill`: a skill's instructions (its `SKILL.md` without the front matter) and the
//! paths of its other files, which the model then reads with `read_file`.

use std::sync::Arc;

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;

use super::{Call, PathBase, Prepared, ToolEnv, ToolError, ToolOutput, TypedTool};
use crate::customize::skills::{self, Catalog, FILE, Skill};
use crate::types::Access;
use crate::types::ToolKind;

/// Arguments of `load_skill`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct LoadSkillArgs {
    /// The skill's name, as listed in the system prompt.
    pub(crate) name: String,
}

/// `load_skill`: a skill's instructions and the list of its other files.
pub(crate) struct LoadSkill {
    catalog: Arc<Catalog>,
}

impl LoadSkill {
    /// The tool over a session's skills.
    pub(crate) fn new(catalog: Arc<Catalog>) -> Self {
        Self { catalog }
    }
}

impl TypedTool for LoadSkill {
    type Args = LoadSkillArgs;
    const NAME: &'static str = "load_skill";
    const KIND: ToolKind = ToolKind::Read;
    const LABEL: &'static str = "Load skill";
    fn description(&self) -> &str {
        "Load a skill by name (skills are listed in the system prompt). Returns the skill's \
         instructions and the paths of its other files (scripts, references, templates), which \
         you can read with read_file."
    }
    fn prepare(&self, args: LoadSkillArgs, _place: &PathBase) -> Result<Prepared, ToolError> {
        let skill = self.catalog.get(&args.name).cloned().ok_or_else(|| {
            let names: Vec<&str> = self
                .catalog
                .skills()
                .iter()
                .map(|s| s.name.as_str())
                .collect();
            ToolError::Refused(format!(
                "unknown skill `{}`; the skills are: {}",
                args.name,
                names.join(", ")
            ))
        })?;
        Ok(Prepared {
            title: format!("Load skill `{}`", skill.name),
            locations: vec![crate::types::Location {
                path: skill.dir.join(FILE),
                line: None,
            }],
            // The user installed the skill: reading it needs no permission.
            access: Access::Free,
            call: Box::new(LoadCall { skill }),
        })
    }
}

struct LoadCall {
    skill: Skill,
}

impl Call for LoadCall {
    fn run(self: Box<Self>, _env: ToolEnv) -> BoxFuture<'static, ToolOutput> {
        Box::pin(async move {
            let skill = self.skill;
            let file = skill.dir.join(FILE);
            // Opened exactly: checked to lie in the skill's folder when it was found, and no
            // link planted since is followed.
            let real = crate::platform::canonical(&file)
                .ok()
                .filter(|real| real.starts_with(&skill.dir))
                .unwrap_or_else(|| file.clone());
            let text = match crate::local::read_text(&real).await {
                Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
                Err(e) => return ToolOutput::error(format!("cannot read {}: {e}", file.display())),
            };
            let body = crate::customize::frontmatter::split(&text).1.trim();
            let listed = tokio::task::spawn_blocking({
                let skill = skill.clone();
                move || skills::files(&skill)
            })
            .await
            .unwrap_or_default();
            let mut out = format!(
                "# Skill `{}`\n\nFolder: {}\n\n{body}\n",
                skill.name,
                skill.dir.display()
            );
            if listed.is_empty() {
                out.push_str("\nThe skill has no other files.\n");
            } else {
                out.push_str(
                    "\nOther files of this skill (read them with read_file when the instructions call for them):\n",
                );
                for path in listed {
                    out.push_str(&format!("- {}\n", path.display()));
                }
            }
            ToolOutput::text(out)
        })
    }
}
