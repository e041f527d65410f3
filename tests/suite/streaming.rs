//! Streamed text and reasoning, what the model is sent, and usage.

use std::time::Duration;

use serde_json::json;

use crate::common::mock_model::{self, Reply};
use crate::common::{TEST_KEY, joined, of_kind, response, session_with};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_and_reasoning_stream_chunk_by_chunk() {
    let words: Vec<String> = (0..200).map(|i| format!("w{i} ")).collect();
    let mut chunks = vec![
        mock_model::reasoning_content("Let me "),
        mock_model::reasoning("think. "),
        mock_model::reasoning_content("Done thinking."),
    ];
    chunks.extend(words.iter().map(|w| mock_model::text(w)));
    chunks.push(mock_model::text("ünïcødé ✓"));
    chunks.push(mock_model::finish("stop"));
    chunks.push(mock_model::usage(1234, 201));
    let (_mock, _ws, mut agent, session) = session_with(vec![Reply::chunks(chunks)]).await;

    let (response, updates) = agent.prompt(&session, "Count for me").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert_eq!(
        joined(&updates, "agent_thought_chunk"),
        "Let me think. Done thinking.",
        "both reasoning field names arrive, in order"
    );
    let expected: String = words.concat() + "ünïcødé ✓";
    assert_eq!(joined(&updates, "agent_message_chunk"), expected);
    // Chunks that arrive together may go out merged (the load test shows paced chunks going
    // out one by one); the answer is never held back whole.
    let pieces = of_kind(&updates, "agent_message_chunk").len();
    assert!((1..=201).contains(&pieces), "{pieces} updates");
    let thought_pos = updates
        .iter()
        .position(|u| u["params"]["update"]["sessionUpdate"] == "agent_thought_chunk")
        .unwrap();
    let text_pos = updates
        .iter()
        .position(|u| u["params"]["update"]["sessionUpdate"] == "agent_message_chunk")
        .unwrap();
    assert!(thought_pos < text_pos);
    for u in &updates {
        assert_eq!(u["params"]["sessionId"], session.as_str());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn updates_reach_the_editor_before_the_answer_is_complete() {
    // The last chunk only comes after a long pause; the first must be visible well before.
    let reply = Reply::Stream {
        pieces: vec![
            mock_model::Piece::Data(mock_model::text("early ").to_string()),
            mock_model::Piece::Delay(Duration::from_millis(1500)),
            mock_model::Piece::Data(mock_model::text("late").to_string()),
            mock_model::Piece::Data(mock_model::finish("stop").to_string()),
        ],
        end: mock_model::End::Done,
    };
    let (_mock, _ws, mut agent, session) = session_with(vec![reply]).await;
    let rx = agent.start_prompt(&session, "hi").await;
    let first = agent.next_message().await;
    assert_eq!(first["params"]["update"]["content"]["text"], "early ");
    let response = response(rx).await;
    assert_eq!(response["result"]["stopReason"], "end_turn");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_request_carries_system_prompt_user_text_model_and_key() {
    let (mock, ws, mut agent, session) = session_with(vec![Reply::text(&["ok"])]).await;
    agent.prompt(&session, "What is in this project?").await;
    let requests = mock.requests();
    assert_eq!(requests.len(), 1);
    let r = &requests[0];
    assert_eq!(r.path, "/v1/chat/completions");
    assert_eq!(
        r.authorization().as_deref(),
        Some(format!("Bearer {TEST_KEY}").as_str())
    );
    assert_eq!(r.body["model"], "mock-model");
    assert_eq!(r.body["stream"], true);
    assert_eq!(r.body["stream_options"]["include_usage"], true);
    assert_eq!(r.body["messages"][0]["role"], "system");
    let system = r.system_prompt();
    assert!(system.contains("tandem"), "{system}");
    assert!(
        system.contains(&ws.project().display().to_string()),
        "system prompt names the cwd"
    );
    assert!(system.contains("Mode: ask"), "{system}");
    assert_eq!(
        r.body["messages"][1],
        json!({"role": "user", "content": "What is in this project?"})
    );
    assert!(r.body.get("reasoning_effort").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_carries_into_the_next_prompt() {
    let (mock, _ws, mut agent, session) = session_with(vec![
        Reply::text(&["Paris", "."]),
        Reply::text(&["About 2.1 million."]),
    ])
    .await;
    agent.prompt(&session, "Capital of France?").await;
    agent.prompt(&session, "Population?").await;
    let second = &mock.requests()[1];
    let roles: Vec<_> = second.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "user"]);
    assert_eq!(second.body["messages"][2]["content"], "Paris.");
    assert_eq!(second.last_user_text(), "Population?");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_update_reports_context_in_use_and_window() {
    let mut env_models = vec![Reply::text(&["a"]), Reply::text(&["b"])];
    // Second answer reports a smaller context than the first: `used` is not a running sum.
    env_models[1] = Reply::chunks(vec![
        mock_model::text("b"),
        mock_model::finish("stop"),
        mock_model::usage(50, 7),
    ]);
    let (_mock, _ws, mut agent, session) = session_with(env_models).await;
    let (_, first) = agent.prompt(&session, "one").await;
    let usage = of_kind(&first, "usage_update");
    assert_eq!(usage.len(), 1);
    assert_eq!(usage[0]["used"], 101, "prompt 100 + completion 1");
    assert_eq!(
        usage[0]["size"], 128000,
        "default window for an unknown model"
    );
    let (_, second) = agent.prompt(&session, "two").await;
    assert_eq!(of_kind(&second, "usage_update")[0]["used"], 57);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_is_estimated_when_the_server_reports_none() {
    let reply = Reply::chunks(vec![
        mock_model::text("twelve chars"),
        mock_model::finish("stop"),
    ]);
    let (_mock, _ws, mut agent, session) = session_with(vec![reply]).await;
    let (_, updates) = agent.prompt(&session, "hi").await;
    let used = of_kind(&updates, "usage_update")[0]["used"]
        .as_u64()
        .unwrap();
    assert!(used > 3 && used < 1000, "an estimate, not zero: {used}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finish_reasons_map_to_stop_reasons() {
    let (_mock, _ws, mut agent, session) = session_with(vec![
        Reply::chunks(vec![
            mock_model::text("trunc"),
            mock_model::finish("length"),
        ]),
        Reply::chunks(vec![mock_model::finish("content_filter")]),
        Reply::chunks(vec![mock_model::text("x"), mock_model::finish("eos_token")]),
    ])
    .await;
    assert_eq!(
        agent.prompt(&session, "1").await.0["result"]["stopReason"],
        "max_tokens"
    );
    assert_eq!(
        agent.prompt(&session, "2").await.0["result"]["stopReason"],
        "refusal"
    );
    assert_eq!(
        agent.prompt(&session, "3").await.0["result"]["stopReason"],
        "end_turn"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rich_prompt_content_reaches_the_model() {
    let (mock, _ws, mut agent, session) = session_with(vec![Reply::text(&["seen"])]).await;
    let response = agent
        .request(
            "session/prompt",
            json!({"sessionId": session, "prompt": [
                {"type": "text", "text": "Review these"},
                {"type": "resource_link", "name": "lib.rs", "uri": "file:///p/src/lib.rs"},
                {"type": "resource", "resource": {"uri": "file:///p/notes.md", "text": "remember the milk"}},
                {"type": "image", "data": crate::common::images::PIXEL_PNG, "mimeType": "image/png"}
            ]}),
        )
        .await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let body = &mock.requests()[0].body;
    let content = &body["messages"][1]["content"];
    let text = crate::common::mock_model::content_text(content);
    assert!(text.contains("Review these"));
    assert!(text.contains("lib.rs](file:///p/src/lib.rs)"));
    assert!(text.contains("<context uri=\"file:///p/notes.md\">\nremember the milk\n</context>"));
    // mock-model is not known to take images: the model is told one was left out.
    assert!(text.contains("image omitted"), "{content}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn images_go_as_image_parts_to_models_that_take_them() {
    let mock = crate::common::MockModel::start(vec![Reply::text(&["a cat"])]).await;
    let ws = crate::common::Workspace::new();
    let mut env = ws.env(&mock);
    env.retain(|(k, _)| k != "TANDEM_MODEL");
    env.push(("TANDEM_MODEL".into(), "gpt-4o".into()));
    let mut agent = crate::common::Agent::spawn(&env, &[]);
    let id = agent.open_session(&ws.project()).await;
    agent
        .request_ok(
            "session/prompt",
            json!({"sessionId": id, "prompt": [
                {"type": "text", "text": "What is this?"},
                {"type": "image", "data": crate::common::images::PIXEL_PNG, "mimeType": "image/png"}
            ]}),
        )
        .await;
    let content = &mock.requests()[0].body["messages"][1]["content"];
    assert_eq!(content[1]["type"], "image_url");
    assert_eq!(
        content[1]["image_url"]["url"],
        format!("data:image/png;base64,{}", crate::common::images::PIXEL_PNG)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_call_fragments_without_index_are_joined_and_run() {
    // Some servers split a call across chunks and leave out `index`.
    let reply = Reply::chunks(vec![
        mock_model::text("Let me look."),
        mock_model::delta(
            json!({"tool_calls": [{"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{\"pa"}}]}),
        ),
        mock_model::delta(
            json!({"tool_calls": [{"function": {"arguments": "th\": \"notes.txt\"}"}}]}),
        ),
        mock_model::finish("tool_calls"),
        mock_model::usage(10, 5),
    ]);
    let (mock, ws, mut agent, session) =
        session_with(vec![reply, Reply::text(&["Read it."])]).await;
    std::fs::write(ws.project().join("notes.txt"), "remember the milk\n").unwrap();
    let (response, updates) = agent.prompt(&session, "read notes").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert_eq!(
        joined(&updates, "agent_message_chunk"),
        "Let me look.Read it."
    );
    let second = &mock.requests()[1].body["messages"];
    assert_eq!(
        second[2]["tool_calls"][0]["function"]["arguments"],
        "{\"path\": \"notes.txt\"}"
    );
    assert_eq!(second[3]["tool_call_id"], "c1");
    assert_eq!(second[3]["content"], "remember the milk\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paced_pieces_go_out_one_by_one() {
    // Merging only takes what is already waiting: pieces 200 ms apart are never held back
    // for the next one.
    let reply = Reply::text(&["one ", "two ", "three ", "four"]).slow(Duration::from_millis(200));
    let (_mock, _ws, mut agent, session) = session_with(vec![reply]).await;
    let (response, updates) = agent.prompt(&session, "count").await;
    assert_eq!(response["result"]["stopReason"], "end_turn");
    let texts: Vec<&str> = of_kind(&updates, "agent_message_chunk")
        .iter()
        .map(|u| u["content"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["one ", "two ", "three ", "four"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llama_cpp_chunk_shapes_stream_and_call_tools() {
    use crate::common::mock_model::llamacpp;
    let mut calling = vec![llamacpp::role()];
    calling.extend(llamacpp::tool_call(
        "lc1",
        "read_file",
        r#"{"path": "README.md"}"#,
    ));
    calling.push(llamacpp::finish("tool_calls"));
    calling.push(llamacpp::usage(241, 35, 0));
    let answer = vec![
        llamacpp::role(),
        llamacpp::text("It"),
        llamacpp::text(" says hi."),
        llamacpp::finish("stop"),
        llamacpp::usage(300, 4, 241),
    ];
    let (mock, ws, mut agent, session) =
        session_with(vec![Reply::chunks(calling), Reply::chunks(answer)]).await;
    ws.write("project/README.md", "hi\n");
    let (response, updates) = agent.prompt(&session, "read it").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert_eq!(joined(&updates, "agent_message_chunk"), "It says hi.");
    let second = &mock.requests()[1];
    let result = crate::common::calls::tool_result(second, "lc1");
    assert!(result.contains("hi"), "{result}");
    let usage = agent
        .request_ok("_tandem/usage", json!({"sessionId": session}))
        .await;
    assert_eq!(usage["cachedTokens"], 241, "{usage}");
    assert_eq!(
        of_kind(&updates, "usage_update").last().unwrap()["used"],
        304
    );
}
