//! A small MCP server for tandem's integration tests (stdio), built with the official SDK.
//! Tools: `echo` (read-only), `add`, `fail` (an `isError` result), `slow` (waits; notices
//! cancellation), `crash` (exits mid-call), `env` (reads an environment variable), `ask`
//! (asks the user for a name with MCP elicitation).
//! With `TANDEM_TEST_MCP_LOG` set, it appends what happened to that file. With `--http` it
//! serves streamable HTTP on 127.0.0.1 instead of stdio and prints its URL on stdout.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ElicitRequestParams,
    ElicitationAction, ErrorData, ListToolsResult, PaginatedRequestParams, ServerCapabilities,
    ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ServerHandler, ServiceExt};
use serde_json::{Value, json};

fn log(line: &str) {
    if let Ok(path) = std::env::var("TANDEM_TEST_MCP_LOG") {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .unwrap();
        writeln!(f, "{line}").unwrap();
    }
}

fn schema(value: Value) -> Arc<serde_json::Map<String, Value>> {
    Arc::new(value.as_object().cloned().unwrap())
}

fn text(s: impl Into<String>) -> Result<CallToolResponse, ErrorData> {
    Ok(CallToolResult::success(vec![ContentBlock::text(s)]).into())
}

/// A 1x1 PNG, base64.
const PIXEL_PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

/// `ask`: asks the client for a name (`elicitation/create`) and says what came back.
async fn ask(peer: &rmcp::Peer<RoleServer>) -> Result<CallToolResponse, ErrorData> {
    let schema = serde_json::from_value(json!({
        "type": "object",
        "properties": {"name": {"type": "string", "title": "Name"}},
        "required": ["name"]
    }))
    .unwrap();
    let asked = peer
        .create_elicitation(ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: "Who is asking?".into(),
            requested_schema: schema,
        })
        .await;
    log(&format!("asked: {asked:?}"));
    match asked {
        Ok(result) if result.action == ElicitationAction::Accept => {
            let content = result.content.unwrap_or_default();
            text(format!("hello {}", content["name"].as_str().unwrap_or("?")))
        }
        Ok(result) => text(format!("no name ({:?})", result.action)),
        Err(e) => text(format!("no name ({e})")),
    }
}

struct TestServer;

impl ServerHandler for TestServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_instructions("The echo tool repeats text exactly; prefer it for quoting.")
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let object = |props: Value, required: &[&str]| {
            schema(json!({"type": "object", "properties": props, "required": required}))
        };
        Ok(ListToolsResult::with_all_items(vec![
            Tool::new(
                "echo",
                "Repeat the text.",
                object(json!({"text": {"type": "string"}}), &["text"]),
            )
            .with_annotations(ToolAnnotations::with_title("Echo").read_only(true)),
            Tool::new(
                "add",
                "Add two integers.",
                object(
                    json!({"a": {"type": "integer"}, "b": {"type": "integer"}}),
                    &["a", "b"],
                ),
            ),
            Tool::new("fail", "Always fails.", object(json!({}), &[])),
            Tool::new(
                "slow",
                "Wait `ms` milliseconds.",
                object(json!({"ms": {"type": "integer"}}), &["ms"]),
            ),
            Tool::new("crash", "Exit the server mid-call.", object(json!({}), &[])),
            Tool::new(
                "screenshot",
                "Render the page: a line of text and a 1x1 PNG.",
                object(json!({}), &[]),
            )
            .with_annotations(ToolAnnotations::new().read_only(true)),
            Tool::new(
                "bad_image",
                "An SVG that claims to be a PNG.",
                object(json!({}), &[]),
            )
            .with_annotations(ToolAnnotations::new().read_only(true)),
            Tool::new(
                "ask",
                "Ask the user for a name (MCP elicitation).",
                object(json!({}), &[]),
            )
            .with_annotations(ToolAnnotations::new().read_only(true)),
            Tool::new(
                "env",
                "Read an environment variable.",
                object(json!({"name": {"type": "string"}}), &["name"]),
            )
            .with_annotations(ToolAnnotations::new().read_only(true)),
        ]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        log(&format!("call {}", request.name));
        match request.name.as_ref() {
            "echo" => text(args.get("text").and_then(Value::as_str).unwrap_or("")),
            "add" => {
                let n = |k: &str| args.get(k).and_then(Value::as_i64).unwrap_or(0);
                text((n("a") + n("b")).to_string())
            }
            "fail" => Ok(CallToolResult::error(vec![ContentBlock::text(
                "the fail tool always fails",
            )])
            .into()),
            "slow" => {
                let ms = args.get("ms").and_then(Value::as_u64).unwrap_or(1000);
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_millis(ms)) => text(format!("waited {ms} ms")),
                    () = context.ct.cancelled() => {
                        log("cancelled slow");
                        Err(ErrorData::internal_error("cancelled", None))
                    }
                }
            }
            "screenshot" => Ok(CallToolResult::success(vec![
                ContentBlock::text("Rendered the page."),
                ContentBlock::image(PIXEL_PNG, "image/png"),
            ])
            .into()),
            "bad_image" => Ok(CallToolResult::success(vec![ContentBlock::image(
                // `<svg xmlns="http://www.w3.org/2000/svg"/>`
                "PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciLz4=",
                "image/png",
            )])
            .into()),
            "crash" => {
                log("crashing");
                std::process::exit(3);
            }
            "ask" => ask(&context.peer).await,
            "env" => {
                let name = args.get("name").and_then(Value::as_str).unwrap_or("");
                text(std::env::var(name).unwrap_or_else(|_| "unset".into()))
            }
            other => Err(ErrorData::invalid_params(format!("no tool {other}"), None)),
        }
    }
}

#[tokio::main]
async fn main() {
    log(&format!("started {}", std::process::id()));
    if std::env::args().any(|a| a == "--http") {
        serve_http().await;
        return;
    }
    let service = TestServer
        .serve(rmcp::transport::stdio())
        .await
        .expect("handshake");
    let _ = service.waiting().await;
    log("stopped");
}

async fn serve_http() {
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
    };
    let service: StreamableHttpService<TestServer, LocalSessionManager> =
        StreamableHttpService::new(
            || Ok(TestServer),
            Default::default(),
            StreamableHttpServerConfig::default().with_sse_keep_alive(None),
        );
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "http://127.0.0.1:{port}/mcp").unwrap();
        out.flush().unwrap();
    }
    axum::serve(listener, router).await.unwrap();
}
