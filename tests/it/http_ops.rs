//! Operating `serve --http`: `/metrics`, the per-caller limits (request rate, completion
//! rate, streams) and TLS. The real binary on 127.0.0.1, as in `http`.

use std::collections::BTreeMap;

use serde_json::json;

use crate::common::TestContext;
use crate::http::{HttpServer, Reply, modern_request, token};

/// `/metrics` parsed: each sample line's name with its labels, and its value.
pub(crate) fn scrape(http: &HttpServer, bearer: Option<&str>) -> BTreeMap<String, f64> {
    let reply = get(http, "/metrics", bearer);
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(
        reply.header("content-type"),
        Some("text/plain; version=0.0.4; charset=utf-8")
    );
    parse_metrics(&reply.body)
}

fn parse_metrics(text: &str) -> BTreeMap<String, f64> {
    let mut samples = BTreeMap::new();
    for line in text.lines().filter(|line| !line.starts_with('#')) {
        let (name, value) = line
            .rsplit_once(' ')
            .unwrap_or_else(|| panic!("a sample without a value: {line}"));
        let value: f64 = value
            .parse()
            .unwrap_or_else(|err| panic!("a value that is not a number ({err}): {line}"));
        assert!(
            samples.insert(name.to_string(), value).is_none(),
            "{name} twice"
        );
    }
    samples
}

/// A sample's value; 0 when absent (a counter not yet moved is not written).
pub(crate) fn sample(samples: &BTreeMap<String, f64>, name: &str) -> f64 {
    samples.get(name).copied().unwrap_or(0.0)
}

fn get(http: &HttpServer, path: &str, bearer: Option<&str>) -> Reply {
    let mut request = http.agent.get(format!("{}{path}", http.base));
    if let Some(token) = bearer {
        request = request.header("authorization", &format!("Bearer {token}"));
    }
    let response = request
        .call()
        .unwrap_or_else(|err| panic!("GET {path}: {err}\nstderr:\n{}", http.stderr()));
    crate::http::reply(response)
}

const GET_OK: &str = r#"promptshelf_requests_total{method="prompts/get",outcome="ok"}"#;
const GET_ERROR: &str = r#"promptshelf_requests_total{method="prompts/get",outcome="error"}"#;
const GET_REFUSED: &str = r#"promptshelf_requests_total{method="prompts/get",outcome="refused"}"#;
const COUNT: &str = "promptshelf_request_seconds_count";

