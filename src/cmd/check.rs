//! `promptshelf check`: prints each problem the library lint finds and fails if there is one.

use std::io::Write;

use anyhow::{Result, bail};

use super::common;
use crate::cli::JsonFlag;
use crate::store::Store;

pub fn run(store: &Store, flags: JsonFlag) -> Result<()> {
    let report = crate::check::check(&*store.conn()?)?;
    if flags.json {
        common::print_json(&report.problems)?;
    } else {
        let mut out = common::stdout();
        for problem in &report.problems {
            writeln!(out, "{}: {}", problem.item, problem.problem)?;
        }
        out.flush()?;
    }
    if !report.problems.is_empty() {
        bail!(
            "{} problem{} in {} prompts, {} resources and {} templates; fix them and run check \
             again",
            report.problems.len(),
            if report.problems.len() == 1 { "" } else { "s" },
            report.prompts,
            report.resources,
            report.templates
        );
    }
    eprintln!(
        "checked {} prompts, {} resources and {} templates: no problems",
        report.prompts, report.resources, report.templates
    );
    Ok(())
}
