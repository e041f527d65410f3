use super::*;
use crate::conversation::ToolCall;

fn calls(ids: &[&str]) -> Arc<Message> {
    Arc::new(Message::Assistant {
        text: String::new(),
        reasoning: String::new(),
        tool_calls: ids
            .iter()
            .map(|id| ToolCall::new(*id, "list_dir", "{}"))
            .collect(),
        carried: None,
    })
}

fn result(id: &str) -> Arc<Message> {
    Arc::new(Message::Tool {
        call_id: id.into(),
        content: "ok".into(),
        images: Vec::new(),
    })
}

/// The call and result ids of a conversation, in order.
fn ids_of(messages: &[Arc<Message>]) -> Vec<String> {
    messages
        .iter()
        .flat_map(|m| match &**m {
            Message::Assistant { tool_calls, .. } => {
                tool_calls.iter().map(|c| c.id.clone()).collect()
            }
            Message::Tool { call_id, .. } => vec![format!("<{call_id}")],
            _ => Vec::new(),
        })
        .collect()
}

/// A conversation from a server that sends no ids (`call_0` twice) and Kimi.
fn mixed() -> Vec<Arc<Message>> {
    vec![
        Arc::new(Message::User(vec![crate::types::UserPart::Text(
            "go".into(),
        )])),
        calls(&["call_0"]),
        result("call_0"),
        calls(&["call_0"]),
        result("call_0"),
        calls(&["functions.list_dir:0", "toolu_01AbC"]),
        result("functions.list_dir:0"),
        result("toolu_01AbC"),
    ]
}

#[test]
fn providers_are_told_apart_by_api_host_and_model() {
    let of = |api, url, model| Dialect::of(api, url, model).provider;
    assert_eq!(
        of(Api::AnthropicMessages, "http://127.0.0.1:8080/v1", "x"),
        "anthropic"
    );
    assert_eq!(
        of(Api::ChatCompletions, "https://api.mistral.ai/v1", "x"),
        "mistral"
    );
    assert_eq!(
        of(
            Api::ChatCompletions,
            "http://localhost:8000/v1",
            "mistralai/Devstral-Small"
        ),
        "mistral"
    );
    assert_eq!(
        of(
            Api::ChatCompletions,
            "https://api.deepseek.com/v1",
            "deepseek-v4-pro"
        ),
        "deepseek"
    );
    assert_eq!(
        of(
            Api::ChatCompletions,
            "http://127.0.0.1:9/v1",
            "deepseek-v4-flash"
        ),
        "deepseek"
    );
    assert_eq!(
        of(
            Api::ChatCompletions,
            "https://api.moonshot.ai/v1",
            "kimi-k2.6"
        ),
        "kimi"
    );
    assert_eq!(
        of(Api::ChatCompletions, "https://api.openai.com/v1", "gpt-4.1"),
        "openai"
    );
    // A router translates for the providers behind it.
    assert_eq!(
        of(
            Api::ChatCompletions,
            "https://openrouter.ai/api/v1",
            "deepseek/deepseek-v4-pro"
        ),
        "any"
    );
    assert_eq!(
        of(
            Api::ChatCompletions,
            "https://evil-deepseek.com.example/v1",
            "gpt-4o"
        ),
        "any"
    );
    assert_eq!(
        of(Api::Responses, "https://api.openai.com/v1", "gpt-5.1"),
        "responses"
    );
    assert_eq!(
        of(
            Api::ChatCompletions,
            "https://me.openai.azure.com/openai/v1",
            "gpt-4.1"
        ),
        "openai"
    );
    assert_eq!(
        of(Api::ChatCompletions, "http://127.0.0.1/v1", "qwen3"),
        "any"
    );
}

#[test]
fn only_deepseek_and_kimi_are_sent_an_empty_reasoning_field() {
    let with = |url, model| Dialect::of(Api::ChatCompletions, url, model).reasoning_placeholder();
    assert_eq!(
        with("https://api.deepseek.com", "deepseek-v4-pro"),
        Some("reasoning_content")
    );
    assert_eq!(
        with("https://api.moonshot.cn/v1", "kimi-k2.6"),
        Some("reasoning_content")
    );
    assert_eq!(with("https://api.openai.com/v1", "gpt-4.1"), None);
    assert_eq!(with("http://127.0.0.1/v1", "qwen3"), None);
    let refused = Dialect::of(
        Api::ChatCompletions,
        "https://api.deepseek.com",
        "deepseek-v4-pro",
    )
    .without_reasoning();
    assert_eq!(refused.reasoning_placeholder(), None);
    let gemini = Dialect::of(
        Api::ChatCompletions,
        "http://127.0.0.1/v1",
        "gemini-3-pro-preview",
    );
    assert!(gemini.adds_placeholders());
    assert_eq!(gemini.without_reasoning().foreign_call_signature(), None);
}

#[test]
fn anthropic_gets_word_ids_unique_in_the_request() {
    let d = Dialect::of(
        Api::AnthropicMessages,
        "https://api.anthropic.com/v1",
        "claude-sonnet-4-5",
    );
    let out = d.conform_ids(&mixed()).unwrap();
    let ids = ids_of(&out);
    assert_eq!(
        ids,
        [
            "call_0",
            "<call_0",
            "call_0_1",
            "<call_0_1",
            "functions_list_dir_0_2",
            "toolu_01AbC",
            "<functions_list_dir_0_2",
            "<toolu_01AbC"
        ]
    );
    // The same history gives the same ids: the prompt prefix (and the cache) stays.
    assert_eq!(ids_of(&d.conform_ids(&mixed()).unwrap()), ids);
    // A longer history keeps the earlier ids.
    let mut longer = mixed();
    longer.push(calls(&["call_0"]));
    let longer = ids_of(&d.conform_ids(&longer).unwrap());
    assert_eq!(longer[..ids.len()], ids[..]);
    assert_eq!(longer.last().unwrap(), "call_0_4");
}

