//! `promptshelf serve` over real pipes, in both eras, on the seed library: every method, the
//! values it answers, every message validated against the official schema of the revision
//! in use, and bad input answered with the right error while the server keeps serving.

use base64::Engine;
use serde_json::{Value, json};

use crate::common::{LEGACY, MODERN, Server, TestContext, modern_params, validate};

/// Validates a whole message and, for a result, its body as `definition`.
fn check(revision: &str, message: &Value, definition: &str) {
    validate(revision, "JSONRPCMessage", message);
    if let Some(result) = message.get("result") {
        validate(revision, definition, result);
    }
}

fn result(message: &Value) -> &Value {
    message
        .get("result")
        .unwrap_or_else(|| panic!("expected a result, got {message}"))
}

fn error_code(message: &Value) -> i64 {
    message["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("expected an error, got {message}"))
}

fn seed_file(path: &str) -> Vec<u8> {
    std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("seed")
            .join(path),
    )
    .expect("seed file")
}

#[test]
fn discover_describes_the_server_without_a_handshake() {
    let ctx = TestContext::new();
    let mut server = ctx.server();
    let response = server.modern("server/discover", json!({}));
    check(MODERN, &response, "DiscoverResult");
    let result = result(&response);
    assert_eq!(result["supportedVersions"], json!([MODERN]));
    assert_eq!(result["resultType"], "complete");
    assert!(result["capabilities"]["prompts"].is_object());
    assert!(result["capabilities"]["completions"].is_object());
    assert!(result["capabilities"].get("tools").is_none());
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "promptshelf"
    );
    assert!(result["ttlMs"].as_u64().is_some());
    assert_eq!(result["cacheScope"], "public");
    assert!(
        result["instructions"]
            .as_str()
            .unwrap_or("")
            .contains("8 prompt")
    );
    // A probe without `_meta` (a dual-era client checking what we are) gets the same answer.
    let probe = server.request("server/discover", json!({}));
    check(MODERN, &probe, "DiscoverResult");
    assert_eq!(server.close(), Some(0));
}

#[test]
fn modern_lists_page_through_every_item_with_hints() {
    let ctx = TestContext::new();
    let mut server = Server::start(&ctx.db, &["--page-size", "3"]);
    let mut names = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let params = match &cursor {
            Some(cursor) => json!({"cursor": cursor}),
            None => json!({}),
        };
        let response = server.modern("prompts/list", params);
        check(MODERN, &response, "ListPromptsResult");
        let result = result(&response);
        assert!(result["ttlMs"].as_u64().is_some(), "{result}");
        assert_eq!(result["cacheScope"], "public");
        let page = result["prompts"].as_array().expect("prompts");
        assert!(page.len() <= 3);
        names.extend(
            page.iter()
                .map(|p| p["name"].as_str().unwrap_or("").to_string()),
        );
        match result.get("nextCursor").and_then(Value::as_str) {
            Some(next) => cursor = Some(next.to_string()),
            None => break,
        }
    }
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted, "a deterministic order: by name");
    assert_eq!(names, crate::common::SEED_PROMPTS);

    let response = server.modern("prompts/list", json!({}));
    let first = &result(&response)["prompts"][0];
    assert_eq!(first["title"], "API design review");
    let spec = &first["arguments"][0];
    assert_eq!(
        (spec["name"].as_str(), spec["required"].as_bool()),
        (Some("spec"), Some(true))
    );
    assert!(
        first["_meta"]["promptshelf/contentHash"]
            .as_str()
            .is_some_and(|h| h.len() == 64)
    );

    let mut server = ctx.server();
    let response = server.modern("resources/list", json!({}));
    check(MODERN, &response, "ListResourcesResult");
    let resources = result(&response)["resources"]
        .as_array()
        .expect("resources")
        .clone();
    let png = resources
        .iter()
        .find(|r| r["uri"] == "shelf://library/images/layers.png")
        .expect("the PNG is listed");
    assert_eq!(png["mimeType"], "image/png");
    assert_eq!(png["size"], json!(seed_file("images/layers.png").len()));
    let guide = resources
        .iter()
        .find(|r| r["uri"] == "shelf://library/guides/testing.md")
        .expect("a guide is listed");
    assert_eq!(guide["mimeType"], "text/markdown");
    assert!(
        guide["annotations"]["lastModified"]
            .as_str()
            .is_some_and(|t| t.ends_with('Z'))
    );

    let response = server.modern("resources/templates/list", json!({}));
    check(MODERN, &response, "ListResourceTemplatesResult");
    // The built-in search template heads the first page, then the library's own.
    assert_eq!(
        result(&response)["resourceTemplates"][0]["uriTemplate"],
        "shelf://search/{query}"
    );
    assert_eq!(
        result(&response)["resourceTemplates"][1]["uriTemplate"],
        "shelf://library/{+path}"
    );
}

