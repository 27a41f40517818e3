//! `serve --http`: the real binary on a real socket on 127.0.0.1 (port 0, read back from
//! its log line), spoken to with an HTTP client, in both eras; answers compared with what
//! stdio gives for the same request.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::common::{BIN, LEGACY, MODERN, Server, TestContext, WAIT, modern_params};

/// Caching hints pinned to 0, so that answers do not depend on when they were made.
const NO_TTL: [&str; 6] = [
    "--ttl-min-ms",
    "0",
    "--list-ttl-max-ms",
    "0",
    "--read-ttl-max-ms",
    "0",
];

/// A running `promptshelf serve --http 127.0.0.1:0`.
pub struct HttpServer {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub(crate) base: String,
    /// Everything it wrote on stderr, for failure messages.
    log: Arc<Mutex<Vec<String>>>,
    pub(crate) agent: ureq::Agent,
}

/// A response: status, headers, body.
pub(crate) struct Reply {
    pub(crate) status: u16,
    headers: ureq::http::HeaderMap,
    pub(crate) body: String,
}

impl Reply {
    pub(crate) fn json(&self) -> Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|err| panic!("not JSON ({err}): {}", self.body))
    }

    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|value| value.to_str().ok())
    }

    /// The error code of an error response.
    pub(crate) fn code(&self) -> i64 {
        self.json()["error"]["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("not an error: {}", self.body))
    }
}

pub(crate) fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into()
}

impl HttpServer {
    /// `serve --http 127.0.0.1:0 EXTRA`, with `--auth none` unless EXTRA has an `--auth`.
    pub fn start(db: &Path, extra: &[&str]) -> HttpServer {
        HttpServer::start_at(db, "127.0.0.1:0", extra)
    }

    /// `serve --http ADDRESS EXTRA`, as `start`: for a server started again where it was.
    pub fn start_at(db: &Path, address: &str, extra: &[&str]) -> HttpServer {
        HttpServer::start_logging(db, address, extra, None)
    }

    /// `start_at`, logging as `rust_log` says (None: warnings only).
    pub fn start_logging(
        db: &Path,
        address: &str,
        extra: &[&str],
        rust_log: Option<&str>,
    ) -> HttpServer {
        let mut command = Command::new(BIN);
        if let Some(filter) = rust_log {
            command.env("RUST_LOG", filter);
        } else {
            command.env_remove("RUST_LOG");
        }
        let mut child = command
            .arg("--db")
            .arg(db)
            .args(["serve", "--http", address])
            .args(extra)
            // Tokens are the default; a test about something else serves without.
            .args(if extra.contains(&"--auth") {
                &[][..]
            } else {
                &["--auth", "none"][..]
            })
            .env_remove("PROMPTSHELF_DB")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start promptshelf serve --http");
        let stderr = child.stderr.take().expect("stderr");
        let log = Arc::new(Mutex::new(Vec::new()));
        let (found, address) = channel();
        let kept = Arc::clone(&log);
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Some(rest) = line.strip_prefix("promptshelf: listening on ") {
                    let _ = found.send(rest.trim_end_matches("/mcp").to_string());
                }
                kept.lock().unwrap().push(line);
            }
        });
        let base = address.recv_timeout(WAIT).unwrap_or_else(|_| {
            panic!(
                "no 'listening on' line within {WAIT:?}; stderr:\n{}",
                log.lock().unwrap().join("\n")
            )
        });
        HttpServer {
            child,
            base,
            log,
            agent: agent(),
        }
    }

    pub fn url(&self) -> String {
        format!("{}/mcp", self.base)
    }

    pub fn stderr(&self) -> String {
        self.log.lock().unwrap().join("\n")
    }

    /// How many lines of stderr so far contain `text`.
    pub fn logged(&self, text: &str) -> usize {
        self.log
            .lock()
            .unwrap()
            .iter()
            .filter(|line| line.contains(text))
            .count()
    }

    /// Waits until more than `seen` lines of stderr contain `text`; panics after `WAIT`.
    pub fn wait_logged(&self, text: &str, seen: usize) {
        let deadline = std::time::Instant::now() + WAIT;
        while self.logged(text) <= seen {
            assert!(
                std::time::Instant::now() < deadline,
                "no new line saying {text:?} within {WAIT:?}; stderr:\n{}",
                self.stderr()
            );
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }

    /// POSTs `body` to the endpoint with these headers.
    pub(crate) fn post(&self, headers: &[(&str, &str)], body: &str) -> Reply {
        let mut request = self.agent.post(self.url());
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let response = request
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .send(body)
            .unwrap_or_else(|err| panic!("POST {body}: {err}\nstderr:\n{}", self.stderr()));
        reply(response)
    }

    /// A modern request with the headers a client sends.
    pub(crate) fn modern(&self, id: i64, method: &str, params: Value) -> Reply {
        let (headers, body) = modern_request(id, method, params);
        let headers: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
        self.post(&headers, &body)
    }

    /// A legacy request of the session `session` (None: without one).
    pub(crate) fn legacy(
        &self,
        session: Option<&str>,
        version: &str,
        id: i64,
        method: &str,
        params: Value,
    ) -> Reply {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let mut headers = vec![("mcp-protocol-version", version)];
        if let Some(session) = session {
            headers.push(("mcp-session-id", session));
        }
        self.post(&headers, &body.to_string())
    }

    /// `initialize` in `version`: the session id the answer gave.
    pub(crate) fn initialize(&self, version: &str) -> String {
        let body = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {},
            "clientInfo": {"name": "promptshelf-tests", "version": "0"}}});
        let reply = self.post(&[], &body.to_string());
        assert_eq!(reply.status, 200, "{}", reply.body);
        assert_eq!(reply.json()["result"]["protocolVersion"], version);
        reply
            .header("mcp-session-id")
            .unwrap_or_else(|| panic!("initialize gave no Mcp-Session-Id: {}", reply.body))
            .to_string()
    }

    pub(crate) fn request(&self, method: &str, headers: &[(&str, &str)]) -> Reply {
        let mut request = ureq::http::Request::builder()
            .method(method)
            .uri(self.url());
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let request = request.body(()).expect("a request");
        let response = self
            .agent
            .run(request)
            .unwrap_or_else(|err| panic!("{method}: {err}\nstderr:\n{}", self.stderr()));
        reply(response)
    }

    /// Sends SIGTERM and waits for the exit status.
    fn terminate(mut self) -> std::process::ExitStatus {
        let pid = libc::pid_t::try_from(self.child.id()).expect("a pid");
        assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0, "kill -TERM");
        let deadline = std::time::Instant::now() + WAIT;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "still running {WAIT:?} after SIGTERM; stderr:\n{}",
                self.stderr()
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn reply(mut response: ureq::http::Response<ureq::Body>) -> Reply {
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let body = response
        .body_mut()
        .read_to_string()
        .expect("a readable body");
    Reply {
        status,
        headers,
        body,
    }
}

