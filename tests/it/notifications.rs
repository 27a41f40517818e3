//! A running server learns of writes by another process (the CLI) and tells its clients:
//! modern `subscriptions/listen` streams and legacy sessions, only what each asked for. Also
//! how `lastModified` and `ttlMs` follow the content hashes, with a pinned clock.

use serde_json::{Value, json};

use crate::common::{MODERN, Server, TestContext, modern_params, validate};

const TESTING: &str = "shelf://library/guides/testing.md";

fn listen(server: &mut Server, id: &str, filter: Value) -> Value {
    server.send(&json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": "subscriptions/listen",
        "params": modern_params(json!({"notifications": filter}), json!({})),
    }));
    let ack = server.next_message();
    validate(MODERN, "SubscriptionsAcknowledgedNotification", &ack);
    assert_eq!(
        ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        id
    );
    ack
}

/// (method, subscription id, uri) of each notification, for comparing.
fn summary(messages: &[Value]) -> Vec<(String, String, String)> {
    let mut summary: Vec<(String, String, String)> = messages
        .iter()
        .map(|m| {
            (
                m["method"].as_str().unwrap_or("").to_string(),
                m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
                m["params"]["uri"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    summary.sort();
    summary
}

fn owned(rows: &[(&str, &str, &str)]) -> Vec<(String, String, String)> {
    let mut rows: Vec<(String, String, String)> = rows
        .iter()
        .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
        .collect();
    rows.sort();
    rows
}

fn prompt_file(ctx: &TestContext, name: &str, body: &str) -> String {
    let path = ctx.write(
        &format!("{name}.prompt.md"),
        format!("---\ndescription: A test prompt\n---\n{body}\n"),
    );
    path.display().to_string()
}

#[test]
fn listen_streams_deliver_only_what_each_asked_for() {
    let ctx = TestContext::new();
    ctx.ok(&["stats"]);
    let mut server = Server::watched(&ctx.db, &[]);
    let ack = listen(
        &mut server,
        "prompts-and-testing",
        json!({"promptsListChanged": true, "toolsListChanged": true, "resourceSubscriptions": [TESTING]}),
    );
    // Tools are not honoured without serve --tools: there are none.
    assert_eq!(
        ack["params"]["notifications"],
        json!({"promptsListChanged": true, "resourceSubscriptions": [TESTING]})
    );
    listen(
        &mut server,
        "resources",
        json!({"resourcesListChanged": true}),
    );

    let file = prompt_file(&ctx, "greet", "Say hello.");
    ctx.ok(&["prompt", "add", &file]);
    let messages = server.told_until_now();
    for message in &messages {
        validate(MODERN, "PromptListChangedNotification", message);
    }
    assert_eq!(
        summary(&messages),
        owned(&[(
            "notifications/prompts/list_changed",
            "prompts-and-testing",
            ""
        )])
    );

    let other = ctx.write("notes.md", "# Notes\n");
    ctx.add_resource(&other, "shelf://local/notes.md");
    assert_eq!(
        summary(&server.told_until_now()),
        owned(&[("notifications/resources/list_changed", "resources", "")])
    );

    let changed = ctx.write("testing.md", "# Testing, rewritten\n");
    ctx.add_resource(&changed, TESTING);
    let messages = server.told_until_now();
    let updated = messages
        .iter()
        .find(|m| m["method"] == "notifications/resources/updated")
        .expect("resources/updated");
    validate(MODERN, "ResourceUpdatedNotification", updated);
    assert_eq!(
        summary(&messages),
        owned(&[
            ("notifications/resources/list_changed", "resources", ""),
            (
                "notifications/resources/updated",
                "prompts-and-testing",
                TESTING
            ),
        ])
    );

    // Writing the same content again changes no hash, so nobody hears of it.
    ctx.ok(&["prompt", "add", &file]);
    ctx.add_resource(&changed, TESTING);
    assert_eq!(server.told_until_now(), Vec::<Value>::new());

    // A cancelled stream hears nothing more; the other one still does.
    server.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "prompts-and-testing"}}));
    let file = prompt_file(&ctx, "greet", "Say hello twice.");
    ctx.ok(&["prompt", "add", &file]);
    ctx.ok(&["resource", "rm", "shelf://local/notes.md"]);
    assert_eq!(
        summary(&server.told_until_now()),
        owned(&[("notifications/resources/list_changed", "resources", "")])
    );

    // Closing stdin answers the open stream, then the server exits.
    let stdin_closed = server.close_and_collect();
    assert_eq!(stdin_closed.1, Some(0));
    let closing = stdin_closed
        .0
        .iter()
        .find(|m| m["id"] == "resources")
        .expect("the open stream is answered on shutdown")
        .clone();
    validate(MODERN, "SubscriptionsListenResultResponse", &closing);
    assert_eq!(
        closing["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "resources"
    );
    assert!(
        stdin_closed
            .0
            .iter()
            .all(|m| m["id"] != "prompts-and-testing")
    );
}

#[test]
fn legacy_sessions_hear_list_changes_and_their_subscriptions() {
    let revision = "2025-06-18";
    let ctx = TestContext::new();
    ctx.ok(&["stats"]);
    let mut server = Server::watched(&ctx.db, &[]);
    server.initialize(revision);
    let response = server.request("resources/subscribe", json!({"uri": TESTING}));
    assert_eq!(response["result"], json!({}));

    let changed = ctx.write("testing.md", "# Testing, take two\n");
    ctx.add_resource(&changed, TESTING);
    let messages = server.told_until_now();
    for message in &messages {
        validate(revision, "JSONRPCNotification", message);
        assert!(message["params"].get("_meta").is_none(), "{message}");
    }
    assert_eq!(
        summary(&messages),
        owned(&[
            ("notifications/resources/list_changed", "", ""),
            ("notifications/resources/updated", "", TESTING),
        ])
    );

    let response = server.request("resources/unsubscribe", json!({"uri": TESTING}));
    assert_eq!(response["result"], json!({}));
    let changed = ctx.write("testing.md", "# Testing, take three\n");
    ctx.add_resource(&changed, TESTING);
    assert_eq!(
        summary(&server.told_until_now()),
        owned(&[("notifications/resources/list_changed", "", "")])
    );

    let file = prompt_file(&ctx, "greet", "Hello.");
    ctx.ok(&["prompt", "add", &file]);
    let messages = server.told_until_now();
    validate(revision, "PromptListChangedNotification", &messages[0]);
    assert_eq!(
        summary(&messages),
        owned(&[("notifications/prompts/list_changed", "", "")])
    );
}

#[test]
fn one_transaction_of_many_changes_is_one_notification_per_list() {
    let ctx = TestContext::new();
    ctx.ok(&["stats"]);
    let mut server = Server::watched(&ctx.db, &[]);
    listen(
        &mut server,
        "all",
        json!({"promptsListChanged": true, "resourcesListChanged": true}),
    );
    let mut conn = crate::common::open_library(&ctx.db);
    let tx = conn.transaction().expect("transaction");
    let blob = blake3::hash(b"same text");
    tx.execute(
        "INSERT INTO blobs (hash, size, data) VALUES (?1, 9, CAST('same text' AS BLOB))",
        [&blob.as_bytes()[..]],
    )
    .expect("blob");
    for n in 0..500 {
        tx.execute(
            "INSERT INTO resources (uri, name, mime_type, is_text, blob_hash, size, content_hash, last_modified)
             VALUES (?1, ?1, 'text/plain', 1, ?2, 9, ?3, 0)",
            rusqlite::params![format!("shelf://bulk/{n}.txt"), &blob.as_bytes()[..], &blake3::hash(n.to_string().as_bytes()).as_bytes()[..]],
        )
        .expect("resource");
    }
    tx.commit().expect("commit");
    assert_eq!(
        summary(&server.told_until_now()),
        owned(&[("notifications/resources/list_changed", "all", "")])
    );
}

#[test]
fn last_modified_and_ttl_follow_the_content_hash() {
    const T0: i64 = 1_750_000_000_000;
    let ctx = TestContext::new();
    let at = |ms: i64| ms.to_string();
    let run_at = |ms: i64, args: &[&str]| {
        let output = ctx
            .command(args)
            .env("PROMPTSHELF_NOW_MS", at(ms))
            .output()
            .expect("run");
        assert!(
            output.status.success(),
            "{}",
            crate::common::describe(args, &output, "expected success")
        );
    };
    run_at(T0, &["stats"]);
    let read_at = |now: i64| {
        let mut server = Server::start_with_env(&ctx.db, &[], &[("PROMPTSHELF_NOW_MS", &at(now))]);
        let read = server.modern("resources/read", json!({"uri": TESTING}));
        let list = server.modern("resources/list", json!({}));
        let listed = list["result"]["resources"]
            .as_array()
            .and_then(|all| all.iter().find(|r| r["uri"] == TESTING))
            .expect("listed")
            .clone();
        (
            read["result"]["ttlMs"].as_i64(),
            listed["annotations"]["lastModified"]
                .as_str()
                .map(String::from),
            list["result"]["ttlMs"].as_i64(),
        )
    };
    // 10% of the age, at least 1 s, at most 60 s for a read and 5 s for a list.
    assert_eq!(read_at(T0 + 100_000).0, Some(10_000));
    assert_eq!(read_at(T0 + 5_000).0, Some(1_000));
    assert_eq!(read_at(T0 + 100_000_000).0, Some(60_000));
    let (_, modified, list_ttl) = read_at(T0 + 100_000);
    assert_eq!(modified.as_deref(), Some("2025-06-15T15:06:40Z"));
    assert_eq!(list_ttl, Some(5_000));

    // The same content written later changes nothing; new content moves lastModified (and
    // the list's TTL, which follows its newest item).
    let same = ctx.write("testing.md", "same");
    let add_same_at = |ms: i64| {
        run_at(
            ms,
            &[
                "resource",
                "add",
                &same.display().to_string(),
                "--uri",
                TESTING,
                "--detach",
            ],
        )
    };
    add_same_at(T0 + 50_000);
    let (ttl, modified, _) = read_at(T0 + 100_000);
    assert_eq!(
        (ttl, modified.as_deref()),
        (Some(5_000), Some("2025-06-15T15:07:30Z"))
    );
    add_same_at(T0 + 90_000);
    let (ttl, modified, list_ttl) = read_at(T0 + 100_000);
    assert_eq!(
        (ttl, modified.as_deref()),
        (Some(5_000), Some("2025-06-15T15:07:30Z"))
    );
    assert_eq!(list_ttl, Some(5_000));
}

#[test]
fn an_import_of_many_files_is_one_notification_and_an_unchanged_one_is_none() {
    let ctx = TestContext::new();
    ctx.ok(&["stats"]);
    let folder = ctx.many_notes();
    let mut server = Server::watched(&ctx.db, &[]);
    listen(
        &mut server,
        "all",
        json!({"promptsListChanged": true, "resourcesListChanged": true}),
    );
    ctx.ok(&["import", &folder]);
    assert_eq!(
        summary(&server.told_until_now()),
        owned(&[
            ("notifications/prompts/list_changed", "all", ""),
            ("notifications/resources/list_changed", "all", ""),
        ])
    );
    ctx.ok(&["import", &folder]);
    assert_eq!(server.told_until_now(), Vec::<Value>::new());
}

/// The error a refused subscription request gets, after checking it is one.
fn refused(response: &Value, code: i64) -> String {
    assert_eq!(response["error"]["code"], code, "{response:.300}");
    response["error"]["message"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

fn listen_request(server: &mut Server, id: &str, uris: &[String]) -> Value {
    server.send(&json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": "subscriptions/listen",
        "params": modern_params(json!({"notifications": {"resourceSubscriptions": uris}}), json!({})),
    }));
    server.next_message()
}

#[test]
fn listen_streams_are_capped_in_number_and_in_uris() {
    let ctx = TestContext::new();
    ctx.ok(&["stats"]);
    let mut server = Server::watched(&ctx.db, &["--max-streams", "2", "--max-stream-uris", "3"]);
    let uris = |n: usize| -> Vec<String> { (0..n).map(|i| format!("shelf://t/{i}.md")).collect() };

    // Four URIs are one too many for a stream; the same URI named twice counts once.
    let message = refused(&listen_request(&mut server, "wide", &uris(4)), -32602);
    assert!(
        message.contains('4') && message.contains('3') && message.contains("--max-stream-uris"),
        "{message}"
    );
    let mut twice = uris(3);
    twice.push(twice[0].clone());
    let ack = listen_request(&mut server, "first", &twice);
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    listen(
        &mut server,
        "second",
        json!({"resourceSubscriptions": [TESTING]}),
    );

    // A third open stream is refused, and nothing is kept for it.
    let message = refused(&listen_request(&mut server, "third", &uris(1)), -32602);
    assert!(
        message.contains("too many open streams")
            && message.contains('2')
            && message.contains("--max-streams")
            && message.contains("notifications/cancelled"),
        "{message}"
    );
    // Closing one makes room.
    server.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "first"}}));
    listen(
        &mut server,
        "third",
        json!({"resourceSubscriptions": [TESTING]}),
    );

    // Only the streams that were acknowledged hear a change, and only they are closed.
    let changed = ctx.write("testing.md", "# Testing, capped\n");
    ctx.add_resource(&changed, TESTING);
    assert_eq!(
        summary(&server.told_until_now()),
        owned(&[
            ("notifications/resources/updated", "second", TESTING),
            ("notifications/resources/updated", "third", TESTING),
        ])
    );
    let (messages, code) = server.close_and_collect();
    assert_eq!(code, Some(0));
    let mut closed: Vec<&str> = messages.iter().filter_map(|m| m["id"].as_str()).collect();
    closed.sort();
    assert_eq!(closed, ["second", "third"]);
}

