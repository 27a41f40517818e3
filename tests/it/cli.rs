//! The admin CLI against a real database file.

use std::path::Path;

use serde_json::{Value, json};

use std::process::Stdio;
use std::time::Duration;

use crate::common::{BIN, Server, TestContext, command_on, describe, downgrades_to, snapshot};

/// The schema version this build creates.
const SCHEMA_VERSION_NOW: i64 = 14;

const PNG: &[u8] = include_bytes!("../../seed/images/layers.png");

const REVIEW_PROMPT: &str = "---
name: tiny-review
title: Tiny review
description: Review a snippet.
arguments:
  - name: code
    description: The code
    required: true
  - name: language
    type: enum
    values: [rust, python]
    completion: languages
---
Review this {{ language }} code:

{{ code }}
<!-- assistant -->
Here is my review.
";

/// Runs a command that must fail: one line on stderr, naming the problem, and the database
/// exactly as it was. Returns that line.
fn fails_cleanly(ctx: &TestContext, args: &[&str]) -> String {
    let before = snapshot(&ctx.db);
    let stderr = ctx.fails(args);
    assert_one_error_line(args, &stderr);
    assert!(
        before == snapshot(&ctx.db),
        "promptshelf {args:?} failed but changed the database"
    );
    stderr.trim_end().to_string()
}

fn assert_one_error_line(args: &[&str], stderr: &str) {
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(
        lines.len(),
        1,
        "promptshelf {args:?} should print one error line, got:\n{stderr}"
    );
    assert!(
        lines[0].starts_with("promptshelf: "),
        "promptshelf {args:?}: {stderr}"
    );
}

fn path_str(path: &Path) -> &str {
    path.to_str().expect("temporary paths are UTF-8")
}

