//! Curating collections and hand-added items: what `import` records of a collection,
//! `collection list` and `collection rm`, and `prompt mv` and `resource mv`.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};

use crate::common::{TestContext, describe, snapshot};

/// The clock every command of these tests runs on (2026-01-02 03:04:05.678 UTC).
const NOW_MS: i64 = 1_767_323_045_678;

/// `promptshelf --db DB ARGS` on the pinned clock.
fn run(ctx: &TestContext, args: &[&str]) -> Output {
    ctx.command(args)
        .env("PROMPTSHELF_NOW_MS", NOW_MS.to_string())
        .output()
        .expect("run promptshelf")
}

fn ok(ctx: &TestContext, args: &[&str]) -> String {
    let output = run(ctx, args);
    assert!(
        output.status.success(),
        "{}",
        describe(args, &output, "expected success")
    );
    String::from_utf8(output.stdout).expect("UTF-8")
}

fn json(ctx: &TestContext, args: &[&str]) -> Value {
    let stdout = ok(ctx, args);
    serde_json::from_str(&stdout)
        .unwrap_or_else(|err| panic!("promptshelf {args:?} printed no JSON ({err}):\n{stdout}"))
}

/// Runs and expects exit status 1; returns stderr.
fn fails(ctx: &TestContext, args: &[&str]) -> String {
    let output = run(ctx, args);
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}",
        describe(args, &output, "expected exit status 1")
    );
    String::from_utf8(output.stderr).expect("UTF-8")
}

fn path_arg(path: &Path) -> &str {
    path.to_str().expect("UTF-8 path")
}

/// Two folders: `alpha` (a prompt and a document) and `beta` (a prompt, two documents).
fn two_folders(ctx: &TestContext) -> (PathBuf, PathBuf) {
    ctx.write(
        "alpha/ask.prompt.md",
        "---\narguments:\n  - name: question\n---\nAnswer {{ question }}\n",
    );
    ctx.write("alpha/guide.md", "# Alpha guide\n\nHow alpha works.\n");
    ctx.write("beta/plan.prompt.md", "Make a plan.\n");
    ctx.write("beta/one.md", "# One\n");
    ctx.write("beta/two.txt", "two\n");
    (
        ctx.path("alpha").canonicalize().expect("alpha"),
        ctx.path("beta").canonicalize().expect("beta"),
    )
}

fn collection<'a>(list: &'a Value, name: &str) -> &'a Value {
    list.as_array()
        .expect("an array")
        .iter()
        .find(|entry| entry["name"] == name)
        .unwrap_or_else(|| panic!("no collection {name} in {list:#}"))
}

#[test]
fn collection_list_shows_each_imported_folder_with_its_items_and_last_import() {
    let ctx = TestContext::new();
    let (alpha, beta) = two_folders(&ctx);
    ok(&ctx, &["import", path_arg(&alpha)]);
    ok(&ctx, &["import", path_arg(&beta), "--collection", "team"]);

    let list = json(&ctx, &["collection", "list", "--json"]);
    assert_eq!(
        collection(&list, "alpha"),
        &json!({
            "name": "alpha",
            "source": path_arg(&alpha),
            "seed": false,
            "prompts": 1,
            "resources": 1,
            "templates": 1,
            "importedAtMs": NOW_MS,
            "importedAt": "2026-01-02T03:04:05.678Z",
        })
    );
    let team = collection(&list, "team");
    assert_eq!(team["source"], path_arg(&beta));
    assert_eq!(
        (&team["prompts"], &team["resources"], &team["templates"]),
        (&json!(1), &json!(2), &json!(1))
    );
    // The seed's collection has items and no folder: it is the built-in seed, recorded when
    // the library was made (by the first command, on the pinned clock).
    let seed = collection(&list, "library");
    assert_eq!(
        (&seed["source"], &seed["seed"], &seed["importedAtMs"]),
        (&Value::Null, &json!(true), &json!(NOW_MS))
    );
    assert!(seed["prompts"].as_u64().expect("a count") > 0, "{seed}");
    let names: Vec<&str> = list
        .as_array()
        .expect("an array")
        .iter()
        .map(|entry| entry["name"].as_str().expect("a name"))
        .collect();
    assert_eq!(names, ["alpha", "library", "team"], "sorted by name");

    let text = ok(&ctx, &["collection", "list"]);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0].split_whitespace().collect::<Vec<_>>(),
        [
            "NAME",
            "PROMPTS",
            "RESOURCES",
            "TEMPLATES",
            "LAST",
            "IMPORT",
            "SOURCE"
        ],
        "{text}"
    );
    let row = |name: &str| -> Vec<&str> {
        lines
            .iter()
            .find(|line| line.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no row {name}:\n{text}"))
            .split_whitespace()
            .collect()
    };
    assert_eq!(
        row("alpha"),
        [
            "alpha",
            "1",
            "1",
            "1",
            "2026-01-02",
            "03:04:05",
            "UTC",
            path_arg(&alpha)
        ]
    );
    assert_eq!(
        row("team"),
        [
            "team",
            "1",
            "2",
            "1",
            "2026-01-02",
            "03:04:05",
            "UTC",
            path_arg(&beta)
        ]
    );
    assert_eq!(
        row("library")[4..],
        ["2026-01-02", "03:04:05", "UTC", "(built-in", "seed)"]
    );
}

