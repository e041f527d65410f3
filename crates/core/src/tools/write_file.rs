//! `write_file`: create or replace a file; the editor shows the change as a diff.

use std::path::PathBuf;

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;

use super::files::{self, EditTarget, ReadError};
use super::{Call, PathBase, Prepared, ToolEnv, ToolError, ToolOutput, TypedTool};
use crate::types::{ToolContent, ToolKind};

/// Arguments of `write_file`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WriteFileArgs {
    /// File path, absolute or relative to the working directory.
    pub(crate) path: String,
    /// The complete new content of the file.
    pub(crate) content: String,
}

pub(crate) struct WriteFile;

impl TypedTool for WriteFile {
    type Args = WriteFileArgs;
    const NAME: &'static str = "write_file";
    const KIND: ToolKind = ToolKind::Edit;
    const LABEL: &'static str = "Write file";
    fn description(&self) -> &str {
        "Create a file or replace its whole content. Prefer edit_file for changes to existing files."
    }
    fn prepare(&self, args: WriteFileArgs, place: &PathBase) -> Result<Prepared, ToolError> {
        let target = EditTarget::new(place, &args.path);
        let call = Box::new(WriteCall {
            path: target.path.clone(),
            shown: target.shown.clone(),
            written: args.content.clone(),
            content: args.content,
            old: None,
        });
        Ok(target.changing("Write", call))
    }
}

struct WriteCall {
    path: PathBuf,
    shown: String,
    content: String,
    /// `Some(None)` once previewed and the file did not exist.
    old: Option<Option<String>>,
    /// What is written: the content in the old file's line ends and byte order mark.
    written: String,
}

impl WriteCall {
    fn diff(&self) -> Vec<ToolContent> {
        files::diff(
            &self.path,
            self.old.clone().flatten().as_deref(),
            &self.written,
        )
    }
}

impl Call for WriteCall {
    fn preview<'a>(
        &'a mut self,
        env: &'a ToolEnv,
    ) -> BoxFuture<'a, Result<Vec<ToolContent>, ToolOutput>> {
        Box::pin(async move {
            let old = match files::read_document(env, &self.path).await {
                Ok(doc) => {
                    self.written = doc.adopt(&self.content);
                    Some(doc.render(&doc.text))
                }
                Err(ReadError::Missing) => None,
                // Read, and so compared, once the write is allowed.
                Err(ReadError::Refused(_)) => return Ok(vec![files::unseen(&self.shown)]),
                Err(ReadError::Binary(_)) => {
                    return Err(ToolOutput::error(format!(
                        "{} is a binary file; write_file only writes text",
                        self.shown
                    )));
                }
                Err(e) => return Err(ToolOutput::error(e.describe(&self.shown))),
            };
            self.old = Some(old);
            Ok(self.diff())
        })
    }

    fn run(mut self: Box<Self>, env: ToolEnv) -> BoxFuture<'static, ToolOutput> {
        Box::pin(async move {
            if self.old.is_none()
                && let Err(failure) = self.preview(&env).await
            {
                return failure;
            }
            if let Err(e) = files::write(
                &env,
                &self.path,
                self.old.clone().flatten().as_deref(),
                &self.written,
            )
            .await
            {
                return ToolOutput::error(format!("cannot write {}: {e}", self.shown));
            }
            let lines = self.content.lines().count();
            let verb = if matches!(self.old, Some(Some(_))) {
                "Replaced"
            } else {
                "Created"
            };
            ToolOutput {
                model: format!("{verb} {} ({lines} lines).", self.shown),
                images: Vec::new(),
                content: self.diff(),
                failed: false,
                title: None,
                keeps_running: false,
            }
        })
    }
}
