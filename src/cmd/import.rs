//! `promptshelf import DIR` (or `FILE.csv`, a list of prompts): runs the importer with a
//! progress bar on a terminal, prints the plan (`--dry-run`), the failures, the warnings and
//! the summary line, and with `--watch` imports again whenever a file changes.

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::sync::Arc;

use anyhow::{Result, anyhow};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

use super::common;
use crate::cli::ImportArgs;
use crate::import::{self, Action, Options, Progress, Report};
use crate::library::FileError;
use crate::library::manifest::{self, Manifest};
use crate::store::Store;

pub(super) fn run(store: &Store, args: ImportArgs) -> Result<()> {
    // A signed folder is checked before anything of it is read; the import then checks each
    // file it reads against what was checked.
    let verified = match &args.verify {
        Some(key) => Some(Arc::new(
            common::verify_folder(store, &args.dir, key, args.max_file_size)
                .map_err(|err| anyhow!("nothing was imported: {err:#}"))?,
        )),
        None => None,
    };
    let options = Options {
        collection: args.collection.clone(),
        scheme: args.scheme.clone(),
        prune: args.prune,
        prune_files: None,
        dry_run: args.dry_run,
        keep_going: args.keep_going,
        strict: args.strict,
        max_file_size: args.max_file_size,
        naming: args.naming()?,
        verified,
    };
    // A whole-library export says so in its manifest, and is restored as a whole.
    if args.dir.is_dir()
        && let Some((manifest, bytes)) =
            Manifest::read(&args.dir).map_err(|message| anyhow!("{message}"))?
    {
        if let Some(signed) = &options.verified {
            signed
                .check(&args.dir.canonicalize()?, manifest::FILE, &bytes)
                .map_err(|why| anyhow!("{}: {why}", args.dir.join(manifest::FILE).display()))?;
        }
        return restore(store, &args, &options, &manifest);
    }
    if !args.watch {
        let report = import::run(store, &args.dir, &options, &bar())?;
        if args.json {
            common::print_json(&ImportJson::of(&args.dir, &report, &options))?;
        } else {
            print(&args.dir, &report, &options, options.dry_run)?;
        }
        return outcome(&report, &options);
    }
    // Watching: a round's failures are printed and watching goes on, since fixing the file
    // starts the next round.
    // Each round after the first removes the items of the files the round before it found
    // and that are gone now: a deletion while watching is mirrored, as `--prune` would, but
    // what was gone before watching began stays unless `--prune` was given.
    let mut seen = None;
    let mut round = |list_changes: bool| -> Result<()> {
        let options = Options {
            prune_files: seen.take(),
            ..options.clone()
        };
        let report = import::run(store, &args.dir, &options, &bar())?;
        print(&args.dir, &report, &options, list_changes)?;
        if let Err(err) = outcome(&report, &options) {
            eprintln!("promptshelf: {err}");
        }
        seen = Some(report.files);
        Ok(())
    };
    // A prompt list is watched through its folder, which sees the file replaced by a rename
    // (as editors save) as well as written.
    let watched = match args.dir.parent() {
        Some(folder) if args.dir.is_file() && !folder.as_os_str().is_empty() => folder,
        Some(_) if args.dir.is_file() => Path::new("."),
        _ => args.dir.as_path(),
    };
    let watcher = import::watch::Watcher::start(watched, &import::database_files(store.path()))?;
    round(false)?;
    eprintln!("watching {} for changes (Ctrl-C stops)", args.dir.display());
    watcher.run(|| round(true), |warning| eprintln!("warning: {warning}"))
}