#[test]
fn metrics_count_requests_by_method_outcome_and_status() {
    let ctx = TestContext::new();
    let http = HttpServer::start(&ctx.db, &[]);
    let before = scrape(&http, None);
    assert_eq!(sample(&before, "promptshelf_open_streams"), 0.0);
    let review = json!({"name": "code-review", "arguments": {"code": "fn main() {}"}});
    for id in 1..=2 {
        let answered = http.modern(id, "prompts/get", review.clone());
        assert_eq!(answered.status, 200, "{}", answered.body);
        assert!(answered.json()["result"].is_object(), "{}", answered.body);
    }
    let unknown = http.modern(3, "prompts/get", json!({"name": "no-such-prompt"}));
    assert_eq!(unknown.status, 200, "{}", unknown.body);
    // Mcp-Name says another prompt: 400 -32020, before any answer.
    let (mut headers, body) = modern_request(4, "prompts/get", review);
    headers.retain(|(name, _)| *name != "mcp-name");
    headers.push(("mcp-name", "another".to_string()));
    let headers: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
    assert_eq!(http.post(&headers, &body).status, 400);
    assert_eq!(get(&http, "/nothing-here", None).status, 404);
    let after = scrape(&http, None);
    let moved = |name: &str| sample(&after, name) - sample(&before, name);
    assert_eq!(moved(GET_OK), 2.0, "{after:#?}");
    assert_eq!(moved(GET_ERROR), 1.0, "{after:#?}");
    assert_eq!(moved(GET_REFUSED), 1.0, "{after:#?}");
    assert_eq!(moved(COUNT), 4.0, "{after:#?}");
    assert_eq!(
        moved(r#"promptshelf_request_seconds_bucket{le="+Inf"}"#),
        4.0
    );
    assert_eq!(
        moved(r#"promptshelf_http_refusals_total{status="400"}"#),
        1.0
    );
    assert_eq!(
        moved(r#"promptshelf_http_refusals_total{status="404"}"#),
        1.0
    );
    // A method not served counts as `other`, whatever its name.
    assert_eq!(http.modern(5, "made/up", json!({})).status, 404);
    let later = scrape(&http, None);
    assert_eq!(
        sample(
            &later,
            r#"promptshelf_requests_total{method="other",outcome="refused"}"#
        ),
        1.0,
        "{later:#?}"
    );
    assert!(
        !later.keys().any(|key| key.contains("made/up")),
        "{later:#?}"
    );
}

#[test]
fn metrics_gauge_open_streams_and_the_change_position() {
    let ctx = TestContext::new();
    let http = HttpServer::start(&ctx.db, &["--poll-ms", "20"]);
    let start = sample(&scrape(&http, None), "promptshelf_change_position");
    let events = http.listen_with("unused", "s1");
    assert_eq!(
        events.next()["method"],
        "notifications/subscriptions/acknowledged"
    );
    assert_eq!(
        sample(&scrape(&http, None), "promptshelf_open_streams"),
        1.0
    );
    let file = ctx.write(
        "added.prompt.md",
        "---\ndescription: A test prompt\n---\nSay hello.\n",
    );
    ctx.ok(&["prompt", "add", &file.display().to_string()]);
    // The stream hears of the write once the watcher has seen it: the position moved.
    assert_eq!(
        events.next()["method"],
        "notifications/prompts/list_changed"
    );
    let moved = sample(&scrape(&http, None), "promptshelf_change_position");
    assert!(moved > start, "{start} then {moved}");
}

#[test]
fn metrics_ask_for_the_endpoints_token() {
    let ctx = TestContext::new();
    let secret = token(&ctx, "prometheus", None);
    let http = HttpServer::start(&ctx.db, &["--auth", "token"]);
    let refused = get(&http, "/metrics", None);
    assert_eq!(refused.status, 401, "{}", refused.body);
    assert_eq!(get(&http, "/metrics", Some("not-a-token")).status, 401);
    let samples = scrape(&http, Some(&secret));
    assert_eq!(
        sample(&samples, r#"promptshelf_http_refusals_total{status="401"}"#),
        2.0,
        "{samples:#?}"
    );
    // Health checks stay open: a balancer holds no token.
    assert_eq!(get(&http, "/healthz", None).status, 200);
}

fn completion() -> serde_json::Value {
    json!({"ref": {"type": "ref/prompt", "name": "code-review"},
           "argument": {"name": "language", "value": "ru"}})
}

/// What the server logs at debug level when a caller is over its request rate.
const OVER_RATE: &str = "is over its request rate";

/// A server asking for bearer tokens that lets each token make one request a second, with
/// `burst` requests at once, logging its refusals.
fn rate_limited_server(ctx: &TestContext, burst: &str) -> HttpServer {
    HttpServer::start_logging(
        &ctx.db,
        "127.0.0.1:0",
        &[
            "--auth",
            "token",
            "--rate-per-token",
            "1",
            "--rate-burst",
            burst,
        ],
        Some("warn,promptshelf::server::http::callers=debug"),
    )
}

#[test]
fn a_refused_request_over_the_rate_leaves_its_connection_open() {
    use std::io::{BufRead, BufReader, Read, Write};

    let ctx = TestContext::new();
    let alpha = token(&ctx, "alpha", None);
    let http = rate_limited_server(&ctx, "1");
    let address = http.base.trim_start_matches("http://");
    let connection = std::net::TcpStream::connect(address).expect("connect");
    connection
        .set_read_timeout(Some(crate::common::WAIT))
        .expect("a read timeout");
    let mut writer = connection.try_clone().expect("a second handle");
    let mut reader = BufReader::new(connection);
    // One request on the kept-alive connection, and the status and body of its answer;
    // None when the server closed the connection instead of answering. `split`: the body
    // is sent once the server has refused the head (its debug log says so), as a client
    // writing them apart does, so that the server has to read it rather than find it
    // buffered with the head.
    let mut exchange = |id: i64, split: bool| -> Option<(String, String)> {
        let (headers, body) = modern_request(id, "prompts/list", json!({}));
        let mut request = format!(
            "POST /mcp HTTP/1.1\r\nhost: {address}\r\nauthorization: Bearer {alpha}\r\n\
             content-type: application/json\r\naccept: application/json, text/event-stream\r\n\
             content-length: {}\r\n",
            body.len()
        );
        for (name, value) in &headers {
            request.push_str(&format!("{name}: {value}\r\n"));
        }
        request.push_str("\r\n");
        let refusals = http.logged(OVER_RATE);
        writer.write_all(request.as_bytes()).ok()?;
        if split {
            // Once the server has refused the head, it waits for the body.
            http.wait_logged(OVER_RATE, refusals);
        }
        writer.write_all(body.as_bytes()).ok()?;
        let mut status = String::new();
        if reader.read_line(&mut status).ok()? == 0 {
            return None;
        }
        let mut length = 0;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).expect("a header line");
            if line == "\r\n" {
                break;
            }
            if let Some((name, value)) = line.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().expect("a content length");
            }
        }
        let mut answer = vec![0; length];
        reader.read_exact(&mut answer).expect("the body");
        Some((status, String::from_utf8_lossy(&answer).into_owned()))
    };
    let (served, body) = exchange(1, false).expect("the first request is answered");
    assert!(served.starts_with("HTTP/1.1 200"), "{served} {body}");
    let (refused, body) = exchange(2, true).expect("the second request is answered");
    assert!(refused.starts_with("HTTP/1.1 429"), "{refused} {body}");
    // The refused request's body was read, so the connection is still there for the next.
    let (next, body) = exchange(3, false).unwrap_or_else(|| {
        panic!(
            "the connection was closed after the 429\nstderr:\n{}",
            http.stderr()
        )
    });
    assert!(next.starts_with("HTTP/1.1 "), "{next} {body}");
}

#[test]
fn a_token_over_its_rate_is_refused_429_while_another_is_served() {
    let ctx = TestContext::new();
    let alpha = token(&ctx, "alpha", None);
    let beta = token(&ctx, "beta", None);
    let http = rate_limited_server(&ctx, "3");
    // The burst is served whatever the time between requests...
    for id in 1..=3 {
        let served = http.with_token(&alpha, id, "prompts/list", json!({}));
        assert_eq!(served.status, 200, "{}", served.body);
    }
    // ...and of the next five, sent one after another at one per second at most, the
    // first is refused unless a whole second passed since the burst.
    let refused = (4..=8)
        .map(|id| http.with_token(&alpha, id, "prompts/list", json!({})))
        .find(|reply| reply.status != 200)
        .expect("a request over the rate is refused");
    assert_eq!(refused.status, 429, "{}", refused.body);
    let wait: u64 = refused
        .header("retry-after")
        .unwrap_or_else(|| panic!("no Retry-After: {}", refused.body))
        .parse()
        .expect("Retry-After in seconds");
    assert!(wait >= 1, "{wait}");
    assert_eq!(refused.code(), -31429);
    let error = &refused.json()["error"];
    let message = error["message"].as_str().unwrap_or_default();
    assert!(message.contains("the token 'alpha'"), "{message}");
    assert!(message.contains("--rate-per-token"), "{message}");
    assert_eq!(error["data"]["limit"], "--rate-per-token");
    assert!(
        error["data"]["retryAfterMs"]
            .as_u64()
            .is_some_and(|ms| ms > 0)
    );
    // Another token has a bucket of its own.
    let other = http.with_token(&beta, 9, "prompts/list", json!({}));
    assert_eq!(other.status, 200, "{}", other.body);
    let samples = scrape(&http, Some(&beta));
    assert!(
        sample(&samples, r#"promptshelf_http_refusals_total{status="429"}"#) >= 1.0,
        "{samples:#?}"
    );
}

#[test]
fn completion_rates_are_per_token() {
    let ctx = TestContext::new();
    let alpha = token(&ctx, "alpha", None);
    let beta = token(&ctx, "beta", None);
    let http = HttpServer::start(
        &ctx.db,
        &[
            "--auth",
            "token",
            "--completion-rate",
            "1",
            "--completion-burst",
            "2",
        ],
    );
    for id in 1..=2 {
        let served = http.with_token(&alpha, id, "completion/complete", completion());
        assert!(served.json()["result"].is_object(), "{}", served.body);
    }
    let refused = (3..=7)
        .map(|id| http.with_token(&alpha, id, "completion/complete", completion()))
        .find(|reply| reply.status != 200)
        .expect("a completion over the rate is refused");
    assert_eq!(refused.status, 429, "{}", refused.body);
    assert!(refused.header("retry-after").is_some(), "{}", refused.body);
    assert_eq!(refused.code(), -31429);
    // Refused once its message was read: the answer names the request.
    let id = refused.json()["id"].as_i64();
    assert!(
        id.is_some_and(|id| (3..=7).contains(&id)),
        "{}",
        refused.body
    );
    assert!(
        refused.body.contains("--completion-rate"),
        "{}",
        refused.body
    );
    // Other methods are not held by the completion rate, and beta has its own bucket.
    assert_eq!(
        http.with_token(&alpha, 8, "prompts/list", json!({})).status,
        200
    );
    let other = http.with_token(&beta, 9, "completion/complete", completion());
    assert!(other.json()["result"].is_object(), "{}", other.body);
}

#[test]
fn streams_beyond_a_tokens_cap_are_refused_429_while_another_token_opens_one() {
    let ctx = TestContext::new();
    let alpha = token(&ctx, "alpha", None);
    let beta = token(&ctx, "beta", None);
    let http = HttpServer::start(
        &ctx.db,
        &["--auth", "token", "--max-streams-per-token", "1"],
    );
    let first = http.listen_with(&alpha, "a1");
    assert_eq!(
        first.next()["method"],
        "notifications/subscriptions/acknowledged"
    );
    let (headers, body) = listen_request("a2");
    let bearer = format!("Bearer {alpha}");
    let mut headers: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
    headers.push(("authorization", &bearer));
    let refused = http.post(&headers, &body);
    assert_eq!(refused.status, 429, "{}", refused.body);
    assert!(
        refused.body.contains("--max-streams-per-token"),
        "{}",
        refused.body
    );
    assert!(refused.body.contains("'alpha'"), "{}", refused.body);
    let other = http.listen_with(&beta, "b1");
    assert_eq!(
        other.next()["method"],
        "notifications/subscriptions/acknowledged"
    );
    assert_eq!(
        sample(&scrape(&http, Some(&beta)), "promptshelf_open_streams"),
        2.0
    );
}

/// A `subscriptions/listen` request's headers and body.
fn listen_request(id: &str) -> (Vec<(&'static str, String)>, String) {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
        "params": crate::common::modern_params(
            json!({"notifications": {"promptsListChanged": true}}), json!({}))});
    let headers = vec![
        ("mcp-protocol-version", crate::common::MODERN.to_string()),
        ("mcp-method", "subscriptions/listen".to_string()),
    ];
    (headers, body.to_string())
}

#[test]
fn rate_flags_are_checked() {
    let ctx = TestContext::new();
    let burst_alone = ctx.fails(&["serve", "--http", "127.0.0.1:0", "--rate-burst", "5"]);
    assert!(burst_alone.contains("--rate-per-token"), "{burst_alone}");
    let zero = ctx.fails(&[
        "serve",
        "--http",
        "127.0.0.1:0",
        "--max-streams-per-token",
        "0",
    ]);
    assert!(zero.contains("--max-streams-per-token"), "{zero}");
}

/// A self-signed certificate for 127.0.0.1 and localhost, written as PEM files: the
/// certificate's path, the key's, and the certificate's DER for a client to trust.
fn self_signed(ctx: &TestContext, name: &str) -> (String, String, Vec<u8>) {
    let made =
        rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_string(), "localhost".to_string()])
            .expect("a self-signed certificate");
    let cert = ctx.write(&format!("tls/{name}.crt"), made.cert.pem());
    let key = ctx.write(&format!("tls/{name}.key"), made.signing_key.serialize_pem());
    (
        cert.display().to_string(),
        key.display().to_string(),
        made.cert.der().to_vec(),
    )
}

