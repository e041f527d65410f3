//! One conversation, every provider: a session whose user switches model at each prompt —
//! from a local server that sends calls without ids, to Kimi, DeepSeek, Gemini and Mistral on
//! chat completions, Claude on the Messages API, GPT-5.1 on the Responses API, and back to
//! DeepSeek — with a tool call in every turn. Each server is a mock enforcing that provider's
//! contract with its own status and message (`tests/common/contract.rs`,
//! `anthropic_wire.rs`, `responses_wire.rs`), so a history one of them refuses fails the
//! turn here as it would for the user. What tandem sent at each switch is a reviewed
//! snapshot (`snapshots/`): the call ids each provider was given, the reasoning field
//! DeepSeek and Kimi demand, and no provider's opaque state at another.

use serde_json::{Value, json};

use crate::common::contract::{Contract, deepseek_round, gemini_round};
use crate::common::mock_model::{delta, finish, reasoning_content, tool_call, usage};
use crate::common::{Agent, MockModel, Reply, Workspace, copy_fixture, editor::FakeEditor};

/// One stop of the tour: a model on its own server.
struct Stop {
    /// The `[[providers]]` name.
    provider: &'static str,
    model: &'static str,
    /// The API its server speaks (`api = …`).
    api: &'static str,
    contract: Option<Contract>,
    /// Its answers for one turn: a call, then a closing text.
    script: Vec<Reply>,
}

fn read(id: &str) -> (&'static str, &'static str, Value) {
    let id: &'static str = Box::leak(id.to_string().into_boxed_str());
    (id, "read_file", json!({"path": "README.md"}))
}

