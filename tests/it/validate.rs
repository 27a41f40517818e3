//! What `import` and `prompt add` refuse and `check` reports: prompts that cannot render as a host will use
//! them (template syntax, undeclared variables, embeds of URIs the library does not hold),
//! relative links to files that are not there; titles and descriptions that would show
//! template code; Claude Code commands that share a name across folders or have spaces in
//! their file names.

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};

use crate::common::{TestContext, describe, snapshot};

/// `import DIR EXTRA...`, run whatever its outcome.
fn import(ctx: &TestContext, dir: &Path, extra: &[&str]) -> Output {
    let dir = dir.to_str().expect("UTF-8 path");
    let mut args = vec!["import", dir];
    args.extend_from_slice(extra);
    ctx.run(&args)
}

/// An import that must fail and change nothing; returns stderr.
fn refused(ctx: &TestContext, dir: &Path) -> String {
    ctx.ok(&["stats"]);
    let before = snapshot(&ctx.db);
    let output = import(ctx, dir, &[]);
    assert!(
        !output.status.success(),
        "{}",
        describe(&["import"], &output, "expected the import to fail")
    );
    assert_eq!(
        snapshot(&ctx.db),
        before,
        "a refused import wrote something"
    );
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn imported(ctx: &TestContext, dir: &Path) -> String {
    let output = import(ctx, dir, &[]);
    assert!(
        output.status.success(),
        "{}",
        describe(&["import"], &output, "expected the import to succeed")
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// A line of stderr names `path` (under the test folder) and `line`, then says `words`.
fn assert_failure_at(ctx: &TestContext, stderr: &str, path: &str, line: u64, words: &[&str]) {
    let prefix = format!("{}:{line}: ", ctx.path(path).display());
    let found = stderr
        .lines()
        .find(|message| {
            message.starts_with(&prefix) && words.iter().all(|word| message.contains(word))
        })
        .unwrap_or_else(|| panic!("no failure at {prefix} saying {words:?} in:\n{stderr}"));
    // Every failure says how to fix it after what is wrong.
    assert!(found.contains("; "), "no fix given in «{found}»");
}

fn prompt(ctx: &TestContext, name: &str) -> Value {
    ctx.json(&["prompt", "show", name, "--json"])
}

#[test]
fn an_unclosed_if_fails_the_import_at_its_line() {
    let ctx = TestContext::new();
    ctx.write(
        "v/greet.prompt.md",
        "---\narguments:\n  - name: formal\n---\nHello.\n{% if formal %}\nGood day.\n",
    );
    ctx.write("v/guide.md", "# Guide\n");
    let stderr = refused(&ctx, &ctx.path("v"));
    assert_failure_at(&ctx, &stderr, "v/greet.prompt.md", 6, &["endif"]);
}

#[test]
fn an_embed_of_a_uri_not_in_the_library_fails_the_import() {
    let ctx = TestContext::new();
    ctx.write(
        "v/review.prompt.md",
        "---\ndescription: Review\n---\nReview this.\n\n{{ embed(\"shelf://v/guide.md\") }}\n{{ link(\"shelf://library/guides/testing.md\") }}\n{{ embed(\"shelf://v/nowhere.md\") }}\n",
    );
    ctx.write("v/guide.md", "# Guide\n");
    let stderr = refused(&ctx, &ctx.path("v"));
    assert_failure_at(
        &ctx,
        &stderr,
        "v/review.prompt.md",
        8,
        &["shelf://v/nowhere.md"],
    );
    // A URI of the same import and one of the library resolve.
    assert!(!stderr.contains("shelf://v/guide.md"), "{stderr}");
    assert!(!stderr.contains("testing.md"), "{stderr}");
}

#[test]
fn a_variable_that_is_not_an_argument_fails_the_import() {
    let ctx = TestContext::new();
    ctx.write(
        "v/hello.prompt.md",
        "---\narguments:\n  - name: name\n---\nHello {{ name }}.\n\nFrom {{ who }}.\n{% for line in name.split() %}{{ loop.index }} {{ line }}{% endfor %}\n",
    );
    let stderr = refused(&ctx, &ctx.path("v"));
    assert_failure_at(&ctx, &stderr, "v/hello.prompt.md", 7, &["'who'"]);
    // Loop variables and the arguments are declared.
    for declared in ["'name'", "'line'", "'loop'"] {
        assert!(!stderr.contains(declared), "{stderr}");
    }
}

#[test]
fn a_relative_link_to_a_missing_file_fails_the_import() {
    let ctx = TestContext::new();
    ctx.write(
        "v/guides/style.md",
        "# Style\n\nSee [testing](testing.md), [the review](../review.prompt.md),\n[the folder](../guides/) and [gone](../gone.md#top).\n",
    );
    ctx.write("v/guides/testing.md", "# Testing\n");
    ctx.write(
        "v/review.prompt.md",
        "Review it against [the style](guides/style.md) and [notes](notes.md).\n",
    );
    let stderr = refused(&ctx, &ctx.path("v"));
    assert_failure_at(&ctx, &stderr, "v/guides/style.md", 4, &["../gone.md"]);
    assert_failure_at(&ctx, &stderr, "v/review.prompt.md", 1, &["notes.md"]);
    for fine in ["testing.md", "../review.prompt.md", "../guides/"] {
        assert!(!stderr.contains(&format!("`{fine}`")), "{stderr}");
    }
}

#[test]
fn keep_going_imports_the_good_files_and_reports_the_bad() {
    let ctx = TestContext::new();
    ctx.write("v/good.prompt.md", "Good.\n");
    ctx.write("v/doc.md", "# Doc\n\nSee [there](there.md).\n");
    ctx.write("v/bad.prompt.md", "Bad {{ nobody }}.\n");
    let output = import(&ctx, &ctx.path("v"), &["--keep-going"]);
    assert!(!output.status.success());
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stdout.contains("collection v: added 1, updated 0, unchanged 0, removed 0, failed 2"),
        "{stdout}"
    );
    assert_failure_at(&ctx, &stderr, "v/bad.prompt.md", 1, &["'nobody'"]);
    assert_failure_at(&ctx, &stderr, "v/doc.md", 3, &["there.md"]);
    assert_eq!(
        ctx.query::<i64>("SELECT count(*) FROM prompts WHERE collection = 'v'"),
        1
    );
    assert_eq!(
        ctx.query::<i64>("SELECT count(*) FROM resources WHERE collection = 'v'"),
        0
    );
}

#[test]
fn descriptions_and_titles_never_show_template_code() {
    let ctx = TestContext::new();
    ctx.write(
        "v/translate.prompt.md",
        "---\narguments:\n  - name: target\n  - name: formality\n---\nTranslate into {{ target }}{% if formality %} formally{% endif %}.\n",
    );
    ctx.write(
        "v/.claude/commands/explain.md",
        "Explain $ARGUMENTS simply.\n",
    );
    ctx.write(
        "v/.claude/commands/commit.md",
        "## Context\n\n- Current status: !`git status`\n\n## What to do\n\nWrite a commit message for $1.\n",
    );
    ctx.write(
        "v/one-line.prompt.md",
        "---\narguments:\n  - name: what\n---\n# Summarize {{ what }}\n\n{{ what }} in one line.\n\nSummarize the text in one line.\n",
    );
    imported(&ctx, &ctx.path("v"));
    let translate = prompt(&ctx, "translate");
    assert!(translate["description"].is_null(), "{translate}");
    assert!(translate["title"].is_null(), "{translate}");
    let summarize = prompt(&ctx, "one-line");
    assert!(summarize["title"].is_null(), "{summarize}");
    assert_eq!(summarize["description"], "Summarize the text in one line.");
    let explain = prompt(&ctx, "explain");
    assert!(explain["description"].is_null(), "{explain}");
    let commit = prompt(&ctx, "commit");
    assert!(commit["title"].is_null(), "{commit}");
    assert!(commit["description"].is_null(), "{commit}");
}

#[test]
fn an_output_templates_labels_and_fill_ins_are_no_title_and_lists_show_descriptions_short() {
    let ctx = TestContext::new();
    // A command whose body is mostly the template of the answer it asks for.
    ctx.write(
        "o/.claude/commands/plan.md",
        "# PLAN\n\n## {FEATURE_NAME}\n\nWrite the plan of the feature asked for.\n",
    );
    ctx.write(
        "o/.claude/commands/spec.md",
        "# {FEATURE_NAME} specification\n\nFill in each section for {FEATURE_NAME}.\n\n\
         Write the specification.\n",
    );
    // An agent's description as long as real ones are.
    let long = "Reviews pull requests for correctness, clarity and tests. ".repeat(18);
    ctx.write(
        "o/long.prompt.md",
        format!("---\ndescription: {long}\n---\nReview it.\n"),
    );
    imported(&ctx, &ctx.path("o"));
    let plan = prompt(&ctx, "plan");
    assert!(plan["title"].is_null(), "{plan}");
    assert_eq!(
        plan["description"],
        "Write the plan of the feature asked for."
    );
    let spec = prompt(&ctx, "spec");
    assert!(spec["title"].is_null(), "{spec}");
    assert_eq!(spec["description"], "Write the specification.");
    // The whole description is kept; a list shows it cut at a word.
    assert_eq!(prompt(&ctx, "long")["description"], long.trim());
    let mut server = ctx.server();
    let listed = server.modern("prompts/list", json!({}));
    let entry = listed["result"]["prompts"]
        .as_array()
        .and_then(|prompts| prompts.iter().find(|p| p["name"] == "long"))
        .unwrap_or_else(|| panic!("long is listed: {listed}"))
        .clone();
    let shown = entry["description"].as_str().unwrap_or_default();
    assert!(
        shown.chars().count() <= 301 && shown.ends_with('…'),
        "{shown}"
    );
    assert!(long.starts_with(shown.trim_end_matches('…')), "{shown}");
    let got = server.modern("prompts/get", json!({"name": "long"}));
    assert_eq!(got["result"]["description"], long.trim(), "{got}");
}

#[test]
fn commands_with_one_name_in_two_folders_get_the_folder_in_their_names() {
    let ctx = TestContext::new();
    ctx.write(
        "p/.claude/commands/git/commit.md",
        "---\ndescription: Commit the staged changes\n---\nCommit with git.\n",
    );
    ctx.write("p/.claude/commands/svn/commit.md", "Commit with svn.\n");
    ctx.write("p/.claude/commands/frontend/component.md", "Make one.\n");
    ctx.write("p/.claude/commands/review code.md", "Review the code.\n");
    let stdout = imported(&ctx, &ctx.path("p"));
    assert!(stdout.contains("added 4"), "{stdout}");
    let git = prompt(&ctx, "git-commit");
    assert_eq!(git["description"], "Commit the staged changes (git)");
    assert_eq!(
        prompt(&ctx, "svn-commit")["description"],
        "Commit with svn. (svn)"
    );
    // A name no other command shares stays the file name, as Claude Code shows it.
    assert_eq!(
        prompt(&ctx, "component")["description"],
        "Make one. (frontend)"
    );
    prompt(&ctx, "review-code");
}

#[test]
fn a_prompt_file_name_with_spaces_becomes_a_valid_name() {
    let ctx = TestContext::new();
    ctx.write("v/tidy up.prompt.md", "Tidy it up.\n");
    imported(&ctx, &ctx.path("v"));
    prompt(&ctx, "tidy-up");
    // A `name:` that is not one is refused at its own line.
    ctx.write(
        "w/x.prompt.md",
        "---\ndescription: d\nname: my prompt\n---\nBody.\n",
    );
    let stderr = refused(&ctx, &ctx.path("w"));
    assert_failure_at(&ctx, &stderr, "w/x.prompt.md", 3, &["my prompt"]);
}

#[test]
fn check_reports_what_import_would_refuse_in_a_stored_library() {
    let ctx = TestContext::new();
    ctx.write(
        "v/hello.prompt.md",
        "---\narguments:\n  - name: name\n---\nHello {{ name }}.\n",
    );
    ctx.write(
        "v/bye.prompt.md",
        "---\narguments:\n  - name: name\n---\nBye {{ name }}.\n",
    );
    ctx.write("v/doc.md", "# Doc\n\nSee [hello](hello.prompt.md).\n");
    imported(&ctx, &ctx.path("v"));
    ctx.ok(&["check"]);
    // Written behind the import's back, as an older version or another tool could have: a
    // prompt that does not parse, one that uses a variable it does not declare, and a
    // document whose link target is no longer a file of its collection.
    let conn = ctx.open_db();
    conn.execute(
        "UPDATE prompt_messages SET body = 'Hello {{ name }}. {% if name %}'
         WHERE prompt_id = (SELECT id FROM prompts WHERE name = 'hello')",
        [],
    )
    .expect("break a prompt");
    conn.execute(
        "UPDATE prompt_messages SET body = 'Bye {{ who }}.'
         WHERE prompt_id = (SELECT id FROM prompts WHERE name = 'bye')",
        [],
    )
    .expect("break another");
    conn.execute(
        "UPDATE prompts SET origin = 'greetings/hello.prompt.md' WHERE name = 'hello'",
        [],
    )
    .expect("move the prompt's file");
    drop(conn);
    let output = ctx.run(&["check"]);
    assert!(!output.status.success());
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = |item: &str, words: &[&str]| {
        let found = stdout
            .lines()
            .find(|line| line.starts_with(item) && words.iter().all(|w| line.contains(w)));
        assert!(
            found.is_some(),
            "no «{item}» line with {words:?} in:\n{stdout}"
        );
    };
    line("prompt 'hello': message 1, line 1: ", &["endif"]);
    line("prompt 'bye': message 1, line 1: ", &["'who'"]);
    line(
        "resource 'shelf://v/doc.md': line 3: ",
        &["`hello.prompt.md`"],
    );
    let problems: Value = serde_json::from_slice(&ctx.run(&["check", "--json"]).stdout)
        .expect("check --json prints JSON");
    let items: Vec<&str> = problems
        .as_array()
        .expect("an array")
        .iter()
        .filter_map(|problem| problem["item"].as_str())
        .collect();
    for item in [
        "prompt 'hello'",
        "prompt 'bye'",
        "resource 'shelf://v/doc.md'",
    ] {
        assert!(items.contains(&item), "{problems}");
    }
}

#[test]
fn an_argument_declared_so_it_cannot_work_fails_at_its_line() {
    let ctx = TestContext::new();
    ctx.write(
        "v/count.prompt.md",
        "---\narguments:\n  - name: topic\n  - name: n\n    min: 3\n    completion: nowhere\n---\n{{ topic }} {{ n }}\n",
    );
    ctx.write(
        "v/typed.prompt.md",
        "---\ndescription: d\narguments:\n  - name: when\n    type: datetime\n---\n{{ when }}\n",
    );
    let stderr = refused(&ctx, &ctx.path("v"));
    assert_failure_at(&ctx, &stderr, "v/count.prompt.md", 4, &["`min:`", "string"]);
    assert_failure_at(&ctx, &stderr, "v/count.prompt.md", 4, &["'nowhere'"]);
    assert_failure_at(&ctx, &stderr, "v/typed.prompt.md", 4, &["datetime"]);
}

/// `prompt add FILE`, which must fail and write nothing; returns stderr.
fn add_refused(ctx: &TestContext, file: &Path) -> String {
    ctx.ok(&["stats"]);
    let before = snapshot(&ctx.db);
    let args = ["prompt", "add", file.to_str().expect("UTF-8 path")];
    let output = ctx.run(&args);
    assert!(
        !output.status.success(),
        "{}",
        describe(&args, &output, "expected prompt add to fail")
    );
    assert_eq!(
        snapshot(&ctx.db),
        before,
        "a refused prompt add wrote something"
    );
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn prompt_add_refuses_what_import_refuses_at_the_same_lines() {
    let ctx = TestContext::new();
    let unclosed = ctx.write(
        "hand/greet.prompt.md",
        "---\narguments:\n  - name: formal\n---\nHello.\n{% if formal %}\nGood day.\n",
    );
    let stderr = add_refused(&ctx, &unclosed);
    assert_failure_at(&ctx, &stderr, "hand/greet.prompt.md", 6, &["endif"]);
    assert!(
        stderr.contains("prompt 'greet' is not added: 1 problem; fix"),
        "{stderr}"
    );

    let undeclared = ctx.write(
        "hand/hello.prompt.md",
        "---\narguments:\n  - name: name\n---\nHello {{ name }}.\n\nFrom {{ who }}.\n",
    );
    let stderr = add_refused(&ctx, &undeclared);
    assert_failure_at(&ctx, &stderr, "hand/hello.prompt.md", 7, &["'who'"]);

    let embeds = ctx.write(
        "hand/review.prompt.md",
        "Review this.\n\n{{ link(\"shelf://library/guides/testing.md\") }}\n{{ embed(\"shelf://hand/nowhere.md\") }}\n",
    );
    let stderr = add_refused(&ctx, &embeds);
    assert_failure_at(
        &ctx,
        &stderr,
        "hand/review.prompt.md",
        4,
        &["shelf://hand/nowhere.md"],
    );
    assert!(!stderr.contains("testing.md"), "{stderr}");

    let arguments = ctx.write(
        "hand/count.prompt.md",
        "---\narguments:\n  - name: topic\n  - name: n\n    min: 3\n    completion: nowhere\n---\n{{ topic }} {{ n }}\n",
    );
    let stderr = add_refused(&ctx, &arguments);
    assert_failure_at(
        &ctx,
        &stderr,
        "hand/count.prompt.md",
        4,
        &["`min:`", "string"],
    );
    assert!(stderr.contains("1 problem;"), "{stderr}");

    // A prompt that works is added, embedding what the library holds; a completion table it
    // names may come after it, as a template's may: a note, not a refusal.
    let good = ctx.write(
        "hand/good.prompt.md",
        "---\narguments:\n  - name: language\n    completion: languages\n  - name: shade\n    completion: shades\n---\nIn {{ language }} and {{ shade }}:\n{{ embed(\"shelf://library/guides/testing.md\") }}\n",
    );
    let args = ["prompt", "add", good.to_str().expect("UTF-8 path")];
    let output = ctx.run(&args);
    assert!(
        output.status.success(),
        "{}",
        describe(&args, &output, "expected prompt add to succeed")
    );
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "added prompt good\n"
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("note: completion table 'shades' does not exist yet")
            && !stderr.contains("'languages'"),
        "{stderr}"
    );
    assert_eq!(prompt(&ctx, "good")["arguments"][1]["completion"], "shades");
}
