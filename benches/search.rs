//! `cargo bench --bench search`: the search budget of docs/benchmarks.md (p99 under 20 ms
//! over 100,000 resources). Writes 100,000 generated text resources of about 1.5 KB (words
//! drawn from a vocabulary of 20,000 with Zipf's law, as prose is) into a new database
//! through the store's write path, so the triggers index them as an import would; then
//! times searches of each kind of query, once through `store::search` (what `promptshelf
//! search` runs) and once as `resources/read` of `shelf://search/{query}` on a running
//! server, closed loop. It asserts nothing: the budget is read off its output.

mod common;

use std::time::{Duration, Instant};

use anyhow::Result;
use promptshelf::model::{Annotations, Content, Origin, Resource, ResourceInfo};
use promptshelf::store::search::{self, Query};
use promptshelf::store::{Access, Store, write};

use common::{Peer, Program, closed_loop, micros, percentile, request_body};

const RESOURCES: usize = 100_000;
const VOCABULARY: usize = 20_000;
const BODY_WORDS: usize = 220;
/// Resources written per transaction (an import writes a folder in one).
const BATCH: usize = 10_000;
/// Timed searches per kind of query, after `WARM_UP` untimed. Few: a common word matches
/// nearly every resource, which took hundreds of milliseconds before its ranking was bounded.
const SEARCHES: usize = 100;
const WARM_UP: usize = 10;

/// A small deterministic generator (xorshift), so every run searches the same library.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A word's rank under Zipf's law (rank r drawn with probability about 1/r), by
    /// inverting the harmonic sum's logarithm: 0 is the most common word.
    fn zipf(&mut self) -> usize {
        let uniform = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        let rank = ((VOCABULARY as f64 + 1.0).ln() * uniform).exp() - 1.0;
        (rank as usize).min(VOCABULARY - 1)
    }
}

/// The word of rank `rank`: letters only, distinct for every rank, two to five syllables.
fn word(rank: usize) -> String {
    const SYLLABLES: [&str; 20] = [
        "ka", "lo", "mi", "ne", "ru", "ta", "vi", "so", "pe", "da", "gu", "ri", "fo", "ze", "bi",
        "ha", "ju", "wo", "xe", "ly",
    ];
    let mut word = String::new();
    let mut left = rank + 20;
    while left > 0 {
        word.push_str(SYLLABLES[left % 20]);
        left /= 20;
    }
    word
}

fn generate(store: &Store) -> Result<u64> {
    let mut random = Random(0x9e37_79b9_7f4a_7c15);
    let mut bytes = 0;
    for batch in 0..RESOURCES / BATCH {
        bytes += store.write(|tx| {
            let mut bytes = 0;
            for n in batch * BATCH..(batch + 1) * BATCH {
                let mut body = String::with_capacity(BODY_WORDS * 8);
                for at in 0..BODY_WORDS {
                    body.push_str(&word(random.zipf()));
                    body.push(if at % 12 == 11 { '\n' } else { ' ' });
                }
                bytes += body.len() as u64;
                let title = format!(
                    "Notes on {} and {}",
                    word(random.zipf()),
                    word(random.zipf())
                );
                let resource = Resource {
                    info: ResourceInfo {
                        meta: Default::default(),
                        uri: format!("shelf://bench/area-{:03}/doc-{n}.md", n % 500),
                        name: format!("doc-{n}.md"),
                        title: Some(title),
                        description: None,
                        mime_type: "text/markdown".into(),
                        annotations: Annotations::default(),
                        icons: Vec::new(),
                        origin: Origin {
                            collection: Some("bench".into()),
                            path: Some(format!("area-{:03}/doc-{n}.md", n % 500)),
                            commit: None,
                        },
                    },
                    content: Content::Text(body),
                };
                write::put_resource(tx, &resource, 1_700_000_000_000)?;
            }
            Ok(bytes)
        })?;
    }
    Ok(bytes)
}

/// The query text of a kind's `i`-th search.
type QueryFor = Box<dyn Fn(usize) -> String>;

/// The kinds of query timed: a name and its queries.
/// The kinds of query timed: all of them, or those whose name holds a word given on the
/// command line (`cargo bench --bench search -- phrase`).
fn kinds() -> Vec<(&'static str, QueryFor)> {
    let wanted: Vec<String> = std::env::args()
        .skip(1)
        .filter(|arg| !arg.starts_with('-'))
        .collect();
    let mut kinds = every_kind();
    kinds.retain(|(name, _)| {
        wanted.is_empty() || wanted.iter().any(|word| name.contains(word.as_str()))
    });
    kinds
}

