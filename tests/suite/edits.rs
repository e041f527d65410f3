//! Edits that land (issue 22): the tiered matcher over real stdio, through the editor's
//! `fs/*` and locally, `apply_patch` for the model families trained on it, multi-edits, and
//! the file conventions an edit keeps.

use std::path::Path;

use serde_json::{Value, json};
use tandem_core::edit::Tier;
use tandem_core::edit::corpus::{Case, Corpus};

use crate::common::acp_client::Agent;
use crate::common::calls::{call_events, final_status, one_call, tool_result};
use crate::common::editor::{FakeEditor, full_caps};
use crate::common::{MockModel, Reply, Workspace, path_str, tool_session};

fn corpus() -> Corpus {
    Corpus::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/edits")).unwrap()
}

/// An agent on `model` whose editor reads and writes files, in `mode`.
async fn agent_on(
    model: &str,
    mock: &MockModel,
    ws: &Workspace,
    mode: &str,
) -> (Agent, std::sync::Arc<FakeEditor>) {
    let editor = FakeEditor::new();
    let mut env = ws.env(mock);
    env.retain(|(k, _)| k != "TANDEM_MODEL");
    env.push(("TANDEM_MODEL".into(), model.into()));
    env.push(("TANDEM_MODE".into(), mode.into()));
    let mut agent = Agent::spawn_with(&env, &[], Some(editor.clone()));
    agent.initialize_with(full_caps()).await;
    (agent, editor)
}

/// The tool names a model request offered.
fn offered(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect()
}