fn changes_after(ctx: &TestContext, seq: i64) -> Vec<(String, String, String)> {
    let conn = ctx.open_db();
    let mut stmt = conn
        .prepare("SELECT kind, op, key FROM change_log WHERE seq > ?1 ORDER BY seq")
        .expect("prepare");
    stmt.query_map([seq], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows")
}

fn last_change(ctx: &TestContext) -> i64 {
    ctx.query::<i64>("SELECT coalesce(max(seq), 0) FROM change_log")
}

fn change(kind: &str, op: &str, key: &str) -> (String, String, String) {
    (kind.into(), op.into(), key.into())
}

#[test]
fn a_new_database_is_created_and_seeded() {
    let ctx = TestContext::new();
    let stats = ctx.json(&["stats", "--json"]);
    assert!(ctx.db.exists());
    for key in [
        "prompts",
        "resources",
        "templates",
        "tables",
        "values",
        "blobs",
    ] {
        assert!(stats[key].as_u64().unwrap_or(0) > 0, "{key}: {stats}");
    }
    assert_eq!(stats["schemaVersion"], SCHEMA_VERSION_NOW);
    assert_eq!(
        ctx.query::<i64>("PRAGMA user_version"),
        SCHEMA_VERSION_NOW,
        "schema.sql's version is recorded"
    );
    let resources = ctx.json(&["resource", "list", "--json"]);
    let uris: Vec<&str> = resources
        .as_array()
        .expect("an array")
        .iter()
        .filter_map(|r| r["uri"].as_str())
        .collect();
    assert!(
        uris.iter()
            .any(|uri| uri.starts_with("shelf://library/guides/")),
        "{uris:?}"
    );
    let languages = ctx.json(&["values", "list", "languages", "--json"]);
    assert!(
        languages.as_array().expect("an array").len() >= 100,
        "{languages}"
    );
    let templates = ctx.json(&["template", "list", "--json"]);
    assert_eq!(templates[0]["uriTemplate"], "shelf://library/{+path}");
    let prompts = ctx.json(&["prompt", "list", "--json"]);
    assert!(
        prompts
            .as_array()
            .expect("an array")
            .iter()
            .any(|p| p["name"] == "code-review" && p["collection"] == "library"),
        "{prompts}"
    );
}

#[test]
fn prompt_list_and_show_print_columns_and_json() {
    let ctx = TestContext::new();
    let list = ctx.ok(&["prompt", "list"]);
    let header = list.lines().next().unwrap_or_default();
    assert!(
        header.starts_with("NAME") && header.contains("ARGS") && header.contains("TITLE"),
        "{list}"
    );
    assert!(list.contains("code-review"), "{list}");
    let shown = ctx.json(&["prompt", "show", "code-review", "--json"]);
    assert_eq!(shown["name"], "code-review");
    assert_eq!(shown["arguments"][0]["name"], "code");
    assert_eq!(shown["arguments"][0]["required"], true);
    assert!(!shown["messages"].as_array().expect("messages").is_empty());
    let human = ctx.ok(&["prompt", "show", "code-review"]);
    assert!(
        human.contains("ARGUMENT") && human.contains("--- user"),
        "{human}"
    );
}

#[test]
fn prompt_add_reports_added_unchanged_and_updated() {
    let ctx = TestContext::new();
    let file = ctx.write("tiny.prompt.md", REVIEW_PROMPT);
    let file = path_str(&file);
    assert_eq!(
        ctx.ok(&["prompt", "add", file]),
        "added prompt tiny-review\n"
    );
    assert_eq!(
        ctx.ok(&["prompt", "add", file]),
        "prompt tiny-review is unchanged\n"
    );
    let shown = ctx.json(&["prompt", "show", "tiny-review", "--json"]);
    assert_eq!(shown["title"], "Tiny review");
    assert_eq!(shown["collection"], Value::Null, "added by hand: no origin");
    assert_eq!(shown["origin"], Value::Null);
    let arguments = shown["arguments"].as_array().expect("arguments");
    assert_eq!(arguments.len(), 2);
    assert_eq!(arguments[1]["type"], "enum");
    assert_eq!(
        arguments[1]["values"],
        serde_json::json!(["rust", "python"])
    );
    assert_eq!(arguments[1]["completion"], "languages");
    let roles: Vec<&str> = shown["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter_map(|m| m["role"].as_str())
        .collect();
    assert_eq!(roles, ["user", "assistant"]);

    ctx.write(
        "tiny.prompt.md",
        REVIEW_PROMPT.replace("my review", "the review"),
    );
    assert_eq!(
        ctx.ok(&["prompt", "add", file]),
        "updated prompt tiny-review\n"
    );
    let listed = ctx.json(&["prompt", "list", "--json"]);
    let entry = listed
        .as_array()
        .expect("an array")
        .iter()
        .find(|p| p["name"] == "tiny-review")
        .expect("listed");
    assert_eq!(entry["arguments"].as_array().map(Vec::len), Some(2));
}

#[test]
fn prompt_add_of_a_seed_prompt_file_with_detach_clears_its_origin() {
    let ctx = TestContext::new();
    let seed = Path::new(env!("CARGO_MANIFEST_DIR")).join("seed/prompts/summarize.prompt.md");
    assert_eq!(
        ctx.ok(&["prompt", "add", path_str(&seed), "--detach"]),
        "prompt summarize is unchanged, detached from the collection library\n"
    );
    let shown = ctx.json(&["prompt", "show", "summarize", "--json"]);
    assert_eq!(shown["collection"], Value::Null);
    assert_eq!(shown["origin"], Value::Null);
}

#[test]
fn prompt_add_reads_kind_prompt_front_matter() {
    let ctx = TestContext::new();
    let file = ctx.write(
        "ask.md",
        "---\nkind: prompt\narguments:\n  - name: topic\n---\nTell me about {{ topic }}.\n",
    );
    assert_eq!(
        ctx.ok(&["prompt", "add", path_str(&file)]),
        "added prompt ask\n"
    );
    let shown = ctx.json(&["prompt", "show", "ask", "--json"]);
    assert_eq!(shown["arguments"][0]["name"], "topic");
}

#[test]
fn prompt_add_refuses_a_file_that_is_not_a_prompt() {
    let ctx = TestContext::new();
    let file = ctx.write("notes.md", "# Notes\n\nJust notes.\n");
    ctx.ok(&["stats"]);
    let error = fails_cleanly(&ctx, &["prompt", "add", path_str(&file)]);
    assert!(error.contains("is not a prompt"), "{error}");
    assert!(error.contains("resource add"), "{error}");
}

#[test]
fn prompt_rm_removes_its_arguments_and_messages() {
    let ctx = TestContext::new();
    let file = ctx.write("tiny.prompt.md", REVIEW_PROMPT);
    ctx.ok(&["prompt", "add", path_str(&file)]);
    let id = ctx.query::<i64>("SELECT id FROM prompts WHERE name = 'tiny-review'");
    let rows = |table: &str| {
        ctx.query::<i64>(&format!(
            "SELECT count(*) FROM {table} WHERE prompt_id = {id}"
        ))
    };
    assert_eq!(rows("prompt_arguments"), 2);
    assert_eq!(rows("prompt_messages"), 2);
    assert_eq!(
        ctx.ok(&["prompt", "rm", "tiny-review"]),
        "removed prompt tiny-review\n"
    );
    assert_eq!(rows("prompt_arguments"), 0);
    assert_eq!(rows("prompt_messages"), 0);
    let error = fails_cleanly(&ctx, &["prompt", "show", "tiny-review"]);
    assert!(error.contains("unknown prompt 'tiny-review'"), "{error}");
}

#[test]
fn resource_commands_list_show_cat_add_and_remove() {
    let ctx = TestContext::new();
    let list = ctx.ok(&["resource", "list"]);
    let header = list.lines().next().unwrap_or_default();
    for column in ["URI", "MIME", "SIZE", "TITLE"] {
        assert!(header.contains(column), "{list}");
    }
    let file = ctx.write(
        "style notes.md",
        "---\ntitle: Style notes\naudience: [assistant]\npriority: 0.5\n---\n# Style\n\nShort lines.\n",
    );
    let added = ctx.ok(&["resource", "add", path_str(&file)]);
    let uri = "shelf://local/style%20notes.md";
    assert!(
        added.starts_with(&format!("added resource {uri} (text/markdown")),
        "{added}"
    );
    let shown = ctx.json(&["resource", "show", uri, "--json"]);
    assert_eq!(shown["uri"], uri);
    assert_eq!(shown["name"], "style notes.md");
    assert_eq!(shown["title"], "Style notes");
    assert_eq!(shown["mimeType"], "text/markdown");
    assert_eq!(shown["text"], true);
    assert_eq!(shown["audience"], serde_json::json!(["assistant"]));
    assert_eq!(shown["priority"], 0.5);
    assert_eq!(shown["collection"], Value::Null);
    assert_eq!(
        ctx.ok(&["resource", "cat", uri]),
        "# Style\n\nShort lines.\n",
        "front matter is not content"
    );
    let listed = ctx.json(&["resource", "list", "--json"]);
    assert!(
        listed
            .as_array()
            .expect("an array")
            .iter()
            .any(|r| r["uri"] == uri && r["size"] == 22),
        "{listed}"
    );
    assert!(ctx.ok(&["resource", "show", uri]).contains("Style notes"));
    assert_eq!(
        ctx.ok(&["resource", "add", path_str(&file)]),
        format!("resource {uri} is unchanged\n")
    );
    assert_eq!(
        ctx.ok(&["resource", "rm", uri]),
        format!("removed resource {uri}\n")
    );
    let error = fails_cleanly(&ctx, &["resource", "cat", uri]);
    assert!(error.contains("unknown resource"), "{error}");
}

#[test]
fn resource_add_takes_uri_name_and_mime_type_overrides() {
    let ctx = TestContext::new();
    let file = ctx.write("data", "{\"a\": 1}\n");
    ctx.ok(&[
        "resource",
        "add",
        path_str(&file),
        "--uri",
        "https://example.com/data.json",
        "--name",
        "Example data",
        "--mime-type",
        "application/json",
    ]);
    let shown = ctx.json(&[
        "resource",
        "show",
        "https://example.com/data.json",
        "--json",
    ]);
    assert_eq!(shown["name"], "Example data");
    assert_eq!(shown["mimeType"], "application/json");
    assert_eq!(shown["text"], true, "JSON is served as text");
    let error = fails_cleanly(
        &ctx,
        &["resource", "add", path_str(&file), "--uri", "not a uri"],
    );
    assert!(error.contains("not a valid URI"), "{error}");
    let error = fails_cleanly(
        &ctx,
        &["resource", "add", path_str(&file), "--mime-type", "json"],
    );
    assert!(error.contains("not a MIME type"), "{error}");
    let prompt = ctx.write("tiny.prompt.md", REVIEW_PROMPT);
    let error = fails_cleanly(&ctx, &["resource", "add", path_str(&prompt)]);
    assert!(error.contains("is a prompt file"), "{error}");
}

#[test]
fn the_same_content_under_two_uris_is_stored_once() {
    let ctx = TestContext::new();
    let blobs = || {
        ctx.json(&["stats", "--json"])["blobs"]
            .as_u64()
            .expect("blobs")
    };
    let before = blobs();
    let file = ctx.write("shared.txt", "the same words\n");
    let file = path_str(&file);
    ctx.ok(&["resource", "add", file, "--uri", "shelf://a/shared.txt"]);
    ctx.ok(&["resource", "add", file, "--uri", "shelf://b/shared.txt"]);
    assert_eq!(blobs(), before + 1);
    assert_eq!(
        ctx.query::<i64>(
            "SELECT count(DISTINCT blob_hash) FROM resources WHERE uri LIKE 'shelf://_/shared.txt'"
        ),
        1
    );
    ctx.ok(&["resource", "rm", "shelf://a/shared.txt"]);
    assert_eq!(blobs(), before + 1, "still used by the other resource");
    ctx.ok(&["resource", "rm", "shelf://b/shared.txt"]);
    assert_eq!(
        blobs(),
        before + 1,
        "the history's versions of the two resources hold it still"
    );
    for uri in ["shelf://a/shared.txt", "shelf://b/shared.txt"] {
        ctx.ok(&["--keep", "1", "resource", "add", file, "--uri", uri]);
        ctx.ok(&["--keep", "1", "resource", "rm", uri]);
    }
    assert_eq!(
        blobs(),
        before,
        "the last version that held it took it along"
    );
}

#[test]
fn a_png_is_stored_as_binary_and_read_back_byte_for_byte() {
    let ctx = TestContext::new();
    let file = ctx.write("diagram.png", PNG);
    ctx.ok(&["resource", "add", path_str(&file)]);
    let uri = "shelf://local/diagram.png";
    let shown = ctx.json(&["resource", "show", uri, "--json"]);
    assert_eq!(shown["mimeType"], "image/png");
    assert_eq!(shown["text"], false);
    assert_eq!(shown["size"], PNG.len());
    assert_eq!(
        ctx.query::<i64>("SELECT is_text FROM resources WHERE uri = 'shelf://local/diagram.png'"),
        0
    );
    let output = ctx.run(&["resource", "cat", uri]);
    assert!(
        output.status.success(),
        "{}",
        describe(&["resource", "cat", uri], &output, "cat")
    );
    assert!(output.stdout == PNG, "cat gives back other bytes");
}

#[test]
fn template_commands_list_add_and_remove() {
    let ctx = TestContext::new();
    let template = "shelf://code/{language}/{+path}";
    let added = ctx.ok(&[
        "template",
        "add",
        template,
        "--name",
        "code",
        "--title",
        "Code samples",
        "--description",
        "Samples by language",
        "--mime-type",
        "text/plain",
        "--complete",
        "language=languages",
    ]);
    assert_eq!(added, format!("added template {template}\n"));
    let listed = ctx.json(&["template", "list", "--json"]);
    let entry = listed
        .as_array()
        .expect("an array")
        .iter()
        .find(|t| t["uriTemplate"] == template)
        .expect("listed");
    assert_eq!(entry["name"], "code");
    assert_eq!(entry["title"], "Code samples");
    assert_eq!(entry["mimeType"], "text/plain");
    assert_eq!(entry["completions"]["language"], "languages");
    let human = ctx.ok(&["template", "list"]);
    assert!(human.contains("language=languages"), "{human}");
    assert_eq!(
        ctx.ok(&[
            "template",
            "add",
            template,
            "--name",
            "code",
            "--title",
            "Code samples",
            "--description",
            "Samples by language",
            "--mime-type",
            "text/plain",
            "--complete",
            "language=languages",
        ]),
        format!("template {template} is unchanged\n")
    );
    assert_eq!(
        ctx.ok(&["template", "rm", template]),
        format!("removed template {template}\n")
    );
    let error = fails_cleanly(&ctx, &["template", "rm", template]);
    assert!(error.contains("unknown template"), "{error}");
}

#[test]
fn template_add_rejects_invalid_templates_and_unknown_variables() {
    let ctx = TestContext::new();
    ctx.ok(&["stats"]);
    let error = fails_cleanly(
        &ctx,
        &["template", "add", "shelf://docs/{path", "--name", "docs"],
    );
    assert!(
        error.contains("not a valid RFC 6570 URI template"),
        "{error}"
    );
    assert!(error.contains("closing brace"), "{error}");
    let error = fails_cleanly(
        &ctx,
        &[
            "template",
            "add",
            "shelf://docs/{+path}",
            "--name",
            "docs",
            "--complete",
            "lang=languages",
        ],
    );
    assert!(error.contains("variable 'lang'"), "{error}");
    assert!(error.contains("path"), "{error}");
    // RFC 6570 allows a variable twice, but a URI read through such a template could give
    // it two values, so it is refused, and nothing is stored.
    let error = fails_cleanly(
        &ctx,
        &["template", "add", "shelf://docs/{lang}/{+path}/{lang}"],
    );
    assert!(
        error.contains("'shelf://docs/{lang}/{+path}/{lang}' names the variable 'lang' twice"),
        "{error}"
    );
    assert!(error.contains("name each variable once"), "{error}");
    let templates = ctx.json(&["template", "list", "--json"]);
    assert!(
        !templates.to_string().contains("shelf://docs/{lang}"),
        "{templates}"
    );
}

#[test]
fn values_commands_add_list_and_remove() {
    let ctx = TestContext::new();
    assert_eq!(
        ctx.ok(&["values", "add", "editors", "vim", "emacs"]),
        "created table editors with 2 values\n"
    );
    assert_eq!(
        ctx.ok(&[
            "values",
            "add",
            "editors",
            "zed",
            "--weight",
            "7",
            "--context",
            "os=macos"
        ]),
        "added 1 value to editors (3 now)\n"
    );
    let tables = ctx.json(&["values", "list", "--json"]);
    let editors = tables
        .as_array()
        .expect("an array")
        .iter()
        .find(|t| t["name"] == "editors")
        .expect("listed");
    assert_eq!(editors["values"], 3);
    let values = ctx.json(&["values", "list", "editors", "--json"]);
    let zed = values
        .as_array()
        .expect("an array")
        .iter()
        .find(|v| v["value"] == "zed")
        .expect("zed");
    assert_eq!(zed["weight"], 7.0);
    assert_eq!(zed["context"]["argument"], "os");
    assert_eq!(zed["context"]["value"], "macos");
    assert!(ctx.ok(&["values", "list", "editors"]).contains("os=macos"));
    assert_eq!(
        ctx.ok(&["values", "rm", "editors", "vim"]),
        "removed vim from editors\n"
    );
    let error = fails_cleanly(&ctx, &["values", "rm", "editors", "vim"]);
    assert!(error.contains("has no value 'vim'"), "{error}");
    assert_eq!(
        ctx.ok(&["values", "rm", "editors"]),
        "removed table editors (2 values)\n"
    );
    let error = fails_cleanly(&ctx, &["values", "list", "editors"]);
    assert!(
        error.contains("unknown completion table 'editors'"),
        "{error}"
    );
    let error = fails_cleanly(&ctx, &["values", "add", "editors", "x", "--weight", "NaN"]);
    assert!(error.contains("--weight"), "{error}");
}

#[test]
fn values_import_reads_lines_and_csv_and_replaces() {
    let ctx = TestContext::new();
    let lines = ctx.write("colors.txt", "\u{feff}red\n# a comment\n\ngreen\nblue\n");
    assert_eq!(
        ctx.ok(&["values", "import", "colors", path_str(&lines)]),
        format!(
            "imported 3 values from {} into colors (3 now)\n",
            lines.display()
        )
    );
    // CSV by its header, whatever the file is called.
    let csv = ctx.write(
        "more.txt",
        "value,weight,context\nteal,5,\nnavy,2,mood=calm\n",
    );
    ctx.ok(&["values", "import", "colors", path_str(&csv)]);
    let values = ctx.json(&["values", "list", "colors", "--json"]);
    assert_eq!(values.as_array().map(Vec::len), Some(5));
    let navy = values
        .as_array()
        .expect("an array")
        .iter()
        .find(|v| v["value"] == "navy")
        .expect("navy");
    assert_eq!(navy["weight"], 2.0);
    assert_eq!(navy["context"]["argument"], "mood");
    // CSV by its extension.
    let replacement = ctx.write("only.csv", "value,weight\nblack,1\n");
    ctx.ok(&[
        "values",
        "import",
        "colors",
        path_str(&replacement),
        "--replace",
    ]);
    let values = ctx.json(&["values", "list", "colors", "--json"]);
    assert_eq!(values[0]["value"], "black");
    assert_eq!(values.as_array().map(Vec::len), Some(1));
    let bad = ctx.write("bad.csv", "value,weight\nok,1\nnot,heavy\n");
    let error = fails_cleanly(&ctx, &["values", "import", "colors", path_str(&bad)]);
    assert!(error.contains("bad.csv:3"), "{error}");
}

#[test]
fn values_import_is_one_change_however_many_values() {
    let ctx = TestContext::new();
    let many: String = (0..5000).map(|n| format!("value-{n}\n")).collect();
    let file = ctx.write("many.txt", many);
    ctx.ok(&["stats"]);
    let seq = last_change(&ctx);
    let before = ctx.query::<i64>("SELECT count(*) FROM completion_values");
    ctx.ok(&["values", "import", "many", path_str(&file)]);
    assert_eq!(
        ctx.query::<i64>("SELECT count(*) FROM completion_values"),
        before + 5000
    );
    assert_eq!(
        changes_after(&ctx, seq),
        [
            change("values", "insert", "many"),
            change("values", "update", "many")
        ]
    );
}

#[test]
fn stats_counts_and_names_the_database() {
    let ctx = TestContext::new();
    let stats = ctx.json(&["stats", "--json"]);
    let database = Path::new(stats["database"].as_str().expect("database"));
    assert!(database.is_absolute());
    assert_eq!(database.file_name(), ctx.db.file_name());
    assert_eq!(
        stats["prompts"].as_i64(),
        Some(ctx.query::<i64>("SELECT count(*) FROM prompts"))
    );
    assert_eq!(
        stats["values"].as_i64(),
        Some(ctx.query::<i64>("SELECT count(*) FROM completion_values"))
    );
    assert!(stats["fileBytes"].as_u64().unwrap_or(0) > 0);
    let human = ctx.ok(&["stats"]);
    assert!(
        human.contains("database:") && human.contains("prompts"),
        "{human}"
    );
}

#[test]
fn the_change_log_records_inserts_updates_and_deletes() {
    let ctx = TestContext::new();
    ctx.ok(&["stats"]);
    let seq = last_change(&ctx);
    let prompt = ctx.write("tiny.prompt.md", REVIEW_PROMPT);
    let prompt = path_str(&prompt);
    ctx.ok(&["prompt", "add", prompt]);
    ctx.ok(&["prompt", "add", prompt]);
    ctx.write("tiny.prompt.md", REVIEW_PROMPT.replace("Tiny", "Small"));
    ctx.ok(&["prompt", "add", prompt]);
    ctx.ok(&["prompt", "rm", "tiny-review"]);
    let doc = ctx.write("doc.md", "first\n");
    let doc = path_str(&doc);
    ctx.ok(&["resource", "add", doc]);
    ctx.write("doc.md", "second\n");
    ctx.ok(&["resource", "add", doc]);
    ctx.ok(&["resource", "rm", "shelf://local/doc.md"]);
    assert_eq!(
        changes_after(&ctx, seq),
        [
            change("prompt", "insert", "tiny-review"),
            change("prompt", "update", "tiny-review"),
            change("prompt", "delete", "tiny-review"),
            change("resource", "insert", "shelf://local/doc.md"),
            change("resource", "update", "shelf://local/doc.md"),
            change("resource", "delete", "shelf://local/doc.md"),
        ],
        "an unchanged re-add leaves no row"
    );
}

#[test]
fn a_second_process_sees_the_first_ones_writes() {
    let ctx = TestContext::new();
    let file = ctx.write("tiny.prompt.md", REVIEW_PROMPT);
    ctx.ok(&["prompt", "add", path_str(&file)]);
    let shown = ctx.json(&["prompt", "show", "tiny-review", "--json"]);
    assert_eq!(shown["name"], "tiny-review");
}

#[test]
fn concurrent_writers_all_succeed() {
    let ctx = TestContext::new();
    ctx.ok(&["stats"]);
    let children: Vec<_> = (0..6)
        .map(|n| {
            let value = format!("value-{n}");
            ctx.command(&["values", "add", "shared", &value])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("start promptshelf")
        })
        .collect();
    for child in children {
        let output = child.wait_with_output().expect("wait");
        assert!(
            output.status.success(),
            "{}",
            describe(&["values", "add"], &output, "a concurrent writer failed")
        );
    }
    let values = ctx.json(&["values", "list", "shared", "--json"]);
    assert_eq!(values.as_array().map(Vec::len), Some(6));
}

#[test]
fn a_db_whose_folder_does_not_exist_is_refused() {
    let ctx = TestContext::new();
    let db = ctx.path("missing/library.db");
    let output = std::process::Command::new(BIN)
        .arg("--db")
        .arg(&db)
        .args(["prompt", "list"])
        .env_remove("PROMPTSHELF_DB")
        .output()
        .expect("run promptshelf");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_one_error_line(&["--db", "missing/library.db"], &stderr);
    assert!(stderr.contains("missing"), "{stderr}");
    assert!(!ctx.path("missing").exists(), "the folder is not created");
}

#[test]
fn a_db_that_is_not_sqlite_is_refused_and_left_alone() {
    let ctx = TestContext::new();
    let text = b"these are my notes, not a database\n".repeat(200);
    std::fs::write(&ctx.db, &text).expect("write");
    let stderr = ctx.fails(&["prompt", "list"]);
    assert_one_error_line(&["prompt", "list"], &stderr);
    assert!(stderr.contains("not a promptshelf database"), "{stderr}");
    assert!(
        std::fs::read(&ctx.db).expect("read") == text,
        "the file was changed"
    );
}

#[test]
fn a_db_with_a_newer_schema_is_refused_and_left_alone() {
    let ctx = TestContext::new();
    ctx.ok(&["stats"]);
    ctx.open_db()
        .pragma_update(None, "user_version", 99)
        .expect("set user_version");
    let error = fails_cleanly(&ctx, &["prompt", "list"]);
    assert!(error.contains("schema version 99"), "{error}");
    assert!(error.contains("upgrade promptshelf"), "{error}");
    let error = fails_cleanly(&ctx, &["values", "add", "t", "v"]);
    assert!(error.contains("schema version 99"), "{error}");
}

#[test]
fn serve_replaces_an_empty_file_a_creation_left_and_serves_it() {
    let ctx = TestContext::new();
    // What an older build left when killed while creating the library: the file, empty,
    // and SQLite's journal beside it.
    std::fs::write(&ctx.db, b"").expect("create an empty file");
    std::fs::write(ctx.path("library.db-journal"), b"").expect("create a journal");
    let mut server = Server::spawn(command_on(&ctx.db, &["serve"]), true);
    let listed = server.modern("prompts/list", json!({}));
    let names = listed["result"]["prompts"].as_array().expect("prompts");
    assert!(
        names.iter().any(|prompt| prompt["name"] == "code-review"),
        "{listed}"
    );
    let (logs, code) = server.logs_at_exit();
    let logs = logs.join("\n");
    assert!(
        logs.contains("is an empty file, left by a creation that did not finish"),
        "{logs}"
    );
    assert_eq!(code, Some(0));
    assert_eq!(
        ctx.query::<i64>("PRAGMA user_version"),
        SCHEMA_VERSION_NOW,
        "the library was created in its place"
    );
}

#[test]
fn serve_killed_while_creating_the_library_leaves_none_or_a_whole_one() {
    let ctx = TestContext::new();
    // Kills spread over the first 80 ms, where a debug build creates the library from the
    // seed; each is followed by a start that must serve.
    for round in 0..40u64 {
        for name in ["library.db", "library.db-wal", "library.db-shm"] {
            let _ = std::fs::remove_file(ctx.path(name));
        }
        let mut creating = command_on(&ctx.db, &["serve"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start serve");
        std::thread::sleep(Duration::from_millis(round * 2));
        creating.kill().expect("kill serve");
        creating.wait().expect("reap serve");
        if ctx.db.exists() {
            assert_eq!(
                ctx.query::<i64>("PRAGMA user_version"),
                SCHEMA_VERSION_NOW,
                "round {round}: a file at the path is a whole library"
            );
        }
        let mut server = ctx.server();
        let listed = server.modern("prompts/list", json!({}));
        assert!(
            listed["result"]["prompts"]
                .as_array()
                .is_some_and(|prompts| !prompts.is_empty()),
            "round {round}, killed after {} ms: {listed}",
            round * 2
        );
        assert_eq!(server.close(), Some(0), "round {round}");
    }
    // The temporary files of the killed creations are removed by the creations after them.
    let left: Vec<String> = std::fs::read_dir(ctx.dir.path())
        .expect("list the folder")
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .filter(|name| name.contains(".creating-"))
        .collect();
    assert!(left.len() <= 3, "left behind: {left:?}");
}

#[test]
fn unknown_names_are_errors_that_list_what_exists() {
    let ctx = TestContext::new();
    ctx.ok(&["stats"]);
    for args in [["prompt", "show", "nope"], ["prompt", "rm", "nope"]] {
        let error = fails_cleanly(&ctx, &args);
        assert!(error.contains("unknown prompt 'nope'"), "{error}");
        assert!(error.contains("code-review"), "{error}");
        assert!(error.contains("promptshelf prompt list"), "{error}");
    }
    for args in [
        ["resource", "show", "shelf://nope"],
        ["resource", "cat", "shelf://nope"],
        ["resource", "rm", "shelf://nope"],
    ] {
        let error = fails_cleanly(&ctx, &args);
        assert!(error.contains("unknown resource 'shelf://nope'"), "{error}");
    }
    let error = fails_cleanly(&ctx, &["values", "rm", "nope"]);
    assert!(error.contains("known completion tables: "), "{error}");
}

#[test]
fn a_file_that_does_not_exist_is_an_error() {
    let ctx = TestContext::new();
    ctx.ok(&["stats"]);
    let missing = ctx.path("missing.md");
    let missing = path_str(&missing);
    for args in [
        vec!["prompt", "add", missing],
        vec!["resource", "add", missing],
        vec!["values", "import", "t", missing],
    ] {
        let error = fails_cleanly(&ctx, &args);
        assert_eq!(
            error,
            format!("promptshelf: cannot read {missing}: No such file or directory")
        );
    }
}

#[test]
fn broken_front_matter_names_the_file_and_line() {
    let ctx = TestContext::new();
    ctx.ok(&["stats"]);
    let file = ctx.write(
        "broken.prompt.md",
        "---\nname: broken\narguments: [\n---\nBody\n",
    );
    let error = fails_cleanly(&ctx, &["prompt", "add", path_str(&file)]);
    assert!(error.contains(&format!("{}:3:", file.display())), "{error}");
    let file = ctx.write("typo.prompt.md", "---\nnmae: typo\n---\nBody\n");
    let error = fails_cleanly(&ctx, &["prompt", "add", path_str(&file)]);
    assert!(error.contains("typo.prompt.md:2:"), "{error}");
    assert!(error.contains("nmae"), "{error}");
}

/// Every table, index and trigger with its SQL.
fn schema_of(ctx: &TestContext) -> Vec<(String, String, Option<String>)> {
    let conn = ctx.open_db();
    let mut stmt = conn
        .prepare("SELECT type, name, sql FROM sqlite_schema ORDER BY name")
        .expect("prepare");
    stmt.query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows")
}

/// A library with a document of its own, taken back to `version` (`downgrades_to`), is migrated by
/// a command to what a new database holds, its document found by search, and served.
fn migrated_by_a_command_and_served(version: i64) {
    let fresh = TestContext::new();
    fresh.ok(&["stats"]);
    let ctx = TestContext::new();
    let doc = ctx.write("doc.md", "About the quokka.\n");
    ctx.add_resource(&doc, "shelf://local/doc.md");
    let conn = ctx.open_db();
    for step in downgrades_to(version) {
        conn.execute_batch(step).expect("go back a version");
    }
    drop(conn);
    let stderr = ctx.fails(&["serve"]);
    assert!(
        stderr.contains(&format!("schema version {version}, older")),
        "{stderr}"
    );
    assert!(stderr.contains("stats"), "{stderr}");
    ctx.ok(&["stats"]);
    assert_eq!(ctx.query::<i64>("PRAGMA user_version"), SCHEMA_VERSION_NOW);
    assert_eq!(schema_of(&ctx), schema_of(&fresh));
    // Every completion table has its index stored by the migration, at its version.
    assert_eq!(
        ctx.query::<i64>(
            "SELECT count(*) FROM completion_tables JOIN completion_indexes
             ON table_id = id AND completion_indexes.version = completion_tables.version"
        ),
        ctx.query::<i64>("SELECT count(*) FROM completion_tables"),
    );
    // What was stored before the migration is indexed by it.
    let hits = ctx.json(&["search", "quokka", "--json"]);
    assert_eq!(hits[0]["key"], "shelf://local/doc.md", "{hits}");
    let prompts: i64 = ctx.query("SELECT count(*) FROM prompts");
    let resources: i64 = ctx.query("SELECT count(*) FROM resources");
    let mut server = ctx.server();
    let discovered = server.modern("server/discover", json!({}));
    let instructions = discovered["result"]["instructions"]
        .as_str()
        .unwrap_or_else(|| panic!("no instructions: {discovered}"));
    assert!(
        instructions.contains(&format!(
            "{prompts} prompt templates and {resources} reference documents"
        )),
        "{instructions}"
    );
    let read = server.modern("resources/read", json!({"uri": "shelf://search/quokka"}));
    let text = read["result"]["contents"][0]["text"].as_str().unwrap_or("");
    assert!(text.contains("(shelf://local/doc.md)"), "{read}");
    assert_eq!(server.close(), Some(0));
}

#[test]
fn a_version_1_database_is_migrated_by_a_command_and_then_served() {
    migrated_by_a_command_and_served(1);
}

#[test]
fn a_version_2_database_is_migrated_by_a_command_and_then_served() {
    migrated_by_a_command_and_served(2);
}

#[test]
fn a_version_3_database_is_migrated_by_a_command_and_then_served() {
    migrated_by_a_command_and_served(3);
}

#[test]
fn a_version_4_database_is_migrated_by_a_command_and_then_served() {
    migrated_by_a_command_and_served(4);
}

#[test]
fn a_version_5_database_is_migrated_by_a_command_and_then_served() {
    migrated_by_a_command_and_served(5);
}

#[test]
fn a_version_6_database_is_migrated_by_a_command_and_then_served() {
    migrated_by_a_command_and_served(6);
}

#[test]
fn a_version_7_database_is_migrated_by_a_command_and_then_served() {
    migrated_by_a_command_and_served(7);
}

#[test]
fn a_version_8_database_is_migrated_by_a_command_and_then_served() {
    migrated_by_a_command_and_served(8);
}

#[test]
fn a_version_9_database_is_migrated_by_a_command_and_then_served() {
    migrated_by_a_command_and_served(9);
}

#[test]
fn a_version_10_database_is_migrated_by_a_command_and_then_served() {
    migrated_by_a_command_and_served(10);
}

#[test]
fn a_version_11_database_is_migrated_by_a_command_and_then_served() {
    migrated_by_a_command_and_served(11);
}

/// Version 9's search index kept a copy of every text it indexed; the migration to 10 drops
/// it and gives its pages back to the disk, so the file shrinks by about the library's text.
#[test]
fn migrating_from_version_9_gives_the_search_indexs_copy_of_the_text_back_to_the_disk() {
    const DOCUMENTS: usize = 200;
    let ctx = TestContext::new();
    let mut text_bytes = 0;
    for n in 0..DOCUMENTS {
        // Distinct text, about 4 KB a document: numbered words, so no two are alike.
        let body: String = (0..400).map(|word| format!("w{n}x{word} ")).collect();
        text_bytes += body.len();
        ctx.write(&format!("pages/page-{n}.md"), body);
    }
    ctx.ok(&["import", ctx.path("pages").to_str().expect("a UTF-8 path")]);
    let conn = ctx.open_db();
    for step in downgrades_to(9) {
        conn.execute_batch(step).expect("go back a version");
    }
    conn.execute_batch("VACUUM").expect("vacuum");
    drop(conn);
    let before = std::fs::metadata(&ctx.db).expect("the database").len();
    ctx.ok(&["stats"]);
    assert_eq!(ctx.query::<i64>("PRAGMA user_version"), SCHEMA_VERSION_NOW);
    let after = std::fs::metadata(&ctx.db).expect("the database").len();
    assert!(
        before - after > (text_bytes as u64) * 9 / 10,
        "{before} bytes before the migration, {after} after, for {text_bytes} bytes of text"
    );
    let hits = ctx.json(&["search", "w7x123", "--json"]);
    assert_eq!(hits[0]["key"], "shelf://pages/page-7.md", "{hits}");
    assert_eq!(ctx.query::<i64>("PRAGMA freelist_count"), 0);
}

/// Resources' contents are stored packed (LZ4) when that saves space: the markdown of the
/// public collections under tests/fixtures/collections, imported as documents, takes well
/// under three quarters of its bytes in `blobs`; every document reads back byte for byte and
/// is found by its words. Taken back to version 12 (every content as it is) and migrated
/// again, the same holds and the file shrinks.
#[test]
fn contents_are_stored_packed_read_back_whole_and_a_version_12_library_is_packed_by_its_migration()
{
    let ctx = TestContext::new();
    let mut documents = Vec::new();
    let mut folders = vec![crate::collections_real::fixture("")];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).expect("read a fixture folder") {
            let path = entry.expect("a fixture entry").path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|ext| ext == "md") {
                let text = std::fs::read_to_string(&path).expect("a fixture's text");
                let name = format!("doc-{}.md", documents.len());
                ctx.write(&format!("docs/{name}"), &text);
                documents.push((format!("shelf://docs/{name}"), text));
            }
        }
    }
    assert!(documents.len() >= 30, "{} documents", documents.len());
    ctx.ok(&["import", ctx.path("docs").to_str().expect("a UTF-8 path")]);
    let stored = |ctx: &TestContext| -> (i64, i64, i64) {
        ctx.open_db()
            .query_row(
                "SELECT count(*) FILTER (WHERE packing = 1), sum(length(data)), sum(size)
                 FROM blobs WHERE hash IN (SELECT blob_hash FROM resources WHERE collection = 'docs')",
                [],
                |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
            )
            .expect("the documents' blobs")
    };
    // Each document as served: its file's text after the front matter, which import keeps
    // as the resource's metadata.
    let read_all = |ctx: &TestContext| -> Vec<String> {
        let mut server = ctx.server();
        let texts: Vec<String> = documents
            .iter()
            .map(|(uri, text)| {
                let read = server.modern("resources/read", json!({"uri": uri}));
                let served = read["result"]["contents"][0]["text"]
                    .as_str()
                    .unwrap_or_else(|| panic!("{uri}: {read}"))
                    .to_string();
                assert!(
                    text.ends_with(&served) && !served.is_empty(),
                    "{uri}: {read}"
                );
                served
            })
            .collect();
        let hits = ctx.json(&["search", "refactoring", "--collection", "docs", "--json"]);
        assert!(
            hits.as_array().is_some_and(|hits| !hits.is_empty()),
            "{hits}"
        );
        texts
    };
    let (packed, data, size) = stored(&ctx);
    assert!(
        packed as usize > documents.len() / 2 && data * 4 < size * 3,
        "{packed} of {} packed, {data} bytes stored for {size}",
        documents.len()
    );
    let served = read_all(&ctx);
    let conn = ctx.open_db();
    for step in downgrades_to(12) {
        conn.execute_batch(step).expect("go back a version");
    }
    conn.execute_batch("VACUUM").expect("vacuum");
    let as_they_are: (i64, i64) = conn
        .query_row(
            "SELECT sum(length(data)), sum(size) FROM blobs
             WHERE hash IN (SELECT blob_hash FROM resources WHERE collection = 'docs')",
            [],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .expect("the documents' blobs at version 12");
    assert_eq!(
        as_they_are,
        (size, size),
        "version 12 stores contents as they are"
    );
    drop(conn);
    let before = std::fs::metadata(&ctx.db).expect("the database").len();
    ctx.ok(&["stats"]);
    assert_eq!(ctx.query::<i64>("PRAGMA user_version"), SCHEMA_VERSION_NOW);
    let after = std::fs::metadata(&ctx.db).expect("the database").len();
    assert_eq!(stored(&ctx), (packed, data, size));
    assert!(
        after < before,
        "{before} bytes before the migration, {after} after"
    );
    assert_eq!(read_all(&ctx), served);
}

#[test]
fn backup_copies_the_library_whole_while_a_server_serves_it_and_never_overwrites() {
    let ctx = TestContext::new();
    ctx.ok(&["init"]);
    let mut server = ctx.server();
    server.initialize(crate::common::LEGACY[0]);
    let copy = ctx.path("copies/library-copy.db");
    std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
    let said = ctx.ok(&["backup", &copy.display().to_string()]);
    assert!(said.contains("backed up "), "{said}");
    // The server still answers, and the copy is a library of its own with the same items.
    let listed = server.request("prompts/list", serde_json::json!({}));
    assert!(
        listed["result"]["prompts"]
            .as_array()
            .is_some_and(|p| p.len() == 8),
        "{listed}"
    );
    assert_eq!(
        crate::common::ok_on(&copy, &["prompt", "list"]),
        ctx.ok(&["prompt", "list"])
    );
    let checked: String = crate::common::open_library(&copy)
        .query_row("PRAGMA integrity_check", [], |row| row.get(0))
        .unwrap();
    assert_eq!(checked, "ok");
    // Nothing half-made is left beside it, and a second backup to it is refused.
    let beside: Vec<_> = std::fs::read_dir(copy.parent().unwrap())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(beside, ["library-copy.db"]);
    let stderr = ctx.fails(&["backup", &copy.display().to_string()]);
    assert!(
        stderr.contains("exists already; give a new file (a backup never overwrites one)"),
        "{stderr}"
    );
}
