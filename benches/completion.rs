//! The completion bench: `completion/complete` over a 1,000,000-value completion table,
//! through the real stdio server.
//!
//! Run with `cargo bench --bench completion` (add `-- --quick` for a short smoke run). It
//! builds a temporary database (the seed library, plus a table `services` of one million
//! generated identifiers like `alpha-bravo-1234` with weights, plus a prompt
//! `deploy-service` whose `service` argument completes from it), starts
//! `promptshelf serve` on it, and prints closed-loop latency (p50, p99, max; one request at
//! a time) for 1-, 2- and 4-letter prefixes and for a fuzzy (subsequence) query, then the
//! server's peak resident memory (VmHWM).
//!
//! The table and the prompt are written with `promptshelf values import` and
//! `promptshelf prompt add`, as a person would.
//!
//! Nothing here asserts on time: it only prints figures. A wrong answer aborts the bench.

mod common;

use std::time::{Duration, Instant};

use serde_json::json;

use common::{Peer, Program, closed_loop, micros, percentile, total_matches};

const VALUES: usize = 1_000_000;

/// The query kinds, each with a few queries cycled through.
const QUERIES: [(&str, &[&str]); 4] = [
    ("1-letter prefix", &["a", "d", "k", "s", "m"]),
    ("2-letter prefix", &["al", "ch", "de", "ro", "ta"]),
    ("4-letter prefix", &["alph", "brav", "sier", "tang", "glac"]),
    (
        "fuzzy (subsequence)",
        &["abr12", "dcha9", "xrm44", "kvt7", "sgo31"],
    ),
];

struct Sizes {
    /// Stop timing a query kind after this long...
    time_per_kind: Duration,
    /// ...or after this many requests.
    max_requests: usize,
    /// At least this many, whatever the time.
    min_requests: usize,
}

const FULL: Sizes = Sizes {
    time_per_kind: Duration::from_secs(10),
    max_requests: 1_000,
    min_requests: 50,
};

const QUICK: Sizes = Sizes {
    time_per_kind: Duration::from_secs(2),
    max_requests: 100,
    min_requests: 10,
};

fn main() {
    let mut sizes = &FULL;
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--quick" => sizes = &QUICK,
            // cargo passes --bench to every bench executable.
            "--bench" => {}
            other => eprintln!("completion bench: ignoring argument {other:?}"),
        }
    }
    let folder = tempfile::tempdir().expect("create a temporary folder");
    let db = folder.path().join("bench.db");
    common::create_seed_db(&db);

    println!("promptshelf completion bench: {}", common::machine_line());
    let started = Instant::now();
    common::add_services(&db, folder.path(), VALUES);
    let size = std::fs::metadata(&db).expect("stat the database").len();
    println!(
        "table '{}': {VALUES} values, database {:.0} MiB, built in {:.1} s",
        common::SERVICES,
        size as f64 / (1024.0 * 1024.0),
        started.elapsed().as_secs_f64()
    );
    println!("closed loop, one request at a time, server not pinned; queries cycle within a kind");
    println!();
    println!(
        "{:<22} {:>8} {:>10} {:>10} {:>10}  matches (first query)",
        "query", "requests", "p50 ms", "p99 ms", "max ms"
    );

    let mut peer = Peer::spawn(&Program::promptshelf(&db), None);
    for (kind, queries) in QUERIES {
        let bodies: Vec<String> = queries.iter().map(|query| request(query)).collect();
        let matches = total_matches(&mut peer, &bodies[0]);
        // Warm up and estimate how many requests fit in the time for this kind.
        let warm = closed_loop(&mut peer, &bodies, 0, bodies.len(), kind);
        let typical = percentile(&warm, 0.5).max(Duration::from_micros(1));
        let count = ((sizes.time_per_kind.as_secs_f64() / typical.as_secs_f64()) as usize)
            .clamp(sizes.min_requests, sizes.max_requests);
        let times = closed_loop(&mut peer, &bodies, 0, count, kind);
        let ms = |d: Duration| micros(d) / 1e3;
        println!(
            "{kind:<22} {count:>8} {:>10.2} {:>10.2} {:>10.2}  {matches}",
            ms(percentile(&times, 0.5)),
            ms(percentile(&times, 0.99)),
            ms(percentile(&times, 1.0)),
        );
    }
    println!();
    println!(
        "server peak RSS (VmHWM) after the runs: {:.1} MiB",
        common::peak_rss_kib(peer.pid()) as f64 / 1024.0
    );
    peer.finish();
}

/// The body of a completion request for `query`.
fn request(query: &str) -> String {
    common::request_body(
        "completion/complete",
        json!({
            "ref": {"type": "ref/prompt", "name": "deploy-service"},
            "argument": {"name": "service", "value": query},
        }),
    )
}