fn every_kind() -> Vec<(&'static str, QueryFor)> {
    vec![
        ("one common word (top 10)", Box::new(|i| word(i % 10))),
        (
            "one mid word (rank 100-199)",
            Box::new(|i| word(100 + i % 100)),
        ),
        (
            "one rare word (rank 10000+)",
            Box::new(|i| word(10_000 + i * 7 % 10_000)),
        ),
        (
            "two mid words",
            Box::new(|i| format!("{} {}", word(100 + i % 100), word(200 + i % 97))),
        ),
        (
            "two common words (top 30)",
            Box::new(|i| format!("{} {}", word(i % 10), word(10 + i % 20))),
        ),
        (
            "common word and rare word",
            Box::new(|i| format!("{} {}", word(i % 10), word(5_000 + i))),
        ),
        (
            "prefix of 2 letters (wo*)",
            Box::new(|i| format!("{}*", &word(100 + i % 100)[..2])),
        ),
        (
            "prefix of 3 letters (wor*)",
            Box::new(|i| format!("{}*", &word(100 + i % 100)[..3])),
        ),
        (
            "phrase of two common words",
            Box::new(|i| format!("\"{} {}\"", word(i % 5), word(i % 7))),
        ),
        (
            "phrase of a common and a mid word",
            Box::new(|i| format!("\"{} {}\"", word(i % 10), word(100 + i % 100))),
        ),
    ]
}

fn matches(store: &Store, text: &str) -> Result<usize> {
    let expression = search::match_expression(text)?;
    let conn = store.conn()?;
    Ok(search::count(&conn, &expression)?)
}

fn main() -> Result<()> {
    println!("promptshelf search bench: {}", common::machine_line());
    let dir = tempfile::tempdir()?;
    let db = dir.path().join("library.db");
    let store = Store::open(&db, Access::ReadWrite, promptshelf::seed::load)?;
    let start = Instant::now();
    let bytes = generate(&store)?;
    let built = start.elapsed();
    let size = std::fs::metadata(&db)?.len();
    println!(
        "library: {RESOURCES} text resources, {:.1} MiB of text, written and indexed in {:.1} s; database {:.1} MiB",
        bytes as f64 / (1024.0 * 1024.0),
        built.as_secs_f64(),
        size as f64 / (1024.0 * 1024.0)
    );
    println!("{SEARCHES} searches per kind after {WARM_UP} untimed; 20 hits each, with snippets");
    println!();
    println!("store::search (promptshelf search), ms");
    println!(
        "{:<32} {:>8} {:>8} {:>8} {:>10}",
        "query", "p50", "p99", "max", "matches"
    );
    let conn = store.conn()?;
    for (name, query_for) in kinds() {
        let mut times: Vec<Duration> = Vec::with_capacity(SEARCHES);
        for i in 0..WARM_UP + SEARCHES {
            let text = query_for(i);
            let start = Instant::now();
            let expression = search::match_expression(&text)?;
            let hits = search::search(
                &conn,
                &Query {
                    expression: &expression,
                    kind: None,
                    collection: None,
                    within: None,
                    limit: 20,
                    marks: ("**", "**"),
                },
            )?;
            let took = start.elapsed();
            std::hint::black_box(hits);
            if i >= WARM_UP {
                times.push(took);
            }
        }
        times.sort_unstable();
        println!(
            "{name:<32} {:>8.2} {:>8.2} {:>8.2} {:>10}",
            micros(percentile(&times, 0.5)) / 1000.0,
            micros(percentile(&times, 0.99)) / 1000.0,
            micros(*times.last().expect("times")) / 1000.0,
            matches(&store, &query_for(0))?
        );
    }
    drop(conn);
    drop(store);

    println!();
    println!("resources/read of shelf://search/{{query}} on a running server, closed loop, ms");
    println!(
        "{:<32} {:>8} {:>8} {:>8} {:>10}",
        "query", "p50", "p99", "max", "distinct"
    );
    let mut peer = Peer::spawn(&Program::promptshelf(&db), None);
    for (name, query_for) in kinds() {
        let bodies: Vec<String> = (0..SEARCHES)
            .map(|i| {
                let query = query_for(i)
                    .replace(' ', "%20")
                    .replace('"', "%22")
                    .replace('*', "%2A");
                request_body(
                    "resources/read",
                    serde_json::json!({ "uri": format!("shelf://search/{query}") }),
                )
            })
            .collect();
        // A kind with fewer distinct queries than searches repeats them, and the server
        // answers a repeat from what it keeps until the library changes: `distinct` says
        // how many of the timed reads searched.
        let distinct = bodies
            .iter()
            .collect::<std::collections::HashSet<_>>()
            .len();
        let times = closed_loop(&mut peer, &bodies, 0, SEARCHES, name);
        println!(
            "{name:<32} {:>8.2} {:>8.2} {:>8.2} {distinct:>10}",
            micros(percentile(&times, 0.5)) / 1000.0,
            micros(percentile(&times, 0.99)) / 1000.0,
            micros(*times.last().expect("times")) / 1000.0
        );
    }
    peer.finish();
    Ok(())
}
