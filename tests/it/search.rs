//! Full-text search: `promptshelf search` on libraries built with the real CLI (ranking, of
//! broad queries too, filters, JSON, hostile query text, the index following every kind of
//! write, imports of more items than one statement writes among them) and the built-in
//! `shelf://search/{query}` template over the real server in both eras (listed, read,
//! completed), every message validated against the official schema.

use std::path::Path;

use serde_json::{Value, json};

use crate::common::{LEGACY, MODERN, Server, TestContext, validate};

/// A markdown resource whose title and description are given, so that the body's first
/// heading and paragraph (their fallbacks) do not carry its words there too.
fn document(title: &str, description: &str, body: &str) -> String {
    format!("---\ntitle: {title}\ndescription: {description}\n---\n{body}\n")
}

/// A body of ordinary words, the same length for every document, holding `word` once.
fn body_with(word: &str) -> String {
    format!("Some notes about the project and its plans. Later on, {word} comes up once.")
}

const PLAIN: &str = "Some notes about the project and its plans. Later on, nothing comes up.";

fn path_str(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 path")
}

/// The keys (prompt names or resource URIs) `search ARGS --json` finds, best first.
fn keys(ctx: &TestContext, args: &[&str]) -> Vec<String> {
    // `--json` first: after a `--` every argument is search text.
    let mut command = vec!["search", "--json"];
    command.extend_from_slice(args);
    let hits = ctx.json(&command);
    hits.as_array()
        .unwrap_or_else(|| panic!("not an array: {hits}"))
        .iter()
        .map(|hit| hit["key"].as_str().unwrap_or("").to_string())
        .collect()
}

/// The folder `notes` with a prompt and three documents that mention `zyxquux`: in the
/// title, in the description and in the body; only the prompt also says `zyxquuxes`.
fn notes(ctx: &TestContext) {
    ctx.write(
        "notes/in-title.md",
        document("Zyxquux handbook", "How things are done here", PLAIN),
    );
    ctx.write(
        "notes/in-description.md",
        document("Handbook", "All about zyxquux", PLAIN),
    );
    ctx.write(
        "notes/in-body.md",
        document(
            "Other handbook",
            "How other things are done",
            &body_with("zyxquux"),
        ),
    );
    ctx.write(
        "notes/ask.prompt.md",
        "---\ndescription: Ask a question\n---\nAnswer the question about zyxquux.\nMind the zyxquuxes.\n",
    );
    ctx.ok(&["import", path_str(&ctx.path("notes"))]);
}

#[test]
fn a_word_in_a_title_ranks_above_one_in_a_description_above_one_in_a_body() {
    let ctx = TestContext::new();
    notes(&ctx);
    // bm25 weighs a title (and a name) 10, a description 5, a body 1: the same word once,
    // in documents of the same length, ranks them in that order. The prompt's body is
    // short, which bm25 favours over a longer one holding the word as often.
    let found = keys(&ctx, &["zyxquux", "--kind", "resource"]);
    assert_eq!(
        found,
        [
            "shelf://notes/in-title.md",
            "shelf://notes/in-description.md",
            "shelf://notes/in-body.md"
        ]
    );
    let text = ctx.ok(&["search", "zyxquux"]);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines.first().copied(),
        Some("1. resource shelf://notes/in-title.md: Zyxquux handbook"),
        "{text}"
    );
    assert!(text.contains("**Zyxquux**"), "the word is marked: {text}");
    assert!(text.contains("prompt ask"), "{text}");
}

#[test]
fn kind_collection_and_limit_narrow_the_hits() {
    let ctx = TestContext::new();
    notes(&ctx);
    let loose = ctx.write(
        "loose.md",
        document("Loose", "Kept by hand", &body_with("zyxquux")),
    );
    ctx.add_resource(&loose, "shelf://local/loose.md");
    assert_eq!(keys(&ctx, &["zyxquux", "--kind", "prompt"]), ["ask"]);
    let resources = keys(&ctx, &["zyxquux", "--kind", "resource"]);
    assert_eq!(resources.len(), 4, "{resources:?}");
    assert!(resources.iter().all(|key| key.starts_with("shelf://")));
    let in_notes = keys(&ctx, &["zyxquux", "--collection", "notes"]);
    assert_eq!(in_notes.len(), 4, "{in_notes:?}");
    assert!(!in_notes.contains(&"shelf://local/loose.md".to_string()));
    assert_eq!(keys(&ctx, &["zyxquux", "--limit", "2"]).len(), 2);
    assert_eq!(keys(&ctx, &["zyxquux"]).len(), 5);
    let error = ctx.fails(&["search", "zyxquux", "--collection", "nope"]);
    assert!(
        error.contains("unknown collection 'nope'") && error.contains("notes"),
        "{error}"
    );
}