/// A client that trusts the certificate `der` and nothing else.
fn trusting(der: &[u8]) -> ureq::Agent {
    let root = ureq::tls::Certificate::from_der(der).to_owned();
    let tls = ureq::tls::TlsConfig::builder()
        .provider(ureq::tls::TlsProvider::Rustls)
        .root_certs(ureq::tls::RootCerts::Specific(std::sync::Arc::new(vec![
            root,
        ])))
        .build();
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .tls_config(tls)
        .build()
        .into()
}

#[test]
fn https_serves_healthz_and_mcp_with_the_given_certificate() {
    let ctx = TestContext::new();
    let (cert, key, der) = self_signed(&ctx, "server");
    let http = HttpServer::start(&ctx.db, &["--tls-cert", &cert, "--tls-key", &key]);
    assert!(http.base.starts_with("https://127.0.0.1:"), "{}", http.base);
    let client = trusting(&der);
    let mut health = client
        .get(format!("{}/healthz", http.base))
        .call()
        .unwrap_or_else(|err| panic!("GET /healthz over TLS: {err}\n{}", http.stderr()));
    assert_eq!(health.status(), 200);
    assert_eq!(health.body_mut().read_to_string().expect("a body"), "ok\n");
    let post = |origin: Option<&str>| {
        let (headers, body) = modern_request(1, "prompts/list", json!({}));
        let mut request = client.post(http.url());
        for (name, value) in &headers {
            request = request.header(*name, value);
        }
        if let Some(origin) = origin {
            request = request.header("origin", origin);
        }
        let response = request
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .send(&body)
            .unwrap_or_else(|err| panic!("POST over TLS: {err}\n{}", http.stderr()));
        crate::http::reply(response)
    };
    let listed = post(None);
    assert_eq!(listed.status, 200, "{}", listed.body);
    assert!(
        listed.json()["result"]["prompts"].is_array(),
        "{}",
        listed.body
    );
    // The server's own origin is now https://...
    let own = http.base.clone();
    assert_eq!(post(Some(&own)).status, 200);
    let plain = own.replacen("https://", "http://", 1);
    assert_eq!(post(Some(&plain)).status, 403);
    // A client that does not trust the certificate is not served.
    let stranger = self_signed(&ctx, "other").2;
    assert!(
        trusting(&stranger)
            .get(format!("{}/healthz", http.base))
            .call()
            .is_err()
    );
}

