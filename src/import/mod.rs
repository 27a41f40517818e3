//! `promptshelf import`: a folder of files (docs/format.md), or a CSV list of prompts, into
//! the store as one collection, in one transaction.
//!
//! The work is split so that the database is held as briefly as possible: the folder is
//! walked and every file read, parsed and hashed first (on every core), then the result is
//! compared with the store (`plan`), and only when something differs is the write lock taken,
//! the plan made again under it (another writer may have committed meanwhile) and applied.
//! A file whose content hash is unchanged is never written, so re-importing an unchanged
//! folder takes no lock and leaves no trace. An import that writes also records the
//! collection (its folder and the time) in `collections`; one that writes no item records it
//! only when its row is missing or names another folder.
//!
//! The stages, in the order they run: `source` (the folder or list being imported, resolved
//! once), `walk` and `open` (which files, each opened safely), `read` (every file read,
//! parsed and hashed, then metadata, skills, links, names and duplicates settled), `names`
//! (the names prompts take among the collections), `checked` (the files checked as
//! `validate` does), `plan` (compared with the store) and `apply` (the plan written);
//! `watch` imports again on change.

mod apply;
mod checked;
mod commit;
mod names;
mod open;
mod plan;
mod read;
mod source;
mod walk;
pub(crate) mod watch;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Result, anyhow};
use rusqlite::Connection;

// The kind of each `Change` (`cmd::edit` names it `import::Kind`).
pub(crate) use crate::model::Kind;
pub(crate) use names::{Naming, SEPARATOR, prefix_of, rename_advice, rename_fix};
pub(crate) use walk::Skipped;

use crate::library::manifest::{LocalTemplate, Manifest};
use crate::library::{self, FileError, Folder, Item};
use crate::signing::Signed;
use crate::store::{self, Store};

use apply::apply;
use checked::validated;
use plan::{Plan, plan};
use read::{
    Parsed, at_commit, made_by_hand, qualify_shared_command_names, read_all, resolve_links,
    with_metadata, without_duplicates, without_failed_skills,
};
// `names` reads files again and hashes what it renames.
use read::{hash, reread};
use source::Source;
pub(crate) use source::database_files;

/// The largest file read unless `--max-file-size` says otherwise.
pub(crate) const DEFAULT_MAX_FILE_SIZE: u64 = 10 * 1024 * 1024;

#[derive(Debug, Clone)]
pub struct Options {
    /// The collection's name; the folder's name when None.
    pub collection: Option<String>,
    pub scheme: String,
    pub prune: bool,
    /// Without `prune`: the files (relative paths) whose items are removed when they are
    /// gone, as `--prune` would remove them. `import --watch` passes the files its previous
    /// round read, so a file deleted while it watches is mirrored, and nothing else.
    pub prune_files: Option<HashSet<String>>,
    pub dry_run: bool,
    pub keep_going: bool,
    /// Refuse a key our own format does not know, rather than keep it with a warning
    /// (`library::read_file`).
    pub strict: bool,
    pub max_file_size: u64,
    /// What a prompt name another collection already has becomes.
    pub(crate) naming: Naming,
    /// `import --verify`: the folder as its signature vouched for it; a file read that
    /// differs, is not listed or is gone fails (`signing::Signed`).
    pub(crate) verified: Option<Arc<Signed>>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            collection: None,
            scheme: library::DEFAULT_SCHEME.to_string(),
            prune: false,
            prune_files: None,
            dry_run: false,
            keep_going: false,
            strict: false,
            max_file_size: DEFAULT_MAX_FILE_SIZE,
            naming: Naming::default(),
            verified: None,
        }
    }
}

/// Reports how far an import has got, e.g. to a progress bar. Called from several threads.
pub trait Progress: Sync {
    /// A phase begins: `what` of `total` steps.
    fn start(&self, what: &'static str, total: u64);
    fn advance(&self, steps: u64);
    fn finish(&self);
}

/// No progress shown.
pub struct Silent;

impl Progress for Silent {
    fn start(&self, _: &'static str, _: u64) {}
    fn advance(&self, _: u64) {}
    fn finish(&self) {}
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Add,
    Update,
    Remove,
}

impl Action {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Action::Add => "add",
            Action::Update => "update",
            Action::Remove => "remove",
        }
    }
}

