//! `promptshelf export DIR`: writes the library out as folders of the format and prints what
//! was written; items the format cannot carry exactly are warned about on stderr.

use std::io::Write;

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
    /// Whether nothing was written (`--dry-run`); `written` then counts what would be.
    dry_run: bool,
    /// With `--dry-run`: each file that would be written, overwritten or removed.
    planned: Vec<PlannedJson>,
    /// With `--sign`: the signing key's fingerprint (`SHA256:...`).
    #[serde(skip_serializing_if = "Option::is_none")]
    signed_by: Option<&'a str>,
}

#[derive(Serialize)]
struct PlannedJson {
    /// `write`, `overwrite` or `remove`.
    action: &'static str,
    file: String,
}

pub(super) fn run(store: &Store, args: ExportArgs) -> Result<()> {
    let options = Options {
        collection: args.collection,
        format: args.format,
        dry_run: args.dry_run,
        force: args.force,
        sign: args.sign,
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
            dry_run: report.dry_run,
            planned: report
                .planned
                .iter()
                .map(|(file, planned)| PlannedJson {
                    action: planned.as_str(),
                    file: file.display().to_string(),
                })
                .collect(),
            signed_by: report.signed_by.as_deref(),
        });
    }
    for warning in &report.warnings {
        eprintln!("warning: {}", common::one_line(warning));
    }
    if report.dry_run {
        let mut out = common::stdout();
        for (file, planned) in &report.planned {
            writeln!(
                out,
                "{} {}",
                planned.as_str(),
                common::one_line(&file.display().to_string())
            )?;
        }
        writeln!(
            out,
            "dry run (nothing written): {} files would be written, {} unchanged",
            report.written, report.unchanged
        )?;
        out.flush()?;
        return Ok(());
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
    let signed = match &report.signed_by {
        Some(fingerprint) => format!("; signed by {fingerprint}"),
        None => String::new(),
    };
    common::say(&format!(
        "exported {} prompts, {} resources and {} completion tables to {} ({} files written, {} unchanged){signed}",
        report.prompts,
        report.resources,
        report.tables,
        args.dir.display(),
        report.written,
        report.unchanged
    ))
}
