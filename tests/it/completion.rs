//! `completion/complete` over the real server, on libraries built with the real CLI: the
//! ranking classes and their ties, the 100-value cap with exact totals, context narrowing,
//! template variables completed from stored URIs, unknown names, empty and changing tables,
//! and the rate limit. Every message is validated against the official schema.

use std::path::Path;

use serde_json::{Value, json};

use crate::common::{MODERN, Server, TestContext, validate};

/// A prompt whose arguments complete from tables (`words`, `runners`: names the seed library
/// does not use) and from an enum.
const PROMPT: &str = "---
name: pick
description: Pick things.
arguments:
  - name: word
    description: A word
    completion: words
  - name: framework
    description: A test framework
    completion: runners
  - name: language
    description: A language
    type: enum
    values: [rust, python, go]
---
Use {{ word }} with {{ framework }} in {{ language }}.
";

fn path_str(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 temporary path")
}

/// A library with the `pick` prompt and nothing else of ours.
fn library() -> TestContext {
    let ctx = TestContext::new();
    let file = ctx.write("pick.prompt.md", PROMPT);
    ctx.ok(&["prompt", "add", path_str(&file)]);
    ctx
}

/// `values import TABLE` of CSV rows (`value,weight,context`).
fn import(ctx: &TestContext, table: &str, rows: &str) {
    let file = ctx.write(
        &format!("{table}.csv"),
        format!("value,weight,context\n{rows}"),
    );
    ctx.ok(&["values", "import", table, path_str(&file)]);
}

fn pick(argument: &str) -> (Value, &str) {
    (json!({"type": "ref/prompt", "name": "pick"}), argument)
}

/// A modern completion request; returns the response, validated.
fn request(
    server: &mut Server,
    (reference, argument): (Value, &str),
    value: &str,
    context: Value,
) -> Value {
    let response = server.modern(
        "completion/complete",
        json!({
            "ref": reference,
            "argument": {"name": argument, "value": value},
            "context": {"arguments": context}
        }),
    );
    validate(MODERN, "JSONRPCMessage", &response);
    response
}

/// The `completion` of a successful answer.
fn complete(server: &mut Server, target: (Value, &str), value: &str, context: Value) -> Value {
    let response = request(server, target, value, context);
    let result = response
        .get("result")
        .unwrap_or_else(|| panic!("expected a result, got {response}"));
    validate(MODERN, "CompleteResult", result);
    result["completion"].clone()
}

fn values(completion: &Value) -> Vec<String> {
    completion["values"]
        .as_array()
        .unwrap_or_else(|| panic!("no values in {completion}"))
        .iter()
        .map(|v| v.as_str().unwrap_or_default().to_string())
        .collect()
}

