//! Files the hosts themselves accept are kept, not refused: front matter keys promptshelf
//! does not read (VS Code's `applyTo`, `tools`, `mode`; Claude Code's `allowed-tools`) are
//! stored with their items, shown, hashed and written back by the exports that can carry
//! them, with a warning for each key no host reader takes; `import --strict` and `check`
//! refuse them as an author's typo. Over the samples of public collections under
//! tests/fixtures/collections/ (each with a NOTICE naming its source and licence).

use std::path::Path;

use serde_json::{Value, json};

use crate::collections_real::{arg, fixture, imported};
use crate::common::{TestContext, files_under};

/// Each warning of a report as (the file's name, line, message).
fn warnings(report: &Value) -> Vec<(String, Value, String)> {
    report["warnings"]
        .as_array()
        .expect("warnings")
        .iter()
        .map(|warning| {
            let file = warning["file"].as_str().unwrap_or_default();
            let name = file.rsplit('/').next().unwrap_or_default().to_string();
            let message = warning["message"].as_str().unwrap_or_default().to_string();
            (name, warning["line"].clone(), message)
        })
        .collect()
}

/// Every file under `dir`, by its path under it, with its bytes.
fn files_with_bytes(dir: &Path) -> Vec<(String, Vec<u8>)> {
    files_under(dir)
        .into_iter()
        .map(|file| {
            let bytes = std::fs::read(dir.join(&file)).expect("read file");
            (file, bytes)
        })
        .collect()
}

#[test]
fn every_file_of_the_samples_imports_with_a_warning_per_key_no_host_reads() {
    let ctx = TestContext::new();
    let report = imported(&ctx, &fixture("awesome-copilot"), &[]);
    // The prompt file's `agent`, `mode`, `tools` and `model` are VS Code's own: kept quietly.
    assert_eq!(
        warnings(&report),
        [
            (
                "tdd-green.chatmode.md".to_string(),
                json!(3),
                "front matter key `tools` is not one promptshelf reads; kept with the item as it is"
                    .to_string()
            ),
            (
                "copilot-thought-logging.instructions.md".to_string(),
                json!(2),
                "front matter key `applyTo` is not one promptshelf reads; kept with the item as it is"
                    .to_string()
            ),
        ],
        "{report:#}"
    );
    let report = imported(&ctx, &fixture("claude-commit-commands"), &[]);
    // Claude Code's own keys are kept quietly: the warnings say only that Claude Code would
    // run the commands' `!`...`` lines, which are imported as text.
    let said = warnings(&report);
    assert_eq!(said.len(), 2, "{report:#}");
    assert!(
        said.iter()
            .all(|(_, _, message)| message.starts_with("Claude Code would run a shell command")),
        "{report:#}"
    );
    assert_eq!(
        report["added"], 4,
        "two commands, NOTICE and LICENSE: {report:#}"
    );
}

#[test]
fn the_kept_keys_are_shown_by_prompt_show_and_resource_show() {
    let ctx = TestContext::new();
    imported(&ctx, &fixture("awesome-copilot"), &[]);
    imported(&ctx, &fixture("claude-commit-commands"), &[]);
    let prompt = ctx.json(&["prompt", "show", "what-context-needed", "--json"]);
    assert_eq!(
        prompt["frontMatter"],
        json!({"agent": "agent", "mode": "agent", "tools": ["codebase"], "model": "copilot-chat"}),
        "{prompt:#}"
    );
    let command = ctx.json(&["prompt", "show", "commit-push-pr", "--json"]);
    let allowed = command["frontMatter"]["allowed-tools"]
        .as_str()
        .unwrap_or("");
    assert!(
        allowed.starts_with("Bash(git checkout -b:*), "),
        "{command:#}"
    );
    let text = ctx.ok(&["prompt", "show", "commit"]);
    assert!(
        text.contains("allowed-tools: \"Bash(git add:*), Bash(git status:*), Bash(git commit:*)\""),
        "{text}"
    );
    let uri = "shelf://awesome-copilot/instructions/copilot-thought-logging.instructions.md";
    let instructions = ctx.json(&["resource", "show", uri, "--json"]);
    assert_eq!(
        instructions["frontMatter"],
        json!({"applyTo": "**/Copilot-Processing.md"}),
        "{instructions:#}"
    );
    // A prompt without kept keys says nothing of them.
    let plain = ctx.json(&["prompt", "show", "code-review", "--json"]);
    assert!(plain.get("frontMatter").is_none(), "{plain:#}");
}

