//! Prompt rendering over the real server and CLI: typed arguments accepted and refused with
//! a useful sentence, values never evaluated as template code, embeds and links as the right
//! content blocks, several messages in order, and the whole elicitation round trip.

use serde_json::{Value, json};

use crate::common::{MODERN, Server, TestContext, modern_params, validate};

const TYPED: &str = r#"---
name: typed
description: Every argument type
arguments:
  - name: word
    pattern: "[a-z]+"
    max_length: 5
  - name: level
    type: enum
    values: [low, high]
  - name: count
    type: integer
    min: 1
    max: 10
  - name: ratio
    type: number
    min: 0
    max: 1
  - name: strict
    type: boolean
  - name: due
    type: date
  - name: site
    type: uri
---
word={{ word }} level={{ level }} count={{ count }} ratio={{ ratio }} due={{ due }} site={{ site }}
{% if strict %}STRICT{% else %}LENIENT{% endif %}
"#;

fn get(server: &mut Server, name: &str, arguments: Value) -> Value {
    let response = server.modern("prompts/get", json!({"name": name, "arguments": arguments}));
    validate(MODERN, "JSONRPCMessage", &response);
    if let Some(result) = response.get("result") {
        validate(MODERN, "GetPromptResult", result);
    }
    response
}

fn text_of(response: &Value) -> String {
    response["result"]["messages"]
        .as_array()
        .unwrap_or_else(|| panic!("no messages in {response}"))
        .iter()
        .filter_map(|m| m["content"]["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

fn add_prompt(ctx: &TestContext, file: &str, text: &str) {
    let path = ctx.write(file, text);
    ctx.ok(&["prompt", "add", &path.display().to_string()]);
}

/// Stores the prompt of the prompt file `file` through the store's own write path, without
/// the checks `prompt add` and `import` make: a broken prompt as an older version could have
/// stored it, for what serving and `check` make of one.
fn store_unchecked(ctx: &TestContext, file: &str, text: &str) {
    use promptshelf::library::{self, Collection, Item};
    use promptshelf::store::{self, Access, Store};
    let collection = Collection {
        name: "local".into(),
        scheme: library::DEFAULT_SCHEME.into(),
    };
    let Ok(Some(Item::Prompt(mut prompt))) =
        library::parse_file(&collection, file, text.as_bytes())
    else {
        panic!("{file} does not read as a prompt");
    };
    prompt.origin = Default::default();
    let store = Store::open(&ctx.db, Access::ReadWrite, promptshelf::seed::load).expect("open");
    store
        .write(|tx| store::write::put_prompt(tx, &prompt, store::now_ms()))
        .expect("store the prompt");
}

#[test]
fn each_argument_type_is_accepted_and_refused_with_a_useful_sentence() {
    let ctx = TestContext::new();
    add_prompt(&ctx, "typed.prompt.md", TYPED);
    let mut server = ctx.server();
    let good = get(
        &mut server,
        "typed",
        json!({"word": "abc", "level": "high", "count": "10", "ratio": "0.5", "strict": "no", "due": "2025-02-28", "site": "https://example.com/x"}),
    );
    let text = text_of(&good);
    assert!(
        text.contains(
            "word=abc level=high count=10 ratio=0.5 due=2025-02-28 site=https://example.com/x"
        ),
        "{text}"
    );
    // "no" is a real false inside the template.
    assert!(text.contains("LENIENT"), "{text}");
    let yes = get(&mut server, "typed", json!({"strict": "yes"}));
    assert!(text_of(&yes).contains("STRICT"));

    let refused = [
        ("word", "ABC", "matching the pattern"),
        ("word", "abcdef", "at most 5 characters"),
        ("level", "medium", "one of: low, high"),
        ("count", "11", "integer from 1 to 10"),
        ("count", "2.5", "integer from 1 to 10"),
        ("ratio", "abc", "number from 0 to 1"),
        ("strict", "maybe", "true or false"),
        ("due", "2025-02-30", "a date as YYYY-MM-DD"),
        ("site", "not a uri", "an absolute URI"),
    ];
    for (name, value, expected) in refused {
        let response = get(&mut server, "typed", json!({ name: value }));
        assert_eq!(
            response["error"]["code"], -32602,
            "{name}={value}: {response}"
        );
        let message = response["error"]["message"].as_str().unwrap_or("");
        assert!(
            message.contains(&format!("argument '{name}'"))
                && message.contains(expected)
                && message.contains("e.g."),
            "{name}={value}: {message}"
        );
    }
    let unknown = get(&mut server, "typed", json!({"colour": "red"}));
    assert_eq!(unknown["error"]["code"], -32602);
    let message = unknown["error"]["message"].as_str().unwrap_or("");
    assert!(
        message.contains("'colour'") && message.contains("word"),
        "{message}"
    );

    // prompts/list tells a person what to type.
    let list = server.modern("prompts/list", json!({}));
    let typed = list["result"]["prompts"]
        .as_array()
        .and_then(|p| p.iter().find(|p| p["name"] == "typed"))
        .expect("listed")
        .clone();
    let count = typed["arguments"]
        .as_array()
        .and_then(|a| a.iter().find(|a| a["name"] == "count"))
        .expect("count")
        .clone();
    assert!(
        count["description"]
            .as_str()
            .unwrap_or("")
            .contains("integer from 1 to 10"),
        "{count}"
    );
    assert_eq!(
        count["_meta"]["promptshelf/type"],
        json!({"type": "integer", "minimum": 1, "maximum": 10})
    );
}

/// A pattern that is not a regular expression is the library's fault, not the request's:
/// -32603 naming the prompt and the pattern, the server keeps serving, `check` reports it.
#[test]
fn an_invalid_stored_pattern_is_the_librarys_fault() {
    let ctx = TestContext::new();
    store_unchecked(
        &ctx,
        "broken.prompt.md",
        "---\nname: broken\narguments:\n  - name: word\n    pattern: \"([a-z\"\n---\nword={{ word }}\n",
    );
    let mut server = ctx.server();
    for _ in 0..2 {
        let response = get(&mut server, "broken", json!({"word": "abc"}));
        assert_eq!(response["error"]["code"], -32603, "{response}");
        let message = response["error"]["message"].as_str().unwrap_or("");
        assert!(
            message.contains("prompt 'broken'")
                && message.contains("([a-z")
                && message.contains("promptshelf check"),
            "{message}"
        );
    }
    // Without a value there is nothing to check, and the prompt renders.
    let empty = get(&mut server, "broken", json!({}));
    assert!(text_of(&empty).contains("word="), "{empty}");
    server.close();
    let report = ctx.run(&["check"]);
    let stdout = String::from_utf8_lossy(&report.stdout);
    assert!(
        !report.status.success() && stdout.contains("invalid pattern ([a-z"),
        "{}",
        crate::common::describe(&["check"], &report, "check flags the pattern")
    );
}

#[test]
fn values_are_never_evaluated_as_template_code() {
    let ctx = TestContext::new();
    let mut server = ctx.server();
    let attack = "{{ 7 * 7 }} {% for x in range(3) %}loop{% endfor %} {{ embed('shelf://library/images/layers.png') }}";
    let response = get(&mut server, "summarize", json!({"text": attack}));
    let text = text_of(&response);
    assert!(text.contains(attack), "{text}");
    assert!(!text.contains("49") && !text.contains("looploop"));
    let blocks: Vec<&str> = response["result"]["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter_map(|m| m["content"]["type"].as_str())
        .collect();
    assert!(blocks.iter().all(|b| *b == "text"), "{blocks:?}");
}

#[test]
fn embeds_become_resource_image_and_audio_blocks_and_links_resource_links() {
    let ctx = TestContext::new();
    let wav: Vec<u8> = b"RIFF\x24\x00\x00\x00WAVEfmt "
        .iter()
        .copied()
        .chain([0u8; 24])
        .collect();
    let bin: Vec<u8> = (0u8..=255).collect();
    for (file, bytes, uri) in [
        ("sound.wav", wav.clone(), "shelf://t/sound.wav"),
        ("data.bin", bin.clone(), "shelf://t/data.bin"),
    ] {
        let path = ctx.write(file, bytes);
        ctx.add_resource(&path, uri);
    }
    add_prompt(
        &ctx,
        "blocks.prompt.md",
        "---\narguments:\n  - name: page\n---\nIntro.\n{{ embed('shelf://library/guides/testing.md') }}\nMiddle.\n{{ embed('shelf://library/images/layers.png') }}\n{{ embed('shelf://t/sound.wav') }}\n{{ embed('shelf://t/data.bin') }}\n{{ link('shelf://library/guides/' ~ page) }}\n<!-- assistant -->\nNoted.\n<!-- user -->\nGo on.\n",
    );
    let mut server = ctx.server();
    let response = get(&mut server, "blocks", json!({"page": "api-design.md"}));
    let messages = response["result"]["messages"]
        .as_array()
        .expect("messages")
        .clone();
    let shape: Vec<(String, String)> = messages
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap_or("").to_string(),
                m["content"]["type"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    let expected: Vec<(String, String)> = [
        ("user", "text"),
        ("user", "resource"),
        ("user", "text"),
        ("user", "image"),
        ("user", "audio"),
        ("user", "resource"),
        ("user", "resource_link"),
        ("assistant", "text"),
        ("user", "text"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(shape, expected);
    assert_eq!(
        messages[1]["content"]["resource"]["mimeType"],
        "text/markdown"
    );
    assert!(
        messages[1]["content"]["resource"]["text"]
            .as_str()
            .is_some()
    );
    assert_eq!(messages[3]["content"]["mimeType"], "image/png");
    assert_eq!(messages[4]["content"]["mimeType"], "audio/wav");
    let blob = messages[5]["content"]["resource"]["blob"]
        .as_str()
        .expect("a blob");
    use base64::Engine;
    assert_eq!(
        base64::engine::general_purpose::STANDARD.decode(blob).ok(),
        Some(bin)
    );
    assert_eq!(
        messages[6]["content"]["uri"],
        "shelf://library/guides/api-design.md"
    );
    assert_eq!(
        messages[6]["content"]["title"],
        "HTTP API design guidelines"
    );
    assert_eq!(messages[7]["content"]["text"], "Noted.");

    // A URI built from an argument that names nothing is the caller's mistake.
    let missing = get(&mut server, "blocks", json!({"page": "nope.md"}));
    assert_eq!(missing["error"]["code"], -32602);
    assert!(
        missing["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("shelf://library/guides/nope.md")
    );

    // Older revisions get a faithful stand-in for what they lack.
    let mut legacy = ctx.server();
    legacy.initialize("2024-11-05");
    let old = legacy.request(
        "prompts/get",
        json!({"name": "blocks", "arguments": {"page": "api-design.md"}}),
    );
    validate("2024-11-05", "GetPromptResult", &old["result"]);
    let old_types: Vec<&str> = old["result"]["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter_map(|m| m["content"]["type"].as_str())
        .collect();
    assert_eq!(
        old_types,
        [
            "text", "resource", "text", "image", "text", "resource", "text", "text", "text"
        ]
    );
    assert!(
        old["result"]["messages"][6]["content"]["text"]
            .as_str()
            .unwrap_or("")
            .contains("shelf://library/guides/api-design.md")
    );
}

#[test]
fn elicitation_asks_again_until_everything_is_there_and_state_expires() {
    const T0: i64 = 1_800_000_000_000;
    let ctx = TestContext::new();
    ctx.ok(&["stats"]);
    let elicit = json!({"elicitation": {}});
    let at = |now: i64| {
        Server::start_with_env(
            &ctx.db,
            &["--request-state-ttl", "60"],
            &[("PROMPTSHELF_NOW_MS", &now.to_string())],
        )
    };
    let mut server = at(T0);
    let ask = |server: &mut Server, params: Value| {
        let response = server.request("prompts/get", modern_params(params, elicit.clone()));
        validate(MODERN, "JSONRPCMessage", &response);
        response
    };
    let first = ask(&mut server, json!({"name": "code-review"}));
    validate(MODERN, "InputRequiredResult", &first["result"]);
    let schema = &first["result"]["inputRequests"]["arguments"]["params"]["requestedSchema"];
    assert_eq!(schema["required"], json!(["code"]));
    let state = first["result"]["requestState"]
        .as_str()
        .expect("state")
        .to_string();

    // Accepting without the required field asks again, keeping what was given.
    let again = ask(
        &mut server,
        json!({"name": "code-review", "arguments": {"focus": "security"}, "inputResponses": {"arguments": {"action": "accept", "content": {}}}, "requestState": state}),
    );
    assert_eq!(again["result"]["resultType"], "input_required", "{again}");
    let state = again["result"]["requestState"]
        .as_str()
        .expect("state")
        .to_string();

    // A value of the wrong type in the form is refused like an argument.
    let wrong = ask(
        &mut server,
        json!({"name": "code-review", "inputResponses": {"arguments": {"action": "accept", "content": {"code": 42}}}, "requestState": state}),
    );
    assert_eq!(wrong["error"]["code"], -32602);

    let done = ask(
        &mut server,
        json!({"name": "code-review", "inputResponses": {"arguments": {"action": "accept", "content": {"code": "let x = 1;"}}}, "requestState": state}),
    );
    validate(MODERN, "GetPromptResult", &done["result"]);
    let text = text_of(&done);
    assert!(
        text.contains("let x = 1;") && text.contains("security"),
        "{text}"
    );
    assert_eq!(done["result"]["ttlMs"], 0);

    // A state answers once: the one that completed the prompt, and the first one (which
    // asked again), are refused when sent again, however often.
    let first_state = first["result"]["requestState"].as_str().expect("state");
    for replayed in [state.as_str(), state.as_str(), first_state] {
        let replay = ask(
            &mut server,
            json!({"name": "code-review", "inputResponses": {"arguments": {"action": "accept", "content": {"code": "let y = 2;"}}}, "requestState": replayed}),
        );
        assert_eq!(replay["error"]["code"], -32602, "{replay}");
        let message = replay["error"]["message"].as_str().unwrap_or("");
        assert!(
            message.contains("already used") && message.contains("without requestState"),
            "{replay}"
        );
    }

    // The same state a minute and a bit later has expired; cancel ends the request.
    let mut later = at(T0 + 61_000);
    let expired = ask(
        &mut later,
        json!({"name": "code-review", "inputResponses": {"arguments": {"action": "accept", "content": {"code": "x"}}}, "requestState": state}),
    );
    assert_eq!(expired["error"]["code"], -32602);
    assert!(
        expired["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("expired"),
        "{expired}"
    );
    let fresh = ask(&mut later, json!({"name": "code-review"}));
    let fresh_state = fresh["result"]["requestState"]
        .as_str()
        .expect("state")
        .to_string();
    let cancelled = ask(
        &mut later,
        json!({"name": "code-review", "inputResponses": {"arguments": {"action": "cancel"}}, "requestState": fresh_state}),
    );
    assert_eq!(cancelled["error"]["code"], -32602);
}

#[test]
fn prompt_render_previews_what_a_host_gets() {
    let ctx = TestContext::new();
    let human = ctx.ok(&[
        "prompt",
        "render",
        "api-design-review",
        "--arg",
        "spec=GET /orders",
    ]);
    assert!(
        human.contains("--- user") && human.contains("GET /orders"),
        "{human}"
    );
    assert!(
        human.contains("[embedded shelf://library/guides/api-design.md"),
        "{human}"
    );
    assert!(
        human.contains("[link shelf://library/reference/http-status-codes.txt"),
        "{human}"
    );
    let json = ctx.json(&[
        "prompt",
        "render",
        "api-design-review",
        "--arg",
        "spec=GET /orders",
        "--json",
    ]);
    validate(MODERN, "GetPromptResult", &json);
    let mut server = ctx.server();
    let served = server.modern(
        "prompts/get",
        json!({"name": "api-design-review", "arguments": {"spec": "GET /orders"}}),
    );
    assert_eq!(json["messages"], served["result"]["messages"]);

    let error = ctx.fails(&["prompt", "render", "summarize"]);
    assert!(error.contains("'text'"), "{error}");
    let error = ctx.fails(&["prompt", "render", "summarize", "--arg", "text"]);
    assert!(error.contains("NAME=VALUE"), "{error}");
}

#[test]
fn check_reports_broken_prompts_and_templates() {
    let ctx = TestContext::new();
    let clean = ctx.run(&["check"]);
    assert!(
        clean.status.success(),
        "{}",
        crate::common::describe(&["check"], &clean, "the seed should check clean")
    );
    store_unchecked(
        &ctx,
        "broken.prompt.md",
        "---\narguments:\n  - name: lang\n    completion: no-such-table\n  - name: n\n    type: integer\n    default: many\n---\n{{ embed('shelf://nowhere/x.md') }}\n",
    );
    store_unchecked(&ctx, "syntax.prompt.md", "Hello {% if %}\n");
    ctx.ok(&[
        "template",
        "add",
        "shelf://x/{id}",
        "--name",
        "x",
        "--complete",
        "id=missing-table",
    ]);
    let before = ctx.fails(&["check"]);
    assert!(before.contains("problems"), "{before}");
    let output = ctx.run(&["check"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    for expected in [
        "prompt 'broken': argument 'lang' completes from table 'no-such-table'",
        "prompt 'broken': the default of argument 'n' does not fit",
        "prompt 'broken': refers to shelf://nowhere/x.md",
        "prompt 'syntax': message 1, line 1: the template does not parse",
        "template 'shelf://x/{id}': variable 'id' completes from table 'missing-table'",
    ] {
        assert!(
            stdout.contains(expected),
            "missing «{expected}» in:\n{stdout}"
        );
    }
    let json = ctx.run(&["check", "--json"]);
    let problems: Value = serde_json::from_slice(&json.stdout).expect("JSON");
    assert_eq!(problems.as_array().map(Vec::len), Some(5), "{problems}");
}

#[test]
fn an_argument_over_the_size_limit_is_the_request_s_fault_and_running_out_of_fuel_the_library_s() {
    let ctx = TestContext::new();
    add_prompt(
        &ctx,
        "echo.prompt.md",
        "---\nname: echo\narguments:\n  - name: text\n    required: true\n---\n{{ text }} {{ text }} {{ text }} {{ text }} {{ text }}\n",
    );
    // `prompt add` refuses a prompt that runs out of fuel with sample values.
    store_unchecked(
        &ctx,
        "busy.prompt.md",
        "---\nname: busy\n---\n{% for i in range(2000) %}{% for j in range(1000) %}{% endfor %}{% endfor %}done\n",
    );
    let big = "x".repeat(2 * 1024 * 1024);

    let mut server = Server::start(&ctx.db, &[]);
    let refused = get(&mut server, "echo", json!({"text": big}));
    assert_eq!(refused["error"]["code"], -32602, "{}", refused["error"]);
    let message = refused["error"]["message"].as_str().unwrap_or("");
    assert!(
        message.contains("'text'") && message.contains("1048576"),
        "{message}"
    );
    // Within the limit it renders, five times over.
    let fine = get(
        &mut server,
        "echo",
        json!({"text": "y".repeat(1024 * 1024)}),
    );
    assert_eq!(
        text_of(&fine).len(),
        5 * 1024 * 1024 + 4,
        "{}",
        fine["error"]
    );
    // A template that does more work than a render may is the library's fault.
    let busy = get(&mut server, "busy", json!({}));
    assert_eq!(busy["error"]["code"], -32603, "{busy}");
    let message = busy["error"]["message"].as_str().unwrap_or("");
    assert!(message.contains("'busy'"), "{message}");
    assert_eq!(server.close(), Some(0));

    // The limit is the server's to set.
    // (Five copies of 2 MiB are over the default limit on a rendered prompt, 8 MiB.)
    let mut server = Server::start(
        &ctx.db,
        &[
            "--max-argument-bytes",
            "4194304",
            "--max-prompt-bytes",
            "16777216",
        ],
    );
    let allowed = get(&mut server, "echo", json!({"text": big}));
    assert_eq!(
        text_of(&allowed).len(),
        5 * big.len() + 4,
        "{}",
        allowed["error"]
    );
    assert_eq!(server.close(), Some(0));
}

/// A ~100 KB resource and prompts that would make one answer unbounded: one embed's marker
/// repeated 20,000 times, an embed in a loop of 20,000, a hundred embeds (10 MB), and
/// 10 MB of plain text.
fn oversized_library(ctx: &TestContext) {
    let line = "A line of a large reference document, repeated to make it about 100 KB.\n";
    let big = ctx.write("big.md", line.repeat(100 * 1024 / line.len()));
    ctx.add_resource(&big, "shelf://t/big.md");
    for (name, body) in [
        ("repeated", "{{ embed('shelf://t/big.md') * 20000 }}"),
        (
            "looped",
            "{% for i in range(20000) %}{{ embed('shelf://t/big.md') }}{% endfor %}",
        ),
        (
            "wide",
            "{% for i in range(100) %}{{ embed('shelf://t/big.md') }}{% endfor %}",
        ),
        ("small", "Just {{ embed('shelf://t/big.md') }} once."),
        // 10 MB of text, no embed at all.
        (
            "chatty",
            "{% for i in range(200) %}{{ 'x' * 50000 }}{% endfor %}",
        ),
    ] {
        add_prompt(
            ctx,
            &format!("{name}.prompt.md"),
            &format!("---\nname: {name}\n---\n{body}\n"),
        );
    }
}

#[test]
fn a_prompt_rendering_past_the_size_limits_is_the_library_s_fault_and_memory_stays_bounded() {
    let ctx = TestContext::new();
    oversized_library(&ctx);
    let mut server = ctx.server();
    for (name, limit, flag) in [
        ("repeated", "1000 content blocks", "--max-prompt-blocks"),
        ("looped", "1000 content blocks", "--max-prompt-blocks"),
        ("wide", "8388608 bytes", "--max-prompt-bytes"),
        ("chatty", "8388608 bytes", "--max-prompt-bytes"),
    ] {
        let started = std::time::Instant::now();
        let refused = get(&mut server, name, json!({}));
        let took = started.elapsed();
        assert_eq!(refused["error"]["code"], -32603, "{name}: {refused:.300}");
        let message = refused["error"]["message"].as_str().unwrap_or("");
        assert!(
            message.contains(&format!("'{name}'"))
                && message.contains(limit)
                && message.contains(flag),
            "{message}"
        );
        assert!(
            took < std::time::Duration::from_secs(5),
            "{name} took {took:?}"
        );
        // The server goes on serving.
        let fine = get(&mut server, "small", json!({}));
        assert_eq!(
            fine["result"]["messages"].as_array().map(Vec::len),
            Some(3),
            "{fine:.300}"
        );
    }
    let peak = server.peak_rss_kib();
    eprintln!("serve's peak RSS after the oversized prompts: {peak} KiB");
    assert!(peak < 256 * 1024, "serve's peak RSS was {peak} KiB");
    assert_eq!(server.close(), Some(0));

    // The CLI's preview has the same limits.
    let error = ctx.fails(&["prompt", "render", "repeated"]);
    assert!(
        error.contains("'repeated'") && error.contains("1000 content blocks"),
        "{error}"
    );
}

#[test]
fn the_prompt_size_limits_are_the_server_s_to_set() {
    let ctx = TestContext::new();
    oversized_library(&ctx);
    // Raised: a hundred embeds of 100 KB are served.
    let mut server = Server::start(&ctx.db, &["--max-prompt-bytes", "16777216"]);
    let wide = get(&mut server, "wide", json!({}));
    assert_eq!(
        wide["result"]["messages"].as_array().map(Vec::len),
        Some(100),
        "{wide:.300}"
    );
    assert_eq!(server.close(), Some(0));

    // Lowered: one embed of 100 KB is too many bytes, three blocks too many blocks.
    for (flags, limit) in [
        (["--max-prompt-bytes", "65536"], "65536 bytes"),
        (["--max-prompt-blocks", "2"], "2 content blocks"),
    ] {
        let mut server = Server::start(&ctx.db, &flags);
        let refused = get(&mut server, "small", json!({}));
        assert_eq!(refused["error"]["code"], -32603, "{refused:.300}");
        let message = refused["error"]["message"].as_str().unwrap_or("");
        assert!(
            message.contains("'small'") && message.contains(limit) && message.contains(flags[0]),
            "{message}"
        );
        let listed = server.modern("prompts/list", json!({}));
        assert!(
            listed["result"]["prompts"].is_array(),
            "still serving: {listed:.300}"
        );
        assert_eq!(server.close(), Some(0));
    }
}
