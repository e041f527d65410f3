//! Images in tool results, over the real binary: an MCP server's screenshot and an image file
//! read reach a model that takes images where each API takes them (a user message after the
//! results on chat completions, the `function_call_output` on Responses, the `tool_result`
//! on Messages), against a mock that refuses an image out of place the way each server does;
//! the editor is shown the image; a model that takes none is told one was left out, and so
//! is the user; an image a server would refuse never gets in; a reload sends it again.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};

use crate::common::calls::shown_contents;
use crate::common::mock_model::Recorded;
use crate::common::{Agent, EditorSession, Reply, joined, path_str, session_with_env};

const SERVER: &str = env!("CARGO_BIN_EXE_tandem-test-mcp");

/// The 1x1 PNG the test MCP server's `screenshot` tool gives.
use crate::common::images::PIXEL_PNG;

/// The environment of a session over `api` with `model`, the test MCP server configured as
/// `t` (a user's own server: it starts without asking).
fn vars(ws: &crate::common::Workspace, api: &str, model: &str) -> Vec<(String, String)> {
    let config = ws.write(
        "home/tandem.toml",
        &format!("[[mcp_servers]]\nname = \"t\"\ncommand = \"{SERVER}\"\n"),
    );
    vec![
        ("TANDEM_CONFIG".to_string(), path_str(&config)),
        ("TANDEM_API".to_string(), api.to_string()),
        ("TANDEM_MODEL".to_string(), model.to_string()),
    ]
}

async fn session(api: &str, model: &str, script: Vec<Reply>) -> EditorSession {
    let (api, model) = (api.to_string(), model.to_string());
    session_with_env("small", script, json!({}), "full-access", move |ws| {
        vars(ws, &api, &model)
    })
    .await
}

fn screenshot_then(answer: &str) -> Vec<Reply> {
    vec![
        Reply::tools(&[("s", "mcp__t__screenshot", json!({}))]),
        Reply::text(&[answer]),
    ]
}

/// Every image URL anywhere in a request body, whatever the API's shape.
fn image_urls(body: &Value) -> Vec<String> {
    let mut found = Vec::new();
    fn walk(value: &Value, found: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                let url = map.get("image_url").map(|u| u.get("url").unwrap_or(u));
                if let Some(url) = url.and_then(Value::as_str) {
                    found.push(url.to_string());
                }
                if map.get("type").and_then(Value::as_str) == Some("base64") {
                    let kind = map["media_type"].as_str().unwrap_or_default();
                    let data = map["data"].as_str().unwrap_or_default();
                    found.push(format!("data:{kind};base64,{data}"));
                }
                map.values().for_each(|v| walk(v, found));
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, found)),
            _ => {}
        }
    }
    walk(body, &mut found);
    found
}

fn pixel_url() -> String {
    format!("data:image/png;base64,{PIXEL_PNG}")
}

/// Where the screenshot of call `s` must be in the second request, API by API.
fn assert_placed(api: &str, request: &Recorded) {
    let body = &request.body;
    match api {
        "chat-completions" => {
            let messages = body["messages"].as_array().unwrap();
            let at = messages
                .iter()
                .position(|m| m["role"] == "tool" && m["tool_call_id"] == "s")
                .unwrap();
            let result = messages[at]["content"].as_str().unwrap();
            assert!(result.contains("Rendered the page."), "{result}");
            let after = &messages[at + 1];
            assert_eq!(after["role"], "user", "{body}");
            assert_eq!(after["content"][1]["image_url"]["url"], pixel_url());
        }
        "responses" => {
            let input = body["input"].as_array().unwrap();
            let output = input
                .iter()
                .find(|i| i["type"] == "function_call_output" && i["call_id"] == "s")
                .unwrap();
            assert_eq!(output["output"][0]["type"], "input_text", "{output}");
            assert_eq!(output["output"][1]["image_url"], pixel_url(), "{output}");
        }
        _ => {
            let messages = body["messages"].as_array().unwrap();
            let result = messages
                .iter()
                .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
                .find(|b| b["type"] == "tool_result" && b["tool_use_id"] == "s")
                .unwrap();
            let image = &result["content"][1];
            assert_eq!(image["type"], "image", "{result}");
            assert_eq!(image["source"]["media_type"], "image/png");
            assert_eq!(image["source"]["data"], PIXEL_PNG);
        }
    }
}

