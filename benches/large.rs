//! The large-library bench: promptshelf serving a realistic large library, beside the stdio
//! echo in the same run, for the large-library budgets of docs/benchmarks.md ("Budgets").
//!
//! Run with `cargo bench --bench large` (add `-- --quick` for a smaller library, for smoke
//! runs). The library is 500,000 markdown documents of about 2 KB (distinct text, in 500
//! folders), 1,000 prompts with typed arguments and one embed of a document each, and a
//! completion table of 1,000,000 values that the prompts' `service` argument completes from,
//! all on top of the seed. It is built with the CLI of the server under test, as a person
//! would (`values import`, then `import` of generated folders, a batch at a time, each folder
//! deleted after its import), and kept under the target directory between runs
//! (`target/bench-cache/`): building it takes minutes on a small machine, and every figure is
//! about serving it. The cache is rebuilt when `GENERATOR` changes, when the file is missing,
//! or when its schema version is not the one the server under test writes.
//!
//! Then it prints, for promptshelf and the echo (this executable run with `--echo`):
//! - cold start to the first answer, median of several spawns (promptshelf and the echo
//!   taking turns), of `initialize` (legacy handshake), `server/discover`, `prompts/list`,
//!   `resources/read` and `prompts/get` of random items, and `completion/complete` on the big
//!   table (which takes its index into memory first);
//! - handshake on a running server: closed-loop p50/p99 of `server/discover`, and of a
//!   legacy `initialize` as the first request of a fresh session (a new process, awake);
//! - pipelined `resources/read` over random URIs, 64 in flight, with the peak resident memory
//!   (VmHWM) after it;
//! - closed-loop completion p50/p99 on the 1,000,000-value table by query kind;
//! - the server's peak resident memory after all of its closed-loop work.
//!
//! Every answer is checked by the common helpers; a wrong one aborts the bench. Nothing here
//! asserts on time or memory: it only prints figures.

mod common;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::json;

use common::{Peer, Program, closed_loop, micros, percentile, total_matches};

/// The version of what `build_library` generates: change it whenever the generated library
/// changes, so a cached database of the old generator is not measured as the new one.
const GENERATOR: u32 = 1;

/// The collection the generated documents and prompts are imported as.
const COLLECTION: &str = "large";

/// Folders the documents are spread over, so that URIs vary in more than a number.
const FOLDERS: usize = 500;

/// Documents written and imported at a time: bounds the temporary files and one import's
/// memory.
const BATCH: usize = 100_000;

/// How big a library, and how much of each measurement.
struct Sizes {
    name: &'static str,
    documents: usize,
    prompts: usize,
    values: usize,
    /// Spawns per cold-start figure (the median is printed).
    spawns: usize,
    /// Fresh sessions timed for `initialize`.
    sessions: usize,
    warmup: usize,
    closed_requests: usize,
    pipelined_time: Duration,
    /// Time per completion query kind, within a minimum and a maximum of requests.
    completion_time: Duration,
    completion_requests: (usize, usize),
}

const FULL: Sizes = Sizes {
    name: "full",
    documents: 500_000,
    prompts: 1_000,
    values: 1_000_000,
    spawns: 20,
    sessions: 200,
    warmup: 1_000,
    closed_requests: 10_000,
    pipelined_time: Duration::from_secs(5),
    completion_time: Duration::from_secs(5),
    completion_requests: (50, 1_000),
};

const QUICK: Sizes = Sizes {
    name: "quick",
    documents: 20_000,
    prompts: 1_000,
    values: 100_000,
    spawns: 5,
    sessions: 30,
    warmup: 200,
    closed_requests: 2_000,
    pipelined_time: Duration::from_secs(1),
    completion_time: Duration::from_secs(1),
    completion_requests: (10, 200),
};