#[test]
fn modern_reads_text_and_binary_resources() {
    let ctx = TestContext::new();
    let mut server = ctx.server();
    let response = server.modern(
        "resources/read",
        json!({"uri": "shelf://library/reference/http-status-codes.txt"}),
    );
    check(MODERN, &response, "ReadResourceResult");
    let contents = &result(&response)["contents"][0];
    assert_eq!(contents["mimeType"], "text/plain");
    assert_eq!(
        contents["text"].as_str().map(str::as_bytes),
        Some(&seed_file("reference/http-status-codes.txt")[..])
    );
    assert!(result(&response)["ttlMs"].as_u64().is_some());
    assert!(
        contents["_meta"]["promptshelf/lastModified"]
            .as_str()
            .is_some_and(|t| t.ends_with('Z'))
    );
    assert!(
        contents["_meta"]["promptshelf/contentHash"]
            .as_str()
            .is_some_and(|h| h.len() == 64)
    );

    let response = server.modern(
        "resources/read",
        json!({"uri": "shelf://library/images/layers.png"}),
    );
    check(MODERN, &response, "ReadResourceResult");
    let blob = result(&response)["contents"][0]["blob"]
        .as_str()
        .expect("a blob");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(blob)
        .expect("base64");
    assert_eq!(bytes, seed_file("images/layers.png"));

    // The same resource spelt differently resolves through the collection's template.
    let response = server.modern(
        "resources/read",
        json!({"uri": "shelf://library/guides%2Ftesting.md"}),
    );
    check(MODERN, &response, "ReadResourceResult");
    assert_eq!(
        result(&response)["contents"][0]["uri"],
        "shelf://library/guides/testing.md"
    );

    let response = server.modern("resources/read", json!({"uri": "shelf://library/nope.md"}));
    check(MODERN, &response, "JSONRPCErrorResponse");
    assert_eq!(error_code(&response), -32602);
    assert_eq!(response["error"]["data"]["uri"], "shelf://library/nope.md");
}

#[test]
fn modern_prompts_render_text_embeds_links_images_and_roles() {
    let ctx = TestContext::new();
    let mut server = ctx.server();
    let response = server.modern(
        "prompts/get",
        json!({"name": "summarize", "arguments": {"text": "The quick brown fox.", "length": "short"}}),
    );
    check(MODERN, &response, "GetPromptResult");
    let messages = result(&response)["messages"]
        .as_array()
        .expect("messages")
        .clone();
    let all_text: String = messages
        .iter()
        .filter_map(|m| m["content"]["text"].as_str())
        .collect();
    assert!(all_text.contains("The quick brown fox."), "{all_text}");

    let response = server.modern(
        "prompts/get",
        json!({"name": "api-design-review", "arguments": {"spec": "GET /users"}}),
    );
    check(MODERN, &response, "GetPromptResult");
    let messages = result(&response)["messages"]
        .as_array()
        .expect("messages")
        .clone();
    let types: Vec<&str> = messages
        .iter()
        .filter_map(|m| m["content"]["type"].as_str())
        .collect();
    assert!(
        types.contains(&"resource") && types.contains(&"resource_link"),
        "{types:?}"
    );
    let embedded = messages
        .iter()
        .find(|m| m["content"]["type"] == "resource")
        .expect("embed");
    assert_eq!(
        embedded["content"]["resource"]["uri"],
        "shelf://library/guides/api-design.md"
    );
    assert_eq!(
        embedded["content"]["resource"]["text"]
            .as_str()
            .map(str::len),
        Some(
            std::str::from_utf8(&seed_file("guides/api-design.md"))
                .ok()
                .and_then(|t| t.split("\n---\n").nth(1))
                .map(str::len)
                .unwrap_or(0)
        )
    );
    let link = messages
        .iter()
        .find(|m| m["content"]["type"] == "resource_link")
        .expect("link");
    assert_eq!(
        link["content"]["uri"],
        "shelf://library/reference/http-status-codes.txt"
    );
    assert_eq!(link["content"]["mimeType"], "text/plain");

    let response = server.modern(
        "prompts/get",
        json!({"name": "architecture-diagram", "arguments": {"system": "a shop"}}),
    );
    check(MODERN, &response, "GetPromptResult");
    let image = result(&response)["messages"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["content"]["type"] == "image"))
        .expect("an image block")
        .clone();
    assert_eq!(image["content"]["mimeType"], "image/png");

    let response = server.modern(
        "prompts/get",
        json!({"name": "debug-error", "arguments": {"error": "E0502"}}),
    );
    check(MODERN, &response, "GetPromptResult");
    let roles: Vec<&str> = result(&response)["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter_map(|m| m["role"].as_str())
        .collect();
    let first_assistant = roles
        .iter()
        .position(|r| *r == "assistant")
        .expect("an assistant turn");
    assert!(roles[..first_assistant].iter().all(|r| *r == "user"));
    assert_eq!(roles.last(), Some(&"user"), "{roles:?}");
}

