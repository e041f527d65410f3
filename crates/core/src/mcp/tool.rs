//! An MCP tool as one of the model's tools: `mcp__<server>__<tool>`, its description and
//! input schema passed through, permissions from its `readOnlyHint`.

use std::sync::Arc;

use futures::future::BoxFuture;
use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock, ResourceContents};
use serde_json::Value;

use super::connect::{Client, Connection};
use crate::platform::named::PathBase;
use crate::tools::{Call, Prepared, Tool, ToolEnv, ToolError, ToolOutput, image, text};
use crate::types::Access;
use crate::types::{Severity, ToolContent, ToolKind, TurnEvent};

/// Longest tool name model APIs accept.
const MAX_NAME: usize = 64;

/// `mcp__<server>__<tool>` with only the characters model APIs accept, unique among `taken`.
pub(crate) fn exposed_name(server: &str, tool: &str, taken: &[String]) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    let mut base: String = format!("mcp__{}__{}", clean(server), clean(tool));
    base.truncate(MAX_NAME);
    let mut name = base.clone();
    let mut n = 2;
    while taken.contains(&name) {
        let suffix = format!("_{n}");
        let mut stem = base.clone();
        stem.truncate(MAX_NAME - suffix.len());
        name = format!("{stem}{suffix}");
        n += 1;
    }
    name
}

/// The tools of a freshly connected server, named so they do not clash with `taken`.
pub(crate) fn adapters(connection: &Connection, taken: &[String]) -> Vec<Arc<dyn Tool>> {
    let mut names: Vec<String> = taken.to_vec();
    connection
        .tools
        .iter()
        .map(|tool| {
            let exposed = exposed_name(&connection.name, &tool.name, &names);
            names.push(exposed.clone());
            let annotations = tool.annotations.as_ref();
            let title = annotations
                .and_then(|a| a.title.clone())
                .or_else(|| tool.title.clone())
                .unwrap_or_else(|| tool.name.to_string());
            Arc::new(McpTool {
                exposed,
                server: connection.name.clone(),
                tool: tool.name.to_string(),
                title,
                description: tool
                    .description
                    .as_deref()
                    .map(str::to_string)
                    .unwrap_or_else(|| {
                        format!("Tool `{}` of MCP server `{}`.", tool.name, connection.name)
                    }),
                schema: Value::Object((*tool.input_schema).clone()),
                read_only: annotations.and_then(|a| a.read_only_hint).unwrap_or(false),
                client: connection.client.clone(),
            }) as Arc<dyn Tool>
        })
        .collect()
}

struct McpTool {
    exposed: String,
    server: String,
    tool: String,
    title: String,
    description: String,
    schema: Value,
    read_only: bool,
    client: Arc<Client>,
}

impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.exposed
    }
    fn description(&self) -> &str {
        &self.description
    }
    fn parameters(&self) -> Value {
        self.schema.clone()
    }
    fn kind(&self) -> ToolKind {
        if self.read_only {
            ToolKind::Read
        } else {
            ToolKind::Other
        }
    }
    fn label(&self) -> String {
        format!("{} ({})", self.title, self.server)
    }
    fn prepare(&self, args: Value, _place: &PathBase) -> Result<Prepared, ToolError> {
        let arguments = match args {
            Value::Object(map) => map,
            Value::Null => Default::default(),
            other => {
                return Err(ToolError::Refused(format!(
                    "arguments of {} must be an object, got {other}",
                    self.exposed
                )));
            }
        };
        Ok(Prepared {
            title: self.label(),
            locations: Vec::new(),
            // Read-only tools are free like reads inside the project; every other tool
            // follows the "run a command" row, remembered per tool.
            access: Access::Tool {
                read_only: self.read_only,
            },
            call: Box::new(McpCall {
                server: self.server.clone(),
                params: CallToolRequestParams::new(self.tool.clone()).with_arguments(arguments),
                client: self.client.clone(),
            }),
        })
    }
}

struct McpCall {
    server: String,
    params: CallToolRequestParams,
    client: Arc<Client>,
}

impl Call for McpCall {
    fn run(self: Box<Self>, env: ToolEnv) -> BoxFuture<'static, ToolOutput> {
        Box::pin(async move {
            // The server's questions while it runs name this call.
            let _calling = self.client.service().calling(&env.call_id);
            // Dropping the call on cancel sends MCP `notifications/cancelled` to the server.
            // `call_tool` answers the server's requests for input (MCP's newer input-required
            // rounds, and its older elicitation requests alike) through the session's Asker.
            let response = tokio::select! {
                r = self.client.call_tool(self.params) => r,
                () = env.cancel.cancelled() => return ToolOutput::error("cancelled by the user"),
            };
            match response {
                Ok(result) => output(result),
                Err(rmcp::ServiceError::UnexpectedResponse) => ToolOutput::error(format!(
                    "MCP server `{}` started a background task, which tandem does not support",
                    self.server
                )),
                Err(e) => {
                    let message = format!("MCP server `{}` is unavailable: {e}", self.server);
                    env.scope.sink.emit(
                        &env.scope.session_id,
                        TurnEvent::Notice {
                            severity: Severity::Warning,
                            text: message.clone(),
                        },
                    );
                    ToolOutput::error(message)
                }
            }
        })
    }
}