#[test]
fn legacy_subscriptions_are_capped() {
    let revision = "2025-06-18";
    let ctx = TestContext::new();
    ctx.ok(&["stats"]);
    let mut server = Server::watched(&ctx.db, &["--max-subscriptions", "2"]);
    server.initialize(revision);
    for uri in [TESTING, "shelf://t/other.md", TESTING] {
        let response = server.request("resources/subscribe", json!({"uri": uri}));
        assert_eq!(response["result"], json!({}), "{uri}: {response}");
    }
    let response = server.request("resources/subscribe", json!({"uri": "shelf://t/third.md"}));
    let message = refused(&response, -32602);
    assert!(
        message.contains('2') && message.contains("--max-subscriptions"),
        "{message}"
    );
    // Room again after an unsubscribe; the refused URI was not kept.
    let response = server.request(
        "resources/unsubscribe",
        json!({"uri": "shelf://t/other.md"}),
    );
    assert_eq!(response["result"], json!({}));
    let response = server.request("resources/subscribe", json!({"uri": "shelf://t/third.md"}));
    assert_eq!(response["result"], json!({}), "{response}");
    let changed = ctx.write("testing.md", "# Testing, capped\n");
    ctx.add_resource(&changed, TESTING);
    assert_eq!(
        summary(&server.told_until_now()),
        owned(&[
            ("notifications/resources/list_changed", "", ""),
            ("notifications/resources/updated", "", TESTING),
        ])
    );
}

