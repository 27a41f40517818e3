//! `promptshelf export DIR`: writes the library out as folders of the format and prints what
//! was written; items the format cannot carry exactly are warned about on stderr.

use anyhow::Result;
use serde::Serialize;

use super::common;
use crate::cli::ExportArgs;
use crate::export::{self, Format, Options};
use crate::store::Store;

/// What `export --json` prints.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ExportJson<'a> {
    folder: String,
    prompts: usize,
    resources: usize,
    tables: usize,
    /// Files written because they were missing or different.
    written: usize,
    /// Files that already held what would be written.
    unchanged: usize,
    /// Items that will not read back exactly as stored, and items left out.
    warnings: &'a [String],
}

pub fn run(store: &Store, args: ExportArgs) -> Result<()> {
    let options = Options {
        collection: args.collection,
        format: args.format,
    };
    let report = export::run(store, &args.dir, &options)?;
    if args.json {
        return common::print_json(&ExportJson {
            folder: args.dir.display().to_string(),
            prompts: report.prompts,
            resources: report.resources,
            tables: report.tables,
            written: report.written,
            unchanged: report.unchanged,
            warnings: &report.warnings,
        });
    }
    for warning in &report.warnings {
        eprintln!("warning: {}", common::one_line(warning));
    }
    if args.format != Format::Promptshelf {
        return common::say(&format!(
            "exported {} prompts as {} under {} ({} files written, {} unchanged)",
            report.prompts,
            args.format.as_str(),
            args.dir.join(args.format.folder()).display(),
            report.written,
            report.unchanged
        ));
    }
    common::say(&format!(
        "exported {} prompts, {} resources and {} completion tables to {} ({} files written, {} unchanged)",
        report.prompts,
        report.resources,
        report.tables,
        args.dir.display(),
        report.written,
        report.unchanged
    ))
}
