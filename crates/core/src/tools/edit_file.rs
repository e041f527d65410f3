//! `edit_file`: replaces quoted text in a file, one replacement or a list applied in order
//! (all or none). Quotes are found by the tiered matcher (`crate::edit`): exact first, then
//! more leniently, never by similarity; the title and the result say which tier matched.
//! The editor shows the change as one diff before and after approval.

use std::path::PathBuf;

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;

use super::files::{self, EditTarget, ReadError};
use super::{Call, PathBase, Prepared, ToolEnv, ToolError, ToolOutput, TypedTool};
use crate::edit::{self, Applied, Replacement, Tier};
use crate::types::{ToolContent, ToolKind};

/// Arguments of `edit_file`: one replacement, or `edits`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct EditFileArgs {
    /// File path, absolute or relative to the working directory.
    pub(crate) path: String,
    /// The text to replace, copied from the file with enough surrounding lines to be unique.
    #[serde(default)]
    pub(crate) old_string: Option<String>,
    /// The text to put in its place.
    #[serde(default)]
    pub(crate) new_string: Option<String>,
    /// Replace every place `old_string` is found instead of requiring exactly one.
    #[serde(default)]
    pub(crate) replace_all: bool,
    /// Several replacements in this file, applied in order, all or none (instead of
    /// `old_string`/`new_string`).
    #[serde(default)]
    pub(crate) edits: Vec<OneEdit>,
}

/// One replacement of a multi-edit.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct OneEdit {
    /// The text to replace.
    pub(crate) old_string: String,
    /// The text to put in its place.
    pub(crate) new_string: String,
    /// Replace every place it is found.
    #[serde(default)]
    pub(crate) replace_all: bool,
}

impl EditFileArgs {
    /// The replacements asked for, or why the arguments do not say.
    fn replacements(self) -> Result<Vec<Replacement>, String> {
        let single = self.old_string.is_some() || self.new_string.is_some();
        match (single, self.edits.is_empty()) {
            (true, false) => {
                Err("give either old_string and new_string, or edits, not both".into())
            }
            (false, true) => {
                Err("nothing to edit: give old_string and new_string (or an edits list)".into())
            }
            (false, false) => Ok(self
                .edits
                .into_iter()
                .map(|e| Replacement {
                    old: e.old_string,
                    new: e.new_string,
                    all: e.replace_all,
                })
                .collect()),
            (true, true) => match (self.old_string, self.new_string) {
                (Some(old), Some(new)) => Ok(vec![Replacement {
                    old,
                    new,
                    all: self.replace_all,
                }]),
                (None, _) => Err("old_string is missing".into()),
                (_, None) => Err("new_string is missing (give \"\" to delete the text)".into()),
            },
        }
    }
}

pub(crate) struct EditFile;

impl TypedTool for EditFile {
    type Args = EditFileArgs;
    const NAME: &'static str = "edit_file";
    const KIND: ToolKind = ToolKind::Edit;
    const LABEL: &'static str = "Edit file";
    fn description(&self) -> &str {
        "Replace text in a file. Copy `old_string` from the file as it is now, with enough surrounding lines to match exactly one place (or set `replace_all`). For several changes to one file, pass `edits`: a list of {old_string, new_string} applied in order, all or none. A quote that differs from the file only in whitespace, indentation or typographic quotes still matches, and the result says so."
    }
    fn prepare(&self, args: EditFileArgs, place: &PathBase) -> Result<Prepared, ToolError> {
        let target = EditTarget::new(place, &args.path);
        let edits = args
            .replacements()
            .map_err(|message| ToolError::Arguments {
                tool: Self::NAME,
                message,
            })?;
        let call = Box::new(EditCall {
            path: target.path.clone(),
            shown: target.shown.clone(),
            edits,
            planned: None,
        });
        Ok(target.changing("Edit", call))
    }
}

struct EditCall {
    path: PathBuf,
    shown: String,
    edits: Vec<Replacement>,
    /// The file before and after, and how each replacement landed, once previewed.
    planned: Option<Planned>,
}

struct Planned {
    before: String,
    after: String,
    applied: Applied,
}

impl EditCall {
    fn diff(&self) -> Vec<ToolContent> {
        match &self.planned {
            Some(p) => files::diff(&self.path, Some(&p.before), &p.after),
            None => Vec::new(),
        }
    }