#[test]
fn json_hits_carry_kind_key_title_and_a_marked_snippet() {
    let ctx = TestContext::new();
    notes(&ctx);
    let hits = ctx.json(&["search", "zyxquux", "--json"]);
    let first = &hits[0];
    assert_eq!(first["kind"], "resource");
    assert_eq!(first["key"], "shelf://notes/in-title.md");
    assert_eq!(first["title"], "Zyxquux handbook");
    assert_eq!(first["snippet"], "**Zyxquux** handbook");
    let prompt = hits
        .as_array()
        .expect("an array")
        .iter()
        .find(|hit| hit["kind"] == "prompt")
        .expect("the prompt is found");
    assert_eq!(prompt["key"], "ask");
    assert!(prompt["title"].is_null(), "{prompt}");
    assert!(
        prompt["snippet"]
            .as_str()
            .is_some_and(|snippet| snippet.contains("about **zyxquux**")),
        "{prompt}"
    );
    // No hits: an empty array, and success.
    assert_eq!(ctx.json(&["search", "nothingsuch", "--json"]), json!([]));
    let output = ctx.run(&["search", "nothingsuch"]);
    assert!(output.status.success());
    assert!(output.stdout.is_empty());
    assert!(String::from_utf8_lossy(&output.stderr).contains("nothing in the library matches"));
}

#[test]
fn hostile_query_text_finds_words_or_says_what_to_type() {
    let ctx = TestContext::new();
    notes(&ctx);
    let near = ctx.write("near.md", "Zyxquux is near and far, or not.\n");
    ctx.add_resource(&near, "shelf://local/near.md");
    // Stray punctuation separates words and FTS5's syntax is plain text: these find the
    // documents holding the word.
    for query in [
        "\"zyxquux",
        "zyxquux\"",
        "(zyxquux))",
        "zyxquux:",
        "^zyxquux",
        "-zyxquux",
        "{zyxquux}",
        "zyx*",
        "\"zyxquux handbook\"",
    ] {
        let found = keys(&ctx, &["--", query]);
        assert!(
            found.contains(&"shelf://notes/in-title.md".to_string()),
            "{query}: {found:?}"
        );
    }
    // Operators are words, looked for as any other: only one document says them.
    for query in [
        "NEAR(zyxquux",
        "zyxquux OR",
        "NOT zyxquux",
        "zyxquux AND (near OR not",
    ] {
        assert_eq!(
            keys(&ctx, &["--", query]),
            ["shelf://local/near.md"],
            "{query}"
        );
    }
    assert!(keys(&ctx, &["zyxquux", "OR", "nothingsuch"]).is_empty());
    // A phrase is its words in that order.
    assert!(keys(&ctx, &["\"handbook zyxquux\""]).is_empty());
    // Nothing to look for: a clear error, never FTS5's.
    for query in ["", "*", "()", "\"\"", "- -", "\""] {
        let error = ctx.fails(&["search", "--", query]);
        assert!(
            error.contains("holds no word to look for") && !error.contains("fts5"),
            "{query}: {error}"
        );
    }
}