/// The error of a failed answer: (code, message).
fn error(response: &Value) -> (i64, String) {
    let error = &response["error"];
    (
        error["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("expected an error, got {response}")),
        error["message"].as_str().unwrap_or_default().to_string(),
    )
}

#[test]
fn each_class_ranks_in_its_place() {
    let ctx = library();
    // Listed worst first, so the file's order cannot pass for ranking.
    import(
        &ctx,
        "words",
        "ruby,,\nr-u-s-t,,\ntrusty,,\ngetRustVersion,,\nmy-rust,,\nRustic,,\nrustacean,,\nrust,,\n",
    );
    let mut server = ctx.server();
    let completion = complete(&mut server, pick("word"), "rust", json!({}));
    assert_eq!(
        values(&completion),
        [
            "rust",           // exact
            "rustacean",      // prefix
            "Rustic",         // prefix, ignoring case
            "my-rust",        // word prefix (after '-'), shorter first
            "getRustVersion", // word prefix (case change)
            "trusty",         // substring
            "r-u-s-t",        // letters in order
        ]
    );
    assert_eq!(completion["total"], 7);
    assert_eq!(completion["hasMore"], false);

    // Case decides between the two prefix classes.
    let completion = complete(&mut server, pick("word"), "Rust", json!({}));
    assert_eq!(values(&completion)[..3], ["Rustic", "rust", "rustacean"]);

    // The same in a legacy session, validated against that revision.
    let revision = "2025-06-18";
    server.initialize(revision);
    let response = server.request(
        "completion/complete",
        json!({
            "ref": {"type": "ref/prompt", "name": "pick"},
            "argument": {"name": "word", "value": "rust"}
        }),
    );
    validate(revision, "JSONRPCMessage", &response);
    validate(revision, "CompleteResult", &response["result"]);
    assert_eq!(response["result"]["completion"]["values"][0], "rust");
    assert_eq!(server.close(), Some(0));
}

#[test]
fn ties_break_by_weight_then_length_then_name() {
    let ctx = library();
    import(
        &ctx,
        "words",
        "b22,1,\nb21,1,\nba,1,\nb1,1,\nb333,9,\nzzz,50,\n",
    );
    let mut server = ctx.server();
    let completion = complete(&mut server, pick("word"), "b", json!({}));
    assert_eq!(values(&completion), ["b333", "b1", "ba", "b21", "b22"]);
    // An empty value lists everything by weight.
    let completion = complete(&mut server, pick("word"), "", json!({}));
    assert_eq!(
        values(&completion),
        ["zzz", "b333", "b1", "ba", "b21", "b22"]
    );
    assert_eq!(completion["total"], 6);
}

#[test]
fn at_most_100_values_and_an_exact_total() {
    let ctx = library();
    let rows: String = (0..250).map(|i| format!("item-{i:03},,\n")).collect();
    import(&ctx, "words", &format!("{rows}other,,\n"));
    let mut server = ctx.server();

    let completion = complete(&mut server, pick("word"), "item", json!({}));
    let expected: Vec<String> = (0..100).map(|i| format!("item-{i:03}")).collect();
    assert_eq!(values(&completion), expected);
    assert_eq!(completion["total"], 250);
    assert_eq!(completion["hasMore"], true);

    // Ten prefix matches first, then the subsequence matches (item-024, item-124, ...).
    let completion = complete(&mut server, pick("word"), "item-24", json!({}));
    let answered = values(&completion);
    let prefixed: Vec<String> = (240..250).map(|i| format!("item-{i}")).collect();
    assert_eq!(answered[..10], prefixed);
    let matching = (0..250)
        .filter(|i| is_subsequence(&format!("item-{i:03}"), "item-24"))
        .count();
    assert_eq!(completion["total"], matching);
    assert_eq!(answered.len(), matching.min(100));

    let completion = complete(&mut server, pick("word"), "othe", json!({}));
    assert_eq!(
        completion,
        json!({"values": ["other"], "total": 1, "hasMore": false})
    );

    let completion = complete(&mut server, pick("word"), "", json!({}));
    assert_eq!(completion["total"], 251);
    assert_eq!(completion["hasMore"], true);

    let completion = complete(&mut server, pick("word"), "zzz", json!({}));
    assert_eq!(
        completion,
        json!({"values": [], "total": 0, "hasMore": false})
    );
}

/// `text` lower-cased a character at a time, as the server folds case.
fn fold(text: &str) -> String {
    text.chars().flat_map(char::to_lowercase).collect()
}

fn is_subsequence(value: &str, query: &str) -> bool {
    let mut wanted = query.chars().peekable();
    for c in value.chars() {
        if wanted.peek() == Some(&c) {
            wanted.next();
        }
    }
    wanted.peek().is_none()
}

#[test]
fn totals_on_a_large_table_are_exact_or_left_out_when_more_match() {
    let ctx = library();
    // Pseudo-random words from syllables, with separators, capitals and a few accents.
    const SYLLABLES: [&str; 12] = [
        "ka", "Lo", "mi", "ne", "ru", "ta", "pé", "si", "-", "_", "x9", "qu",
    ];
    let mut state = 0x2545_f491_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut words = std::collections::BTreeSet::new();
    while words.len() < 5000 {
        let length = 1 + next() % 5;
        let word: String = (0..length)
            .map(|_| SYLLABLES[(next() % SYLLABLES.len() as u64) as usize])
            .collect();
        if !word.trim().is_empty() {
            words.insert(word);
        }
    }
    let file = ctx.write(
        "words.txt",
        words.iter().cloned().collect::<Vec<_>>().join("\n"),
    );
    ctx.ok(&["values", "import", "words", path_str(&file)]);
    let mut server = ctx.server();
    for query in [
        "k", "ka", "L", "lo", "x9", "9k", "-", "é", "pé", "kaLo", "mine", "qx", "zz",
    ] {
        let completion = complete(&mut server, pick("word"), query, json!({}));
        let folded = fold(query);
        let expected = words
            .iter()
            .filter(|word| is_subsequence(&fold(word), &folded))
            .count();
        // One- and two-character queries of letters, digits and separators are counted on
        // a table this large; another query's total is left out when more match than one
        // answer holds.
        let counted = folded.chars().count() <= 2
            && folded
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "-_./ ".contains(c));
        if counted || completion.get("total").is_some() {
            assert_eq!(completion["total"], expected, "query {query:?}");
        } else {
            assert!(
                expected > 100,
                "query {query:?}: no total for {expected} matches"
            );
        }
        let answered = values(&completion);
        assert_eq!(answered.len(), expected.min(100), "query {query:?}");
        assert_eq!(completion["hasMore"], expected > 100, "query {query:?}");
        assert!(
            answered
                .iter()
                .all(|value| is_subsequence(&fold(value), &folded)),
            "query {query:?}: {answered:?}"
        );
        // With this many prefix matches, only prefix matches are offered.
        let prefixed = words
            .iter()
            .filter(|word| fold(word).starts_with(&folded))
            .count();
        if prefixed >= 100 {
            assert!(
                answered
                    .iter()
                    .all(|value| fold(value).starts_with(&folded)),
                "query {query:?}: {answered:?}"
            );
        }
    }
}

