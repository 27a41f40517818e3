//! `cargo bench --bench import`: the import budget of docs/benchmarks.md ("Budgets").
//! Generates 10,000 markdown files of about 4 KB (one in ten a prompt with arguments, the
//! rest documents that link to one another) in a temporary folder, imports them into a new
//! database, imports them again unchanged, and prints both times; then imports them cold
//! into a database whose full-text index is not kept (its triggers dropped: the write path
//! as schema version 2 had it), so the difference is what keeping the index costs. It
//! asserts nothing: the budget (5 s cold, 1 s unchanged, release build) is read off its
//! output.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use anyhow::Result;
use promptshelf::import::{self, Action, Options, Silent};
use promptshelf::store::{Access, Store};

const FILES: usize = 10_000;
const FOLDERS: usize = 100;

fn main() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let folder = dir.path().join("bench");
    let bytes = generate(&folder)?;
    println!(
        "generated {FILES} files, {:.1} MiB, in {FOLDERS} folders",
        bytes as f64 / (1024.0 * 1024.0)
    );
    let store = Store::open(
        &dir.path().join("library.db"),
        Access::ReadWrite,
        promptshelf::seed::load,
    )?;
    let options = Options::default();

    let start = Instant::now();
    let cold = import::run(&store, &folder, &options, &Silent)?;
    let cold_time = start.elapsed();
    println!(
        "cold import:      {:>8.3} s  (added {}, failed {})",
        cold_time.as_secs_f64(),
        cold.count(Action::Add),
        cold.failures.len()
    );

    let start = Instant::now();
    let again = import::run(&store, &folder, &options, &Silent)?;
    let again_time = start.elapsed();
    println!(
        "unchanged import: {:>8.3} s  (unchanged {}, changed {})",
        again_time.as_secs_f64(),
        again.unchanged,
        again.changes.len()
    );

    let unindexed = dir.path().join("unindexed.db");
    let store = Store::open(&unindexed, Access::ReadWrite, promptshelf::seed::load)?;
    store.write(|tx| Ok(tx.execute_batch(WITHOUT_THE_INDEX)?))?;
    let start = Instant::now();
    let cold = import::run(&store, &folder, &options, &Silent)?;
    let unindexed_time = start.elapsed();
    println!(
        "cold import without the search index: {:>8.3} s  (added {}); the index costs {:+.3} s",
        unindexed_time.as_secs_f64(),
        cold.count(Action::Add),
        cold_time.as_secs_f64() - unindexed_time.as_secs_f64()
    );
    // Each file once its WAL is written back into it.
    let size = |path: &Path| -> Result<u64> {
        let conn = rusqlite::Connection::open(path)?;
        conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
        Ok(std::fs::metadata(path)?.len())
    };
    println!(
        "database after the cold import: {:.1} MiB with the index, {:.1} MiB without",
        size(&dir.path().join("library.db"))? as f64 / (1024.0 * 1024.0),
        size(&unindexed)? as f64 / (1024.0 * 1024.0)
    );
    Ok(())
}

/// The triggers that keep the full-text index (schema.sql): without them a write is what it
/// was before the index.
const WITHOUT_THE_INDEX: &str =
    "DROP TRIGGER prompts_searchable; DROP TRIGGER prompts_search_update;
     DROP TRIGGER prompts_unsearchable; DROP TRIGGER prompt_messages_searchable;
     DROP TRIGGER prompt_messages_search_update; DROP TRIGGER prompt_messages_unsearchable;
     DROP TRIGGER resources_searchable; DROP TRIGGER resources_search_update;
     DROP TRIGGER resources_unsearchable;";

/// Writes the files; returns their total size.
fn generate(folder: &Path) -> Result<u64> {
    let paragraph = "Each section of this document explains one decision, the alternatives \
                     that were weighed, and the reason the chosen one won. Readers who only \
                     need the outcome can skip to the summary at the end of the section.";
    let mut total = 0;
    for n in 0..FILES {
        let sub = folder.join(format!("area-{:02}", n % FOLDERS));
        std::fs::create_dir_all(&sub)?;
        let mut text = String::new();
        let name = if n % 10 == 0 {
            let _ = write!(
                text,
                "---\ndescription: Prompt number {n}\narguments:\n  - name: topic\n    required: true\n  \
                 - name: depth\n    type: integer\n    min: 1\n    max: 5\n---\n# Prompt {n}\n\n\
                 Explain {{{{ topic }}}} at depth {{{{ depth | default(2) }}}}.\n\n"
            );
            format!("prompt-{n}.prompt.md")
        } else {
            // Every document links to another, so link resolution is part of the time; one in
            // ten numbers is a prompt, whose file has another name, so the link skips it (a
            // link to a file that is not there fails the import).
            let mut other = (n + 1) % FILES;
            if other.is_multiple_of(10) {
                other = (other + 1) % FILES;
            }
            let _ = write!(
                text,
                "---\ntitle: Document {n}\npriority: 0.5\n---\n# Document {n}\n\n\
                 Read [the next one](../area-{:02}/doc-{other}.md) after this.\n\n",
                other % FOLDERS
            );
            format!("doc-{n}.md")
        };
        let mut section = 0;
        while text.len() < 4000 {
            section += 1;
            let _ = write!(text, "## Section {section}\n\n{paragraph}\n\n");
        }
        total += text.len() as u64;
        std::fs::write(sub.join(name), text)?;
    }
    Ok(total)
}