/// `import DIR` of a whole-library export (its manifest, docs/format.md "A whole library"):
/// every collection it lists under its name and scheme, and the items added by hand as such,
/// in one transaction.
fn restore(store: &Store, args: &ImportArgs, options: &Options, manifest: &Manifest) -> Result<()> {
    let shown = args.dir.display();
    if args.collection.is_some() || args.prefix.is_some() || args.watch {
        let first = manifest
            .collections
            .first()
            .map(|entry| entry.folder.as_str())
            .unwrap_or("FOLDER");
        return Err(anyhow!(
            "{shown} is the export of a whole library ({} lists its parts), which is imported \
             as a whole, without --collection, --prefix or --watch; to import or watch one of its \
             collections, name its folder, e.g. {}",
            manifest::FILE,
            args.dir.join(first).display()
        ));
    }
    let parts = import::parts_of(&args.dir, manifest);
    let reports = import::run_parts(store, &parts, options, &bar())?;
    if args.json {
        let parts: Vec<ImportJson> = reports
            .iter()
            .zip(&parts)
            .map(|(report, part)| ImportJson::of(&part.dir, report, options))
            .collect();
        common::print_json(&parts)?;
    } else {
        for (report, part) in reports.iter().zip(&parts) {
            print(&part.dir, report, options, options.dry_run)?;
        }
    }
    failed(reports.iter().map(Report::failed_files).sum(), options)
}

/// A progress bar on stderr when it is a terminal; nothing otherwise.
fn bar() -> Bar {
    if !std::io::stderr().is_terminal() {
        return Bar(ProgressBar::hidden());
    }
    let style = ProgressStyle::with_template("{msg:8} [{bar:30}] {human_pos}/{human_len} files")
        .map(|style| style.progress_chars("=> "))
        .unwrap_or_else(|_| ProgressStyle::default_bar());
    Bar(ProgressBar::new(0).with_style(style))
}

struct Bar(ProgressBar);

impl Progress for Bar {
    fn start(&self, what: &'static str, total: u64) {
        self.0.set_message(what);
        self.0.set_length(total);
        self.0.set_position(0);
    }

    fn advance(&self, steps: u64) {
        self.0.inc(steps);
    }

    fn finish(&self) {
        self.0.finish_and_clear();
    }
}

/// Skips and failures on stderr; the changes (when asked for) and the summary on stdout.
pub(super) fn print(
    dir: &Path,
    report: &Report,
    options: &Options,
    list_changes: bool,
) -> Result<()> {
    for skipped in &report.skipped {
        eprintln!(
            "skipped {}: {}",
            import::shown_path(dir, &skipped.path),
            skipped.reason
        );
    }
    for failure in &report.failures {
        eprintln!("{}", common::one_line(&shown(dir, failure).to_string()));
    }
    for warning in &report.warnings {
        common::warn(&shown(dir, warning));
    }
    let mut out = common::stdout();
    if list_changes {
        for change in &report.changes {
            let action = match (options.dry_run, change.action) {
                (true, action) => action.as_str().to_string(),
                (false, Action::Add) => "added".to_string(),
                (false, Action::Update) => "updated".to_string(),
                (false, Action::Remove) => "removed".to_string(),
            };
            let from = change
                .path
                .as_deref()
                .filter(|_| change.action != Action::Remove)
                .map(|path| format!(" ({path})"))
                .unwrap_or_default();
            writeln!(
                out,
                "{action} {} {}{from}",
                change.kind.as_str(),
                common::one_line(&change.key)
            )?;
        }
    }
    let mut summary = format!(
        "added {}, updated {}, unchanged {}, removed {}, failed {}",
        report.count(Action::Add),
        report.count(Action::Update),
        report.unchanged,
        report.count(Action::Remove),
        report.failed_files()
    );
    if !report.skipped.is_empty() {
        summary.push_str(&format!(", skipped {}", report.skipped.len()));
    }
    let collection = common::one_line(&report.collection);
    if report.without_file > 0 {
        let (items, have) = if report.without_file == 1 {
            ("item", "has")
        } else {
            ("items", "have")
        };
        eprintln!(
            "note: {} stored {items} of the collection {collection} {have} no file any more; \
             import with --prune to remove {}",
            report.without_file,
            if report.without_file == 1 {
                "it"
            } else {
                "them"
            }
        );
    }
    let what = if report.by_hand {
        "the items added by hand".to_string()
    } else {
        format!("collection {collection}")
    };
    if options.dry_run {
        writeln!(out, "dry run of {what} (nothing written): {summary}")?;
    } else {
        writeln!(out, "{what}: {summary}")?;
    }
    out.flush()?;
    Ok(())
}