/// An open event stream: its messages, as they come.
pub(crate) struct Events {
    messages: Receiver<Value>,
    headers: ureq::http::HeaderMap,
}

impl Events {
    /// Opens a stream with a POST (modern listen) or GET (legacy).
    pub(crate) fn open(response: ureq::http::Response<ureq::Body>) -> Events {
        assert_eq!(response.status(), 200);
        let headers = response.headers().clone();
        let reader = BufReader::new(response.into_body().into_reader());
        let (sender, messages) = channel();
        std::thread::spawn(move || {
            for line in reader.lines() {
                let Ok(line) = line else { break };
                if let Some(data) = line.strip_prefix("data: ") {
                    let message = serde_json::from_str(data)
                        .unwrap_or_else(|err| panic!("an event that is not JSON ({err}): {data}"));
                    if sender.send(message).is_err() {
                        break;
                    }
                }
            }
        });
        Events { messages, headers }
    }

    pub(crate) fn next(&self) -> Value {
        self.messages
            .recv_timeout(WAIT)
            .unwrap_or_else(|err| panic!("no event within {WAIT:?}: {err:?}"))
    }

    /// Whether the stream ends (no more messages) rather than sending one.
    pub(crate) fn ends(&self) -> bool {
        match self.messages.recv_timeout(WAIT) {
            Err(RecvTimeoutError::Disconnected) => true,
            Ok(message) => panic!("a message where the end was expected: {message}"),
            Err(RecvTimeoutError::Timeout) => panic!("the stream is still open after {WAIT:?}"),
        }
    }
}

/// A modern request's headers (as a client sends them) and body.
pub(crate) fn modern_request(
    id: i64,
    method: &str,
    params: Value,
) -> (Vec<(&'static str, String)>, String) {
    let name = params
        .get("name")
        .or_else(|| params.get("uri"))
        .and_then(Value::as_str)
        .map(str::to_string);
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method,
                      "params": modern_params(params, json!({}))});
    let mut headers = vec![
        ("mcp-protocol-version", MODERN.to_string()),
        ("mcp-method", method.to_string()),
    ];
    if let Some(name) = name {
        headers.push(("mcp-name", name));
    }
    (headers, body.to_string())
}

/// A modern request POSTed to `url` (the endpoint, or a balancer in front of it).
pub(crate) fn modern_at(url: &str, id: i64, method: &str, params: Value) -> Reply {
    let (headers, body) = modern_request(id, method, params);
    let mut request = agent().post(url);
    for (name, value) in &headers {
        request = request.header(*name, value);
    }
    let response = request
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .send(&body)
        .unwrap_or_else(|err| panic!("POST {body} to {url}: {err}"));
    reply(response)
}

