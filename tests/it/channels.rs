//! Release channels served: `serve --channel`, tokens on a channel (`token add --channel`),
//! each item at the version its label names and nothing without it, the label in every
//! provenance, and a label moved told to that channel's listeners alone.

use serde_json::{Value, json};

use crate::common::{LEGACY, Server, TestContext, run_bounded};
use crate::http::{Events, HttpServer};

/// The file of a prompt `greet` whose one message says `body`.
fn greet_file(ctx: &TestContext, body: &str) -> String {
    let path = ctx.write(
        "greet.prompt.md",
        format!("---\ndescription: Greets someone\n---\n{body}\n"),
    );
    path.display().to_string()
}

/// The version number `label list LABEL --json` says the label is on for `key`.
fn labelled_version(ctx: &TestContext, label: &str, key: &str) -> i64 {
    let listed = ctx.json(&["label", "list", label, "--json"]);
    listed
        .as_array()
        .and_then(|items| items.iter().find(|item| item["key"] == key))
        .and_then(|item| item["version"].as_i64())
        .unwrap_or_else(|| panic!("{label} is not on {key}: {listed}"))
}

/// A library whose prompt `greet` is at "Hello v1" on `production` and "Hello v2" on
/// `staging` and in the library, the seed's items on both channels; the two versions.
fn staged(ctx: &TestContext) -> (i64, i64) {
    ctx.ok(&["prompt", "add", &greet_file(ctx, "Hello v1")]);
    ctx.ok(&["label", "set", "production", "--all"]);
    ctx.ok(&["prompt", "add", &greet_file(ctx, "Hello v2")]);
    ctx.ok(&["label", "set", "staging", "--all"]);
    (
        labelled_version(ctx, "production", "greet"),
        labelled_version(ctx, "staging", "greet"),
    )
}

/// The text of `greet`'s first message, and its provenance, as `server` serves it.
fn served_greet(server: &mut Server) -> (String, Value) {
    let got = server.request("prompts/get", json!({"name": "greet"}));
    let result = &got["result"];
    (
        result["messages"][0]["content"]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("no text in {got}"))
            .to_string(),
        result["_meta"]["promptshelf/provenance"].clone(),
    )
}

