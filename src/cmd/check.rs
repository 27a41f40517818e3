//! `promptshelf check`: prints each problem the library lint finds and fails if there is one.

use std::io::Write;

use anyhow::Result;

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
    let checked = format!(
        "{}, {} and {}",
        common::count(report.prompts as u64, "prompt", "prompts"),
        common::count(report.resources as u64, "resource", "resources"),
        common::count(report.templates as u64, "template", "templates")
    );
    if !report.problems.is_empty() {
        return Err(ProblemsFound(format!(
            "{} in {checked}; fix them and run check again",
            common::count(report.problems.len() as u64, "problem", "problems")
        ))
        .into());
    }
    eprintln!("checked {checked}: no problems");
    Ok(())
}

/// `check` ran and found problems: exit status 1, where a check that could not run at all
/// exits 2 (`cmd::CouldNotRun`), so that a script can tell the two apart.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ProblemsFound(String);