/// One thing the import adds, updates or removes.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub action: Action,
    pub(crate) kind: Kind,
    /// The prompt's name, the resource's URI, the table's name or the URI template.
    pub key: String,
    /// The file it comes from (None for removals and the collection's template).
    pub path: Option<String>,
}

/// What an import did (or, in a dry run, would do).
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub collection: String,
    /// Adds, updates and removes in the order they are applied.
    pub changes: Vec<Change>,
    /// Files whose items are stored as they are.
    pub unchanged: usize,
    /// Files that could not be imported; paths are relative to the folder.
    pub failures: Vec<FileError>,
    /// Files imported all the same although something in them is amiss (a skill's
    /// description longer than Agent Skills allows), or changed to be read (a prompt list's
    /// row renamed), at their lines.
    pub warnings: Vec<FileError>,
    pub(crate) skipped: Vec<Skipped>,
    /// The collection's stored prompts and resources whose files are gone and that this
    /// import did not remove (it was not asked to prune them): what `--prune` would remove.
    pub without_file: usize,
    /// Every file the walk found (relative paths), read or not.
    pub files: HashSet<String>,
    /// Whether these are the items added by hand of a whole-library import (`Part::by_hand`),
    /// not a collection.
    pub by_hand: bool,
}

impl Report {
    /// How many files failed (a file can fail for several reasons, each a failure).
    pub(crate) fn failed_files(&self) -> usize {
        self.failures
            .iter()
            .map(|failure| failure.path.as_str())
            .collect::<HashSet<_>>()
            .len()
    }

    /// How many files' items had this action (the collection's template is not a file).
    pub fn count(&self, action: Action) -> usize {
        self.changes
            .iter()
            .filter(|change| change.action == action && change.kind != Kind::Template)
            .count()
    }
}

/// Imports `dir` into `store`. Errors are about the import as a whole (no such folder, the
/// database); a bad file is a failure in the report.
pub fn run(
    store: &Store,
    dir: &Path,
    options: &Options,
    progress: &dyn Progress,
) -> Result<Report> {
    let part = Part {
        dir: dir.to_path_buf(),
        collection: options.collection.clone(),
        scheme: options.scheme.clone(),
        layout: None,
        prefix: None,
        by_hand: None,
    };
    let mut reports = run_parts(store, &[part], options, progress)?;
    reports
        .pop()
        .ok_or_else(|| anyhow!("the import of {} made no report", dir.display()))
}

/// One folder of an import of several (a whole library, `restore`): a collection, or the
/// items added by hand.
#[derive(Debug, Clone)]
pub(crate) struct Part {
    pub dir: PathBuf,
    /// The collection's name; the folder's name when None.
    pub collection: Option<String>,
    pub scheme: String,
    /// How the folder is read; by its name when None (`Folder::of`).
    pub layout: Option<Folder>,
    /// The prefix its prompt names are given (`--prefix`), as the manifest recorded it.
    pub prefix: Option<String>,
    /// For the items added by hand, which belong to no collection: what the manifest says of
    /// them.
    pub by_hand: Option<ByHand>,
}

/// What a whole-library export's manifest says of the items added by hand.
#[derive(Debug, Clone, Default)]
pub(crate) struct ByHand {
    /// The URI of each resource's file (relative path), which their import keeps instead of
    /// the collection's.
    pub uris: HashMap<String, String>,
    /// The resource templates added by hand, which have no file.
    pub templates: Vec<LocalTemplate>,
}

