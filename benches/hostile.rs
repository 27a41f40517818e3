//! The hostile-input bench: the server's peak memory under each input that once made it
//! grow without bound, with the default limits, through the real stdio server.
//!
//! Run with `cargo bench --bench hostile`. For each input it builds what the input needs
//! (with the CLI, as a person would), starts a fresh `promptshelf serve`, sends the input,
//! reads every answer, and prints the server's peak resident memory (VmHWM) and what it
//! answered (the first error, shortened). A server that stops answering aborts the bench.
//!
//! The inputs, each answered within a default limit (docs/server.md, "Limits"):
//! - a prompt whose template repeats a 100 KB embed 20,000 times (`--max-prompt-bytes`);
//! - a prompt using a 14 MB argument five times (`--max-argument-bytes`);
//! - 40 `subscriptions/listen` streams naming 100,000 URIs each (`--max-stream-uris`);
//! - 100,000 legacy `resources/subscribe` in one session (`--max-subscriptions`);
//! - completions over five tables of a million values each, twice round, whose indexes
//!   together would take about 200 MiB (`--max-index-bytes`).
//!
//! Nothing here asserts on memory: it only prints figures (the tests bound each one
//! generously; this says how far under the bound it stays).

mod common;

use std::io::{BufRead, Write};
use std::path::Path;

use serde_json::{Value, json};

use common::{Peer, Program};

fn main() {
    let folder = tempfile::tempdir().expect("a temporary folder");
    println!(
        "promptshelf hostile-input bench: {}",
        common::machine_line()
    );
    println!("peak resident memory of a fresh server per input (VmHWM), default limits");
    println!();
    println!("{:<52} {:>9}  answer", "input", "peak MiB");
    run(
        folder.path(),
        "nothing (start and one server/discover)",
        &[],
        || vec![line(1, "server/discover", json!({}))],
    );
    run(
        folder.path(),
        "a 100 KB embed repeated 20,000 times",
        &[
            ("big.md", big_document()),
            ("repeated.prompt.md", repeated_prompt()),
        ],
        || {
            vec![line(
                1,
                "prompts/get",
                json!({"name": "repeated", "arguments": {}}),
            )]
        },
    );
    run(
        folder.path(),
        "a 14 MB argument used five times",
        &[("echo.prompt.md", echo_prompt())],
        || {
            let text = "x".repeat(14 * 1024 * 1024);
            vec![line(
                1,
                "prompts/get",
                json!({"name": "echo", "arguments": {"text": text}}),
            )]
        },
    );
    run(
        folder.path(),
        "40 listen streams of 100,000 URIs each",
        &[],
        || {
            let uris: Vec<String> = (0..100_000)
                .map(|i| format!("shelf://library/guides/doc-{i}.md"))
                .collect();
            (1..=40)
                .map(|id| {
                    line(
                        id,
                        "subscriptions/listen",
                        json!({"notifications": {"resourceSubscriptions": uris}}),
                    )
                })
                .collect()
        },
    );
    run(
        folder.path(),
        "100,000 legacy resources/subscribe in one session",
        &[],
        || {
            let mut lines = vec![legacy_initialize()];
            lines.push(
                r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_string() + "\n",
            );
            lines.extend((2..100_002).map(|id| {
                let request = json!({
                    "jsonrpc": "2.0",
                    "id": id,
                    "method": "resources/subscribe",
                    "params": {"uri": format!("shelf://library/guides/doc-{id}.md")},
                });
                format!("{request}\n")
            }));
            lines
        },
    );
    let mut files: Vec<(&str, String)> = TABLES
        .iter()
        .map(|table| (*table, million_values(table)))
        .collect();
    files.push(("five.prompt.md", five_tables_prompt()));
    run(
        folder.path(),
        "completions over five tables of 1,000,000 values",
        &files,
        || {
            (0..2 * TABLES.len())
                .map(|n| {
                    let table = TABLES[n % TABLES.len()].trim_end_matches(".csv");
                    line(
                        n as u64 + 1,
                        "completion/complete",
                        json!({
                            "ref": {"type": "ref/prompt", "name": "five"},
                            "argument": {"name": table, "value": "ab"},
                        }),
                    )
                })
                .collect()
        },
    );
}

/// The completion tables of the last input, each imported from the file of its name.
const TABLES: [&str; 5] = ["t1.csv", "t2.csv", "t3.csv", "t4.csv", "t5.csv"];

