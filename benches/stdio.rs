//! The stdio bench: promptshelf serving the seed library, against a trivial JSON-RPC echo
//! answering the same requests in the same run.
//!
//! Run with `cargo bench --bench stdio` (add `-- --quick` for a short smoke run, and any
//! other word to run only the workloads whose names contain it). For each
//! workload (`prompts/list`, `prompts/get` of code-review and of api-design-review,
//! `resources/read` of testing.md, of a 2,000-byte document, and of 1,000 and of 5,000
//! distinct 2,000-byte documents one after another (a team's working set, which no cache of
//! one document flatters; the server keeps the first whole, and little of the second),
//! `completion/complete` of
//! code-review's `language` and over a 10,000-value table, the latter also as legacy requests
//! after an `initialize`) it measures, for promptshelf and for the echo:
//! - closed-loop latency: one request at a time, p50 and p99 after a warm-up; the peer and
//!   the bench are pinned together to one CPU with `taskset` when it is available (so a
//!   round trip is two context switches on one core, as the budgets' echo figures assume);
//! - pipelined throughput: a writer keeps 64 requests in flight, a reader counts answers;
//!   three rounds, the peer's and the echo's taking turns, and the median of each (the
//!   budgets are medians, and one round moves with the machine's load);
//! - cold start: spawn, send one request, time to its answer; median over several spawns;
//! - peak resident memory (VmHWM) at the end of the pipelined run.
//!
//! The echo is this executable run with `--echo`: it reads lines, parses each with
//! serde_json, answers the same id with a small fixed result (about 2 KB for
//! `resources/read`), and flushes when no more input is buffered.
//!
//! The library is the seed, plus what the budgets (docs/benchmarks.md, "Budgets") name and
//! the seed lacks, added with the CLI: a 2,000-byte markdown document, a collection `pages` of
//! 5,000 more, and a table of 10,000 values with a prompt completing from it.
//!
//! Every answer is checked (the right id and a result, and one in `PARSE_EVERY` parsed
//! whole as JSON-RPC); a single wrong answer aborts the bench. Nothing here asserts on
//! time: it only prints figures.

mod common;

use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::json;

use common::{IN_FLIGHT, Peer, Program, closed_loop, micros, percentile};

/// How much of each measurement to do.
struct Sizes {
    warmup: usize,
    latency_requests: usize,
    pipelined_requests: u64,
    pipelined_time: Duration,
    /// Pipelined rounds of each peer, taking turns; the median is reported.
    pipelined_rounds: usize,
    spawns: usize,
}

const FULL: Sizes = Sizes {
    warmup: 2_000,
    latency_requests: 20_000,
    pipelined_requests: 200_000,
    pipelined_time: Duration::from_secs(3),
    pipelined_rounds: 3,
    spawns: 20,
};

const QUICK: Sizes = Sizes {
    warmup: 200,
    latency_requests: 2_000,
    pipelined_requests: 20_000,
    pipelined_time: Duration::from_millis(500),
    pipelined_rounds: 1,
    spawns: 5,
};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|arg| arg == "--echo") {
        common::echo();
        return;
    }
    let mut sizes = &FULL;
    let mut only = Vec::new();
    for arg in &args {
        match arg.as_str() {
            "--quick" => sizes = &QUICK,
            // cargo passes --bench to every bench executable.
            "--bench" => {}
            other if other.starts_with('-') => {
                eprintln!("stdio bench: ignoring argument {other:?}")
            }
            other => only.push(other.to_string()),
        }
    }
    run(sizes, &only);
}

/// The 2,000-byte document the bench adds to the seed library.
const TWO_KB_URI: &str = "shelf://bench/two-kb.md";

/// Adds what the budgets name and the seed lacks: a 2,000-byte document and a table of
/// 10,000 values with a prompt completing from it.
fn add_budget_items(db: &std::path::Path, folder: &std::path::Path) {
    let text: String = "Reference text for the bench, one line of it after another.\n"
        .repeat(40)
        .chars()
        .take(2_000)
        .collect();
    let document = folder.join("two-kb.md");
    std::fs::write(&document, text).expect("write the 2 KB document");
    common::cli(db, &["resource", "add", "--uri", TWO_KB_URI], &document);
    let pages = folder.join("pages");
    std::fs::create_dir_all(&pages).expect("create the pages folder");
    for page in 0..PAGES {
        let text: String =
            format!("Page {page} of the bench's working set, one line after another.\n")
                .repeat(40)
                .chars()
                .take(2_000)
                .collect();
        std::fs::write(pages.join(format!("page-{page}.md")), text).expect("write a page");
    }
    common::cli(db, &["import", "--collection", "pages"], &pages);
    common::add_services(db, folder, 10_000);
}