/// A modern `subscriptions/listen` stream at `url` (the endpoint, or a balancer in front of
/// it) asking for `notifications`.
pub(crate) fn listen_at(url: &str, id: &str, notifications: Value) -> Events {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
                      "params": modern_params(json!({"notifications": notifications}), json!({}))});
    let response = agent()
        .post(url)
        .header("mcp-protocol-version", MODERN)
        .header("mcp-method", "subscriptions/listen")
        .header("accept", "application/json, text/event-stream")
        .send(body.to_string())
        .unwrap_or_else(|err| panic!("POST subscriptions/listen to {url}: {err}"));
    Events::open(response)
}

fn prompt_file(ctx: &TestContext, name: &str) -> String {
    let path = ctx.write(
        &format!("{name}.prompt.md"),
        "---\ndescription: A test prompt\n---\nSay hello.\n",
    );
    path.display().to_string()
}

#[test]
fn modern_answers_are_the_ones_stdio_gives() {
    let ctx = TestContext::new();
    let http = HttpServer::start(&ctx.db, &NO_TTL);
    let mut stdio = Server::start(&ctx.db, &NO_TTL);
    let requests = [
        ("server/discover", json!({})),
        ("prompts/list", json!({})),
        (
            "prompts/get",
            json!({"name": "code-review", "arguments": {"code": "fn main() {}"}}),
        ),
        (
            "resources/read",
            json!({"uri": "shelf://library/guides/api-design.md"}),
        ),
        ("resources/templates/list", json!({})),
        (
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "code-review"},
                   "argument": {"name": "language", "value": "ru"}}),
        ),
        ("prompts/get", json!({"name": "no-such-prompt"})),
    ];
    for (id, (method, params)) in (1..).zip(requests) {
        let over_http = http.modern(id, method, params.clone());
        assert_eq!(over_http.status, 200, "{method}: {}", over_http.body);
        assert_eq!(over_http.header("content-type"), Some("application/json"));
        let over_http = over_http.json();
        let over_stdio = stdio.modern(method, params);
        assert_eq!(over_http["id"], id);
        assert_eq!(
            over_http.get("result"),
            over_stdio.get("result"),
            "{method}"
        );
        assert_eq!(over_http.get("error"), over_stdio.get("error"), "{method}");
    }
}