/// A file's problem with its path as the user would write it.
fn shown(dir: &Path, problem: &FileError) -> FileError {
    FileError {
        path: import::shown_path(dir, &problem.path),
        ..problem.clone()
    }
}

/// What `import --json` prints: the summary's counts, each change, failure, warning and skip.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ImportJson<'a> {
    collection: &'a str,
    /// Whether nothing was written (`--dry-run`): the changes are those it would make.
    dry_run: bool,
    added: usize,
    updated: usize,
    unchanged: usize,
    removed: usize,
    /// Files that failed.
    failed: usize,
    skipped: usize,
    /// The collection's stored items whose files are gone, left in place: what `--prune`
    /// would remove.
    without_file: usize,
    changes: Vec<ChangeJson<'a>>,
    failures: Vec<FailureJson>,
    /// Files imported although something in them is amiss (a skill's description past the
    /// limit, a prompt list's row renamed), as failures are given.
    warnings: Vec<FailureJson>,
    skips: Vec<SkipJson>,
}

#[derive(Serialize)]
struct ChangeJson<'a> {
    /// `add`, `update` or `remove`.
    action: &'static str,
    /// `prompt`, `resource`, `values` or `template`.
    kind: &'static str,
    key: &'a str,
    file: Option<&'a str>,
}

#[derive(Serialize)]
struct FailureJson {
    file: String,
    line: Option<u64>,
    /// Given for a problem at a character of the line (hidden text).
    #[serde(skip_serializing_if = "Option::is_none")]
    column: Option<u64>,
    message: String,
}

impl FailureJson {
    fn all(dir: &Path, problems: &[FileError]) -> Vec<FailureJson> {
        problems
            .iter()
            .map(|problem| FailureJson {
                file: import::shown_path(dir, &problem.path),
                line: problem.line,
                column: problem.column,
                message: problem.message.clone(),
            })
            .collect()
    }
}

#[derive(Serialize)]
struct SkipJson {
    file: String,
    reason: String,
}

impl<'a> ImportJson<'a> {
    fn of(dir: &Path, report: &'a Report, options: &Options) -> ImportJson<'a> {
        ImportJson {
            collection: &report.collection,
            dry_run: options.dry_run,
            added: report.count(Action::Add),
            updated: report.count(Action::Update),
            unchanged: report.unchanged,
            removed: report.count(Action::Remove),
            failed: report.failed_files(),
            skipped: report.skipped.len(),
            without_file: report.without_file,
            changes: report
                .changes
                .iter()
                .map(|change| ChangeJson {
                    action: change.action.as_str(),
                    kind: change.kind.as_str(),
                    key: &change.key,
                    file: change.path.as_deref(),
                })
                .collect(),
            failures: FailureJson::all(dir, &report.failures),
            warnings: FailureJson::all(dir, &report.warnings),
            skips: report
                .skipped
                .iter()
                .map(|skipped| SkipJson {
                    file: import::shown_path(dir, &skipped.path),
                    reason: skipped.reason.clone(),
                })
                .collect(),
        }
    }
}

/// Failures make the command fail, after the summary said what happened.
fn outcome(report: &Report, options: &Options) -> Result<()> {
    failed(report.failed_files(), options)
}

/// The error for `failed` files (none: success).
fn failed(failed: usize, options: &Options) -> Result<()> {
    if failed == 0 {
        return Ok(());
    }
    let files = if failed == 1 { "file" } else { "files" };
    Err(if options.dry_run {
        anyhow!("{failed} {files} would fail; fix them before importing")
    } else if options.keep_going {
        anyhow!("{failed} {files} failed; the rest was imported")
    } else {
        anyhow!(
            "{failed} {files} failed, so nothing was imported; fix them, or pass --keep-going to \
             import the rest"
        )
    })
}
