//! Operating `serve --http`: `/metrics`, the per-caller limits (request rate, completion
//! rate, streams) and TLS. The real binary on 127.0.0.1, as in `http`.

use std::collections::BTreeMap;

use serde_json::json;

use crate::common::TestContext;
use crate::http::{HttpServer, Reply, modern_request, token};

/// `/metrics` parsed: each sample line's name with its labels, and its value.
fn scrape(http: &HttpServer, bearer: Option<&str>) -> BTreeMap<String, f64> {
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
fn sample(samples: &BTreeMap<String, f64>, name: &str) -> f64 {
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
