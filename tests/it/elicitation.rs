//! Forms for older hosts: in a 2025-06-18 or 2025-11-25 session whose client declared
//! elicitation, a `prompts/get` that lacks required arguments sends the client an
//! `elicitation/create` of ours and is answered with what the client returns. The test plays
//! the client over the real pipes: it reads the form, checks it against the revision's
//! schema, and answers it (accept, decline, cancel, an error, nothing), or cancels.

use serde_json::{Value, json};

use crate::common::{Server, TestContext, validate};

const ASK: &str = r#"---
name: ask
description: Asks for what it lacks
arguments:
  - name: topic
    title: Topic
    required: true
  - name: tone
  - name: count
    type: integer
    min: 1
    max: 10
    required: true
---
topic={{ topic }} count={{ count }} tone={{ tone }}
"#;

/// The sentence today's `prompts/get` without the arguments gets.
const MISSING: &str = "prompt 'ask' needs the required arguments 'topic', 'count'";

fn library() -> TestContext {
    let ctx = TestContext::new();
    let path = ctx.write("ask.prompt.md", ASK);
    ctx.ok(&["prompt", "add", &path.display().to_string()]);
    ctx
}

/// A server with a legacy session of `revision` open, whose client declares `capabilities`.
fn session(ctx: &TestContext, revision: &str, capabilities: Value, extra: &[&str]) -> Server {
    let mut server = Server::start(&ctx.db, extra);
    let opened = server.initialize_with(revision, capabilities);
    assert_eq!(opened["result"]["protocolVersion"], revision, "{opened}");
    server
}

/// The capabilities of a client that takes forms.
fn elicits() -> Value {
    json!({"elicitation": {}})
}

/// Sends `prompts/get` for `ask` without arguments under `id`.
fn get_without_arguments(server: &mut Server, id: &Value) {
    server.send(
        &json!({"jsonrpc": "2.0", "id": id, "method": "prompts/get", "params": {"name": "ask"}}),
    );
}

/// The next message, which must be our form: checked against `revision`'s schema.
fn next_form(server: &mut Server, revision: &str) -> Value {
    let form = server.next_message();
    assert_eq!(form["method"], "elicitation/create", "{form}");
    validate(revision, "JSONRPCRequest", &form);
    validate(revision, "ElicitRequest", &form);
    form
}

fn answer(server: &mut Server, form: &Value, result: Value) {
    server.send(&json!({"jsonrpc": "2.0", "id": form["id"], "result": result}));
}

fn error_message(response: &Value) -> &str {
    assert_eq!(response["error"]["code"], -32602, "{response}");
    response["error"]["message"].as_str().unwrap_or("")
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

#[test]
fn an_older_host_that_declared_elicitation_gets_a_form_and_then_the_prompt() {
    let ctx = library();
    for (revision, capabilities) in [
        ("2025-06-18", json!({"elicitation": {}})),
        ("2025-11-25", json!({"elicitation": {}})),
        ("2025-11-25", json!({"elicitation": {"form": {}}})),
    ] {
        let mut server = session(&ctx, revision, capabilities, &[]);
        let id = json!(7);
        get_without_arguments(&mut server, &id);
        let form = next_form(&mut server, revision);
        let params = &form["params"];
        // The modern form's fields, in the prompt's order, only the missing ones.
        let schema = &params["requestedSchema"];
        assert_eq!(schema["required"], json!(["topic", "count"]), "{form}");
        let fields: Vec<&String> = schema["properties"]
            .as_object()
            .expect("properties")
            .keys()
            .collect();
        assert_eq!(fields.len(), 2, "{form}");
        assert_eq!(schema["properties"]["topic"]["title"], "Topic");
        assert_eq!(schema["properties"]["count"]["type"], "integer");
        assert_eq!(schema["properties"]["count"]["maximum"], 10);
        // 2025-11-25 names the mode; 2025-06-18 has none.
        assert_eq!(
            params.get("mode"),
            (revision == "2025-11-25").then(|| json!("form")).as_ref(),
            "{form}"
        );
        assert!(
            form["id"]
                .as_str()
                .is_some_and(|id| id.starts_with("promptshelf-elicitation-")),
            "{form}"
        );
        answer(
            &mut server,
            &form,
            json!({"action": "accept", "content": {"topic": "pipes", "count": 3}}),
        );
        let done = server.response_to(&id);
        validate(revision, "GetPromptResult", &done["result"]);
        let text = text_of(&done);
        assert!(text.contains("topic=pipes count=3"), "{revision}: {text}");
        // The form came first; nothing else was sent meanwhile.
        assert!(server.before_ping().is_empty());
    }
}

#[test]
fn the_form_keeps_the_prompts_order_in_the_line_itself() {
    let ctx = library();
    let mut server = session(&ctx, "2025-06-18", elicits(), &[]);
    server.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "prompts/get", "params": {"name": "ask", "arguments": {"tone": "dry"}}}));
    let line = server.next_line();
    let form: Value = serde_json::from_str(&line).expect("JSON");
    validate("2025-06-18", "ElicitRequest", &form);
    // The missing fields as the prompt declares them (topic before count), not sorted.
    let topic = line.find("\"topic\":{").expect("topic");
    let count = line.find("\"count\":{").expect("count");
    assert!(topic < count, "{line}");
    // Given arguments are not asked for again, and what was given is kept.
    assert!(
        form["params"]["requestedSchema"]["properties"]
            .get("tone")
            .is_none(),
        "{line}"
    );
    answer(
        &mut server,
        &form,
        json!({"action": "accept", "content": {"topic": "x", "count": 10}}),
    );
    let done = server.response_to(&json!(1));
    assert!(text_of(&done).contains("topic=x count=10 tone=dry"));
}

