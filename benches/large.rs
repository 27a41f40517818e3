//! The large-library bench: promptshelf serving a library of about 1 GB, to check that
//! nothing is loaded wholesale (cold start) and that memory stays small under load.
//!
//! Run with `cargo bench --bench large` (add `-- --quick` for a 128 MiB library). It
//! generates 100 KiB markdown documents of distinct text in a temporary folder, imports them
//! with `promptshelf import`, and then prints, for promptshelf and the stdio echo:
//! - cold start: spawn, one request, time to its answer, median: for a `prompts/list` (what
//!   the size of the library could slow is the start itself) and for a `resources/read` of
//!   a 100 KiB document (which also times moving 100 KiB through the pipe; the echo answers
//!   2 KB);
//! - pipelined `resources/read` of documents chosen at random, 64 in flight, for a few
//!   seconds, with the peak resident memory (VmHWM) at the end.
//!
//! Nothing here asserts on time or memory: it only prints figures.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;

use common::Program;

/// Each document's size: large enough that a cache of whole results cannot hold them.
const DOCUMENT_BYTES: usize = 100 * 1024;

fn main() {
    if std::env::args().any(|arg| arg == "--echo") {
        common::echo();
        return;
    }
    let quick = std::env::args().any(|arg| arg == "--quick");
    let library_mib: usize = if quick { 128 } else { 1024 };
    let documents = library_mib * 1024 * 1024 / DOCUMENT_BYTES;

    let folder = tempfile::tempdir().expect("create a temporary folder");
    let db = folder.path().join("large.db");
    println!(
        "promptshelf large-library bench: {}",
        common::machine_line()
    );
    let started = Instant::now();
    let docs = folder.path().join("docs");
    generate(&docs, documents);
    let generated = started.elapsed();
    let started = Instant::now();
    common::cli(&db, &["import"], &docs);
    std::fs::remove_dir_all(&docs).expect("remove the generated documents");
    let size = std::fs::metadata(&db).expect("stat the database").len();
    println!(
        "library: {documents} documents of {} KiB, database {:.0} MiB; generated in {:.1} s, imported in {:.1} s",
        DOCUMENT_BYTES / 1024,
        size as f64 / (1024.0 * 1024.0),
        generated.as_secs_f64(),
        started.elapsed().as_secs_f64()
    );

    let bodies: Vec<String> = (0..256)
        .map(|n| {
            let document = (n * 7919) % documents;
            common::request_body(
                "resources/read",
                json!({"uri": format!("shelf://docs/doc-{document:06}.md")}),
            )
        })
        .collect();
    let list = common::request_body("prompts/list", json!({}));
    let ours = Program::promptshelf(&db);
    let echo = Program {
        path: std::env::current_exe().expect("the bench's own path"),
        args: vec!["--echo".into()],
    };
    let (spawns, time) = if quick {
        (5, Duration::from_secs(1))
    } else {
        (20, Duration::from_secs(5))
    };
    println!();
    println!(
        "{:<34} {:>11} {:>11} {:>12} {:>10}",
        "", "start list", "start read", "reads/s", "RSS MiB"
    );
    let mut rows = Vec::new();
    for (label, program) in [("promptshelf, 1 GB library", &ours), ("echo", &echo)] {
        let start_list = common::cold_start(program, &list, spawns, label);
        let start_read = common::cold_start(program, &bodies[0], spawns, label);
        let (per_second, rss_kib) = common::pipelined(program, &bodies, 2_000_000, time, label);
        let row = (
            start_list.as_secs_f64() * 1000.0,
            start_read.as_secs_f64() * 1000.0,
            per_second,
            rss_kib as f64 / 1024.0,
        );
        println!(
            "{:<34} {:>8.2} ms {:>8.2} ms {:>12.0} {:>10.1}",
            label, row.0, row.1, row.2, row.3
        );
        rows.push(row);
    }
    println!(
        "{:<34} {:>10.2}x {:>10.2}x {:>11.3}x {:>9.2}x",
        "ratio to echo",
        rows[0].0 / rows[1].0,
        rows[0].1 / rows[1].1,
        rows[0].2 / rows[1].2,
        rows[0].3 / rows[1].3
    );
}

/// Writes `count` documents of `DOCUMENT_BYTES` of distinct text each (no two share
/// content, so the store cannot deduplicate them).
fn generate(folder: &Path, count: usize) {
    const WORDS: [&str; 16] = [
        "shelf", "prompt", "library", "server", "index", "cache", "query", "render", "template",
        "resource", "stream", "token", "schema", "commit", "hash", "page",
    ];
    std::fs::create_dir_all(folder).expect("create the documents folder");
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    for n in 0..count {
        let mut text = format!("# Document {n}\n\n");
        while text.len() < DOCUMENT_BYTES {
            // xorshift64: cheap, and different text for every document.
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            text.push_str(WORDS[(state % 16) as usize]);
            text.push(if state.is_multiple_of(11) { '\n' } else { ' ' });
        }
        std::fs::write(folder.join(format!("doc-{n:06}.md")), text).expect("write a document");
    }
}