/// Lays out a case's files under `dir`: the `edit_file` case's one file (returned), or the
/// patch's files.
fn lay_out(corpus: &Corpus, case: &Case, dir: &Path) -> Option<String> {
    std::fs::create_dir_all(dir).unwrap();
    if case.patch.is_some() {
        for spec in &case.before {
            let text = corpus
                .source(
                    spec.file.as_deref(),
                    spec.text.as_deref(),
                    spec.eol.as_deref(),
                    spec.bom,
                )
                .unwrap();
            let path = dir.join(&spec.path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        return None;
    }
    let (before, _) = corpus.edit_files(case).unwrap();
    let name = case.file.clone().unwrap_or_else(|| "inline.txt".into());
    std::fs::write(dir.join(&name), before).unwrap();
    Some(name)
}

/// The tool call a case makes.
fn call_of(case: &Case, file: Option<&str>) -> (&'static str, Value) {
    if let Some(patch) = &case.patch {
        return ("apply_patch", json!({"input": patch}));
    }
    let path = file.unwrap_or_default();
    let edits = Corpus::replacements(case);
    match edits.as_slice() {
        [one] => (
            "edit_file",
            json!({"path": path, "old_string": one.old, "new_string": one.new, "replace_all": one.all}),
        ),
        many => (
            "edit_file",
            json!({"path": path, "edits": many.iter().map(|e| json!({"old_string": e.old, "new_string": e.new, "replace_all": e.all})).collect::<Vec<_>>()}),
        ),
    }
}

/// What a case's files must be after it: `None` for every path the case refuses to touch.
fn check_files(corpus: &Corpus, case: &Case, dir: &Path, file: Option<&str>, result: &str) {
    let refused = !Tier::ALL.iter().any(|t| t.name() == case.expect);
    if let Some(name) = file {
        let (before, expected) = corpus.edit_files(case).unwrap();
        let now = std::fs::read_to_string(dir.join(name)).unwrap();
        match expected {
            Some(expected) => assert_eq!(now, expected, "{}: {result}", case.name),
            None => assert_eq!(
                now, before,
                "{}: refused, so unchanged ({result})",
                case.name
            ),
        }
        return;
    }
    // A patch: every file it names or had is as expected (or untouched when refused).
    for spec in &case.before {
        let text = corpus
            .source(
                spec.file.as_deref(),
                spec.text.as_deref(),
                spec.eol.as_deref(),
                spec.bom,
            )
            .unwrap();
        if refused {
            let now = std::fs::read_to_string(dir.join(&spec.path)).unwrap();
            assert_eq!(now, text, "{}: refused, so unchanged ({result})", case.name);
        }
    }
    if !refused {
        assert!(result.starts_with("Success."), "{}: {result}", case.name);
        assert!(
            matches!(
                corpus.run(case, Tier::Punctuation).unwrap(),
                tandem_core::edit::corpus::CaseOutcome::Applied(_)
            ),
            "{}",
            case.name
        );
        for spec in &case.after {
            let path = dir.join(&spec.path);
            if spec.deleted {
                assert!(!path.exists(), "{}: {} is deleted", case.name, spec.path);
            } else {
                assert!(
                    path.exists(),
                    "{}: {} exists ({result})",
                    case.name,
                    spec.path
                );
            }
        }
    }
}

/// Runs a sample of the corpus through the real binary: the model makes each case's call,
/// the editor serves and takes the files over `fs/*`, the user is asked and allows. Every
/// `every`th case of the kind (patches or not; the hand-written adversarial ones or the rest).
async fn sample_through_the_editor(model: &str, patches: bool, adversarial: bool, every: usize) {
    let corpus = corpus();
    let cases: Vec<&Case> = corpus
        .cases
        .iter()
        .filter(|c| c.patch.is_some() == patches)
        .filter(|c| c.group.ends_with("-adversarial") == adversarial)
        .step_by(every)
        .collect();
    assert!(cases.len() >= 8, "a sample of {}", cases.len());
    let mock = MockModel::start(Vec::new()).await;
    let ws = Workspace::new();
    let (mut agent, editor) = agent_on(model, &mock, &ws, "ask").await;
    for (i, case) in cases.iter().enumerate() {
        let dir = ws.project().join(format!("case{i}"));
        let file = lay_out(&corpus, case, &dir);
        let session = agent.new_session(&dir).await["sessionId"]
            .as_str()
            .unwrap()
            .to_string();
        let (tool, args) = call_of(case, file.as_deref());
        mock.push(Reply::tools(&[("c", tool, args)]));
        mock.push(Reply::text(&["done"]));
        let (response, updates) = agent.prompt(&session, &case.name).await;
        assert_eq!(
            response["result"]["stopReason"], "end_turn",
            "{}",
            case.name
        );
        let request = mock.requests().last().unwrap().clone();
        let result = tool_result(&request, "c");
        check_files(&corpus, case, &dir, file.as_deref(), &result);
        let refused = !Tier::ALL.iter().any(|t| t.name() == case.expect);
        assert_eq!(
            final_status(&updates, "c"),
            if refused { "failed" } else { "completed" },
            "{}: {result}",
            case.name
        );
        if let Some(tier) = Tier::ALL.iter().find(|t| t.name() == case.expect)
            && let Some(note) = tier.note()
        {
            let titles: Vec<&Value> = call_events(&updates, "c")
                .iter()
                .filter_map(|u| u.get("title"))
                .collect();
            assert!(
                titles.iter().any(|t| t
                    .as_str()
                    .unwrap_or_default()
                    .ends_with(&format!("({note})"))),
                "{}: the title says how it matched: {titles:?}",
                case.name
            );
            assert!(result.contains(note), "{}: {result}", case.name);
        }
    }
    let writes = editor.params_of("fs/write_text_file").len();
    assert!(writes > 0, "the edits went through the editor");
    agent.assert_valid();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sample_of_the_edit_corpus_lands_through_the_editor() {
    sample_through_the_editor("qwen2.5-coder:7b", false, false, 7).await;
}

/// Issue 32: joins, blank lines, the final newline, quotes found twice once folded, CRLF and
/// tabs — every hand-written adversarial case, through the binary: each lands exactly as
/// asked or is refused, and the card says which ("failed" for a refusal, never "completed"
/// for an edit that was not made).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_adversarial_edit_lands_as_asked_or_is_refused_through_the_editor() {
    sample_through_the_editor("qwen2.5-coder:7b", false, true, 1).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sample_of_the_patch_corpus_lands_through_the_editor() {
    sample_through_the_editor("gpt-4.1", true, false, 3).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gpt_models_are_offered_apply_patch_and_others_edit_file() {
    let mock = MockModel::start(Vec::new()).await;
    let ws = Workspace::new();
    ws.write(
        "home/.config/tandem/config.toml",
        "[[models]]\nid = \"my-deployment\"\nedit_tool = \"apply_patch\"\n\n[[models]]\nid = \"gpt-5-mini\"\nedit_tool = \"edit_file\"\n",
    );
    let expectations = [
        ("gpt-4.1", true),
        ("openai/gpt-4.1-mini", true),
        ("o4-mini", true),
        ("gpt-5.1-codex", true),
        ("my-deployment", true),
        ("gpt-5-mini", false),
        ("gpt-4o", false),
        ("qwen2.5-coder:7b", false),
    ];
    for (model, patches) in expectations {
        let (mut agent, _) = agent_on(model, &mock, &ws, "ask").await;
        let session = agent.new_session(&ws.project()).await["sessionId"]
            .as_str()
            .unwrap()
            .to_string();
        mock.push(Reply::text(&["hi"]));
        agent.prompt(&session, "hello").await;
        let tools = offered(&mock.requests().last().unwrap().body);
        let has = |name: &str| tools.iter().any(|t| t == name);
        assert_eq!(has("apply_patch"), patches, "{model}: {tools:?}");
        assert_eq!(has("edit_file"), !patches, "{model}: {tools:?}");
        assert_eq!(has("write_file"), !patches, "{model}: {tools:?}");
        // The offered schemas are valid JSON Schema.
        for tool in mock.requests().last().unwrap().body["tools"]
            .as_array()
            .unwrap()
        {
            let schema = &tool["function"]["parameters"];
            assert!(jsonschema::meta::is_valid(schema), "{model}: {schema}");
        }
        agent.assert_valid();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn switching_model_switches_the_edit_tool_and_stale_calls_are_refused() {
    let mock = MockModel::start(Vec::new()).await;
    let ws = Workspace::new();
    ws.write(
        "home/.config/tandem/config.toml",
        "[[models]]\nid = \"gpt-4.1\"\n\n[[models]]\nid = \"llama3.1\"\n",
    );
    let (mut agent, _) = agent_on("gpt-4.1", &mock, &ws, "accept-edits").await;
    ws.write("project/a.txt", "one\n");
    let session = agent.new_session(&ws.project()).await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    // A patch model calling edit_file (from another model's habits) is told which tools exist.
    mock.push(Reply::tools(&[(
        "e",
        "edit_file",
        json!({"path": "a.txt", "old_string": "one", "new_string": "two"}),
    )]));
    mock.push(Reply::text(&["ok"]));
    agent.prompt(&session, "edit").await;
    let result = tool_result(mock.requests().last().unwrap(), "e");
    assert!(
        result.contains("unknown tool `edit_file`") && result.contains("apply_patch"),
        "{result}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.project().join("a.txt")).unwrap(),
        "one\n"
    );
    agent.set_option(&session, "model", "llama3.1").await;
    mock.push(Reply::text(&["hi"]));
    agent.prompt(&session, "hello").await;
    let tools = offered(&mock.requests().last().unwrap().body);
    assert!(
        tools.contains(&"edit_file".to_string()) && !tools.contains(&"apply_patch".to_string()),
        "{tools:?}"
    );
    agent.assert_valid();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lenient_match_is_named_in_the_title_and_the_result() {
    // The model quotes the greeting without its indentation.
    let (mock, ws, mut agent, session, editor) = tool_session(
        one_call(
            "e",
            "edit_file",
            json!({"path": "src/lib.rs", "old_string": "pub fn greeting(name: &str) -> String {\nformat!(\"Hello, {name}!\")\n}", "new_string": "pub fn greeting(name: &str) -> String {\nformat!(\"Hi, {name}!\")\n}"}),
        ),
        full_caps(),
        "ask",
    )
    .await;
    let before = std::fs::read_to_string(ws.project().join("src/lib.rs")).unwrap();
    let (_, updates) = agent.prompt(&session, "edit").await;
    // Flattened, the block has another shape: refused rather than guessed.
    assert_eq!(final_status(&updates, "e"), "failed");
    assert!(tool_result(&mock.requests()[1], "e").contains("was not found"));
    assert_eq!(
        std::fs::read_to_string(ws.project().join("src/lib.rs")).unwrap(),
        before
    );
    assert!(editor.params_of("session/request_permission").is_empty());

    // Shifted as a whole (the same shape), it lands, re-indented, and the user is told.
    mock.push(Reply::tools(&[(
        "s",
        "edit_file",
        json!({"path": "src/lib.rs", "old_string": "  pub fn greeting(name: &str) -> String {\n      format!(\"Hello, {name}!\")\n  }\n", "new_string": "  pub fn greeting(name: &str) -> String {\n      let greeting = format!(\"Hi, {name}!\");\n      greeting\n  }\n"}),
    )]));
    mock.push(Reply::text(&["ok"]));
    let (_, updates) = agent.prompt(&session, "edit again").await;
    let asked = &editor.params_of("session/request_permission")[0];
    assert_eq!(
        asked["toolCall"]["title"],
        "Edit src/lib.rs (matched ignoring indentation)"
    );
    assert!(
        call_events(&updates, "s")
            .iter()
            .any(|u| u["title"] == "Edit src/lib.rs (matched ignoring indentation)")
    );
    let result = tool_result(mock.requests().last().unwrap(), "s");
    assert!(
        result.starts_with(
            "Edited src/lib.rs at line 2 (1 replacement), matched ignoring indentation."
        ),
        "{result}"
    );
    let after = std::fs::read_to_string(ws.project().join("src/lib.rs")).unwrap();
    assert!(after.starts_with("/// Says hello.\npub fn greeting(name: &str) -> String {\n    let greeting = format!(\"Hi, {name}!\");\n    greeting\n}\n"), "{after}");
    agent.assert_valid();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_multi_edit_asks_once_shows_one_diff_and_is_all_or_nothing() {
    let edits = json!([
        {"old_string": "Hello", "new_string": "Hi"},
        {"old_string": "// TODO: add a test", "new_string": "// tested below"},
        {"old_string": "// TODO: document the crate", "new_string": "//! The crate."}
    ]);
    let (mock, ws, mut agent, session, editor) = tool_session(
        vec![
            Reply::tools(&[(
                "m",
                "edit_file",
                json!({"path": "src/lib.rs", "edits": edits}),
            )]),
            Reply::text(&["ok"]),
        ],
        full_caps(),
        "ask",
    )
    .await;
    let (_, updates) = agent.prompt(&session, "edit").await;
    assert_eq!(editor.params_of("session/request_permission").len(), 1);
    assert_eq!(editor.params_of("fs/write_text_file").len(), 1);
    let diffs: Vec<Value> = crate::common::calls::shown_contents(&updates, "diff");
    assert!(diffs.iter().all(|d| d["path"] == diffs[0]["path"]));
    let after = std::fs::read_to_string(ws.project().join("src/lib.rs")).unwrap();
    assert!(
        after.contains("Hi, {name}")
            && after.contains("// tested below")
            && after.contains("//! The crate.")
    );
    let result = tool_result(&mock.requests()[1], "m");
    assert!(
        result.starts_with("Edited src/lib.rs with 3 edits (1: at line 3"),
        "{result}"
    );

    // One edit of three that does not apply: nothing changes and nobody is asked.
    mock.push(Reply::tools(&[(
        "n",
        "edit_file",
        json!({"path": "src/lib.rs", "edits": [
            {"old_string": "Hi", "new_string": "Hey"},
            {"old_string": "no such text", "new_string": "x"}
        ]}),
    )]));
    mock.push(Reply::text(&["ok"]));
    agent.prompt(&session, "again").await;
    let result = tool_result(mock.requests().last().unwrap(), "n");
    assert!(
        result.contains("edit 2 of 2") && result.contains("None of the edits was made"),
        "{result}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.project().join("src/lib.rs")).unwrap(),
        after
    );
    assert_eq!(editor.params_of("session/request_permission").len(), 1);
    agent.assert_valid();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn line_ends_byte_order_marks_and_encodings_are_kept_or_refused_on_disk() {
    // No fs capability: tandem reads and writes the disk itself.
    let calls = vec![
        (
            "crlf",
            "edit_file",
            json!({"path": "crlf.txt", "old_string": "two\nthree", "new_string": "2\n3\n3.5"}),
        ),
        (
            "bom",
            "edit_file",
            json!({"path": "bom.txt", "old_string": "alpha", "new_string": "beta"}),
        ),
        (
            "latin1",
            "edit_file",
            json!({"path": "latin1.txt", "old_string": "caf", "new_string": "tea"}),
        ),
        (
            "utf16",
            "edit_file",
            json!({"path": "utf16.txt", "old_string": "a", "new_string": "b"}),
        ),
        (
            "whole",
            "write_file",
            json!({"path": "crlf2.txt", "content": "x\ny\n"}),
        ),
    ];
    let (mock, ws, mut agent, session, _editor) = tool_session(
        vec![Reply::tools(&calls), Reply::text(&["ok"])],
        json!({}),
        "accept-edits",
    )
    .await;
    let dir = ws.project();
    std::fs::write(dir.join("crlf.txt"), "one\r\ntwo\r\nthree\r\nfour").unwrap();
    std::fs::write(dir.join("bom.txt"), "\u{FEFF}alpha\n").unwrap();
    std::fs::write(dir.join("latin1.txt"), b"caf\xE9\n").unwrap();
    std::fs::write(dir.join("utf16.txt"), b"\xFF\xFEa\x00\n\x00").unwrap();
    std::fs::write(dir.join("crlf2.txt"), "old\r\n").unwrap();
    agent.prompt(&session, "edit").await;
    let request = &mock.requests()[1];
    assert_eq!(
        std::fs::read(dir.join("crlf.txt")).unwrap(),
        b"one\r\n2\r\n3\r\n3.5\r\nfour"
    );
    assert_eq!(
        std::fs::read(dir.join("bom.txt")).unwrap(),
        "\u{FEFF}beta\n".as_bytes()
    );
    assert_eq!(std::fs::read(dir.join("latin1.txt")).unwrap(), b"caf\xE9\n");
    assert!(
        tool_result(request, "latin1").contains("latin1.txt is not UTF-8 (byte 0xE9 on line 1"),
        "{}",
        tool_result(request, "latin1")
    );
    assert!(
        tool_result(request, "utf16").contains("is UTF-16 text"),
        "{}",
        tool_result(request, "utf16")
    );
    assert_eq!(
        std::fs::read(dir.join("utf16.txt")).unwrap(),
        b"\xFF\xFEa\x00\n\x00"
    );
    assert_eq!(std::fs::read(dir.join("crlf2.txt")).unwrap(), b"x\r\ny\r\n");
    agent.assert_valid();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_patch_applies_to_every_file_or_none_and_asks_once() {
    let mock = MockModel::start(Vec::new()).await;
    let ws = Workspace::new();
    let (mut agent, editor) = agent_on("gpt-4.1", &mock, &ws, "ask").await;
    let dir = ws.project();
    ws.write("project/src/a.py", "def a():\n    return 1\n");
    ws.write("project/src/b.py", "def b():\n    return 2\n");
    ws.write("project/old.txt", "bye\n");
    let session = agent.new_session(&dir).await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let failing = "*** Begin Patch\n*** Update File: src/a.py\n@@\n def a():\n-    return 1\n+    return 10\n*** Update File: src/b.py\n@@\n def b():\n-    return 3\n+    return 30\n*** End Patch\n";
    mock.push(Reply::tools(&[(
        "f",
        "apply_patch",
        json!({"input": failing}),
    )]));
    mock.push(Reply::text(&["ok"]));
    let (_, updates) = agent.prompt(&session, "patch").await;
    let result = tool_result(mock.requests().last().unwrap(), "f");
    assert!(
        result.contains("src/b.py: hunk 1") && result.contains("Nothing was changed"),
        "{result}"
    );
    assert_eq!(final_status(&updates, "f"), "failed");
    assert_eq!(
        std::fs::read_to_string(dir.join("src/a.py")).unwrap(),
        "def a():\n    return 1\n"
    );
    assert!(editor.params_of("session/request_permission").is_empty());

    let good = "*** Begin Patch\n*** Update File: src/a.py\n*** Move to: src/c.py\n@@ def a():\n-    return 1\n+    return 10\n*** Add File: src/new.py\n+print('new')\n*** Delete File: old.txt\n*** Update File: src/b.py\n def b():\n-  return 2\n+  return 20\n*** End Patch\n";
    mock.push(Reply::tools(&[(
        "g",
        "apply_patch",
        json!({"input": good}),
    )]));
    mock.push(Reply::text(&["ok"]));
    let (_, updates) = agent.prompt(&session, "patch").await;
    let asked = editor.params_of("session/request_permission");
    assert_eq!(asked.len(), 1, "one question for the whole patch");
    let title = asked[0]["toolCall"]["title"].as_str().unwrap();
    assert_eq!(
        title,
        "Patch 5 files: src/a.py, src/c.py, src/new.py, old.txt, src/b.py (matched ignoring indentation)"
    );
    let diffs = crate::common::calls::shown_contents(&updates, "diff");
    let paths: std::collections::BTreeSet<String> = diffs
        .iter()
        .map(|d| d["path"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(paths.len(), 4, "a diff per file: {paths:?}");
    assert!(!dir.join("src/a.py").exists());
    assert_eq!(
        std::fs::read_to_string(dir.join("src/c.py")).unwrap(),
        "def a():\n    return 10\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("src/new.py")).unwrap(),
        "print('new')\n"
    );
    assert!(!dir.join("old.txt").exists());
    assert_eq!(
        std::fs::read_to_string(dir.join("src/b.py")).unwrap(),
        "def b():\n    return 20\n"
    );
    let result = tool_result(mock.requests().last().unwrap(), "g");
    assert_eq!(
        result,
        "Success. Updated the following files:\nM src/a.py -> src/c.py\nA src/new.py\nD old.txt\nM src/b.py (hunk 1 matched ignoring indentation)"
    );
    let written: Vec<Value> = editor
        .params_of("fs/write_text_file")
        .iter()
        .map(|p| p["path"].clone())
        .collect();
    assert!(
        written
            .iter()
            .any(|p| *p == path_str(&dir.join("src/new.py"))),
        "{written:?}"
    );
    agent.assert_valid();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_the_editor_refuses_puts_back_the_files_already_written() {
    let mock = MockModel::start(Vec::new()).await;
    let ws = Workspace::new();
    let (mut agent, editor) = agent_on("gpt-4.1", &mock, &ws, "accept-edits").await;
    let dir = ws.project();
    ws.write("project/a.txt", "a\n");
    ws.write("project/b.txt", "b\n");
    editor.fail_writes_to(&path_str(&dir.join("b.txt")));
    let session = agent.new_session(&dir).await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let patch = "*** Begin Patch\n*** Update File: a.txt\n-a\n+A\n*** Update File: b.txt\n-b\n+B\n*** End Patch";
    mock.push(Reply::tools(&[(
        "p",
        "apply_patch",
        json!({"input": patch}),
    )]));
    mock.push(Reply::text(&["ok"]));
    agent.prompt(&session, "patch").await;
    let result = tool_result(mock.requests().last().unwrap(), "p");
    assert!(
        result.contains("cannot write b.txt") && result.contains("put back"),
        "{result}"
    );
    assert_eq!(std::fs::read_to_string(dir.join("a.txt")).unwrap(), "a\n");
    let writes: Vec<String> = editor
        .params_of("fs/write_text_file")
        .iter()
        .map(|p| p["content"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(writes, ["A\n", "B\n", "a\n"], "written, refused, put back");
    agent.assert_valid();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deny_rule_on_one_file_refuses_the_whole_patch() {
    let mock = MockModel::start(Vec::new()).await;
    let ws = Workspace::new();
    ws.write(
        "home/.config/tandem/config.toml",
        "[permissions]\ndeny = [\"edit_file(secrets/**)\"]\n",
    );
    let (mut agent, editor) = agent_on("gpt-4.1", &mock, &ws, "full-access").await;
    let dir = ws.project();
    ws.write("project/a.txt", "a\n");
    ws.write("project/secrets/key.txt", "k\n");
    let session = agent.new_session(&dir).await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let patch = "*** Begin Patch\n*** Update File: a.txt\n-a\n+A\n*** Update File: secrets/key.txt\n-k\n+K\n*** End Patch";
    mock.push(Reply::tools(&[(
        "p",
        "apply_patch",
        json!({"input": patch}),
    )]));
    mock.push(Reply::text(&["ok"]));
    agent.prompt(&session, "patch").await;
    let result = tool_result(mock.requests().last().unwrap(), "p");
    assert!(
        result.contains("Refused by the rule `edit_file(secrets/**)`"),
        "{result}"
    );
    assert_eq!(std::fs::read_to_string(dir.join("a.txt")).unwrap(), "a\n");
    assert!(editor.params_of("fs/write_text_file").is_empty());
    agent.assert_valid();
}