#[test]
fn the_index_follows_prompt_add_resource_rm_and_imports() {
    let ctx = TestContext::new();
    assert!(keys(&ctx, &["plover"]).is_empty());
    let prompt = ctx.write("bird.prompt.md", "Describe the plover.\n");
    ctx.ok(&["prompt", "add", path_str(&prompt)]);
    assert_eq!(keys(&ctx, &["plover"]), ["bird"]);
    ctx.write("bird.prompt.md", "Describe the heron.\n");
    ctx.ok(&["prompt", "add", path_str(&prompt)]);
    assert!(keys(&ctx, &["plover"]).is_empty());
    assert_eq!(keys(&ctx, &["heron"]), ["bird"]);
    ctx.ok(&["prompt", "rm", "bird"]);
    assert!(keys(&ctx, &["heron"]).is_empty());

    let doc = ctx.write("doc.md", "About the kestrel.\n");
    ctx.add_resource(&doc, "shelf://local/doc.md");
    assert_eq!(keys(&ctx, &["kestrel"]), ["shelf://local/doc.md"]);
    ctx.ok(&["resource", "rm", "shelf://local/doc.md"]);
    assert!(keys(&ctx, &["kestrel"]).is_empty());

    ctx.write("birds/wader.md", "The wombat is no bird.\n");
    ctx.write("birds/gone.md", "The avocet wades.\n");
    ctx.ok(&["import", path_str(&ctx.path("birds"))]);
    assert_eq!(keys(&ctx, &["wombat"]), ["shelf://birds/wader.md"]);
    assert_eq!(keys(&ctx, &["avocet"]), ["shelf://birds/gone.md"]);
    // Re-imported after a change: the old words are gone, the new ones found.
    ctx.write("birds/wader.md", "The numbat is no bird either.\n");
    std::fs::remove_file(ctx.path("birds/gone.md")).expect("remove a file");
    ctx.ok(&["import", path_str(&ctx.path("birds")), "--prune"]);
    assert!(keys(&ctx, &["wombat"]).is_empty());
    assert!(keys(&ctx, &["avocet"]).is_empty());
    assert_eq!(keys(&ctx, &["numbat"]), ["shelf://birds/wader.md"]);
    // The index agrees with what it holds.
    ctx.open_db()
        .execute(
            "INSERT INTO search (search, rank) VALUES ('integrity-check', 1)",
            [],
        )
        .expect("the index is consistent");
}

/// A prompt of several messages, each with a word of its own (`frogN`, `toadN`, `newtN`, and
/// after `change` `eftN` in place of `toadN` and a fourth message with `axolotlN`).
fn talk(n: usize, changed: bool) -> String {
    let (answer, more) = if changed {
        (
            format!("eft{n}"),
            format!("\n<!-- assistant -->\nAnd axolotl{n} last.\n"),
        )
    } else {
        (format!("toad{n}"), String::new())
    };
    format!(
        "---\ndescription: Talk number {n}\n---\nAsk about frog{n}.\n<!-- assistant -->\n\
         I answer {answer}.\n<!-- user -->\nThen newt{n}.\n{more}"
    )
}

/// Checks that every row of the index holds what its item holds now (a prompt's messages in
/// order, a text resource's content), that there is one row per item, and that FTS5's own
/// check of the index against those rows passes.
fn index_is_current(ctx: &TestContext) {
    let db = ctx.open_db();
    let stale: i64 = db
        .query_row(
            "SELECT (SELECT count(*) FROM prompts p LEFT JOIN search s ON s.rowid = -p.id
                     WHERE s.rowid IS NULL OR s.name IS NOT p.name
                        OR s.title IS NOT p.title OR s.description IS NOT p.description
                        OR s.body IS NOT coalesce((SELECT group_concat(body, char(10)
                                                   ORDER BY position)
                                                   FROM prompt_messages
                                                   WHERE prompt_id = p.id), ''))
                  + (SELECT count(*) FROM resources r JOIN blobs b ON b.hash = r.blob_hash
                     LEFT JOIN search s ON s.rowid = r.id
                     WHERE s.rowid IS NULL OR s.name IS NOT r.name OR s.uri IS NOT r.uri
                        OR s.body IS NOT CASE WHEN r.is_text
                                          THEN CAST(unpacked(b.data, b.packing, b.size) AS TEXT) END)
                  + (SELECT count(*) FROM search)
                  - (SELECT count(*) FROM prompts) - (SELECT count(*) FROM resources)",
            [],
            |row| row.get(0),
        )
        .expect("compare the index with the items");
    assert_eq!(
        stale, 0,
        "rows of the index that are not what their items hold"
    );
    db.execute(
        "INSERT INTO search (search, rank) VALUES ('integrity-check', 1)",
        [],
    )
    .expect("the index is consistent");
}