#[test]
fn subscriptions_are_capped_by_default() {
    let ctx = TestContext::new();
    ctx.ok(&["stats"]);
    let mut server = ctx.server();
    let uris: Vec<String> = (0..1025).map(|i| format!("shelf://t/{i}.md")).collect();
    let message = refused(&listen_request(&mut server, "wide", &uris), -32602);
    assert!(
        message.contains("1025") && message.contains("1024"),
        "{message}"
    );
    for n in 0..64 {
        let ack = listen_request(&mut server, &format!("s{n}"), &uris[..1024]);
        assert_eq!(
            ack["method"], "notifications/subscriptions/acknowledged",
            "{n}"
        );
    }
    let message = refused(&listen_request(&mut server, "s64", &uris[..1]), -32602);
    assert!(message.contains("64"), "{message}");
    assert_eq!(server.close(), Some(0));

    let mut server = ctx.server();
    server.initialize("2025-11-25");
    for n in 0..4096 {
        let uri = format!("shelf://t/{n}.md");
        let response = server.request("resources/subscribe", json!({"uri": uri}));
        assert_eq!(response["result"], json!({}), "{n}");
    }
    let response = server.request(
        "resources/subscribe",
        json!({"uri": "shelf://t/one-more.md"}),
    );
    let message = refused(&response, -32602);
    assert!(message.contains("4096"), "{message}");
}