/// The parts of the whole-library export `dir` whose manifest is `manifest`: each collection
/// under its name and scheme, then the items added by hand.
pub(crate) fn parts_of(dir: &Path, manifest: &Manifest) -> Vec<Part> {
    let mut parts: Vec<Part> = manifest
        .collections
        .iter()
        .map(|entry| Part {
            dir: dir.join(&entry.folder),
            collection: Some(entry.name.clone()),
            scheme: entry.scheme.clone(),
            layout: entry.layout.map(Folder::from),
            prefix: entry.prefix.clone(),
            by_hand: None,
        })
        .collect();
    if let Some(local) = &manifest.local {
        parts.push(Part {
            dir: dir.join(&local.folder),
            collection: Some(local.folder.clone()),
            scheme: library::DEFAULT_SCHEME.to_string(),
            layout: Some(Folder::Plain),
            prefix: None,
            by_hand: Some(ByHand {
                uris: local
                    .resources
                    .iter()
                    .map(|resource| (resource.file.clone(), resource.uri.clone()))
                    .collect(),
                templates: local.templates.clone(),
            }),
        });
    }
    parts
}

/// Whether the stored collection is a folder of skill folders: a skill's file of it was
/// stored from `NAME/PATH` as `skill://NAME/PATH` (in a plain folder a skill sits under a
/// host's folder, `.agents/skills/NAME/`, which its path keeps). Its folder is read so again
/// whatever the folder is called: by an import into it, `prompt edit`, and the manifest of a
/// whole-library export.
pub(crate) fn is_skills_collection(conn: &Connection, collection: &str) -> store::Result<bool> {
    let within = [collection.to_string()];
    let scheme = format!("{}://", library::SKILL_SCHEME);
    let window = store::read::Window {
        after: &scheme,
        limit: None,
    };
    let resources = store::read::resources_within(conn, window, Some(&within))?;
    Ok(resources
        .iter()
        .take_while(|stored| stored.info.uri.starts_with(&scheme))
        .any(|stored| {
            let Some(path) = stored.info.origin.path.as_deref() else {
                return false;
            };
            // A prefixed skill's files are at `skill://PREFIX/NAME/PATH` (`names`).
            library::skill_file(path, Folder::Skills).is_some_and(|(skill, inside)| {
                let uri = library::skill_uri(skill, inside);
                stored.info.uri == uri
                    || uri
                        .strip_prefix(&scheme)
                        .is_some_and(|tail| stored.info.uri.ends_with(&format!("/{tail}")))
            })
        }))
}

/// How the stored collection `collection`'s folder `dir` is read by an import of it: as its
/// folder says (`source::read_as`), or as a folder of skills when the collection is one.
pub(crate) fn layout_of(conn: &Connection, collection: &str, dir: &Path) -> store::Result<Folder> {
    let name = dir.file_name().unwrap_or_default().to_string_lossy();
    let folder = source::read_as(dir, &name);
    if folder == Folder::Plain && is_skills_collection(conn, collection)? {
        return Ok(Folder::Skills);
    }
    Ok(folder)
}

/// A part read, parsed, validated and planned.
struct Stage {
    source: Source,
    parsed: Vec<Parsed>,
    report: Report,
    protected: Vec<String>,
}