/// More prompts of several messages, and more documents, than one statement inserts
/// (`store::write::ROWS_PER_INSERT`, 256), imported, then imported again with some changed
/// and some gone: every item is found by each of its words, and by no word it lost.
#[test]
fn the_index_follows_an_import_of_many_prompts_and_documents_and_its_changes() {
    const ITEMS: usize = 300;
    let ctx = TestContext::new();
    for n in 0..ITEMS {
        ctx.write(&format!("many/talk-{n}.prompt.md"), talk(n, false));
        ctx.write(
            &format!("many/doc-{n}.md"),
            document(&format!("Page {n}"), "A page", &format!("About heron{n}.")),
        );
    }
    let folder = ctx.path("many");
    ctx.ok(&["import", path_str(&folder)]);
    index_is_current(&ctx);
    for n in [0, 1, 255, 256, 257, ITEMS - 1] {
        let talk = format!("talk-{n}");
        for word in ["frog", "toad", "newt"] {
            assert_eq!(
                keys(&ctx, &[&format!("{word}{n}")]),
                [talk.as_str()],
                "{word}{n}"
            );
        }
        assert_eq!(
            keys(&ctx, &[&format!("heron{n}")]),
            [format!("shelf://many/doc-{n}.md")]
        );
    }
    // Every third prompt and document changed, every fifth gone.
    for n in 0..ITEMS {
        if n % 5 == 0 {
            std::fs::remove_file(ctx.path(&format!("many/talk-{n}.prompt.md"))).expect("remove");
            std::fs::remove_file(ctx.path(&format!("many/doc-{n}.md"))).expect("remove");
        } else if n % 3 == 0 {
            ctx.write(&format!("many/talk-{n}.prompt.md"), talk(n, true));
            ctx.write(
                &format!("many/doc-{n}.md"),
                document(&format!("Page {n}"), "A page", &format!("About egret{n}.")),
            );
        }
    }
    ctx.ok(&["import", path_str(&folder), "--prune"]);
    index_is_current(&ctx);
    for n in [0, 3, 255, 256, 258, 297] {
        let talk = format!("talk-{n}");
        let doc = format!("shelf://many/doc-{n}.md");
        let found = |word: &str| keys(&ctx, &[&format!("{word}{n}")]);
        if n % 5 == 0 {
            for word in ["frog", "toad", "newt", "heron"] {
                assert!(found(word).is_empty(), "{word}{n} of a removed item");
            }
        } else if n % 3 == 0 {
            for word in ["frog", "eft", "newt", "axolotl"] {
                assert_eq!(found(word), [talk.as_str()], "{word}{n}");
            }
            assert!(found("toad").is_empty(), "toad{n} was replaced");
            assert!(found("heron").is_empty(), "heron{n} was replaced");
            assert_eq!(found("egret"), [doc.as_str()]);
        } else {
            for word in ["frog", "toad", "newt"] {
                assert_eq!(found(word), [talk.as_str()], "{word}{n}");
            }
            assert_eq!(found("heron"), [doc.as_str()]);
        }
    }
}

/// The `result` of a response, which must have one.
fn result(response: &Value) -> &Value {
    response
        .get("result")
        .unwrap_or_else(|| panic!("expected a result, got {response}"))
}

/// `resources/templates/list`, read to the end: every URI template listed, in order.
fn every_template(server: &mut Server, ask: fn(&mut Server, &str, Value) -> Value) -> Vec<String> {
    let mut templates = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let params = match &cursor {
            Some(cursor) => json!({"cursor": cursor}),
            None => json!({}),
        };
        let response = ask(server, "resources/templates/list", params);
        let page = result(&response);
        for template in page["resourceTemplates"].as_array().expect("templates") {
            templates.push(template["uriTemplate"].as_str().unwrap_or("").to_string());
        }
        match page.get("nextCursor").and_then(Value::as_str) {
            Some(next) => cursor = Some(next.to_string()),
            None => return templates,
        }
    }
}