fn prompt_names(server: &mut Server) -> Vec<String> {
    let listed = server.request("prompts/list", json!({}));
    listed["result"]["prompts"]
        .as_array()
        .unwrap_or_else(|| panic!("no prompts in {listed}"))
        .iter()
        .map(|prompt| prompt["name"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn a_server_on_a_channel_serves_each_item_at_its_labelled_version_and_nothing_else() {
    let ctx = TestContext::new();
    let (v1, v2) = staged(&ctx);
    assert!(v1 < v2, "two versions of greet: {v1}, {v2}");
    // A prompt added since, on no channel.
    let path = ctx.write("later.prompt.md", "---\ndescription: Later\n---\nLater\n");
    ctx.ok(&["prompt", "add", &path.display().to_string()]);

    let mut library = ctx.server();
    library.initialize(LEGACY[0]);
    let mut production = Server::start(&ctx.db, &["--channel", "production"]);
    production.initialize(LEGACY[0]);
    let mut staging = Server::start(&ctx.db, &["--channel", "staging"]);
    staging.initialize(LEGACY[0]);

    let (text, provenance) = served_greet(&mut production);
    assert_eq!(text, "Hello v1");
    assert_eq!(provenance["version"], v1);
    assert_eq!(provenance["label"], "production");
    let (text, provenance) = served_greet(&mut staging);
    assert_eq!(text, "Hello v2");
    assert_eq!(
        (&provenance["version"], &provenance["label"]),
        (&json!(v2), &json!("staging"))
    );
    let (text, provenance) = served_greet(&mut library);
    assert_eq!(text, "Hello v2");
    assert_eq!(
        provenance.get("label"),
        None,
        "the library is on no channel"
    );

    // `later` has no label: not listed, not served, on either channel.
    assert!(prompt_names(&mut library).contains(&"later".to_string()));
    for channel in [&mut production, &mut staging] {
        let names = prompt_names(channel);
        assert!(names.contains(&"greet".to_string()) && names.contains(&"code-review".to_string()));
        assert!(!names.contains(&"later".to_string()), "{names:?}");
        let got = channel.request("prompts/get", json!({"name": "later"}));
        assert_eq!(got["error"]["code"], -32602, "{got}");
    }
    // The seed's documents are on the channel too, read and searched there.
    let read = production.request(
        "resources/read",
        json!({"uri": "shelf://library/guides/testing.md"}),
    );
    let contents = &read["result"]["contents"][0];
    assert_eq!(
        contents["_meta"]["promptshelf/provenance"]["label"],
        "production"
    );
    let found = production.request("resources/read", json!({"uri": "shelf://search/v2"}));
    assert!(
        !found.to_string().contains("greet"),
        "v2 is not on production: {found}"
    );
    let found = staging.request("resources/read", json!({"uri": "shelf://search/v2"}));
    assert!(
        found.to_string().contains("greet"),
        "v2 is on staging: {found}"
    );
}

#[test]
fn a_promotion_reaches_the_channel_it_moves_and_no_other_listener() {
    let ctx = TestContext::new();
    staged(&ctx);
    let mut library = Server::watched(&ctx.db, &[]);
    library.initialize(LEGACY[0]);
    let mut production = Server::watched(&ctx.db, &["--channel", "production"]);
    production.initialize(LEGACY[0]);
    let mut staging = Server::watched(&ctx.db, &["--channel", "staging"]);
    staging.initialize(LEGACY[0]);
    assert_eq!(served_greet(&mut production).0, "Hello v1");

    ctx.ok(&["label", "promote", "staging", "production"]);
    let told: Vec<Value> = production.told_until_now();
    assert_eq!(
        told.iter().map(|m| m["method"].clone()).collect::<Vec<_>>(),
        vec![json!("notifications/prompts/list_changed")],
        "{told:?}"
    );
    assert_eq!(served_greet(&mut production).0, "Hello v2");
    // The channel's search index is the new versions' too.
    let found = production.request("resources/read", json!({"uri": "shelf://search/v2"}));
    assert!(
        found.to_string().contains("greet"),
        "v2 is on production now: {found}"
    );
    // Each watcher has looked since the promotion: what it would tell is on its way.
    assert_eq!(staging.told_until_now(), Vec::<Value>::new());
    assert_eq!(library.told_until_now(), Vec::<Value>::new());

    // `label undo` is a move too: production is back on v1, and told.
    ctx.ok(&["label", "undo"]);
    assert_eq!(production.told_until_now().len(), 1);
    assert_eq!(served_greet(&mut production).0, "Hello v1");
    assert_eq!(staging.told_until_now(), Vec::<Value>::new());
}

/// A `subscriptions/listen` stream, with `token`, for prompt and resource list changes, once
/// acknowledged.
fn listen(http: &HttpServer, token: &str, id: &str) -> Events {
    let notifications = json!({"promptsListChanged": true, "resourcesListChanged": true});
    let events = http.listen_for(token, id, notifications);
    assert_eq!(
        events.next()["method"],
        "notifications/subscriptions/acknowledged"
    );
    events
}

fn token_on(ctx: &TestContext, name: &str, channel: Option<&str>) -> String {
    let mut args = vec!["token", "add", name, "--json"];
    if let Some(channel) = channel {
        args.extend(["--channel", channel]);
    }
    let added = ctx.json(&args);
    assert_eq!(added["channel"], json!(channel), "{added}");
    added["token"].as_str().expect("a token").to_string()
}

#[test]
fn tokens_on_two_channels_get_their_versions_and_only_their_channels_moves() {
    let ctx = TestContext::new();
    let (v1, v2) = staged(&ctx);
    let production = token_on(&ctx, "prod", Some("production"));
    let staging = token_on(&ctx, "stage", Some("staging"));
    let whole = token_on(&ctx, "whole", None);
    let http = HttpServer::start(&ctx.db, &["--auth", "token"]);
    for (token, text, version) in [(&production, "Hello v1", v1), (&staging, "Hello v2", v2)] {
        let got = http.with_token(token, 1, "prompts/get", json!({"name": "greet"}));
        let result = &got.json()["result"];
        assert_eq!(
            result["messages"][0]["content"]["text"], text,
            "{}",
            got.body
        );
        assert_eq!(
            result["_meta"]["promptshelf/provenance"]["version"],
            version
        );
    }

    let on_production = listen(&http, &production, "p");
    let on_staging = listen(&http, &staging, "s");
    let on_library = listen(&http, &whole, "w");
    ctx.ok(&["label", "promote", "staging", "production"]);
    assert_eq!(
        on_production.next()["method"],
        "notifications/prompts/list_changed"
    );
    // Then a resource moves on staging and in the library: a listener told of the
    // promotion would hear of the prompts first, since streams tell in commit order.
    ctx.ok(&[
        "label",
        "rm",
        "staging",
        "shelf://library/guides/testing.md",
    ]);
    ctx.ok(&[
        "resource",
        "rm",
        "shelf://library/guides/testing.md",
        "--detach",
    ]);
    assert_eq!(
        on_staging.next()["method"],
        "notifications/resources/list_changed"
    );
    assert_eq!(
        on_library.next()["method"],
        "notifications/resources/list_changed"
    );
    let got = http.with_token(&production, 2, "prompts/get", json!({"name": "greet"}));
    assert_eq!(
        got.json()["result"]["messages"][0]["content"]["text"],
        "Hello v2"
    );
    // Production still has the document the library and staging no longer serve.
    let read = http.with_token(
        &production,
        3,
        "resources/read",
        json!({"uri": "shelf://library/guides/testing.md"}),
    );
    assert_eq!(read.status, 200, "{}", read.body);
    assert!(
        read.json()["result"]["contents"][0]["text"].is_string(),
        "{}",
        read.body
    );
}

/// The official MCP Python SDK, over Streamable HTTP with a token on each channel, reads the
/// version of the prompt its channel names and the channel's label in the provenance.
#[test]
fn the_official_python_sdk_reads_each_channels_version_with_its_token() {
    let python = crate::interop::interop_python();
    let ctx = TestContext::new();
    let (v1, v2) = staged(&ctx);
    let production = token_on(&ctx, "prod", Some("production"));
    let staging = token_on(&ctx, "stage", Some("staging"));
    let http = HttpServer::start(&ctx.db, &["--auth", "token"]);
    let uri = "shelf://library/guides/testing.md";
    for (token, label, text, version) in [
        (&production, "production", "Hello v1", v1),
        (&staging, "staging", "Hello v2", v2),
    ] {
        let mut command = crate::interop::python_client(&python, &ctx.db);
        command.args([
            "--provenance",
            "greet",
            uri,
            "--http",
            &http.url(),
            "--token",
            token,
        ]);
        let (status, stdout, stderr) = run_bounded(
            command,
            &ctx,
            &format!("channel-interop-{label}"),
            crate::interop::SCRIPT_TIMEOUT,
        );
        let shown = format!(
            "status: {status}\n--- stdout\n{stdout}\n--- stderr\n{stderr}\n--- server\n{}",
            http.stderr()
        );
        assert!(status.success(), "{shown}");
        for era in ["[legacy]", "[modern]"] {
            let line = |prefix: &str| -> Value {
                stdout
                    .lines()
                    .find_map(|line| line.strip_prefix(prefix))
                    .and_then(|text| serde_json::from_str(text).ok())
                    .unwrap_or_else(|| panic!("no '{prefix}' line\n{shown}"))
            };
            assert_eq!(line(&format!("text {era} prompts/get ")), json!(text));
            let prompt = line(&format!("provenance {era} prompts/get "));
            assert_eq!(
                (&prompt["label"], &prompt["version"]),
                (&json!(label), &json!(version))
            );
            let document = line(&format!("provenance {era} resources/read "));
            assert_eq!(document["label"], label, "{shown}");
        }
    }
}

#[test]
fn a_channel_name_that_cannot_be_a_label_is_refused_with_what_to_give() {
    let ctx = TestContext::new();
    for args in [
        &["serve", "--channel", "prod uction"][..],
        &["token", "add", "t", "--channel", "staging!"][..],
    ] {
        let said = ctx.fails(args);
        assert!(said.contains("is not a label name"), "{args:?}: {said}");
        assert!(said.contains("e.g. production"), "{said}");
    }
}

/// The values a `completion/complete` of write-tests' `language` from `ru` offers.
fn completed(server: &mut Server) -> Value {
    let answer = server.request(
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "write-tests"},
               "argument": {"name": "language", "value": "ru"}}),
    );
    answer["result"]["completion"]["values"].clone()
}

