//! `serve --http` against one bad caller: bodies that never come, a page that rebinds its
//! DNS name to the server (`Host`), another token's use of a legacy session id, a token
//! removed or expired while its stream is open; and what depends on who asks (`cacheScope`)
//! and a 2025-03-26 session's batches. Each test runs the real binary on a real socket.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::{TestContext, WAIT};
use crate::http::{HttpServer, Reply, token};
use crate::http_ops::{sample, scrape};

/// `host:port` of a server's base URL.
fn address(http: &HttpServer) -> String {
    http.base.trim_start_matches("http://").to_string()
}

/// Sends `request` (the whole HTTP/1.1 text) on a new connection and reads the response
/// until the server closes it: its status and body.
fn raw(http: &HttpServer, request: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(address(http)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .expect("a read timeout");
    stream.write_all(request.as_bytes()).expect("send");
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    status_and_body(&response)
}

fn status_and_body(response: &str) -> (u16, String) {
    let status = response
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP response: {response:?}"));
    let body = response
        .split_once("\r\n\r\n")
        .map_or("", |(_, body)| body)
        .to_string();
    (status, body)
}

/// `GET path` with this `Host` header, and the connection closed after it.
fn get_with_host(http: &HttpServer, path: &str, host: &str) -> (u16, String) {
    raw(
        http,
        &format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"),
    )
}

/// Waits until `/metrics` (asked with `bearer`) has counted a request refused because its
/// token held its whole share of requests at once.
fn share_held(http: &HttpServer, bearer: &str) {
    let refused = r#"promptshelf_http_guarded_total{guard="in_flight_share"}"#;
    let deadline = std::time::Instant::now() + WAIT;
    while sample(&scrape(http, Some(bearer)), refused) < 1.0 {
        assert!(
            std::time::Instant::now() < deadline,
            "no request refused over its share within {WAIT:?}\nstderr:\n{}",
            http.stderr()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn one_tokens_stalled_bodies_hold_its_share_and_another_token_is_answered() {
    let ctx = TestContext::new();
    let stalling = token(&ctx, "stalling", None);
    let other = token(&ctx, "other", None);
    let http = HttpServer::start(&ctx.db, &["--auth", "token", "--body-timeout", "5"]);
    // 300 requests of one token whose bodies never come: headers saying 200 bytes, then
    // nothing.
    let stalled: Vec<TcpStream> = (0..300)
        .map(|_| {
            let mut stream = TcpStream::connect(address(&http)).expect("connect");
            let head = format!(
                "POST /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {stalling}\r\n\
                 Content-Type: application/json\r\nContent-Length: 200\r\n\r\n",
                address(&http)
            );
            stream.write_all(head.as_bytes()).expect("send headers");
            stream
        })
        .collect();
    // Another token is answered meanwhile, at once and once the stalled bodies are seen to
    // hold the token's whole share: a client that gives up after 4 s (less than the body
    // timeout) still gets its answers.
    let impatient: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(4)))
        .build()
        .into();
    for id in 1..=2 {
        let (headers, body) = crate::http::modern_request(id, "prompts/list", json!({}));
        let mut request = impatient
            .post(http.url())
            .header("authorization", &format!("Bearer {other}"));
        for (name, value) in &headers {
            request = request.header(*name, value);
        }
        let answered = request
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .send(&body)
            .unwrap_or_else(|err| {
                panic!(
                    "another token's request {id} was not answered while one token's bodies stall: {err}\nstderr:\n{}",
                    http.stderr()
                )
            });
        let answered = crate::http::reply(answered);
        assert_eq!(answered.status, 200, "{}", answered.body);
        assert!(
            answered.json()["result"]["prompts"].is_array(),
            "{}",
            answered.body
        );
        if id == 1 {
            share_held(&http, &other);
        }
    }
    // The stalled requests each got their answer: over the token's share (64 by default)
    // at once, 429 naming the flag; the others 408 once the body timeout passed.
    let mut statuses = std::collections::BTreeMap::<u16, usize>::new();
    for mut stream in stalled {
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .expect("a read timeout");
        let mut response = String::new();
        let _ = stream.read_to_string(&mut response);
        let (status, body) = status_and_body(&response);
        match status {
            429 => assert!(body.contains("--max-in-flight-per-token"), "{body}"),
            408 => assert!(body.contains("--body-timeout"), "{body}"),
            other => panic!("a stalled request answered {other}: {body}"),
        }
        *statuses.entry(status).or_default() += 1;
    }
    assert!(
        statuses.get(&408).is_some_and(|count| *count >= 64),
        "{statuses:?}"
    );
    assert!(
        statuses.get(&429).is_some_and(|count| *count >= 1),
        "{statuses:?}"
    );
    let metrics = scrape(&http, Some(&other));
    assert_eq!(
        sample(
            &metrics,
            r#"promptshelf_http_guarded_total{guard="body_timeout"}"#
        ),
        statuses[&408] as f64
    );
    assert_eq!(
        sample(
            &metrics,
            r#"promptshelf_http_guarded_total{guard="in_flight_share"}"#
        ),
        statuses[&429] as f64
    );
}

#[test]
fn a_rebound_host_is_refused_on_every_path_and_served_names_are_not() {
    let ctx = TestContext::new();
    let http = HttpServer::start(&ctx.db, &["--allow-host", "shelf.test"]);
    let port = address(&http)
        .rsplit(':')
        .next()
        .unwrap_or_default()
        .to_string();
    // A page on evil.example whose name now resolves to 127.0.0.1: its GET carries no
    // Origin, only its own name as Host.
    for path in ["/metrics", "/healthz", "/mcp"] {
        let (status, body) = get_with_host(&http, path, &format!("evil.example:{port}"));
        assert_eq!(status, 403, "{path}: {body}");
        assert!(body.contains("Host 'evil.example:"), "{body}");
        assert!(body.contains("--allow-host"), "{body}");
    }
    let post = raw(
        &http,
        "POST /mcp HTTP/1.1\r\nHost: evil.example\r\nContent-Type: application/json\r\n\
         Content-Length: 2\r\nConnection: close\r\n\r\n{}",
    );
    assert_eq!(post.0, 403, "{}", post.1);
    for host in [
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        format!("[::1]:{port}"),
        "shelf.test".to_string(),
    ] {
        let (status, body) = get_with_host(&http, "/metrics", &host);
        assert_eq!(status, 200, "{host}: {body}");
    }
    let (status, _) = get_with_host(&http, "/metrics", "localhost");
    assert_eq!(status, 200);
    let metrics = scrape(&http, None);
    assert_eq!(
        sample(&metrics, r#"promptshelf_http_guarded_total{guard="host"}"#),
        4.0
    );
}

#[test]
fn allow_host_refuses_what_is_not_a_host_name() {
    let ctx = TestContext::new();
    let stderr = ctx.fails(&[
        "serve",
        "--http",
        "127.0.0.1:0",
        "--auth",
        "none",
        "--allow-host",
        "https://shelf.test/mcp",
    ]);
    assert!(
        stderr.contains("--allow-host 'https://shelf.test/mcp' is not a host name"),
        "{stderr}"
    );
}

/// A legacy request of `session` sent with `bearer`.
fn legacy_as(
    http: &HttpServer,
    bearer: &str,
    session: &str,
    id: i64,
    method: &str,
    params: Value,
) -> Reply {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let bearer = format!("Bearer {bearer}");
    http.post(
        &[
            ("mcp-protocol-version", "2025-11-25"),
            ("mcp-session-id", session),
            ("authorization", &bearer),
        ],
        &body.to_string(),
    )
}

#[test]
fn a_legacy_session_is_taken_only_from_the_token_that_opened_it() {
    let ctx = TestContext::new();
    let owner = token(&ctx, "owner", None);
    let intruder = token(&ctx, "intruder", None);
    let http = HttpServer::start(&ctx.db, &["--auth", "token"]);
    let body = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "promptshelf-tests", "version": "0"}}});
    let opened = http.post(
        &[("authorization", &format!("Bearer {owner}"))],
        &body.to_string(),
    );
    assert_eq!(opened.status, 200, "{}", opened.body);
    let session = opened
        .header("mcp-session-id")
        .expect("a session id")
        .to_string();
    let unknown = legacy_as(
        &http,
        &intruder,
        "not-a-session.id",
        1,
        "prompts/list",
        json!({}),
    );
    assert_eq!(unknown.status, 404, "{}", unknown.body);
    // The other token gets what an unknown id gets, whatever it does with the id.
    for (method, params) in [
        ("prompts/list", json!({})),
        (
            "resources/subscribe",
            json!({"uri": "shelf://library/guides/api-design.md"}),
        ),
    ] {
        let used = legacy_as(&http, &intruder, &session, 2, method, params);
        assert_eq!(used.status, 404, "{method}: {}", used.body);
        assert_eq!(used.json()["error"], unknown.json()["error"], "{method}");
    }
    let bearer = format!("Bearer {intruder}");
    let deleted = http.request(
        "DELETE",
        &[
            ("mcp-session-id", session.as_str()),
            ("authorization", bearer.as_str()),
        ],
    );
    assert_eq!(deleted.status, 404, "{}", deleted.body);
    // The owner's session goes on.
    let listed = legacy_as(&http, &owner, &session, 3, "prompts/list", json!({}));
    assert_eq!(listed.status, 200, "{}", listed.body);
    assert!(
        listed.json()["result"]["prompts"].is_array(),
        "{}",
        listed.body
    );
}