#[test]
fn mistral_gets_nine_letters_and_digits() {
    let d = Dialect::of(
        Api::ChatCompletions,
        "https://api.mistral.ai/v1",
        "mistral-large-latest",
    );
    let out = d.conform_ids(&mixed()).unwrap();
    let ids = ids_of(&out);
    let calls: Vec<&String> = ids.iter().filter(|i| !i.starts_with('<')).collect();
    assert_eq!(calls.len(), 4);
    for id in &calls {
        assert!(
            id.len() == 9 && id.chars().all(|c| c.is_ascii_alphanumeric()),
            "{id}"
        );
    }
    let unique: HashSet<_> = calls.iter().collect();
    assert_eq!(unique.len(), 4, "{ids:?}");
    // Each result answers its own call.
    assert_eq!(ids[1], format!("<{}", ids[0]));
    assert_eq!(ids[3], format!("<{}", ids[2]));
    assert_eq!(ids[6], format!("<{}", ids[4]));
    assert_eq!(ids[7], format!("<{}", ids[5]));
    assert_eq!(ids_of(&d.conform_ids(&mixed()).unwrap()), ids, "stable");
    // Mistral's own ids stay as they are.
    let own = vec![calls_of("aB3dE6gH9"), result("aB3dE6gH9")];
    assert!(d.conform_ids(&own).is_none());
}

fn calls_of(id: &str) -> Arc<Message> {
    calls(&[id])
}

#[test]
fn kimi_gets_its_own_form_and_openai_forty_characters() {
    let kimi = Dialect::of(
        Api::ChatCompletions,
        "https://api.moonshot.ai/v1",
        "kimi-k2.6",
    );
    let ids = ids_of(&kimi.conform_ids(&mixed()).unwrap());
    assert_eq!(ids[0], "functions.list_dir:0");
    assert_eq!(ids[2], "functions.list_dir:1");
    // Kimi's own id is kept when it is not taken yet… and it was: call 0 took it.
    assert_eq!(ids[4], "functions.list_dir:2");
    assert_eq!(ids[5], "functions.list_dir:3");
    let openai = Dialect::of(Api::ChatCompletions, "https://api.openai.com/v1", "gpt-4.1");
    let long = "x".repeat(64);
    let out = openai
        .conform_ids(&[calls_of(&long), result(&long)])
        .unwrap();
    let ids = ids_of(&out);
    assert!(ids[0].chars().count() <= 40, "{ids:?}");
    assert_eq!(ids[1], format!("<{}", ids[0]));
}

#[test]
fn nothing_is_copied_when_every_id_is_taken() {
    let d = Dialect::of(Api::ChatCompletions, "http://127.0.0.1/v1", "qwen3");
    let plain = vec![calls_of("a"), result("a"), calls_of("b"), result("b")];
    assert!(d.conform_ids(&plain).is_none());
}

#[test]
fn a_rewritten_answer_keeps_its_recorded_order() {
    use serde_json::json;
    let answer = Arc::new(Message::Assistant {
        text: "hi".into(),
        reasoning: String::new(),
        tool_calls: vec![ToolCall::new("call_0", "list_dir", "{}")],
        carried: Some(Box::new(crate::conversation::Carried {
            origin: crate::conversation::Origin {
                api: Api::AnthropicMessages,
                server: "s".into(),
                model: "m".into(),
            },
            data: json!({"layout": [{"type": "thinking"}, {"type": "tandem.call", "id": "call_0"}]}),
        })),
    });
    let d = Dialect::of(Api::AnthropicMessages, "s", "m");
    let out = d
        .conform_ids(&[calls_of("call_0"), result("call_0"), answer])
        .unwrap();
    let Message::Assistant {
        carried,
        tool_calls,
        ..
    } = &*out[2]
    else {
        panic!()
    };
    assert_eq!(tool_calls[0].id, "call_0_1");
    assert_eq!(
        carried.as_ref().unwrap().data["layout"][1]["id"],
        "call_0_1"
    );
}

#[test]
fn gemini_3_calls_from_other_models_get_googles_documented_signature() {
    let of = |url, model| Dialect::of(Api::ChatCompletions, url, model).foreign_call_signature();
    let google = "https://generativelanguage.googleapis.com/v1beta/openai";
    assert_eq!(
        of(google, "gemini-2.5-pro"),
        Some("skip_thought_signature_validator")
    );
    assert_eq!(
        of("http://127.0.0.1/v1", "gemini-3-pro-preview"),
        Some("skip_thought_signature_validator")
    );
    assert_eq!(
        of("http://127.0.0.1/v1", "google/gemini-3.1-flash"),
        Some("skip_thought_signature_validator")
    );
    assert_eq!(of("http://127.0.0.1/v1", "gemini-2.5-flash"), None);
    assert_eq!(
        of("https://openrouter.ai/api/v1", "google/gemini-2.0-flash"),
        None
    );
}