#[test]
fn completion_tool_mirrors_and_the_modern_era_read_the_channel_too() {
    let ctx = TestContext::new();
    let (v1, _) = staged(&ctx);
    // `solo` has write-tests but not the completion table it completes from.
    ctx.ok(&["label", "set", "solo", "write-tests"]);
    let mut production = Server::start(&ctx.db, &["--channel", "production", "--tools", "prompts"]);
    production.initialize(LEGACY[0]);
    let mut solo = Server::start(&ctx.db, &["--channel", "solo"]);
    solo.initialize(LEGACY[0]);
    assert!(
        completed(&mut production).as_array().is_some_and(
            |values| values.contains(&json!("ruby")) && values.contains(&json!("rust"))
        ),
        "{}",
        completed(&mut production)
    );
    assert_eq!(completed(&mut solo), json!([]), "the table is not on solo");

    // The prompts' tool mirror fills the channel's version.
    let called = production.request(
        "tools/call",
        json!({"name": "get_prompt", "arguments": {"name": "greet"}}),
    );
    assert!(called.to_string().contains("Hello v1"), "{called}");
    assert!(!called.to_string().contains("Hello v2"), "{called}");
    let provenance = &called["result"]["_meta"]["promptshelf/provenance"];
    assert_eq!(
        (&provenance["label"], &provenance["version"]),
        (&json!("production"), &json!(v1))
    );
    let listed = production.request(
        "tools/call",
        json!({"name": "list_prompts", "arguments": {}}),
    );
    assert!(listed.to_string().contains("greet"), "{listed}");

    // A stateless 2026-07-28 request on the same channel.
    let mut modern = Server::start(&ctx.db, &["--channel", "staging"]);
    let got = modern.modern("prompts/get", json!({"name": "greet"}));
    assert_eq!(
        got["result"]["messages"][0]["content"]["text"], "Hello v2",
        "{got}"
    );
    assert_eq!(
        got["result"]["_meta"]["promptshelf/provenance"]["label"],
        "staging"
    );
    let listed = modern.modern("prompts/list", json!({}));
    let names: Vec<&str> = listed["result"]["prompts"]
        .as_array()
        .expect("prompts")
        .iter()
        .filter_map(|prompt| prompt["name"].as_str())
        .collect();
    assert!(names.contains(&"greet") && !names.is_empty(), "{listed}");
    let solo_names = prompt_names(&mut solo);
    assert_eq!(solo_names, vec!["write-tests".to_string()]);
}
