//! `apply_patch`: the V4A patch format GPT models are trained on, offered to them instead of
//! `edit_file` and `write_file`. One call can add, change, move and delete several files;
//! it applies to every file or to none, asks once for all of them, and shows a diff per file.

use std::collections::HashMap;
use std::path::PathBuf;

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;

use super::files::{self, EditTarget, ReadError};
use super::{Call, PathBase, Prepared, ToolEnv, ToolError, ToolOutput, TypedTool};
use crate::edit::v4a::{self, Change, FileOp, Outcome, Patch};
use crate::edit::{Document, Tier};
use crate::types::{Access, Location, ToolContent, ToolKind};

/// Arguments of `apply_patch`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ApplyPatchArgs {
    /// The whole patch, from `*** Begin Patch` to `*** End Patch`.
    pub(crate) input: String,
}

pub(crate) struct ApplyPatch;

const DESCRIPTION: &str = "Edit files with a patch. The patch is plain text:
*** Begin Patch
*** Update File: path/to/file.py
@@ def greet():
-    print(\"Hi\")
+    print(\"Hello\")
*** End Patch
Operations: `*** Add File: <path>` (every line of the new file after `+`), `*** Delete File: <path>`, `*** Update File: <path>` (optionally followed by `*** Move to: <new path>`). In an update, each change starts with `@@`, optionally followed by a line (a class or function) that comes before it; then lines starting with ` ` (unchanged context, usually 3 lines before and after), `-` (removed) and `+` (added). Use several `@@` lines to narrow down to a place when the context alone is not unique, and `*** End of File` after a change at the very end. Paths are relative to the working directory. The patch applies to every file or to none.";

impl TypedTool for ApplyPatch {
    type Args = ApplyPatchArgs;
    const NAME: &'static str = "apply_patch";
    const KIND: ToolKind = ToolKind::Edit;
    const LABEL: &'static str = "Apply patch";
    fn description(&self) -> &str {
        DESCRIPTION
    }
    fn prepare(&self, args: ApplyPatchArgs, place: &PathBase) -> Result<Prepared, ToolError> {
        let patch = v4a::parse(&args.input).map_err(|e| ToolError::Refused(e.to_string()))?;
        let mut targets: HashMap<String, EditTarget> = HashMap::new();
        let mut order: Vec<PathBuf> = Vec::new();
        for op in &patch.ops {
            let mut names = vec![op.path().to_string()];
            if let FileOp::Update {
                move_to: Some(to), ..
            } = op
            {
                names.push(to.clone());
            }
            for name in names {
                let target = EditTarget::new(place, &name);
                if let Some((other, _)) = targets
                    .iter()
                    .find(|(n, t)| **n != name && t.path == target.path)
                {
                    return Err(ToolError::Refused(format!(
                        "`{other}` and `{name}` are the same file; put all its changes in one `*** Update File`"
                    )));
                }
                if !order.contains(&target.path) {
                    order.push(target.path.clone());
                }
                targets.insert(name, target);
            }
        }
        let shown: Vec<&str> = order
            .iter()
            .filter_map(|p| targets.values().find(|t| &t.path == p))
            .map(|t| t.shown.as_str())
            .collect();
        let title = match shown.as_slice() {
            [one] => format!("Patch {one}"),
            many => format!("Patch {} files: {}", many.len(), many.join(", ")),
        };
        Ok(Prepared {
            title: title.clone(),
            locations: order
                .iter()
                .map(|path| Location {
                    path: path.clone(),
                    line: None,
                })
                .collect(),
            access: Access::EditMany(order),
            call: Box::new(PatchCall {
                title,
                patch,
                targets,
                planned: None,
            }),
        })
    }
}

struct PatchCall {
    patch: Patch,
    /// The title `prepare` gave.
    title: String,
    /// Each path as the patch names it, resolved.
    targets: HashMap<String, EditTarget>,
    /// Each file's outcome, once previewed.
    planned: Option<Vec<Outcome>>,
}

/// How to put one file back if a later write fails: what it holds now, and what it held.
enum Undo {
    Restore(PathBuf, Option<String>, String),
    Remove(PathBuf, String),
}

impl PatchCall {
    fn target(&self, name: &str) -> (PathBuf, String) {
        match self.targets.get(name) {
            Some(t) => (t.path.clone(), t.shown.clone()),
            None => (PathBuf::from(name), name.to_string()),
        }
    }

    fn diffs(&self) -> Vec<ToolContent> {
        let Some(outcomes) = &self.planned else {
            return Vec::new();
        };
        let mut content = Vec::new();
        for o in outcomes {
            let (path, shown) = self.target(&o.path);
            match (&o.change, &o.move_to) {
                (Change::Delete, _) => {
                    content.extend(files::diff(&path, o.before.as_deref(), ""));
                    content.push(ToolContent::Text {
                        text: format!("Deletes {shown}."),
                    });
                }
                (_, Some(to)) => {
                    let (to_path, to_shown) = self.target(to);
                    let after = o.after.as_deref().unwrap_or_default();
                    content.extend(files::diff(&to_path, o.before.as_deref(), after));
                    content.push(ToolContent::Text {
                        text: format!("Moves {shown} to {to_shown}."),
                    });
                }
                _ => {
                    let after = o.after.as_deref().unwrap_or_default();
                    content.extend(files::diff(&path, o.before.as_deref(), after));
                }
            }
        }
        content
    }

    /// The files as they are now, each path as the patch names it; or a file that could not
    /// be read (as titles show it) and why.
    async fn read_all(
        &self,
        env: &ToolEnv,
    ) -> Result<HashMap<String, Option<Document>>, (String, ReadError)> {
        let mut docs = HashMap::new();
        for (name, target) in &self.targets {
            let doc = match files::read_document(env, &target.path).await {
                Ok(doc) => Some(doc),
                Err(ReadError::Missing) => None,
                Err(e) => return Err((target.shown.clone(), e)),
            };
            docs.insert(name.clone(), doc);
        }
        Ok(docs)
    }

    /// What the model reads once every file is written.
    fn report(&self, outcomes: &[Outcome]) -> String {
        let mut out = String::from("Success. Updated the following files:");
        for o in outcomes {
            let (_, shown) = self.target(&o.path);
            let line = match (&o.change, &o.move_to) {
                (Change::Add, _) => format!("A {shown}"),
                (Change::Delete, _) => format!("D {shown}"),
                (Change::Update, Some(to)) => format!("M {shown} -> {}", self.target(to).1),
                (Change::Update, None) => format!("M {shown}"),
            };
            out.push('\n');
            out.push_str(&line);
            for (hunk, tier) in &o.lenient {
                if let Some(note) = tier.note() {
                    out.push_str(&format!(" (hunk {hunk} {note})"));
                }
            }
        }
        out
    }

    /// Writes every outcome in order; on a failure, puts back what was already written.
    async fn write_all(&self, env: &ToolEnv, outcomes: &[Outcome]) -> Result<(), String> {
        let mut undo: Vec<Undo> = Vec::new();
        for o in outcomes {
            let (path, shown) = self.target(&o.path);
            let step = self.write_one(env, o, &path, &mut undo).await;
            if let Err(e) = step {
                for u in undo.into_iter().rev() {
                    let put_back = match u {
                        Undo::Restore(path, now, text) => {
                            files::write(env, &path, now.as_deref(), &text).await
                        }
                        Undo::Remove(path, now) => files::remove(env, &path, Some(&now)).await,
                    };
                    if let Err(again) = put_back {
                        tracing::warn!("could not undo part of a failed patch: {again}");
                    }
                }
                return Err(format!(
                    "cannot write {shown}: {e}; the files the patch had already changed were put back"
                ));
            }
        }
        Ok(())
    }

    async fn write_one(
        &self,
        env: &ToolEnv,
        o: &Outcome,
        path: &std::path::Path,
        undo: &mut Vec<Undo>,
    ) -> Result<(), String> {
        let before = o.before.as_deref();
        let restore = |path: &std::path::Path, now: Option<&String>| match (&o.before, now) {
            (Some(text), now) => Undo::Restore(path.to_path_buf(), now.cloned(), text.clone()),
            (None, Some(now)) => Undo::Remove(path.to_path_buf(), now.clone()),
            (None, None) => Undo::Remove(path.to_path_buf(), String::new()),
        };
        match (&o.after, &o.move_to) {
            (None, _) => {
                files::remove(env, path, before).await?;
                undo.push(restore(path, None));
            }
            (Some(after), Some(to)) => {
                let (to_path, _) = self.target(to);
                files::write(env, &to_path, None, after).await?;
                undo.push(Undo::Remove(to_path, after.clone()));
                files::remove(env, path, before).await?;
                undo.push(restore(path, None));
            }
            (Some(after), None) => {
                files::write(env, path, before, after).await?;
                undo.push(restore(path, Some(after)));
            }
        }
        Ok(())
    }
}

impl Call for PatchCall {
    fn preview<'a>(
        &'a mut self,
        env: &'a ToolEnv,
    ) -> BoxFuture<'a, Result<Vec<ToolContent>, ToolOutput>> {
        Box::pin(async move {
            let docs = match self.read_all(env).await {
                Ok(docs) => docs,
                // Read, and so planned, once the patch is allowed.
                Err((shown, ReadError::Refused(_))) => return Ok(vec![files::unseen(&shown)]),
                Err((shown, e)) => return Err(ToolOutput::error(e.describe(&shown))),
            };
            let outcomes = v4a::apply(&self.patch, &docs, Tier::Punctuation).map_err(|e| {
                ToolOutput::error(format!(
                    "the patch does not apply: {e}. Nothing was changed."
                ))
            })?;
            self.planned = Some(outcomes);
            Ok(self.diffs())
        })
    }

    fn title(&self) -> Option<String> {
        let tier = self.planned.as_ref()?.iter().map(|o| o.tier).max()?;
        tier.note().map(|note| format!("{} ({note})", self.title))
    }

    fn run(mut self: Box<Self>, env: ToolEnv) -> BoxFuture<'static, ToolOutput> {
        Box::pin(async move {
            if self.planned.is_none()
                && let Err(failure) = self.preview(&env).await
            {
                return failure;
            }
            let Some(outcomes) = self.planned.clone() else {
                return ToolOutput::error("the patch was not prepared");
            };
            if let Err(e) = self.write_all(&env, &outcomes).await {
                return ToolOutput::error(e);
            }
            ToolOutput {
                model: self.report(&outcomes),
                images: Vec::new(),
                content: self.diffs(),
                failed: false,
                title: self.title(),
                keeps_running: false,
            }
        })
    }
}
