use super::*;
use crate::types::ToolSpec;

fn origin() -> Origin {
    Origin {
        api: Api::AnthropicMessages,
        server: "http://s/v1".into(),
        model: "claude".into(),
    }
}

fn request(messages: Vec<Message>, effort: Option<&str>) -> ModelRequest {
    ModelRequest {
        model: "claude".into(),
        messages: messages.into_iter().map(std::sync::Arc::new).collect(),
        reasoning_effort: effort.map(String::from),
        tools: vec![ToolSpec {
            name: "read_file".into(),
            description: "d".into(),
            parameters: json!({"type": "object"}),
        }],
        max_tokens: None,
        response_format: None,
        cache_key: None,
    }
}

fn decode(events: &[Value]) -> Vec<ModelEvent> {
    let mut d = Decode::new(origin(), "http://s/v1", "claude");
    let mut out = Vec::new();
    for e in events {
        out.extend(d.event(None, &e.to_string()).unwrap());
    }
    assert!(d.complete());
    out
}

/// A response with thinking, text and a call, decoded: the call and its carried state.
fn thought_call() -> (Vec<ToolCall>, crate::conversation::Carried) {
    let out = decode(&[
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 10, "cache_read_input_tokens": 90, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Look"}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "SIG"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Reading."}}),
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "t1", "name": "read_file", "input": {}}}),
        json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "{\"path\":"}}),
        json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "\"a\"}"}}),
        json!({"type": "content_block_stop", "index": 2}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 30}}),
        json!({"type": "message_stop"}),
    ]);
    assert_eq!(out[0], ModelEvent::Reasoning("Look".into()));
    assert_eq!(out[1], ModelEvent::Text("Reading.".into()));
    assert_eq!(
        out[2],
        ModelEvent::CallStarted {
            id: "t1".into(),
            name: "read_file".into()
        }
    );
    let ModelEvent::ToolCalls(calls) = &out[3] else {
        panic!("{out:?}")
    };
    assert_eq!(calls[0].arguments, r#"{"path":"a"}"#);
    let ModelEvent::Carried(carried) = &out[4] else {
        panic!("{out:?}")
    };
    assert_eq!(out[5], ModelEvent::Finish(FinishReason::ToolCalls));
    assert_eq!(
        out[6],
        ModelEvent::Usage(Usage {
            prompt_tokens: 100,
            completion_tokens: 30,
            cached_tokens: 90,
            reasoning_tokens: 0,
            cost: None,
        })
    );
    (calls.clone(), carried.clone())
}

#[test]
fn thinking_text_and_calls_stream_and_keep_their_order() {
    let (calls, _) = thought_call();
    assert_eq!(calls.len(), 1);
}

#[test]
fn thinking_goes_back_with_its_signature_and_only_to_its_model() {
    let (calls, carried) = thought_call();
    // Sent back: the same blocks in the same order, the signature untouched.
    let answer = Message::Assistant {
        text: "Reading.".into(),
        reasoning: "Look".into(),
        tool_calls: calls.clone(),
        carried: Some(Box::new(carried.clone())),
    };
    let body = request_body(
        &request(
            vec![
                Message::System("sys".into()),
                Message::User(vec![UserPart::Text("go".into())]),
                answer.clone(),
                Message::Tool {
                    call_id: "t1".into(),
                    content: "A".into(),
                    images: Vec::new(),
                },
            ],
            Some("high"),
        ),
        &origin(),
    );
    let content = &body["messages"][1]["content"];
    assert_eq!(
        content[0],
        json!({"type": "thinking", "thinking": "Look", "signature": "SIG"})
    );
    assert_eq!(content[1]["text"], "Reading.");
    assert_eq!(content[2]["input"], json!({"path": "a"}));
    assert_eq!(body["messages"][2]["content"][0]["type"], "tool_result");
    assert_eq!(body["thinking"]["budget_tokens"], 16_384);
    assert!(body["max_tokens"].as_u64().unwrap() > 16_384);
    assert_eq!(body["system"][0]["cache_control"]["type"], "ephemeral");

    // To another model, no thinking goes.
    let other = Origin {
        model: "claude-other".into(),
        ..origin()
    };
    let body = request_body(&request(vec![answer], None), &other);
    let content = body["messages"][0]["content"].as_array().unwrap();
    assert!(
        content.iter().all(|b| b["type"] != "thinking"),
        "{content:?}"
    );
    assert!(body.get("thinking").is_none());
}