/// Completion query kinds on the big table, each with a few queries cycled through (the
/// values look like `alpha-bravo-1234`, `common::generated_values`).
const QUERIES: [(&str, &[&str]); 5] = [
    ("1-letter prefix", &["a", "d", "k", "s", "m"]),
    ("2-letter prefix", &["al", "ch", "de", "ro", "ta"]),
    ("3-letter prefix", &["alp", "cha", "del", "rom", "tan"]),
    ("4-letter prefix", &["alph", "brav", "sier", "tang", "glac"]),
    (
        "fuzzy (subsequence)",
        &["abr12", "dcha9", "xrm44", "kvt7", "sgo31"],
    ),
];

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|arg| arg == "--echo") {
        common::echo();
        return;
    }
    let mut sizes = &FULL;
    for arg in &args {
        match arg.as_str() {
            "--quick" => sizes = &QUICK,
            // cargo passes --bench to every bench executable.
            "--bench" => {}
            other => eprintln!("large bench: ignoring argument {other:?}"),
        }
    }
    println!(
        "promptshelf large-library bench: {}",
        common::machine_line()
    );
    let db = library(sizes);
    run(sizes, &db);
}

/// The cached database of this size, built first when it is missing or stale.
fn library(sizes: &Sizes) -> PathBuf {
    // CARGO_TARGET_TMPDIR is <target>/tmp; the cache sits beside it.
    let cache = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("the target directory")
        .join("bench-cache");
    std::fs::create_dir_all(&cache).expect("create the bench cache folder");
    let db = cache.join(format!("large-{}-v{GENERATOR}.db", sizes.name));

    // The schema version the server under test writes, from a seed database it creates.
    let scratch = tempfile::tempdir().expect("create a temporary folder");
    let seed = scratch.path().join("seed.db");
    common::create_seed_db(&seed);
    let wanted = schema_version(&seed);
    let found = db.exists().then(|| schema_version(&db));
    if found == Some(wanted) {
        println!(
            "library: reused {} (generator v{GENERATOR}, schema {wanted})",
            db.display()
        );
    } else {
        match found {
            Some(version) => println!(
                "library: {} has schema {version}, the server writes {wanted}: rebuilding",
                db.display()
            ),
            None => println!("library: building {}", db.display()),
        }
        build_library(sizes, &db);
    }
    println!(
        "library: {} documents of about 2 KB in {FOLDERS} folders, {} prompts, a table of {} values, plus the seed",
        sizes.documents, sizes.prompts, sizes.values,
    );
    print_space(&db);
    db
}