    /// What the model reads once the edit is made.
    fn report(&self, applied: &Applied) -> String {
        let place = |i: usize| {
            let landed = applied.landed[i];
            let mut text = format!(
                "at line {} ({} replacement{})",
                landed.line,
                landed.count,
                if landed.count == 1 { "" } else { "s" }
            );
            if let Some(note) = landed.tier.note() {
                text.push_str(&format!(", {note}"));
            }
            text
        };
        let mut out = if applied.landed.len() == 1 {
            format!("Edited {} {}.", self.shown, place(0))
        } else {
            let each: Vec<String> = (0..applied.landed.len())
                .map(|i| format!("{}: {}", i + 1, place(i)))
                .collect();
            format!(
                "Edited {} with {} edits ({}).",
                self.shown,
                applied.landed.len(),
                each.join("; ")
            )
        };
        if applied.tier().reindents() {
            out.push_str(" The new text was indented like the lines it replaced.");
        }
        if applied.tier() > Tier::Exact {
            out.push_str(" Read the changed lines if you need them exactly.");
        }
        out
    }
}

impl Call for EditCall {
    fn preview<'a>(
        &'a mut self,
        env: &'a ToolEnv,
    ) -> BoxFuture<'a, Result<Vec<ToolContent>, ToolOutput>> {
        Box::pin(async move {
            let doc = match files::read_document(env, &self.path).await {
                Ok(doc) => doc,
                // Read, and so planned, once the edit is allowed.
                Err(ReadError::Refused(_)) => return Ok(vec![files::unseen(&self.shown)]),
                Err(ReadError::Missing) => {
                    return Err(ToolOutput::error(format!(
                        "{} does not exist; use write_file to create it",
                        self.shown
                    )));
                }
                Err(e) => return Err(ToolOutput::error(e.describe(&self.shown))),
            };
            let applied = edit::apply_edits(&doc.text, &self.edits, Tier::Punctuation)
                .map_err(|(i, e)| ToolOutput::error(self.refusal(i, &e)))?;
            self.planned = Some(Planned {
                before: doc.render(&doc.text),
                after: doc.render(&applied.text),
                applied,
            });
            Ok(self.diff())
        })
    }

    fn title(&self) -> Option<String> {
        let tier = self.planned.as_ref()?.applied.tier();
        Some(titled(&self.shown, tier))
    }

    fn run(mut self: Box<Self>, env: ToolEnv) -> BoxFuture<'static, ToolOutput> {
        Box::pin(async move {
            if self.planned.is_none()
                && let Err(failure) = self.preview(&env).await
            {
                return failure;
            }
            let Some(planned) = &self.planned else {
                return ToolOutput::error("edit was not prepared");
            };
            if let Err(e) =
                files::write(&env, &self.path, Some(&planned.before), &planned.after).await
            {
                return ToolOutput::error(format!("cannot write {}: {e}", self.shown));
            }
            ToolOutput {
                model: self.report(&planned.applied),
                images: Vec::new(),
                content: self.diff(),
                failed: false,
                title: Some(titled(&self.shown, planned.applied.tier())),
                keeps_running: false,
            }
        })
    }
}

impl EditCall {
    /// What the model reads when replacement `i` does not apply.
    fn refusal(&self, i: usize, error: &edit::EditError) -> String {
        if self.edits.len() == 1 {
            format!("{}: {error}", self.shown)
        } else {
            format!(
                "{}: edit {} of {}: {error}. None of the edits was made.",
                self.shown,
                i + 1,
                self.edits.len()
            )
        }
    }
}

/// "Edit src/a.rs", with how leniently it matched.
fn titled(shown: &str, tier: Tier) -> String {
    match tier.note() {
        Some(note) => format!("Edit {shown} ({note})"),
        None => format!("Edit {shown}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(json: serde_json::Value) -> Result<Vec<Replacement>, String> {
        serde_json::from_value::<EditFileArgs>(json)
            .map_err(|e| e.to_string())?
            .replacements()
    }

    #[test]
    fn one_replacement_or_a_list_but_not_both() {
        let one = args(serde_json::json!({"path": "a", "old_string": "x", "new_string": "y"}));
        assert_eq!(one.unwrap().len(), 1);
        let list = args(serde_json::json!({"path": "a", "edits": [
            {"old_string": "x", "new_string": "y"},
            {"old_string": "z", "new_string": "w", "replace_all": true}
        ]}))
        .unwrap();
        assert!(list[1].all);
        let both = args(
            serde_json::json!({"path": "a", "old_string": "x", "new_string": "y",
            "edits": [{"old_string": "x", "new_string": "y"}]}),
        );
        assert!(both.unwrap_err().contains("not both"));
        assert!(
            args(serde_json::json!({"path": "a"}))
                .unwrap_err()
                .contains("nothing to edit")
        );
        assert!(
            args(serde_json::json!({"path": "a", "old_string": "x"}))
                .unwrap_err()
                .contains("new_string is missing")
        );
    }
}
