//! `promptshelf sync HOST...`: runs `sync` and prints, per host folder, what it wrote, kept
//! and removed; with `--watch`, runs it again whenever the library changes. With `--from`,
//! the library is a team server's, copied over MCP for each run (`sync::remote`).

use std::io::Write;
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};

use super::common;
use crate::cli::SyncArgs;
use crate::store::Store;
use crate::sync::remote::{self, Remote};
use crate::sync::{self, Action, FolderReport, Options};

/// How often `--watch` looks for a commit to a local library: `PRAGMA data_version` costs
/// microseconds, and a change is then in the folders well within a second.
const POLL: Duration = Duration::from_millis(200);

/// The longest `--watch --from` waits before listening again to a server it lost.
const MOST_BACKOFF: Duration = Duration::from_secs(5);

fn options(args: &SyncArgs) -> Options {
    Options {
        hosts: args.hosts.clone(),
        scope: args.scope,
        project: args.project.clone(),
        collections: args.collections.clone(),
        dry_run: args.dry_run,
        force: args.force,
    }
}

pub(super) fn run(store: &Store, args: SyncArgs) -> Result<()> {
    let options = options(&args);
    let round = |whole: bool| print(&sync::run(store, &options)?, &options, whole);
    if !args.watch {
        return once(round, &options);
    }
    // One connection kept for the watch: its data_version moves with every other one's
    // commit, this process's rounds included, which read only.
    let conn = store.conn()?;
    let version = |conn: &rusqlite::Connection| -> Result<i64> {
        Ok(conn.query_row("PRAGMA data_version", [], |row| row.get(0))?)
    };
    let mut seen = version(&conn)?;
    watch(round, "the library", || {
        loop {
            std::thread::sleep(POLL);
            let now = version(&conn)?;
            if now != seen {
                seen = now;
                return Ok(());
            }
        }
    })
}

/// `sync --from URL`: each run copies what the token sees into a library in a temporary
/// folder and syncs from it; `--watch` follows the server's listen stream, listening again
/// after an outage.
pub(super) fn run_from(args: SyncArgs) -> Result<()> {
    let url = args.from.clone().unwrap_or_default();
    let token = match &args.token_file {
        Some(file) => Some(
            std::fs::read_to_string(file)
                .with_context(|| format!("cannot read the token file {}", file.display()))?
                .trim()
                .to_string(),
        ),
        None => args.token.clone(),
    };
    let remote = Remote::new(&url, token)?;
    let options = options(&args);
    let round = |whole: bool| {
        let folder = tempfile::tempdir().context("cannot make a temporary folder")?;
        let (store, _) = remote::fetch(&remote, &folder.path().join("library.db"))?;
        let reports = sync::run(&store, &options);
        store.close();
        print(&reports?, &options, whole)
    };
    if !args.watch {
        return once(round, &options);
    }
    let mut backoff = Duration::from_millis(200);
    watch(round, remote.url(), || {
        match remote::wait_for_change(&remote) {
            Ok(()) => backoff = Duration::from_millis(200),
            // What changed while the stream was down is synced by the round that follows.
            Err(err) => {
                eprintln!(
                    "{}; listening again in {:.1} s",
                    common::one_line(&format!("{err:#}")),
                    backoff.as_secs_f64()
                );
                std::thread::sleep(backoff);
                backoff = (backoff * 2).min(MOST_BACKOFF);
            }
        }
        Ok(())
    })
}

/// One round, failing when it left files as they are (so a script sees the folders are
/// not in step), unless it was a dry run.
fn once(round: impl Fn(bool) -> Result<usize>, options: &Options) -> Result<()> {
    let conflicts = round(true)?;
    if conflicts > 0 && !options.dry_run {
        bail!(
            "{conflicts} files are not as the library has them (see above); nothing else \
             is wrong"
        );
    }
    Ok(())
}

/// A round, then another each time `changed` returns; a round's failure is printed and
/// watching goes on, since the next change may mend it.
fn watch(
    round: impl Fn(bool) -> Result<usize>,
    what: &str,
    mut changed: impl FnMut() -> Result<()>,
) -> Result<()> {
    let report = |whole: bool| {
        if let Err(err) = round(whole) {
            eprintln!("error: {}", common::one_line(&format!("{err:#}")));
        }
    };
    report(true);
    eprintln!("watching {what} for changes (Ctrl-C stops)");
    loop {
        changed().map_err(|err| anyhow!("watching {what}: {err:#}"))?;
        report(false);
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
    if whole
        && reports
            .iter()
            .all(|report| report.prompts == 0 && report.files.is_empty())
    {
        writeln!(
            out,
            "nothing to sync: the library has no prompts for these hosts"
        )?;
    }
    out.flush()?;
    Ok(conflicts)
}