#[test]
fn context_narrows_the_values_offered() {
    let ctx = library();
    import(
        &ctx,
        "runners",
        "pytest,,language=python\n\
         unittest,,language=python\n\
         cargo-test,,language=rust\n\
         criterion,5,language=rust\n\
         nextest,2,language=rust\n\
         nextest,,\n\
         custom,,\n",
    );
    let mut server = ctx.server();
    let offered = |server: &mut Server, context: Value| {
        let completion = complete(server, pick("framework"), "", context);
        (values(&completion), completion["total"].clone())
    };
    assert_eq!(
        offered(&mut server, json!({"language": "rust"})),
        (
            vec![
                "criterion".into(),
                "nextest".into(),
                "custom".into(),
                "cargo-test".into()
            ],
            json!(4)
        )
    );
    assert_eq!(
        offered(&mut server, json!({"language": "python"})),
        (
            vec![
                "custom".into(),
                "pytest".into(),
                "nextest".into(),
                "unittest".into()
            ],
            json!(4)
        )
    );
    // Without a context (or with one nothing is tied to) only the free values.
    assert_eq!(
        offered(&mut server, json!({})),
        (vec!["custom".into(), "nextest".into()], json!(2))
    );
    assert_eq!(
        offered(&mut server, json!({"language": "cobol", "word": "x"})),
        (vec!["custom".into(), "nextest".into()], json!(2))
    );
    // An enum's values complete without a table.
    let completion = complete(&mut server, pick("language"), "py", json!({}));
    assert_eq!(values(&completion), ["python"]);
    assert_eq!(completion["total"], 1);
}