#[test]
fn caching_hints_show_a_change_within_seconds_for_lists_and_a_minute_for_contents() {
    const T0: i64 = 1_750_000_000_000;
    let ctx = TestContext::new();
    let output = ctx
        .command(&["stats"])
        .env("PROMPTSHELF_NOW_MS", T0.to_string())
        .output()
        .expect("run");
    assert!(output.status.success());
    // (prompts/list, resources/list, resources/read, server/discover) ttlMs at `now`.
    let hints_at = |now: i64, extra: &[&str]| {
        let mut server =
            Server::start_with_env(&ctx.db, extra, &[("PROMPTSHELF_NOW_MS", &now.to_string())]);
        let mut ttl = |method: &str, params: Value| {
            let response = server.modern(method, params);
            response["result"]["ttlMs"]
                .as_u64()
                .unwrap_or_else(|| panic!("{method}: no ttlMs in {response}"))
        };
        [
            ttl("prompts/list", json!({})),
            ttl("resources/list", json!({})),
            ttl("resources/read", json!({"uri": TESTING})),
            ttl("server/discover", json!({})),
        ]
    };
    // Just changed: the shortest hint everywhere.
    assert_eq!(hints_at(T0, &[]), [1_000, 1_000, 1_000, 1_000]);
    // Unchanged for a year: a list is still looked at again within 5 s, contents within 60 s.
    let year = 365 * 24 * 3_600_000;
    assert_eq!(hints_at(T0 + year, &[]), [5_000, 5_000, 60_000, 5_000]);
    // In between, 10% of the age under each bound.
    assert_eq!(hints_at(T0 + 200_000, &[]), [5_000, 5_000, 20_000, 5_000]);
    assert_eq!(hints_at(T0 + 30_000, &[]), [3_000, 3_000, 3_000, 3_000]);
    // Each bound is a flag of its own.
    let flags = [
        "--ttl-min-ms",
        "500",
        "--list-ttl-max-ms",
        "2000",
        "--read-ttl-max-ms",
        "7000",
    ];
    assert_eq!(hints_at(T0 + year, &flags), [2_000, 2_000, 7_000, 2_000]);
    assert_eq!(hints_at(T0, &flags), [500, 500, 500, 500]);
    // A minimum over a maximum is refused, naming both flags.
    let refused = ctx.fails(&["serve", "--ttl-min-ms", "6000"]);
    assert!(
        refused.contains("--ttl-min-ms (6000)") && refused.contains("--list-ttl-max-ms (5000)"),
        "{refused}"
    );
}