/// How many distinct 2,000-byte documents the `pages` collection holds. The working-set
/// workloads read, in turn, the first `KEPT_PAGES` of them (a working set the server keeps
/// whole) and all of them (five times what it keeps, so nearly every read is one from the
/// store: the read not kept, which the first no longer shows).
const PAGES: usize = 5_000;
const KEPT_PAGES: usize = 1_000;

/// `resources/read` request bodies for the first `count` pages, one each.
fn page_reads(count: usize) -> Vec<String> {
    (0..count)
        .map(|page| {
            common::request_body(
                "resources/read",
                json!({"uri": format!("shelf://pages/page-{page}.md")}),
            )
        })
        .collect()
}

/// `completion/complete` request bodies for one prompt argument, one per prefix, made by
/// `body` (`common::request_body`, or `common::legacy_request_body`).
fn completions(
    body: fn(&str, serde_json::Value) -> String,
    prompt: &str,
    argument: &str,
    prefixes: &[&str],
) -> Vec<String> {
    prefixes
        .iter()
        .map(|prefix| {
            body(
                "completion/complete",
                json!({
                    "ref": {"type": "ref/prompt", "name": prompt},
                    "argument": {"name": argument, "value": prefix},
                }),
            )
        })
        .collect()
}

/// One kind of request, with a few variants cycled through so the server cannot answer the
/// same bytes every time.
struct Workload {
    name: &'static str,
    bodies: Vec<String>,
    /// Legacy requests: each process (promptshelf's and the echo's) is first sent an
    /// `initialize`, which its start includes.
    legacy: bool,
}

fn workloads() -> Vec<Workload> {
    let code_review = (0..64)
        .map(|i| {
            let code = format!(
                "fn checksum_{i}(data: &[u8]) -> u32 {{\n    let mut sum = {i}u32;\n    for byte in data {{\n        sum = sum.wrapping_mul(31).wrapping_add(*byte as u32);\n    }}\n    sum\n}}\n"
            );
            let language = ["rust", "python", "go", "typescript"][i % 4];
            common::request_body(
                "prompts/get",
                json!({"name": "code-review", "arguments": {"code": code, "language": language}}),
            )
        })
        .collect();
    let api_review = (0..64)
        .map(|i| {
            let spec = format!(
                "GET /v{i}/users?page=N\nPOST /v{i}/users {{name, email}}\nDELETE /v{i}/users/{{id}} returns 200 with the deleted user\n"
            );
            common::request_body(
                "prompts/get",
                json!({"name": "api-design-review", "arguments": {"spec": spec}}),
            )
        })
        .collect();
    let prefixes = ["a", "al", "de", "ro", "ta", "k", "ch", "sie", "gl", "m"];
    let services = completions(common::request_body, "deploy-service", "service", &prefixes);
    let legacy_services = completions(
        common::legacy_request_body,
        "deploy-service",
        "service",
        &prefixes,
    );
    let completion = completions(
        common::request_body,
        "code-review",
        "language",
        &["p", "ja", "ty", "ru", "c", "go", "sw", "ko", "e", "ha"],
    );
    vec![
        Workload {
            name: "prompts/list",
            bodies: vec![common::request_body("prompts/list", json!({}))],
            legacy: false,
        },
        Workload {
            name: "prompts/get code-review",
            bodies: code_review,
            legacy: false,
        },
        Workload {
            name: "prompts/get api-design-review",
            bodies: api_review,
            legacy: false,
        },
        Workload {
            name: "resources/read testing.md",
            bodies: vec![common::request_body(
                "resources/read",
                json!({"uri": "shelf://library/guides/testing.md"}),
            )],
            legacy: false,
        },
        Workload {
            name: "resources/read 2 KB",
            bodies: vec![common::request_body(
                "resources/read",
                json!({"uri": TWO_KB_URI}),
            )],
            legacy: false,
        },
        Workload {
            name: "resources/read 1,000 distinct 2 KB",
            bodies: page_reads(KEPT_PAGES),
            legacy: false,
        },
        Workload {
            name: "resources/read 5,000 distinct 2 KB",
            bodies: page_reads(PAGES),
            legacy: false,
        },
        Workload {
            name: "completion/complete language",
            bodies: completion,
            legacy: false,
        },
        Workload {
            name: "completion 10,000 values",
            bodies: services,
            legacy: false,
        },
        Workload {
            name: "completion 10,000 values, legacy",
            bodies: legacy_services,
            legacy: true,
        },
    ]
}