#[test]
fn an_import_records_its_folder_once_and_a_dry_run_records_nothing() {
    let ctx = TestContext::new();
    let (alpha, _) = two_folders(&ctx);
    // The seed's own row aside.
    let rows = |ctx: &TestContext| -> i64 {
        ctx.query("SELECT count(*) FROM collections WHERE name <> 'library'")
    };
    ok(&ctx, &["import", path_arg(&alpha), "--dry-run"]);
    assert_eq!(rows(&ctx), 0, "a dry run records no collection");

    ok(&ctx, &["import", path_arg(&alpha)]);
    assert_eq!(rows(&ctx), 1);
    // An import that changes nothing writes nothing, the collection's row included.
    let before = snapshot(&ctx.db);
    ctx.ok(&["import", path_arg(&alpha)]);
    assert_eq!(snapshot(&ctx.db), before);

    // The same collection from another folder: the row follows it, though no item changed.
    let copy = ctx.path("copy");
    std::fs::create_dir_all(&copy).expect("copy folder");
    for file in ["ask.prompt.md", "guide.md"] {
        std::fs::copy(alpha.join(file), copy.join(file)).expect("copy a file");
    }
    let copy = copy.canonicalize().expect("copy");
    let stdout = ctx.ok(&["import", path_arg(&copy), "--collection", "alpha"]);
    assert!(
        stdout.contains("added 0, updated 0, unchanged 2"),
        "{stdout}"
    );
    let source: String = ctx.query("SELECT source FROM collections WHERE name = 'alpha'");
    assert_eq!(source, path_arg(&copy));
    let at: i64 = ctx.query("SELECT imported_at FROM collections WHERE name = 'alpha'");
    assert_ne!(at, NOW_MS, "recorded on the real clock this time");

    // An import that fails writes nothing, the row included.
    ctx.write("copy/broken.prompt.md", "---\nname: [\n---\nx\n");
    let before = snapshot(&ctx.db);
    fails(&ctx, &["import", path_arg(&copy), "--collection", "alpha"]);
    ctx.fails(&["import", path_arg(&copy), "--collection", "other"]);
    assert_eq!(snapshot(&ctx.db), before);
}

#[test]
fn collection_rm_removes_its_items_and_row_in_one_go() {
    let ctx = TestContext::new();
    let (alpha, beta) = two_folders(&ctx);
    ok(&ctx, &["import", path_arg(&alpha)]);
    ok(&ctx, &["import", path_arg(&beta), "--collection", "team"]);
    let changes_before: i64 = ctx.query("SELECT count(*) FROM change_log");

    let removed = json(&ctx, &["collection", "rm", "team", "--json"]);
    assert_eq!(
        removed,
        json!({"action": "removed", "kind": "collection", "key": "team",
               "prompts": 1, "resources": 2, "templates": 1})
    );
    let prompts = ctx.ok(&["prompt", "list"]);
    assert!(
        !prompts.contains("plan") && prompts.contains("ask"),
        "{prompts}"
    );
    let resources = ctx.ok(&["resource", "list"]);
    assert!(!resources.contains("shelf://team/"), "{resources}");
    assert!(resources.contains("shelf://alpha/guide.md"), "{resources}");
    let templates = ctx.ok(&["template", "list"]);
    assert!(!templates.contains("shelf://team/"), "{templates}");
    assert_eq!(
        ctx.query::<i64>("SELECT count(*) FROM collections WHERE name = 'team'"),
        0
    );
    // Every removal is in the change log, for a running server to notify.
    let logged: i64 = ctx.query("SELECT count(*) FROM change_log WHERE op = 'delete'");
    assert_eq!(logged, 4);
    assert_eq!(
        ctx.query::<i64>("SELECT count(*) FROM change_log") - changes_before,
        4
    );
    // Contents that neither a resource nor a kept version holds any more are gone.
    assert_eq!(
        ctx.query::<i64>(
            "SELECT count(*) FROM blobs WHERE hash NOT IN (SELECT blob_hash FROM resources)
             AND hash NOT IN (SELECT content FROM versions WHERE content IS NOT NULL)"
        ),
        0
    );
    // The folder is left alone.
    assert!(beta.join("plan.prompt.md").is_file());

    let text = ok(&ctx, &["collection", "rm", "alpha"]);
    assert_eq!(
        text.trim(),
        "removed collection alpha: 1 prompt, 1 resource, 1 template (its folder is left as it is)"
    );

    let before = snapshot(&ctx.db);
    let unknown = fails(&ctx, &["collection", "rm", "teem"]);
    assert!(
        unknown.contains("unknown collection 'teem'; known collections: library"),
        "{unknown}"
    );
    assert_eq!(snapshot(&ctx.db), before);
    let usage = ctx.run(&["collection", "rm"]);
    assert_eq!(
        usage.status.code(),
        Some(2),
        "a missing NAME is a usage error"
    );
}