#[test]
fn modern_completion_ranks_and_narrows() {
    let ctx = TestContext::new();
    let mut server = ctx.server();
    let complete = |server: &mut Server,
                    reference: Value,
                    name: &str,
                    value: &str,
                    context: Value| {
        let response = server.modern(
            "completion/complete",
            json!({"ref": reference, "argument": {"name": name, "value": value}, "context": {"arguments": context}}),
        );
        check(MODERN, &response, "CompleteResult");
        result(&response)["completion"].clone()
    };
    let code_review = json!({"type": "ref/prompt", "name": "code-review"});
    let completion = complete(
        &mut server,
        code_review.clone(),
        "language",
        "py",
        json!({}),
    );
    assert_eq!(completion["values"][0], "python");

    let all = complete(&mut server, code_review.clone(), "language", "", json!({}));
    assert_eq!(all["values"].as_array().map(Vec::len), Some(100));
    assert_eq!(all["total"], 140);
    assert_eq!(all["hasMore"], true);

    let write_tests = json!({"type": "ref/prompt", "name": "write-tests"});
    let python = complete(
        &mut server,
        write_tests.clone(),
        "framework",
        "",
        json!({"language": "python"}),
    );
    let rust = complete(
        &mut server,
        write_tests,
        "framework",
        "",
        json!({"language": "rust"}),
    );
    assert!(
        python["values"]
            .as_array()
            .is_some_and(|v| v.contains(&json!("pytest")))
    );
    assert!(
        !rust["values"]
            .as_array()
            .is_some_and(|v| v.contains(&json!("pytest"))),
        "{rust}"
    );

    let template = json!({"type": "ref/resource", "uri": "shelf://library/{+path}"});
    let paths = complete(&mut server, template, "path", "gu", json!({}));
    let values = paths["values"].as_array().expect("values");
    assert_eq!(values.len(), 5, "{paths}");
    assert!(
        values
            .iter()
            .all(|v| v.as_str().is_some_and(|v| v.starts_with("guides/")))
    );
}

#[test]
fn legacy_sessions_get_their_revisions_shapes() {
    for revision in LEGACY {
        let ctx = TestContext::new();
        let mut server = ctx.server();
        let response = server.initialize(revision);
        check(revision, &response, "InitializeResult");
        assert_eq!(result(&response)["protocolVersion"], revision);
        assert_eq!(result(&response)["serverInfo"]["name"], "promptshelf");

        let response = server.request("ping", json!({}));
        check(revision, &response, "EmptyResult");
        assert_eq!(result(&response), &json!({}));

        let response = server.request("prompts/list", json!({}));
        check(revision, &response, "ListPromptsResult");
        let result_body = result(&response);
        assert!(result_body.get("resultType").is_none() && result_body.get("ttlMs").is_none());
        let first = &result_body["prompts"][0];
        assert_eq!(
            first.get("title").is_some(),
            revision >= "2025-06-18",
            "{revision}: {first}"
        );

        let response = server.request(
            "prompts/get",
            json!({"name": "api-design-review", "arguments": {"spec": "x"}}),
        );
        check(revision, &response, "GetPromptResult");
        let types: Vec<String> = result(&response)["messages"]
            .as_array()
            .expect("messages")
            .iter()
            .filter_map(|m| m["content"]["type"].as_str().map(String::from))
            .collect();
        assert_eq!(
            types.contains(&"resource_link".to_string()),
            revision >= "2025-06-18",
            "{revision}: {types:?}"
        );

        for (method, definition) in [
            ("resources/list", "ListResourcesResult"),
            ("resources/templates/list", "ListResourceTemplatesResult"),
        ] {
            let response = server.request(method, json!({}));
            check(revision, &response, definition);
        }
        let response = server.request(
            "resources/read",
            json!({"uri": "shelf://library/images/layers.png"}),
        );
        check(revision, &response, "ReadResourceResult");
        let response = server.request(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "summarize"}, "argument": {"name": "length", "value": "s"}}),
        );
        check(revision, &response, "CompleteResult");
        assert_eq!(result(&response)["completion"]["values"][0], "short");

        let response = server.request("resources/read", json!({"uri": "shelf://library/missing"}));
        validate(revision, "JSONRPCMessage", &response);
        assert_eq!(error_code(&response), -32002);
        assert_eq!(response["error"]["data"]["uri"], "shelf://library/missing");
        assert_eq!(server.close(), Some(0));
    }
}

#[test]
fn an_unknown_legacy_version_gets_our_newest() {
    let ctx = TestContext::new();
    let mut server = ctx.server();
    let response = server.initialize("2023-01-01");
    assert_eq!(result(&response)["protocolVersion"], LEGACY[0]);
}

#[test]
fn modern_requests_stay_stateless_after_initialize() {
    let ctx = TestContext::new();
    let mut server = ctx.server();
    server.initialize("2024-11-05");
    let response = server.modern("prompts/list", json!({}));
    check(MODERN, &response, "ListPromptsResult");
    assert_eq!(result(&response)["resultType"], "complete");
    assert!(result(&response)["prompts"][0].get("title").is_some());
    let legacy = server.request("prompts/list", json!({}));
    assert!(result(&legacy)["prompts"][0].get("title").is_none());
}

