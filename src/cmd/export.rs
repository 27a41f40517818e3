//! `promptshelf export DIR`: writes the library out as folders of the format and prints what
//! was written; items the format cannot carry exactly are warned about on stderr.

use anyhow::Result;

use super::common;
use crate::cli::ExportArgs;
use crate::export::{self, Options};
use crate::store::Store;

pub fn run(store: &Store, args: ExportArgs) -> Result<()> {
    let options = Options {
        collection: args.collection,
    };
    let report = export::run(store, &args.dir, &options)?;
    for warning in &report.warnings {
        eprintln!("warning: {}", common::one_line(warning));
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
