//! Tool mirrors over real pipes (`serve --tools`): the tools each mirror offers, their
//! results validated against each revision's schema, their order, tool errors and protocol
//! errors, the capability declared only when mirrors are on; and forms and tool inputs
//! laid out in the order a prompt declares its arguments.

use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};

use crate::common::{LEGACY, MODERN, Server, TestContext, WAIT, modern_params, validate};

const BOTH: &str = "--tools=prompts,resources";
const GUIDE: &str = "shelf://library/guides/api-design.md";
const ALL_TOOLS: [&str; 4] = [
    "list_prompts",
    "get_prompt",
    "list_resources",
    "read_resource",
];

/// Every revision, newest first.
fn revisions() -> impl Iterator<Item = &'static str> {
    std::iter::once(MODERN).chain(LEGACY)
}

fn at_least(revision: &str, since: &str) -> bool {
    // Revisions are dates: their text sorts as they do.
    revision >= since
}

/// A server with `flags`, spoken to in `revision`: a legacy one after its `initialize`.
/// Returns it and the capabilities its handshake declared (validated).
fn open(ctx: &TestContext, flags: &[&str], revision: &str) -> (Server, Value) {
    let (server, handshake) = handshake(ctx, flags, revision);
    (server, handshake["capabilities"].clone())
}

/// A server with `flags` and the result of its handshake in `revision` (validated).
fn handshake(ctx: &TestContext, flags: &[&str], revision: &str) -> (Server, Value) {
    let mut server = Server::start(&ctx.db, flags);
    let response = if revision == MODERN {
        let response = server.modern("server/discover", json!({}));
        validate(MODERN, "DiscoverResult", &response["result"]);
        response
    } else {
        let response = server.initialize(revision);
        validate(revision, "InitializeResult", &response["result"]);
        response
    };
    (server, response["result"].clone())
}

/// A request in `revision`'s way: modern `_meta`, or plain params in a legacy session.
fn ask(server: &mut Server, revision: &str, method: &str, params: Value) -> Value {
    if revision == MODERN {
        server.modern(method, params)
    } else {
        server.request(method, params)
    }
}

/// A `tools/call` answered with a result, validated as `revision`'s `CallToolResult`.
fn call(server: &mut Server, revision: &str, tool: &str, arguments: Value) -> Value {
    let response = ask(
        server,
        revision,
        "tools/call",
        json!({"name": tool, "arguments": arguments}),
    );
    let result = response
        .get("result")
        .unwrap_or_else(|| panic!("{tool} in {revision}: {response}"))
        .clone();
    validate(revision, "CallToolResult", &result);
    assert_eq!(
        result.get("structuredContent").is_some(),
        at_least(revision, "2025-06-18") && result.get("isError").is_none(),
        "{revision}: {result}"
    );
    result
}

/// The sentence of a tool error.
fn tool_error(result: &Value) -> &str {
    assert_eq!(result["isError"], true, "{result}");
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no sentence in {result}"))
}

/// A prompt whose arguments are declared out of alphabetical order, of several types.
const ORDERED: &str = r#"---
name: ordered
description: Arguments in the author's order
arguments:
  - name: zeta
    title: Zeta text
    required: true
  - name: count
    type: integer
    min: 1
    max: 9
    default: "3"
  - name: mode
    type: enum
    values: [fast, slow]
    required: true
  - name: alpha
    type: integer
    min: 0
    max: 100
    required: true
  - name: word
    pattern: "[a-z]+"
---
zeta={{ zeta }} count={{ count }} mode={{ mode }} alpha={{ alpha }} word={{ word }}
"#;

fn with_ordered_prompt(ctx: &TestContext) {
    let path = ctx.write("ordered.prompt.md", ORDERED);
    ctx.ok(&["prompt", "add", &path.display().to_string()]);
}

/// JSON as it was written: objects keep their members in order (a `Value` sorts them).
#[derive(Debug)]
enum Written {
    Object(Vec<(String, Written)>),
    Array(Vec<Written>),
    Scalar,
}