#[test]
fn results_and_the_next_prompt_share_one_user_message_and_the_ends_are_cached() {
    let call = ToolCall::new("t1", "read_file", "not json");
    let body = request_body(
        &request(
            vec![
                Message::User(vec![UserPart::Text("one".into())]),
                Message::Assistant {
                    text: String::new(),
                    reasoning: String::new(),
                    tool_calls: vec![call],
                    carried: None,
                },
                Message::Tool {
                    call_id: "t1".into(),
                    content: "A".into(),
                    images: Vec::new(),
                },
                Message::User(vec![
                    UserPart::Text("two".into()),
                    UserPart::Image {
                        url: "data:image/png;base64,AAAA".into(),
                    },
                ]),
            ],
            None,
        ),
        &origin(),
    );
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3);
    assert_eq!(
        messages[1]["content"][0]["input"],
        json!({"arguments": "not json"})
    );
    let last = messages[2]["content"].as_array().unwrap();
    assert_eq!(last[0]["type"], "tool_result");
    assert_eq!(last[2]["source"]["media_type"], "image/png");
    assert_eq!(last[2]["cache_control"]["type"], "ephemeral");
    assert_eq!(
        messages[0]["content"][0]["cache_control"]["type"],
        "ephemeral"
    );
    let marks = body.to_string().matches("cache_control").count();
    assert!(marks <= 4, "{marks}");
}

#[test]
fn errors_in_the_stream_and_unknown_events() {
    let mut d = Decode::new(origin(), "http://s/v1", "claude");
    assert!(
        d.event(Some("ping"), r#"{"type":"ping"}"#)
            .unwrap()
            .is_empty()
    );
    let e = d
        .event(
            Some("error"),
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        )
        .unwrap_err();
    assert!(e.message.contains("Overloaded"), "{}", e.message);
    assert!(d.event(None, "not json").is_err());
}

#[test]
fn older_models_get_what_they_take_and_ids_are_made_unique() {
    let mut r = request(Vec::new(), None);
    r.model = "claude-3-haiku-20240307".into();
    assert_eq!(request_body(&r, &origin())["max_tokens"], 4096);
    let mut d = Decode::new(origin(), "http://s/v1", "claude");
    let mut out = Vec::new();
    for e in [
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "", "name": "read_file"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "", "name": "list_dir"}}),
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "message_stop"}),
    ] {
        out.extend(d.event(None, &e.to_string()).unwrap());
    }
    assert!(
        !out.iter()
            .any(|e| matches!(e, ModelEvent::CallStarted { .. })),
        "no id: not shown early"
    );
    let ModelEvent::ToolCalls(calls) = &out[0] else {
        panic!("{out:?}")
    };
    let ids: Vec<&str> = calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["call_0", "call_1"]);
    assert_eq!(calls[0].arguments, "{}");
}

#[test]
fn the_thinking_budget_leaves_room_for_the_answer() {
    let mut r = request(Vec::new(), Some("high"));
    r.max_tokens = Some(6000);
    let body = request_body(&r, &origin());
    assert_eq!(body["max_tokens"], 6000);
    assert_eq!(body["thinking"]["budget_tokens"], 4976);
    r.max_tokens = Some(2000);
    let body = request_body(&r, &origin());
    assert!(
        body.get("thinking").is_none(),
        "no room for the least budget: {body}"
    );
}

#[test]
fn claude_4_thinking_with_tools_asks_for_interleaved_thinking() {
    let beta = vec![("anthropic-beta", INTERLEAVED_THINKING.to_string())];
    let mut r = request(Vec::new(), Some("medium"));
    r.model = "claude-sonnet-4-5".into();
    assert_eq!(betas(&r.model, &request_body(&r, &origin())), beta);
    // Not without thinking, not without tools, not for Claude 3.7.
    let plain = ModelRequest {
        reasoning_effort: None,
        ..r.clone()
    };
    assert!(betas(&plain.model, &request_body(&plain, &origin())).is_empty());
    let toolless = ModelRequest {
        tools: Vec::new(),
        ..r.clone()
    };
    assert!(betas(&toolless.model, &request_body(&toolless, &origin())).is_empty());
    r.model = "claude-3-7-sonnet-latest".into();
    assert!(betas(&r.model, &request_body(&r, &origin())).is_empty());
}
