//! Skills: found in the project's `.tandem/skills/`, the user's config directory and the
//! config's `skill_dirs`; listed (name and description only) in the system prompt; loaded
//! with `load_skill`, whose files the model then reads without being asked about them.

use serde_json::json;

use crate::common::calls::{final_status, tool_result};
use crate::common::{Reply, install_user_config, session_in};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skills_are_listed_loaded_and_their_files_read() {
    let (mock, ws, mut agent, session, editor) =
        session_in("extend", Vec::new(), json!({}), "ask", |ws| {
            install_user_config(ws);
            // Invalid or shadowed skills: each is reported on stderr and skipped.
            ws.write(
                "home/.config/tandem/skills/release-notes/SKILL.md",
                "---\nname: release-notes\ndescription: The user's own, shadowed by the project's.\n---\n",
            );
            ws.write("project/.tandem/skills/no-front/SKILL.md", "Just text.\n");
            ws.write(
                "project/.tandem/skills/wrong-name/SKILL.md",
                "---\nname: other\ndescription: d\n---\n",
            );
            ws.write(
                "extra-skills/lint/SKILL.md",
                "---\nname: lint\ndescription: Lint the project.\n---\nRun the linter.\n",
            );
            std::os::unix::fs::symlink(
                ws.home().join(".config/tandem/skills/commit-message"),
                ws.project().join(".tandem/skills/escape"),
            )
            .unwrap();
            let config = ws.home().join(".config/tandem/config.toml");
            let text = std::fs::read_to_string(&config).unwrap();
            std::fs::write(&config, format!("skill_dirs = [\"../../../extra-skills\"]\n{text}"))
                .unwrap();
        })
        .await;
    // The model asks for the conventions file by the path load_skill gave it.
    let real = ws
        .home()
        .join(".config/tandem/skills/commit-message/conventions.md")
        .canonicalize()
        .unwrap();
    for reply in [
        Reply::tools(&[("c1", "load_skill", json!({"name": "commit-message"}))]),
        Reply::tools(&[("c2", "read_file", json!({"path": real}))]),
        Reply::tools(&[("c3", "load_skill", json!({"name": "release-notes"}))]),
        Reply::tools(&[("c4", "load_skill", json!({"name": "no-such-skill"}))]),
        Reply::text(&["done"]),
    ] {
        mock.push(reply);
    }

    let (response, updates) = agent.prompt(&session, "write a commit message").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let requests = mock.requests();

    // The system prompt lists every valid skill, with its description only.
    let system = requests[0].system_prompt();
    assert!(system.contains("## Skills"), "{system}");
    assert!(
        system.contains("- release-notes: Write the release notes"),
        "{system}"
    );
    assert!(
        system.contains("- commit-message: Write a commit message"),
        "{system}"
    );
    assert!(system.contains("- lint: Lint the project."), "{system}");
    assert!(
        !system.contains("shadowed"),
        "the project's release-notes wins"
    );
    assert!(!system.contains("Fill in `template.md`"), "bodies stay out");
    assert!(!system.contains("wrong-name") && !system.contains("- other"));
    let tools: Vec<&str> = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(tools.contains(&"load_skill"), "{tools:?}");

    // load_skill: the body and the other files, by absolute path.
    let loaded = tool_result(&requests[1], "c1");
    assert!(loaded.contains("follows `conventions.md`"), "{loaded}");
    assert!(loaded.contains(real.to_str().unwrap()), "{loaded}");
    assert!(
        !loaded.contains("name: commit-message"),
        "front matter left out"
    );
    // Reading a skill's file outside the workspace needs no permission, even in ask mode.
    let read = tool_result(&requests[2], "c2");
    assert!(read.contains("imperative"), "{read}");
    assert!(
        editor.params_of("session/request_permission").is_empty(),
        "{:?}",
        editor.methods()
    );
    let project_skill = tool_result(&requests[3], "c3");
    assert!(
        project_skill.contains("Fill in `template.md`"),
        "{project_skill}"
    );
    assert!(project_skill.contains("template.md"), "{project_skill}");
    let unknown = tool_result(&requests[4], "c4");
    assert!(
        unknown.contains("unknown skill `no-such-skill`"),
        "{unknown}"
    );
    assert!(unknown.contains("commit-message"), "{unknown}");
    assert_eq!(final_status(&updates, "c1"), "completed");
    assert_eq!(final_status(&updates, "c4"), "failed");

    let stderr = agent.stderr();
    for needle in [
        "no front matter",
        "differs from its folder's name",
        "a skill of the same name is already in",
        "leads outside",
    ] {
        assert!(stderr.contains(needle), "{needle} not in:\n{stderr}");
    }
    agent.assert_valid();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_skills_there_is_no_load_skill() {
    let (mock, _ws, mut agent, session, _editor) = session_in(
        "small",
        vec![Reply::text(&["hi"])],
        json!({}),
        "ask",
        |_| {},
    )
    .await;
    agent.prompt(&session, "hello").await;
    let request = &mock.requests()[0];
    assert!(!request.system_prompt().contains("## Skills"));
    assert!(!request.body.to_string().contains("load_skill"));
}
