//! Reading tool calls back: what the model was answered and what the editor was shown.

use std::collections::BTreeMap;

use serde_json::Value;

use super::mock_model::Recorded;

/// The content of the `tool` message answering `call_id` in a recorded request.
pub(crate) fn tool_result(request: &Recorded, call_id: &str) -> String {
    request.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == call_id)
        .unwrap_or_else(|| panic!("no result for {call_id} in {}", request.body))["content"]
        .as_str()
        .unwrap()
        .to_string()
}

/// Every tool call content item of type `kind` (`diff`, `terminal`, `content`) the editor was
/// shown in `updates`, in order.
pub(crate) fn shown_contents(updates: &[Value], kind: &str) -> Vec<Value> {
    updates
        .iter()
        .flat_map(|u| {
            u["params"]["update"]["content"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter(|c| c["type"] == kind)
        .collect()
}

/// The `tool_call` and its updates for `id`, in order.
pub(crate) fn call_events<'a>(updates: &'a [Value], id: &str) -> Vec<&'a Value> {
    updates
        .iter()
        .map(|u| &u["params"]["update"])
        .filter(|u| u["toolCallId"] == id)
        .collect()
}

/// The last status a call reached.
pub(crate) fn final_status(updates: &[Value], id: &str) -> String {
    call_events(updates, id)
        .iter()
        .rev()
        .find_map(|u| u["status"].as_str())
        .unwrap_or("none")
        .to_string()
}

/// The status each tool call the editor was shown reached last, by (sessionId, toolCallId):
/// from its `tool_call`, its `tool_call_update`s and the tool call of a permission request
/// about it, in order; a `tool_call` without one is `pending`, the schema's default.
pub(crate) fn last_statuses(messages: &[Value]) -> BTreeMap<(String, String), String> {
    let mut last = BTreeMap::new();
    for message in messages {
        let params = &message["params"];
        let (call, new) = match message["method"].as_str() {
            Some("session/update") => match params["update"]["sessionUpdate"].as_str() {
                Some("tool_call") => (&params["update"], true),
                Some("tool_call_update") => (&params["update"], false),
                _ => continue,
            },
            Some("session/request_permission") => (&params["toolCall"], false),
            _ => continue,
        };
        let key = (
            params["sessionId"].as_str().unwrap().to_string(),
            call["toolCallId"].as_str().unwrap().to_string(),
        );
        match (call["status"].as_str(), new) {
            (Some(status), _) => {
                last.insert(key, status.to_string());
            }
            (None, true) => {
                last.insert(key, "pending".to_string());
            }
            (None, false) => {
                last.entry(key).or_insert_with(|| "pending".to_string());
            }
        }
    }
    last
}

/// The calls among `last` (see [`last_statuses`]) that did not end `completed` or `failed`.
pub(crate) fn unfinished(last: &BTreeMap<(String, String), String>) -> Vec<String> {
    last.iter()
        .filter(|(_, status)| !matches!(status.as_str(), "completed" | "failed"))
        .map(|((_, id), status)| format!("{id}: {status}"))
        .collect()
}

/// A script where the model makes one call, then answers "done".
pub(crate) fn one_call(id: &str, name: &str, args: Value) -> Vec<super::Reply> {
    vec![
        super::Reply::tools(&[(id, name, args)]),
        super::Reply::text(&["done"]),
    ]
}

/// A `run_command` call of `line` with id `id`, for [`batch`].
pub(crate) fn command(id: &str, line: &str) -> (String, String, Value) {
    (
        id.into(),
        "run_command".into(),
        serde_json::json!({ "command": line }),
    )
}

/// A model response making `list`'s calls (id, tool, arguments) at once.
pub(crate) fn batch(list: &[(String, String, Value)]) -> super::Reply {
    let borrowed: Vec<(&str, &str, Value)> = list
        .iter()
        .map(|(id, name, args)| (id.as_str(), name.as_str(), args.clone()))
        .collect();
    super::Reply::tools(&borrowed)
}

/// The labels of a `session/request_permission`'s options, in order.
pub(crate) fn option_names(request: &Value) -> Vec<&str> {
    request["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["name"].as_str().unwrap())
        .collect()
}
