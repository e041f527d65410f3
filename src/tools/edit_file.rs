//! `edit_file`: exact string replacement; fails back to the model when the text is absent
//! or ambiguous. The editor shows the change as a diff before and after approval.

use std::path::PathBuf;

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;

use super::files::{self, ReadError, Target};
use super::{Call, Place, Prepared, ToolEnv, ToolError, ToolOutput, TypedTool};
use crate::types::{ToolContent, ToolKind};

/// Arguments of `edit_file`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditFileArgs {
    /// File path, absolute or relative to the working directory.
    pub path: String,
    /// The exact text to replace, including enough context to be unique.
    pub old_string: String,
    /// The text to put in its place.
    pub new_string: String,
    /// Replace every occurrence instead of requiring exactly one.
    #[serde(default)]
    pub replace_all: bool,
}

pub struct EditFile;

impl TypedTool for EditFile {
    type Args = EditFileArgs;
    const NAME: &'static str = "edit_file";
    const KIND: ToolKind = ToolKind::Edit;
    fn description(&self) -> &str {
        "Replace `old_string` with `new_string` in a file. `old_string` must match exactly once unless `replace_all` is true."
    }
    fn prepare(&self, args: EditFileArgs, place: &Place) -> Result<Prepared, ToolError> {
        let target = Target::new(place, &args.path);
        let call = Box::new(EditCall {
            path: target.path.clone(),
            shown: target.shown.clone(),
            args,
            planned: None,
        });
        Ok(target.changing("Edit", call))
    }
}

struct EditCall {
    path: PathBuf,
    shown: String,
    args: EditFileArgs,
    /// (old text, new text, first changed line) once previewed.
    planned: Option<(String, String, u32)>,
}

/// Applies the replacement to `old`, or says why it cannot.
pub fn replace(old: &str, args: &EditFileArgs, shown: &str) -> Result<(String, u32), String> {
    if args.old_string.is_empty() {
        return Err("old_string is empty; use write_file to create or replace a whole file".into());
    }
    if args.old_string == args.new_string {
        return Err("old_string and new_string are the same; nothing would change".into());
    }
    // A file with CRLF line ends keeps them: the model quotes and writes lines with `\n`.
    let crlf = old.contains("\r\n") && !args.old_string.contains('\r');
    let with_ends = |text: &str| match crlf {
        true => text.replace("\r\n", "\n").replace('\n', "\r\n"),
        false => text.to_string(),
    };
    let (find, put) = (with_ends(&args.old_string), with_ends(&args.new_string));
    let count = old.matches(&find).count();
    match count {
        0 => Err(format!(
            "old_string was not found in {shown}; read the file again and copy the text exactly, including whitespace"
        )),
        n if n > 1 && !args.replace_all => Err(format!(
            "old_string appears {n} times in {shown}; include more surrounding lines to make it unique, or set replace_all"
        )),
        _ => {
            let first = old.find(&find).unwrap_or(0);
            let line = old[..first].matches('\n').count() + 1;
            let new = if args.replace_all {
                old.replace(&find, &put)
            } else {
                old.replacen(&find, &put, 1)
            };
            Ok((new, u32::try_from(line).unwrap_or(u32::MAX)))
        }
    }
}

impl EditCall {
    fn diff(&self) -> Vec<ToolContent> {
        match &self.planned {
            Some((old, new, _)) => files::diff(&self.path, Some(old), new),
            None => Vec::new(),
        }
    }
}

impl Call for EditCall {
    fn preview<'a>(
        &'a mut self,
        env: &'a ToolEnv,
    ) -> BoxFuture<'a, Result<Vec<ToolContent>, ToolOutput>> {
        Box::pin(async move {
            let old = match files::read(env, &self.path).await {
                Ok(text) => text,
                Err(ReadError::Missing) => {
                    return Err(ToolOutput::error(format!(
                        "{} does not exist; use write_file to create it",
                        self.shown
                    )));
                }
                Err(e) => return Err(ToolOutput::error(e.describe(&self.shown))),
            };
            let (new, line) = replace(&old, &self.args, &self.shown).map_err(ToolOutput::error)?;
            self.planned = Some((old, new, line));
            Ok(self.diff())
        })
    }

    fn run(mut self: Box<Self>, env: ToolEnv) -> BoxFuture<'static, ToolOutput> {
        Box::pin(async move {
            if self.planned.is_none()
                && let Err(failure) = self.preview(&env).await
            {
                return failure;
            }
            let Some((_, new, line)) = &self.planned else {
                return ToolOutput::error("edit was not prepared");
            };
            if let Err(e) = files::write(&env, &self.path, new).await {
                return ToolOutput::error(format!("cannot write {}: {e}", self.shown));
            }
            let n = if self.args.replace_all {
                self.planned
                    .as_ref()
                    .map_or(0, |(old, _, _)| old.matches(&self.args.old_string).count())
            } else {
                1
            };
            ToolOutput {
                model: format!(
                    "Edited {} at line {line} ({n} replacement{}).",
                    self.shown,
                    if n == 1 { "" } else { "s" }
                ),
                content: self.diff(),
                failed: false,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(old: &str, new: &str, all: bool) -> EditFileArgs {
        EditFileArgs {
            path: "f".into(),
            old_string: old.into(),
            new_string: new.into(),
            replace_all: all,
        }
    }

    #[test]
    fn exact_unique_replacement() {
        let (new, line) = replace("a\nb\nc\n", &args("b", "B", false), "f").unwrap();
        assert_eq!((new.as_str(), line), ("a\nB\nc\n", 2));
    }

    #[test]
    fn a_crlf_file_keeps_its_line_ends() {
        let file = "fn a() {\r\n    one();\r\n}\r\n";
        let (new, line) = replace(
            file,
            &args("    one();\n}", "    two();\n    three();\n}", false),
            "f",
        )
        .unwrap();
        assert_eq!(new, "fn a() {\r\n    two();\r\n    three();\r\n}\r\n");
        assert_eq!(line, 2);
        // A quote that already has CRLF matches as it is.
        let (new, _) = replace(file, &args("one();\r\n", "two();\r\n", false), "f").unwrap();
        assert_eq!(new, "fn a() {\r\n    two();\r\n}\r\n");
    }

    #[test]
    fn absent_ambiguous_and_all() {
        assert!(
            replace("abc", &args("x", "y", false), "f")
                .unwrap_err()
                .contains("not found")
        );
        assert!(
            replace("aa", &args("a", "b", false), "f")
                .unwrap_err()
                .contains("appears 2 times")
        );
        assert_eq!(replace("aa", &args("a", "b", true), "f").unwrap().0, "bb");
        assert!(replace("aa", &args("", "b", true), "f").is_err());
        assert!(
            replace("aa", &args("a", "a", true), "f")
                .unwrap_err()
                .contains("same")
        );
    }
}