/// Every figure of one peer on one workload.
#[derive(Debug, Clone, Copy)]
struct Figures {
    p50: Duration,
    p99: Duration,
    per_second: f64,
    start: Duration,
    rss_kib: u64,
}

/// Where the closed-loop measurement runs: one CPU for the bench and the peer together, as
/// the budgets' echo figures were taken; and the CPUs the bench may use otherwise.
#[derive(Debug, Clone)]
struct Pin {
    cpu: usize,
    allowed: String,
}

/// None when taskset is not available.
type Pinning = Option<Pin>;

/// Runs the workloads whose names contain one of `only` (all when it is empty).
fn run(sizes: &Sizes, only: &[String]) {
    let pinning: Pinning = allowed_cpus().map(|allowed| Pin {
        cpu: last_cpu(&allowed),
        allowed,
    });
    let folder = tempfile::tempdir().expect("create a temporary folder");
    let db = folder.path().join("bench.db");
    common::create_seed_db(&db);
    add_budget_items(&db, folder.path());
    let server = Program::promptshelf(&db);
    let echo = Program {
        path: std::env::current_exe().expect("locate the bench executable"),
        args: vec!["--echo".into()],
        opening: None,
    };

    println!("promptshelf stdio bench: {}", common::machine_line());
    match pinning {
        Some(Pin { cpu, .. }) => println!(
            "closed loop: the peer and the bench pinned together to CPU {cpu} (taskset); pipelined and start unpinned"
        ),
        None => println!("closed loop: not pinned (taskset not found)"),
    }
    println!(
        "closed loop: {} requests after {} warm-up; pipelined: {IN_FLIGHT} in flight, up to {} requests or {:.1} s, median of {} rounds; start: median of {} spawns",
        sizes.latency_requests,
        sizes.warmup,
        sizes.pipelined_requests,
        sizes.pipelined_time.as_secs_f64(),
        sizes.pipelined_rounds,
        sizes.spawns
    );
    println!(
        "ratio = promptshelf / echo on the same requests (echo answers ~2 KB to resources/read); answers: every id and result checked, one in {} parsed whole",
        common::PARSE_EVERY
    );
    println!();
    println!(
        "{:<32} {:>9} {:>9} {:>10} {:>9} {:>8}",
        "workload", "p50 µs", "p99 µs", "req/s", "start ms", "RSS MiB"
    );
    let chosen = workloads().into_iter().filter(|workload| {
        only.is_empty()
            || only
                .iter()
                .any(|word| workload.name.contains(word.as_str()))
    });
    for workload in chosen {
        let (server, echo) = if workload.legacy {
            (server.legacy(), echo.legacy())
        } else {
            (server.clone(), echo.clone())
        };
        let mut ours = measure(&server, &workload, sizes, &pinning);
        let mut theirs = measure(&echo, &workload, sizes, &pinning);
        pipelined_rounds(&server, &echo, &workload, sizes, &mut ours, &mut theirs);
        print_row(workload.name, &ours);
        print_row("  echo, same requests", &theirs);
        print_ratio_row(&ours, &theirs);
    }
}

fn print_row(label: &str, figures: &Figures) {
    println!(
        "{label:<32} {:>9.1} {:>9.1} {:>10.0} {:>9.2} {:>8.1}",
        micros(figures.p50),
        micros(figures.p99),
        figures.per_second,
        figures.start.as_secs_f64() * 1e3,
        figures.rss_kib as f64 / 1024.0
    );
}

