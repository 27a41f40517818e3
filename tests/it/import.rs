//! `promptshelf import` and `export` on real folders in temporary directories: every field of
//! the format, the other tools' prompt files, incremental and transactional behaviour, the
//! round trip, and the files an import must not read.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant, UNIX_EPOCH};

use rusqlite::Connection;
use serde_json::{Value, json};

use crate::common::{BIN, TestContext, describe, snapshot};

const PNG: &[u8] = include_bytes!("../../seed/images/layers.png");

/// 2024-01-01T00:00:00Z and 2024-06-01T00:00:00Z, in Unix seconds.
const JANUARY: u64 = 1_704_067_200;
const JUNE: u64 = 1_717_200_000;

const REVIEW: &str = r#"---
name: review
title: Careful review
description: Review a change with the checklist.
icons:
  - src: "data:image/svg+xml;base64,PHN2Zy8+"
    mimeType: image/svg+xml
    sizes: ["48x48"]
    theme: light
arguments:
  - name: code
    title: Code
    description: The code to review
    required: true
  - name: language
    type: enum
    values: [rust, python]
    completion: levels
    default: rust
  - name: focus
    type: string
    pattern: "^[a-z ]+$"
    max_length: 40
  - name: lines
    type: integer
    min: 1
    max: 500
  - name: strict
    type: boolean
  - name: due
    type: date
  - name: spec
    type: uri
  - name: ratio
    type: number
    min: 0.5
---
Review this {{ language }} code{% if focus %}, mostly {{ focus }}{% endif %}:

{{ code }}

{{ embed("shelf://notes/guides/style.md") }}
See also {{ link("shelf://notes/guides/plain.md") }}
and [the codes](../reference/codes.txt).
<!-- assistant -->
I will follow the checklist.
<!-- user -->
Go on.
"#;

const STYLE: &str = "---
kind: resource
name: style-guide
title: Style guide
description: How we write code.
mimeType: text/markdown
audience: [assistant]
priority: 0.8
icons:
  - src: https://example.com/style.png
---
# Ignored heading

Use clear names.
";

/// A folder that uses every feature of the format, under `notes/` in `ctx`.
fn write_notes(ctx: &TestContext) -> PathBuf {
    ctx.write("notes/prompts/review.prompt.md", REVIEW);
    ctx.write("notes/guides/style.md", STYLE);
    ctx.write(
        "notes/guides/plain.md",
        "# Plain guide\n\nThe first paragraph.\n\nMore in [the style guide](style.md#names) and [elsewhere](https://example.com/x.md).\n",
    );
    ctx.write(
        "notes/ask.md",
        "---\nkind: prompt\ndescription: Ask a question\narguments:\n  - name: question\n---\nAnswer: {{ question }}\n",
    );
    ctx.write("notes/reference/codes.txt", "200 OK\n404 Not Found\n");
    ctx.write("notes/images/layers.png", PNG);
    ctx.write("notes/data/config.json", "{\"a\": 1}\n");
    ctx.write("notes/deep/a b/c#d.md", "# Deep\n");
    ctx.write(
        "notes/_values/levels.csv",
        "value,weight,context\nlow,1,\nhigh,5,language=rust\n",
    );
    ctx.write("notes/_values/tones.txt", "# a comment\nfriendly\nterse\n");
    ctx.path("notes")
}

fn run(ctx: &TestContext, args: &[&str]) -> Output {
    ctx.run(args)
}

/// `import` that must succeed; returns stdout.
fn import(ctx: &TestContext, dir: &Path, extra: &[&str]) -> String {
    let dir = dir.to_str().expect("UTF-8 path");
    let mut args = vec!["import", dir];
    args.extend_from_slice(extra);
    ctx.ok(&args)
}

/// `import` that must fail; returns (stdout, stderr).
fn import_fails(ctx: &TestContext, dir: &Path, extra: &[&str]) -> (String, String) {
    let dir = dir.to_str().expect("UTF-8 path");
    let mut args = vec!["import", dir];
    args.extend_from_slice(extra);
    let output = run(ctx, &args);
    assert!(
        !output.status.success(),
        "{}",
        describe(&args, &output, "expected failure")
    );
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// The summary line of an import's stdout.
fn summary(stdout: &str) -> &str {
    stdout
        .lines()
        .rev()
        .find(|line| line.contains("added "))
        .unwrap_or_else(|| panic!("no summary line in:\n{stdout}"))
}

fn set_mtime(path: &Path, seconds: u64) {
    let file = std::fs::File::options()
        .write(true)
        .open(path)
        .expect("open to set mtime");
    file.set_modified(UNIX_EPOCH + Duration::from_secs(seconds))
        .expect("set mtime");
}

/// Sets every file under `dir` to `seconds`.
fn set_all_mtimes(dir: &Path, seconds: u64) {
    for entry in std::fs::read_dir(dir).expect("read folder") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            set_all_mtimes(&path, seconds);
        } else {
            set_mtime(&path, seconds);
        }
    }
}

fn changes(ctx: &TestContext) -> i64 {
    ctx.query::<i64>("SELECT count(*) FROM change_log")
}

fn prompt_json(ctx: &TestContext, name: &str) -> Value {
    ctx.json(&["prompt", "show", name, "--json"])
}

fn resource_json(ctx: &TestContext, uri: &str) -> Value {
    ctx.json(&["resource", "show", uri, "--json"])
}

