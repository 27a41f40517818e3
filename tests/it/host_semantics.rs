//! Imported commands and skills served as their hosts run them: the text typed after a command
//! with no placeholder for it, added at its end as Claude Code, Gemini CLI and Cursor add it; a
//! Claude Code positional placeholder with no value left as written; and what the hosts
//! would run or read (`!{...}`, `@{...}`, `` !`...` ``) kept as text and warned about at its
//! lines. Real commands of the samples under tests/fixtures/collections/ (each with a README
//! naming its source), and small files written here for the edge cases; every prompt is
//! rendered by a running server through `prompts/get`.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::common::{MODERN, Server, TestContext, validate};

/// The sample of a public collection.
fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/collections")
        .join(name)
}

/// A library holding the folder `folder` imported as the collection `name`, with the
/// import's `--json` report.
fn imported(folder: &Path, name: &str) -> (TestContext, Value) {
    let ctx = TestContext::new();
    ctx.ok(&["init", "--empty"]);
    let report = ctx.json(&[
        "import",
        folder.to_str().expect("a UTF-8 path"),
        "--collection",
        name,
        "--json",
    ]);
    assert_eq!(report["failed"], 0, "{report:#}");
    (ctx, report)
}

/// The text of `prompts/get` for `name` with `arguments`, its one message's.
fn get(server: &mut Server, name: &str, arguments: Value) -> String {
    let response = server.modern("prompts/get", json!({"name": name, "arguments": arguments}));
    validate(MODERN, "JSONRPCMessage", &response);
    let result = &response["result"];
    validate(MODERN, "GetPromptResult", result);
    let messages = result["messages"]
        .as_array()
        .unwrap_or_else(|| panic!("no messages in {response}"));
    assert_eq!(messages.len(), 1, "{response}");
    messages[0]["content"]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {response}"))
        .to_string()
}

/// The names of the prompt's arguments, each of them optional.
fn optional_arguments(ctx: &TestContext, name: &str) -> Vec<String> {
    let shown = ctx.json(&["prompt", "show", name, "--json"]);
    let arguments = shown["arguments"].as_array().expect("arguments");
    assert!(arguments.iter().all(|a| a["required"] != true), "{shown}");
    crate::exports::argument_names(ctx, name)
}

/// Checks that the command `name` of `ctx` takes the text after it as its one optional
/// argument `argument`, and that `prompts/get` gives `alone` without it (or given empty) and
/// `alone` followed by `added` (where `{}` is the text) with `value`. Returns the server.
fn takes_the_text_after_it(
    ctx: &TestContext,
    name: &str,
    argument: &str,
    alone: &str,
    (value, added): (&str, &str),
) -> Server {
    assert_eq!(optional_arguments(ctx, name), [argument]);
    let mut server = ctx.server();
    assert_eq!(
        get(&mut server, name, json!({ argument: value })),
        format!("{alone}{}", added.replace("{}", value))
    );
    assert_eq!(get(&mut server, name, json!({})), alone);
    assert_eq!(get(&mut server, name, json!({ argument: "" })), alone);
    server
}

/// The text of a file of a sample, without the line breaks at its end.
fn sample_text(path: &str) -> String {
    let text = std::fs::read_to_string(fixture(path)).expect("the sample");
    text.trim_end_matches('\n').to_string()
}