#[test]
fn a_bad_value_in_the_form_is_refused_as_the_same_argument_would_be() {
    let ctx = library();
    let mut server = session(&ctx, "2025-11-25", elicits(), &[]);
    let as_argument = server.request(
        "prompts/get",
        json!({"name": "ask", "arguments": {"topic": "x", "count": "11"}}),
    );
    let expected = error_message(&as_argument).to_string();
    assert!(expected.contains("count"), "{expected}");
    get_without_arguments(&mut server, &json!("bad"));
    let form = next_form(&mut server, "2025-11-25");
    answer(
        &mut server,
        &form,
        json!({"action": "accept", "content": {"topic": "x", "count": 11}}),
    );
    let refused = server.response_to(&json!("bad"));
    assert_eq!(error_message(&refused), expected);

    // Accepting without a required field gets today's sentence, and no second form.
    get_without_arguments(&mut server, &json!("short"));
    let form = next_form(&mut server, "2025-11-25");
    answer(
        &mut server,
        &form,
        json!({"action": "accept", "content": {"topic": "x"}}),
    );
    let short = server.response_to(&json!("short"));
    assert_eq!(
        error_message(&short),
        "prompt 'ask' needs the required argument 'count'"
    );
}

#[test]
fn decline_cancel_and_an_error_end_it_as_today() {
    let ctx = library();
    let mut server = session(&ctx, "2025-06-18", elicits(), &[]);
    let outcomes = [
        json!({"result": {"action": "decline"}}),
        json!({"result": {"action": "cancel"}}),
        json!({"error": {"code": -32603, "message": "the user closed the window"}}),
        json!({"result": {"unexpected": true}}),
    ];
    for (n, outcome) in outcomes.into_iter().enumerate() {
        let id = json!(100 + n);
        get_without_arguments(&mut server, &id);
        let form = next_form(&mut server, "2025-06-18");
        let mut reply = json!({"jsonrpc": "2.0", "id": form["id"]});
        for (key, value) in outcome.as_object().expect("object") {
            reply[key] = value.clone();
        }
        server.send(&reply);
        let ended = server.response_to(&id);
        assert_eq!(error_message(&ended), MISSING, "{outcome}");
    }
}

#[test]
fn no_answer_within_the_timeout_ends_it_as_today_and_withdraws_the_form() {
    let ctx = library();
    let mut server = session(
        &ctx,
        "2025-11-25",
        elicits(),
        &["--elicitation-timeout", "1"],
    );
    let id = json!(5);
    get_without_arguments(&mut server, &id);
    let form = next_form(&mut server, "2025-11-25");
    let ended = server.response_to(&id);
    assert_eq!(error_message(&ended), MISSING);
    // The form was withdrawn before the answer.
    let withdrawn = server.before_ping();
    assert_eq!(withdrawn.len(), 1, "{withdrawn:?}");
    validate("2025-11-25", "CancelledNotification", &withdrawn[0]);
    assert_eq!(withdrawn[0]["params"]["requestId"], form["id"]);
    // A late answer is ignored: nothing more is sent for it, and serving goes on.
    answer(
        &mut server,
        &form,
        json!({"action": "accept", "content": {"topic": "x", "count": 1}}),
    );
    let pong = server.request("ping", json!({}));
    assert_eq!(pong["result"], json!({}));
    assert!(server.before_ping().is_empty());
}