#[test]
fn notifications_are_accepted_without_a_body() {
    let ctx = TestContext::new();
    let http = HttpServer::start(&ctx.db, &[]);
    let reply = http.post(
        &[("mcp-protocol-version", MODERN)],
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    assert_eq!(reply.status, 202);
    assert_eq!(reply.body, "");
}

#[test]
fn headers_that_differ_from_the_message_are_refused() {
    let ctx = TestContext::new();
    let http = HttpServer::start(&ctx.db, &[]);
    let body = |method: &str, params: Value| {
        json!({"jsonrpc": "2.0", "id": 7, "method": method,
               "params": modern_params(params, json!({}))})
        .to_string()
    };
    let list = body("prompts/list", json!({}));
    let get = body(
        "prompts/get",
        json!({"name": "summarize", "arguments": {"text": "t"}}),
    );
    let version = ("mcp-protocol-version", MODERN);

    let reply = http.post(&[version, ("mcp-method", "PROMPTS/LIST")], &list);
    assert_eq!(
        (reply.status, reply.code()),
        (400, -32020),
        "{}",
        reply.body
    );
    assert!(
        reply.json()["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("Header mismatch")
    );
    assert_eq!(reply.json()["id"], 7);
    let reply = http.post(&[version], &list);
    assert_eq!((reply.status, reply.code()), (400, -32020), "no Mcp-Method");
    let reply = http.post(&[("mcp-method", "prompts/list")], &list);
    assert_eq!((reply.status, reply.code()), (400, -32020), "no version");
    let reply = http.post(
        &[
            ("mcp-protocol-version", "2025-11-25"),
            ("mcp-method", "prompts/list"),
        ],
        &list,
    );
    assert_eq!(
        (reply.status, reply.code()),
        (400, -32020),
        "another version"
    );

    let get_with = |name: &str| {
        http.post(
            &[version, ("mcp-method", "prompts/get"), ("mcp-name", name)],
            &get,
        )
    };
    // "summarize" in Base64.
    assert_eq!(get_with("=?base64?c3VtbWFyaXpl?=").status, 200);
    assert_eq!(get_with("summarize").status, 200);
    for wrong in [
        "=?base64?Y29kZS1yZXZpZXc=?=",
        "=?base64?***?=",
        "code-review",
    ] {
        let reply = get_with(wrong);
        assert_eq!((reply.status, reply.code()), (400, -32020), "{wrong}");
    }
    let reply = http.post(&[version, ("mcp-method", "prompts/get")], &get);
    assert_eq!((reply.status, reply.code()), (400, -32020), "no Mcp-Name");

    let unknown = http.modern(8, "sampling/createMessage", json!({}));
    assert_eq!(
        (unknown.status, unknown.code()),
        (404, -32601),
        "{}",
        unknown.body
    );
    let unsupported = http.post(
        &[("mcp-protocol-version", "2099-01-01"), ("mcp-method", "prompts/list")],
        r#"{"jsonrpc":"2.0","id":9,"method":"prompts/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
    );
    assert_eq!((unsupported.status, unsupported.code()), (400, -32022));
    // A header naming another version than `_meta` is a mismatch, whichever is served.
    let mismatched = http.post(
        &[version, ("mcp-method", "server/discover")],
        r#"{"jsonrpc":"2.0","id":11,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"v999","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
    );
    assert_eq!(
        (mismatched.status, mismatched.code()),
        (400, -32020),
        "{}",
        mismatched.body
    );
    // The modern version header without `_meta`: malformed, not a legacy probe.
    let no_meta = http.post(
        &[version, ("mcp-method", "server/discover")],
        r#"{"jsonrpc":"2.0","id":12,"method":"server/discover","params":{}}"#,
    );
    assert_eq!(
        (no_meta.status, no_meta.code()),
        (400, -32602),
        "{}",
        no_meta.body
    );
    // Methods only the legacy revisions define are not served, whatever their params.
    for method in ["initialize", "resources/subscribe", "resources/unsubscribe"] {
        let reply = http.modern(13, method, json!({}));
        assert_eq!(
            (reply.status, reply.code()),
            (404, -32601),
            "{method}: {}",
            reply.body
        );
    }
    assert!(
        unsupported.json()["error"]["data"]["supported"]
            .as_array()
            .is_some()
    );
    let no_capabilities = http.post(
        &[version, ("mcp-method", "prompts/list")],
        r#"{"jsonrpc":"2.0","id":10,"method":"prompts/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
    );
    assert_eq!(
        (no_capabilities.status, no_capabilities.code()),
        (400, -32602)
    );
    let malformed = http.post(&[version], "{not json");
    assert_eq!((malformed.status, malformed.code()), (400, -32700));
    // And the server goes on serving.
    assert_eq!(http.modern(11, "prompts/list", json!({})).status, 200);
}

#[test]
fn origins_are_checked() {
    let ctx = TestContext::new();
    let http = HttpServer::start(&ctx.db, &["--allow-origin", "https://app.example.com"]);
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "prompts/list",
                      "params": modern_params(json!({}), json!({}))})
    .to_string();
    let headers = |origin: &'static str| {
        [
            ("mcp-protocol-version", MODERN),
            ("mcp-method", "prompts/list"),
            ("origin", origin),
        ]
    };
    let refused = http.post(&headers("https://evil.example"), &list);
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert!(
        refused.body.contains("--allow-origin https://evil.example"),
        "{}",
        refused.body
    );
    assert_eq!(
        http.post(&headers("https://app.example.com"), &list).status,
        200
    );
    let own: &'static str = Box::leak(http.base.clone().into_boxed_str());
    assert_eq!(http.post(&headers(own), &list).status, 200);
    let localhost: &'static str =
        Box::leak(http.base.replace("127.0.0.1", "localhost").into_boxed_str());
    assert_eq!(http.post(&headers(localhost), &list).status, 200);

    let plain = HttpServer::start(&ctx.db, &[]);
    let refused = plain.post(&headers("https://app.example.com"), &list);
    assert_eq!(refused.status, 403, "allowed only with --allow-origin");
}

#[test]
fn a_body_over_the_limit_is_refused_and_serving_goes_on() {
    let ctx = TestContext::new();
    let http = HttpServer::start(&ctx.db, &["--max-line", "1000"]);
    let long = json!({"jsonrpc": "2.0", "id": 1, "method": "prompts/get",
                      "params": modern_params(json!({"name": "summarize",
                                "arguments": {"text": "x".repeat(5000)}}), json!({}))});
    let reply = http.post(
        &[
            ("mcp-protocol-version", MODERN),
            ("mcp-method", "prompts/get"),
            ("mcp-name", "summarize"),
        ],
        &long.to_string(),
    );
    assert_eq!(reply.status, 413, "{}", reply.body);
    assert!(reply.body.contains("--max-line"), "{}", reply.body);
    assert_eq!(http.modern(2, "prompts/list", json!({})).status, 200);
}

