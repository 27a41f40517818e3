//! The history: every write's versions of the items it changed, `history`, `diff`,
//! `rollback` and `undo` over the real binary and the SQLite file, and a running server that
//! announces an undo like any other write.

use serde_json::{Value, json};

use crate::common::{Server, TestContext, downgrades_to};

fn greet(ctx: &TestContext, line: &str) -> String {
    let file = ctx.write(
        "greet.prompt.md",
        format!("---\ndescription: Says hello.\n---\n{line}\n"),
    );
    file.display().to_string()
}

fn versions(ctx: &TestContext, key: &str) -> Vec<Value> {
    ctx.json(&["history", key, "--json"])
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn rendered(ctx: &TestContext, name: &str) -> String {
    ctx.ok(&["prompt", "render", name])
}

#[test]
fn history_diff_and_rollback_follow_a_prompt_through_its_versions() {
    let ctx = TestContext::new();
    let file = greet(&ctx, "Hello there.");
    ctx.ok(&["prompt", "add", &file]);
    greet(&ctx, "Hello, dear reader.");
    ctx.ok(&["prompt", "add", &file]);
    greet(&ctx, "Good morning.");
    ctx.ok(&["prompt", "add", &file]);
    // An unchanged add is no version.
    ctx.ok(&["prompt", "add", &file]);

    let kept = versions(&ctx, "greet");
    let changes: Vec<&str> = kept
        .iter()
        .map(|v| v["change"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(changes, ["updated", "updated", "added"], "{kept:?}");
    let numbers: Vec<i64> = kept
        .iter()
        .map(|v| v["version"].as_i64().unwrap_or(0))
        .collect();
    assert!(
        numbers.windows(2).all(|pair| pair[0] > pair[1]),
        "newest first: {numbers:?}"
    );
    assert_eq!(
        kept[0]["by"],
        format!("promptshelf prompt add {file}"),
        "what wrote it, without --db"
    );
    assert_eq!(kept[0]["kind"], "prompt");

    let diff = ctx.ok(&["diff", "greet"]);
    assert!(
        diff.contains(&format!("--- greet (version {})", numbers[1]))
            && diff.contains(&format!("+++ greet (version {})", numbers[0]))
            && diff.contains("\n-Hello, dear reader.\n+Good morning.\n"),
        "{diff}"
    );
    let (oldest, newest) = (numbers[2].to_string(), numbers[0].to_string());
    let wide = ctx.ok(&["diff", "greet", &oldest, &newest]);
    assert!(wide.contains("\n-Hello there.\n+Good morning.\n"), "{wide}");
    let unknown = ctx.fails(&["diff", "greet", "999999"]);
    assert!(
        unknown.contains("has no version 999999") && unknown.contains("history greet"),
        "{unknown}"
    );

    let rolled = ctx.json(&["rollback", "greet", "--to", &oldest, "--json"]);
    assert_eq!(
        rolled,
        json!({"kind": "prompt", "key": "greet", "to": numbers[2]})
    );
    assert!(rendered(&ctx, "greet").contains("Hello there."));
    let after = versions(&ctx, "greet");
    assert_eq!(after.len(), 4);
    assert_eq!(
        after[0]["by"],
        format!("promptshelf rollback greet --to {oldest} --json")
    );
    assert_eq!(
        after[0]["contentHash"], kept[2]["contentHash"],
        "the same content again"
    );

    let none = ctx.fails(&["history", "no-such-thing"]);
    assert!(none.contains("keeps nothing named no-such-thing"), "{none}");
}

#[test]
fn undo_goes_back_one_write_at_a_time_removals_included() {
    let ctx = TestContext::new();
    let file = greet(&ctx, "Hello there.");
    ctx.ok(&["prompt", "add", &file]);
    greet(&ctx, "Good morning.");
    ctx.ok(&["prompt", "add", &file]);
    let note = ctx.write("note.md", "First words.\n");
    ctx.add_resource(&note, "shelf://local/note.md");
    ctx.ok(&["prompt", "rm", "greet"]);

    let undone = ctx.json(&["undo", "--json"]);
    assert_eq!(undone["what"], "promptshelf prompt rm greet", "{undone}");
    assert_eq!(undone["items"], json!([{"kind": "prompt", "key": "greet"}]));
    assert!(rendered(&ctx, "greet").contains("Good morning."));

    let line = ctx.ok(&["undo"]);
    assert!(
        line.contains("resource add") && line.contains("1 item back as it was"),
        "{line}"
    );
    assert!(
        ctx.fails(&["resource", "cat", "shelf://local/note.md"])
            .contains("shelf://local/note.md")
    );

    ctx.ok(&["undo"]);
    assert!(rendered(&ctx, "greet").contains("Hello there."));
    ctx.ok(&["undo"]);
    assert!(!ctx.ok(&["prompt", "list"]).contains("greet"));
    // The seed's write is next, and then there is nothing left to undo.
    let seed = ctx.json(&["undo", "--json"]);
    assert_eq!(seed["what"], "seed");
    assert_eq!(seed["collections"], json!(["library"]));
    assert_eq!(ctx.ok(&["prompt", "list"]).trim(), "");
    assert_eq!(collection_names(&ctx), Vec::<String>::new());
    let nothing = ctx.fails(&["undo"]);
    assert!(nothing.contains("nothing to undo"), "{nothing}");
}

#[test]
fn keep_bounds_the_versions_and_a_binary_s_content_lives_as_long_as_one_holds_it() {
    let ctx = TestContext::new();
    ctx.ok(&["stats"]);
    let uri = "shelf://local/dot.png";
    // The image's content, then `resource add` of it keeping two versions.
    let keep_two = |content: &[u8]| {
        let image = ctx.write("dot.png", content);
        let image = image.display().to_string();
        ctx.ok(&["--keep", "2", "resource", "add", &image, "--uri", uri]);
    };
    let first = [0x89, b'P', b'N', b'G', 1, 2, 3];
    keep_two(&first);
    keep_two(&[0x89, b'P', b'N', b'G', 4, 5, 6]);
    let blobs = |bytes: &[u8]| -> i64 {
        ctx.open_db()
            .query_row(
                "SELECT count(*) FROM blobs WHERE data = ?1",
                [bytes],
                |row| row.get(0),
            )
            .expect("count blobs")
    };
    // The first content is no resource's any more, but a kept version holds it.
    assert_eq!(blobs(&first), 1);
    let oldest = versions(&ctx, uri)[1]["version"]
        .as_i64()
        .expect("a version");
    ctx.ok(&["rollback", uri, "--to", &oldest.to_string()]);
    let cat = ctx.run(&["resource", "cat", uri]);
    assert_eq!(cat.stdout, first, "the binary comes back byte for byte");
    // A third content with --keep 2 keeps two versions: the rollback's (the first content)
    // and the new one. The second content, which only a dropped version held, goes.
    keep_two(&[0x89, b'P', b'N', b'G', 7, 8, 9]);
    assert_eq!(versions(&ctx, uri).len(), 2);
    assert_eq!(
        blobs(&[0x89, b'P', b'N', b'G', 4, 5, 6]),
        0,
        "no version holds it"
    );
    assert_eq!(blobs(&first), 1, "the rolled-back version holds it");
}

/// The names `collection list` lists.
fn collection_names(ctx: &TestContext) -> Vec<String> {
    ctx.json(&["collection", "list", "--json"])
        .as_array()
        .expect("an array")
        .iter()
        .map(|entry| entry["name"].as_str().expect("a name").to_string())
        .collect()
}

#[test]
fn undo_of_the_import_that_made_a_collection_removes_its_record_too() {
    let ctx = TestContext::new();
    ctx.ok(&["init", "--empty"]);
    ctx.write("team/ask.prompt.md", "Ask.\n");
    let folder = ctx.path("team");
    let folder = folder.to_str().expect("UTF-8");
    ctx.ok(&["import", folder]);
    ctx.write("team/guide.md", "# Guide\n");
    ctx.ok(&["import", folder]);
    assert_eq!(collection_names(&ctx), ["team"]);

    // The second import did not make the collection: its record stays.
    let undone = ctx.json(&["undo", "--json"]);
    assert_eq!(undone["collections"], json!([]), "{undone}");
    assert_eq!(collection_names(&ctx), ["team"]);

    let line = ctx.ok(&["undo"]);
    assert!(
        line.contains("2 items back as they were; it made the collection team, removed too"),
        "{line}"
    );
    assert_eq!(collection_names(&ctx), Vec::<String>::new());
    let rows: i64 = ctx.query("SELECT count(*) FROM collections");
    assert_eq!(rows, 0);
    let marks: i64 = ctx.query("SELECT count(*) FROM meta WHERE key LIKE 'collection-created/%'");
    assert_eq!(marks, 0, "nothing is left of it");

    // Imported again, it is made again, by this import.
    ctx.ok(&["import", folder]);
    assert_eq!(collection_names(&ctx), ["team"]);
    let undone = ctx.json(&["undo", "--json"]);
    assert_eq!(undone["collections"], json!(["team"]), "{undone}");
    assert_eq!(collection_names(&ctx), Vec::<String>::new());
}

#[test]
fn undo_of_an_import_is_one_write_that_a_running_server_announces_once_per_list() {
    let ctx = TestContext::new();
    ctx.ok(&["stats"]);
    let folder = ctx.many_notes();
    ctx.ok(&["import", &folder]);
    let resources: i64 = ctx.query("SELECT count(*) FROM resources");
    let mut server = Server::watched(&ctx.db, &[]);
    server.initialize("2025-06-18");
    let undone = ctx.json(&["undo", "--json"]);
    assert_eq!(undone["what"], format!("promptshelf import {folder}"));
    assert_eq!(
        undone["items"].as_array().map(Vec::len),
        Some(502),
        "500 pages, a prompt, a template"
    );
    let mut methods: Vec<String> = server
        .told_until_now()
        .iter()
        .filter_map(|message| message["method"].as_str().map(str::to_string))
        .collect();
    methods.sort();
    assert_eq!(
        methods,
        [
            "notifications/prompts/list_changed",
            "notifications/resources/list_changed"
        ]
    );
    let left: i64 = ctx.query("SELECT count(*) FROM resources");
    assert_eq!(left, resources - 500);
    let writes: i64 = ctx.query("SELECT count(*) FROM writes WHERE reverts IS NOT NULL");
    assert_eq!(writes, 1, "one write undid it");
    assert_eq!(server.close(), Some(0));
}

#[test]
fn undo_refuses_a_change_whose_earlier_version_was_written_before_history_began() {
    let ctx = TestContext::new();
    let file = greet(&ctx, "Hello there.");
    ctx.ok(&["prompt", "add", &file]);
    // As a database of version 4 had it: items, but no history of them.
    let conn = ctx.open_db();
    for step in downgrades_to(4) {
        conn.execute_batch(step).expect("go back to version 4");
    }
    drop(conn);
    ctx.ok(&["stats"]);
    greet(&ctx, "Good morning.");
    ctx.ok(&["prompt", "add", &file]);
    let refused = ctx.fails(&["undo"]);
    assert!(
        refused.contains("no version of prompt greet from before it is kept"),
        "{refused}"
    );
    assert!(
        rendered(&ctx, "greet").contains("Good morning."),
        "nothing was written"
    );
}

#[test]
fn a_resources_current_version_is_its_row_and_each_change_keeps_what_it_was() {
    let ctx = TestContext::new();
    let uri = "shelf://local/notes.md";
    let add = |text: &str| {
        let file = ctx.write("notes.md", text);
        ctx.ok(&["resource", "add", &file.display().to_string(), "--uri", uri]);
    };
    // Which of the resource's versions, oldest first, keep a snapshot, a content and a
    // content hash of their own.
    let own_snapshots = || -> String {
        ctx.open_db()
            .query_row(
                "SELECT group_concat(change || ':' || (snapshot IS NOT NULL)
                                     || (content IS NOT NULL) || (content_hash IS NOT NULL), ' ')
                 FROM (SELECT * FROM versions WHERE key = ?1 ORDER BY id)",
                [uri],
                |row| row.get(0),
            )
            .expect("the versions")
    };
    let cat = || String::from_utf8_lossy(&ctx.run(&["resource", "cat", uri]).stdout).into_owned();
    add("# Notes\n\nFirst words.\n");
    assert_eq!(own_snapshots(), "added:000", "the row is the version");
    add("# Notes\n\nSecond words.\n");
    assert_eq!(own_snapshots(), "added:111 updated:000");
    let diff = ctx.ok(&["diff", uri]);
    assert!(diff.contains("\n-First words.\n+Second words.\n"), "{diff}");
    let numbers: Vec<String> = versions(&ctx, uri)
        .iter()
        .map(|v| v["version"].to_string())
        .collect();

    // A row changed by another hand (an operator's own SQL) keeps its version as it was.
    let conn = ctx.open_db();
    let title_before: Option<String> = conn
        .query_row("SELECT title FROM resources WHERE uri = ?1", [uri], |row| {
            row.get(0)
        })
        .expect("the title");
    conn.execute(
        "UPDATE resources SET title = 'Renamed by hand' WHERE uri = ?1",
        [uri],
    )
    .expect("a change by hand");
    let kept: (Option<String>, String) = conn
        .query_row(
            "SELECT json_extract(snapshot, '$.info.title'), json_extract(snapshot, '$.info.uri')
             FROM versions WHERE id = ?1",
            [&numbers[0]],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .expect("the version");
    assert_eq!(kept, (title_before, uri.to_string()));
    drop(conn);
    assert_eq!(own_snapshots(), "added:111 updated:111");

    ctx.ok(&["rollback", uri, "--to", &numbers[1]]);
    assert_eq!(cat(), "# Notes\n\nFirst words.\n");
    assert_eq!(own_snapshots(), "added:111 updated:111 updated:000");
    ctx.ok(&["resource", "rm", uri]);
    assert_eq!(
        own_snapshots(),
        "added:111 updated:111 updated:111 removed:000"
    );
    // Every version before the removal still holds its item, as it was written: the
    // change by hand was no version.
    ctx.ok(&["rollback", uri, "--to", &numbers[0]]);
    assert_eq!(cat(), "# Notes\n\nSecond words.\n");
    let show = ctx.json(&["resource", "show", uri, "--json"]);
    assert_eq!(show["title"], "Notes", "{show}");
}