/// Lists, reads and completes the search template as `revision` does, through `ask`.
fn search_template_works(
    server: &mut Server,
    revision: &str,
    ask: fn(&mut Server, &str, Value) -> Value,
    stored: &[String],
) {
    let listed = ask(server, "resources/templates/list", json!({}));
    validate(revision, "JSONRPCMessage", &listed);
    validate(revision, "ListResourceTemplatesResult", result(&listed));
    let first = &result(&listed)["resourceTemplates"][0];
    assert_eq!(first["uriTemplate"], "shelf://search/{query}");
    assert_eq!(first["mimeType"], "text/markdown");
    // Every template once, the search template first, then the stored ones in their
    // order, whatever the page size.
    let all = every_template(server, ask);
    assert_eq!(all[0], "shelf://search/{query}");
    assert_eq!(all[1..], *stored);

    let uri = "shelf://search/zyxquux%20handbook";
    let read = ask(server, "resources/read", json!({"uri": uri}));
    validate(revision, "JSONRPCMessage", &read);
    validate(revision, "ReadResourceResult", result(&read));
    let contents = &result(&read)["contents"][0];
    assert_eq!(contents["uri"], uri);
    assert_eq!(contents["mimeType"], "text/markdown");
    let text = contents["text"].as_str().expect("a text listing");
    assert!(text.starts_with("# Search: zyxquux handbook\n"), "{text}");
    assert!(
        text.contains("1. [Zyxquux handbook](shelf://notes/in-title.md) (resource)\n   **Zyxquux** **handbook**"),
        "{text}"
    );
    let nothing = ask(
        server,
        "resources/read",
        json!({"uri": "shelf://search/nothingsuch"}),
    );
    let text = result(&nothing)["contents"][0]["text"]
        .as_str()
        .unwrap_or("");
    assert!(text.contains("Nothing in the library matches"), "{text}");
    let empty = ask(
        server,
        "resources/read",
        json!({"uri": "shelf://search/%28%29"}),
    );
    validate(revision, "JSONRPCMessage", &empty);
    assert_eq!(empty["error"]["code"], -32602, "{empty}");
    assert!(
        empty["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("no word to look for")),
        "{empty}"
    );

    let complete = |server: &mut Server, value: &str| {
        let response = ask(
            server,
            "completion/complete",
            json!({
                "ref": {"type": "ref/resource", "uri": "shelf://search/{query}"},
                "argument": {"name": "query", "value": value}
            }),
        );
        validate(revision, "JSONRPCMessage", &response);
        validate(revision, "CompleteResult", result(&response));
        result(&response)["completion"]["values"].clone()
    };
    assert_eq!(complete(server, "zyxquuxe"), json!(["zyxquuxes"]));
    assert_eq!(
        complete(server, "handbook ZYX"),
        json!(["handbook zyxquux", "handbook zyxquuxes"])
    );
    // Ranked as completions are: the term more items hold first.
    assert_eq!(complete(server, "zyxq"), json!(["zyxquux", "zyxquuxes"]));
}

fn modern(server: &mut Server, method: &str, params: Value) -> Value {
    server.modern(method, params)
}

fn legacy(server: &mut Server, method: &str, params: Value) -> Value {
    server.request(method, params)
}

#[test]
fn the_search_template_is_listed_read_and_completed_in_both_eras() {
    let ctx = TestContext::new();
    notes(&ctx);
    let stored: Vec<String> = ctx
        .json(&["template", "list", "--json"])
        .as_array()
        .expect("an array")
        .iter()
        .map(|template| template["uriTemplate"].as_str().unwrap_or("").to_string())
        .collect();
    assert!(
        stored.contains(&"shelf://notes/{+path}".to_string()),
        "{stored:?}"
    );
    let mut server = Server::start(&ctx.db, &["--page-size", "1"]);
    search_template_works(&mut server, MODERN, modern, &stored);
    assert_eq!(server.close(), Some(0));
    for revision in LEGACY {
        let mut server = Server::start(&ctx.db, &["--page-size", "1"]);
        server.initialize(revision);
        search_template_works(&mut server, revision, legacy, &stored);
        assert_eq!(server.close(), Some(0));
    }
}

#[test]
fn a_search_follows_the_library_tells_its_subscribers_and_its_hint_is_short_after_a_change() {
    let ctx = TestContext::new();
    notes(&ctx);
    let mut server = ctx.server();
    let mut subscriber = Server::watched(&ctx.db, &[]);
    subscriber.initialize("2025-06-18");
    let subscribed = subscriber.request(
        "resources/subscribe",
        json!({"uri": "shelf://search/dingo"}),
    );
    assert!(subscribed.get("result").is_some(), "{subscribed}");
    let read = |server: &mut Server| {
        let response = server.modern("resources/read", json!({"uri": "shelf://search/dingo"}));
        result(&response)["contents"][0]["text"]
            .as_str()
            .unwrap_or("")
            .contains("shelf://notes/dingo.md")
    };
    assert!(!read(&mut server));
    ctx.write("notes/dingo.md", "A dingo was here.\n");
    ctx.ok(&["import", path_str(&ctx.path("notes"))]);
    server.eventually(true, read);
    // The library changed a moment ago: the hint is the shortest there is.
    let response = server.modern("resources/read", json!({"uri": "shelf://search/dingo"}));
    assert_eq!(result(&response)["ttlMs"], 1000, "{response}");
    assert_eq!(server.close(), Some(0));
    // A subscriber to a search is told when the library changes under it.
    let told = subscriber.told_until_now();
    assert!(
        told.iter().any(
            |message| message["method"] == "notifications/resources/updated"
                && message["params"]["uri"] == "shelf://search/dingo"
        ),
        "{told:?}"
    );
    assert_eq!(subscriber.close(), Some(0));
}

/// The folder `shelf` of 1,100 documents whose bodies all say `old lantern` (more items than
/// make a word broad, 1,000), of which only `doc-0600.md` has it in its title; `doc-0042.md`
/// alone also says `quokka`, `doc-0100.md` has `zorbit` in its title and `doc-0200.md` in
/// its body; and a prompt `lamp` that says `old lantern` too.
fn broad_library(ctx: &TestContext) {
    for n in 0..1_100 {
        let title = if n == 600 {
            "Old lantern repair".to_string()
        } else if n == 100 {
            format!("Note {n:04} on zorbit")
        } else {
            format!("Note {n:04}")
        };
        let extra = match n {
            42 => " A quokka was seen.",
            200 => " Then zorbit again.",
            _ => "",
        };
        ctx.write(
            &format!("shelf/doc-{n:04}.md"),
            document(
                &title,
                "Plain notes",
                &format!("Some notes about the old lantern in the shed.{extra}"),
            ),
        );
    }
    ctx.write(
        "shelf/lamp.prompt.md",
        "---\ndescription: Light it\n---\nFetch the old lantern from the shed.\n",
    );
    ctx.ok(&["import", path_str(&ctx.path("shelf"))]);
}

#[test]
fn a_broad_query_ranks_a_title_hit_first_and_narrow_words_by_bm25() {
    let ctx = TestContext::new();
    broad_library(&ctx);
    let title_hit = "shelf://shelf/doc-0600.md";
    // One broad word, a phrase of broad words, prefixes of three and four letters (the
    // first through the prefix index): the title hit leads, then the prompt (a body hit like
    // the other documents, and prompts come first among those).
    for query in ["lantern", "\"old lantern\"", "lan*", "lant*"] {
        let found = keys(&ctx, &["--limit", "5", "--", query]);
        assert_eq!(found.len(), 5, "{query}: {found:?}");
        assert_eq!(found[0], title_hit, "{query}: {found:?}");
        assert_eq!(found[1], "lamp", "{query}: {found:?}");
    }
    // Two letters start words in names and descriptions too (`lamp`, the seed's prompts):
    // those come first, prompts before documents, the title hit among them.
    let found = keys(&ctx, &["--limit", "20", "la*"]);
    assert_eq!(found[0], "lamp", "{found:?}");
    let at = found.iter().position(|key| key == title_hit);
    let first_body_hit = found
        .iter()
        .position(|key| key == "shelf://shelf/doc-1099.md");
    assert!(
        at.is_some_and(|at| first_body_hit.is_none_or(|body| at < body)),
        "{found:?}"
    );
    // A narrow word with a broad one: only what holds both, ranked by the narrow word.
    assert_eq!(
        keys(&ctx, &["lantern", "quokka"]),
        ["shelf://shelf/doc-0042.md"]
    );
    assert_eq!(
        keys(&ctx, &["old", "lantern", "zorbit"]),
        ["shelf://shelf/doc-0100.md", "shelf://shelf/doc-0200.md"]
    );
    // The kind and the limit still hold on a broad query.
    let resources = keys(&ctx, &["--kind", "resource", "--limit", "3", "lantern"]);
    assert_eq!(resources.len(), 3, "{resources:?}");
    assert_eq!(resources[0], title_hit);
    assert!(resources.iter().all(|key| key.starts_with("shelf://")));
    assert_eq!(keys(&ctx, &["--kind", "prompt", "lantern"]), ["lamp"]);
    // Every hit's snippet marks the words, the broad ones too.
    let hits = ctx.json(&[
        "search", "--json", "--limit", "2", "old", "lantern", "zorbit",
    ]);
    assert_eq!(
        hits[1]["snippet"],
        "Some notes about the **old** **lantern** in the shed. Then **zorbit** again."
    );

    // The template over the real server answers the same.
    let mut server = ctx.server();
    let read = server.modern("resources/read", json!({"uri": "shelf://search/lan%2A"}));
    validate(MODERN, "ReadResourceResult", result(&read));
    let text = result(&read)["contents"][0]["text"]
        .as_str()
        .expect("a text listing");
    assert!(
        text.contains(&format!("1. [Old lantern repair]({title_hit}) (resource)")),
        "{text}"
    );
    assert!(
        text.lines()
            .any(|line| line.starts_with("2. ") && line.ends_with("(prompt `lamp`)")),
        "{text}"
    );
    assert_eq!(server.close(), Some(0));
}