impl<'de> Deserialize<'de> for Written {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Written;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("JSON")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Written, A::Error> {
                let mut members = Vec::new();
                while let Some((key, value)) = map.next_entry::<String, Written>()? {
                    members.push((key, value));
                }
                Ok(Written::Object(members))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Written, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element::<Written>()? {
                    items.push(item);
                }
                Ok(Written::Array(items))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Written, E> {
                Ok(Written::Scalar)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Written, E> {
                Ok(Written::Scalar)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Written, E> {
                Ok(Written::Scalar)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Written, E> {
                Ok(Written::Scalar)
            }
            fn visit_str<E>(self, _: &str) -> Result<Written, E> {
                Ok(Written::Scalar)
            }
            fn visit_unit<E>(self) -> Result<Written, E> {
                Ok(Written::Scalar)
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

impl Written {
    /// The member or item at `path` (object keys, or array indexes as numbers).
    fn at(&self, path: &[&str]) -> &Written {
        path.iter().fold(self, |node, step| match node {
            Written::Object(members) => members
                .iter()
                .find(|(key, _)| key == step)
                .map(|(_, value)| value)
                .unwrap_or_else(|| panic!("no member '{step}' of {path:?}")),
            Written::Array(items) => &items[step.parse::<usize>().expect("an index")],
            Written::Scalar => panic!("'{step}' of {path:?} is past a scalar"),
        })
    }

    /// The keys of the object at `path`, in the order they were written.
    fn keys(&self, path: &[&str]) -> Vec<&str> {
        match self.at(path) {
            Written::Object(members) => members.iter().map(|(key, _)| key.as_str()).collect(),
            other => panic!("{path:?} is not an object: {other:?}"),
        }
    }
}

fn written(line: &str) -> Written {
    serde_json::from_str(line).unwrap_or_else(|err| panic!("not JSON ({err}): {line}"))
}

#[test]
fn a_form_asks_for_fields_in_the_prompts_order_with_titles_and_integer_bounds() {
    let ctx = TestContext::new();
    with_ordered_prompt(&ctx);
    let mut server = ctx.server();
    let params = modern_params(
        json!({"name": "ordered", "arguments": {"word": "abc"}}),
        json!({"elicitation": {"form": {}}}),
    );
    let line = server.request_line("prompts/get", params);
    let schema_path = [
        "result",
        "inputRequests",
        "arguments",
        "params",
        "requestedSchema",
    ];
    // The missing required ones, as declared: not sorted (alpha, mode, zeta).
    let properties: Vec<&str> = [&schema_path[..], &["properties"]].concat();
    assert_eq!(
        written(&line).keys(&properties),
        ["zeta", "mode", "alpha"],
        "{line}"
    );
    let response: Value = serde_json::from_str(&line).expect("JSON");
    let result = &response["result"];
    validate(MODERN, "InputRequiredResult", result);
    let form = &result["inputRequests"]["arguments"]["params"];
    validate(MODERN, "ElicitRequestFormParams", form);
    let schema = &form["requestedSchema"];
    assert_eq!(schema["required"], json!(["zeta", "mode", "alpha"]));
    let fields = &schema["properties"];
    // Every field has a title: the author's, else the argument's name.
    assert_eq!(fields["zeta"]["title"], "Zeta text");
    assert_eq!(fields["mode"]["title"], "mode");
    assert_eq!(fields["mode"]["enum"], json!(["fast", "slow"]));
    // Integer bounds are integers, not 0.0 and 100.0.
    assert_eq!(fields["alpha"]["type"], "integer");
    assert!(fields["alpha"]["minimum"].is_i64(), "{}", fields["alpha"]);
    assert!(fields["alpha"]["maximum"].is_i64(), "{}", fields["alpha"]);
    assert_eq!(
        (&fields["alpha"]["minimum"], &fields["alpha"]["maximum"]),
        (&json!(0), &json!(100))
    );
}

#[test]
fn without_tools_there_is_no_tools_capability_and_tools_are_not_served() {
    let ctx = TestContext::new();
    for revision in revisions() {
        let (mut server, handshake) = handshake(&ctx, &[], revision);
        let capabilities = &handshake["capabilities"];
        let instructions = handshake["instructions"].as_str().expect("instructions");
        assert!(!instructions.contains("tools"), "{instructions}");
        assert!(
            capabilities.get("tools").is_none(),
            "{revision}: {capabilities}"
        );
        for method in ["tools/list", "tools/call"] {
            let response = ask(&mut server, revision, method, json!({"name": "get_prompt"}));
            assert_eq!(response["error"]["code"], -32601, "{revision}: {response}");
            let message = response["error"]["message"].as_str().expect("a message");
            assert!(
                message.contains(method) && message.contains("serve --tools"),
                "{message}"
            );
        }
    }
}

#[test]
fn every_revision_lists_the_mirrors_tools_in_order_and_answers_each() {
    let ctx = TestContext::new();
    for revision in revisions() {
        let (mut server, capabilities) = open(&ctx, &[BOTH], revision);
        assert_eq!(
            capabilities["tools"],
            json!({"listChanged": true}),
            "{revision}"
        );

        let listed = ask(&mut server, revision, "tools/list", json!({}));
        let listed = &listed["result"];
        validate(revision, "ListToolsResult", listed);
        let tools = listed["tools"].as_array().expect("tools");
        let names: Vec<&str> = tools
            .iter()
            .map(|t| t["name"].as_str().unwrap_or(""))
            .collect();
        assert_eq!(names, ALL_TOOLS, "{revision}");
        for tool in tools {
            assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
            assert!(
                tool["inputSchema"]["$schema"]
                    .as_str()
                    .is_some_and(|s| s.contains("2020-12"))
            );
            if at_least(revision, "2025-03-26") {
                assert_eq!(
                    tool["annotations"]["readOnlyHint"], true,
                    "{revision}: {tool}"
                );
            } else {
                assert!(tool.get("annotations").is_none(), "{revision}: {tool}");
            }
            let modern_fields = at_least(revision, "2025-06-18");
            assert_eq!(
                tool.get("outputSchema").is_some(),
                modern_fields,
                "{revision}: {tool}"
            );
            assert_eq!(
                tool.get("title").is_some(),
                modern_fields,
                "{revision}: {tool}"
            );
        }
        let output_schema = |name: &str| {
            let tool = tools.iter().find(|t| t["name"] == name).expect("listed");
            jsonschema::validator_for(&tool["outputSchema"]).expect("an outputSchema compiles")
        };

        // Each tool answers what the method it mirrors answers, as content and, from
        // 2025-06-18, as structuredContent that its outputSchema accepts.
        let page = call(&mut server, revision, "list_prompts", json!({}));
        let text: Value = serde_json::from_str(page["content"][0]["text"].as_str().expect("text"))
            .expect("the page as JSON text");
        let prompts = ask(&mut server, revision, "prompts/list", json!({}));
        assert_eq!(text["prompts"], prompts["result"]["prompts"], "{revision}");
        if at_least(revision, "2025-06-18") {
            assert_eq!(page["structuredContent"], text);
            assert!(output_schema("list_prompts").is_valid(&page["structuredContent"]));
        }

        let words = "The meeting moved to Tuesday.";
        let filled = call(
            &mut server,
            revision,
            "get_prompt",
            json!({"name": "summarize", "arguments": {"text": words, "length": "short"}}),
        );
        let got = ask(
            &mut server,
            revision,
            "prompts/get",
            json!({"name": "summarize", "arguments": {"text": words, "length": "short"}}),
        );
        let messages = got["result"]["messages"].as_array().expect("messages");
        let blocks: Vec<&Value> = messages.iter().map(|m| &m["content"]).collect();
        assert_eq!(
            filled["content"]
                .as_array()
                .expect("content")
                .iter()
                .collect::<Vec<_>>(),
            blocks
        );
        assert!(
            filled["content"][0]["text"]
                .as_str()
                .is_some_and(|t| t.contains(words))
        );
        if at_least(revision, "2025-06-18") {
            assert_eq!(
                filled["structuredContent"]["messages"],
                got["result"]["messages"]
            );
            assert!(output_schema("get_prompt").is_valid(&filled["structuredContent"]));
        }

        let page = call(&mut server, revision, "list_resources", json!({}));
        assert!(
            page["content"][0]["text"]
                .as_str()
                .is_some_and(|t| t.contains(GUIDE))
        );
        if at_least(revision, "2025-06-18") {
            assert!(output_schema("list_resources").is_valid(&page["structuredContent"]));
        }

        let read = call(
            &mut server,
            revision,
            "read_resource",
            json!({"uri": GUIDE}),
        );
        assert_eq!(read["content"][0]["type"], "resource", "{read}");
        assert_eq!(read["content"][0]["resource"]["uri"], GUIDE);
        if at_least(revision, "2025-06-18") {
            let contents = ask(
                &mut server,
                revision,
                "resources/read",
                json!({"uri": GUIDE}),
            );
            assert_eq!(
                read["structuredContent"]["contents"],
                contents["result"]["contents"]
            );
            assert!(output_schema("read_resource").is_valid(&read["structuredContent"]));
        }
    }
}

#[test]
fn a_bad_input_is_the_tools_error_in_the_words_of_prompts_get_and_an_unknown_tool_the_requests() {
    let ctx = TestContext::new();
    for revision in [MODERN, "2025-11-25", "2024-11-05"] {
        let (mut server, _) = open(&ctx, &[BOTH], revision);
        // The same sentence as prompts/get's -32602, for a value that does not fit, a
        // missing required argument, an unknown one and an unknown prompt.
        for arguments in [
            json!({"code": "fn f() {}", "cases": 99}),
            json!({"cases": 3}),
            json!({"code": "x", "colour": "red"}),
        ] {
            let refused = call(
                &mut server,
                revision,
                "get_prompt",
                json!({"name": "write-tests", "arguments": arguments}),
            );
            let strings: serde_json::Map<String, Value> = arguments
                .as_object()
                .expect("an object")
                .iter()
                .map(|(k, v)| {
                    (
                        k.clone(),
                        json!(v.as_str().map_or_else(|| v.to_string(), str::to_string)),
                    )
                })
                .collect();
            let direct = ask(
                &mut server,
                revision,
                "prompts/get",
                json!({"name": "write-tests", "arguments": strings}),
            );
            assert_eq!(direct["error"]["code"], -32602, "{direct}");
            assert_eq!(
                tool_error(&refused),
                direct["error"]["message"],
                "{revision}"
            );
        }
        let unknown = call(&mut server, revision, "get_prompt", json!({"name": "nope"}));
        assert!(
            tool_error(&unknown).starts_with("unknown prompt 'nope'"),
            "{unknown}"
        );
        let missing = call(
            &mut server,
            revision,
            "read_resource",
            json!({"uri": "shelf://nowhere/x"}),
        );
        assert!(
            tool_error(&missing).contains("no resource 'shelf://nowhere/x'"),
            "{missing}"
        );
        // Input that does not fit the tool's own schema says what the tool takes.
        let shapeless = call(
            &mut server,
            revision,
            "get_prompt",
            json!({"prompt": "summarize"}),
        );
        assert!(
            tool_error(&shapeless).contains("takes name and arguments"),
            "{shapeless}"
        );

        // A tool that is not there is the request's error, as the specification says.
        let response = ask(
            &mut server,
            revision,
            "tools/call",
            json!({"name": "search", "arguments": {}}),
        );
        assert_eq!(response["error"]["code"], -32602, "{response}");
        let message = response["error"]["message"].as_str().expect("a message");
        assert!(
            message.contains("unknown tool 'search'") && message.contains("read_resource"),
            "{message}"
        );
        let response = ask(
            &mut server,
            revision,
            "tools/list",
            json!({"cursor": "abc"}),
        );
        assert_eq!(response["error"]["code"], -32602, "{response}");
        // The server goes on serving.
        let listed = ask(&mut server, revision, "tools/list", json!({}));
        assert_eq!(listed["result"]["tools"].as_array().map(Vec::len), Some(4));
    }
}

#[test]
fn only_the_mirrors_asked_for_are_offered() {
    let ctx = TestContext::new();
    let (mut server, discovered) = handshake(&ctx, &["--tools", "resources"], MODERN);
    // Its tools do not change with the library.
    assert_eq!(discovered["capabilities"]["tools"], json!({}));
    let instructions = discovered["instructions"].as_str().expect("instructions");
    assert!(
        instructions.contains("through tools: list_resources and read_resource")
            && !instructions.contains("get_prompt"),
        "{instructions}"
    );
    let listed = server.modern("tools/list", json!({}));
    validate(MODERN, "ListToolsResult", &listed["result"]);
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["name"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(names, ["list_resources", "read_resource"]);
    let response = server.modern(
        "tools/call",
        json!({"name": "get_prompt", "arguments": {"name": "summarize"}}),
    );
    assert_eq!(response["error"]["code"], -32602, "{response}");

    let (mut server, capabilities) = open(&ctx, &["--tools", "prompts,prompts"], MODERN);
    assert_eq!(capabilities["tools"], json!({"listChanged": true}));
    let listed = server.modern("tools/list", json!({}));
    assert_eq!(listed["result"]["tools"].as_array().map(Vec::len), Some(2));
}

#[test]
fn the_search_mirror_finds_prompts_and_documents_by_words_in_every_revision() {
    let ctx = TestContext::new();
    for revision in revisions() {
        let (mut server, capabilities) = open(&ctx, &["--tools", "search"], revision);
        assert_eq!(capabilities["tools"], json!({}), "{revision}");
        let listed = ask(&mut server, revision, "tools/list", json!({}));
        validate(revision, "ListToolsResult", &listed["result"]);
        let names: Vec<&str> = listed["result"]["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .map(|t| t["name"].as_str().unwrap_or(""))
            .collect();
        assert_eq!(names, ["search_library"], "{revision}");
        let found = call(
            &mut server,
            revision,
            "search_library",
            json!({"query": "code review"}),
        );
        assert_eq!(found.get("isError"), None, "{revision}: {found}");
        let text = found["content"][0]["resource"]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("{revision}: no text in {found}"));
        assert!(
            text.contains("code-review")
                && text.contains("shelf://library/guides/code-review-checklist.md"),
            "{revision}: {text}"
        );
        // The same as reading the search template's URI.
        let read = ask(
            &mut server,
            revision,
            "resources/read",
            json!({"uri": "shelf://search/code%20review"}),
        );
        assert_eq!(read["result"]["contents"][0]["text"], text, "{revision}");
        let empty = call(
            &mut server,
            revision,
            "search_library",
            json!({"query": "()"}),
        );
        assert!(
            tool_error(&empty).contains("no word"),
            "{revision}: {empty}"
        );
        let other = ask(
            &mut server,
            revision,
            "tools/call",
            json!({"name": "read_resource", "arguments": {"uri": "shelf://x"}}),
        );
        assert_eq!(other["error"]["code"], -32602, "{revision}: {other}");
    }
}

#[test]
fn tools_refuses_what_it_cannot_mirror_naming_what_it_can() {
    let ctx = TestContext::new();
    let stderr = ctx.fails(&["serve", "--tools", "prompts,skills"]);
    assert!(
        stderr.contains("'skills'")
            && stderr.contains("prompts")
            && stderr.contains("resources")
            && stderr.contains("search"),
        "{stderr}"
    );
    assert!(!ctx.db.exists(), "nothing was served, or created");
}

#[test]
fn get_prompt_types_each_prompts_arguments_in_its_order() {
    let ctx = TestContext::new();
    with_ordered_prompt(&ctx);
    let mut server = Server::start(&ctx.db, &[BOTH]);
    let line = server.request_line("tools/list", modern_params(json!({}), json!({})));
    let listed: Value = serde_json::from_str(&line).expect("JSON");
    let tools = listed["result"]["tools"].as_array().expect("tools");
    let at = tools
        .iter()
        .position(|t| t["name"] == "get_prompt")
        .expect("get_prompt");
    let schema = &tools[at]["inputSchema"];
    let names = schema["properties"]["name"]["enum"]
        .as_array()
        .expect("the prompts' names");
    assert!(names.contains(&json!("ordered")) && names.contains(&json!("write-tests")));
    let branches = schema["allOf"].as_array().expect("a branch per prompt");
    let branch = branches
        .iter()
        .position(|b| b["if"]["properties"]["name"]["const"] == "ordered")
        .expect("a branch for the prompt");
    // The arguments in the author's order, as written on the wire.
    let arguments_path = [
        "result",
        "tools",
        &at.to_string(),
        "inputSchema",
        "allOf",
        &branch.to_string(),
        "then",
        "properties",
        "arguments",
    ];
    let properties: Vec<&str> = [&arguments_path[..], &["properties"]].concat();
    assert_eq!(
        written(&line).keys(&properties),
        ["zeta", "count", "mode", "alpha", "word"]
    );
    let arguments = &branches[branch]["then"]["properties"]["arguments"];
    assert_eq!(arguments["required"], json!(["zeta", "mode", "alpha"]));
    assert_eq!(arguments["additionalProperties"], false);
    let fields = &arguments["properties"];
    assert_eq!(fields["zeta"]["title"], "Zeta text");
    assert_eq!(fields["count"]["title"], "count");
    assert_eq!(
        (
            &fields["count"]["minimum"],
            &fields["count"]["maximum"],
            &fields["count"]["default"]
        ),
        (&json!(1), &json!(9), &json!(3))
    );
    assert!(fields["count"]["maximum"].is_i64());
    assert_eq!(fields["mode"]["enum"], json!(["fast", "slow"]));
    assert_eq!(fields["word"]["pattern"], "[a-z]+");
    // The description says the same in words.
    let description = tools[at]["description"].as_str().expect("a description");
    assert!(
        description.contains("- ordered: Arguments in the author's order"),
        "{description}"
    );
    assert!(
        description.contains("  - alpha (integer, required): (integer from 0 to 100)"),
        "{description}"
    );

    // A JSON Schema 2020-12 validator holds a call's input to the prompt's arguments.
    let validator = jsonschema::validator_for(schema).expect("the input schema compiles");
    let fits = json!({"name": "ordered", "arguments": {"zeta": "z", "mode": "fast", "alpha": 7}});
    assert!(validator.is_valid(&fits));
    for misfit in [
        json!({"name": "ordered", "arguments": {"zeta": "z", "mode": "fast", "alpha": 700}}),
        json!({"name": "ordered", "arguments": {"zeta": "z", "mode": "quick", "alpha": 7}}),
        json!({"name": "ordered", "arguments": {"zeta": "z", "mode": "fast"}}),
        json!({"name": "ordered", "arguments": {"zeta": "z", "mode": "fast", "alpha": 7, "word": "ABC"}}),
        json!({"name": "ordered", "arguments": {"zeta": "z", "mode": "fast", "alpha": 7, "extra": 1}}),
        json!({"name": "no-such-prompt"}),
        json!({"arguments": {}}),
    ] {
        assert!(!validator.is_valid(&misfit), "{misfit}");
    }
    // And the server holds it to them too, in the same words as prompts/get.
    let misfit = server.modern(
        "tools/call",
        json!({"name": "get_prompt", "arguments": {"name": "ordered", "arguments": {"zeta": "z", "mode": "fast", "alpha": 700}}}),
    );
    let sentence = tool_error(&misfit["result"]);
    assert!(
        sentence.contains("argument 'alpha' of prompt 'ordered' expects an integer from 0 to 100"),
        "{sentence}"
    );
    let filled = server.modern(
        "tools/call",
        json!({"name": "get_prompt", "arguments": {"name": "ordered", "arguments": {"zeta": "z", "mode": "fast", "alpha": 7, "word": null}}}),
    );
    assert_eq!(
        filled["result"]["content"][0]["text"]
            .as_str()
            .map(str::trim),
        Some("zeta=z count=3 mode=fast alpha=7 word=")
    );
}

/// The next message that is a notification of `method`, or None within `WAIT`.
fn notified(server: &mut Server, method: &str) -> Option<Value> {
    let deadline = std::time::Instant::now() + WAIT;
    while std::time::Instant::now() < deadline {
        if let Some(message) = server.read_line(Duration::from_millis(200))
            && message["method"] == method
        {
            return Some(message);
        }
    }
    None
}

#[test]
fn the_tool_list_changes_with_the_prompts_it_describes() {
    let ctx = TestContext::new();
    ctx.ok(&["stats"]);
    let add = |name: &str| {
        let path = ctx.write(
            &format!("{name}.prompt.md"),
            "---\ndescription: New\n---\nHi.\n",
        );
        ctx.ok(&["prompt", "add", &path.display().to_string()]);
    };
    // A legacy session is told, as its capability says.
    let (mut legacy, _) = open(&ctx, &[BOTH], "2025-06-18");
    add("first");
    let message = notified(&mut legacy, "notifications/tools/list_changed").expect("told");
    validate("2025-06-18", "ToolListChangedNotification", &message);
    let listed = legacy.request("tools/list", json!({}));
    assert!(
        listed["result"]["tools"][1]["description"]
            .as_str()
            .is_some_and(|d| d.contains("- first: New"))
    );

    // A modern stream is told when it asked, and only when the tools follow the prompts.
    let mut modern = Server::start(&ctx.db, &[BOTH]);
    let filter = json!({"notifications": {"toolsListChanged": true}});
    modern.send(&json!({"jsonrpc": "2.0", "id": "s", "method": "subscriptions/listen", "params": modern_params(filter.clone(), json!({}))}));
    let ack = modern.next_message();
    validate(MODERN, "SubscriptionsAcknowledgedNotification", &ack);
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true})
    );
    add("second");
    let message = notified(&mut modern, "notifications/tools/list_changed").expect("told");
    validate(MODERN, "ToolListChangedNotification", &message);
    assert_eq!(
        message["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "s"
    );

    let mut resources_only = Server::start(&ctx.db, &["--tools", "resources"]);
    resources_only.send(&json!({"jsonrpc": "2.0", "id": "r", "method": "subscriptions/listen", "params": modern_params(filter, json!({}))}));
    let ack = resources_only.next_message();
    assert_eq!(ack["params"]["notifications"], json!({}), "{ack}");
}