#[test]
fn bad_input_is_answered_and_the_server_keeps_serving() {
    let ctx = TestContext::new();
    let mut server = Server::start(&ctx.db, &["--max-line", "4096"]);
    let expect = |server: &mut Server, raw: &[u8], code: i64, id: Value| {
        server.send_raw(raw);
        let message = server.next_message();
        validate(MODERN, "JSONRPCMessage", &message);
        assert_eq!(
            error_code(&message),
            code,
            "for {}: {message}",
            String::from_utf8_lossy(raw)
        );
        // An unreadable id is left out (MCP has no null id); indexing a missing key gives null.
        assert_eq!(message["id"], id);
        assert!(
            message["error"]["message"]
                .as_str()
                .is_some_and(|m| m.len() > 10)
        );
        // Still serving.
        let ok = server.modern("prompts/list", json!({}));
        assert!(
            ok.get("result").is_some(),
            "after {}: {ok}",
            String::from_utf8_lossy(raw)
        );
    };
    expect(&mut server, b"{not json\n", -32700, Value::Null);
    expect(&mut server, b"[1,2,3]\n", -32600, Value::Null);
    expect(&mut server, b"\"just a string\"\n", -32600, Value::Null);
    expect(
        &mut server,
        b"{\"jsonrpc\":\"1.0\",\"id\":7,\"method\":\"ping\"}\n",
        -32600,
        json!(7),
    );
    expect(
        &mut server,
        b"{\"jsonrpc\":\"2.0\",\"id\":8}\n",
        -32600,
        json!(8),
    );
    expect(&mut server, b"\xff\xfe{}\n", -32700, Value::Null);
    let mut oversized =
        b"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\",\"params\":{\"pad\":\"".to_vec();
    oversized.extend(std::iter::repeat_n(b'x', 10_000));
    oversized.extend(b"\"}}\n");
    expect(&mut server, &oversized, -32600, Value::Null);

    let modern = |method: &str, params: Value, id: i64| -> Vec<u8> {
        let mut line = serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": modern_params(params, json!({}))})).expect("json");
        line.push(b'\n');
        line
    };
    expect(
        &mut server,
        &modern("tools/list", json!({}), 10),
        -32601,
        json!(10),
    );
    expect(
        &mut server,
        &modern("prompts/get", json!({"name": 5}), 11),
        -32602,
        json!(11),
    );
    expect(
        &mut server,
        &modern("prompts/get", json!({"name": "nope"}), 12),
        -32602,
        json!(12),
    );
    expect(
        &mut server,
        &modern("prompts/get", json!({"name": "summarize"}), 13),
        -32602,
        json!(13),
    );
    expect(
        &mut server,
        &modern(
            "prompts/get",
            json!({"name": "summarize", "arguments": {"text": "x", "length": "huge"}}),
            14,
        ),
        -32602,
        json!(14),
    );
    expect(
        &mut server,
        &modern("prompts/list", json!({"cursor": "garbage"}), 15),
        -32602,
        json!(15),
    );
    expect(
        &mut server,
        b"{\"jsonrpc\":\"2.0\",\"id\":16,\"method\":\"prompts/list\",\"params\":{\"_meta\":{\"io.modelcontextprotocol/clientCapabilities\":{}}}}\n",
        -32602,
        json!(16),
    );
    expect(
        &mut server,
        b"{\"jsonrpc\":\"2.0\",\"id\":17,\"method\":\"prompts/list\",\"params\":{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"1999-01-01\",\"io.modelcontextprotocol/clientCapabilities\":{}}}}\n",
        -32022,
        json!(17),
    );
    expect(
        &mut server,
        b"{\"jsonrpc\":\"2.0\",\"id\":18,\"method\":\"prompts/list\"}\n",
        -32600,
        json!(18),
    );

    // The messages say what to do.
    let unknown = server.modern("prompts/get", json!({"name": "nope"}));
    let message = unknown["error"]["message"].as_str().unwrap_or("");
    assert!(
        message.contains("'nope'") && message.contains("code-review"),
        "{message}"
    );
    let missing = server.modern("prompts/get", json!({"name": "summarize"}));
    assert!(
        missing["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("'text'"),
        "{missing}"
    );
    let unsupported = server.request("prompts/list", json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2099-01-01", "io.modelcontextprotocol/clientCapabilities": {}}}));
    assert_eq!(unsupported["error"]["data"]["supported"], json!([MODERN]));
    assert_eq!(unsupported["error"]["data"]["requested"], "2099-01-01");

    // A notification is never answered, not even an unknown one: the next line answers id 99.
    server.send(&json!({"jsonrpc": "2.0", "method": "notifications/whatever", "params": {}}));
    server.send(&json!({"jsonrpc": "2.0", "method": "tools/list"}));
    server.send(&json!({"jsonrpc": "2.0", "id": 99, "method": "prompts/list", "params": modern_params(json!({}), json!({}))}));
    assert_eq!(server.next_message()["id"], 99);
    assert_eq!(server.close(), Some(0));
}

#[test]
fn a_stale_cursor_is_refused() {
    let ctx = TestContext::new();
    let mut server = Server::start(&ctx.db, &["--page-size", "2"]);
    let first = server.modern("resources/list", json!({}));
    let cursor = result(&first)["nextCursor"]
        .as_str()
        .expect("a cursor")
        .to_string();
    drop(server);
    // Change the library under the cursor, then use it with a new server.
    let conn = crate::common::open_library(&ctx.db);
    conn.execute(
        "UPDATE resources SET title = 'changed', content_hash = zeroblob(32) WHERE uri = 'shelf://library/guides/testing.md'",
        [],
    )
    .expect("update");
    drop(conn);
    let mut server = Server::start(&ctx.db, &["--page-size", "2"]);
    let response = server.modern("resources/list", json!({"cursor": cursor}));
    assert_eq!(error_code(&response), -32602);
    assert!(
        response["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("changed"),
        "{response}"
    );
}

#[test]
fn missing_arguments_are_asked_for_when_the_client_can_answer_forms() {
    let ctx = TestContext::new();
    let mut server = ctx.server();
    let elicit = json!({"elicitation": {"form": {}}});
    let ask = |server: &mut Server, params: Value| {
        let response = server.request("prompts/get", modern_params(params, elicit.clone()));
        validate(MODERN, "JSONRPCMessage", &response);
        response
    };
    let first = ask(
        &mut server,
        json!({"name": "write-tests", "arguments": {"cases": "5"}}),
    );
    validate(MODERN, "InputRequiredResult", result(&first));
    let first = result(&first).clone();
    assert_eq!(first["resultType"], "input_required");
    let form = &first["inputRequests"]["arguments"];
    assert_eq!(form["method"], "elicitation/create");
    validate(MODERN, "ElicitRequestFormParams", &form["params"]);
    assert_eq!(
        form["params"]["requestedSchema"]["required"],
        json!(["code"])
    );
    let state = first["requestState"].as_str().expect("state").to_string();

    // Declining ends the request with a clear error.
    let declined = ask(
        &mut server,
        json!({"name": "write-tests", "inputResponses": {"arguments": {"action": "decline"}}, "requestState": state}),
    );
    assert_eq!(error_code(&declined), -32602);

    // A tampered or misplaced state is refused.
    let mut tampered = state.clone();
    tampered.insert(0, 'A');
    let refused = ask(
        &mut server,
        json!({"name": "write-tests", "inputResponses": {"arguments": {"action": "accept", "content": {"code": "fn f() {}"}}}, "requestState": tampered}),
    );
    assert_eq!(error_code(&refused), -32602);
    let elsewhere = ask(
        &mut server,
        json!({"name": "summarize", "inputResponses": {"arguments": {"action": "accept", "content": {"text": "x"}}}, "requestState": state}),
    );
    assert_eq!(error_code(&elsewhere), -32602);
    assert!(
        elsewhere["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("write-tests")
    );

    // An accepted answer renders, with the earlier argument kept, and is not cacheable.
    let done = ask(
        &mut server,
        json!({"name": "write-tests", "inputResponses": {"arguments": {"action": "accept", "content": {"code": "fn answer() -> u8 { 42 }"}}}, "requestState": state}),
    );
    check(MODERN, &done, "GetPromptResult");
    assert_eq!(result(&done)["resultType"], "complete");
    assert_eq!(result(&done)["ttlMs"], 0);
    let text: String = result(&done)["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter_map(|m| m["content"]["text"].as_str())
        .collect();
    assert!(
        text.contains("fn answer() -> u8 { 42 }") && text.contains('5'),
        "{text}"
    );

    // Without the capability, the same request is an error naming the argument.
    let plain = server.modern("prompts/get", json!({"name": "write-tests"}));
    assert_eq!(error_code(&plain), -32602);
    assert!(
        plain["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("'code'")
    );
}

#[test]
fn stdin_closing_ends_the_server_cleanly() {
    let ctx = TestContext::new();
    let mut server = ctx.server();
    server.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "prompts/list", "params": modern_params(json!({}), json!({}))}));
    assert_eq!(server.close(), Some(0));
}

/// A resource big enough that reading it takes far longer than answering a small request.
fn add_big_resource(ctx: &TestContext) -> &'static str {
    const URI: &str = "shelf://test/big.bin";
    let bytes: Vec<u8> = (0..40 * 1024 * 1024u32).map(|n| (n % 251) as u8).collect();
    let path = ctx.write("big.bin", bytes);
    ctx.add_resource(&path, URI);
    URI
}

#[test]
fn a_slow_request_does_not_hold_up_a_fast_one_and_cancelled_ones_stay_silent() {
    let ctx = TestContext::new();
    let uri = add_big_resource(&ctx);
    let mut server = ctx.server();
    let request = |id: &str, method: &str, params: Value| json!({"jsonrpc": "2.0", "id": id, "method": method, "params": modern_params(params, json!({}))});
    server.send(&request("slow", "resources/read", json!({"uri": uri})));
    server.send(&request("fast", "prompts/list", json!({})));
    let first = server.next_message();
    assert_eq!(first["id"], "fast", "the small request was answered first");
    let slow = server.next_message();
    assert_eq!(slow["id"], "slow");
    assert!(
        slow["result"]["contents"][0]["blob"]
            .as_str()
            .is_some_and(|b| b.len() > 50_000_000)
    );

    server.send(&request("cancel-me", "resources/read", json!({"uri": uri})));
    server.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "cancel-me", "reason": "changed my mind"}}));
    server.send(&request("after", "prompts/list", json!({})));
    only_after_is_answered(server, "nothing may be sent for a cancelled request");
}