#[test]
fn a_2025_03_26_session_takes_batches_and_later_revisions_do_not() {
    let ctx = TestContext::new();
    let http = HttpServer::start(&ctx.db, &[]);
    let session = http.initialize("2025-03-26");
    let batch = json!([
        {"jsonrpc": "2.0", "id": "a", "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 7, "method": "prompts/get", "params": {"name": "no-such-prompt"}},
        {"jsonrpc": "2.0", "id": "b", "method": "prompts/list", "params": {}},
        {"jsonrpc": "2.0", "id": 9, "method": "initialize", "params": {
            "protocolVersion": "2025-03-26", "capabilities": {},
            "clientInfo": {"name": "x", "version": "0"}}}
    ]);
    let answered = http.post(&[("mcp-session-id", session.as_str())], &batch.to_string());
    assert_eq!(answered.status, 200, "{}", answered.body);
    let answers = answered.json();
    let answers = answers.as_array().expect("an array of responses");
    let ids: Vec<&Value> = answers.iter().map(|answer| &answer["id"]).collect();
    assert_eq!(
        ids,
        [&json!("a"), &json!(7), &json!("b"), &json!(9)],
        "{}",
        answered.body
    );
    assert_eq!(answers[0]["result"], json!({}));
    assert!(
        answers[1]["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("no-such-prompt"))
    );
    assert!(answers[2]["result"]["prompts"].is_array());
    assert_eq!(answers[3]["error"]["code"], -32600);
    // Notifications alone: nothing to answer.
    let quiet = json!([{"jsonrpc": "2.0", "method": "notifications/initialized"}]);
    let accepted = http.post(&[("mcp-session-id", session.as_str())], &quiet.to_string());
    assert_eq!(accepted.status, 202, "{}", accepted.body);
    let empty = http.post(&[("mcp-session-id", session.as_str())], "[]");
    assert_eq!(empty.status, 400, "{}", empty.body);
    // 2025-06-18 removed batches: refused as before.
    let later = http.initialize("2025-06-18");
    let refused = http.post(
        &[
            ("mcp-session-id", later.as_str()),
            ("mcp-protocol-version", "2025-06-18"),
        ],
        &json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"}]).to_string(),
    );
    assert_eq!(refused.status, 400, "{}", refused.body);
    assert_eq!(refused.code(), -32600);
}

#[test]
fn answers_made_for_a_token_are_privately_cacheable() {
    let ctx = TestContext::new();
    let everything = token(&ctx, "everything", None);
    let http = HttpServer::start(&ctx.db, &["--auth", "token"]);
    let listed = http.with_token(&everything, 1, "prompts/list", json!({}));
    assert_eq!(
        listed.json()["result"]["cacheScope"],
        "private",
        "{}",
        listed.body
    );
    let read = http.with_token(
        &everything,
        2,
        "resources/read",
        json!({"uri": "shelf://library/guides/api-design.md"}),
    );
    assert_eq!(
        read.json()["result"]["cacheScope"],
        "private",
        "{}",
        read.body
    );
    drop(http);
    // One caller (--auth none): public, as --cache-scope says.
    let open = HttpServer::start(&ctx.db, &[]);
    let listed = open.modern(1, "prompts/list", json!({}));
    assert_eq!(
        listed.json()["result"]["cacheScope"],
        "public",
        "{}",
        listed.body
    );
}

#[test]
fn a_removed_or_expired_tokens_streams_are_closed_with_their_result() {
    let ctx = TestContext::new();
    let removed = token(&ctx, "removed", None);
    let expiring = token(&ctx, "expiring", None);
    let staying = token(&ctx, "staying", None);
    let http = HttpServer::start(&ctx.db, &["--auth", "token"]);
    let streams: Vec<_> = [(&removed, "r"), (&expiring, "e"), (&staying, "s")]
        .into_iter()
        .map(|(bearer, id)| {
            let events = http.listen_with(bearer, id);
            assert_eq!(
                events.next()["method"],
                "notifications/subscriptions/acknowledged"
            );
            events
        })
        .collect();
    ctx.ok(&["token", "rm", "removed"]);
    ctx.open_db()
        .execute(
            "UPDATE tokens SET expires_at = 1 WHERE name = 'expiring'",
            [],
        )
        .expect("expire it");
    for (events, id) in streams.iter().zip(["r", "e"]) {
        let closed = events.next();
        assert_eq!(closed["id"], id, "{closed}");
        assert_eq!(closed["result"]["resultType"], "complete", "{closed}");
        assert!(events.ends());
    }
    // The token still let in keeps its stream, and hears of a change.
    let file = ctx.write("late.prompt.md", "---\ndescription: Late\n---\nHello.\n");
    ctx.ok(&["prompt", "add", file.to_str().expect("a UTF-8 path")]);
    assert_eq!(
        streams[2].next()["method"],
        "notifications/prompts/list_changed"
    );
    let metrics = scrape(&http, Some(&staying));
    assert_eq!(
        sample(
            &metrics,
            r#"promptshelf_http_guarded_total{guard="stream_credential"}"#
        ),
        2.0
    );
}