#[test]
fn bad_certificate_files_are_refused_naming_the_file() {
    let ctx = TestContext::new();
    let (cert, key, _) = self_signed(&ctx, "good");
    let (other_cert, _, _) = self_signed(&ctx, "other");
    let garbage = ctx.write("tls/garbage.pem", "not a certificate\n");
    let garbage = garbage.display().to_string();
    let missing = ctx.path("tls/missing.pem").display().to_string();
    let serve = |cert: &str, key: &str| {
        ctx.fails(&[
            "serve",
            "--http",
            "127.0.0.1:0",
            "--auth",
            "none",
            "--tls-cert",
            cert,
            "--tls-key",
            key,
        ])
    };
    for (cert, key, said) in [
        (missing.as_str(), key.as_str(), "cannot read --tls-cert"),
        (garbage.as_str(), key.as_str(), "holds no certificate"),
        (cert.as_str(), garbage.as_str(), "holds no private key"),
        (cert.as_str(), other_cert.as_str(), "holds no private key"),
        (
            other_cert.as_str(),
            key.as_str(),
            "is not the key of the certificate",
        ),
    ] {
        let error = serve(cert, key);
        assert!(error.contains(said), "{cert} {key}: {error}");
        assert!(
            error.contains(cert) || error.contains(key),
            "the file is not named: {error}"
        );
    }
    let alone = ctx.fails(&["serve", "--http", "127.0.0.1:0", "--tls-cert", &cert]);
    assert!(alone.contains("--tls-key"), "{alone}");
    let alone = ctx.fails(&["serve", "--http", "127.0.0.1:0", "--tls-key", &key]);
    assert!(alone.contains("--tls-cert"), "{alone}");
}