#[test]
fn healthz_says_ok_and_other_paths_are_not_found() {
    let ctx = TestContext::new();
    let http = HttpServer::start(&ctx.db, &[]);
    let health = reply(
        http.agent
            .get(format!("{}/healthz", http.base))
            .call()
            .expect("GET /healthz"),
    );
    assert_eq!((health.status, health.body.as_str()), (200, "ok\n"));
    let elsewhere = reply(
        http.agent
            .get(format!("{}/other", http.base))
            .call()
            .expect("GET"),
    );
    assert_eq!(elsewhere.status, 404);
}

#[test]
fn a_listen_stream_acknowledges_then_hears_of_a_cli_write() {
    let ctx = TestContext::new();
    let http = HttpServer::start(&ctx.db, &[]);
    let body = json!({"jsonrpc": "2.0", "id": "watch", "method": "subscriptions/listen",
                      "params": modern_params(json!({"notifications": {"promptsListChanged": true}}), json!({}))});
    let response = http
        .agent
        .post(http.url())
        .header("mcp-protocol-version", MODERN)
        .header("mcp-method", "subscriptions/listen")
        .header("accept", "application/json, text/event-stream")
        .send(body.to_string())
        .expect("POST subscriptions/listen");
    let events = Events::open(response);
    assert_eq!(
        events.headers.get("content-type").unwrap(),
        "text/event-stream"
    );
    assert_eq!(events.headers.get("x-accel-buffering").unwrap(), "no");
    let ack = events.next();
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(
        ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "watch"
    );
    assert_eq!(
        ack["params"]["notifications"],
        json!({"promptsListChanged": true})
    );
    ctx.ok(&["prompt", "add", &prompt_file(&ctx, "greet")]);
    let changed = events.next();
    assert_eq!(changed["method"], "notifications/prompts/list_changed");
    assert_eq!(
        changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "watch"
    );
}

#[test]
fn legacy_sessions_live_in_their_signed_ids() {
    let ctx = TestContext::new();
    let http = HttpServer::start(&ctx.db, &[]);
    let version = LEGACY[0];
    let session = http.initialize(version);
    assert!(
        session.bytes().all(|byte| (0x21..=0x7e).contains(&byte)),
        "{session}"
    );
    let listed = http.legacy(Some(&session), version, 1, "prompts/list", json!({}));
    assert_eq!(listed.status, 200, "{}", listed.body);
    let prompts = &listed.json()["result"];
    assert!(prompts["prompts"].as_array().is_some_and(|p| !p.is_empty()));
    assert!(
        prompts.get("resultType").is_none(),
        "a legacy result: {prompts}"
    );

    let without = http.legacy(None, version, 2, "prompts/list", json!({}));
    assert_eq!(without.status, 400, "{}", without.body);
    assert!(without.body.contains("Mcp-Session-Id"), "{}", without.body);
    let mut tampered = session.clone().into_bytes();
    tampered[3] = if tampered[3] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(tampered).unwrap();
    let refused = http.legacy(Some(&tampered), version, 3, "prompts/list", json!({}));
    assert_eq!(refused.status, 404, "{}", refused.body);
    let cancelled = http.post(
        &[
            ("mcp-session-id", &session),
            ("mcp-protocol-version", version),
        ],
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}"#,
    );
    assert_eq!((cancelled.status, cancelled.body.as_str()), (202, ""));
    let wrong_version = http.legacy(Some(&session), LEGACY[2], 4, "prompts/list", json!({}));
    assert_eq!(wrong_version.status, 400, "{}", wrong_version.body);
    // A method the session's revision does not serve is answered in the session, 200 with
    // -32601: a 404 would tell the client its session is gone.
    let unserved = http.legacy(Some(&session), version, 7, "tools/list", json!({}));
    assert_eq!(
        (unserved.status, unserved.code()),
        (200, -32601),
        "{}",
        unserved.body
    );

    // Another instance on the same database takes the id: nothing is kept per session.
    let other = HttpServer::start(&ctx.db, &[]);
    let listed_there = other.legacy(Some(&session), version, 5, "prompts/list", json!({}));
    assert_eq!(listed_there.status, 200, "{}", listed_there.body);
    assert_eq!(listed_there.json()["result"], *prompts);
    // One on another database does not.
    let elsewhere = TestContext::new();
    let foreign = HttpServer::start(&elsewhere.db, &[]);
    let refused = foreign.legacy(Some(&session), version, 6, "prompts/list", json!({}));
    assert_eq!(refused.status, 404, "{}", refused.body);
}

