//! `read_file`: a text file's lines, bounded, through the editor when it can (unsaved
//! buffers win).

use std::path::PathBuf;

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;

use super::{
    Call, PathBase, Prepared, ToolEnv, ToolError, ToolOutput, TypedTool, files, image, text,
};
use crate::conversation::split_data_url;
use crate::types::Access;
use crate::types::{Location, ToolContent, ToolKind};

/// Arguments of `read_file`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReadFileArgs {
    /// File path, absolute or relative to the working directory.
    pub(crate) path: String,
    /// First line to read, 1-based (default 1).
    pub(crate) offset: Option<usize>,
    /// How many lines to read (default 2000).
    pub(crate) limit: Option<usize>,
    /// First character of each line, 1-based (default 1): reads on in a line that was cut.
    pub(crate) column: Option<usize>,
}

pub(crate) struct ReadFile;

impl TypedTool for ReadFile {
    type Args = ReadFileArgs;
    const NAME: &'static str = "read_file";
    const KIND: ToolKind = ToolKind::Read;
    const LABEL: &'static str = "Read file";
    fn description(&self) -> &str {
        "Read a text file. Returns up to `limit` lines from `offset` (1-based); long files say how to read on. An image file (PNG, JPEG, GIF, WebP) comes back as the image."
    }
    fn prepare(&self, args: ReadFileArgs, place: &PathBase) -> Result<Prepared, ToolError> {
        let path = place.resolve(&args.path);
        let shown = place.display(&path);
        let title = match (args.offset, args.limit) {
            (Some(o), Some(l)) => format!("Read {shown} (lines {o}-{})", o + l.saturating_sub(1)),
            (Some(o), None) => format!("Read {shown} (from line {o})"),
            _ => format!("Read {shown}"),
        };
        Ok(Prepared {
            title,
            locations: vec![Location {
                path: path.clone(),
                line: args.offset.and_then(|o| u32::try_from(o).ok()),
            }],
            access: Access::Read(path.clone()),
            call: Box::new(ReadCall {
                path,
                shown,
                window: text::Window {
                    offset: args.offset,
                    limit: args.limit,
                    column: args.column,
                },
            }),
        })
    }
}

struct ReadCall {
    path: PathBuf,
    shown: String,
    window: text::Window,
}

impl Call for ReadCall {
    fn run(self: Box<Self>, env: ToolEnv) -> BoxFuture<'static, ToolOutput> {
        Box::pin(async move {
            match image::read_file(&env, &self.path).await {
                Ok(Some(url)) => return shown_image(&self.shown, url),
                Ok(None) => {}
                Err(e) => return ToolOutput::error(e.describe(&self.shown)),
            }
            match read(&env, &self.path, self.window).await {
                Ok((content, total)) => {
                    let window = text::window_of(&content, total, self.window);
                    ToolOutput {
                        content: vec![ToolContent::Text {
                            text: format!("```\n{}```", fenced(&window)),
                        }],
                        model: window,
                        images: Vec::new(),
                        failed: false,
                        title: None,
                        keeps_running: false,
                    }
                }
                Err(e) => ToolOutput::error(e.describe(&self.shown)),
            }
        })
    }
}

/// An image file read: the model is given the image, the editor shows it.
fn shown_image(shown: &str, url: String) -> ToolOutput {
    let kind = split_data_url(&url).map_or("image", |(mime, _)| mime);
    ToolOutput {
        content: vec![ToolContent::Image { url: url.clone() }],
        model: format!("{shown} is an image ({kind}); it is attached."),
        images: vec![url],
        failed: false,
        title: None,
        keeps_running: false,
    }
}

/// The file's first lines up to the end of `w` (and one more, to know whether more follow),
/// and its line count when all of it came. Through the editor only those lines are asked
/// for, so a window at the start of a huge file does not pull the whole buffer; counting
/// from line 1 keeps the numbers right even when an editor ignores `limit`.
async fn read(
    env: &ToolEnv,
    path: &std::path::Path,
    w: text::Window,
) -> Result<(String, Option<usize>), files::ReadError> {
    if !env.scope.caps.read_text_file {
        let content = files::read(env, path).await?;
        let total = content.lines().count();
        return Ok((content, Some(total)));
    }
    let wanted =
        w.offset.unwrap_or(1).max(1) - 1 + w.limit.unwrap_or(text::DEFAULT_READ_LINES).max(1) + 1;
    let content = files::read_lines(env, path, u32::try_from(wanted).unwrap_or(u32::MAX)).await?;
    let got = content.lines().count();
    // Fewer lines than asked: the file ended; more: the editor sent all of it.
    let total = (got != wanted).then_some(got);
    Ok((content, total))
}

/// Keeps a stray fence in the file from closing the editor's code block early.
fn fenced(text: &str) -> String {
    text.replace("```", "`\u{200b}``")
}