/// A call without an id, as llama.cpp's older builds and some proxies send it.
fn idless_call() -> Reply {
    Reply::chunks(vec![
        delta(json!({"role": "assistant", "content": null})),
        tool_call(0, "", "read_file", r#"{"path": "README.md"}"#),
        finish("tool_calls"),
        usage(200, 20),
    ])
}

/// A call with `id` after some reasoning, as Kimi, Claude (translated to thinking) and
/// GPT-5.1 (translated to a reasoning item) send it.
fn thinking_call(thought: &str, id: &str) -> Reply {
    Reply::chunks(vec![
        reasoning_content(thought),
        tool_call(0, id, "read_file", r#"{"path": "README.md"}"#),
        finish("tool_calls"),
        usage(200, 20),
    ])
}

fn done(who: &str) -> Reply {
    Reply::text(&[&format!("{who} read it.")])
}

fn tour() -> Vec<Stop> {
    vec![
        Stop {
            provider: "p-kimi",
            model: "kimi-k2.6",
            api: "chat-completions",
            contract: Some(Contract::Kimi),
            script: vec![
                thinking_call("Kimi looks.", "functions.read_file:0"),
                done("Kimi"),
            ],
        },
        Stop {
            provider: "p-deepseek",
            model: "deepseek-v4-pro",
            api: "chat-completions",
            contract: Some(Contract::DeepSeek),
            script: vec![
                deepseek_round("DeepSeek looks.", &[read("call_00_ds1")]),
                done("DeepSeek"),
                // Its second visit, at the end of the tour.
                deepseek_round("DeepSeek again.", &[read("call_00_ds2")]),
                done("DeepSeek"),
            ],
        },
        Stop {
            provider: "p-gemini",
            model: "gemini-3-pro-preview",
            api: "chat-completions",
            contract: Some(Contract::Gemini),
            script: vec![gemini_round(&[read("gm1")]), done("Gemini")],
        },
        Stop {
            provider: "p-mistral",
            model: "mistral-large-latest",
            api: "chat-completions",
            contract: Some(Contract::Mistral),
            script: vec![Reply::tools(&[read("Xy12Ab34C")]), done("Mistral")],
        },
        Stop {
            provider: "p-anthropic",
            model: "claude-sonnet-4-5",
            api: "anthropic-messages",
            contract: None,
            script: vec![
                thinking_call("Claude looks.", "toolu_01Switch"),
                done("Claude"),
            ],
        },
        Stop {
            provider: "p-openai",
            model: "gpt-5.1",
            api: "responses",
            contract: None,
            script: vec![thinking_call("GPT looks.", "call_resp1"), done("GPT")],
        },
    ]
}

/// The user's config: the default server's `mock-model` and one provider per stop.
fn config(stops: &[(Stop, MockModel)]) -> String {
    let mut text = String::from("[[models]]\nid = \"mock-model\"\n\n");
    for (stop, mock) in stops {
        text.push_str(&format!(
            "[[providers]]\nname = \"{}\"\nbase_url = \"{}\"\napi = \"{}\"\napi_key_env = \"SWITCH_KEY\"\n\n\
             [[models]]\nid = \"{}\"\nprovider = \"{}\"\n\n",
            stop.provider, mock.base_url, stop.api, stop.model, stop.provider
        ));
    }
    text
}

/// tandem on `local` (the default server) with the workspace's providers' key set, its
/// editor's fake, and a session in the project.
async fn switching_agent(ws: &Workspace, local: &MockModel) -> (Agent, String) {
    let mut env = ws.env(local);
    env.push(("SWITCH_KEY".into(), "sk-switch-0123456789".into()));
    let mut agent = Agent::spawn_with(&env, &[], Some(FakeEditor::new()));
    agent.initialize_with(json!({})).await;
    let session = agent.new_session(&ws.project()).await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    (agent, session)
}

/// `body` as the snapshot shows it: no system prompt or tool list (they do not change at a
/// switch), the workspace's paths as `[ws]` and the session id (Responses'
/// `prompt_cache_key`) as `[session]`.
fn shown(body: &Value, ws: &Workspace, session: &str) -> Value {
    let mut body = body.clone();
    if let Some(fields) = body.as_object_mut() {
        for key in ["tools", "system", "instructions"] {
            fields.remove(key);
        }
    }
    if let Some(messages) = body["messages"].as_array_mut()
        && messages.first().is_some_and(|m| m["role"] == "system")
    {
        messages.remove(0);
    }
    let root = ws.project().parent().unwrap().to_string_lossy().to_string();
    let text = body
        .to_string()
        .replace(&root, "[ws]")
        .replace(session, "[session]");
    serde_json::from_str(&text).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversation_goes_through_seven_providers_with_a_call_in_every_turn() {
    let local = MockModel::start(vec![idless_call(), idless_call(), done("Local")]).await;
    let mut stops = Vec::new();
    for stop in tour() {
        let mock = MockModel::start(stop.script.clone()).await;
        if let Some(contract) = stop.contract {
            mock.enforce(contract);
        }
        stops.push((stop, mock));
    }
    let ws = Workspace::new();
    copy_fixture("small", &ws.project());
    ws.write("home/.config/tandem/config.toml", &config(&stops));
    let (mut agent, session) = switching_agent(&ws, &local).await;

    let finish_turn = async |agent: &mut Agent, who: &str| {
        let (response, updates) = agent.prompt(&session, "read the readme").await;
        assert_eq!(
            response["result"]["stopReason"], "end_turn",
            "{who}: {response}"
        );
        let said = crate::common::joined(&updates, "agent_message_chunk");
        assert!(said.ends_with(&format!("{who} read it.")), "{who}: {said}");
        let calls = crate::common::of_kind(&updates, "tool_call");
        assert!(!calls.is_empty(), "{who} called a tool");
    };
    finish_turn(&mut agent, "Local").await;
    assert_eq!(local.requests().len(), 3);

    // Kimi, DeepSeek, Gemini, Mistral, Claude, GPT-5.1, then DeepSeek again.
    let order = [0, 1, 2, 3, 4, 5, 1];
    let mut seen = vec![0usize; stops.len()];
    let mut firsts = Vec::new();
    for &n in &order {
        let (stop, mock) = &stops[n];
        let switched = agent.set_option(&session, "model", stop.model).await;
        assert!(switched.get("result").is_some(), "{switched}");
        let who = stop.model.split('-').next().unwrap();
        let who = match who {
            "kimi" => "Kimi",
            "deepseek" => "DeepSeek",
            "gemini" => "Gemini",
            "mistral" => "Mistral",
            "claude" => "Claude",
            _ => "GPT",
        };
        finish_turn(&mut agent, who).await;
        let requests = mock.requests();
        assert_eq!(
            requests.len(),
            seen[n] + 2,
            "{}: {requests:?}",
            stop.provider
        );
        // The request that opened the turn shows what the switch changed.
        firsts.push((stop.provider, requests[seen[n]].body.clone()));
        seen[n] += 2;
    }

    for (k, (provider, body)) in firsts.iter().enumerate() {
        insta::assert_json_snapshot!(format!("switch_{k}_{provider}"), shown(body, &ws, &session));
    }

    // The last request, to DeepSeek again: its own first answer carries its reasoning back,
    // every other provider's call message an empty one, and nobody's state came along.
    let last = &firsts.last().unwrap().1;
    let assistants: Vec<&Value> = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "assistant" && m["tool_calls"].is_array())
        .collect();
    assert_eq!(assistants.len(), 8, "{last}");
    let reasoning: Vec<&str> = assistants
        .iter()
        .map(|m| m["reasoning_content"].as_str().unwrap())
        .collect();
    assert_eq!(reasoning, ["", "", "", "DeepSeek looks.", "", "", "", ""]);
    for m in &assistants {
        assert!(m.get("reasoning_details").is_none(), "{m}");
        assert!(m["tool_calls"][0].get("extra_content").is_none(), "{m}");
    }
    agent.assert_valid();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deepseek_after_another_deepseek_model_gets_an_empty_reasoning_field_not_the_others() {
    let script = vec![
        deepseek_round("Flash thinks.", &[read("call_00_f1")]),
        done("Flash"),
        deepseek_round("Pro thinks.", &[read("call_00_p1")]),
        done("Pro"),
        Reply::text(&["Pro again."]),
    ];
    let (mock, _ws, mut agent, session, _editor) =
        crate::common::session_with_env("small", script, json!({}), "ask", |_| {
            vec![(
                "TANDEM_MODELS".to_string(),
                "deepseek-v4-flash,deepseek-v4-pro".to_string(),
            )]
        })
        .await;
    mock.enforce(Contract::DeepSeek);
    let (response, _) = agent.prompt(&session, "read").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let switched = agent.set_option(&session, "model", "deepseek-v4-pro").await;
    assert!(switched.get("result").is_some(), "{switched}");
    for _ in 0..2 {
        let (response, _) = agent.prompt(&session, "read again").await;
        assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    }
    let requests = mock.requests();
    assert_eq!(requests.len(), 5);
    let last = &requests[4].body;
    assert_eq!(last["model"], "deepseek-v4-pro");
    let calls: Vec<&Value> = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["tool_calls"].is_array())
        .collect();
    // Flash's reasoning is not Pro's to read; its own is.
    assert_eq!(calls[0]["reasoning_content"], "");
    assert_eq!(calls[1]["reasoning_content"], "Pro thinks.");
    agent.assert_valid();
}

/// A session on the default server's `mock-model`, whose first answer calls a tool slowly,
/// switched while the call streams to `model`, served by `other` as the provider named in
/// `entry` (its `[[providers]]` lines after `base_url`): the rest of the turn goes to `other`.
/// Returns the workspace (alive while the agent is), the agent, the session and the turn's
/// answer.
async fn switched_mid_loop(
    other: &MockModel,
    entry: &str,
    model: &str,
) -> (Workspace, Agent, String, Value) {
    use std::time::Duration;
    let local = MockModel::start(vec![
        Reply::tools(&[read("call_local1")]).slow(Duration::from_millis(150)),
    ])
    .await;
    let ws = Workspace::new();
    copy_fixture("small", &ws.project());
    ws.write(
        "home/.config/tandem/config.toml",
        &format!(
            "[[models]]\nid = \"mock-model\"\n\n[[providers]]\nname = \"other\"\nbase_url = \"{}\"\n\
             {entry}api_key_env = \"SWITCH_KEY\"\n\n[[models]]\nid = \"{model}\"\nprovider = \"other\"\n",
            other.base_url
        ),
    );
    let (mut agent, session) = switching_agent(&ws, &local).await;
    let running = agent.start_prompt(&session, "read the readme").await;
    agent.next_message().await;
    let switched = agent.set_option(&session, "model", model).await;
    assert!(switched.get("result").is_some(), "{switched}");
    let response = tokio::time::timeout(crate::common::acp_client::WAIT, running)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        local.requests().len(),
        1,
        "the rest of the turn went to {model}"
    );
    (ws, agent, session, response)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_switch_to_claude_in_the_middle_of_a_tool_loop_asks_without_thinking_that_once() {
    let claude = MockModel::start(vec![
        Reply::text(&["Claude took over."]),
        thinking_call("Claude thinks.", "toolu_01Next"),
        done("Claude"),
    ])
    .await;
    let (_ws, mut agent, session, response) = switched_mid_loop(
        &claude,
        "api = \"anthropic-messages\"\n",
        "claude-sonnet-4-5",
    )
    .await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let (response, _) = agent.prompt(&session, "read it again").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let requests = claude.requests();
    assert_eq!(requests.len(), 3);
    // Mid-loop, the last answer is another model's: the API refuses thinking on there.
    assert!(
        requests[0].body.get("thinking").is_none(),
        "{}",
        requests[0].body
    );
    // The next turn thinks again, and so does its own tool loop.
    assert_eq!(requests[1].body["thinking"]["type"], "enabled");
    assert_eq!(requests[2].body["thinking"]["type"], "enabled");
    agent.assert_valid();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_switch_to_gemini_3_in_the_middle_of_a_tool_loop_signs_the_other_models_call() {
    let gemini = MockModel::start(vec![Reply::text(&["Gemini took over."])]).await;
    gemini.enforce(Contract::Gemini);
    let (_ws, agent, _session, response) =
        switched_mid_loop(&gemini, "", "gemini-3-pro-preview").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let sent = &gemini.requests()[0].body;
    let call = &sent["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["tool_calls"].is_array())
        .unwrap()["tool_calls"][0];
    assert_eq!(
        call["extra_content"]["google"]["thought_signature"], "skip_thought_signature_validator",
        "Google's value for a call another model wrote"
    );
    agent.assert_valid();
}
