//! `cargo bench --bench channel`: what serving a release channel costs beside the library it
//! is made from (`serve --channel`, docs/cli.md "Labels and release channels"). Imports N
//! generated markdown documents of about 2 KB with the CLI (N = 2,000 and 20,000; `--
//! --quick`: 2,000 only), puts the label `all` on every item, and times, in fresh servers
//! (the median of `SPAWNS`), a server's first three answers, each a 2026-07-28 request: a
//! document read (the first answer opens the pool's connection: on a channel, its views),
//! a search (on a channel, the connection's search index filled from the channel's items
//! first) and another search. Served as the library, then as the channel. Asserts nothing:
//! docs/benchmarks.md reads its output.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;

use common::{Peer, Program, machine_line, percentile, request_body};

/// Fresh servers per measurement.
const SPAWNS: usize = 5;

/// Words of about 2 KB of text per document.
const WORDS: usize = 330;

const VOCABULARY: &[&str] = &[
    "alpha", "beta", "gamma", "delta", "review", "test", "build", "deploy", "cache", "index",
    "query", "store", "server", "client", "token", "stream", "label", "channel", "version",
    "release", "prompt", "resource", "template", "library", "folder", "import", "export",
];

fn main() {
    let quick = std::env::args().any(|arg| arg == "--quick");
    println!("promptshelf channel bench: {}", machine_line());
    let sizes: &[usize] = if quick { &[2_000] } else { &[2_000, 20_000] };
    for &documents in sizes {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let db = dir.path().join("library.db");
        let folder = dir.path().join("docs");
        write_documents(&folder, documents);
        common::cli(&db, &["import"], &folder);
        common::run_cli(&db, &["label", "set", "all", "--all"]);
        println!(
            "\n{documents} documents of about 2 KB, all labelled; first answers of a fresh server, ms (median of {SPAWNS})"
        );
        println!(
            "{:<10} {:>10} {:>14} {:>14}",
            "served", "first read", "first search", "second search"
        );
        for (served, extra) in [("library", &[][..]), ("channel", &["--channel", "all"][..])] {
            let mut program = Program::promptshelf(&db);
            program.args.extend(extra.iter().map(|arg| arg.to_string()));
            let [read, first, second] = first_answers(&program);
            println!(
                "{served:<10} {:>10.2} {:>14.2} {:>14.2}",
                millis(read),
                millis(first),
                millis(second)
            );
        }
    }
}

/// The three first answers' times, each the median over `SPAWNS` fresh servers.
fn first_answers(program: &Program) -> [Duration; 3] {
    let bodies = [
        request_body("resources/read", json!({"uri": "shelf://docs/doc7.md"})),
        request_body("resources/read", json!({"uri": "shelf://search/review"})),
        request_body(
            "resources/read",
            json!({"uri": "shelf://search/stream%20deploy"}),
        ),
    ];
    let mut times: [Vec<Duration>; 3] = Default::default();
    for _ in 0..SPAWNS {
        let mut peer = Peer::spawn(program, None);
        for (id, body) in bodies.iter().enumerate() {
            let start = Instant::now();
            let answer = peer.call(id as u64 + 1, body).map(str::to_string);
            times[id].push(start.elapsed());
            let answer = answer.unwrap_or_else(|err| panic!("answer {id}: {err}"));
            assert!(!answer.contains("\"error\""), "an error: {answer}");
        }
        peer.finish();
    }
    times.map(|mut taken| {
        taken.sort_unstable();
        percentile(&taken, 0.5)
    })
}

/// `count` markdown documents in `folder`, from a small deterministic generator.
fn write_documents(folder: &Path, count: usize) {
    std::fs::create_dir_all(folder).expect("a folder for the documents");
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    for index in 0..count {
        let mut text = format!("# Document {index}\n\n");
        for _ in 0..WORDS {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            text.push_str(VOCABULARY[(state % VOCABULARY.len() as u64) as usize]);
            text.push(' ');
        }
        std::fs::write(folder.join(format!("doc{index}.md")), text).expect("write a document");
    }
}

fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}