#[test]
fn template_variables_complete_from_stored_uris() {
    let ctx = library();
    let file = ctx.write("page.md", "# A page\n\nText.\n");
    for uri in [
        "docs://api/intro",
        "docs://api/auth",
        "docs://ui/buttons",
        "docs://ui/forms",
        "notes://api/elsewhere",
    ] {
        ctx.ok(&["resource", "add", path_str(&file), "--uri", uri]);
    }
    ctx.ok(&[
        "template",
        "add",
        "docs://{component}/{page}",
        "--name",
        "docs",
    ]);
    import(&ctx, "members", "ada,,\nalan,3,\ngrace,,\n");
    ctx.ok(&[
        "template",
        "add",
        "team://{member}/notes",
        "--name",
        "team",
        "--complete",
        "member=members",
    ]);
    let mut server = ctx.server();
    let docs = |variable| {
        (
            json!({"type": "ref/resource", "uri": "docs://{component}/{page}"}),
            variable,
        )
    };

    let completion = complete(&mut server, docs("component"), "", json!({}));
    assert_eq!(values(&completion), ["ui", "api"]);
    assert_eq!(completion["total"], 2);
    // Another variable already chosen narrows to the URIs that agree with it.
    let completion = complete(&mut server, docs("page"), "", json!({"component": "api"}));
    assert_eq!(values(&completion), ["auth", "intro"]);
    let completion = complete(&mut server, docs("page"), "o", json!({}));
    assert_eq!(values(&completion), ["forms", "intro", "buttons"]);

    // The reference may be a URI being typed rather than the template's text.
    let partial = (
        json!({"type": "ref/resource", "uri": "docs://ui/f"}),
        "page",
    );
    let completion = complete(&mut server, partial, "f", json!({}));
    assert_eq!(values(&completion), ["forms"]);

    // A variable with a table completes from the table.
    let team = (
        json!({"type": "ref/resource", "uri": "team://{member}/notes"}),
        "member",
    );
    let completion = complete(&mut server, team, "a", json!({}));
    assert_eq!(values(&completion), ["alan", "ada", "grace"]);
}

/// A template that names a variable twice is refused when added (tests/it/cli.rs); one that
/// a database holds all the same (written before that rule) is reported by `check` and
/// passed over by the server, which goes on serving the rest.
#[test]
fn a_stored_template_that_names_a_variable_twice_is_reported_and_passed_over() {
    let ctx = library();
    ctx.ok(&["template", "add", "docs://{page}/x", "--name", "docs"]);
    let changed = ctx
        .open_db()
        .execute(
            "UPDATE resource_templates SET uri_template = 'docs://{page}/{page}' \
             WHERE uri_template = 'docs://{page}/x'",
            [],
        )
        .expect("rewrite the template");
    assert_eq!(changed, 1);
    let checked = ctx.run(&["check"]);
    let report = String::from_utf8_lossy(&checked.stdout);
    assert!(!checked.status.success(), "{report}");
    assert!(
        report.contains("'docs://{page}/{page}' names the variable 'page' twice"),
        "{report}"
    );

    let mut server = ctx.server();
    let twice = (
        json!({"type": "ref/resource", "uri": "docs://{page}/{page}"}),
        "page",
    );
    let response = request(&mut server, twice, "", json!({}));
    let (code, message) = error(&response);
    assert_eq!(code, -32603, "{response}");
    assert!(
        message.contains("'docs://{page}/{page}' in the library does not parse; fix or remove it"),
        "{message}"
    );
    let read = server.modern("resources/read", json!({"uri": "docs://a/a"}));
    assert!(read["error"]["message"].is_string(), "{read}");
    let completion = complete(&mut server, pick("language"), "", json!({}));
    assert_eq!(completion["total"], 3);
}