/// Closes the server's input and checks that the request `after` is the only one answered
/// after that point (`why`: what the failure means).
fn only_after_is_answered(server: Server, why: &str) {
    let (messages, code) = server.close_and_collect();
    assert_eq!(code, Some(0));
    let ids: Vec<&Value> = messages.iter().map(|m| &m["id"]).collect();
    assert_eq!(ids, [&json!("after")], "{why}");
}

/// Lines that arrive together go to the pool in batches; a batch answers what a point read
/// can at once, and a slow request on a task of its own, so it holds up none of them. A
/// request cancelled before it was handed over is dropped unanswered.
#[test]
fn requests_read_together_are_answered_in_batches_and_a_slow_one_holds_up_none() {
    let ctx = TestContext::new();
    let big = add_big_resource(&ctx);
    let folder = ctx.many_notes();
    ctx.ok(&["import", &folder]);
    let mut server = ctx.server();
    let read = |id: &str, uri: &str| {
        let request = json!({"jsonrpc": "2.0", "id": id, "method": "resources/read", "params": modern_params(json!({"uri": uri}), json!({}))});
        let mut line = serde_json::to_vec(&request).expect("serialize");
        line.push(b'\n');
        line
    };
    let mut lines = read("slow", big);
    for n in 0..40 {
        lines.extend(read(
            &format!("page-{n}"),
            &format!("shelf://notes/page-{n}.md"),
        ));
    }
    server.send_raw(&lines);
    let mut answered = Vec::new();
    for _ in 0..41 {
        let message = server.next_message();
        let id = message["id"].as_str().expect("an id").to_string();
        if let Some(n) = id.strip_prefix("page-") {
            assert_eq!(
                message["result"]["contents"][0]["text"],
                format!("# Page {n}\n\nText {n}.\n"),
                "{message}"
            );
        }
        answered.push(id);
    }
    assert_eq!(
        answered.last().map(String::as_str),
        Some("slow"),
        "every small read is answered before the slow one: {answered:?}"
    );
    answered.sort();
    answered.dedup();
    assert_eq!(answered.len(), 41, "each request is answered once");

    // A read and its cancellation in one write (atomic on a pipe, so read together): the
    // read waits to be handed over when the cancellation comes, and is never answered.
    let mut lines = read("cancelled", "shelf://notes/page-300.md");
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "cancelled"}});
    lines.extend(serde_json::to_vec(&cancel).expect("serialize"));
    lines.push(b'\n');
    lines.extend(read("after", "shelf://notes/page-301.md"));
    server.send_raw(&lines);
    only_after_is_answered(server, "nothing is sent for the cancelled read");
}

