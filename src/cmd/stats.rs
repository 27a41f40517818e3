//! `promptshelf stats`: what the library holds, and where the database is.

use anyhow::Result;
use serde::Serialize;

use super::common::{self, Table};
use crate::cli::JsonFlag;
use crate::store::{self, Store};

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct StatsView {
    database: String,
    file_bytes: u64,
    schema_version: i64,
    prompts: u64,
    resources: u64,
    templates: u64,
    tables: u64,
    values: u64,
    /// Distinct contents: resources with identical bytes share one.
    blobs: u64,
    blob_bytes: u64,
    changes: u64,
}

pub(super) fn run(store: &Store, flags: JsonFlag) -> Result<()> {
    let stats = store::read::stats(&*store.conn()?)?;
    // The store keeps the path as given; people want to know which file that is.
    let database = std::path::absolute(store.path())
        .unwrap_or_else(|_| store.path().to_path_buf())
        .display()
        .to_string();
    if flags.json {
        return common::print_json(&StatsView {
            database,
            file_bytes: stats.file_bytes,
            schema_version: stats.schema_version,
            prompts: stats.prompts,
            resources: stats.resources,
            templates: stats.templates,
            tables: stats.tables,
            values: stats.values,
            blobs: stats.blobs,
            blob_bytes: stats.blob_bytes,
            changes: stats.changes,
        });
    }
    let mut table = Table::new(&["WHAT", "COUNT"]);
    let rows = [
        ("prompts", stats.prompts.to_string()),
        ("resources", stats.resources.to_string()),
        ("resource templates", stats.templates.to_string()),
        ("completion tables", stats.tables.to_string()),
        ("completion values", stats.values.to_string()),
        (
            "distinct contents",
            format!("{} ({})", stats.blobs, common::human_size(stats.blob_bytes)),
        ),
        ("changes logged", stats.changes.to_string()),
    ];
    for (what, count) in rows {
        table.row(vec![what.to_string(), count]);
    }
    let mut out = common::stdout();
    common::write_facts(
        &mut out,
        &[
            ("database", database),
            ("size", common::human_size(stats.file_bytes)),
            ("schema version", stats.schema_version.to_string()),
        ],
    )?;
    std::io::Write::write_all(&mut out, b"\n")?;
    table.write(&mut out, None)?;
    std::io::Write::flush(&mut out)?;
    Ok(())
}