/// What a tool result says, as text bounded like other tool output, with the images it
/// holds given to the model (and shown to the user) when they are ones a model takes.
fn output(result: CallToolResult) -> ToolOutput {
    let mut images = Vec::new();
    // Each part's text, and whether it only marks an image given (the editor shows the image).
    let mut parts: Vec<(String, bool)> = result
        .content
        .iter()
        .map(|c| part(c, &mut images))
        .collect();
    if let (true, Some(structured)) = (parts.is_empty(), &result.structured_content) {
        parts.push((structured.to_string(), false));
    }
    let join = |all: bool| -> String {
        let texts: Vec<&str> = parts
            .iter()
            .filter(|(_, marker)| all || !marker)
            .map(|(text, _)| text.as_str())
            .collect();
        text::cap(&texts.join("\n"), text::MAX_RESULT_BYTES)
    };
    let (model, shown) = (join(true), join(false));
    let mut content = Vec::new();
    if !shown.is_empty() || images.is_empty() {
        content.push(ToolContent::Text {
            text: if shown.is_empty() {
                "(no output)".to_string()
            } else {
                shown
            },
        });
    }
    content.extend(
        images
            .iter()
            .map(|url| ToolContent::Image { url: url.clone() }),
    );
    let failed = result.is_error == Some(true);
    let model = match (failed, model.is_empty()) {
        (true, _) => format!("Error: {model}"),
        (false, true) => "(no output)".to_string(),
        (false, false) => model,
    };
    ToolOutput {
        content,
        model,
        images,
        failed,
        title: None,
        keeps_running: false,
    }
}

/// One content block's text, and whether it only marks an image given (the editor shows the
/// image); images a model takes are pushed onto `images`.
fn part(block: &ContentBlock, images: &mut Vec<String>) -> (String, bool) {
    match block {
        ContentBlock::Text(t) => (t.text.clone(), false),
        ContentBlock::Image(i) => given(&i.data, &i.mime_type, images),
        ContentBlock::Audio(a) => (
            format!("[audio: {}, {} bytes of base64]", a.mime_type, a.data.len()),
            false,
        ),
        ContentBlock::Resource(r) => match &r.resource {
            ResourceContents::TextResourceContents { uri, text, .. } => (
                format!("<resource uri=\"{uri}\">\n{text}\n</resource>"),
                false,
            ),
            ResourceContents::BlobResourceContents {
                uri,
                blob,
                mime_type,
                ..
            } if mime_type
                .as_deref()
                .is_some_and(|m| m.starts_with("image/")) =>
            {
                let (text, marker) = given(blob, mime_type.as_deref().unwrap_or(""), images);
                (format!("{text} ({uri})"), marker)
            }
            ResourceContents::BlobResourceContents { uri, blob, .. } => (
                format!("[binary resource {uri}, {} bytes of base64]", blob.len()),
                false,
            ),
            _ => (
                "[a resource of a kind tandem does not know]".to_string(),
                false,
            ),
        },
        ContentBlock::ResourceLink(link) => (format!("[resource link: {}]", link.uri), false),
        _ => (
            "[content of a kind tandem does not know]".to_string(),
            false,
        ),
    }
}

/// The text standing for an image in the result: a marker when it is given to the model
/// (pushed onto `images`), else why it is not.
fn given(data: &str, claimed: &str, images: &mut Vec<String>) -> (String, bool) {
    if images.len() >= image::MAX_PER_RESULT {
        return (
            format!(
                "[image ({claimed}) not sent: a result gives at most {} images]",
                image::MAX_PER_RESULT
            ),
            false,
        );
    }
    let given: usize = images.iter().map(String::len).sum();
    match image::from_base64(data) {
        Ok(url) if given + url.len() > image::MAX_BASE64_PER_RESULT => (
            format!(
                "[image ({claimed}) not sent: a result gives at most {} MB of images]",
                image::MAX_BASE64_PER_RESULT / 1_048_576
            ),
            false,
        ),
        Ok(url) => {
            images.push(url);
            (format!("[image {} attached]", images.len()), true)
        }
        Err(why) => (format!("[image ({claimed}) not sent: {why}]"), false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_clean_short_and_unique() {
        assert_eq!(
            exposed_name("my server", "do.it", &[]),
            "mcp__my_server__do_it"
        );
        let taken = vec!["mcp__s__t".to_string()];
        assert_eq!(exposed_name("s", "t", &taken), "mcp__s__t_2");
        let long = exposed_name("s", &"x".repeat(100), &[]);
        assert_eq!(long.len(), MAX_NAME);
        let again = exposed_name("s", &"x".repeat(100), std::slice::from_ref(&long));
        assert!(again.ends_with("_2") && again.len() == MAX_NAME);
    }
}
