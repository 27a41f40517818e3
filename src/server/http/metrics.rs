//! `GET /metrics`: what this instance has served, in the Prometheus text exposition format
//! (version 0.0.4), written by hand: a few counters, one histogram and three gauges do
//! not need a metrics library.
//!
//! - `promptshelf_requests_total{method,outcome}`: JSON-RPC requests over HTTP by method
//!   and outcome: `ok` (a result), `error` (a JSON-RPC error answered 200, such as an
//!   unknown prompt) or `refused` (answered with an HTTP error status: a header fault, a
//!   completion over its rate, a stream cap). A request refused before its body is read
//!   has no method yet: it counts only by status. A method this server does not serve counts as `other`, so
//!   the label takes a fixed set of values whatever clients send.
//! - `promptshelf_request_seconds`: how long those requests took to answer (for a stream,
//!   to open), as a histogram.
//! - `promptshelf_http_refusals_total{status}`: every response with a 4xx or 5xx status,
//!   those refused before a message was read (401, 403, 413, 429, ...) among them.
//! - `promptshelf_http_guarded_total{guard}`: what the guards against one bad caller did:
//!   `host` (a `Host` not served, 403), `body_timeout` (a body not whole within
//!   `--body-timeout`, 408), `in_flight_share` (a caller over its share of requests at once,
//!   429), `stream_credential` (a stream closed because its token was removed or expired).
//! - `promptshelf_open_streams`, `promptshelf_requests_in_flight`: gauges read at scrape.
//! - `promptshelf_change_position`: the change-log position the watcher has seen, which
//!   follows the primary's writes (on a replica, as Litestream applies them).
//!
//! Counts are kept per process from its start, as Prometheus counters are.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use crate::protocol::Method;

/// The histogram's upper bounds, in seconds.
const BUCKETS: [f64; 12] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0,
];

/// How a request ended, for `promptshelf_requests_total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Outcome {
    Ok,
    Error,
    Refused,
}

impl Outcome {
    fn label(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Error => "error",
            Outcome::Refused => "refused",
        }
    }
}

/// What a guard against one bad caller did, for `promptshelf_http_guarded_total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Guard {
    Host,
    BodyTimeout,
    InFlightShare,
    StreamCredential,
}

impl Guard {
    fn label(self) -> &'static str {
        match self {
            Guard::Host => "host",
            Guard::BodyTimeout => "body_timeout",
            Guard::InFlightShare => "in_flight_share",
            Guard::StreamCredential => "stream_credential",
        }
    }
}

/// Marks a response (in its extensions, never sent) whose 200 body is a JSON-RPC error.
#[derive(Debug, Clone, Copy)]
pub(super) struct AnsweredError;

/// A method's label: its name when this server serves it, `other` for any other name.
pub(super) fn label(method: &Method) -> String {
    match method {
        Method::Unknown(_) => "other".to_string(),
        served => served.name().to_string(),
    }
}

#[derive(Default)]
pub(super) struct Metrics {
    /// By (method, outcome); methods are the served ones and `other`, so few keys.
    requests: Mutex<BTreeMap<(String, Outcome), u64>>,
    /// By status; only error statuses, so few keys.
    refusals: Mutex<BTreeMap<u16, u64>>,
    /// By guard.
    guarded: Mutex<BTreeMap<Guard, u64>>,
    /// Per bucket (not cumulative; summed when written), the last one for +Inf.
    latency: [AtomicU64; BUCKETS.len() + 1],
    latency_nanos: AtomicU64,
}

/// What is read when `/metrics` is asked, rather than counted.
pub(super) struct Gauges {
    pub(super) open_streams: usize,
    pub(super) in_flight: usize,
    pub(super) change_position: i64,
}

impl Metrics {
    /// A request for the method labelled `method` (`label`) ended with `outcome` after
    /// `took`.
    pub(super) fn request(&self, method: String, outcome: Outcome, took: Duration) {
        *self
            .requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry((method, outcome))
            .or_default() += 1;
        let seconds = took.as_secs_f64();
        let bucket = BUCKETS
            .iter()
            .position(|bound| seconds <= *bound)
            .unwrap_or(BUCKETS.len());
        self.latency[bucket].fetch_add(1, Ordering::Relaxed);
        let nanos = u64::try_from(took.as_nanos()).unwrap_or(u64::MAX);
        self.latency_nanos.fetch_add(nanos, Ordering::Relaxed);
    }

    /// A response went out with `status`; counted when it is an error status.
    pub(super) fn responded(&self, status: u16) {
        if status >= 400 {
            let mut refusals = self.refusals.lock().unwrap_or_else(PoisonError::into_inner);
            *refusals.entry(status).or_default() += 1;
        }
    }

    /// A guard refused a request or closed a stream.
    pub(super) fn guarded(&self, guard: Guard) {
        *self
            .guarded
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(guard)
            .or_default() += 1;
    }