#[test]
fn a_folder_with_every_front_matter_field_imports() {
    let ctx = TestContext::new();
    let notes = write_notes(&ctx);
    let stdout = import(&ctx, &notes, &[]);
    assert_eq!(
        summary(&stdout),
        "collection notes: added 10, updated 0, unchanged 0, removed 0, failed 0"
    );

    let review = prompt_json(&ctx, "review");
    assert_eq!(review["title"], "Careful review");
    assert_eq!(review["description"], "Review a change with the checklist.");
    assert_eq!(review["collection"], "notes");
    assert_eq!(review["origin"], "prompts/review.prompt.md");
    let args = review["arguments"].as_array().expect("arguments");
    let kinds: Vec<&str> = args.iter().filter_map(|a| a["type"].as_str()).collect();
    assert_eq!(
        kinds,
        [
            "string", "enum", "string", "integer", "boolean", "date", "uri", "number"
        ]
    );
    assert_eq!(args[0]["title"], "Code");
    assert_eq!(args[0]["required"], true);
    assert_eq!(args[1]["values"], json!(["rust", "python"]));
    assert_eq!(args[1]["completion"], "levels");
    assert_eq!(args[1]["default"], "rust");
    assert_eq!(args[2]["pattern"], "^[a-z ]+$");
    assert_eq!(args[2]["maxLength"], 40);
    assert_eq!(args[3]["min"], 1.0);
    assert_eq!(args[3]["max"], 500.0);
    assert_eq!(args[7]["min"], 0.5);
    let roles: Vec<&str> = review["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter_map(|m| m["role"].as_str())
        .collect();
    assert_eq!(roles, ["user", "assistant", "user"]);
    let icons = ctx
        .query::<Option<String>>("SELECT icons FROM prompts WHERE name = 'review'")
        .expect("icons");
    let icons: Value = serde_json::from_str(&icons).expect("icons are JSON");
    assert_eq!(icons[0]["mimeType"], "image/svg+xml");
    assert_eq!(icons[0]["sizes"], json!(["48x48"]));
    assert_eq!(icons[0]["theme"], "light");

    let ask = prompt_json(&ctx, "ask");
    assert_eq!(ask["description"], "Ask a question");
    assert_eq!(ask["origin"], "ask.md");

    let style = resource_json(&ctx, "shelf://notes/guides/style.md");
    assert_eq!(style["name"], "style-guide");
    assert_eq!(style["title"], "Style guide");
    assert_eq!(style["description"], "How we write code.");
    assert_eq!(style["mimeType"], "text/markdown");
    assert_eq!(style["audience"], json!(["assistant"]));
    assert_eq!(style["priority"], 0.8);
    assert_eq!(style["text"], true);
    let icons = ctx
        .query::<Option<String>>(
            "SELECT icons FROM resources WHERE uri = 'shelf://notes/guides/style.md'",
        )
        .expect("icons");
    assert!(icons.contains("https://example.com/style.png"), "{icons}");
    // Front matter is metadata, not content.
    let content = ctx.ok(&["resource", "cat", "shelf://notes/guides/style.md"]);
    assert_eq!(content, "# Ignored heading\n\nUse clear names.\n");

    // Relative links between imported files point at the URIs they became.
    assert_eq!(
        ctx.ok(&["resource", "cat", "shelf://notes/guides/plain.md"]),
        "# Plain guide\n\nThe first paragraph.\n\nMore in \
         [the style guide](shelf://notes/guides/style.md#names) and \
         [elsewhere](https://example.com/x.md).\n"
    );
    assert!(
        review["messages"][0]["body"].as_str().is_some_and(
            |body| body.ends_with("and [the codes](shelf://notes/reference/codes.txt).")
        ),
        "{review}"
    );
    let plain = resource_json(&ctx, "shelf://notes/guides/plain.md");
    assert_eq!(plain["title"], "Plain guide");
    assert_eq!(plain["description"], "The first paragraph.");
    assert_eq!(plain["name"], "plain.md");

    let codes = resource_json(&ctx, "shelf://notes/reference/codes.txt");
    assert_eq!(codes["mimeType"], "text/plain");
    let json_file = resource_json(&ctx, "shelf://notes/data/config.json");
    assert_eq!(json_file["mimeType"], "application/json");
    assert_eq!(json_file["text"], true);

    // Binary content comes back byte for byte.
    let png = resource_json(&ctx, "shelf://notes/images/layers.png");
    assert_eq!(png["mimeType"], "image/png");
    assert_eq!(png["text"], false);
    let output = run(
        &ctx,
        &["resource", "cat", "shelf://notes/images/layers.png"],
    );
    assert!(output.status.success());
    assert_eq!(output.stdout, PNG);

    // Nested folders, with the characters RFC 3986 forbids encoded.
    let deep = resource_json(&ctx, "shelf://notes/deep/a%20b/c%23d.md");
    assert_eq!(deep["title"], "Deep");
    assert_eq!(deep["origin"], "deep/a b/c#d.md");

    let levels = ctx.json(&["values", "list", "levels", "--json"]);
    assert_eq!(
        levels,
        json!([
            {"value": "high", "weight": 5.0, "context": {"argument": "language", "value": "rust"}},
            {"value": "low", "weight": 1.0, "context": null}
        ])
    );
    let tones = ctx.json(&["values", "list", "tones", "--json"]);
    assert_eq!(tones.as_array().map(Vec::len), Some(2));

    let templates = ctx.json(&["template", "list", "--json"]);
    assert!(
        templates
            .as_array()
            .expect("templates")
            .iter()
            .any(|t| t["uriTemplate"] == "shelf://notes/{+path}"),
        "{templates}"
    );
    // No absolute path of the folder leaks into a URI or an origin.
    let root = ctx.dir.path().to_str().expect("UTF-8");
    assert_eq!(
        ctx.query::<i64>(&format!(
                "SELECT count(*) FROM resources WHERE instr(uri, '{root}') > 0 OR instr(origin, '{root}') > 0"
            )
        ),
        0
    );
}

#[test]
fn a_running_server_sees_and_renders_an_imported_prompt() {
    let ctx = TestContext::new();
    let notes = write_notes(&ctx);
    // Created (with the seed) before the server starts, imported while it runs.
    ctx.ok(&["stats"]);
    let mut server = ctx.server();
    import(&ctx, &notes, &[]);
    let response = server.modern("prompts/list", json!({}));
    let names: Vec<&str> = response["result"]["prompts"]
        .as_array()
        .expect("prompts")
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert!(
        names.contains(&"review") && names.contains(&"ask"),
        "{names:?}"
    );

    let response = server.modern(
        "prompts/get",
        json!({"name": "review", "arguments": {"code": "fn main() {}", "focus": "naming"}}),
    );
    let messages = response["result"]["messages"]
        .as_array()
        .unwrap_or_else(|| panic!("no messages: {response}"));
    let first = messages[0]["content"]["text"].as_str().expect("text");
    assert!(
        first.starts_with("Review this rust code, mostly naming:"),
        "{first}"
    );
    let embedded = messages
        .iter()
        .find(|m| m["content"]["type"] == "resource")
        .expect("an embedded resource");
    assert_eq!(
        embedded["content"]["resource"]["uri"],
        "shelf://notes/guides/style.md"
    );
    assert_eq!(
        embedded["content"]["resource"]["text"],
        "# Ignored heading\n\nUse clear names.\n"
    );
    assert!(
        messages
            .iter()
            .any(|m| m["content"]["type"] == "resource_link"
                && m["content"]["uri"] == "shelf://notes/guides/plain.md"),
        "{messages:?}"
    );
    let roles: Vec<&str> = messages.iter().filter_map(|m| m["role"].as_str()).collect();
    assert!(roles.contains(&"assistant"), "{roles:?}");
    assert_eq!(roles.last(), Some(&"user"));

    // Typed arguments are checked.
    let response = server.modern(
        "prompts/get",
        json!({"name": "review", "arguments": {"code": "x", "lines": "many"}}),
    );
    assert_eq!(response["error"]["code"], -32602, "{response}");
}

#[test]
fn two_collections_and_nested_folders_get_their_own_uris_and_templates() {
    let ctx = TestContext::new();
    ctx.write("one/a/b/c.md", "# C\n");
    ctx.write("two/a/b/c.md", "# C too\n");
    import(&ctx, &ctx.path("one"), &[]);
    import(
        &ctx,
        &ctx.path("two"),
        &["--collection", "team", "--scheme", "docs"],
    );
    assert_eq!(
        resource_json(&ctx, "shelf://one/a/b/c.md")["collection"],
        "one"
    );
    assert_eq!(
        resource_json(&ctx, "docs://team/a/b/c.md")["title"],
        "C too"
    );
    let templates: Vec<String> = ctx
        .json(&["template", "list", "--json"])
        .as_array()
        .expect("templates")
        .iter()
        .filter_map(|t| t["uriTemplate"].as_str().map(str::to_string))
        .collect();
    assert!(templates.contains(&"shelf://one/{+path}".to_string()));
    assert!(templates.contains(&"docs://team/{+path}".to_string()));

    // A prompt name another collection owns is never a silent takeover: with --no-prefix it
    // is a failure (by default the later one is prefixed, see namespaces.rs).
    ctx.write("one/p.prompt.md", "Hello\n");
    ctx.write("two/p.prompt.md", "Hi\n");
    import(&ctx, &ctx.path("one"), &[]);
    let (_, stderr) = import_fails(
        &ctx,
        &ctx.path("two"),
        &["--collection", "team", "--no-prefix"],
    );
    assert!(
        stderr.contains("p.prompt.md:1: prompt 'p' belongs to the collection 'one'"),
        "{stderr}"
    );
}

#[test]
fn claude_code_commands_become_prompts_with_arguments() {
    let ctx = TestContext::new();
    ctx.write(
        "project/.claude/commands/fix-issue.md",
        "---\ndescription: Fix a GitHub issue\nargument-hint: [issue] [priority]\nallowed-tools: Bash(git:*)\n---\n\
         Fix issue #$1 with priority $2. Notes: $ARGUMENTS\nKeep {{ this }} and {% that %} as written; $100 is money.\n",
    );
    ctx.write(
        "project/.claude/commands/frontend/component.md",
        "Create a component named $ARGUMENTS.\n",
    );
    ctx.write("project/.claude/settings.json", "{}");
    ctx.write("project/README.md", "# Project\n");
    let stdout = import(&ctx, &ctx.path("project"), &[]);
    assert_eq!(
        summary(&stdout),
        "collection project: added 3, updated 0, unchanged 0, removed 0, failed 0"
    );
    let fix = prompt_json(&ctx, "fix-issue");
    assert_eq!(fix["description"], "Fix a GitHub issue");
    let names: Vec<&str> = fix["arguments"]
        .as_array()
        .expect("arguments")
        .iter()
        .filter_map(|a| a["name"].as_str())
        .collect();
    assert_eq!(names, ["arguments", "issue", "priority"]);
    let component = prompt_json(&ctx, "component");
    assert_eq!(component["arguments"][0]["name"], "arguments");
    // `.claude/settings.json` is not read: only the commands folder is.
    assert_eq!(
        ctx.query::<i64>("SELECT count(*) FROM resources WHERE collection = 'project'"),
        1
    );

    let mut server = ctx.server();
    let response = server.modern(
        "prompts/get",
        json!({"name": "fix-issue", "arguments": {"issue": "42", "priority": "high", "arguments": "42 high"}}),
    );
    assert_eq!(
        response["result"]["messages"][0]["content"]["text"],
        "Fix issue #42 with priority high. Notes: 42 high\nKeep {{ this }} and {% that %} as written; $100 is money.",
        "{response}"
    );

    // A folder that is itself a commands folder (~/.claude/commands) reads the same way.
    ctx.write("home/commands/explain.md", "Explain $1 simply.\n");
    import(
        &ctx,
        &ctx.path("home/commands"),
        &["--collection", "user-commands"],
    );
    assert_eq!(prompt_json(&ctx, "explain")["arguments"][0]["name"], "arg1");
}

#[test]
fn vscode_prompt_files_become_prompts_with_arguments() {
    let ctx = TestContext::new();
    ctx.write(
        "ws/.github/prompts/new-component.prompt.md",
        "---\nmode: agent\nmodel: GPT-4o\ntools: ['codebase', 'fetch']\ndescription: Make a component\n---\n\
         Create ${input:componentName:Button} from ${selection} in ${file}; leave ${env:HOME} and {{ x }}.\n",
    );
    ctx.write(
        "ws/.github/prompts/plain.prompt.md",
        "---\nname: vs-plain\nagent: ask\n---\nJust ask.\n",
    );
    ctx.write("ws/.github/workflows/ci.yml", "on: push\n");
    let stdout = import(&ctx, &ctx.path("ws"), &[]);
    assert_eq!(
        summary(&stdout),
        "collection ws: added 2, updated 0, unchanged 0, removed 0, failed 0"
    );
    let prompt = prompt_json(&ctx, "new-component");
    assert_eq!(prompt["description"], "Make a component");
    let args: Vec<(String, String, bool)> = prompt["arguments"]
        .as_array()
        .expect("arguments")
        .iter()
        .map(|a| {
            (
                a["name"].as_str().unwrap_or_default().to_string(),
                a["description"].as_str().unwrap_or_default().to_string(),
                a["required"].as_bool().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(args[0], ("componentName".into(), "Button".into(), true));
    assert_eq!(args[1].0, "selection");
    assert_eq!(args[2].0, "file");
    // Without an input, the text typed after the command is its one optional argument.
    let plain = prompt_json(&ctx, "vs-plain");
    assert_eq!(plain["arguments"][0]["name"], "arguments", "{plain}");
    assert_eq!(
        plain["arguments"].as_array().map(Vec::len),
        Some(1),
        "{plain}"
    );

    let mut server = ctx.server();
    let response = server.modern(
        "prompts/get",
        json!({"name": "new-component", "arguments": {"componentName": "Card", "selection": "<div/>", "file": "src/app.tsx"}}),
    );
    assert_eq!(
        response["result"]["messages"][0]["content"]["text"],
        "Create Card from <div/> in src/app.tsx; leave ${env:HOME} and {{ x }}.",
        "{response}"
    );
}

#[test]
fn reimporting_an_unchanged_folder_writes_nothing() {
    let ctx = TestContext::new();
    let notes = write_notes(&ctx);
    import(&ctx, &notes, &[]);
    let before = snapshot(&ctx.db);
    let changes_before = changes(&ctx);
    // data_version moves when another connection commits; this one watches.
    let watcher = ctx.open_db();
    let version = |conn: &Connection| -> i64 {
        conn.query_row("PRAGMA data_version", [], |row| row.get(0))
            .expect("data_version")
    };
    let version_before = version(&watcher);
    let stdout = import(&ctx, &notes, &["--prune"]);
    assert_eq!(
        summary(&stdout),
        "collection notes: added 0, updated 0, unchanged 10, removed 0, failed 0"
    );
    assert_eq!(
        version(&watcher),
        version_before,
        "the database was written"
    );
    assert_eq!(changes(&ctx), changes_before);
    assert_eq!(snapshot(&ctx.db), before);
}

#[test]
fn an_edited_file_updates_only_its_item_and_its_last_modified() {
    let ctx = TestContext::new();
    let notes = write_notes(&ctx);
    set_all_mtimes(&notes, JANUARY);
    import(&ctx, &notes, &[]);
    let january_ms = (JANUARY * 1000) as i64;
    assert_eq!(
        ctx.query::<i64>(&format!(
                "SELECT count(*) FROM resources WHERE collection = 'notes' AND last_modified != {january_ms}"
            )
        ),
        0,
        "the first lastModified is the file's mtime"
    );
    assert_eq!(
        ctx.query::<i64>("SELECT last_modified FROM prompts WHERE name = 'review'"),
        january_ms
    );
    let seq = ctx.query::<i64>("SELECT max(seq) FROM change_log");

    let plain = ctx.write(
        "notes/guides/plain.md",
        "# Plain guide\n\nThe first paragraph, edited.\n",
    );
    set_mtime(&plain, JUNE);
    // Touching a file without changing it changes nothing.
    set_mtime(&ctx.path("notes/guides/style.md"), JUNE);
    let stdout = import(&ctx, &notes, &[]);
    assert_eq!(
        summary(&stdout),
        "collection notes: added 0, updated 1, unchanged 9, removed 0, failed 0"
    );
    let logged: Vec<(String, String, String)> = ctx
        .open_db()
        .prepare("SELECT kind, op, key FROM change_log WHERE seq > ?1 ORDER BY seq")
        .expect("prepare")
        .query_map([seq], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows");
    assert_eq!(
        logged,
        [(
            "resource".to_string(),
            "update".to_string(),
            "shelf://notes/guides/plain.md".to_string()
        )]
    );
    assert_eq!(
        ctx.query::<i64>(
            "SELECT last_modified FROM resources WHERE uri = 'shelf://notes/guides/plain.md'"
        ),
        (JUNE * 1000) as i64
    );
    assert_eq!(
        ctx.query::<i64>(
            "SELECT last_modified FROM resources WHERE uri = 'shelf://notes/guides/style.md'"
        ),
        january_ms
    );
    assert_eq!(
        resource_json(&ctx, "shelf://notes/guides/plain.md")["description"],
        "The first paragraph, edited."
    );
}

#[test]
fn prune_removes_only_the_vanished_files_of_that_collection() {
    let ctx = TestContext::new();
    ctx.write("a/keep.md", "# Keep\n");
    ctx.write("a/gone.md", "# Gone\n");
    ctx.write("a/gone.prompt.md", "Bye\n");
    ctx.write("b/gone.md", "# B\n");
    import(&ctx, &ctx.path("a"), &[]);
    import(&ctx, &ctx.path("b"), &[]);
    let seed_prompts =
        ctx.query::<i64>("SELECT count(*) FROM prompts WHERE collection = 'library'");
    std::fs::remove_file(ctx.path("a/gone.md")).expect("remove");
    std::fs::remove_file(ctx.path("a/gone.prompt.md")).expect("remove");
    // Without --prune nothing is removed.
    let stdout = import(&ctx, &ctx.path("a"), &[]);
    assert_eq!(
        summary(&stdout),
        "collection a: added 0, updated 0, unchanged 1, removed 0, failed 0"
    );
    assert_eq!(
        ctx.query::<i64>("SELECT count(*) FROM resources WHERE uri = 'shelf://a/gone.md'"),
        1
    );
    let stdout = import(&ctx, &ctx.path("a"), &["--prune"]);
    assert_eq!(
        summary(&stdout),
        "collection a: added 0, updated 0, unchanged 1, removed 2, failed 0"
    );
    assert_eq!(
        ctx.query::<i64>("SELECT count(*) FROM resources WHERE uri = 'shelf://a/gone.md'"),
        0
    );
    assert_eq!(
        ctx.query::<i64>("SELECT count(*) FROM prompts WHERE name = 'gone'"),
        0
    );
    assert_eq!(
        ctx.query::<i64>("SELECT count(*) FROM resources WHERE uri = 'shelf://b/gone.md'"),
        1
    );
    assert_eq!(
        ctx.query::<i64>("SELECT count(*) FROM prompts WHERE collection = 'library'"),
        seed_prompts
    );
}

#[test]
fn dry_run_prints_the_plan_and_changes_nothing() {
    let ctx = TestContext::new();
    ctx.write("d/same.md", "# Same\n");
    ctx.write("d/edit.md", "# Edit\n");
    ctx.write("d/gone.md", "# Gone\n");
    import(&ctx, &ctx.path("d"), &[]);
    ctx.write("d/edit.md", "# Edited\n");
    ctx.write("d/new.prompt.md", "New\n");
    std::fs::remove_file(ctx.path("d/gone.md")).expect("remove");
    let before = snapshot(&ctx.db);
    let stdout = import(&ctx, &ctx.path("d"), &["--dry-run", "--prune"]);
    assert_eq!(
        stdout,
        "update resource shelf://d/edit.md (edit.md)\n\
         add prompt new (new.prompt.md)\n\
         remove resource shelf://d/gone.md\n\
         dry run of collection d (nothing written): added 1, updated 1, unchanged 1, removed 1, failed 0\n"
    );
    assert_eq!(snapshot(&ctx.db), before);
}

#[test]
fn broken_front_matter_names_the_file_and_line_and_imports_nothing() {
    let ctx = TestContext::new();
    ctx.write("b/good.md", "# Good\n");
    ctx.write("b/good.prompt.md", "Good\n");
    ctx.write(
        "b/bad.prompt.md",
        "---\nname: bad\narguments: [\n---\nBody\n",
    );
    ctx.write("b/typo.prompt.md", "---\ndescriptoin: typo\n---\nBody\n");
    ctx.write("b/unclosed.md", "---\ntitle: Unclosed\n\n# Unclosed\n");
    ctx.ok(&["stats"]);
    let before = snapshot(&ctx.db);
    // Read as an author's files: the misspelt key is refused too.
    let (stdout, stderr) = import_fails(&ctx, &ctx.path("b"), &["--strict"]);
    let bad = ctx.path("b/bad.prompt.md");
    assert!(
        stderr.contains(&format!("{}:3: front matter:", bad.display())),
        "{stderr}"
    );
    assert!(stderr.contains("typo.prompt.md:2: "), "{stderr}");
    assert!(stderr.contains("descriptoin"), "{stderr}");
    assert!(
        stderr.contains("unclosed.md:1: front matter opened on line 1 is never closed"),
        "{stderr}"
    );
    assert!(
        stderr.contains("3 files failed, so nothing was imported"),
        "{stderr}"
    );
    assert_eq!(
        summary(&stdout),
        "collection b: added 0, updated 0, unchanged 0, removed 0, failed 3"
    );
    assert_eq!(snapshot(&ctx.db), before);

    // --keep-going imports the rest and still fails.
    let (stdout, stderr) = import_fails(&ctx, &ctx.path("b"), &["--keep-going", "--strict"]);
    assert_eq!(
        summary(&stdout),
        "collection b: added 2, updated 0, unchanged 0, removed 0, failed 3"
    );
    assert!(stderr.contains("the rest was imported"), "{stderr}");
    assert_eq!(
        ctx.query::<i64>("SELECT count(*) FROM prompts WHERE name = 'good'"),
        1
    );

    // Without --strict the key is kept with a warning at its line, and its prompt imported.
    let (stdout, stderr) = import_fails(&ctx, &ctx.path("b"), &["--keep-going"]);
    assert_eq!(
        summary(&stdout),
        "collection b: added 1, updated 0, unchanged 2, removed 0, failed 2"
    );
    assert!(
        stderr.contains(
            "typo.prompt.md:2: front matter key `descriptoin` is not one promptshelf reads"
        ),
        "{stderr}"
    );
}

#[test]
fn a_killed_import_leaves_the_previous_state() {
    let ctx = TestContext::new();
    // Big enough that the transaction spills pages to the WAL long before it commits.
    let body = "Lorem ipsum dolor sit amet. ".repeat(300);
    for n in 0..4000 {
        ctx.write(
            &format!("big/part{}/doc{n}.md", n % 20),
            format!("# Document {n}\n\n{body}\n"),
        );
    }
    ctx.write("small/a.md", "# A\n");
    import(&ctx, &ctx.path("small"), &[]);
    let before = snapshot(&ctx.db);
    let wal = PathBuf::from(format!("{}-wal", ctx.db.display()));
    let mut child = ctx
        .command(&["import", ctx.path("big").to_str().expect("UTF-8")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start import");
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            panic!("the import finished ({status}) before it could be killed mid-way");
        }
        let wal_size = std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0);
        if wal_size > 2 * 1024 * 1024 {
            child.kill().expect("kill");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the import never started writing"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    child.wait().expect("reap");
    assert_eq!(
        snapshot(&ctx.db),
        before,
        "a killed import changed the database"
    );
    // The next import starts from a clean state and completes.
    let stdout = import(&ctx, &ctx.path("big"), &[]);
    assert_eq!(
        summary(&stdout),
        "collection big: added 4000, updated 0, unchanged 0, removed 0, failed 0"
    );
}

#[test]
fn import_export_import_is_a_fixed_point() {
    let ctx = TestContext::new();
    let notes = write_notes(&ctx);
    ctx.write(
        "notes/commands/fix.md",
        "---\nargument-hint: [issue]\n---\n# Fix\nFix #$1 and keep {{ braces }}.\n",
    );
    ctx.write(
        "notes/vs/make.prompt.md",
        "---\nmode: agent\n---\nMake ${input:thing:A widget} now.\n",
    );
    ctx.write("notes/commands/notes.txt", "plain text\n");
    import(&ctx, &notes, &[]);
    let hashes = |db: &Path| -> Vec<String> {
        let conn = crate::common::open_library(db);
        let mut stmt = conn
            .prepare(
                "SELECT 'p ' || name || ' ' || hex(content_hash) || ' ' || last_modified FROM prompts WHERE collection = 'notes'
                 UNION ALL SELECT 'r ' || uri || ' ' || hex(content_hash) || ' ' || last_modified FROM resources WHERE collection = 'notes'
                 ORDER BY 1",
            )
            .expect("prepare");
        stmt.query_map([], |row| row.get(0))
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("rows")
    };
    let original = hashes(&ctx.db);
    let out = ctx.path("out");
    let out_str = out.to_str().expect("UTF-8");
    let stdout = ctx.ok(&["export", out_str, "--collection", "notes"]);
    // The table the prompts complete from goes along; `tones`, which none uses, does not.
    assert!(
        stdout.starts_with("exported 4 prompts, 7 resources and 1 completion tables"),
        "{stdout}"
    );
    assert!(out.join("_values/levels.csv").is_file());
    let logged = changes(&ctx);
    let before = snapshot(&ctx.db);

    // Importing the export changes no item, pruning included; only the collection's
    // folder is now the export's.
    let stdout = import(&ctx, &out, &["--collection", "notes", "--prune"]);
    assert_eq!(
        summary(&stdout),
        "collection notes: added 0, updated 0, unchanged 12, removed 0, failed 0"
    );
    assert_eq!(changes(&ctx), logged);
    let but_collections = |lines: Vec<String>| -> Vec<String> {
        lines
            .into_iter()
            .filter(|line| !line.starts_with("collections: "))
            .collect()
    };
    assert_eq!(but_collections(snapshot(&ctx.db)), but_collections(before));
    let source: String = ctx.query("SELECT source FROM collections WHERE name = 'notes'");
    assert_eq!(Path::new(&source), out.canonicalize().expect("out"));

    // Exporting again writes nothing new.
    let stdout = ctx.ok(&["export", out_str, "--collection", "notes"]);
    assert!(
        stdout.contains("(0 files written, 12 unchanged)"),
        "{stdout}"
    );

    // A fresh library importing the export holds the same items with the same times.
    let fresh = TestContext::new();
    import(&fresh, &out, &["--collection", "notes"]);
    assert_eq!(hashes(&fresh.db), original);
    assert_eq!(
        std::fs::read(out.join("images/layers.png")).expect("png"),
        PNG
    );

    // A full export puts each collection in its own folder.
    let all = ctx.path("all");
    let stdout = ctx.ok(&["export", all.to_str().expect("UTF-8")]);
    assert!(stdout.starts_with("exported"), "{stdout}");
    assert!(all.join("notes/prompts/review.prompt.md").is_file());
    assert!(all.join("library/prompts/code-review.prompt.md").is_file());
}

#[cfg(unix)]
#[test]
fn a_symlink_leading_outside_the_folder_is_refused() {
    let ctx = TestContext::new();
    ctx.write("secret.md", "# Secret\n");
    ctx.write("outside/more.md", "# More secrets\n");
    ctx.write("s/inside.md", "# Inside\n");
    std::os::unix::fs::symlink(ctx.path("secret.md"), ctx.path("s/escape.md")).expect("link");
    std::os::unix::fs::symlink(ctx.path("outside"), ctx.path("s/folder")).expect("link");
    std::os::unix::fs::symlink(ctx.path("s/inside.md"), ctx.path("s/alias.md")).expect("link");
    let output = run(&ctx, &["import", ctx.path("s").to_str().expect("UTF-8")]);
    assert!(output.status.success(), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("escape.md: a symlink leading outside the folder"),
        "{stderr}"
    );
    assert!(
        stderr.contains("folder: a symlink leading outside the folder"),
        "{stderr}"
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        summary(&stdout),
        "collection s: added 2, updated 0, unchanged 0, removed 0, failed 0, skipped 2"
    );
    assert_eq!(
        ctx.query::<i64>(
            "SELECT count(*) FROM resources WHERE collection = 's' AND title LIKE '%ecret%'"
        ),
        0
    );
    // A symlink that stays inside is read like the file it points to.
    assert_eq!(resource_json(&ctx, "shelf://s/alias.md")["title"], "Inside");
}

#[test]
fn gitignored_hidden_and_database_files_are_not_read() {
    let ctx = TestContext::new();
    ctx.write(".gitignore", "drafts/\n*.tmp\n");
    ctx.write("kept.md", "# Kept\n");
    ctx.write("drafts/wip.md", "# WIP\n");
    ctx.write("notes.tmp", "temporary\n");
    ctx.write(".hidden.md", "# Hidden\n");
    ctx.write(".git/config", "[core]\n");
    ctx.write(".obsidian/workspace.json", "{}");
    ctx.write("sub/.ignore", "private.md\n");
    ctx.write("sub/private.md", "# Private\n");
    ctx.write("sub/public.md", "# Public\n");
    // The folder holds the database itself (TestContext keeps it there).
    let root = ctx.dir.path().to_path_buf();
    let stdout = import(&ctx, &root, &["--collection", "root"]);
    assert_eq!(
        summary(&stdout),
        "collection root: added 2, updated 0, unchanged 0, removed 0, failed 0"
    );
    let uris: Vec<String> = ctx
        .open_db()
        .prepare("SELECT uri FROM resources WHERE collection = 'root' ORDER BY uri")
        .expect("prepare")
        .query_map([], |row| row.get(0))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows");
    assert_eq!(uris, ["shelf://root/kept.md", "shelf://root/sub/public.md"]);
}

#[test]
fn files_over_the_size_limit_are_refused() {
    let ctx = TestContext::new();
    ctx.write("z/small.md", "# Small\n");
    ctx.write("z/big.md", "x".repeat(2000));
    let (stdout, stderr) = import_fails(&ctx, &ctx.path("z"), &["--max-file-size", "1000"]);
    assert!(
        stderr.contains(
            "big.md: the file is 2000 bytes, over the limit of 1000 bytes; raise --max-file-size"
        ),
        "{stderr}"
    );
    assert!(summary(&stdout).ends_with("failed 1"), "{stdout}");
    assert_eq!(
        ctx.query::<i64>("SELECT count(*) FROM resources WHERE collection = 'z'"),
        0
    );
    let (stdout, _) = import_fails(
        &ctx,
        &ctx.path("z"),
        &["--max-file-size", "1000", "--keep-going"],
    );
    assert_eq!(
        summary(&stdout),
        "collection z: added 1, updated 0, unchanged 0, removed 0, failed 1"
    );
    import(&ctx, &ctx.path("z"), &[]);
}

#[test]
fn watch_imports_again_when_a_file_changes() {
    let ctx = TestContext::new();
    ctx.write("w/a.md", "# A\n");
    ctx.ok(&["stats"]);
    let watch = Watch::start(&ctx, "w");
    let first = watch.next_round("first round");
    assert_eq!(
        first.last().map(String::as_str),
        Some("collection w: added 1, updated 0, unchanged 0, removed 0, failed 0")
    );
    // A round reads every file; reading is not a change, so no round follows by itself.
    watch.no_round_for_reads();
    // The watcher was started before the first round, so this edit cannot be missed.
    ctx.write("w/a.md", "# A, edited\n");
    let second = watch.next_round("round after an edit");
    assert_eq!(
        second,
        [
            "updated resource shelf://w/a.md (a.md)",
            "collection w: added 0, updated 1, unchanged 0, removed 0, failed 0"
        ]
    );
    assert_eq!(resource_json(&ctx, "shelf://w/a.md")["title"], "A, edited");
    watch.no_round_for_reads();
}

#[test]
fn a_missing_folder_or_a_bad_name_is_an_error_that_says_what_to_do() {
    let ctx = TestContext::new();
    let stderr = ctx.fails(&["import", ctx.path("nope").to_str().expect("UTF-8")]);
    assert!(stderr.contains("pass an existing folder"), "{stderr}");
    ctx.write("f/a.md", "# A\n");
    let stderr = ctx.fails(&[
        "import",
        ctx.path("f").to_str().expect("UTF-8"),
        "--collection",
        "a/b",
    ]);
    assert!(stderr.contains("--collection notes"), "{stderr}");
    let stderr = ctx.fails(&[
        "import",
        ctx.path("f").to_str().expect("UTF-8"),
        "--scheme",
        "1x",
    ]);
    assert!(stderr.contains("is not a URI scheme"), "{stderr}");
    let stderr = ctx.fails(&[
        "export",
        ctx.path("o").to_str().expect("UTF-8"),
        "--collection",
        "nope",
    ]);
    assert!(stderr.contains("no collection 'nope'"), "{stderr}");
}

#[test]
fn prompt_add_reads_other_tools_files_and_resource_add_keeps_documents() {
    let ctx = TestContext::new();
    let command = ctx.write("x/commands/greet.md", "Greet $1 warmly.\n");
    let vscode = ctx.write("x/ask.prompt.md", "Ask about ${input:topic}.\n");
    let note = ctx.write("x/commands/notes.md", "# Notes\n");
    assert_eq!(
        ctx.ok(&["prompt", "add", command.to_str().expect("UTF-8")]),
        "added prompt greet\n"
    );
    assert_eq!(prompt_json(&ctx, "greet")["arguments"][0]["name"], "arg1");
    ctx.ok(&["prompt", "add", vscode.to_str().expect("UTF-8")]);
    assert_eq!(prompt_json(&ctx, "ask")["arguments"][0]["name"], "topic");
    ctx.ok(&["resource", "add", note.to_str().expect("UTF-8")]);
    assert_eq!(
        resource_json(&ctx, "shelf://local/notes.md")["title"],
        "Notes"
    );
}

#[test]
fn a_prompt_defined_twice_or_a_file_that_is_not_text_is_a_failure() {
    let ctx = TestContext::new();
    ctx.write("t/a/same.prompt.md", "One\n");
    ctx.write("t/b/same.prompt.md", "Two\n");
    ctx.write("t/latin1.md", b"caf\xe9\n");
    ctx.write("t/empty.prompt.md", "---\ndescription: nothing\n---\n\n");
    let (_, stderr) = import_fails(&ctx, &ctx.path("t"), &[]);
    assert!(
        stderr.contains(
            "b/same.prompt.md:1: prompt 'same' is also given by a/same.prompt.md:1; in one of \
             them, give it another `name:` in its front matter"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("latin1.md: not UTF-8 text"), "{stderr}");
    assert!(
        stderr.contains("empty.prompt.md:4: the prompt has no body"),
        "{stderr}"
    );
    assert!(stderr.contains("3 files failed"), "{stderr}");
}

/// `import DIR` run from the temporary folder, so that messages name `DIR/...` as given.
#[cfg(unix)]
fn import_relative(ctx: &TestContext, dir: &str) -> (String, String) {
    let output = ctx
        .command(&["import", dir])
        .current_dir(ctx.dir.path())
        .output()
        .expect("run import");
    assert!(
        output.status.success(),
        "{}",
        describe(&["import", dir], &output, "expected success")
    );
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    // Warnings name paths inside the folder, never the absolute path an error of the walk
    // would give.
    let absolute = ctx.dir.path().canonicalize().expect("canonical");
    assert!(
        !stderr.contains(absolute.to_str().expect("UTF-8")),
        "{stderr}"
    );
    (String::from_utf8_lossy(&output.stdout).into_owned(), stderr)
}

#[cfg(unix)]
#[test]
fn a_dangling_symlink_is_skipped_with_a_warning_and_the_rest_imports() {
    let ctx = TestContext::new();
    ctx.write("d/kept.md", "# Kept\n");
    ctx.write("d/sub/also.md", "# Also\n");
    std::os::unix::fs::symlink(ctx.path("d/gone.md"), ctx.path("d/sub/dangling.md")).expect("link");
    let (stdout, stderr) = import_relative(&ctx, "d");
    assert!(
        stderr.contains("skipped d/sub/dangling.md: a symlink to nothing"),
        "{stderr}"
    );
    assert_eq!(
        summary(&stdout),
        "collection d: added 2, updated 0, unchanged 0, removed 0, failed 0, skipped 1"
    );
    assert_eq!(resource_json(&ctx, "shelf://d/kept.md")["title"], "Kept");
    assert_eq!(
        resource_json(&ctx, "shelf://d/sub/also.md")["title"],
        "Also"
    );
}

#[cfg(unix)]
#[test]
fn a_loop_of_two_file_symlinks_is_skipped_with_a_warning_and_the_rest_imports() {
    let ctx = TestContext::new();
    ctx.write("l/kept.md", "# Kept\n");
    std::os::unix::fs::symlink("b.md", ctx.path("l/a.md")).expect("link");
    std::os::unix::fs::symlink(ctx.path("l/a.md"), ctx.path("l/b.md")).expect("link");
    let (stdout, stderr) = import_relative(&ctx, "l");
    for name in ["a.md", "b.md"] {
        assert!(
            stderr.contains(&format!("skipped l/{name}: a symlink loop")),
            "{stderr}"
        );
    }
    assert_eq!(
        summary(&stdout),
        "collection l: added 1, updated 0, unchanged 0, removed 0, failed 0, skipped 2"
    );
    assert_eq!(resource_json(&ctx, "shelf://l/kept.md")["title"], "Kept");
}

/// Files flipped between a regular file and a symlink out of the folder while imports run:
/// whatever the timing, what the link leads to never reaches the database.
#[cfg(unix)]
#[test]
fn a_file_swapped_for_a_link_out_of_the_folder_during_an_import_is_never_read() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    const FILES: usize = 200;
    let ctx = TestContext::new();
    ctx.write("secret.md", "# Secret\n");
    for i in 0..FILES {
        ctx.write(&format!("r/f{i:03}.md"), "# Mine\n");
    }
    ctx.write("spare/keep", "");
    let stop = Arc::new(AtomicBool::new(false));
    let flipper = {
        let stop = Arc::clone(&stop);
        let secret = ctx.path("secret.md");
        let folder = ctx.path("r");
        let spare = ctx.path("spare");
        std::thread::spawn(move || {
            let mut link = true;
            while !stop.load(Ordering::Relaxed) {
                for i in 0..FILES {
                    // Renamed over the file, so that it is always there, as a file or a link.
                    let target = folder.join(format!("f{i:03}.md"));
                    let temporary = spare.join(format!("t{i:03}"));
                    if link {
                        std::os::unix::fs::symlink(&secret, &temporary).expect("link");
                    } else {
                        std::fs::write(&temporary, "# Mine\n").expect("write");
                    }
                    std::fs::rename(&temporary, &target).expect("rename");
                }
                link = !link;
            }
        })
    };
    let dir = ctx.path("r");
    for _ in 0..8 {
        let output = run(
            &ctx,
            &["import", dir.to_str().expect("UTF-8"), "--keep-going"],
        );
        let read_secret = ctx.query::<i64>(
            "SELECT count(*) FROM resources WHERE collection = 'r' AND title LIKE '%ecret%'",
        );
        if read_secret != 0 {
            stop.store(true, Ordering::Relaxed);
            let _ = flipper.join();
            panic!(
                "{read_secret} files out of the folder were read\n{}",
                describe(&["import"], &output, "")
            );
        }
    }
    stop.store(true, Ordering::Relaxed);
    flipper.join().expect("flipper");
}

#[test]
fn watch_removes_the_items_of_a_file_deleted_while_it_runs() {
    let ctx = TestContext::new();
    ctx.write("w/a.md", "# A\n");
    ctx.write("w/b.md", "# B\n");
    ctx.write("w/old.md", "# Old\n");
    ctx.ok(&["init", "--empty"]);
    ctx.ok(&["import", ctx.path("w").to_str().expect("UTF-8")]);
    // Gone before watching begins: stays, as without --prune.
    std::fs::remove_file(ctx.path("w/old.md")).expect("delete old.md");
    let watch = Watch::start(&ctx, "w");
    let first = watch.next_round("first round");
    assert_eq!(
        first.last().map(String::as_str),
        Some("collection w: added 0, updated 0, unchanged 2, removed 0, failed 0")
    );
    std::fs::remove_file(ctx.path("w/b.md")).expect("delete b.md");
    let second = watch.next_round("round after a deletion");
    assert_eq!(
        second,
        [
            "removed resource shelf://w/b.md",
            "collection w: added 0, updated 0, unchanged 1, removed 1, failed 0"
        ]
    );
    drop(watch);
    ctx.fails(&["resource", "show", "shelf://w/b.md"]);
    // What was gone before the watch began is still there, for --prune to remove.
    resource_json(&ctx, "shelf://w/old.md");
    resource_json(&ctx, "shelf://w/a.md");
}

#[test]
fn an_import_without_prune_says_how_many_items_have_no_file_any_more() {
    let ctx = TestContext::new();
    ctx.write("n/a.md", "# A\n");
    ctx.write("n/b.md", "# B\n");
    ctx.write("n/c.prompt.md", "Say C.\n");
    ctx.ok(&["init", "--empty"]);
    let dir = ctx.path("n");
    let dir = dir.to_str().expect("UTF-8");
    ctx.ok(&["import", dir]);
    std::fs::remove_file(ctx.path("n/b.md")).expect("delete b.md");
    std::fs::remove_file(ctx.path("n/c.prompt.md")).expect("delete c.prompt.md");
    let output = ctx.run(&["import", dir]);
    assert!(output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(
            "note: 2 stored items of the collection n have no file any more; import with \
             --prune to remove them"
        ),
        "{stderr}"
    );
    assert_eq!(ctx.json(&["import", dir, "--json"])["withoutFile"], 2);
    assert_eq!(
        ctx.json(&["import", dir, "--dry-run", "--json"])["withoutFile"],
        2
    );
    let pruned = ctx.run(&["import", dir, "--prune", "--json"]);
    let pruned: Value = serde_json::from_slice(&pruned.stdout).expect("JSON");
    assert_eq!(pruned["removed"], 2);
    assert_eq!(pruned["withoutFile"], 0);
    let output = ctx.run(&["import", dir]);
    assert!(!String::from_utf8_lossy(&output.stderr).contains("no file"));
}

/// `promptshelf import FOLDER --watch` on a test's database, its output and its log (the
/// watcher's debug lines) read a line at a time; dropping it stops the process, so a failed
/// assertion leaves no watcher behind.
struct Watch {
    child: std::process::Child,
    lines: std::sync::mpsc::Receiver<String>,
    logs: std::sync::mpsc::Receiver<String>,
}

/// The lines `from` gives, one at a time, as they come.
fn line_by_line(from: impl std::io::Read + Send + 'static) -> std::sync::mpsc::Receiver<String> {
    let (sender, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(from).lines() {
            let Ok(line) = line else { break };
            if sender.send(line).is_err() {
                break;
            }
        }
    });
    lines
}

impl Watch {
    fn start(ctx: &TestContext, folder: &str) -> Watch {
        let mut child = Command::new(BIN)
            .arg("--db")
            .arg(&ctx.db)
            .args([
                "import",
                ctx.path(folder).to_str().expect("UTF-8"),
                "--watch",
            ])
            .env_remove("PROMPTSHELF_DB")
            .env("RUST_LOG", "warn,promptshelf::import::watch=debug")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start import --watch");
        let lines = line_by_line(child.stdout.take().expect("stdout"));
        let logs = line_by_line(child.stderr.take().expect("stderr"));
        Watch { child, lines, logs }
    }

    /// The lines of the next round, its summary last; `what` names the round if none comes
    /// within 20 s.
    fn next_round(&self, what: &str) -> Vec<String> {
        let mut seen = Vec::new();
        loop {
            let line = self
                .lines
                .recv_timeout(Duration::from_secs(20))
                .unwrap_or_else(|_| panic!("no {what} within 20 s; saw {seen:?}"));
            let done = line.contains("added ");
            seen.push(line);
            if done {
                return seen;
            }
        }
    }

    /// Waits for the watcher's debug line saying that events came and started no round (the
    /// reads of the round before), and fails the test if a round started meanwhile.
    fn no_round_for_reads(&self) {
        let mut said = Vec::new();
        while !said
            .last()
            .is_some_and(|line: &String| line.contains("no round"))
        {
            let line = self.logs.recv_timeout(Duration::from_secs(20));
            said.push(line.unwrap_or_else(|_| {
                panic!("no events without a round within 20 s; the log said {said:?}")
            }));
        }
        if let Ok(line) = self.lines.try_recv() {
            panic!("a round started with nothing changed: {line}");
        }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