#[test]
fn repeated_gets_answer_alike_and_a_slow_prompt_never_holds_up_a_quick_one() {
    let ctx = TestContext::new();
    let doc = ctx.write("doc.md", "the embedded document\n");
    ctx.add_resource(&doc, "shelf://t/doc.md");
    let quick = ctx.write(
        "quick.prompt.md",
        "---\nname: quick\narguments:\n  - name: word\n    required: true\n---\nSay {{ word }}.\n{{ embed('shelf://t/doc.md') }}\n",
    );
    // About ten milliseconds of template work: far longer than a quick prompt's answer.
    let slow = ctx.write(
        "slow.prompt.md",
        "---\nname: slow\n---\n{% for i in range(600) %}{% for j in range(200) %}{% endfor %}{% endfor %}done\n",
    );
    for prompt in [&quick, &slow] {
        ctx.ok(&["prompt", "add", &prompt.display().to_string()]);
    }
    // A pinned clock: answers to the same request are then the same bytes.
    let mut server =
        Server::start_with_env(&ctx.db, &[], &[("PROMPTSHELF_NOW_MS", "1800000000000")]);
    let get = |server: &mut Server, name: &str, word: Option<&str>| {
        let arguments = word.map_or(json!({}), |word| json!({"word": word}));
        let response = server.modern("prompts/get", json!({"name": name, "arguments": arguments}));
        check(MODERN, &response, "GetPromptResult");
        result(&response).clone()
    };
    // The first answer is filled on the pool; the next ones may come from memory on the
    // reader thread. Either way they are the same, and follow the arguments.
    let first = get(&mut server, "quick", Some("hello"));
    assert_eq!(first["messages"][0]["content"]["text"], "Say hello.");
    assert_eq!(
        first["messages"][1]["content"]["resource"]["text"],
        "the embedded document\n"
    );
    for _ in 0..3 {
        assert_eq!(get(&mut server, "quick", Some("hello")), first);
    }
    let other = get(&mut server, "quick", Some("there"));
    assert_eq!(other["messages"][0]["content"]["text"], "Say there.");

    // Once seen to be slow, a prompt stays on the pool: a quick get sent after it is
    // answered first.
    assert_eq!(
        get(&mut server, "slow", None)["messages"][0]["content"]["text"],
        "done"
    );
    let request = |id: &str, name: &str, arguments: Value| json!({"jsonrpc": "2.0", "id": id, "method": "prompts/get", "params": modern_params(json!({"name": name, "arguments": arguments}), json!({}))});
    server.send(&request("slow", "slow", json!({})));
    server.send(&request("quick", "quick", json!({"word": "hello"})));
    let answered_first = server.next_message();
    assert_eq!(answered_first["id"], "quick", "{answered_first}");
    assert_eq!(answered_first["result"], first);
    assert_eq!(server.next_message()["id"], "slow");

    // A change to the embedded document is served once the server has seen it.
    std::fs::write(&doc, "a new version\n").expect("edit the document");
    ctx.add_resource(&doc, "shelf://t/doc.md");
    server.eventually(json!("a new version\n"), |server| {
        get(server, "quick", Some("hello"))["messages"][1]["content"]["resource"]["text"].clone()
    });
    assert_eq!(server.close(), Some(0));
}

#[test]
fn serving_never_writes_the_database() {
    let ctx = TestContext::new();
    ctx.ok(&["stats"]);
    let before = std::fs::read(&ctx.db).expect("read the database");
    let mut server = ctx.server();
    server.initialize("2025-06-18");
    for method in ["prompts/list", "resources/list", "resources/templates/list"] {
        assert!(server.request(method, json!({})).get("result").is_some());
        assert!(server.modern(method, json!({})).get("result").is_some());
    }
    let got = server.modern(
        "prompts/get",
        json!({"name": "summarize", "arguments": {"text": "x"}}),
    );
    assert!(got.get("result").is_some(), "{got}");
    assert_eq!(server.close(), Some(0));
    let after = std::fs::read(&ctx.db).expect("read the database");
    assert!(
        before == after,
        "the database file changed while it was only served"
    );
}