#[test]
fn a_legacy_stream_hears_of_a_cli_write_until_delete() {
    let ctx = TestContext::new();
    let http = HttpServer::start(&ctx.db, &[]);
    let version = LEGACY[0];
    let session = http.initialize(version);
    let uri = "shelf://library/guides/api-design.md";
    let subscribed = http.legacy(
        Some(&session),
        version,
        1,
        "resources/subscribe",
        json!({"uri": uri}),
    );
    assert_eq!(
        subscribed.json()["result"],
        json!({}),
        "{}",
        subscribed.body
    );
    let response = http
        .agent
        .get(http.url())
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", version)
        .call()
        .expect("GET the session's stream");
    let events = Events::open(response);
    let second = http.request(
        "GET",
        &[
            ("accept", "text/event-stream"),
            ("mcp-session-id", &session),
        ],
    );
    assert_eq!(
        second.status, 409,
        "one stream per session: {}",
        second.body
    );
    ctx.ok(&["prompt", "add", &prompt_file(&ctx, "greet")]);
    let changed = events.next();
    assert_eq!(
        changed,
        json!({"jsonrpc": "2.0", "method": "notifications/prompts/list_changed"})
    );
    let file = ctx.write("api.md", "# API design\n\nChanged.\n");
    ctx.add_resource(&file, uri);
    let mut seen = Vec::new();
    while !seen
        .iter()
        .any(|m: &Value| m["method"] == "notifications/resources/updated")
    {
        seen.push(events.next());
    }
    let updated = seen.last().unwrap();
    assert_eq!(updated["params"]["uri"], uri);

    let deleted = http.request("DELETE", &[("mcp-session-id", &session)]);
    assert_eq!(deleted.status, 204, "{}", deleted.body);
    assert!(events.ends());
    // The ended session's id is not taken here any more: the client initializes again.
    let after = http.legacy(Some(&session), version, 9, "prompts/list", json!({}));
    assert_eq!(after.status, 404, "{}", after.body);
    assert!(after.body.contains("ended with DELETE"), "{}", after.body);
}

#[test]
fn get_delete_and_other_methods_without_a_session_are_not_allowed() {
    let ctx = TestContext::new();
    let http = HttpServer::start(&ctx.db, &[]);
    for method in ["GET", "DELETE"] {
        let reply = http.request(method, &[("accept", "text/event-stream")]);
        assert_eq!(reply.status, 405, "{method}: {}", reply.body);
        assert_eq!(reply.header("allow"), Some("POST"), "{method}");
    }
    let reply = http.request("PUT", &[]);
    assert_eq!(reply.status, 405);
    assert_eq!(reply.header("allow"), Some("POST, GET, DELETE"));
}

#[test]
fn no_authentication_is_refused_off_loopback() {
    let ctx = TestContext::new();
    let stderr = ctx.fails(&["serve", "--http", "0.0.0.0:0", "--auth", "none"]);
    assert!(
        stderr.contains("refusing to serve 0.0.0.0:0 without authentication"),
        "{stderr}"
    );
    assert!(
        stderr.contains("127.0.0.1") && stderr.contains("token add"),
        "{stderr}"
    );
}

#[test]
fn sigterm_closes_streams_with_their_result_and_exits_0() {
    let ctx = TestContext::new();
    let http = HttpServer::start(&ctx.db, &[]);
    let body = json!({"jsonrpc": "2.0", "id": 42, "method": "subscriptions/listen",
                      "params": modern_params(json!({"notifications": {"resourcesListChanged": true}}), json!({}))});
    let response = http
        .agent
        .post(http.url())
        .header("mcp-protocol-version", MODERN)
        .header("mcp-method", "subscriptions/listen")
        .send(body.to_string())
        .expect("POST subscriptions/listen");
    let events = Events::open(response);
    assert_eq!(
        events.next()["method"],
        "notifications/subscriptions/acknowledged"
    );
    let status = http.terminate();
    let last = events.next();
    assert_eq!(last["id"], 42, "{last}");
    assert_eq!(last["result"]["resultType"], "complete", "{last}");
    assert_eq!(
        last["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        42
    );
    assert!(events.ends());
    assert_eq!(status.code(), Some(0));
}

#[test]
fn serve_http_reads_its_flags() {
    let ctx = TestContext::new();
    let stderr = ctx.fails(&["serve", "--allow-origin", "https://a.example"]);
    assert!(stderr.contains("--http"), "{stderr}");
    let stderr = ctx.fails(&[
        "serve",
        "--http",
        "127.0.0.1:0",
        "--allow-origin",
        "a.example",
    ]);
    assert!(stderr.contains("is not an origin"), "{stderr}");
    let mut body = String::new();
    let mut child = Command::new(BIN)
        .args(["serve", "--help"])
        .stdout(Stdio::piped())
        .spawn()
        .expect("serve --help");
    child
        .stdout
        .take()
        .expect("stdout")
        .read_to_string(&mut body)
        .expect("read");
    assert!(child.wait().expect("wait").success());
    assert!(body.contains("127.0.0.1:8080"), "{body}");
}

#[test]
fn streams_beyond_the_cap_are_refused_with_503() {
    let ctx = TestContext::new();
    let http = HttpServer::start(&ctx.db, &["--max-streams", "1"]);
    let listen = |id: i64| {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
                          "params": modern_params(json!({"notifications": {"promptsListChanged": true}}), json!({}))});
        http.agent
            .post(http.url())
            .header("mcp-protocol-version", MODERN)
            .header("mcp-method", "subscriptions/listen")
            .send(body.to_string())
            .expect("POST subscriptions/listen")
    };
    let events = Events::open(listen(1));
    assert_eq!(
        events.next()["method"],
        "notifications/subscriptions/acknowledged"
    );
    let refused = reply(listen(2));
    assert_eq!(refused.status, 503, "{}", refused.body);
    assert!(refused.body.contains("--max-streams"), "{}", refused.body);
    // A legacy session's GET stream counts too.
    let session = http.initialize(LEGACY[0]);
    let refused = http.request(
        "GET",
        &[
            ("accept", "text/event-stream"),
            ("mcp-session-id", &session),
        ],
    );
    assert_eq!(refused.status, 503, "{}", refused.body);
}