/// The warnings of an import's `--json` report: (file, line, message).
fn warnings(report: &Value) -> Vec<(String, Option<u64>, String)> {
    report["warnings"]
        .as_array()
        .expect("warnings")
        .iter()
        .map(|warning| {
            (
                warning["file"].as_str().unwrap_or_default().to_string(),
                warning["line"].as_u64(),
                warning["message"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// The one warning of the file whose path ends with `file`: its line and message.
fn warning_of(found: &[(String, Option<u64>, String)], file: &str) -> (Option<u64>, String) {
    let of: Vec<_> = found
        .iter()
        .filter(|(path, _, _)| path.ends_with(file))
        .collect();
    assert_eq!(of.len(), 1, "{found:?}");
    (of[0].1, of[0].2.clone())
}

#[test]
fn a_claude_code_command_without_a_placeholder_takes_the_text_after_it_as_claude_code_appends_it() {
    let (ctx, _) = imported(&fixture("claude-custom-commands"), "commands");
    let source = sample_text("claude-custom-commands/.claude/commands/optimize.md");
    let text = ("src/db.rs", "\n\nARGUMENTS: {}");
    let mut server = takes_the_text_after_it(&ctx, "optimize", "arguments", &source, text);
    // A command with `$ARGUMENTS` has nothing added.
    let debug = get(&mut server, "debug", json!({"arguments": "the login page"}));
    assert!(
        debug.contains("the login page") && !debug.contains("ARGUMENTS:"),
        "{debug}"
    );
}

#[test]
fn a_gemini_cli_command_without_args_takes_the_command_typed_as_gemini_cli_appends_it() {
    let (ctx, _) = imported(&fixture("gemini-cli-commands"), "gemini");
    let name = "github/cleanup-back-to-main";
    let file = std::fs::read_to_string(fixture(
        "gemini-cli-commands/.gemini/commands/github/cleanup-back-to-main.toml",
    ))
    .expect("the sample");
    let document: toml_edit::DocumentMut = file.parse().expect("TOML");
    let prompt = document["prompt"].as_str().expect("a prompt");
    // Gemini CLI appends the whole command typed, `/github:cleanup-back-to-main ...`.
    let text = ("feature/login", "\n\n/github:cleanup-back-to-main {}");
    takes_the_text_after_it(&ctx, name, "args", prompt.trim_matches('\n'), text);
}

#[test]
fn a_cursor_command_takes_the_text_after_it_after_a_blank_line() {
    let (ctx, _) = imported(&fixture("cursor-commands"), "cursor");
    let source = sample_text("cursor-commands/.cursor/commands/create-pr.md");
    let text = ("for issue 42", "\n\n{}");
    takes_the_text_after_it(&ctx, "create-pr", "arguments", &source, text);
}

#[test]
fn an_unfilled_claude_code_positional_placeholder_stays_as_written() {
    let ctx = TestContext::new();
    ctx.write(
        "src/.claude/commands/insert.md",
        "---\nargument-hint: [table] [values]\n---\nInsert into $1 VALUES ($2); the values \
         are $ARGUMENTS[1].\n",
    );
    let (ctx2, _) = imported(&ctx.path("src"), "sql");
    assert_eq!(optional_arguments(&ctx2, "insert"), ["table", "values"]);
    let mut server = ctx2.server();
    assert_eq!(
        get(&mut server, "insert", json!({"table": "users"})),
        "Insert into users VALUES ($2); the values are $ARGUMENTS[1]."
    );
    assert_eq!(
        get(
            &mut server,
            "insert",
            json!({"table": "users", "values": ""})
        ),
        "Insert into users VALUES ($2); the values are $ARGUMENTS[1]."
    );
    assert_eq!(
        get(
            &mut server,
            "insert",
            json!({"table": "t", "values": "1, 'a'"})
        ),
        "Insert into t VALUES (1, 'a'); the values are 1, 'a'."
    );
    // Exported back, the command reads as it did.
    let out = ctx2.path("out");
    ctx2.ok(&[
        "export",
        out.to_str().expect("a UTF-8 path"),
        "--format",
        "claude-commands",
    ]);
    assert_eq!(
        std::fs::read_to_string(out.join(".claude/commands/insert.md")).expect("exported"),
        "---\nargument-hint: \"[table] [values]\"\narguments: [table, values]\n---\nInsert into \
         $table VALUES ($values); the values are $values.\n"
    );
}

#[test]
fn what_the_hosts_would_run_or_read_is_text_warned_about_at_its_lines() {
    // A real Gemini CLI command running two shell commands.
    let (ctx, report) = imported(&fixture("gemini-cli-commands"), "gemini");
    let (line, message) = warning_of(&warnings(&report), "review-frontend.toml");
    assert_eq!(line, Some(13), "{message}");
    assert!(
        message.contains("Gemini CLI would run a shell command (`!{...}`) on lines 13, 22"),
        "{message}"
    );
    let mut server = ctx.server();
    let text = get(&mut server, "review-frontend", json!({"args": "123"}));
    assert!(
        text.contains("examples: !{git log --pretty=format:\"%s\" -n 5}\n")
            && text.contains("\n!{cat .gemini/commands/strict-development-rules.md}\n")
            && text.contains("on GitHub issue: 123."),
        "{text}"
    );
    drop(server);

    // Files written here: a file injection with `{{args}}` in it, and Claude Code's shell
    // commands inline and in a block.
    let src = TestContext::new();
    src.write(
        "src/.gemini/commands/review.toml",
        "description = \"Review.\"\nprompt = \"\"\"\nReview {{args}}.\n\nFollow:\n\
         @{docs/best-practices.md}\nand !{echo {{args}}}\n\"\"\"\n",
    );
    src.write(
        "src/.claude/commands/status.md",
        "---\ndescription: Status.\n---\n## Context\n\n- Branch: !`git branch --show-current`\n\
         - Not run: KEY=!`cmd`\n\n```!\ngit status --short\n```\n\nSummarise $ARGUMENTS.\n",
    );
    let (ctx, report) = imported(&src.path("src"), "mine");
    let found = warnings(&report);
    assert_eq!(found.len(), 2, "{found:?}");
    let (line, message) = warning_of(&found, "/review.toml");
    assert_eq!(line, Some(6), "{message}");
    assert!(
        message.contains("read a file (`@{...}`) on line 6")
            && message.contains("run a shell command (`!{...}`) on line 7"),
        "{message}"
    );
    let (line, message) = warning_of(&found, "/status.md");
    assert_eq!(line, Some(6), "{message}");
    assert!(
        message.contains("Claude Code would run a shell command (`!`...``) on lines 6, 9"),
        "{message}"
    );
    let mut server = ctx.server();
    assert_eq!(
        get(&mut server, "review", json!({"args": "a.rs"})),
        "Review a.rs.\n\nFollow:\n@{docs/best-practices.md}\nand !{echo a.rs}"
    );
    assert_eq!(
        get(&mut server, "status", json!({"arguments": "it"})),
        "## Context\n\n- Branch: !`git branch --show-current`\n- Not run: KEY=!`cmd`\n\n```!\n\
         git status --short\n```\n\nSummarise it."
    );
    drop(server);

    // Without `--json` each is a `warning:` line naming the file and line.
    let again = TestContext::new();
    again.ok(&["init", "--empty"]);
    let output = again.run(&["import", src.path("src").to_str().expect("UTF-8")]);
    assert!(output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.lines().any(|line| line.starts_with("warning: ")
            && line.contains("status.md:6: Claude Code would run")),
        "{stderr}"
    );
}

#[test]
fn exported_back_to_its_host_a_command_has_no_placeholder_and_imports_with_the_same_argument() {
    for (sample, format, file, name, argument, added) in [
        (
            "claude-custom-commands",
            "claude-commands",
            ".claude/commands/optimize.md",
            "optimize",
            "arguments",
            "\n\nARGUMENTS: {}",
        ),
        (
            "gemini-cli-commands",
            "gemini-commands",
            ".gemini/commands/github/cleanup-back-to-main.toml",
            "github/cleanup-back-to-main",
            "args",
            "\n\n/github:cleanup-back-to-main {}",
        ),
        (
            "cursor-commands",
            "cursor-commands",
            ".cursor/commands/create-pr.md",
            "create-pr",
            "arguments",
            "\n\n{}",
        ),
    ] {
        let (ctx, _) = imported(&fixture(sample), "source");
        let out = ctx.path("out");
        let output = ctx.run(&["export", out.to_str().expect("UTF-8"), "--format", format]);
        assert!(output.status.success(), "{format}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            !stderr.contains(&format!("prompt {name}:")),
            "{format}: {stderr}"
        );
        let text = std::fs::read_to_string(out.join(file)).expect("exported");
        assert!(
            !text.contains("$ARGUMENTS") && !text.contains("{{") && !text.contains("{%"),
            "{format}: {text}"
        );
        let (again, _) = imported(&out, "again");
        let alone = get(&mut ctx.server(), name, json!({}));
        takes_the_text_after_it(&again, name, argument, &alone, ("x y", added));
    }
}

#[test]
fn a_claude_code_skill_takes_the_text_after_it_and_its_shell_lines_are_warned_about() {
    // A plugin's skill (anthropics/skills is a marketplace whose root is the plugin), with no
    // placeholder: Claude Code appends what is typed after `/internal-comms`.
    let (ctx, report) = imported(&fixture("anthropics-skills"), "skills");
    assert!(warnings(&report).is_empty(), "{report:#}");
    let source = sample_text("anthropics-skills/skills/internal-comms/SKILL.md");
    let body = source.splitn(3, "---\n").nth(2).expect("front matter");
    let text = ("a status update", "\n\nARGUMENTS: {}");
    takes_the_text_after_it(
        &ctx,
        "internal-comms",
        "arguments",
        body.trim_matches('\n'),
        text,
    );

    // A skill fills in placeholders as a command does, and its `!`...`` lines, which Claude
    // Code would run, are warned about; the same in every hosts' skills folder, since the
    // same skill is copied between them (an export writes `.agents/skills/`).
    let src = TestContext::new();
    let skill = "---\nname: NAME\ndescription: Status.\n---\n## Context\n\n- Branch: \
                 !`git branch --show-current`\n\nSummarise $ARGUMENTS.\n";
    for (folder, name) in [(".claude", "status"), (".agents", "shared")] {
        let path = format!("src/{folder}/skills/{name}/SKILL.md");
        src.write(&path, skill.replace("NAME", name));
    }
    let (ctx, report) = imported(&src.path("src"), "mine");
    let found = warnings(&report);
    assert_eq!(found.len(), 2, "{found:?}");
    let mut server = ctx.server();
    for file in [
        ".claude/skills/status/SKILL.md",
        ".agents/skills/shared/SKILL.md",
    ] {
        let (line, message) = warning_of(&found, file);
        assert_eq!(line, Some(7), "{message}");
        assert!(
            message.contains("Claude Code would run a shell command (`!`...``) on line 7"),
            "{message}"
        );
        let name = file.split('/').nth(2).expect("the skill's folder");
        assert_eq!(optional_arguments(&ctx, name), ["arguments"]);
        assert_eq!(
            get(&mut server, name, json!({"arguments": "the week"})),
            "## Context\n\n- Branch: !`git branch --show-current`\n\nSummarise the week."
        );
    }
}

#[test]
fn a_vscode_prompt_file_without_an_input_takes_the_text_after_it_after_a_blank_line() {
    let (ctx, _) = imported(&fixture("awesome-copilot-prompts"), "copilot");
    let source = sample_text("awesome-copilot-prompts/.github/prompts/my-issues.prompt.md");
    let body = source.splitn(3, "---\n").nth(2).expect("front matter");
    let text = ("with the label bug", "\n\n{}");
    let mut server = takes_the_text_after_it(
        &ctx,
        "my-issues",
        "arguments",
        body.trim_matches('\n'),
        text,
    );
    // An editor variable is no input: the text is added after the prompt all the same.
    let best = get(
        &mut server,
        "dotnet-best-practices",
        json!({"selection": "class A {}", "arguments": "in Program.cs"}),
    );
    assert!(
        best.contains("code in class A {} meets") && best.ends_with("\n\nin Program.cs"),
        "{best}"
    );
    drop(server);
    // A file with an input takes the text through its inputs: nothing is added.
    let shown = ctx.json(&[
        "prompt",
        "show",
        "create-architectural-decision-record",
        "--json",
    ]);
    let arguments = shown["arguments"].as_array().expect("arguments");
    assert!(
        !arguments.is_empty() && arguments.iter().all(|a| a["name"] != "arguments"),
        "{shown}"
    );
}

#[test]
fn a_claude_code_command_or_skill_that_uses_dollar_0_counts_its_arguments_from_0() {
    let src = TestContext::new();
    // As Claude Code's current documentation has it: `$0` the first argument, `$1` the second.
    src.write(
        "src/.claude/commands/migrate.md",
        "Migrate the $0 component from $1 to $2.\n",
    );
    src.write(
        "src/.claude/skills/move/SKILL.md",
        "---\nname: move\ndescription: Move a file.\nargument-hint: \"[file] [to]\"\n---\nMove $0 \
         to $ARGUMENTS[1], not \\$0.\n",
    );
    // A command without `$0` was written for the older page, where `$1` is the first.
    src.write(
        "src/.claude/commands/review.md",
        "Review PR #$1 with priority $2.\n",
    );
    let (ctx, _) = imported(&src.path("src"), "mine");
    assert_eq!(
        optional_arguments(&ctx, "migrate"),
        ["arg1", "arg2", "arg3"]
    );
    assert_eq!(optional_arguments(&ctx, "move"), ["file", "to"]);
    assert_eq!(optional_arguments(&ctx, "review"), ["arg1", "arg2"]);
    let mut server = ctx.server();
    let all = json!({"arg1": "SearchBar", "arg2": "React", "arg3": "Vue"});
    assert_eq!(
        get(&mut server, "migrate", all),
        "Migrate the SearchBar component from React to Vue."
    );
    assert_eq!(
        get(&mut server, "migrate", json!({"arg1": "SearchBar"})),
        "Migrate the SearchBar component from $1 to $2."
    );
    assert_eq!(
        get(&mut server, "move", json!({"file": "a.rs", "to": "src/"})),
        "Move a.rs to src/, not $0."
    );
    assert_eq!(
        get(&mut server, "review", json!({"arg1": "42", "arg2": "high"})),
        "Review PR #42 with priority high."
    );
    drop(server);

    // Exported, each is written with named placeholders, which mean the same whichever way
    // Claude Code counts, and an escaped `$0` stays escaped; an import of the export exports
    // to the same bytes.
    let export = |ctx: &TestContext, into: &str| {
        let out = ctx.path(into);
        let format = ["--format", "claude-commands"];
        ctx.ok(&[&["export", out.to_str().expect("UTF-8")][..], &format[..]].concat());
        let read = |name: &str| {
            std::fs::read_to_string(out.join(format!(".claude/commands/{name}.md")))
                .expect("exported")
        };
        (out.clone(), read("migrate"), read("move"), read("review"))
    };
    let (out, migrate, moved, review) = export(&ctx, "out");
    assert_eq!(
        migrate,
        "---\nargument-hint: \"[arg1] [arg2] [arg3]\"\narguments: [arg1, arg2, arg3]\n---\n\
         Migrate the $arg1 component from $arg2 to $arg3.\n"
    );
    assert_eq!(
        moved,
        "---\ndescription: Move a file.\nargument-hint: \"[file] [to]\"\narguments: [file, to]\n\
         ---\nMove $file to $to, not \\$0.\n"
    );
    assert_eq!(
        review,
        "---\nargument-hint: \"[arg1] [arg2]\"\narguments: [arg1, arg2]\n---\nReview PR #$arg1 \
         with priority $arg2.\n"
    );
    let (again, _) = imported(&out, "again");
    let (_, migrate2, moved2, review2) = export(&again, "out2");
    assert_eq!((migrate2, moved2, review2), (migrate, moved, review));
}