#[test]
fn a_running_server_sees_what_another_process_commits() {
    let ctx = TestContext::new();
    let prompt = ctx.write("greet.prompt.md", "Hello.\n");
    let quote = ctx.write("quote.prompt.md", "{{ embed('shelf://t/doc.md') }}\n");
    let doc = ctx.write("doc.md", "first version\n");
    // The resource first: `prompt add` refuses an embed of one the library does not hold.
    ctx.add_resource(&doc, "shelf://t/doc.md");
    ctx.ok(&["prompt", "add", &quote.display().to_string()]);
    ctx.ok(&["prompt", "add", &prompt.display().to_string()]);
    let mut server = ctx.server();
    let count = |server: &mut Server| {
        let list = server.modern("prompts/list", json!({}));
        result(&list)["prompts"].as_array().map(Vec::len)
    };
    let text = |server: &mut Server| {
        let read = server.modern("resources/read", json!({"uri": "shelf://t/doc.md"}));
        result(&read)["contents"][0]["text"]
            .as_str()
            .map(String::from)
    };
    let quoted = |server: &mut Server| {
        let got = server.modern("prompts/get", json!({"name": "quote"}));
        result(&got)["messages"][0]["content"]["resource"]["text"]
            .as_str()
            .map(String::from)
    };
    let greeting = |server: &mut Server| {
        let got = server.modern("prompts/get", json!({"name": "greet"}));
        result(&got)["messages"][0]["content"]["text"]
            .as_str()
            .map(String::from)
    };
    // Asked twice, so the second answer may come from what the server keeps.
    for _ in 0..2 {
        assert_eq!(count(&mut server), Some(10));
        assert_eq!(text(&mut server).as_deref(), Some("first version\n"));
        assert_eq!(quoted(&mut server).as_deref(), Some("first version\n"));
        assert_eq!(greeting(&mut server).as_deref(), Some("Hello."));
    }
    std::fs::write(&prompt, "Goodbye.\n").expect("edit the prompt");
    std::fs::write(&doc, "second version\n").expect("edit the document");
    let other = ctx.write("other.prompt.md", "Another.\n");
    ctx.ok(&["prompt", "add", &prompt.display().to_string()]);
    ctx.ok(&["prompt", "add", &other.display().to_string()]);
    ctx.add_resource(&doc, "shelf://t/doc.md");
    // Seen at the server's next poll of the database.
    server.eventually(Some(11), count);
    server.eventually(Some("second version\n".to_string()), text);
    server.eventually(Some("second version\n".to_string()), quoted);
    server.eventually(Some("Goodbye.".to_string()), greeting);
}

/// A deterministic generator (proptest's, from a fixed seed), so a failure reproduces.
struct Random(proptest::test_runner::TestRng);

impl Random {
    fn seeded() -> Random {
        Random(proptest::test_runner::TestRng::deterministic_rng(
            proptest::test_runner::RngAlgorithm::ChaCha,
        ))
    }

    fn next(&mut self) -> u64 {
        proptest::prelude::Rng::next_u64(&mut self.0)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }

    /// Any JSON value, a few levels deep, its strings often names the library knows.
    fn json(&mut self, depth: usize) -> Value {
        const WORDS: [&str; 12] = [
            "code-review",
            "language",
            "code",
            "shelf://library/guides/testing.md",
            "shelf://library/images/layers.png",
            "ref/prompt",
            "ref/resource",
            "",
            "\u{1e}0:0\u{1e}",
            "{{ 7*7 }}",
            "é✓🦀",
            "2026-07-28",
        ];
        match self.below(if depth == 0 { 5 } else { 7 }) {
            0 => Value::Null,
            1 => json!(self.below(2) == 0),
            2 => json!(self.next() as i64),
            3 => json!(self.pick(&WORDS)),
            4 => json!(f64::from(self.below(1000) as u32) / 7.0),
            5 => Value::Array((0..self.below(4)).map(|_| self.json(depth - 1)).collect()),
            _ => {
                let mut object = serde_json::Map::new();
                for _ in 0..self.below(5) {
                    let key = self.pick(&[
                        "name",
                        "arguments",
                        "uri",
                        "ref",
                        "argument",
                        "value",
                        "type",
                        "cursor",
                        "context",
                        "_meta",
                        "requestState",
                        "inputResponses",
                        "protocolVersion",
                        "capabilities",
                        "notifications",
                        "requestId",
                    ]);
                    object.insert(key.to_string(), self.json(depth - 1));
                }
                Value::Object(object)
            }
        }
    }
}

