use super::*;
use crate::store::record::{Outcome, Restored};
use crate::types::UserPart;

fn line(record: Record) -> Line {
    Line {
        v: crate::store::record::VERSION,
        at: String::new(),
        record,
    }
}

fn prompt(text: &str) -> Line {
    line(Record::User {
        parts: vec![UserPart::Text(text.into())],
        sent: None,
        within_turn: false,
    })
}

fn text(s: &str) -> Snapshot {
    Snapshot::Text(s.into())
}

fn change(path: &str, before: Snapshot, after: Snapshot) -> Line {
    line(Record::FileChange {
        path: path.into(),
        before,
        after,
    })
}

fn answer(text: &str) -> Line {
    line(Record::Assistant {
        text: text.into(),
        reasoning: String::new(),
        tool_calls: Vec::new(),
        carried: None,
    })
}

#[test]
fn turns_list_their_prompt_files_and_commands() {
    let lines = vec![
        line(Record::Title { title: "t".into() }),
        prompt("  Fix the build\nplease"),
        change("/p/a.rs", text("a0"), text("a1")),
        change("/p/new.rs", Snapshot::Missing, text("n")),
        line(Record::CommandRan {
            line: "cargo test".into(),
        }),
        answer("done"),
        line(Record::User {
            parts: vec![UserPart::Text("also this".into())],
            sent: None,
            within_turn: true,
        }),
        line(Record::Command {
            parts: vec![UserPart::Text("/compact".into())],
        }),
        prompt("Remove it"),
        line(Record::Subagent {
            call_id: "c".into(),
            agent: "general".into(),
            record: Box::new(change("/p/new.rs", text("n"), Snapshot::Missing).record),
        }),
    ];
    let timeline = Timeline::new(&lines);
    let turns = timeline.turns();
    assert_eq!(
        turns.len(),
        3,
        "a steering message starts no turn: {turns:?}"
    );
    assert_eq!(turns[0].first_line, "Fix the build");
    assert_eq!(
        turns[0].files,
        [
            (PathBuf::from("/p/a.rs"), Touch::Changed),
            (PathBuf::from("/p/new.rs"), Touch::Created)
        ]
    );
    assert_eq!(turns[0].commands, ["cargo test"]);
    assert_eq!(turns[1].first_line, "/compact");
    assert_eq!(
        turns[2].files,
        [(PathBuf::from("/p/new.rs"), Touch::Deleted)],
        "a subagent's changes are its turn's"
    );
}

#[test]
fn a_rewind_takes_its_turns_out_and_the_next_one_counts_from_there() {
    let lines = vec![
        prompt("one"),
        change("/p/a", text("0"), text("1")),
        answer("1"),
        prompt("two"),
        change("/p/a", text("1"), text("2")),
        answer("2"),
        prompt("three"),
        change("/p/a", text("2"), text("3")),
        line(Record::Rewind {
            turn: 2,
            restored: vec![Restored {
                path: "/p/a".into(),
                before: text("3"),
                after: text("1"),
            }],
            intent: None,
        }),
        line(Record::Settings {
            mode: "plan".into(),
            model: "m".into(),
            reasoning_effort: "low".into(),
            auto_compact: Some(false),
        }),
        prompt("two again"),
        change("/p/a", text("1"), text("4")),
    ];
    let timeline = Timeline::new(&lines);
    assert_eq!(timeline.len(), 2);
    let kept: Vec<usize> = (0..lines.len()).filter(|&i| timeline.kept(i)).collect();
    assert_eq!(kept, [0, 1, 2, 8, 9, 10, 11]);
    assert_eq!(timeline.turns()[1].first_line, "two again");
    // Past the earlier rewind: back to what turn one started from, expecting the last write.
    let back = timeline.rewind(1).unwrap();
    assert_eq!(back.turns.len(), 2);
    assert_eq!(
        back.files,
        [FileBack {
            path: "/p/a".into(),
            target: text("0"),
            expected: text("4"),
            unknown: None,
        }]
    );
    let back = timeline.rewind(2).unwrap();
    assert_eq!(back.files[0].target, text("1"));
    assert!(timeline.rewind(3).is_none());
    assert!(timeline.rewind(0).is_none());
}