#[test]
fn a_connection_that_sends_no_headers_is_closed() {
    let ctx = TestContext::new();
    let http = HttpServer::start(&ctx.db, &["--header-timeout", "1"]);
    let address = http.base.trim_start_matches("http://");
    let mut connection = std::net::TcpStream::connect(address).expect("connect");
    connection
        .set_read_timeout(Some(WAIT))
        .expect("a read timeout");
    let mut buffer = [0u8; 256];
    // The server closes the connection (end of file, or a reset), rather than waiting on.
    match connection.read(&mut buffer) {
        Ok(read) => assert!(
            read == 0 || String::from_utf8_lossy(&buffer[..read]).starts_with("HTTP/1.1 408"),
            "{}",
            String::from_utf8_lossy(&buffer[..read])
        ),
        Err(err) => assert_eq!(err.kind(), std::io::ErrorKind::ConnectionReset, "{err}"),
    }
}

#[test]
fn a_stream_whose_client_left_gives_its_place_back() {
    let ctx = TestContext::new();
    let http = HttpServer::start(&ctx.db, &["--max-streams", "1"]);
    let listen = |id: i64| {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
                          "params": modern_params(json!({"notifications": {"promptsListChanged": true}}), json!({}))});
        // A client of its own: its connection closes with its response.
        agent()
            .post(http.url())
            .header("mcp-protocol-version", MODERN)
            .header("mcp-method", "subscriptions/listen")
            .send(body.to_string())
            .expect("POST subscriptions/listen")
    };
    let mut first = listen(1);
    let mut reader = BufReader::new(first.body_mut().as_reader());
    let mut line = String::new();
    reader.read_line(&mut line).expect("the acknowledgement");
    assert!(line.starts_with("event: message"), "{line}");
    drop(reader);
    drop(first);
    // The server sees the connection close and frees the stream's place.
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let response = listen(2);
        if response.status() == 200 {
            break;
        }
        assert_eq!(response.status(), 503);
        assert!(
            std::time::Instant::now() < deadline,
            "the stream's place is still taken {WAIT:?} after its client left"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// A library with the collections `alpha` and `beta` (imported folders, a prompt and a
/// document each) on top of the seed.
pub(crate) fn two_collections(ctx: &TestContext) {
    for name in ["alpha", "beta"] {
        ctx.write(
            &format!("{name}/notes.md"),
            format!("# {name} notes\n\nText.\n"),
        );
        ctx.write(
            &format!("{name}/{name}-ask.prompt.md"),
            format!("---\ndescription: Ask {name}\n---\nAsk about {name}.\n"),
        );
        ctx.ok(&["import", &ctx.path(name).display().to_string()]);
    }
}

/// `token add NAME [--collections C]`: the token it printed.
pub(crate) fn token(ctx: &TestContext, name: &str, collections: Option<&str>) -> String {
    let mut args = vec!["token", "add", name, "--json"];
    if let Some(collections) = collections {
        args.extend(["--collections", collections]);
    }
    let added = ctx.json(&args);
    added["token"]
        .as_str()
        .unwrap_or_else(|| panic!("no token in {added}"))
        .to_string()
}

impl HttpServer {
    /// A modern request with `Authorization: Bearer TOKEN`.
    pub(crate) fn with_token(&self, token: &str, id: i64, method: &str, params: Value) -> Reply {
        let (headers, body) = modern_request(id, method, params);
        let bearer = format!("Bearer {token}");
        let mut headers: Vec<(&str, &str)> =
            headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
        headers.push(("authorization", &bearer));
        self.post(&headers, &body)
    }

    /// A `subscriptions/listen` stream opened with the token, for prompt list changes.
    pub(crate) fn listen_with(&self, token: &str, id: &str) -> Events {
        self.listen_for(token, id, json!({"promptsListChanged": true}))
    }

    /// A `subscriptions/listen` stream opened with the token, asking for `notifications`.
    pub(crate) fn listen_for(&self, token: &str, id: &str, notifications: Value) -> Events {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
                          "params": modern_params(json!({"notifications": notifications}), json!({}))});
        let response = self
            .agent
            .post(self.url())
            .header("mcp-protocol-version", MODERN)
            .header("mcp-method", "subscriptions/listen")
            .header("accept", "application/json, text/event-stream")
            .header("authorization", &format!("Bearer {token}"))
            .send(body.to_string())
            .expect("POST subscriptions/listen");
        Events::open(response)
    }
}

