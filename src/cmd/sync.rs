//! `promptshelf sync HOST...`: runs `sync` and prints, per host folder, what it wrote, kept
//! and removed; with `--watch`, runs it again whenever the library changes.

use std::io::Write;
use std::time::Duration;

use anyhow::{Result, bail};

use super::common;
use crate::cli::SyncArgs;
use crate::store::Store;
use crate::sync::{self, Action, FolderReport, Options};

/// How often `--watch` looks for a commit to the library: `PRAGMA data_version` costs
/// microseconds, and a change is then in the folders well within a second.
const POLL: Duration = Duration::from_millis(200);

pub fn run(store: &Store, args: SyncArgs) -> Result<()> {
    let options = Options {
        hosts: args.hosts,
        scope: args.scope,
        project: args.project,
        collections: args.collections,
        dry_run: args.dry_run,
        force: args.force,
    };
    if !args.watch {
        let conflicts = print(&sync::run(store, &options)?, &options, true)?;
        if conflicts > 0 && !options.dry_run {
            bail!(
                "{conflicts} files are not as the library has them (see above); nothing else \
                 is wrong"
            );
        }
        return Ok(());
    }
    // Each round's failure is printed and watching goes on: the next change may mend it.
    let round = |whole: bool| match sync::run(store, &options) {
        Ok(reports) => print(&reports, &options, whole).map(|_| ()),
        Err(err) => {
            eprintln!("error: {}", common::one_line(&format!("{err:#}")));
            Ok(())
        }
    };
    round(true)?;
    eprintln!("watching the library for changes (Ctrl-C stops)");
    // One connection kept for the watch: its data_version moves with every other one's
    // commit, this process's rounds included, which read only.
    let conn = store.conn()?;
    let version = |conn: &rusqlite::Connection| -> Result<i64> {
        Ok(conn.query_row("PRAGMA data_version", [], |row| row.get(0))?)
    };
    let mut seen = version(&conn)?;
    loop {
        std::thread::sleep(POLL);
        let now = version(&conn)?;
        if now != seen {
            seen = now;
            round(false)?;
        }
    }
}

/// Prints the reports: warnings and files left as they are on stderr, then (in a dry run)
/// each file that would change and one summary line per folder on stdout; `whole` prints
/// the folders where nothing changed too. Returns how many files were left as they are.
fn print(reports: &[FolderReport], options: &Options, whole: bool) -> Result<usize> {
    let mut out = common::stdout();
    let mut conflicts = 0;
    for report in reports {
        let changed = report
            .files
            .iter()
            .any(|(_, action)| *action != Action::Unchanged);
        // A folder with nothing for it (a host's skills folder, when no prompt came from a
        // skill folder) is not worth a line.
        if (!whole && !changed) || (report.prompts == 0 && report.files.is_empty()) {
            continue;
        }
        for warning in &report.warnings {
            eprintln!("warning: {}", common::one_line(warning));
        }
        for (path, action) in &report.files {
            let shown = common::one_line(&report.folder.join(path).display().to_string());
            match action {
                Action::KeptEdited => eprintln!(
                    "kept {shown}: changed by hand since sync wrote it; `--force` replaces \
                     it with the library's version (or removes it if its item left the library)"
                ),
                Action::LeftAlone => eprintln!(
                    "left alone {shown}: sync did not write this file and never touches it; \
                     move it away so sync can write the library's version"
                ),
                Action::Write | Action::Overwrite | Action::Remove if options.dry_run => {
                    writeln!(out, "{} {shown}", action.as_str())?
                }
                _ => {}
            }
            if action.is_conflict() {
                conflicts += 1;
            }
        }
        let hosts: Vec<&str> = report.hosts.iter().map(|host| host.as_str()).collect();
        writeln!(
            out,
            "{}{} ({}, {}): {} prompts, {} written, {} unchanged, {} removed, {} kept as they are",
            if options.dry_run {
                "dry run (nothing written): "
            } else {
                ""
            },
            common::one_line(&report.folder.display().to_string()),
            hosts.join(", "),
            report.format.as_str(),
            report.prompts,
            report.count(Action::Write) + report.count(Action::Overwrite),
            report.count(Action::Unchanged),
            report.count(Action::Remove),
            report.count(Action::KeptEdited) + report.count(Action::LeftAlone),
        )?;
    }
    out.flush()?;
    Ok(conflicts)
}