#[test]
fn a_running_server_hears_of_a_collection_removed_and_a_resource_renamed() {
    let ctx = TestContext::new();
    let notes = ctx.write("notes.md", "# Notes\n");
    ctx.add_resource(&notes, "shelf://local/notes.md");
    let mut server = Server::watched(&ctx.db, &[]);
    listen(
        &mut server,
        "all",
        json!({"promptsListChanged": true, "resourcesListChanged": true,
               "resourceSubscriptions": [TESTING, "shelf://local/notes.md"]}),
    );

    ctx.ok(&["collection", "rm", "library"]);
    assert_eq!(
        summary(&server.told_until_now()),
        owned(&[
            ("notifications/prompts/list_changed", "all", ""),
            ("notifications/resources/list_changed", "all", ""),
            ("notifications/resources/updated", "all", TESTING),
        ])
    );

    // The old URI is gone: a host holding it hears so.
    ctx.ok(&[
        "resource",
        "mv",
        "shelf://local/notes.md",
        "shelf://local/journal.md",
    ]);
    assert_eq!(
        summary(&server.told_until_now()),
        owned(&[
            ("notifications/resources/list_changed", "all", ""),
            (
                "notifications/resources/updated",
                "all",
                "shelf://local/notes.md"
            ),
        ])
    );
    assert_eq!(server.close(), Some(0));
}