pub(crate) fn prompt_names(reply: &Reply) -> Vec<String> {
    assert_eq!(reply.status, 200, "{}", reply.body);
    let mut names: Vec<String> = reply.json()["result"]["prompts"]
        .as_array()
        .map(|prompts| {
            prompts
                .iter()
                .filter_map(|p| p["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[test]
fn tokens_are_asked_for_by_default_and_see_only_their_collections() {
    let ctx = TestContext::new();
    two_collections(&ctx);
    let alpha = token(&ctx, "alpha-reader", Some("alpha"));
    let everyone = token(&ctx, "admin", None);
    let http = HttpServer::start(&ctx.db, &["--auth", "token"]);

    let none = http.post(&[("mcp-protocol-version", MODERN)], "{}");
    assert_eq!(none.status, 401, "{}", none.body);
    assert_eq!(
        none.header("www-authenticate"),
        Some("Bearer realm=\"promptshelf\"")
    );
    assert!(none.body.contains("promptshelf token add"), "{}", none.body);
    let bad = http.with_token(
        "psk_not-a-token-of-this-library",
        1,
        "prompts/list",
        json!({}),
    );
    assert_eq!(bad.status, 401);
    assert!(
        bad.header("www-authenticate")
            .is_some_and(|c| c.contains("error=\"invalid_token\"")),
        "{:?}",
        bad.headers
    );

    let limited = http.with_token(&alpha, 2, "prompts/list", json!({}));
    assert_eq!(prompt_names(&limited), ["alpha-ask"]);
    assert!(
        limited.body.contains("\"cacheScope\":\"private\""),
        "{}",
        limited.body
    );
    let whole = http.with_token(&everyone, 3, "prompts/list", json!({}));
    assert!(prompt_names(&whole).contains(&"beta-ask".to_string()));
    let hidden = http.with_token(&alpha, 4, "prompts/get", json!({"name": "beta-ask"}));
    let missing = http.with_token(&alpha, 4, "prompts/get", json!({"name": "no-such-prompt"}));
    assert_eq!(
        hidden.json()["error"]["code"],
        missing.json()["error"]["code"],
        "a hidden prompt is answered as one that does not exist: {}",
        hidden.body
    );
    let read = http.with_token(
        &alpha,
        5,
        "resources/read",
        json!({"uri": "shelf://beta/notes.md"}),
    );
    assert!(read.json().get("error").is_some(), "{}", read.body);

    // A change to beta reaches the whole library's listener, not alpha's; alpha's own does.
    let alpha_stream = http.listen_with(&alpha, "alpha");
    let admin_stream = http.listen_with(&everyone, "admin");
    assert_eq!(
        alpha_stream.next()["method"],
        "notifications/subscriptions/acknowledged"
    );
    assert_eq!(
        admin_stream.next()["method"],
        "notifications/subscriptions/acknowledged"
    );
    ctx.write(
        "beta/beta-more.prompt.md",
        "---\ndescription: More\n---\nMore.\n",
    );
    ctx.ok(&["import", &ctx.path("beta").display().to_string()]);
    assert_eq!(
        admin_stream.next()["method"],
        "notifications/prompts/list_changed"
    );
    ctx.write(
        "alpha/alpha-more.prompt.md",
        "---\ndescription: More\n---\nMore.\n",
    );
    ctx.ok(&["import", &ctx.path("alpha").display().to_string()]);
    let heard = alpha_stream.next();
    assert_eq!(heard["method"], "notifications/prompts/list_changed");
    assert_eq!(
        admin_stream.next()["method"],
        "notifications/prompts/list_changed"
    );
    assert!(
        alpha_stream
            .messages
            .recv_timeout(std::time::Duration::from_millis(800))
            .is_err(),
        "alpha's stream heard of beta's change too"
    );

    // A token removed is refused once the server has seen the removal: the tokens it keeps
    // are read again at the commit, within one poll of the watcher (`--poll-ms`).
    ctx.ok(&["token", "rm", "alpha-reader"]);
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let status = http.with_token(&alpha, 6, "prompts/list", json!({})).status;
        if status == 401 {
            break;
        }
        assert!(
            status == 200 && std::time::Instant::now() < deadline,
            "the removed token was answered {status}, or still served after {WAIT:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}