/// The database's size against the content it holds (every stored blob, every prompt
/// message and every completion value, in bytes as stored), and the tables and indexes that
/// take the most of it (SQLite's `dbstat`: pages, and the bytes of rows in them).
fn print_space(db: &Path) {
    let mib = |bytes: i64| bytes as f64 / (1024.0 * 1024.0);
    let conn =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap_or_else(|err| panic!("open {}: {err}", db.display()));
    let (file, content): (i64, i64) = conn
        .query_row(
            "SELECT (SELECT page_count * page_size FROM pragma_page_count, pragma_page_size),
                    (SELECT sum(size) FROM blobs)
                    + (SELECT coalesce(sum(length(CAST(body AS BLOB))), 0) FROM prompt_messages)
                    + (SELECT coalesce(sum(length(CAST(value AS BLOB))), 0) FROM completion_values)",
            [],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .expect("measure the database");
    println!(
        "database: {:.0} MiB for {:.0} MiB of content ({:.2}x)",
        mib(file),
        mib(content),
        file as f64 / content as f64
    );
    let mut stmt = conn
        .prepare(
            "SELECT name, sum(pgsize), sum(payload) FROM dbstat
             GROUP BY name ORDER BY sum(pgsize) DESC LIMIT 8",
        )
        .expect("read dbstat");
    let rows = stmt
        .query_map([], |row| {
            Ok((row.get::<_, String>(0)?, row.get(1)?, row.get(2)?))
        })
        .expect("read dbstat")
        .collect::<rusqlite::Result<Vec<(String, i64, i64)>>>()
        .expect("read dbstat");
    for (name, pages, payload) in rows {
        println!(
            "  {name:<32} {:>8.0} MiB in pages, {:>8.0} MiB of rows",
            mib(pages),
            mib(payload)
        );
    }
}

/// `PRAGMA user_version` of the database at `db`, read without writing it.
fn schema_version(db: &Path) -> i64 {
    let conn =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap_or_else(|err| panic!("open {}: {err}", db.display()));
    conn.query_row("PRAGMA user_version", [], |row| row.get(0))
        .unwrap_or_else(|err| panic!("read the schema version of {}: {err}", db.display()))
}

/// Builds the library into `db` with the CLI: the values table, the documents a batch at a
/// time, then the prompts. It is built under another name and renamed when complete, so an
/// interrupted build is never reused.
fn build_library(sizes: &Sizes, db: &Path) {
    let partial = db.with_extension("db.partial");
    for stale in [
        partial.clone(),
        partial.with_extension("partial-wal"),
        partial.with_extension("partial-shm"),
    ] {
        let _ = std::fs::remove_file(stale);
    }
    let scratch = tempfile::tempdir().expect("create a temporary folder");
    let started = Instant::now();

    let values = scratch.path().join(format!("{}.csv", common::SERVICES));
    std::fs::write(&values, common::generated_values(sizes.values)).expect("write the values");
    common::cli(&partial, &["values", "import", common::SERVICES], &values);
    std::fs::remove_file(&values).expect("remove the values file");
    let values_time = started.elapsed();

    let folder = scratch.path().join(COLLECTION);
    let import = ["import", "--collection", COLLECTION];
    let (mut written, mut imported, mut removed) = (Duration::ZERO, Duration::ZERO, Duration::ZERO);
    let mut first = 0;
    while first < sizes.documents {
        let last = (first + BATCH).min(sizes.documents);
        let start = Instant::now();
        let bytes = write_documents(&folder, first..last);
        written += start.elapsed();
        let start = Instant::now();
        common::cli(&partial, &import, &folder);
        imported += start.elapsed();
        let start = Instant::now();
        std::fs::remove_dir_all(&folder).expect("remove the generated documents");
        removed += start.elapsed();
        println!(
            "library: documents {first}..{last} ({:.0} MiB) written and imported, {:.0} s so far",
            bytes as f64 / (1024.0 * 1024.0),
            started.elapsed().as_secs_f64()
        );
        first = last;
    }

    let start = Instant::now();
    write_prompts(&folder, sizes);
    common::cli(&partial, &import, &folder);
    std::fs::remove_dir_all(&folder).expect("remove the generated prompts");
    let prompts_time = start.elapsed();

    // Everything into the main file, so that the one file renamed holds it all.
    let conn = rusqlite::Connection::open(&partial).expect("open the new database");
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .expect("checkpoint the new database");
    drop(conn);
    let wal = partial.with_extension("partial-wal");
    assert!(
        std::fs::metadata(&wal).map_or(true, |wal| wal.len() == 0),
        "the new database still has a write-ahead log"
    );
    let _ = std::fs::remove_file(wal);
    std::fs::rename(&partial, db).expect("move the new database into the cache");
    println!(
        "library: built in {:.0} s: values {:.1} s, documents written {:.0} s, imported {:.0} s and deleted {:.0} s, prompts {:.1} s",
        started.elapsed().as_secs_f64(),
        values_time.as_secs_f64(),
        written.as_secs_f64(),
        imported.as_secs_f64(),
        removed.as_secs_f64(),
        prompts_time.as_secs_f64()
    );
}

/// Words the documents are written with.
const WORDS: [&str; 48] = [
    "shelf",
    "prompt",
    "library",
    "server",
    "index",
    "cache",
    "query",
    "render",
    "template",
    "resource",
    "stream",
    "token",
    "schema",
    "commit",
    "hash",
    "page",
    "review",
    "deploy",
    "release",
    "service",
    "latency",
    "budget",
    "replica",
    "backup",
    "restore",
    "migration",
    "rollout",
    "incident",
    "alert",
    "metric",
    "tracing",
    "logging",
    "policy",
    "access",
    "audit",
    "quota",
    "region",
    "cluster",
    "network",
    "storage",
    "config",
    "secret",
    "version",
    "build",
    "test",
    "runbook",
    "owner",
    "handoff",
];

/// A small random generator (xorshift64*): cheap, and the same library every time.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// The path of document `n` in its collection.
fn document_path(n: usize) -> String {
    format!("section-{:03}/doc-{n:06}.md", n % FOLDERS)
}

/// The URI of document `n`.
fn document_uri(n: usize) -> String {
    format!("shelf://{COLLECTION}/{}", document_path(n))
}

/// Writes documents `range` into `folder`, each about 2 KB of text no other document has (a
/// heading, a first paragraph that becomes its description, then paragraphs of random
/// words). Returns the bytes written.
fn write_documents(folder: &Path, range: std::ops::Range<usize>) -> u64 {
    for section in 0..FOLDERS.min(range.len()) {
        std::fs::create_dir_all(
            folder.join(format!("section-{:03}", (range.start + section) % FOLDERS)),
        )
        .expect("create a documents folder");
    }
    let mut bytes = 0;
    let mut text = String::with_capacity(2_200);
    for n in range {
        let mut random =
            Random(0x9e37_79b9_7f4a_7c15 ^ (n as u64 + 1).wrapping_mul(0xff51_afd7_ed55_8ccd));
        text.clear();
        let topic = WORDS[random.below(WORDS.len())];
        let _ = write!(
            text,
            "# Note {n}: {topic} of section {}\n\nHow the {topic} of part {n} works, and what to check first.\n\n",
            n % FOLDERS
        );
        let mut words_in_paragraph = 0;
        while text.len() < 2_000 {
            text.push_str(WORDS[random.below(WORDS.len())]);
            words_in_paragraph += 1;
            if words_in_paragraph >= 40 + random.below(40) {
                text.push_str(".\n\n");
                words_in_paragraph = 0;
            } else {
                text.push(' ');
            }
        }
        text.push_str(".\n");
        bytes += text.len() as u64;
        std::fs::write(folder.join(document_path(n)), &text).expect("write a document");
    }
    bytes
}

/// The name of prompt `n`.
fn prompt_name(n: usize) -> String {
    format!("task-{n:04}")
}

/// The document prompt `n` embeds.
fn embedded_document(n: usize, documents: usize) -> usize {
    (n * 7_919 + 13) % documents
}

/// Writes the prompts into `folder/prompts`, ten to a folder: typed arguments (one
/// completing from the big table, an enum, a bounded integer, a bounded string, a date) and
/// one embed of a generated document each.
fn write_prompts(folder: &Path, sizes: &Sizes) {
    for n in 0..sizes.prompts {
        let dir = folder.join(format!("prompts/group-{:02}", n / 10));
        std::fs::create_dir_all(&dir).expect("create a prompts folder");
        let name = prompt_name(n);
        let topic = WORDS[n % WORDS.len()];
        let uri = document_uri(embedded_document(n, sizes.documents));
        let text = format!(
            "\
---
name: {name}
title: \"Task {n}: {topic} for a service\"
description: \"Plan the {topic} work of one service, following note {uri}.\"
arguments:
  - name: service
    description: The service the work is for.
    required: true
    completion: {services}
  - name: format
    description: How the plan is written.
    type: enum
    values: [checklist, prose, table]
    default: checklist
  - name: depth
    description: How many levels of detail, 1 to 5.
    type: integer
    min: 1
    max: 5
    default: 2
  - name: focus
    description: What to look at most closely.
    type: string
    max_length: 200
  - name: due
    description: When the work must be done.
    type: date
---
Plan the {topic} work of {{{{ service }}}} as a {{{{ format }}}}, {{{{ depth }}}} levels deep{{% if due %}}, done by {{{{ due }}}}{{% endif %}}.
{{% if focus %}}Look most closely at {{{{ focus }}}}.{{% endif %}}

The team's note on this:

{{{{ embed('{uri}') }}}}

<!-- assistant -->
I will plan the {topic} work of {{{{ service }}}} step by step, with a check after each step.
",
            services = common::SERVICES,
        );
        std::fs::write(dir.join(format!("{name}.prompt.md")), text).expect("write a prompt");
    }
}

/// `resources/read` bodies for `count` documents chosen at random.
fn read_bodies(random: &mut Random, documents: usize, count: usize) -> Vec<String> {
    (0..count)
        .map(|_| {
            common::request_body(
                "resources/read",
                json!({"uri": document_uri(random.below(documents))}),
            )
        })
        .collect()
}

/// `prompts/get` bodies for `count` prompts chosen at random, with varying arguments.
fn get_bodies(random: &mut Random, prompts: usize, count: usize) -> Vec<String> {
    (0..count)
        .map(|i| {
            let service = format!(
                "{}-{}-{}",
                WORDS[random.below(WORDS.len())],
                WORDS[random.below(WORDS.len())],
                1000 + random.below(9000)
            );
            let mut arguments = json!({"service": service, "depth": (1 + i % 5).to_string()});
            if i % 2 == 0 {
                arguments["format"] = json!("table");
                arguments["focus"] = json!(format!("the {} step", WORDS[i % WORDS.len()]));
            }
            common::request_body(
                "prompts/get",
                json!({"name": prompt_name(random.below(prompts)), "arguments": arguments}),
            )
        })
        .collect()
}

/// A `completion/complete` body for the `service` argument of a generated prompt.
fn completion_body(query: &str) -> String {
    common::request_body(
        "completion/complete",
        json!({
            "ref": {"type": "ref/prompt", "name": prompt_name(0)},
            "argument": {"name": "service", "value": query},
        }),
    )
}

/// Cold start over several bodies, one spawn per body of each program, the two taking turns
/// (so that a busy moment of the machine falls on both): the medians of `server` and `echo`.
fn cold_start_pair(
    server: &Program,
    echo: &Program,
    bodies: &[String],
    what: &str,
) -> (Duration, Duration) {
    let (mut ours, mut theirs): (Vec<Duration>, Vec<Duration>) = bodies
        .iter()
        .map(|body| {
            (
                common::cold_start(server, body, 1, what),
                common::cold_start(echo, body, 1, what),
            )
        })
        .unzip();
    ours.sort_unstable();
    theirs.sort_unstable();
    (percentile(&ours, 0.5), percentile(&theirs, 0.5))
}

/// `initialize` as the first request of a fresh session: a new process, woken by an
/// untimed `server/discover`, then the timed `initialize`; sorted times of `sessions`.
fn fresh_initialize(program: &Program, sessions: usize) -> Vec<Duration> {
    let discover = common::request_body("server/discover", json!({}));
    let initialize = common::initialize_body();
    let mut errors = common::Errors::default();
    let mut times: Vec<Duration> = (0..sessions)
        .map(|_| {
            let mut peer = Peer::spawn(program, None);
            if let Err(message) = peer.call(1, &discover) {
                errors.record(message);
            }
            let start = Instant::now();
            let outcome = peer.call(2, &initialize).map(|_| ());
            let elapsed = start.elapsed();
            if let Err(message) = outcome {
                errors.record(message);
            }
            peer.finish();
            elapsed
        })
        .collect();
    errors.ensure_none("initialize in a fresh session");
    times.sort_unstable();
    times
}

/// "a / b" with the precision a ratio of that size needs.
fn ratio(a: f64, b: f64) -> String {
    let ratio = a / b;
    if ratio < 0.1 {
        format!("{ratio:.3}x")
    } else {
        format!("{ratio:.2}x")
    }
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

fn run(sizes: &Sizes, db: &Path) {
    let server = Program::promptshelf(db);
    let echo = Program {
        path: std::env::current_exe().expect("the bench's own path"),
        args: vec!["--echo".into()],
        opening: None,
    };
    let peers = [("promptshelf", &server), ("echo", &echo)];
    let mut random = Random(0x1a2b_3c4d_5e6f_7081);
    let reads = read_bodies(&mut random, sizes.documents, 65_536);
    let gets = get_bodies(&mut random, sizes.prompts, 4_096);
    let discover = vec![common::request_body("server/discover", json!({}))];
    println!(
        "nothing pinned; echo answers a small fixed result (about 2 KB to resources/read); every answer checked, one in {} parsed whole",
        common::PARSE_EVERY
    );

    println!();
    println!(
        "cold start to the first answer, ms (median of {} spawns each, promptshelf and echo taking turns; random items, one per spawn)",
        sizes.spawns
    );
    println!(
        "{:<44} {:>11} {:>9} {:>9}",
        "first request", "promptshelf", "echo", "ratio"
    );
    let spawns = sizes.spawns;
    let cold: [(&str, Vec<String>); 6] = [
        (
            "initialize (legacy handshake)",
            vec![common::initialize_body()],
        ),
        ("server/discover", discover.clone()),
        (
            "prompts/list",
            vec![common::request_body("prompts/list", json!({}))],
        ),
        ("resources/read, random URI", reads[..spawns].to_vec()),
        ("prompts/get, random prompt", gets[..spawns].to_vec()),
        (
            "completion/complete (takes the index)",
            ["a", "de", "sie", "tang", "abr12"]
                .iter()
                .cycle()
                .take(sizes.spawns)
                .map(|query| completion_body(query))
                .collect(),
        ),
    ];
    for (what, bodies) in &cold {
        let count = if bodies.len() == 1 {
            spawns
        } else {
            bodies.len()
        };
        let bodies: Vec<String> = bodies.iter().cycle().take(count).cloned().collect();
        let (ours, theirs) = cold_start_pair(&server, &echo, &bodies, what);
        println!(
            "{what:<44} {:>11.2} {:>9.2} {:>9}",
            ms(ours),
            ms(theirs),
            ratio(ms(ours), ms(theirs))
        );
    }

    println!();
    println!(
        "handshake on a running server, µs: server/discover closed loop ({} after {} warm-up); initialize as the first request of {} fresh sessions",
        sizes.closed_requests, sizes.warmup, sizes.sessions
    );
    println!(
        "{:<44} {:>9} {:>9} {:>9} {:>9}",
        "", "p50", "p99", "echo p50", "echo p99"
    );
    let mut servers: Vec<Peer> = Vec::new();
    let mut discovered = Vec::new();
    for (label, program) in peers {
        let mut peer = Peer::spawn(program, None);
        discovered.push(closed_loop(
            &mut peer,
            &discover,
            sizes.warmup,
            sizes.closed_requests,
            &format!("server/discover, {label}"),
        ));
        servers.push(peer);
    }
    let initialized: Vec<Vec<Duration>> = peers
        .iter()
        .map(|(_, program)| fresh_initialize(program, sizes.sessions))
        .collect();
    for (what, times) in [
        ("server/discover", &discovered),
        ("initialize, fresh session", &initialized),
    ] {
        latency_row(what, times);
    }

    println!();
    println!(
        "closed loop on the same running server, µs ({} after {} warm-up)",
        sizes.closed_requests, sizes.warmup
    );
    println!(
        "{:<44} {:>9} {:>9} {:>9} {:>9}",
        "", "p50", "p99", "echo p50", "echo p99"
    );
    for (what, bodies) in [
        ("resources/read, random URI", &reads),
        ("prompts/get, random prompt", &gets),
    ] {
        let times: Vec<Vec<Duration>> = servers
            .iter_mut()
            .zip(peers)
            .map(|(peer, (label, _))| {
                closed_loop(
                    peer,
                    bodies,
                    sizes.warmup,
                    sizes.closed_requests,
                    &format!("{what}, {label}"),
                )
            })
            .collect();
        latency_row(what, &times);
    }

    println!();
    println!(
        "pipelined resources/read over {} random URIs, {} in flight, {:.0} s; peak RSS (VmHWM) after",
        reads.len(),
        common::IN_FLIGHT,
        sizes.pipelined_time.as_secs_f64()
    );
    println!("{:<44} {:>11} {:>9}", "", "req/s", "RSS MiB");
    let mut pipelined = Vec::new();
    for (label, program) in peers {
        let (per_second, rss_kib) =
            common::pipelined(program, &reads, 10_000_000, sizes.pipelined_time, label);
        let rss = rss_kib as f64 / 1024.0;
        println!("{label:<44} {per_second:>11.0} {rss:>9.1}");
        pipelined.push((per_second, rss));
    }
    println!(
        "{:<44} {:>11} {:>9}",
        "ratio to echo",
        ratio(pipelined[0].0, pipelined[1].0),
        ratio(pipelined[0].1, pipelined[1].1)
    );

    println!();
    println!(
        "completion/complete on the {}-value table, closed loop on the same running server, ms ({:.0} s or {}-{} requests per kind; the first request, untimed, takes the index into memory)",
        sizes.values,
        sizes.completion_time.as_secs_f64(),
        sizes.completion_requests.0,
        sizes.completion_requests.1
    );
    println!(
        "{:<22} {:>8} {:>8} {:>8} {:>8} {:>10} {:>10}  matches (first query)",
        "query", "requests", "p50", "p99", "max", "echo p50", "echo p99"
    );
    let build = Instant::now();
    let matches = total_matches(&mut servers[0], &completion_body("zz"));
    println!(
        "(index taken into memory by the first request: {:.0} ms, {matches} matches)",
        ms(build.elapsed())
    );
    for (kind, queries) in QUERIES {
        let bodies: Vec<String> = queries.iter().map(|query| completion_body(query)).collect();
        let matches = total_matches(&mut servers[0], &bodies[0]);
        let warm = closed_loop(&mut servers[0], &bodies, 0, bodies.len(), kind);
        let typical = percentile(&warm, 0.5).max(Duration::from_micros(1));
        let (least, most) = sizes.completion_requests;
        let count = ((sizes.completion_time.as_secs_f64() / typical.as_secs_f64()) as usize)
            .clamp(least, most);
        let ours = closed_loop(&mut servers[0], &bodies, 0, count, kind);
        let theirs = closed_loop(&mut servers[1], &bodies, 0, count, kind);
        println!(
            "{kind:<22} {count:>8} {:>8.2} {:>8.2} {:>8.2} {:>10.3} {:>10.3}  {matches}",
            ms(percentile(&ours, 0.5)),
            ms(percentile(&ours, 0.99)),
            ms(percentile(&ours, 1.0)),
            ms(percentile(&theirs, 0.5)),
            ms(percentile(&theirs, 0.99)),
        );
    }

    println!();
    let rss: Vec<f64> = servers
        .iter()
        .map(|peer| common::peak_rss_kib(peer.pid()) as f64 / 1024.0)
        .collect();
    println!(
        "peak RSS (VmHWM) of the running server after all of the above (discover, reads, gets, the completion index and queries): {:.1} MiB (echo {:.1} MiB)",
        rss[0], rss[1]
    );
    for peer in servers {
        peer.finish();
    }
}

/// One row of p50 and p99 in µs: promptshelf's (`times[0]`), then the echo's (`times[1]`).
fn latency_row(what: &str, times: &[Vec<Duration>]) {
    println!(
        "{what:<44} {:>9.1} {:>9.1} {:>9.1} {:>9.1}",
        micros(percentile(&times[0], 0.5)),
        micros(percentile(&times[0], 0.99)),
        micros(percentile(&times[1], 0.5)),
        micros(percentile(&times[1], 0.99)),
    );
}
