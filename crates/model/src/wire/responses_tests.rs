use super::*;
use crate::types::ToolSpec;

fn origin() -> Origin {
    Origin {
        api: Api::Responses,
        server: "http://s/v1".into(),
        model: "o4-mini".into(),
    }
}

fn decode(events: &[Value]) -> Vec<ModelEvent> {
    let mut d = Decode::new(origin(), "http://s/v1", "o4-mini");
    let mut out = Vec::new();
    for e in events {
        out.extend(d.event(None, &e.to_string()).unwrap());
    }
    assert!(d.complete());
    out
}

/// A response with a reasoning item and a call, decoded: the call and its carried state.
fn reasoned_call() -> (Vec<ToolCall>, crate::conversation::Carried) {
    let out = decode(&[
        json!({"type": "response.created", "response": {"status": "in_progress"}}),
        json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "reasoning", "id": "rs_1", "summary": []}}),
        json!({"type": "response.reasoning_summary_text.delta", "item_id": "rs_1", "delta": "Plan"}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": {"status": "completed", "type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Plan"}], "encrypted_content": "ENC"}}),
        json!({"type": "response.output_item.added", "output_index": 1, "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "read_file", "arguments": ""}}),
        json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "delta": "{\"path\""}),
        json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "delta": ":\"a\"}"}),
        json!({"type": "response.output_item.done", "output_index": 1, "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "read_file", "arguments": "{\"path\":\"a\"}"}}),
        json!({"type": "response.completed", "response": {"status": "completed", "usage": {"input_tokens": 50, "input_tokens_details": {"cached_tokens": 40}, "output_tokens": 9, "output_tokens_details": {"reasoning_tokens": 5}}}}),
    ]);
    assert_eq!(out[0], ModelEvent::Reasoning("Plan".into()));
    assert!(
        matches!(&out[1], ModelEvent::CallStarted { id, name } if id == "call_1" && name == "read_file")
    );
    let ModelEvent::ToolCalls(calls) = &out[2] else {
        panic!("{out:?}")
    };
    assert_eq!(calls[0].arguments, r#"{"path":"a"}"#);
    let ModelEvent::Carried(carried) = &out[3] else {
        panic!("{out:?}")
    };
    assert_eq!(out[4], ModelEvent::Finish(FinishReason::ToolCalls));
    assert_eq!(
        out[5],
        ModelEvent::Usage(Usage {
            prompt_tokens: 50,
            completion_tokens: 9,
            cached_tokens: 40,
            reasoning_tokens: 5,
            cost: None,
        })
    );
    (calls.clone(), carried.clone())
}

#[test]
fn reasoning_and_calls_stream_in_order_with_their_usage() {
    let (calls, _) = reasoned_call();
    assert_eq!(calls.len(), 1);
}

#[test]
fn reasoning_items_come_back_before_their_calls() {
    let reasoning = json!({"type": "reasoning", "summary": [{"type": "summary_text", "text": "Plan"}], "encrypted_content": "ENC"});
    let (calls, carried) = reasoned_call();
    let request = ModelRequest {
        model: "o4-mini".into(),
        messages: vec![
            Message::System("sys".into()).into(),
            Message::User(vec![UserPart::Text("go".into())]).into(),
            Message::Assistant {
                text: String::new(),
                reasoning: "Plan".into(),
                tool_calls: calls.clone(),
                carried: Some(Box::new(carried.clone())),
            }
            .into(),
            Message::Tool {
                call_id: "call_1".into(),
                content: "A".into(),
                images: Vec::new(),
            }
            .into(),
        ],
        reasoning_effort: Some("high".into()),
        tools: vec![ToolSpec {
            name: "read_file".into(),
            description: "d".into(),
            parameters: json!({"type": "object"}),
        }],
        max_tokens: None,
        response_format: None,
        cache_key: Some("session-1".into()),
    };
    let body = request_body(&request, &origin(), true);
    assert_eq!(body["instructions"], "sys");
    assert_eq!(body["prompt_cache_key"], "session-1");
    assert_eq!(body["store"], false);
    assert_eq!(body["include"][0], "reasoning.encrypted_content");
    assert_eq!(
        body["reasoning"],
        json!({"effort": "high", "summary": "auto"})
    );
    let input = body["input"].as_array().unwrap();
    assert_eq!(
        input[1], reasoning,
        "verbatim, without its status or its id (store is false)"
    );
    assert_eq!(input[2]["type"], "function_call");
    assert_eq!(input[2]["call_id"], "call_1");
    assert!(
        input[2].get("id").is_none(),
        "no item ids: nothing is stored"
    );
    assert_eq!(
        input[3],
        json!({"type": "function_call_output", "call_id": "call_1", "output": "A"})
    );
    assert_eq!(body["tools"][0]["name"], "read_file");

    let other = Origin {
        server: "http://elsewhere/v1".into(),
        ..origin()
    };
    let body = request_body(&request, &other, false);
    assert!(
        body["input"]
            .as_array()
            .unwrap()
            .iter()
            .all(|i| i["type"] != "reasoning")
    );
    assert!(body["reasoning"].get("summary").is_none());
}

#[test]
fn text_answers_incomplete_ones_and_failures() {
    let out = decode(&[
        json!({"type": "response.output_item.added", "item": {"type": "message", "id": "m"}}),
        json!({"type": "response.output_text.delta", "item_id": "m", "delta": "Hi"}),
        json!({"type": "response.incomplete", "response": {"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}}}),
    ]);
    assert_eq!(out[0], ModelEvent::Text("Hi".into()));
    assert_eq!(out[1], ModelEvent::Finish(FinishReason::Length));
    let mut d = Decode::new(origin(), "http://s/v1", "o4-mini");
    let e = d
        .event(None, r#"{"type":"response.failed","response":{"status":"failed","error":{"code":"server_error","message":"boom"}}}"#)
        .unwrap_err();
    assert!(e.message.contains("boom"), "{}", e.message);
    let e = d
        .event(None, r#"{"error":{"message":"llama says no","code":500}}"#)
        .unwrap_err();
    assert!(e.message.contains("llama says no"), "{}", e.message);
}

#[test]
fn reasoning_that_cannot_come_back_is_not_kept_and_done_ends_nothing() {
    let out = decode(&[
        json!({"type": "response.output_item.done", "item": {"type": "reasoning", "id": "rs_bare", "summary": []}}),
        json!({"type": "response.output_item.done", "item": {"type": "function_call", "call_id": "c", "name": "x", "arguments": "{}"}}),
        json!({"type": "response.completed", "response": {"status": "completed"}}),
    ]);
    assert!(
        !out.iter().any(|e| matches!(e, ModelEvent::Carried(_))),
        "an item with neither encrypted content nor text would be refused with store false: {out:?}"
    );
    let request = ModelRequest {
        model: "o4-mini".into(),
        messages: Vec::new(),
        reasoning_effort: None,
        tools: Vec::new(),
        max_tokens: Some(1),
        response_format: None,
        cache_key: None,
    };
    let body = request_body(&request, &origin(), true);
    assert_eq!(body["max_output_tokens"], 16);
    assert!(body.get("prompt_cache_key").is_none(), "a one-off request");
}