/// Hundreds of malformed, mistyped and half-right messages in a row: every answer is JSON,
/// the server still answers the next good request, and it exits cleanly at the end.
#[test]
fn a_storm_of_bad_messages_leaves_the_server_serving() {
    const METHODS: [&str; 14] = [
        "server/discover",
        "initialize",
        "ping",
        "prompts/list",
        "prompts/get",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "completion/complete",
        "resources/subscribe",
        "resources/unsubscribe",
        "subscriptions/listen",
        "tools/call",
        "notifications/cancelled",
    ];
    let ctx = TestContext::new();
    let mut server = ctx.server();
    let mut random = Random::seeded();
    let mut asked = Vec::new();
    for n in 0..600 {
        let line = match random.below(4) {
            // Bytes that are rarely JSON (no newline: that would end the line early).
            0 => (0..random.below(120))
                .map(|_| match random.next() as u8 {
                    b'\n' => b' ',
                    byte => byte,
                })
                .collect::<Vec<u8>>(),
            // A request of any method with params of any shape, modern or not.
            _ => {
                let method = random.pick(&METHODS);
                let mut params = random.json(3);
                if random.below(2) == 0 {
                    params = modern_params(
                        if params.is_object() {
                            params
                        } else {
                            json!({})
                        },
                        random.json(2),
                    );
                }
                let mut message = json!({"jsonrpc": "2.0", "method": method, "params": params});
                if random.below(5) > 0 {
                    message["id"] = json!(n);
                    asked.push(n);
                }
                serde_json::to_vec(&message).expect("serialize")
            }
        };
        let mut line = line;
        line.push(b'\n');
        server.send_raw(&line);
    }
    // A string id, which no message of the storm used.
    let last = json!("after the storm");
    server.send(&json!({
        "jsonrpc": "2.0",
        "id": last,
        "method": "server/discover",
        "params": modern_params(json!({}), json!({})),
    }));
    let good = server.response_to(&last);
    assert!(good.get("result").is_some(), "{good}");
    let (messages, code) = server.close_and_collect();
    assert_eq!(code, Some(0), "the server exits cleanly");
    for id in asked {
        assert!(
            messages.iter().any(|message| message["id"] == json!(id)),
            "request {id} got no answer"
        );
    }
}

/// The raw lines `serve` writes for `input`, stdin closed after it (a parsed `Value` would
/// round a big number, so the text itself is checked).
fn raw_answers(ctx: &TestContext, input: &str) -> Vec<String> {
    use std::io::Write;
    let mut child = ctx
        .command(&["serve"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        // Kept with the output (shown if serve fails), not passed to the terminal.
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start promptshelf serve");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(input.as_bytes()).expect("write to server");
    drop(stdin);
    let output = child.wait_with_output().expect("serve ends");
    assert!(output.status.success(), "serve failed: {output:?}");
    String::from_utf8(output.stdout)
        .expect("UTF-8")
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn ids_are_echoed_exactly_as_sent_whatever_their_size() {
    let ctx = TestContext::new();
    let big = "18446744073709551616";
    let bigger = "123456789012345678901234567890123456789";
    let escaped = r#""a\u0062c""#;
    let meta = format!(
        r#""_meta":{{"io.modelcontextprotocol/protocolVersion":"{MODERN}","io.modelcontextprotocol/clientCapabilities":{{}}}}"#
    );
    let request = |id: &str, method: &str, params: &str| {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{{meta}{params}}}}}"#)
            + "\n"
    };
    let input = request(big, "prompts/list", "")
        + &request(bigger, "prompts/get", r#","name":"no-such-prompt""#)
        + &request(escaped, "prompts/list", "")
        + &request("1e400", "ping", "")
        + &request("1.5", "ping", "");
    // Streams: one under a big id stays open until stdin closes; one whose id has an
    // escape is cancelled by the same string written plainly, so it is never closed.
    let listen = |id: &str| {
        request(
            id,
            "subscriptions/listen",
            r#","notifications":{"promptsListChanged":true}"#,
        )
    };
    let input = input
        + &listen("18446744073709551617")
        + &listen(r#""s\u0031""#)
        + r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"s1"}}"#
        + "\n";
    let lines = raw_answers(&ctx, &input);
    let stream = "\"io.modelcontextprotocol/subscriptionId\":18446744073709551617";
    assert_eq!(
        lines.iter().filter(|line| line.contains(stream)).count(),
        2,
        "the big stream's acknowledgement and closing answer: {lines:#?}"
    );
    assert!(
        lines
            .iter()
            .any(|line| line.contains("\"id\":18446744073709551617,")),
        "{lines:#?}"
    );
    assert!(
        !lines.iter().any(|line| line.contains("\"id\":\"s")),
        "a cancelled stream gets no closing answer: {lines:#?}"
    );
    let answer_to = |id: &str| {
        lines
            .iter()
            .find(|line| line.contains(&format!("\"id\":{id},")))
            .unwrap_or_else(|| panic!("no answer carries the id {id} as sent: {lines:#?}"))
    };
    assert!(answer_to(big).contains("\"result\""));
    assert!(answer_to(bigger).contains("\"error\""));
    assert!(answer_to(escaped).contains("\"result\""));
    // JSON-RPC ids are strings or integers: a number that is not an integer is refused
    // -32600, under the id as it was sent.
    for id in ["1e400", "1.5"] {
        let answer = answer_to(id);
        assert!(answer.contains(r#""error":{"code":-32600,"#), "{answer}");
        assert!(answer.contains("string or an integer"), "{answer}");
    }
}

#[test]
fn a_request_state_ttl_over_a_day_is_refused() {
    let ctx = TestContext::new();
    let error = ctx.fails(&["serve", "--request-state-ttl", "18446744073709551615"]);
    assert!(
        error.contains("--request-state-ttl") && error.contains("86400"),
        "{error}"
    );
    let error = ctx.fails(&["serve", "--request-state-ttl", "86401"]);
    assert!(
        error.contains("--request-state-ttl") && error.contains("86400"),
        "{error}"
    );
}