fn print_ratio_row(ours: &Figures, theirs: &Figures) {
    let ratio = |a: f64, b: f64| {
        let ratio = a / b;
        if ratio < 0.1 {
            format!("{ratio:.3}x")
        } else {
            format!("{ratio:.2}x")
        }
    };
    println!(
        "{:<32} {:>9} {:>9} {:>10} {:>9} {:>8}",
        "  ratio to echo",
        ratio(micros(ours.p50), micros(theirs.p50)),
        ratio(micros(ours.p99), micros(theirs.p99)),
        ratio(ours.per_second, theirs.per_second),
        ratio(ours.start.as_secs_f64(), theirs.start.as_secs_f64()),
        ratio(ours.rss_kib as f64, theirs.rss_kib as f64)
    );
}

fn measure(program: &Program, workload: &Workload, sizes: &Sizes, pinning: &Pinning) -> Figures {
    let what = format!("{} ({})", workload.name, program.path.display());

    if let Some(pin) = pinning {
        pin_self(&pin.cpu.to_string());
    }
    let mut peer = Peer::spawn(program, pinning.as_ref().map(|pin| pin.cpu));
    let times = closed_loop(
        &mut peer,
        &workload.bodies,
        sizes.warmup,
        sizes.latency_requests,
        &format!("closed loop, {what}"),
    );
    peer.finish();
    if let Some(pin) = pinning {
        pin_self(&pin.allowed);
    }

    let start = common::cold_start(program, &workload.bodies[0], sizes.spawns, &what);
    Figures {
        p50: percentile(&times, 0.50),
        p99: percentile(&times, 0.99),
        per_second: 0.0,
        start,
        rss_kib: 0,
    }
}

/// The pipelined figures of both peers: `pipelined_rounds` rounds each, taking turns so
/// that a busy moment of the machine falls on both; the median rate, the highest memory.
fn pipelined_rounds(
    server: &Program,
    echo: &Program,
    workload: &Workload,
    sizes: &Sizes,
    ours: &mut Figures,
    theirs: &mut Figures,
) {
    let mut rates = [Vec::new(), Vec::new()];
    for _ in 0..sizes.pipelined_rounds {
        for (side, (program, figures)) in [(server, &mut *ours), (echo, &mut *theirs)]
            .into_iter()
            .enumerate()
        {
            let what = format!("{} ({})", workload.name, program.path.display());
            let (per_second, rss_kib) = common::pipelined(
                program,
                &workload.bodies,
                sizes.pipelined_requests,
                sizes.pipelined_time,
                &what,
            );
            rates[side].push(per_second);
            figures.rss_kib = figures.rss_kib.max(rss_kib);
        }
    }
    for (rates, figures) in rates.iter_mut().zip([ours, theirs]) {
        rates.sort_by(f64::total_cmp);
        figures.per_second = rates[rates.len() / 2];
    }
}

/// The CPUs this process may run on, as taskset lists them (e.g. "0-1"), or None when
/// taskset is not available.
fn allowed_cpus() -> Option<String> {
    let output = Command::new("taskset")
        .args(["-c", "-p", &std::process::id().to_string()])
        .stderr(Stdio::null())
        .output()
        .ok()
        .filter(|output| output.status.success())?;
    // "pid 123's current affinity list: 0,1"
    let text = String::from_utf8_lossy(&output.stdout);
    Some(text.rsplit(':').next()?.trim().to_string()).filter(|list| !list.is_empty())
}

/// The highest CPU of a taskset list such as "0-3" or "0,2,5-7".
fn last_cpu(list: &str) -> usize {
    list.rsplit([',', '-'])
        .next()
        .and_then(|cpu| cpu.trim().parse().ok())
        .unwrap_or(0)
}

/// Sets the CPU affinity of every thread of this process (`cpus` as taskset takes it, e.g.
/// "0" or "0-1"); threads started later inherit it.
pub fn pin_self(cpus: &str) {
    let status = Command::new("taskset")
        .args(["-a", "-p", "-c", cpus, &std::process::id().to_string()])
        .stdout(Stdio::null())
        .status()
        .expect("run taskset on the bench process");
    assert!(
        status.success(),
        "taskset could not pin the bench to CPUs {cpus}"
    );
}