/// Imports every part in one transaction: all of them or, when one fails (without
/// `keep_going`), none. A part's prompts may embed another part's resources. The reports
/// are in the parts' order.
pub(crate) fn run_parts(
    store: &Store,
    parts: &[Part],
    options: &Options,
    progress: &dyn Progress,
) -> Result<Vec<Report>> {
    let started = Instant::now();
    let mut read = Vec::with_capacity(parts.len());
    // The prompt names the parts before take (name, collection): a later part's clash with
    // one is a clash with another collection, as with the store's.
    let mut claimed: HashMap<String, String> = HashMap::new();
    for part in parts {
        let part_options = Options {
            collection: part.collection.clone(),
            scheme: part.scheme.clone(),
            ..options.clone()
        };
        let mut source = Source::open(&part.dir, store.path(), &part_options, part)?;
        source.by_hand = part.by_hand.clone();
        // A collection of skill folders stays one whatever its folder is called.
        if part.layout.is_none()
            && source.folder == Folder::Plain
            && is_skills_collection(&*store.conn()?, &source.collection.name)?
        {
            source.folder = Folder::Skills;
        }
        let mut report = Report {
            collection: source.collection.name.clone(),
            by_hand: source.by_hand.is_some(),
            ..Report::default()
        };
        // The hand-added part of an export may hold templates alone, and its folder be gone
        // (git keeps no empty folder): then it has no files.
        let walk = if let Some(list) = &source.list {
            walk::one(&source.root, list, options.max_file_size)
        } else if source.root.is_dir() {
            walk::walk(&source.root, &source.exclude, options.max_file_size)
        } else {
            walk::Walk::default()
        };
        tracing::debug!(files = walk.files.len(), elapsed = ?started.elapsed(), "walked the folder");
        report.skipped = walk.skipped;
        report.files = walk
            .files
            .iter()
            .map(|found| found.relative.clone())
            .collect();
        report.failures = walk.failures;
        if let Some(signed) = &options.verified {
            let found = report.files.iter().map(String::as_str).collect();
            for path in signed.missing(&source.root, &found) {
                report.failures.push(FileError {
                    path,
                    line: None,
                    column: None,
                    message: "gone since import --verify checked the folder; nothing was \
                              imported"
                        .into(),
                });
            }
        }
        let (parsed, problems, skipped) =
            read_all(&source, &walk.files, options.max_file_size, progress);
        tracing::debug!(elapsed = ?started.elapsed(), "read and parsed the files");
        report.failures.extend(problems.refused);
        report.warnings = problems.warnings;
        if !skipped.is_empty() {
            report.skipped.extend(skipped);
            report.skipped.sort_by(|a, b| a.path.cmp(&b.path));
        }
        let mut parsed = parsed;
        qualify_shared_command_names(&mut parsed, source.folder);
        let parsed = without_duplicates(&source, parsed, &mut report.failures);
        let parsed = without_failed_skills(parsed, source.folder, &mut report.failures);
        let mut parsed = with_metadata(parsed, &mut report.failures);
        match &source.by_hand {
            // Added by hand, they had no folder: their links were never relative ones.
            Some(by_hand) => made_by_hand(&mut parsed, &by_hand.uris),
            None => {
                // Before the links are resolved: a renamed skill's files move to
                // `skill://PREFIX/NAME/` and links to them follow.
                names::name_prompts(
                    &*store.conn()?,
                    &source,
                    &mut parsed,
                    &source.naming,
                    &claimed,
                    (&mut report.failures, &mut report.warnings),
                )?;
                resolve_links(&mut parsed);
                if let Some(commit) = &source.commit {
                    at_commit(&mut parsed, commit);
                }
            }
        }
        for file in &parsed {
            if let Item::Prompt(prompt) = &file.item {
                claimed.insert(prompt.name.clone(), source.collection.name.clone());
            }
        }
        tracing::debug!(elapsed = ?started.elapsed(), "resolved links");
        read.push((source, parsed, report, walk.files));
    }
    // What every part brings, so that a prompt of one may embed a resource of another.
    let mut brought = Brought::default();
    for (_, parsed, _, _) in &read {
        for file in parsed {
            match &file.item {
                Item::Resource(resource) => brought.resources.insert(resource.info.uri.clone()),
                Item::Values { table, .. } => brought.tables.insert(table.clone()),
                Item::Prompt(_) => false,
            };
        }
    }
    let mut stages = Vec::with_capacity(read.len());
    for (source, parsed, mut report, found) in read {
        let parsed = validated(&source, &found, parsed, store, &brought, &mut report)?;
        tracing::debug!(elapsed = ?started.elapsed(), "validated");
        // Items of a file that failed are not pruned: the file is still there.
        let protected: Vec<String> = report
            .failures
            .iter()
            .map(|failure| failure.path.clone())
            .collect();
        stages.push(Stage {
            source,
            parsed,
            report,
            protected,
        });
    }
    let mut firsts = Vec::with_capacity(stages.len());
    {
        let conn = store.conn()?;
        let tx = conn.unchecked_transaction()?;
        for stage in &mut stages {
            let first = plan(&tx, &stage.source, &stage.parsed, options, &stage.protected)?;
            stage
                .report
                .failures
                .extend(first.conflicts.iter().cloned());
            if !first.detached.is_empty() {
                stage.report.skipped.extend(first.detached.iter().cloned());
                stage.report.skipped.sort_by(|a, b| a.path.cmp(&b.path));
            }
            firsts.push(first);
        }
    }
    tracing::debug!(elapsed = ?started.elapsed(), "planned");
    let stopped =
        stages.iter().any(|stage| !stage.report.failures.is_empty()) && !options.keep_going;
    if options.dry_run || stopped || firsts.iter().all(Plan::is_empty) {
        // A stopped import changed nothing, and its summary says so; a dry run shows the
        // plan.
        progress.finish();
        return Ok(stages
            .into_iter()
            .zip(firsts)
            .map(|(stage, first)| {
                let mut report = stage.report;
                if !stopped || options.dry_run {
                    report.changes = first.changes;
                }
                report.unchanged = first.unchanged;
                report.without_file = first.without_file;
                report
            })
            .collect());
    }
    let keep_going = options.keep_going;
    let applied = store.write(|tx| {
        let mut plans = Vec::with_capacity(stages.len());
        for stage in &stages {
            plans.push(plan(
                tx,
                &stage.source,
                &stage.parsed,
                options,
                &stage.protected,
            )?);
        }
        if !keep_going && plans.iter().any(|plan| !plan.conflicts.is_empty()) {
            // Another writer took a name meanwhile; nothing is written.
            return Ok(plans);
        }
        for (stage, plan) in stages.iter().zip(&plans) {
            if !plan.is_empty() {
                apply(tx, &stage.source, &stage.parsed, plan, progress)?;
            }
        }
        Ok(plans)
    })?;
    progress.finish();
    tracing::debug!(elapsed = ?started.elapsed(), "committed");
    let conflicted = applied.iter().any(|plan| !plan.conflicts.is_empty());
    Ok(stages
        .into_iter()
        .zip(applied)
        .map(|(stage, applied)| {
            let mut report = stage.report;
            for conflict in &applied.conflicts {
                if !report.failures.contains(conflict) {
                    report.failures.push(conflict.clone());
                }
            }
            if !conflicted || keep_going {
                report.changes = applied.changes;
            }
            report.unchanged = applied.unchanged;
            report.without_file = applied.without_file;
            report
        })
        .collect())
}