#[test]
fn unknown_prompts_arguments_and_templates_are_invalid_params() {
    let ctx = library();
    ctx.ok(&[
        "template",
        "add",
        "docs://{component}/{page}",
        "--name",
        "docs",
    ]);
    let mut server = ctx.server();
    let cases = [
        (
            json!({"type": "ref/prompt", "name": "nope"}),
            "word",
            "unknown prompt 'nope'",
        ),
        (
            json!({"type": "ref/prompt", "name": "pick"}),
            "colour",
            "no argument 'colour'",
        ),
        (
            json!({"type": "ref/resource", "uri": "nope://{x}"}),
            "x",
            "no resource template",
        ),
        (
            json!({"type": "ref/resource", "uri": "docs://{component}/{page}"}),
            "section",
            "no variable 'section'",
        ),
    ];
    for (reference, argument, says) in cases {
        let response = request(&mut server, (reference, argument), "", json!({}));
        let (code, message) = error(&response);
        assert_eq!(code, -32602, "{response}");
        assert!(message.contains(says), "{message}");
    }
    // Still serving.
    let completion = complete(&mut server, pick("language"), "", json!({}));
    assert_eq!(completion["total"], 3);
}

#[test]
fn an_empty_table_gives_an_empty_list() {
    let ctx = library();
    ctx.ok(&["values", "add", "words", "gone"]);
    ctx.ok(&["values", "rm", "words", "gone"]);
    let mut server = ctx.server();
    for value in ["", "g"] {
        let completion = complete(&mut server, pick("word"), value, json!({}));
        assert_eq!(
            completion,
            json!({"values": [], "total": 0, "hasMore": false})
        );
    }
}

#[test]
fn a_table_changed_while_serving_is_seen_by_the_next_completion() {
    let ctx = library();
    import(&ctx, "words", "alpha,,\nalpine,,\n");
    let mut server = ctx.server();
    let completion = complete(&mut server, pick("word"), "al", json!({}));
    assert_eq!(values(&completion), ["alpha", "alpine"]);

    // Another process writes while the server runs; the server sees it at its next poll.
    let words = |server: &mut Server| values(&complete(server, pick("word"), "al", json!({})));
    let owned = |list: &[&str]| list.iter().map(|v| v.to_string()).collect::<Vec<_>>();
    ctx.ok(&["values", "add", "words", "altitude", "--weight", "9"]);
    server.eventually(owned(&["altitude", "alpha", "alpine"]), words);

    ctx.ok(&["values", "rm", "words", "alpha"]);
    server.eventually(owned(&["altitude", "alpine"]), words);

    // Removed, then made again under the same name: a new table, not the old index.
    ctx.ok(&["values", "rm", "words"]);
    server.eventually(json!(0), |server| {
        complete(server, pick("word"), "al", json!({}))["total"].clone()
    });
    ctx.ok(&["values", "add", "words", "almond"]);
    server.eventually(owned(&["almond"]), words);
    assert_eq!(server.close(), Some(0));
}

#[test]
fn over_the_rate_limit_completion_is_refused_and_serving_goes_on() {
    let ctx = library();
    let mut server = Server::start(
        &ctx.db,
        &["--completion-rate", "1", "--completion-burst", "2"],
    );
    let body = json!({
        "ref": {"type": "ref/prompt", "name": "pick"},
        "argument": {"name": "language", "value": ""}
    });
    // Sent at once, so no token comes back in between.
    let ids: Vec<Value> = (100..105).map(|id| json!(id)).collect();
    for id in &ids {
        server.send(&json!({
            "jsonrpc": "2.0",
            "id": id,
            "method": "completion/complete",
            "params": crate::common::modern_params(body.clone(), json!({}))
        }));
    }
    let responses: Vec<Value> = ids.iter().map(|id| server.response_to(id)).collect();
    for response in &responses {
        validate(MODERN, "JSONRPCMessage", response);
    }
    assert!(
        responses[..2].iter().all(|r| r.get("result").is_some()),
        "{responses:?}"
    );
    for response in &responses[2..] {
        let (code, message) = error(response);
        assert_eq!(code, -31429, "{response}");
        assert!(
            message.contains("too many completion requests"),
            "{message}"
        );
        assert!(
            response["error"]["data"]["retryAfterMs"]
                .as_u64()
                .is_some_and(|ms| ms > 0)
        );
    }
    // Other methods are not limited.
    let response = server.modern("prompts/list", json!({}));
    validate(MODERN, "ListPromptsResult", &response["result"]);
    // A token comes back when the last refusal said it would.
    let retry_after = responses[4]["error"]["data"]["retryAfterMs"]
        .as_u64()
        .expect("retryAfterMs");
    assert!(
        retry_after <= 1000,
        "{retry_after} ms at one request a second"
    );
    std::thread::sleep(std::time::Duration::from_millis(retry_after));
    let completion = complete(&mut server, pick("language"), "r", json!({}));
    assert_eq!(values(&completion), ["rust"]);
    assert_eq!(server.close(), Some(0));
}

