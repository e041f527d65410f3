//! The mock model speaks the Anthropic Messages API and the OpenAI Responses API too: a
//! scripted chat-completions reply goes out translated into that API's SSE events, and a
//! request that breaks one of that API's rules is refused with its error, taking no reply.

use std::time::Duration;

use serde_json::{Value, json};

use crate::common::gate::Gate;
use crate::common::mock_model::{self, End, Piece};
use crate::common::wire_client::{
    ANTHROPIC, THOUGHT, accepted, answer_text, events, join, messages, read_until, refused, round,
    send, shape,
};
use crate::common::{MockModel, Reply, fnv_hex};

#[tokio::test]
async fn anthropic_gets_the_script_as_messages_events() {
    let mock = MockModel::start(vec![round()]).await;
    let user = json!({"role": "user", "content": "go"});
    let events = accepted(&mock, "/messages", ANTHROPIC, &messages(vec![user])).await;
    assert_eq!(
        shape(&events),
        "message_start ping start:thinking thinking_delta signature_delta content_block_stop \
         start:text text_delta content_block_stop start:tool_use input_json_delta \
         content_block_stop start:tool_use input_json_delta content_block_stop message_delta \
         message_stop"
    );
    let start = &events[0]["message"];
    assert_eq!(start["id"], "msg_mock_1");
    assert_eq!(start["model"], "claude-mock");
    assert_eq!(
        start["usage"],
        json!({"input_tokens": 200, "cache_read_input_tokens": 100,
               "cache_creation_input_tokens": 0, "output_tokens": 1})
    );
    let delta = |field| join(&events, "content_block_delta", field);
    assert_eq!(delta("/delta/thinking"), THOUGHT);
    assert_eq!(
        delta("/delta/signature"),
        format!("sig-{}", fnv_hex(THOUGHT))
    );
    assert_eq!(delta("/delta/text"), "Reading.");
    let starts: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "content_block_start")
        .collect();
    let indexes: Vec<u64> = starts.iter().filter_map(|s| s["index"].as_u64()).collect();
    assert_eq!(indexes, [0, 1, 2, 3]);
    assert_eq!(
        starts[2]["content_block"],
        json!({"type": "tool_use", "id": "call_1", "name": "read_file", "input": {}})
    );
    assert_eq!(starts[3]["content_block"]["id"], "call_2");
    let args = |index: u64| {
        let of: Vec<Value> = events
            .iter()
            .filter(|e| e["index"] == index)
            .cloned()
            .collect();
        join(&of, "content_block_delta", "/delta/partial_json")
    };
    assert_eq!(args(2), r#"{"path":"a.txt"}"#);
    assert_eq!(args(3), r#"{"path":"b.txt"}"#);
    let end = &events[events.len() - 2];
    assert_eq!(
        end["delta"],
        json!({"stop_reason": "tool_use", "stop_sequence": null})
    );
    assert_eq!(end["usage"]["output_tokens"], 40);
}

/// The events of [`round`] on the Responses API, encrypted reasoning asked for.
async fn responses_round() -> Vec<Value> {
    let mock = MockModel::start(vec![round()]).await;
    let body = json!({"model": "gpt-mock", "input": "go", "store": false,
                      "include": ["reasoning.encrypted_content"]});
    accepted(&mock, "/responses", &[], &body).await
}

#[tokio::test]
async fn responses_gets_the_script_as_responses_events() {
    let events = responses_round().await;
    let call = "added:function_call function_call_arguments.delta \
                function_call_arguments.done output_item.done";
    assert_eq!(
        shape(&events),
        format!(
            "created in_progress added:reasoning reasoning_summary_part.added \
             reasoning_summary_text.delta reasoning_summary_text.done \
             reasoning_summary_part.done output_item.done added:message content_part.added \
             output_text.delta output_text.done content_part.done output_item.done {call} \
             {call} completed"
        )
    );
    for (i, event) in events.iter().enumerate() {
        assert_eq!(event["sequence_number"], i, "{event}");
    }
    assert_eq!(
        events[0]["response"],
        json!({"id": "resp_mock_1", "object": "response", "status": "in_progress", "output": []})
    );
    let summary = join(&events, "response.reasoning_summary_text.delta", "/delta");
    assert_eq!(summary, THOUGHT);
    assert_eq!(answer_text(&events), "Reading.");
    let args = join(&events, "response.function_call_arguments.delta", "/delta");
    assert_eq!(args, r#"{"path":"a.txt"}{"path":"b.txt"}"#);
    let done = &events[events.len() - 1]["response"];
    assert_eq!(done["status"], "completed");
    assert_eq!(
        done["usage"],
        json!({"input_tokens": 300, "input_tokens_details": {"cached_tokens": 100},
               "output_tokens": 40, "output_tokens_details": {"reasoning_tokens": 0},
               "total_tokens": 340})
    );
}

#[tokio::test]
async fn responses_items_are_whole_when_done() {
    let events = responses_round().await;
    let output = events[events.len() - 1]["response"]["output"].clone();
    let encrypted = format!("enc-{}", fnv_hex(THOUGHT));
    assert_eq!(
        output[0],
        json!({"type": "reasoning", "id": "rs_mock_1_0", "encrypted_content": encrypted,
               "summary": [{"type": "summary_text", "text": THOUGHT}]})
    );
    assert_eq!(
        output[1],
        json!({"type": "message", "id": "msg_mock_1_1", "role": "assistant",
               "status": "completed",
               "content": [{"type": "output_text", "text": "Reading.", "annotations": []}]})
    );
    assert_eq!(
        output[2],
        json!({"type": "function_call", "id": "fc_mock_1_2", "call_id": "call_1",
               "name": "read_file", "arguments": r#"{"path":"a.txt"}"#, "status": "completed"})
    );
    assert_eq!(output[3]["call_id"], "call_2");
    let of = |kind: &str| -> Vec<&Value> { events.iter().filter(|e| e["type"] == kind).collect() };
    for (i, done) in of("response.output_item.done").iter().enumerate() {
        assert_eq!(done["item"], output[i]);
        assert_eq!(done["output_index"], i);
    }
    let added = of("response.output_item.added");
    assert_eq!(
        added[2]["item"],
        json!({"type": "function_call", "id": "fc_mock_1_2", "call_id": "call_1",
               "name": "read_file", "arguments": "", "status": "in_progress"})
    );
    let args = of("response.function_call_arguments.done");
    assert_eq!(args[0]["arguments"], r#"{"path":"a.txt"}"#);
    assert_eq!(args[0]["item_id"], "fc_mock_1_2");
    let text = of("response.output_text.delta");
    assert_eq!(
        (&text[0]["item_id"], &text[0]["output_index"]),
        (&json!("msg_mock_1_1"), &json!(1))
    );
}

#[tokio::test]
async fn both_apis_report_the_end_an_error_and_no_encryption_unasked() {
    let cut = || {
        let chunks = vec![mock_model::text("a"), mock_model::finish("length")];
        Reply::chunks(chunks)
    };
    let failing = || {
        let error = json!({"error": {"message": "overloaded", "code": 529}});
        Reply::chunks(vec![mock_model::text("a"), error])
    };
    let mock = MockModel::start(vec![cut(), cut(), failing(), failing(), round()]).await;
    let user = json!({"role": "user", "content": "go"});
    let input = json!({"model": "gpt-mock", "input": "go"});

    let events = accepted(&mock, "/messages", ANTHROPIC, &messages(vec![user.clone()])).await;
    assert_eq!(
        events[events.len() - 2]["delta"]["stop_reason"],
        "max_tokens"
    );
    let events = accepted(&mock, "/responses", &[], &input).await;
    let last = &events[events.len() - 1];
    assert_eq!(last["type"], "response.incomplete");
    assert_eq!(last["response"]["status"], "incomplete");
    let details = &last["response"]["incomplete_details"];
    assert_eq!(details, &json!({"reason": "max_output_tokens"}));

    let events = accepted(&mock, "/messages", ANTHROPIC, &messages(vec![user])).await;
    assert_eq!(
        events[events.len() - 1],
        json!({"type": "error", "error": {"type": "api_error", "message": "overloaded"}})
    );
    let events = accepted(&mock, "/responses", &[], &input).await;
    let last = &events[events.len() - 1];
    assert_eq!(last["type"], "response.failed");
    assert_eq!(last["response"]["status"], "failed");
    let error = &last["response"]["error"];
    assert_eq!(
        error,
        &json!({"code": "server_error", "message": "overloaded"})
    );

    let events = accepted(&mock, "/responses", &[], &input).await;
    let done = &events[events.len() - 1]["response"]["output"][0];
    assert_eq!(done["id"], "rs_mock_5_0");
    assert!(done.get("encrypted_content").is_none(), "{done}");
}

#[tokio::test]
async fn gates_hold_the_translated_stream_and_floods_speak_the_api() {
    let gate = Gate::new();
    let data = |chunk: Value| Piece::Data(chunk.to_string());
    let held = Reply::Stream {
        pieces: vec![
            data(mock_model::text("early")),
            Piece::Gate(gate.clone()),
            data(mock_model::text("late")),
            data(mock_model::finish("stop")),
        ],
        end: End::Done,
    };
    let flood = || Reply::Stream {
        pieces: vec![],
        end: End::Flood("x"),
    };
    let mock = MockModel::start(vec![held, flood(), flood()]).await;
    let body = messages(vec![json!({"role": "user", "content": "go"})]);

    let mut response = send(&mock, "/messages", ANTHROPIC, &body).await;
    let mut text = String::new();
    read_until(&mut response, &mut text, |t| t.contains("early")).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!text.contains("late"), "{text}");
    gate.open();
    text.push_str(&response.text().await.unwrap());
    assert_eq!(answer_text(&events(&text)), "earlylate");

    let mut response = send(&mock, "/messages", ANTHROPIC, &body).await;
    let mut text = String::new();
    read_until(&mut response, &mut text, |t| {
        t.matches("text_delta").count() >= 3
    })
    .await;
    let flooded = events(&text);
    assert!(shape(&flooded).starts_with("message_start ping start:text text_delta"));
    let deltas = &flooded[3..];
    assert!(
        deltas
            .iter()
            .all(|e| e["delta"]["text"] == "x" && e["index"] == 0)
    );

    let mut response = send(&mock, "/responses", &[], &json!({"input": "go"})).await;
    let mut text = String::new();
    let enough = |t: &str| t.matches("output_text.delta").count() >= 3;
    read_until(&mut response, &mut text, enough).await;
    let flooded = events(&text);
    assert!(shape(&flooded).starts_with("created in_progress added:message"));
    let numbers: Vec<u64> = flooded
        .iter()
        .filter_map(|e| e["sequence_number"].as_u64())
        .collect();
    assert!(numbers.len() >= 6 && numbers.windows(2).all(|w| w[0] + 1 == w[1]));
}

fn invalid(message: &str) -> (u16, &'static str, &str) {
    (400, "invalid_request_error", message)
}

#[tokio::test]
async fn anthropic_refuses_bad_headers_and_parameters() {
    let mock = MockModel::start(vec![Reply::text(&["ok"])]).await;
    let good = messages(vec![json!({"role": "user", "content": "hi"})]);
    let with = |key: &str, value: Value| {
        let mut body = good.clone();
        body[key] = value;
        body
    };
    let mock = &mock;
    type Headers = &'static [(&'static str, &'static str)];
    let at = |headers: Headers, body: &Value, expected: (u16, &'static str, &'static str)| {
        let body = body.clone();
        async move { refused(mock, "/messages", headers, &body, expected).await }
    };
    let version = "anthropic-version: header is required";
    at(&[("x-api-key", "k")], &good, invalid(version)).await;
    let bearer = &[("anthropic-version", "1"), ("authorization", "Bearer k")];
    at(
        bearer,
        &good,
        (401, "authentication_error", "invalid x-api-key"),
    )
    .await;
    let beta = &[
        ("anthropic-version", "2023-06-01"),
        ("x-api-key", "k"),
        (
            "anthropic-beta",
            "interleaved-thinking-2025-05-14, thinking-forever-2099-01-01",
        ),
    ];
    let unknown = "Unexpected value(s) `thinking-forever-2099-01-01` for the `anthropic-beta` header. Please consult our documentation at docs.anthropic.com or try again without the header.";
    at(beta, &good, invalid(unknown)).await;
    let mut unbounded = good.clone();
    unbounded.as_object_mut().unwrap().remove("max_tokens");
    at(ANTHROPIC, &unbounded, invalid("max_tokens: Field required")).await;
    let zero = with("max_tokens", json!(0));
    let positive = "max_tokens: Input should be greater than or equal to 1";
    at(ANTHROPIC, &zero, invalid(positive)).await;
    let system =
        json!([{"role": "system", "content": "be terse"}, {"role": "user", "content": "hi"}]);
    at(ANTHROPIC, &with("messages", system), invalid("messages: Unexpected role \"system\". The Messages API accepts a top-level `system` parameter, not \"system\" as an input message role.")).await;
    let small = with("thinking", json!({"type": "enabled", "budget_tokens": 512}));
    let budget = "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024";
    at(ANTHROPIC, &small, invalid(budget)).await;
    let large = with(
        "thinking",
        json!({"type": "enabled", "budget_tokens": 2048}),
    );
    let over = "`max_tokens` must be greater than `thinking.budget_tokens`";
    at(ANTHROPIC, &large, invalid(over)).await;

    let cached = json!({"type": "ephemeral"});
    let tool = json!({"name": "t", "input_schema": {"type": "object"}, "cache_control": cached});
    let mut five = with("tools", json!([tool, tool]));
    five["system"] = json!([{"type": "text", "text": "a", "cache_control": cached},
                            {"type": "text", "text": "b"}]);
    five["messages"] = json!([{"role": "user", "content": [
        {"type": "text", "text": "hi", "cache_control": cached},
        {"type": "tool_result", "tool_use_id": "t", "content": [
            {"type": "text", "text": "r", "cache_control": cached}]}]}]);
    let most = "A maximum of 4 blocks with cache_control may be provided. Found 5.";
    at(ANTHROPIC, &five, invalid(most)).await;

    let mut four = good.clone();
    four["tools"] = five["tools"].clone();
    four["system"] = five["system"].clone();
    four["messages"][0]["content"] =
        json!([{"type": "text", "text": "hi", "cache_control": cached}]);
    four["thinking"] = json!({"type": "enabled", "budget_tokens": 1024});
    let betas = &[
        ("anthropic-version", "2023-06-01"),
        ("x-api-key", "k"),
        (
            "anthropic-beta",
            "prompt-caching-2024-07-31,interleaved-thinking-2025-05-14",
        ),
    ];
    let events = accepted(mock, "/messages", betas, &four).await;
    assert_eq!(answer_text(&events), "ok");
    let requests = mock.requests();
    assert_eq!(requests.len(), 10);
    assert_eq!(requests[9].system_prompt(), "a\nb");
    assert_eq!(requests[9].last_user_text(), "hi");
}

#[tokio::test]
async fn anthropic_holds_tool_use_and_thinking_to_the_api_rules() {
    let mock = MockModel::start(vec![round(), Reply::text(&["done"])]).await;
    let user = json!({"role": "user", "content": "go"});
    accepted(&mock, "/messages", ANTHROPIC, &messages(vec![user.clone()])).await;

    let signature = format!("sig-{}", fnv_hex(THOUGHT));
    let thinking = json!({"type": "thinking", "thinking": THOUGHT, "signature": signature});
    let text = json!({"type": "text", "text": "Reading."});
    let uses = [("call_1", "a.txt"), ("call_2", "b.txt")].map(|(id, path)| {
        json!({"type": "tool_use", "id": id, "name": "read_file", "input": {"path": path}})
    });
    let assistant = |first: Vec<Value>| {
        let blocks: Vec<Value> = first.into_iter().chain(uses.iter().cloned()).collect();
        json!({"role": "assistant", "content": blocks})
    };
    let result = |id: &str| json!({"type": "tool_result", "tool_use_id": id, "content": "x"});
    let results = |ids: &[&str]| {
        let blocks: Vec<Value> = ids.iter().map(|id| result(id)).collect();
        json!({"role": "user", "content": blocks})
    };
    let history = |reply: Value, answer: Value| messages(vec![user.clone(), reply, answer]);
    let full = || assistant(vec![thinking.clone(), text.clone()]);
    let mock = &mock;
    let at = |body: Value, message: String| async move {
        refused(mock, "/messages", ANTHROPIC, &body, invalid(&message)).await;
    };
    let unanswered = |ids: &str| {
        format!(
            "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: {ids}. Each `tool_use` block must have a corresponding `tool_result` block in the next message."
        )
    };

    at(history(full(), results(&["call_1"])), unanswered("call_2")).await;
    let late = json!({"role": "user", "content": [
        {"type": "text", "text": "here"}, result("call_1"), result("call_2")]});
    at(history(full(), late), unanswered("call_1, call_2")).await;
    let alone = messages(vec![user.clone(), full()]);
    at(alone, unanswered("call_1, call_2")).await;
    let stray = history(full(), results(&["call_1", "call_2", "call_9"]));
    at(stray, "messages.2.content.2: unexpected `tool_use_id` found in `tool_result` blocks: call_9. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.".into()).await;

    let answered = results(&["call_1", "call_2"]);
    let bare = history(assistant(vec![text.clone()]), answered.clone());
    at(bare, "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `text`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns.".into()).await;
    let forged = "messages.1.content.0: Invalid `signature` in `thinking` block".to_string();
    let mut changed = thinking.clone();
    changed["thinking"] = json!("Let me think again.");
    let changed = history(assistant(vec![changed, text.clone()]), answered.clone());
    at(changed, forged.clone()).await;
    let mut unsigned = thinking.clone();
    unsigned["signature"] = json!("");
    at(history(assistant(vec![unsigned]), answered.clone()), forged).await;

    let events = accepted(mock, "/messages", ANTHROPIC, &history(full(), answered)).await;
    assert_eq!(answer_text(&events), "done");
    assert_eq!(mock.requests().last().unwrap().last_user_text(), "x\nx");
}

#[tokio::test]
async fn responses_holds_input_items_to_the_api_rules() {
    let script = vec![round(), Reply::text(&["done"]), Reply::text(&["kept"])];
    let mock = MockModel::start(script).await;
    let base = json!({"model": "gpt-mock", "store": false, "instructions": "be terse",
                      "include": ["reasoning.encrypted_content"], "input": "go"});
    let with = |key: &str, value: Value| {
        let mut body = base.clone();
        body[key] = value;
        body
    };
    let mock = &mock;
    let at = |body: Value, (status, message): (u16, String)| async move {
        let expected = (status, "invalid_request_error", message.as_str());
        refused(mock, "/responses", &[], &body, expected).await;
    };
    let mut bare = base.clone();
    bare.as_object_mut().unwrap().remove("input");
    at(
        bare.clone(),
        (400, "Missing required parameter: 'input'.".into()),
    )
    .await;
    bare["messages"] = json!([{"role": "user", "content": "go"}]);
    at(bare, (400, "Unknown parameter: 'messages'.".into())).await;

    let events = accepted(mock, "/responses", &[], &base).await;
    let output = events[events.len() - 1]["response"]["output"].clone();
    let output = output.as_array().unwrap();
    let user = json!({"role": "user", "content": [{"type": "input_text", "text": "go"}]});
    let outputs = ["call_1", "call_2"]
        .map(|id| json!({"type": "function_call_output", "call_id": id, "output": "x"}));
    let input = |items: Vec<Value>| with("input", json!([items, outputs.to_vec()].concat()));
    let (reasoning, rest) = (output[0].clone(), output[1..].to_vec());
    let turn = |reasoning: Value| [vec![user.clone(), reasoning], rest.clone()].concat();

    let gone = (404, "Item with id 'rs_mock_3_0' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input.".to_string());
    let mut bare = reasoning.clone();
    bare.as_object_mut().unwrap().remove("encrypted_content");
    at(input(turn(bare.clone())), gone.clone()).await;
    // Under `store: false` an id names nothing, even beside the encrypted content.
    at(input(turn(reasoning.clone())), gone).await;
    let mut unstored = reasoning.clone();
    unstored.as_object_mut().unwrap().remove("id");
    let mut forged = unstored.clone();
    forged["encrypted_content"] = json!("enc-0000000000000000");
    let unverified = "The encrypted content could not be verified.";
    at(input(turn(forged.clone())), (400, unverified.into())).await;
    let mut forged_stored = input(turn(reasoning.clone()));
    forged_stored["store"] = json!(true);
    forged_stored["input"][1]["encrypted_content"] = json!("enc-0000000000000000");
    let unverified = "The encrypted content for item rs_mock_3_0 could not be verified.";
    at(forged_stored, (400, unverified.into())).await;
    let missing = (400, "Item 'fc_mock_3_2' of type 'function_call' was provided without its required 'reasoning' item: 'rs_mock_3_0'.".to_string());
    at(
        input([vec![user.clone()], rest.clone()].concat()),
        missing.clone(),
    )
    .await;
    let before_user = [vec![unstored.clone(), user.clone()], rest.clone()].concat();
    at(input(before_user), missing).await;
    let mut stray = turn(unstored.clone());
    stray.push(json!({"type": "function_call_output", "call_id": "call_9", "output": "x"}));
    stray.push(
        json!({"type": "function_call", "call_id": "call_9", "name": "f", "arguments": "{}"}),
    );
    let no_call = "No tool call found for function call output with call_id call_9.";
    at(with("input", json!(stray)), (400, no_call.into())).await;

    let events = accepted(mock, "/responses", &[], &input(turn(unstored))).await;
    assert_eq!(answer_text(&events), "done");
    let mut stored = input(turn(bare));
    stored["store"] = json!(true);
    let events = accepted(mock, "/responses", &[], &stored).await;
    assert_eq!(answer_text(&events), "kept");
    let last = mock.requests().last().unwrap().clone();
    assert_eq!(last.system_prompt(), "be terse");
    assert_eq!(last.last_user_text(), "go");
}

#[tokio::test]
async fn echo_and_plain_replies_on_both_apis() {
    let echo = || Reply::Echo {
        pieces: 2,
        pause: Duration::ZERO,
    };
    let overloaded =
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
    let script = vec![echo(), echo(), Reply::status(529, overloaded)];
    let mock = MockModel::start(script).await;
    let anthropic = json!({"model": "m", "max_tokens": 100, "system": "sys", "messages": [
        {"role": "user", "content": "first"}, {"role": "assistant", "content": "ok"},
        {"role": "user", "content": [{"type": "text", "text": "echo"}, {"type": "text", "text": "me"}]}]});
    let events = accepted(&mock, "/messages", ANTHROPIC, &anthropic).await;
    assert_eq!(answer_text(&events), "echo\nme");
    let responses = json!({"input": [{"role": "user", "content": "first"},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "say this"}]},
        {"type": "function_call", "call_id": "c", "name": "n", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c", "output": "not me"}]});
    let events = accepted(&mock, "/responses", &[], &responses).await;
    assert_eq!(answer_text(&events), "say this");
    let response = send(&mock, "/messages", ANTHROPIC, &anthropic).await;
    assert_eq!(response.status().as_u16(), 529);
    assert_eq!(response.text().await.unwrap(), overloaded);
    let requests = mock.requests();
    assert_eq!(requests[0].path, "/v1/messages");
    assert_eq!(requests[0].system_prompt(), "sys");
    assert_eq!(requests[1].path, "/v1/responses");
    assert_eq!(requests[1].system_prompt(), "");
}