#[test]
fn prompt_mv_renames_a_prompt_added_by_hand() {
    let ctx = TestContext::new();
    let file = ctx.write(
        "greet.prompt.md",
        "---\narguments:\n  - name: who\n---\nHello {{ who }}\n",
    );
    ctx.ok(&["prompt", "add", path_arg(&file)]);
    let seq: i64 = ctx.query("SELECT max(seq) FROM change_log");

    let moved = json(&ctx, &["prompt", "mv", "greet", "welcome", "--json"]);
    assert_eq!(
        moved,
        json!({"action": "renamed", "kind": "prompt", "key": "welcome", "from": "greet"})
    );
    let rendered = ctx.ok(&["prompt", "render", "welcome", "--arg", "who=Ada"]);
    assert!(rendered.contains("Hello Ada"), "{rendered}");
    ctx.fails(&["prompt", "show", "greet"]);
    // A host learns that the old name is gone and the new one is there.
    let logged: Vec<(String, String)> = ctx
        .open_db()
        .prepare(&format!(
            "SELECT op, key FROM change_log WHERE seq > {seq} ORDER BY seq"
        ))
        .expect("prepare")
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows");
    assert_eq!(
        logged,
        [
            ("delete".to_string(), "greet".to_string()),
            ("insert".to_string(), "welcome".to_string())
        ]
    );
    let said = ctx.ok(&["prompt", "mv", "welcome", "hello/there"]);
    assert_eq!(said.trim(), "renamed prompt welcome to hello/there");
}

#[test]
fn prompt_mv_refuses_a_taken_or_bad_name_and_a_collection_prompt() {
    let ctx = TestContext::new();
    let (alpha, _) = two_folders(&ctx);
    ok(&ctx, &["import", path_arg(&alpha)]);
    let file = ctx.write("mine.prompt.md", "Mine.\n");
    ctx.ok(&["prompt", "add", path_arg(&file)]);
    let before = snapshot(&ctx.db);

    let taken = fails(&ctx, &["prompt", "mv", "mine", "ask"]);
    assert!(
        taken.contains("there is a prompt 'ask' already")
            && taken.contains("`promptshelf prompt rm ask`"),
        "{taken}"
    );
    let bad = fails(&ctx, &["prompt", "mv", "mine", "two words"]);
    assert!(
        bad.contains("prompt name 'two words' must be letters, digits"),
        "{bad}"
    );
    let same = fails(&ctx, &["prompt", "mv", "mine", "mine"]);
    assert!(same.contains("is the prompt's name already"), "{same}");
    let unknown = fails(&ctx, &["prompt", "mv", "mien", "other"]);
    assert!(unknown.contains("unknown prompt 'mien'"), "{unknown}");

    let imported = fails(&ctx, &["prompt", "mv", "ask", "question"]);
    let file = alpha.join("ask.prompt.md");
    assert!(
        imported.contains("prompt 'ask' belongs to the collection 'alpha'")
            && imported.contains(&format!(
                "to name it 'question', for {}: give it another `name:` in its front matter",
                file.display()
            ))
            && imported.contains(&format!(
                "`promptshelf import {} --collection alpha --prune`",
                alpha.display()
            )),
        "{imported}"
    );
    // The seed's collection has no recorded folder: the message says how to get one.
    let seed = fails(&ctx, &["prompt", "mv", "code-review", "review"]);
    assert!(
        seed.contains("prompt 'code-review' belongs to the collection 'library'")
            && seed.contains(
                "to name it 'review', for prompts/code-review.prompt.md: give it another \
                 `name:` in its front matter"
            )
            && seed.contains("in the folder it was imported from (not recorded")
            && seed.contains("`promptshelf export DIR --collection library`"),
        "{seed}"
    );
    assert_eq!(snapshot(&ctx.db), before, "nothing was written");
}