#[test]
fn a_tokens_stream_place_comes_back_when_its_stream_ends() {
    let ctx = TestContext::new();
    let alpha = token(&ctx, "alpha", None);
    let http = HttpServer::start(
        &ctx.db,
        &["--auth", "token", "--max-streams-per-token", "1"],
    );
    let (headers, body) = listen_request("a1");
    let bearer = format!("Bearer {alpha}");
    let open = || {
        // A client of its own: its connection closes when the response is dropped.
        let mut request = crate::http::agent().post(http.url());
        for (name, value) in &headers {
            request = request.header(*name, value);
        }
        request
            .header("authorization", &bearer)
            .send(&body)
            .expect("POST subscriptions/listen")
    };
    let first = open();
    assert_eq!(first.status(), 200);
    assert_eq!(open().status(), 429);
    drop(first);
    // The server sees the connection close and gives the token its place back.
    let deadline = std::time::Instant::now() + crate::common::WAIT;
    loop {
        let again = open();
        if again.status() == 200 {
            break;
        }
        assert_eq!(again.status(), 429);
        assert!(
            std::time::Instant::now() < deadline,
            "the token's place is still taken after its stream ended"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn without_authentication_the_process_is_one_caller() {
    let ctx = TestContext::new();
    let http = HttpServer::start(&ctx.db, &["--rate-per-token", "1", "--rate-burst", "2"]);
    for id in 1..=2 {
        assert_eq!(http.modern(id, "prompts/list", json!({})).status, 200);
    }
    let refused = (3..=7)
        .map(|id| http.modern(id, "prompts/list", json!({})))
        .find(|reply| reply.status != 200)
        .expect("a request over the rate is refused");
    assert_eq!(refused.status, 429, "{}", refused.body);
    assert!(refused.body.contains("--auth none"), "{}", refused.body);
    assert!(refused.header("retry-after").is_some());
}