/// A million distinct values of about 20 bytes for `table` (a `values import` CSV).
fn million_values(table: &str) -> String {
    let stem = table.trim_end_matches(".csv");
    let mut csv = String::from("value,weight,context\n");
    for n in 0..1_000_000u32 {
        // Letters spread by a multiplicative hash, so prefixes such as `ab` match many.
        let mixed = n.wrapping_mul(2_654_435_761);
        let letters: String = (0..4)
            .map(|at| char::from(b'a' + ((mixed >> (at * 5)) % 26) as u8))
            .collect();
        csv.push_str(&format!("{letters}-{stem}-service-{n:07},,\n"));
    }
    csv
}

/// A prompt with one argument per table, each completing from it.
fn five_tables_prompt() -> String {
    let mut prompt = String::from("---\nname: five\narguments:\n");
    for table in TABLES {
        let stem = table.trim_end_matches(".csv");
        prompt.push_str(&format!("  - name: {stem}\n    completion: {stem}\n"));
    }
    prompt.push_str("---\nFive tables.\n");
    prompt
}

/// Builds a fresh database with `files` added, serves it, sends the lines `input` makes,
/// reads one answer per request, and prints the peak memory and the first error.
fn run(folder: &Path, what: &str, files: &[(&str, String)], input: impl FnOnce() -> Vec<String>) {
    let db = folder.join(format!("{}.db", what.len()));
    let _ = std::fs::remove_file(&db);
    common::create_seed_db(&db);
    for (name, text) in files {
        let file = folder.join(name);
        std::fs::write(&file, text).expect("write a library file");
        if name.ends_with(".prompt.md") {
            common::cli(&db, &["prompt", "add"], &file);
        } else if let Some(table) = name.strip_suffix(".csv") {
            common::cli(&db, &["values", "import", table], &file);
        } else {
            common::cli(&db, &["resource", "add", "--uri", BIG_URI], &file);
        }
    }
    let lines = input();
    let requests = lines.iter().filter(|line| line.contains(r#""id""#)).count();
    let mut peer = Peer::spawn(&Program::promptshelf(&db), None);
    // Written from a thread, so a server that answers while it still reads never waits on
    // a full pipe of answers nobody reads.
    let mut stdin = peer.stdin.take().expect("stdin is open");
    let writer = std::thread::spawn(move || {
        for line in lines {
            stdin.write_all(line.as_bytes()).expect("write a request");
        }
        stdin.flush().expect("flush the requests");
        stdin
    });
    let mut stdout = peer.stdout.take().expect("stdout is open");
    let mut first_error = None;
    let mut answered = 0;
    let mut text = String::new();
    while answered < requests {
        text.clear();
        if stdout.read_line(&mut text).expect("read an answer") == 0 {
            panic!("{what}: the server closed stdout after {answered} of {requests} answers");
        }
        let message: Value = serde_json::from_str(&text).expect("an answer is JSON");
        if message.get("id").is_none() {
            continue;
        }
        answered += 1;
        if first_error.is_none()
            && let Some(error) = message.get("error")
        {
            first_error = Some(error.to_string());
        }
    }
    let peak = common::peak_rss_kib(peer.pid());
    drop(writer.join().expect("the writer finished"));
    peer.stdout = Some(stdout);
    peer.finish();
    let shown = first_error.map_or_else(|| "results".to_string(), |error| clip(&error, 90));
    println!("{what:<52} {:>9.1}  {shown}", peak as f64 / 1024.0);
}

const BIG_URI: &str = "shelf://t/big.md";

/// About 100 KB of markdown.
fn big_document() -> String {
    let line = "A line of a large reference document, repeated to make it about 100 KB.\n";
    line.repeat(100 * 1024 / line.len())
}

fn repeated_prompt() -> String {
    format!("---\nname: repeated\n---\n{{{{ embed('{BIG_URI}') * 20000 }}}}\n")
}

fn echo_prompt() -> String {
    "---\nname: echo\narguments:\n  - name: text\n    required: true\n---\n\
     {{ text }}{{ text }}{{ text }}{{ text }}{{ text }}\n"
        .to_string()
}

/// A modern request line.
fn line(id: u64, method: &str, params: Value) -> String {
    let mut out = Vec::new();
    common::write_request(&mut out, id, &common::request_body(method, params))
        .expect("write into memory");
    String::from_utf8(out).expect("a request is UTF-8")
}

fn legacy_initialize() -> String {
    let request = json!({
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "hostile-bench", "version": "1"},
        },
    });
    format!("{request}\n")
}

fn clip(text: &str, most: usize) -> String {
    match text.char_indices().nth(most) {
        Some((at, _)) => format!("{}...", &text[..at]),
        None => text.to_string(),
    }
}