#[test]
fn resource_mv_renames_a_resource_added_by_hand_and_names_what_still_refers_to_it() {
    let ctx = TestContext::new();
    let notes = ctx.write("notes.md", "# Notes\n\nThe notes.\n");
    ctx.ok(&["resource", "add", path_arg(&notes)]);
    let user = ctx.write(
        "use.prompt.md",
        "Read this:\n\n{{ embed(\"shelf://local/notes.md\") }}\n",
    );
    ctx.ok(&["prompt", "add", path_arg(&user)]);

    let output = run(
        &ctx,
        &[
            "resource",
            "mv",
            "shelf://local/notes.md",
            "shelf://local/journal.md",
            "--json",
        ],
    );
    assert!(
        output.status.success(),
        "{}",
        describe(&["resource", "mv"], &output, "expected success")
    );
    let moved: Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(
        moved,
        json!({"action": "renamed", "kind": "resource", "key": "shelf://local/journal.md",
               "from": "shelf://local/notes.md",
               "referredBy": [{"kind": "prompt", "key": "use"}]})
    );
    let stderr = String::from_utf8(output.stderr).expect("UTF-8");
    assert!(
        stderr.contains(
            "warning: prompt use still refers to shelf://local/notes.md, which is gone now; \
             change it to shelf://local/journal.md"
        ),
        "{stderr}"
    );
    let content = ctx.ok(&["resource", "cat", "shelf://local/journal.md"]);
    assert_eq!(content, "# Notes\n\nThe notes.\n");
    let shown = ctx.json(&["resource", "show", "shelf://local/journal.md", "--json"]);
    assert_eq!(
        (&shown["name"], &shown["mimeType"]),
        (&json!("journal.md"), &json!("text/markdown")),
        "the name that was the file name follows the URI"
    );
    ctx.fails(&["resource", "show", "shelf://local/notes.md"]);

    // Nothing refers to this URI: no warning; and the text form.
    let output = run(
        &ctx,
        &["resource", "mv", "shelf://local/journal.md", "docs://diary"],
    );
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).trim(),
        "renamed resource shelf://local/journal.md to docs://diary"
    );
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "",
        "the prompt names the first URI, not this one"
    );
}

#[test]
fn resource_mv_refuses_a_taken_or_bad_uri_and_a_collection_resource() {
    let ctx = TestContext::new();
    let (alpha, _) = two_folders(&ctx);
    ok(&ctx, &["import", path_arg(&alpha)]);
    let a = ctx.write("a.md", "# A\n");
    let b = ctx.write("b.md", "# B\n");
    ctx.ok(&["resource", "add", path_arg(&a)]);
    ctx.ok(&["resource", "add", path_arg(&b)]);
    let before = snapshot(&ctx.db);

    let taken = fails(
        &ctx,
        &["resource", "mv", "shelf://local/a.md", "shelf://local/b.md"],
    );
    assert!(
        taken.contains("there is a resource shelf://local/b.md already"),
        "{taken}"
    );
    let bad = fails(&ctx, &["resource", "mv", "shelf://local/a.md", "not a uri"]);
    assert!(
        bad.contains("the new URI 'not a uri' is not a valid URI"),
        "{bad}"
    );
    let imported = fails(
        &ctx,
        &[
            "resource",
            "mv",
            "shelf://alpha/guide.md",
            "shelf://local/g.md",
        ],
    );
    assert!(
        imported.contains("resource shelf://alpha/guide.md belongs to the collection 'alpha'")
            && imported.contains(&format!(
                "rename the file {}",
                alpha.join("guide.md").display()
            )),
        "{imported}"
    );
    let unknown = fails(
        &ctx,
        &["resource", "mv", "shelf://local/c.md", "shelf://x/y"],
    );
    assert!(
        unknown.contains("unknown resource 'shelf://local/c.md'"),
        "{unknown}"
    );
    assert_eq!(snapshot(&ctx.db), before, "nothing was written");
}