#[test]
fn a_change_to_a_kept_key_is_a_change() {
    let ctx = TestContext::new();
    let folder = ctx.path("notes");
    let original = std::fs::read_to_string(
        fixture("awesome-copilot").join("instructions/copilot-thought-logging.instructions.md"),
    )
    .expect("read the sample");
    ctx.write("notes/logging.instructions.md", &original);
    imported(&ctx, &folder, &[]);
    let uri = "shelf://notes/logging.instructions.md";
    let before = ctx.json(&["resource", "show", uri, "--json"]);
    ctx.write(
        "notes/logging.instructions.md",
        original.replace("**/Copilot-Processing.md", "**/*.md"),
    );
    let report = imported(&ctx, &folder, &[]);
    assert_eq!(report["updated"], 1, "{report:#}");
    let after = ctx.json(&["resource", "show", uri, "--json"]);
    assert_eq!(after["frontMatter"], json!({"applyTo": "**/*.md"}));
    assert_ne!(before["contentHash"], after["contentHash"]);
}

#[test]
fn exporting_to_the_same_dialect_writes_the_hosts_keys_back_and_again_byte_for_byte() {
    let ctx = TestContext::new();
    imported(&ctx, &fixture("awesome-copilot"), &[]);
    imported(&ctx, &fixture("claude-commit-commands"), &[]);
    let first = ctx.path("first");
    let export = |ctx: &TestContext, dir: &Path, format: &str, collection: &str| {
        ctx.ok(&[
            "export",
            arg(dir),
            "--format",
            format,
            "--collection",
            collection,
        ]);
    };
    export(&ctx, &first, "claude-commands", "claude-commit-commands");
    export(&ctx, &first, "vscode-prompts", "awesome-copilot");
    let command = std::fs::read_to_string(first.join(".claude/commands/commit.md"))
        .expect("the command is written");
    assert!(
        command.contains(
            "\nallowed-tools: \"Bash(git add:*), Bash(git status:*), Bash(git commit:*)\"\n"
        ),
        "{command}"
    );
    let prompt =
        std::fs::read_to_string(first.join(".github/prompts/what-context-needed.prompt.md"))
            .expect("the prompt file is written");
    assert!(
        prompt.starts_with(
            "---\ndescription: Ask Copilot what files it needs to see before answering a question\n\
             agent: agent\nmode: agent\nmodel: copilot-chat\ntools: [\"codebase\"]\n---\n"
        ),
        "{prompt}"
    );

    // Imported from the export into another library and exported again: the same bytes.
    let again = TestContext::new();
    imported(
        &again,
        &first.join(".claude/commands"),
        &["--collection", "c"],
    );
    imported(&again, &first.join(".github"), &["--collection", "v"]);
    let second = again.path("second");
    export(&again, &second, "claude-commands", "c");
    export(&again, &second, "vscode-prompts", "v");
    assert_eq!(files_with_bytes(&second), files_with_bytes(&first));
}

#[test]
fn our_own_export_carries_the_kept_keys_and_reads_back_unchanged() {
    let ctx = TestContext::new();
    imported(&ctx, &fixture("awesome-copilot"), &[]);
    let out = ctx.path("out");
    ctx.ok(&["export", arg(&out), "--collection", "awesome-copilot"]);
    let instructions =
        std::fs::read_to_string(out.join("instructions/copilot-thought-logging.instructions.md"))
            .expect("written");
    assert!(
        instructions.contains("\napplyTo: \"**/Copilot-Processing.md\"\n"),
        "{instructions}"
    );
    // VS Code's keys in a prompt file of ours: `kind` keeps it ours.
    let prompt = std::fs::read_to_string(out.join("prompts/what-context-needed.prompt.md"))
        .expect("written");
    assert!(prompt.starts_with("---\nkind: prompt\n"), "{prompt}");
    let report = imported(&ctx, &out, &["--collection", "awesome-copilot"]);
    assert_eq!(
        (&report["updated"], &report["added"]),
        (&json!(0), &json!(0)),
        "{report:#}"
    );
}