#[test]
fn a_large_table_answers_alike_however_often_it_is_asked() {
    // 1,500 values (enough for the index to keep character counts): 300 start with each
    // of "ab", "ac", "ad", "ae", "af".
    let ctx = library();
    let words: Vec<String> = (0..1500)
        .map(|i| format!("a{}{i:04}", ["b", "c", "d", "e", "f"][i % 5]))
        .collect();
    let rows: String = words
        .iter()
        .enumerate()
        .map(|(i, word)| format!("{word},{},\n", i % 7))
        .collect();
    import(&ctx, "words", &rows);
    // Every match class implies the query's characters appear in order.
    let matching = |query: &str| {
        words
            .iter()
            .filter(|word| {
                let mut rest = word.chars();
                query.chars().all(|c| rest.any(|w| w == c))
            })
            .count()
    };
    let mut server = ctx.server();
    // One letter, two letters (both counted), three with 300 prefix matches (total left
    // out), three with 30 (counted by the pass that ranks), and no match; each asked three
    // times: the first answers may be read from the store, the later ones from what the
    // server keeps.
    for query in ["a", "ab", "ab1", "ab10", "zz"] {
        let total = matching(query);
        let first = complete(&mut server, pick("word"), query, json!({}));
        if query == "ab1" {
            assert!(first.get("total").is_none(), "{query}: {first}");
        } else {
            assert_eq!(first["total"], total, "{query}: {first}");
        }
        assert_eq!(first["hasMore"], total > 100, "{query}");
        assert_eq!(values(&first).len(), total.min(100), "{query}: {first}");
        for _ in 0..2 {
            assert_eq!(
                complete(&mut server, pick("word"), query, json!({})),
                first,
                "{query}"
            );
        }
    }
    assert_eq!(server.close(), Some(0));
}

/// A server on `ctx`'s library that logs what it indexes (`RUST_LOG=info`), with `extra`
/// flags.
fn logging_server(ctx: &TestContext, extra: &[&str]) -> Server {
    let mut command = std::process::Command::new(crate::common::BIN);
    command
        .arg("--db")
        .arg(&ctx.db)
        .arg("serve")
        .args(extra)
        .env_remove("PROMPTSHELF_DB")
        .env("RUST_LOG", "info");
    Server::spawn(command, true)
}

/// The bytes each table's index took, from the log lines of the indexes a server took into
/// memory (read from the library or built), in that order.
fn indexed(logs: &[String]) -> Vec<(String, usize)> {
    taken(logs)
        .into_iter()
        .map(|(_, table, bytes)| (table, bytes))
        .collect()
}