    /// The exposition text.
    pub(super) fn text(&self, gauges: &Gauges) -> String {
        let mut out = String::new();
        out.push_str(
            "# HELP promptshelf_requests_total JSON-RPC requests over HTTP, by method and outcome.\n\
             # TYPE promptshelf_requests_total counter\n",
        );
        {
            let requests = self.requests.lock().unwrap_or_else(PoisonError::into_inner);
            for ((method, outcome), count) in requests.iter() {
                let _ = writeln!(
                    out,
                    "promptshelf_requests_total{{method=\"{method}\",outcome=\"{}\"}} {count}",
                    outcome.label()
                );
            }
        }
        out.push_str(
            "# HELP promptshelf_request_seconds Time to answer a JSON-RPC request (to open, for a stream).\n\
             # TYPE promptshelf_request_seconds histogram\n",
        );
        let mut cumulative = 0u64;
        for (index, count) in self.latency.iter().enumerate() {
            cumulative += count.load(Ordering::Relaxed);
            let bound = BUCKETS
                .get(index)
                .map_or_else(|| "+Inf".to_string(), f64::to_string);
            let _ = writeln!(
                out,
                "promptshelf_request_seconds_bucket{{le=\"{bound}\"}} {cumulative}"
            );
        }
        let sum = self.latency_nanos.load(Ordering::Relaxed) as f64 / 1e9;
        let _ = writeln!(out, "promptshelf_request_seconds_sum {sum}");
        let _ = writeln!(out, "promptshelf_request_seconds_count {cumulative}");
        out.push_str(
            "# HELP promptshelf_http_refusals_total Responses with an HTTP error status, by status.\n\
             # TYPE promptshelf_http_refusals_total counter\n",
        );
        {
            let refusals = self.refusals.lock().unwrap_or_else(PoisonError::into_inner);
            for (status, count) in refusals.iter() {
                let _ = writeln!(
                    out,
                    "promptshelf_http_refusals_total{{status=\"{status}\"}} {count}"
                );
            }
        }
        out.push_str(
            "# HELP promptshelf_http_guarded_total Requests refused and streams closed by the guards against one bad caller, by guard.\n\
             # TYPE promptshelf_http_guarded_total counter\n",
        );
        {
            let guarded = self.guarded.lock().unwrap_or_else(PoisonError::into_inner);
            for (guard, count) in guarded.iter() {
                let _ = writeln!(
                    out,
                    "promptshelf_http_guarded_total{{guard=\"{}\"}} {count}",
                    guard.label()
                );
            }
        }
        let _ = write!(
            out,
            "# HELP promptshelf_open_streams Event streams open now.\n\
             # TYPE promptshelf_open_streams gauge\n\
             promptshelf_open_streams {}\n\
             # HELP promptshelf_requests_in_flight POST requests being answered now.\n\
             # TYPE promptshelf_requests_in_flight gauge\n\
             promptshelf_requests_in_flight {}\n\
             # HELP promptshelf_change_position The change-log position the watcher has seen.\n\
             # TYPE promptshelf_change_position gauge\n\
             promptshelf_change_position {}\n",
            gauges.open_streams, gauges.in_flight, gauges.change_position
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_buckets_are_written_cumulatively() {
        let metrics = Metrics::default();
        let ping = || label(&Method::Ping);
        metrics.request(ping(), Outcome::Ok, Duration::from_micros(100));
        metrics.request(ping(), Outcome::Ok, Duration::from_millis(3));
        let unknown = label(&Method::Unknown("x/y".into()));
        metrics.request(unknown, Outcome::Refused, Duration::from_secs(9));
        metrics.responded(404);
        metrics.responded(200);
        metrics.guarded(Guard::BodyTimeout);
        let text = metrics.text(&Gauges {
            open_streams: 2,
            in_flight: 1,
            change_position: 7,
        });
        for line in [
            "promptshelf_requests_total{method=\"ping\",outcome=\"ok\"} 2",
            "promptshelf_requests_total{method=\"other\",outcome=\"refused\"} 1",
            "promptshelf_request_seconds_bucket{le=\"0.0005\"} 1",
            "promptshelf_request_seconds_bucket{le=\"0.005\"} 2",
            "promptshelf_request_seconds_bucket{le=\"5\"} 2",
            "promptshelf_request_seconds_bucket{le=\"+Inf\"} 3",
            "promptshelf_request_seconds_count 3",
            "promptshelf_http_refusals_total{status=\"404\"} 1",
            "promptshelf_http_guarded_total{guard=\"body_timeout\"} 1",
            "promptshelf_open_streams 2",
            "promptshelf_requests_in_flight 1",
            "promptshelf_change_position 7",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} not in\n{text}");
        }
        assert!(!text.contains("status=\"200\""), "{text}");
    }
}