#[test]
fn strict_import_and_check_refuse_a_key_our_format_does_not_know() {
    let ctx = TestContext::new();
    let sample = fixture("awesome-copilot");
    let output = ctx.run(&["import", arg(&sample), "--strict"]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(
            "copilot-thought-logging.instructions.md:2: front matter: unknown key `applyTo`"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("tdd-green.chatmode.md:3: front matter: unknown key `tools`"),
        "{stderr}"
    );
    assert!(stderr.contains("nothing was imported"), "{stderr}");
    // A host's own keys in its own files are no typo: strict takes them.
    imported(&ctx, &fixture("claude-commit-commands"), &["--strict"]);

    imported(&ctx, &sample, &[]);
    let problems = ctx.run(&["check", "--json"]);
    assert!(!problems.status.success());
    let problems: Value = serde_json::from_slice(&problems.stdout).expect("check --json");
    let unknown: Vec<&str> = problems
        .as_array()
        .expect("problems")
        .iter()
        .filter_map(|problem| problem["problem"].as_str())
        .filter(|problem| problem.starts_with("front matter key"))
        .collect();
    assert_eq!(
        unknown,
        [
            "front matter key `applyTo` is not one promptshelf reads (kept from its file); remove it if it is a mistake"
        ],
        "{problems:#}"
    );
}

#[test]
fn a_link_to_no_file_in_a_hosts_file_is_kept_as_text_with_a_warning() {
    let ctx = TestContext::new();
    // An example link printed for the model, as commands and prompt files often hold.
    ctx.write(
        "lib/commands/docs.md",
        "---\ndescription: Write docs\n---\nWrite a page like [the guide](docs/guide.md) for \
         $ARGUMENTS.\n",
    );
    let folder = ctx.path("lib");
    let report = imported(&ctx, &folder, &[]);
    assert_eq!(
        warnings(&report),
        [(
            "docs.md".to_string(),
            json!(4),
            "links to `docs/guide.md`, which is not a file of the folder; fix the path, or \
             remove the link (kept as the text it is)"
                .to_string()
        )],
        "{report:#}"
    );
    let command = ctx.json(&["prompt", "show", "docs", "--json"]);
    let body = command["messages"][0]["body"].as_str().unwrap_or("");
    assert!(body.contains("[the guide](docs/guide.md)"), "{command:#}");

    // Strictly, and in a file of our own format, it is refused as before.
    let strict = TestContext::new();
    let output = strict.run(&["import", arg(&folder), "--strict"]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("docs.md:4: links to `docs/guide.md`, which is not a file of the folder"),
        "{stderr}"
    );
    ctx.write("lib/notes.md", "# Notes\n\nSee [gone](gone.md).\n");
    let output = ctx.run(&["import", arg(&folder)]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("notes.md:3: links to `gone.md`, which is not a file of the folder"),
        "{stderr}"
    );
}

#[test]
fn a_reference_definition_no_link_uses_is_no_link() {
    let ctx = TestContext::new();
    ctx.write(
        "cat/catalogue.md",
        "# Catalogue\n\nThe categories, one a line:\n\n[Category]: [tools/examples]\n",
    );
    let report = imported(&ctx, &ctx.path("cat"), &["--strict"]);
    assert_eq!(warnings(&report), [], "{report:#}");
    assert_eq!(report["added"], 1, "{report:#}");
}

#[test]
fn front_matter_the_hosts_read_leniently_is_read_so() {
    let ctx = TestContext::new();
    // Claude Code's agent files often hold a `description:` that YAML reads as a mapping.
    ctx.write(
        "lax/agents/reviewer.md",
        "---\nname: reviewer\ndescription: Use this agent when: the change is ready\nmodel: \
         sonnet\n---\n\nReview the change.\n",
    );
    ctx.write(
        "lax/prompts/ask.prompt.md",
        "---\nmode: agent\ndescription: ['Ask', 'then answer']\n---\nAsk about ${input:topic}.\n",
    );
    let folder = ctx.path("lax");
    let report = imported(&ctx, &folder, &[]);
    let messages: Vec<(String, Value)> = warnings(&report)
        .into_iter()
        .map(|(file, line, message)| (format!("{file}: {message}"), line))
        .collect();
    assert_eq!(
        messages,
        [
            (
                "reviewer.md: front matter is not YAML (mapping values are not allowed in this \
                 context); read line by line as `key: value`, as Claude Code reads it"
                    .to_string(),
                json!(3)
            ),
            (
                "reviewer.md: front matter key `model` is not one promptshelf reads; kept with \
                 the item as it is"
                    .to_string(),
                json!(4)
            ),
            (
                "ask.prompt.md: front matter `description` is not text; read as \"Ask, then \
                 answer\""
                    .to_string(),
                json!(3)
            ),
        ],
        "{report:#}"
    );
    let agent = ctx.json(&[
        "resource",
        "show",
        "shelf://lax/agents/reviewer.md",
        "--json",
    ]);
    assert_eq!(
        agent["description"],
        "Use this agent when: the change is ready"
    );
    assert_eq!(agent["frontMatter"], json!({"model": "sonnet"}));
    let prompt = ctx.json(&["prompt", "show", "ask", "--json"]);
    assert_eq!(prompt["description"], "Ask, then answer");

    // An author's reading refuses the file that is not YAML.
    let strict = TestContext::new();
    let output = strict.run(&["import", arg(&folder), "--strict"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("reviewer.md:3: front matter: mapping values are not allowed"),
        "{stderr}"
    );
}

#[test]
fn a_command_exported_as_a_skill_keeps_its_allowed_tools() {
    let ctx = TestContext::new();
    imported(&ctx, &fixture("claude-commit-commands"), &[]);
    let out = ctx.path("out");
    ctx.ok(&[
        "export",
        arg(&out),
        "--format",
        "skills",
        "--collection",
        "claude-commit-commands",
    ]);
    let skill = std::fs::read_to_string(out.join(".agents/skills/commit/SKILL.md"))
        .expect("the skill is written");
    assert!(
        skill.contains(
            "\nallowed-tools: \"Bash(git add:*), Bash(git status:*), Bash(git commit:*)\"\n---\n"
        ),
        "{skill}"
    );
    // The hosts read it as a skill, and so does an import, which says only that Claude Code
    // would run the skills' `!`...`` lines, as it would the commands'.
    let again = TestContext::new();
    let report = imported(&again, &out.join(".agents/skills"), &[]);
    let said = warnings(&report);
    assert_eq!(said.len(), 2, "{report:#}");
    assert!(
        said.iter().all(|(file, _, message)| file == "SKILL.md"
            && message.starts_with("Claude Code would run a shell command")),
        "{report:#}"
    );
}

#[test]
fn a_gemini_commands_other_keys_and_a_skills_keys_are_kept_and_written_back() {
    let ctx = TestContext::new();
    ctx.write(
        "src/.gemini/commands/plan.toml",
        "description = \"Plan it.\"\nmodel = \"gemini-2.5-pro\"\nprompt = \"Plan {{args}}.\"\n\n\
         [owner]\nteam = \"infra\"\n",
    );
    ctx.write(
        "src/.claude/skills/lint/SKILL.md",
        "---\nname: lint\ndescription: Lint the code.\nlicense: MIT\nallowed-tools: Read, Grep\n\
         when_to_use: Before a commit.\nowner: infra\n---\nLint it.\n",
    );
    let report = imported(&ctx, &ctx.path("src"), &[]);
    let mut said = warnings(&report);
    said.sort_by(|a, b| (&a.0, a.1.as_u64()).cmp(&(&b.0, b.1.as_u64())));
    let kept = |noun: &str, key: &str| {
        format!("{noun} `{key}` is not one promptshelf reads; kept with the item as it is")
    };
    assert_eq!(
        said,
        [
            (
                "SKILL.md".to_string(),
                json!(7),
                kept("front matter key", "owner")
            ),
            ("plan.toml".to_string(), json!(2), kept("TOML key", "model")),
            ("plan.toml".to_string(), json!(5), kept("TOML key", "owner")),
        ],
        "{report:#}"
    );
    let front = |ctx: &TestContext, name: &str| {
        ctx.json(&["prompt", "show", name, "--json"])["frontMatter"].clone()
    };
    let plan = json!({"model": "gemini-2.5-pro", "owner": {"team": "infra"}});
    let lint = json!({
        "license": "MIT",
        "allowed-tools": "Read, Grep",
        "when_to_use": "Before a commit.",
        "owner": "infra",
    });
    assert_eq!(front(&ctx, "plan"), plan);
    assert_eq!(front(&ctx, "lint"), lint);

    // Our own export writes them all back, and reads back with them.
    let out = ctx.path("out");
    ctx.ok(&["export", arg(&out), "--collection", "src"]);
    let again = TestContext::new();
    imported(&again, &out, &["--collection", "src"]);
    assert_eq!(front(&again, "plan"), plan);
    assert_eq!(front(&again, "lint"), lint);
    // A host's format writes the keys the host reads: Claude Code a skill's `allowed-tools`.
    let project = ctx.path("project");
    ctx.ok(&["export", arg(&project), "--format", "claude-commands"]);
    let command = std::fs::read_to_string(project.join(".claude/commands/lint.md"))
        .expect("the command is written");
    assert!(command.contains("\nallowed-tools: "), "{command}");
}