/// How the server took each table's index into memory ("read the stored index of" or
/// "indexed"), the table and the bytes it took, from its log lines, in order.
fn taken(logs: &[String]) -> Vec<(&'static str, String, usize)> {
    logs.iter()
        .filter_map(|line| {
            let (how, rest) = ["read the stored index of", "indexed"]
                .into_iter()
                .find_map(|how| {
                    Some((how, line.split(&format!("{how} completion table ")).nth(1)?))
                })?;
            let table = rest.split(' ').next()?.to_string();
            let bytes = rest.split(" values, ").nth(1)?.split(' ').next()?;
            Some((how, table, bytes.parse().ok()?))
        })
        .collect()
}

/// The table `words`' version and the version its stored index was built from (None: none
/// is stored).
fn stored_versions(ctx: &TestContext) -> (i64, Option<i64>) {
    ctx.open_db()
        .query_row(
            "SELECT version, (SELECT version FROM completion_indexes WHERE table_id = id)
             FROM completion_tables WHERE name = 'words'",
            [],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .expect("the words table")
}

/// The first completion of `word-01` by a new logging server, and how it took the index.
fn first_completion(ctx: &TestContext) -> (Value, Vec<&'static str>, Vec<String>) {
    let mut server = logging_server(ctx, &[]);
    let completion = complete(&mut server, pick("word"), "word-01", json!({}));
    let (logs, code) = server.logs_at_exit();
    assert_eq!(code, Some(0));
    let hows = taken(&logs).into_iter().map(|(how, _, _)| how).collect();
    (completion, hows, logs)
}

#[test]
fn the_index_a_write_stored_is_read_and_one_not_current_or_damaged_is_built() {
    let ctx = library();
    let rows: String = (0..3000)
        .map(|n| format!("word-{n:04},{},\n", n % 7))
        .collect();
    import(&ctx, "words", &rows);
    let (version, stored) = stored_versions(&ctx);
    assert_eq!(stored, Some(version), "values import stores the index");
    let (read, hows, logs) = first_completion(&ctx);
    assert_eq!(hows, ["read the stored index of"], "{logs:#?}");
    // The prefix matches word-0100 to word-0199, best weight (n % 7) first.
    assert_eq!(
        values(&read)[..3],
        ["word-0104", "word-0111", "word-0118"],
        "{read}"
    );

    // A stored index of another version than the table's is not used.
    ctx.open_db()
        .execute("UPDATE completion_indexes SET version = version + 1", [])
        .expect("move the stored index's version");
    let (built, hows, logs) = first_completion(&ctx);
    assert_eq!(hows, ["indexed"], "{logs:#?}");
    assert_eq!(built, read);

    // Nor one that is damaged: the server says why, builds the index and answers alike.
    ctx.open_db()
        .execute(
            "UPDATE completion_indexes SET version = version - 1,
                    bytes = substr(bytes, 1, length(bytes) / 2)",
            [],
        )
        .expect("cut the stored index short");
    let (built, hows, logs) = first_completion(&ctx);
    assert_eq!(hows, ["indexed"], "{logs:#?}");
    assert!(
        logs.iter().any(
            |line| line.contains("not using the stored index of completion table")
                && line.contains("cannot read it")
        ),
        "{logs:#?}"
    );
    assert_eq!(built, read);

    // Every write that changes the values stores the index anew.
    ctx.ok(&["values", "add", "words", "word-01x", "--weight", "9"]);
    let (version, stored) = stored_versions(&ctx);
    assert_eq!(stored, Some(version), "values add stores the index");
    let (added, hows, logs) = first_completion(&ctx);
    assert_eq!(hows, ["read the stored index of"], "{logs:#?}");
    assert_eq!(values(&added)[0], "word-01x", "{added}");
    ctx.ok(&["values", "rm", "words", "word-01x"]);
    let (version, stored) = stored_versions(&ctx);
    assert_eq!(stored, Some(version), "values rm stores the index");
    let (removed, hows, logs) = first_completion(&ctx);
    assert_eq!(hows, ["read the stored index of"], "{logs:#?}");
    assert_eq!(removed, read);
    // So does undoing a write: the value removed is back.
    ctx.ok(&["undo"]);
    let (version, stored) = stored_versions(&ctx);
    assert_eq!(stored, Some(version), "undo stores the index");
    let (undone, hows, logs) = first_completion(&ctx);
    assert_eq!(hows, ["read the stored index of"], "{logs:#?}");
    assert_eq!(undone, added);
    // Removing the table removes its index.
    ctx.ok(&["values", "rm", "words"]);
    assert_eq!(ctx.query::<i64>("SELECT count(*) FROM completion_indexes WHERE table_id NOT IN (SELECT id FROM completion_tables)"), 0);
}

/// Two tables, `words` (4,000 values) larger than `runners` (500), and what each one's
/// index takes, as a server with the default limit reports building them.
fn two_tables() -> (TestContext, usize, usize) {
    let ctx = library();
    let rows = |name: &str, count: usize| -> String {
        (0..count).map(|n| format!("{name}-{n:04},,\n")).collect()
    };
    import(&ctx, "words", &rows("word", 4000));
    import(&ctx, "runners", &rows("runner", 500));
    let mut server = logging_server(&ctx, &[]);
    complete(&mut server, pick("word"), "wo", json!({}));
    complete(&mut server, pick("framework"), "ru", json!({}));
    let (logs, code) = server.logs_at_exit();
    assert_eq!(code, Some(0));
    let built = indexed(&logs);
    let size = |table: &str| {
        built
            .iter()
            .find(|(name, _)| name == table)
            .map(|(_, bytes)| *bytes)
            .unwrap_or_else(|| panic!("no build of {table} was logged: {built:?}"))
    };
    let (words, runners) = (size("words"), size("runners"));
    assert!(
        runners < words,
        "runners ({runners} bytes) is the smaller index"
    );
    (ctx, words, runners)
}

#[test]
fn indexes_that_do_not_fit_together_are_forgotten_and_taken_again_in_turn() {
    let (ctx, words, runners) = two_tables();
    // Room for either, not for both.
    let limit = (words + runners / 2).to_string();
    let mut server = logging_server(&ctx, &["--max-index-bytes", &limit]);
    for (argument, typed, first) in [
        ("word", "word-000", "word-0000"),
        ("framework", "runner-04", "runner-0400"),
        ("word", "word-399", "word-3990"),
    ] {
        let completion = complete(&mut server, pick(argument), typed, json!({}));
        assert_eq!(
            values(&completion)[0],
            first,
            "{argument} {typed}: {completion}"
        );
    }
    let (logs, code) = server.logs_at_exit();
    assert_eq!(code, Some(0));
    let built: Vec<String> = indexed(&logs).into_iter().map(|(table, _)| table).collect();
    assert_eq!(built, ["words", "runners", "words"], "{logs:#?}");
    let forgot = |table: &str| {
        logs.iter()
            .filter(|line| line.contains(&format!("forgot the index of completion table {table} ")))
            .count()
    };
    assert_eq!((forgot("words"), forgot("runners")), (1, 1), "{logs:#?}");
}

#[test]
fn a_table_whose_index_alone_is_over_the_limit_is_refused_and_serving_goes_on() {
    let (ctx, words, runners) = two_tables();
    let limit = ((words + runners) / 2).to_string();
    let mut server = Server::start(&ctx.db, &["--max-index-bytes", &limit]);
    for _ in 0..2 {
        let (code, message) = error(&request(&mut server, pick("word"), "wo", json!({})));
        assert_eq!(code, -32603, "{message}");
        for named in ["words", "--max-index-bytes", &limit] {
            assert!(message.contains(named), "{message:?} does not name {named}");
        }
        // The smaller table is still completed.
        let completion = complete(&mut server, pick("framework"), "runner-04", json!({}));
        assert_eq!(values(&completion)[0], "runner-0400", "{completion}");
    }
    assert_eq!(server.close(), Some(0));
}