/// The files an import of the folder `dir` finds (relative paths, `/`-separated), the
/// database's and a signature's own files left out: what `import --verify` checks against
/// the signed list. A file that cannot be walked (unreadable, over `max_file_size`) is an
/// error that names it.
pub(crate) fn files_of(dir: &Path, db: &Path, max_file_size: u64) -> Result<Vec<String>> {
    let root = dir
        .canonicalize()
        .map_err(|err| anyhow!("cannot read {}: {}", dir.display(), plain_error(&err)))?;
    let mut exclude = database_files(db);
    exclude.extend(source::signature_files(&root));
    let walk = walk::walk(&root, &exclude, max_file_size);
    if let Some(failure) = walk.failures.first() {
        return Err(anyhow!(
            "cannot check {}: {}",
            shown_path(dir, &failure.path),
            failure.message
        ));
    }
    Ok(walk.files.into_iter().map(|found| found.relative).collect())
}

/// The resources' URIs and the tables of every part of an import.
#[derive(Default)]
pub(super) struct Brought {
    pub(super) resources: HashSet<String>,
    pub(super) tables: HashSet<String>,
}

/// An error's message without the " (os error N)" tail an io::Error adds, which tells a
/// person nothing.
pub(crate) fn plain_error(err: &dyn std::fmt::Display) -> String {
    let text = err.to_string();
    match text.rfind(" (os error ") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

/// `path` inside `dir`, as the user would write it (for messages).
pub(crate) fn shown_path(dir: &Path, relative: &str) -> String {
    if relative.is_empty() {
        return dir.display().to_string();
    }
    // A prompt list imported on its own is the one file of its folder.
    let folder = match dir.parent() {
        Some(folder) if dir.is_file() => folder,
        _ => dir,
    };
    folder.join(relative).display().to_string()
}