#[test]
fn a_cancelled_prompts_get_withdraws_its_form_and_is_answered_nothing() {
    let ctx = library();
    let mut server = session(&ctx, "2025-06-18", elicits(), &[]);
    let id = json!(9);
    get_without_arguments(&mut server, &id);
    let form = next_form(&mut server, "2025-06-18");
    server.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9, "reason": "changed my mind"}}));
    let withdrawn = server.next_message();
    validate("2025-06-18", "CancelledNotification", &withdrawn);
    assert_eq!(withdrawn["params"]["requestId"], form["id"]);
    // Answering the withdrawn form afterwards does nothing either.
    answer(
        &mut server,
        &form,
        json!({"action": "accept", "content": {"topic": "x", "count": 1}}),
    );
    let pong = server.request("ping", json!({}));
    assert_eq!(pong["result"], json!({}));
    let (rest, status) = server.close_and_collect();
    assert_eq!(status, Some(0));
    assert!(
        rest.iter().all(|message| message.get("id") != Some(&id)),
        "the cancelled request was answered: {rest:?}"
    );
}

#[test]
fn our_ids_are_our_own_and_each_answer_finds_its_form() {
    let ctx = library();
    let mut server = session(&ctx, "2025-11-25", elicits(), &[]);
    // The client may pick any id, even one spelled like ours: the two sides never meet.
    let first = json!("promptshelf-elicitation-1");
    let second = json!(0);
    get_without_arguments(&mut server, &first);
    let first_form = next_form(&mut server, "2025-11-25");
    get_without_arguments(&mut server, &second);
    let second_form = next_form(&mut server, "2025-11-25");
    assert_ne!(first_form["id"], second_form["id"]);
    for form in [&first_form, &second_form] {
        assert!(form["id"].is_string(), "{form}");
    }
    // Answered in the other order, each prompts/get gets its own values.
    answer(
        &mut server,
        &second_form,
        json!({"action": "accept", "content": {"topic": "second", "count": 2}}),
    );
    assert!(text_of(&server.response_to(&second)).contains("topic=second"));
    answer(
        &mut server,
        &first_form,
        json!({"action": "accept", "content": {"topic": "first", "count": 1}}),
    );
    assert!(text_of(&server.response_to(&first)).contains("topic=first"));
    // A response to no request of ours is answered nothing.
    server.send(&json!({"jsonrpc": "2.0", "id": "promptshelf-elicitation-999", "result": {"action": "accept"}}));
    server.send(&json!({"jsonrpc": "2.0", "id": 3, "error": {"code": 1, "message": "x"}}));
    let pong = server.request("ping", json!({}));
    assert_eq!(pong["result"], json!({}));
    assert!(server.before_ping().is_empty());
}

#[test]
fn input_that_ends_while_a_form_waits_ends_it_as_today() {
    let ctx = library();
    let mut server = session(&ctx, "2025-06-18", elicits(), &[]);
    let id = json!(4);
    get_without_arguments(&mut server, &id);
    let form = next_form(&mut server, "2025-06-18");
    let (rest, status) = server.close_and_collect();
    assert_eq!(status, Some(0));
    let withdrawn = rest
        .iter()
        .find(|message| message["method"] == "notifications/cancelled")
        .unwrap_or_else(|| panic!("the form was not withdrawn: {rest:?}"));
    assert_eq!(withdrawn["params"]["requestId"], form["id"]);
    let ended = rest
        .iter()
        .find(|message| message.get("id") == Some(&id))
        .unwrap_or_else(|| panic!("the prompts/get was not answered: {rest:?}"));
    assert_eq!(error_message(ended), MISSING);
}

#[test]
fn without_the_capability_or_before_2025_06_18_it_is_minus_32602_at_once() {
    let ctx = library();
    for (revision, capabilities) in [
        ("2025-06-18", json!({})),
        ("2025-11-25", json!({"elicitation": {"url": {}}})),
        ("2025-11-25", json!({"sampling": {}})),
        ("2025-03-26", json!({"elicitation": {}})),
        ("2024-11-05", json!({"elicitation": {}})),
    ] {
        let mut server = session(&ctx, revision, capabilities.clone(), &[]);
        let response = server.request("prompts/get", json!({"name": "ask"}));
        assert_eq!(
            error_message(&response),
            MISSING,
            "{revision} {capabilities}"
        );
        assert!(
            server.before_ping().is_empty(),
            "{revision} {capabilities}: a form was sent"
        );
    }
}