async fn a_screenshot_reaches_the_model(api: &str, model: &str) {
    let (mock, _ws, mut agent, session, _editor) =
        session(api, model, screenshot_then("One white pixel.")).await;
    let (response, updates) = agent.prompt(&session, "look at the page").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let requests = mock.requests();
    assert_eq!(requests.len(), 2, "the mock refused nothing");
    assert_placed(api, &requests[1]);
    // The editor shows the image itself, as an ACP image block.
    let shown = shown_contents(&updates, "content");
    let image = shown
        .iter()
        .find(|c| c["content"]["type"] == "image")
        .unwrap_or_else(|| panic!("no image shown: {shown:?}"));
    assert_eq!(image["content"]["mimeType"], "image/png");
    assert_eq!(image["content"]["data"], PIXEL_PNG);

    // The next turn sends it again, in the same place.
    mock.push(Reply::text(&["Still one pixel."]));
    let (response, _) = agent.prompt(&session, "and now?").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let last = mock.requests().pop().unwrap();
    assert_placed(api, &last);
    assert_eq!(image_urls(&last.body), [pixel_url()]);
    agent.assert_valid();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_screenshot_goes_in_a_user_message_after_the_results_on_chat_completions() {
    a_screenshot_reaches_the_model("chat-completions", "gpt-4o").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_screenshot_goes_in_the_call_output_on_responses() {
    a_screenshot_reaches_the_model("responses", "gpt-5").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_screenshot_goes_in_the_tool_result_on_messages() {
    a_screenshot_reaches_the_model("anthropic-messages", "claude-sonnet-4-5").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_that_takes_no_images_is_told_one_was_left_out_and_so_is_the_user() {
    let (mock, _ws, mut agent, session, _editor) = session(
        "chat-completions",
        "qwen2.5-coder:7b",
        screenshot_then("I cannot see it."),
    )
    .await;
    let (response, updates) = agent.prompt(&session, "look at the page").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let second = &mock.requests()[1];
    assert!(image_urls(&second.body).is_empty(), "{}", second.body);
    let result = crate::common::calls::tool_result(second, "s");
    assert!(
        result.contains("Rendered the page.")
            && result.contains("[image omitted: model `qwen2.5-coder:7b` does not accept images]"),
        "{result}"
    );
    let said = joined(&updates, "agent_message_chunk");
    assert!(
        said.contains("The image the call gave was not sent") && said.contains("images = true"),
        "{said}"
    );
    // The editor still shows it.
    assert!(
        shown_contents(&updates, "content")
            .iter()
            .any(|c| c["content"]["type"] == "image")
    );
    agent.assert_valid();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_a_server_would_refuse_never_gets_in() {
    let script = vec![
        Reply::tools(&[("b", "mcp__t__bad_image", json!({}))]),
        Reply::text(&["No image then."]),
        Reply::text(&["Fine."]),
    ];
    let (mock, _ws, mut agent, session, _editor) =
        session("anthropic-messages", "claude-sonnet-4-5", script).await;
    let (response, updates) = agent.prompt(&session, "draw").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let second = &mock.requests()[1];
    assert!(image_urls(&second.body).is_empty(), "{}", second.body);
    let said = crate::common::anthropic_wire::last_user_text(&second.body);
    assert!(
        said.contains("[image (image/png) not sent: not in a format models take"),
        "{said}"
    );
    assert!(
        !shown_contents(&updates, "content")
            .iter()
            .any(|c| c["content"]["type"] == "image")
    );
    // The session goes on: nothing in it makes the server refuse the next request.
    let (response, _) = agent.prompt(&session, "go on").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    agent.assert_valid();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_file_read_is_the_image_and_a_reload_sends_it_again() {
    let script = vec![
        Reply::tools(&[("s", "read_file", json!({"path": "shot.png"}))]),
        Reply::text(&["A pixel."]),
    ];
    let (mock, ws, mut agent, session, _editor) = session_with_env(
        "small",
        script,
        json!({"fs": {"readTextFile": true, "writeTextFile": true}}),
        "ask",
        |ws| {
            std::fs::write(
                ws.project().join("shot.png"),
                STANDARD.decode(PIXEL_PNG).unwrap(),
            )
            .unwrap();
            vars(ws, "anthropic-messages", "claude-sonnet-4-5")
        },
    )
    .await;
    let (response, updates) = agent.prompt(&session, "what is in shot.png?").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert_placed("anthropic-messages", &mock.requests()[1]);
    let said = crate::common::anthropic_wire::last_user_text(&mock.requests()[1].body);
    assert!(said.contains("shot.png is an image (image/png)"), "{said}");
    assert!(
        shown_contents(&updates, "content")
            .iter()
            .any(|c| c["content"]["type"] == "image")
    );

    // The transcript stores the image once: the view it was shown in names it.
    drop(agent);
    let stored =
        std::fs::read_to_string(ws.home().join(format!("data/sessions/{session}.jsonl"))).unwrap();
    assert_eq!(stored.matches(PIXEL_PNG).count(), 1, "{stored}");

    // A second process loads the session; the image goes to the model again.
    mock.push(Reply::text(&["Still a pixel."]));
    let mut env = ws.env(&mock);
    env.extend(vars(&ws, "anthropic-messages", "claude-sonnet-4-5"));
    let mut agent = Agent::spawn(&env, &[]);
    agent.initialize().await;
    let (_, replayed) = agent
        .open_stored("session/load", &session, &ws.project())
        .await;
    assert!(
        shown_contents(&replayed, "content")
            .iter()
            .any(|c| c["content"]["type"] == "image"),
        "the load shows the image again"
    );
    let (response, _) = agent.prompt(&session, "and now?").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let last = mock.requests().pop().unwrap();
    assert_placed("anthropic-messages", &last);
    agent.assert_valid();
}

#[test]
fn the_mock_refuses_images_where_each_api_takes_none() {
    use crate::common::images::check;
    use crate::common::wire::Api;
    let url = pixel_url();
    let in_tool = json!({"messages": [{"role": "tool", "tool_call_id": "a",
        "content": [{"type": "image_url", "image_url": {"url": url}}]}]});
    let (status, body) = check(Api::Chat, &in_tool).unwrap();
    assert_eq!(status, 400);
    assert!(
        body.contains("only allowed for messages with role 'user'"),
        "{body}"
    );
    let svg = "data:image/png;base64,PHN2Zy8+";
    let bad = json!({"messages": [{"role": "user",
        "content": [{"type": "image_url", "image_url": {"url": svg}}]}]});
    assert!(
        check(Api::Chat, &bad)
            .unwrap()
            .1
            .contains("unsupported image")
    );
    let output = json!({"input": [{"type": "function_call_output", "call_id": "a",
        "output": [{"type": "image_url", "image_url": url}]}]});
    assert!(
        check(Api::Responses, &output)
            .unwrap()
            .1
            .contains("Invalid value: 'image_url'")
    );
    let wrong_type = json!({"messages": [{"role": "user", "content": [{"type": "tool_result",
        "tool_use_id": "a", "content": [{"type": "image", "source": {"type": "base64",
        "media_type": "image/jpeg", "data": PIXEL_PNG}}]}]}]});
    assert!(
        check(Api::Anthropic, &wrong_type)
            .unwrap()
            .1
            .contains("does not match the provided media type")
    );
    let good = json!({"messages": [{"role": "user", "content": [{"type": "tool_result",
        "tool_use_id": "a", "content": [{"type": "image", "source": {"type": "base64",
        "media_type": "image/png", "data": PIXEL_PNG}}]}]}]});
    assert!(check(Api::Anthropic, &good).is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_refuses_the_images_gets_the_request_again_without_them_for_good() {
    let refusal = r#"{"type":"error","error":{"type":"invalid_request_error","message":"messages.2.content.0.tool_result.content.1.source.base64.data: Could not process image"}}"#;
    let script = vec![
        Reply::tools(&[("s", "mcp__t__screenshot", json!({}))]),
        Reply::status(400, refusal),
        Reply::text(&["Without the picture, then."]),
    ];
    let (mock, ws, mut agent, session, _editor) =
        session("anthropic-messages", "claude-sonnet-4-5", script).await;
    let (response, updates) = agent.prompt(&session, "look at the page").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let requests = mock.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(image_urls(&requests[1].body).len(), 1);
    assert!(
        image_urls(&requests[2].body).is_empty(),
        "{}",
        requests[2].body
    );
    let said = crate::common::anthropic_wire::last_user_text(&requests[2].body);
    assert!(
        said.contains("Rendered the page.\n[image 1 attached]\n[image omitted: the model server refused a request that held images]"),
        "{said}"
    );
    let told = joined(&updates, "agent_message_chunk");
    assert!(
        told.contains("The model server refused the request with its images")
            && told.contains("Could not process image"),
        "{told}"
    );

    // Left out for good: the next prompt, and a reload in a second process, send none.
    mock.push(Reply::text(&["ok"]));
    let (response, _) = agent.prompt(&session, "go on").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert!(image_urls(&mock.requests().pop().unwrap().body).is_empty());
    drop(agent);
    mock.push(Reply::text(&["ok again"]));
    let mut env = ws.env(&mock);
    env.extend(vars(&ws, "anthropic-messages", "claude-sonnet-4-5"));
    let mut agent = Agent::spawn(&env, &[]);
    agent.initialize().await;
    agent
        .open_stored("session/load", &session, &ws.project())
        .await;
    let (response, _) = agent.prompt(&session, "and now?").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert!(image_urls(&mock.requests().pop().unwrap().body).is_empty());
    agent.assert_valid();
}

/// read_file reads an image on disk, past the editor: it must hold against the same rules
/// a text read does. A deny rule on the image holds (in full access too), and a link inside
/// the project to an image outside it is a read outside the project: asked about, and
/// nothing is sent when the user says no.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_read_holds_to_deny_rules_and_links_out_of_the_project() {
    let script = vec![
        Reply::tools(&[("d", "read_file", json!({"path": "secret.png"}))]),
        Reply::tools(&[("l", "read_file", json!({"path": "shot.png"}))]),
        Reply::text(&["Nothing seen."]),
    ];
    let pixel = STANDARD.decode(PIXEL_PNG).unwrap();
    let (mock, _ws, mut agent, session, editor) = session_with_env(
        "small",
        script,
        json!({"fs": {"readTextFile": true, "writeTextFile": true}}),
        "ask",
        |ws| {
            std::fs::write(ws.project().join("secret.png"), &pixel).unwrap();
            let outside = ws.home().join("private.png");
            std::fs::write(&outside, &pixel).unwrap();
            std::os::unix::fs::symlink(&outside, ws.project().join("shot.png")).unwrap();
            let config = ws.write(
                "home/tandem.toml",
                "[permissions]\ndeny = [\"read_file(secret.png)\"]\n",
            );
            vec![
                ("TANDEM_CONFIG".to_string(), path_str(&config)),
                ("TANDEM_API".to_string(), "anthropic-messages".to_string()),
                ("TANDEM_MODEL".to_string(), "claude-sonnet-4-5".to_string()),
            ]
        },
    )
    .await;
    editor.answer_with(&[crate::common::editor::Answer::Select("reject_once")]);
    let (response, _) = agent.prompt(&session, "look at the pictures").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    for request in mock.requests() {
        assert!(image_urls(&request.body).is_empty(), "{}", request.body);
    }
    let denied = crate::common::anthropic_wire::last_user_text(&mock.requests()[1].body);
    assert!(denied.to_lowercase().contains("deny"), "{denied}");
    // The link out of the project was asked about (and refused).
    assert_eq!(
        editor
            .methods()
            .iter()
            .filter(|m| *m == "session/request_permission")
            .count(),
        1
    );
    agent.assert_valid();
}