#[test]
fn a_rewind_past_a_rewind_sees_the_files_it_restored() {
    let lines = vec![
        prompt("one"),
        prompt("two"),
        change("/p/b", Snapshot::Missing, text("b")),
        line(Record::Rewind {
            turn: 2,
            restored: vec![Restored {
                path: "/p/b".into(),
                before: text("b"),
                after: Snapshot::Missing,
            }],
            intent: None,
        }),
        prompt("two, differently"),
        line(Record::Rewind {
            turn: 1,
            restored: Vec::new(),
            intent: None,
        }),
    ];
    let timeline = Timeline::new(&lines);
    assert!(timeline.is_empty());
    assert!(
        (0..lines.len())
            .all(|i| !timeline.kept(i) || matches!(lines[i].record, Record::Rewind { .. }))
    );
}

fn intent(id: &str, path: &str, before: Snapshot, after: Snapshot) -> Line {
    line(Record::FileIntent {
        id: id.into(),
        path: path.into(),
        before,
        after,
    })
}

fn outcome(id: &str, outcome: Outcome) -> Line {
    line(Record::FileOutcome {
        id: id.into(),
        outcome,
        after: None,
        found: false,
    })
}

#[test]
fn a_change_recorded_ahead_counts_by_its_outcome_wherever_that_was_recorded() {
    let lines = vec![
        prompt("one"),
        intent("i1", "/p/a", text("a0"), text("a1")),
        outcome("i1", Outcome::Done),
        intent("i2", "/p/b", text("b0"), text("b1")),
        outcome(
            "i2",
            Outcome::NotMade {
                why: "the editor refused".into(),
            },
        ),
        // Its outcome was found when the session was opened again, after the next turn.
        line(Record::Subagent {
            call_id: "t".into(),
            agent: "general".into(),
            record: Box::new(intent("i3", "/p/c", Snapshot::Missing, text("c1")).record),
        }),
        prompt("two"),
        change("/p/a", text("a1"), text("a2")),
        line(Record::FileOutcome {
            id: "i3".into(),
            outcome: Outcome::Done,
            after: None,
            found: true,
        }),
        // The intent keeps the text after as its hash, the outcome whole.
        intent("i4", "/p/d", text("d0"), Snapshot::digest(Some("d1"))),
        line(Record::FileOutcome {
            id: "i4".into(),
            outcome: Outcome::Done,
            after: Some(text("d1")),
            found: false,
        }),
    ];
    let timeline = Timeline::new(&lines);
    assert_eq!(
        timeline.turns()[0].files,
        [
            (PathBuf::from("/p/a"), Touch::Changed),
            (PathBuf::from("/p/c"), Touch::Created)
        ],
        "a change not made is none"
    );
    let back = timeline.rewind(1).unwrap();
    let files: Vec<(&str, &Snapshot, &Snapshot)> = back
        .files
        .iter()
        .map(|f| (f.path.to_str().unwrap(), &f.target, &f.expected))
        .collect();
    assert_eq!(
        files,
        [
            ("/p/a", &text("a0"), &text("a2")),
            ("/p/c", &Snapshot::Missing, &text("c1")),
            ("/p/d", &text("d0"), &text("d1"))
        ]
    );
    assert!(back.files.iter().all(|f| f.unknown.is_none()));
}

#[test]
fn a_change_tandem_does_not_know_the_result_of_leaves_its_file_alone() {
    let lines = vec![
        prompt("one"),
        intent("i1", "/p/a", text("a0"), text("a1")),
        outcome(
            "i1",
            Outcome::Unknown {
                why: "someone else changed it".into(),
            },
        ),
        intent("i2", "/p/b", text("b0"), text("b1")),
        prompt("two"),
        change("/p/a", text("x"), text("a2")),
    ];
    let timeline = Timeline::new(&lines);
    let back = timeline.rewind(1).unwrap();
    assert_eq!(
        back.files
            .iter()
            .map(|f| (f.path.to_str().unwrap(), f.unknown.is_some()))
            .collect::<Vec<_>>(),
        [("/p/a", true), ("/p/b", true)],
        "unknown stays unknown past a later change; no outcome is unknown"
    );
    // A rewind that starts after it goes by the later, known change.
    let back = timeline.rewind(2).unwrap();
    assert_eq!(back.files[0].target, text("x"));
    assert_eq!(back.files[0].unknown, None);
}
