//! `promptshelf check`: prints each problem the library lint finds and fails if there is one;
//! with `--host`, what that host makes of each prompt (`hosts::profile`) instead; with
//! `DIR --verify KEY`, whether a signed export's folder is as it was signed.

use std::io::Write;

use anyhow::Result;

use serde::Serialize;

use super::common;
use crate::cli::CheckArgs;
use crate::hosts::{Host, display_name, profile};
use crate::store::{self, Store};

pub(super) fn run(store: &Store, flags: CheckArgs) -> Result<()> {
    if let Some(host) = flags.host {
        return host_report(store, host, flags.json);
    }
    if let (Some(dir), Some(key)) = (&flags.dir, &flags.verify) {
        // A folder not as signed is a finding (exit 1); a key or folder that cannot be
        // read is a check that could not run (exit 2).
        return common::verify_folder(store, dir, key, crate::import::DEFAULT_MAX_FILE_SIZE)
            .map(drop)
            .map_err(|err| match err.downcast::<crate::signing::Refused>() {
                Ok(refused) => ProblemsFound(refused.to_string()).into(),
                Err(err) => err,
            });
    }
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
pub(super) struct ProblemsFound(String);

/// One line of `check --host --json`.
#[derive(Serialize)]
struct HostFindingJson<'a> {
    prompt: &'a str,
    host: &'static str,
    /// A problem (not shown, or not as written), else a note.
    problem: bool,
    text: &'a str,
}

/// `check --host HOST`: every prompt against the host's line of `hosts::profile`.
fn host_report(store: &Store, host: Host, json: bool) -> Result<()> {
    let prompts = store::read::prompts(&*store.conn()?, store::read::Window::ALL, true)?;
    let found: Vec<(&str, Vec<profile::Finding>)> = prompts
        .iter()
        .map(|stored| {
            let prompt = &stored.prompt;
            (prompt.name.as_str(), profile::findings(host, prompt))
        })
        .collect();
    if json {
        let lines: Vec<HostFindingJson> = found
            .iter()
            .flat_map(|(prompt, findings)| {
                findings.iter().map(|finding| HostFindingJson {
                    prompt,
                    host: host.as_str(),
                    problem: finding.problem,
                    text: &finding.text,
                })
            })
            .collect();
        common::print_json(&lines)?;
    } else {
        let mut out = common::stdout();
        for (prompt, findings) in &found {
            for finding in findings {
                writeln!(out, "{prompt}: {}", finding.text)?;
            }
        }
        out.flush()?;
    }
    let troubled = found
        .iter()
        .filter(|(_, findings)| findings.iter().any(|finding| finding.problem))
        .count();
    let name = display_name(host);
    let summary = format!(
        "{} of {} reach {name} as written; source: {}",
        found.len() - troubled,
        common::count(found.len() as u64, "prompt", "prompts"),
        profile::profile(host).source
    );
    if troubled > 0 {
        return Err(ProblemsFound(format!("{summary}; the others do not (above)")).into());
    }
    eprintln!("{summary}");
    Ok(())
}
