use super::*;
use crate::conversation::ToolCall;
use crate::store::record::VERSION;
use crate::store::transcript;

fn line(record: Record) -> Line {
    Line {
        v: VERSION,
        at: String::new(),
        record,
    }
}

fn said(text: &str, reasoning: &str, calls: Vec<ToolCall>) -> Message {
    Message::Assistant {
        text: text.into(),
        reasoning: reasoning.into(),
        tool_calls: calls,
        carried: None,
    }
}

fn call(id: &str) -> ToolCall {
    ToolCall::new(id, "read_file", "{}")
}

fn text(t: &str) -> Vec<UserPart> {
    vec![UserPart::Text(t.into())]
}

#[tokio::test]
async fn results_follow_their_calls_in_call_order_and_missing_ones_are_filled() {
    let dir = tempfile::tempdir().unwrap();
    let lines = vec![
        line(Record::User {
            sent: None,
            within_turn: false,
            parts: text("hi"),
        }),
        line(Record::Assistant {
            text: String::new(),
            reasoning: "r".into(),
            tool_calls: vec![call("a"), call("b"), call("c")],
            carried: None,
        }),
        line(Record::ToolResult {
            call_id: "b".into(),
            content: "B".into(),
            images: Vec::new(),
            view: None,
        }),
        line(Record::ToolResult {
            call_id: "a".into(),
            content: "A".into(),
            images: Vec::new(),
            view: None,
        }),
    ];
    let t = Transcript::open(&dir.path().join("s.jsonl")).await.unwrap();
    let h = History::rebuild(&lines, t);
    let h = h.messages();
    assert_eq!(h.len(), 5);
    let tool = |id: &str, c: &str| Message::Tool {
        call_id: id.into(),
        content: c.into(),
        images: Vec::new(),
    };
    assert_eq!(h[2], tool("a", "A").into());
    assert_eq!(h[3], tool("b", "B").into());
    assert_eq!(h[4], tool("c", NOT_FINISHED).into());
}

#[tokio::test]
async fn compaction_keeps_the_tail_and_prefixes_the_summary() {
    let dir = tempfile::tempdir().unwrap();
    let said = |t: &str| {
        line(Record::Assistant {
            text: t.into(),
            reasoning: String::new(),
            tool_calls: vec![],
            carried: None,
        })
    };
    let lines = vec![
        line(Record::User {
            sent: None,
            within_turn: false,
            parts: text("1"),
        }),
        said("one"),
        line(Record::User {
            sent: None,
            within_turn: false,
            parts: text("2"),
        }),
        said("two"),
        line(Record::Compaction {
            summary: "S".into(),
            kept: 2,
        }),
        line(Record::User {
            sent: None,
            within_turn: false,
            parts: text("3"),
        }),
    ];
    let t = Transcript::open(&dir.path().join("s.jsonl")).await.unwrap();
    let h = History::rebuild(&lines, t);
    assert_eq!(h.messages().len(), 3);
    match &*h.messages()[0] {
        Message::User(parts) => {
            assert!(matches!(&parts[0], UserPart::Text(t) if t.contains("S")));
            assert_eq!(parts[1], UserPart::Text("2".into()));
        }
        other => panic!("{other:?}"),
    }
}

/// A prompt's blocks are recorded only where a load could not show them from what the
/// model read.
#[tokio::test]
async fn the_blocks_sent_are_kept_only_when_they_differ() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let mut live = History::new(Transcript::open(&path).await.unwrap());
    live.push_prompt(text("plain"), vec![PromptBlock::text("plain")]);
    // A linked file the turn put in the prompt: it would show as a resource.
    let link = PromptBlock::Link {
        uri: "file:///p/a.rs".into(),
        name: "a.rs".into(),
        title: None,
        description: None,
        mime_type: None,
        size: None,
    };
    let inlined = crate::types::context_text("file:///p/a.rs", "fn a() {}");
    live.push_prompt(text(&inlined), vec![link.clone()]);
    live.transcript().flush().await;
    let sent: Vec<_> = transcript::read(&path)
        .unwrap()
        .into_iter()
        .map(|l| match l.record {
            Record::User { sent, .. } => sent,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(sent, [None, Some(vec![link])]);
}

/// What a live turn pushes, a load rebuilds: the same messages, whatever the order the
/// results came in, with cancelled calls answered and an answer for no call ignored.
#[tokio::test]
async fn a_rebuilt_history_is_the_live_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let mut live = History::new(Transcript::open(&path).await.unwrap());
    live.push_user(text("go"));
    live.push_assistant(said("", "thinking", vec![]));
    live.push_assistant(said("looking", "", vec![call("a"), call("b")]));
    live.answer("b", "B".into(), None);
    live.answer("x", "stray".into(), None);
    assert_eq!(live.messages().len(), 2, "results wait for the whole batch");
    live.answer("a", "A".into(), None);
    live.push_assistant(said("", "", vec![call("c"), call("d")]));
    live.answer("c", "C".into(), None);
    live.close_unanswered("cancelled");
    live.push_user(text("more"));
    live.compact("S", 1);
    live.transcript().flush().await;

    let lines = transcript::read(&path).unwrap();
    let rebuilt = History::rebuild(&lines, Transcript::open(&path).await.unwrap());
    assert_eq!(rebuilt.messages(), live.messages());
    assert_eq!(live.messages().len(), 1);

    let mut before = History::new(Transcript::open(&path).await.unwrap());
    before.push_user(text("go"));
    before.push_assistant(said("looking", "", vec![call("a"), call("b")]));
    before.answer("b", "B".into(), None);
    before.answer("a", "A".into(), None);
    let ids: Vec<&str> = before
        .messages()
        .iter()
        .filter_map(|m| match &**m {
            Message::Tool { call_id, .. } => Some(call_id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(ids, ["a", "b"]);
}

#[tokio::test]
async fn a_change_is_on_disk_as_intended_before_it_is_made_and_its_outcome_follows() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let t = Transcript::open(&path).await.unwrap();
    let ahead = WriteAhead::new(t.nested("task-1", "scout"));
    let change = Effect::File {
        path: "/p/a".into(),
        before: Some("a0".into()),
        after: None,
    };
    let id = ahead.intend(&change).await.unwrap();
    assert!(Flight::is_on(&id), "carried out until settled");
    // On disk already, before the change is made: nothing waits in memory.
    assert!(t.unwritten().is_empty());
    let records: Vec<Record> = transcript::read(&path)
        .unwrap()
        .into_iter()
        .map(|l| l.record)
        .collect();
    assert!(matches!(
        &records[..],
        [Record::Subagent { record, .. }] if **record == Record::FileIntent {
            id: id.clone(),
            path: "/p/a".into(),
            before: Snapshot::Text("a0".into()),
            after: Snapshot::Missing,
        }
    ));
    ahead.settle(&id, &change, Err("refused"));
    assert!(!Flight::is_on(&id));
    t.flush().await;
    let last = transcript::read(&path).unwrap().pop().unwrap().record;
    assert!(matches!(
        last,
        Record::Subagent { record, .. } if matches!(
            &*record,
            Record::FileOutcome { outcome: Outcome::NotMade { why }, after: None, found: false, .. } if why == "refused"
        )
    ));
}
