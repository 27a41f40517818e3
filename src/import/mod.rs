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

mod names;
mod open;
mod walk;
pub mod watch;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Result, anyhow, bail};
use rusqlite::Connection;

pub use names::Naming;
pub use walk::Skipped;

use crate::library::manifest::{LocalTemplate, Manifest};
use crate::library::{self, Collection, FileError, Folder, Item};
use crate::model::{CompletionValue, Content, ContentHash, Origin, StoredPrompt};
use crate::store::{self, ItemState, Store, StoreError, ValuesMode};
use crate::validate::{self, Files, Finding};

/// The largest file read unless `--max-file-size` says otherwise.
pub const DEFAULT_MAX_FILE_SIZE: u64 = 10 * 1024 * 1024;

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
    pub naming: Naming,
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
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Add => "add",
            Action::Update => "update",
            Action::Remove => "remove",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    Prompt,
    Resource,
    Values,
    Template,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Prompt => "prompt",
            Kind::Resource => "resource",
            Kind::Values => "values",
            Kind::Template => "template",
        }
    }
}

/// One thing the import adds, updates or removes.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub action: Action,
    pub kind: Kind,
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
    pub skipped: Vec<Skipped>,
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
    pub fn failed_files(&self) -> usize {
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

/// A file read and parsed, with what the plan compares.
struct Parsed {
    path: String,
    /// The line its item starts on, for a file of several (a prompt list's row).
    line: Option<u64>,
    modified_ms: i64,
    item: Item,
    /// The content hash of a prompt or resource (tables have none).
    hash: Option<ContentHash>,
    /// From a host's own file (`library::FileRead::host_file`): a relative link in it to no
    /// file is warned about, not refused, unless `--strict`.
    host_file: bool,
}

impl Parsed {
    fn kind_and_key(&self) -> (Kind, &str) {
        match &self.item {
            Item::Prompt(prompt) => (Kind::Prompt, &prompt.name),
            Item::Resource(resource) => (Kind::Resource, &resource.info.uri),
            Item::Values { table, .. } => (Kind::Values, table),
        }
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
pub struct Part {
    pub dir: PathBuf,
    /// The collection's name; the folder's name when None.
    pub collection: Option<String>,
    pub scheme: String,
    /// How the folder is read; by its name when None (`Folder::of`).
    pub layout: Option<Folder>,
    /// For the items added by hand, which belong to no collection: what the manifest says of
    /// them.
    pub by_hand: Option<ByHand>,
}

/// What a whole-library export's manifest says of the items added by hand.
#[derive(Debug, Clone, Default)]
pub struct ByHand {
    /// The URI of each resource's file (relative path), which their import keeps instead of
    /// the collection's.
    pub uris: HashMap<String, String>,
    /// The resource templates added by hand, which have no file.
    pub templates: Vec<LocalTemplate>,
}

/// The parts of the whole-library export `dir` whose manifest is `manifest`: each collection
/// under its name and scheme, then the items added by hand.
pub fn parts_of(dir: &Path, manifest: &Manifest) -> Vec<Part> {
    let mut parts: Vec<Part> = manifest
        .collections
        .iter()
        .map(|entry| Part {
            dir: dir.join(&entry.folder),
            collection: Some(entry.name.clone()),
            scheme: entry.scheme.clone(),
            layout: entry.layout.map(Folder::from),
            by_hand: None,
        })
        .collect();
    if let Some(local) = &manifest.local {
        parts.push(Part {
            dir: dir.join(&local.folder),
            collection: Some(local.folder.clone()),
            scheme: library::DEFAULT_SCHEME.to_string(),
            layout: Some(Folder::Plain),
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
pub fn is_skills_collection(conn: &Connection, collection: &str) -> store::Result<bool> {
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
pub fn run_parts(
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
                    &options.naming,
                    &claimed,
                    (&mut report.failures, &mut report.warnings),
                )?;
                resolve_links(&mut parsed);
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

/// Metadata files (`NAME.meta.yaml`, docs/format.md) given to the resources they are named
/// after, whose hashes then cover them; a metadata file with no such resource beside it is
/// a resource of its own. One that does not read fails, and so does its resource, which
/// would otherwise import without it.
fn with_metadata(parsed: Vec<Parsed>, failures: &mut Vec<FileError>) -> Vec<Parsed> {
    let resources: HashMap<String, usize> = parsed
        .iter()
        .enumerate()
        .filter(|(_, file)| matches!(file.item, Item::Resource(_)))
        .map(|(index, file)| (file.path.clone(), index))
        .collect();
    let mut metadata: Vec<(usize, usize)> = Vec::new();
    for (index, file) in parsed.iter().enumerate() {
        if let Some(&target) =
            library::described_by(&file.path).and_then(|path| resources.get(path))
            && target != index
        {
            metadata.push((index, target));
        }
    }
    if metadata.is_empty() {
        return parsed;
    }
    let mut parsed: Vec<Option<Parsed>> = parsed.into_iter().map(Some).collect();
    for (index, target) in metadata {
        let Some(sidecar) = parsed.get_mut(index).and_then(Option::take) else {
            continue;
        };
        let yaml = match &sidecar.item {
            Item::Resource(resource) => match &resource.content {
                Content::Text(text) => Some(text.clone()),
                Content::Binary(_) => None,
            },
            _ => None,
        };
        let Some(Some(file)) = parsed.get_mut(target) else {
            continue;
        };
        let applied = match (&mut file.item, yaml) {
            (Item::Resource(resource), Some(yaml)) => {
                library::apply_metadata(resource, &sidecar.path, &yaml)
            }
            _ => Err(FileError::new(
                &sidecar.path,
                None,
                "a metadata file must be UTF-8 YAML".to_string(),
            )),
        };
        match applied {
            Ok(()) => {
                file.hash = hash(&file.item);
                file.modified_ms = file.modified_ms.max(sidecar.modified_ms);
            }
            Err(err) => {
                failures.push(FileError::new(
                    &file.path,
                    None,
                    format!("its metadata file {} does not read", sidecar.path),
                ));
                failures.push(err);
                parsed[target] = None;
            }
        }
    }
    parsed.into_iter().flatten().collect()
}

/// The files of a skill whose `SKILL.md` failed are left out with it (one failure names the
/// skill's folder, which also keeps their stored versions from being pruned): stored alone,
/// they would be files of no skill, which neither a host nor `skills/list` can use.
fn without_failed_skills(
    parsed: Vec<Parsed>,
    folder: Folder,
    failures: &mut Vec<FileError>,
) -> Vec<Parsed> {
    let mut failed: Vec<(String, usize)> = failures
        .iter()
        .filter_map(|failure| {
            let (_, inside) = library::skill_file(&failure.path, folder)?;
            let skill = failure.path.strip_suffix(inside)?;
            (inside == "SKILL.md").then(|| (skill.to_string(), 0))
        })
        .collect();
    if failed.is_empty() {
        return parsed;
    }
    failed.sort();
    failed.dedup();
    let mut kept = Vec::with_capacity(parsed.len());
    for file in parsed {
        match failed
            .iter_mut()
            .find(|(skill, _)| file.path.starts_with(skill.as_str()))
        {
            Some((_, left_out)) => *left_out += 1,
            None => kept.push(file),
        }
    }
    for (skill, left_out) in failed.into_iter().filter(|(_, left_out)| *left_out > 0) {
        let files = if left_out == 1 { "file" } else { "files" };
        failures.push(FileError::new(
            skill.trim_end_matches('/'),
            None,
            format!(
                "the skill's {left_out} other {files} are left out with its SKILL.md, which \
                 failed: a skill's files are imported with it; fix SKILL.md and import again"
            ),
        ));
    }
    kept
}

/// The resources' URIs and the tables of every part of an import.
#[derive(Default)]
struct Brought {
    resources: HashSet<String>,
    tables: HashSet<String>,
}

/// Items of the folder of hand-added items: of no collection, with the URIs they had.
fn made_by_hand(parsed: &mut [Parsed], uris: &HashMap<String, String>) {
    for file in parsed {
        match &mut file.item {
            Item::Prompt(prompt) => prompt.origin = Default::default(),
            Item::Resource(resource) => {
                resource.info.origin = Default::default();
                if let Some(uri) = uris.get(&file.path) {
                    resource.info.uri = uri.clone();
                }
            }
            Item::Values { .. } => {}
        }
        file.hash = hash(&file.item);
    }
}

/// The folder being imported, resolved once.
struct Source {
    root: PathBuf,
    /// A CSV list of prompts imported on its own (`import FILE.csv`): its name in `root`,
    /// its folder.
    list: Option<String>,
    collection: Collection,
    folder: Folder,
    /// The database's files, when they live inside the folder.
    exclude: Vec<PathBuf>,
    /// The folder of hand-added items of a whole-library import (`Part::by_hand`).
    by_hand: Option<ByHand>,
    /// `Options::strict`.
    strict: bool,
}

impl Source {
    fn open(dir: &Path, db: &Path, options: &Options, part: &Part) -> Result<Source> {
        let root = match dir.canonicalize() {
            Ok(root) => root,
            // A hand-added part without a folder (see `run_parts`).
            Err(err) if part.by_hand.is_some() && err.kind() == std::io::ErrorKind::NotFound => {
                dir.to_path_buf()
            }
            Err(err) => bail!(
                "cannot import {}: {}; pass an existing folder",
                dir.display(),
                plain_error(&err)
            ),
        };
        let file_name = root
            .file_name()
            .and_then(|name| name.to_str())
            .unwrap_or_default()
            .to_string();
        let (root, list, default_name) = if !root.exists() || root.is_dir() {
            (root, None, file_name.clone())
        } else if let Some(stem) = file_name
            .strip_suffix(".csv")
            .or_else(|| file_name.strip_suffix(".CSV"))
        {
            // A prompt list is a collection named after its file, read from its folder.
            let folder = root.parent().map(Path::to_path_buf).unwrap_or_default();
            let stem = stem.to_string();
            (folder, Some(file_name.clone()), stem)
        } else {
            bail!(
                "cannot import {}: it is a file, and not a CSV list of prompts (FILE.csv); pass \
                 its folder, or add the file with `promptshelf prompt add` or `resource add`",
                dir.display()
            );
        };
        let folder_name = file_name;
        let name = options.collection.clone().unwrap_or(default_name);
        check_collection_name(&name, options.collection.is_some())?;
        check_scheme(&options.scheme)?;
        let exclude = database_files(db);
        // A Claude Code plugin says so by its `.claude-plugin/` folder, not by its name.
        let folder = if list.is_none() && root.join(library::PLUGIN_MANIFEST_FOLDER).is_dir() {
            Folder::Plugin
        } else {
            Folder::of(&folder_name)
        };
        Ok(Source {
            root,
            list,
            collection: Collection {
                name,
                scheme: options.scheme.clone(),
            },
            folder: part.layout.unwrap_or(folder),
            exclude,
            by_hand: None,
            strict: options.strict,
        })
    }
}

impl Source {
    /// Where the collection comes from, as its record says: the folder, or a prompt list's
    /// file (which `prompt edit` opens and imports again).
    fn recorded(&self) -> PathBuf {
        match &self.list {
            Some(list) => self.root.join(list),
            None => self.root.clone(),
        }
    }
}

fn check_collection_name(name: &str, given: bool) -> Result<()> {
    let ok = !name.is_empty()
        && name != "."
        && name != ".."
        && !name.contains(['/', '\\'])
        && !name.chars().any(char::is_control);
    if ok {
        return Ok(());
    }
    if given {
        bail!(
            "collection name '{}' cannot name a folder; use a plain word, e.g. --collection notes",
            name.escape_debug()
        );
    }
    bail!(
        "the folder's name cannot be a collection name; give one with --collection NAME, \
         e.g. --collection notes"
    )
}

/// RFC 3986: a letter, then letters, digits, `+`, `-` or `.`.
fn check_scheme(scheme: &str) -> Result<()> {
    let ok = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    if ok {
        Ok(())
    } else {
        bail!(
            "--scheme '{}' is not a URI scheme; use a letter followed by letters, digits, '+', \
             '-' or '.', e.g. --scheme shelf",
            scheme.escape_debug()
        )
    }
}

/// The database file and its companions (canonical paths, as the walk and the watcher meet
/// them): never read as part of a folder, and their changes are the import's own.
pub fn database_files(db: &Path) -> Vec<PathBuf> {
    let Ok(db) = db.canonicalize() else {
        return Vec::new();
    };
    let mut files = vec![db.clone()];
    for suffix in ["-wal", "-shm", "-journal"] {
        let mut name = db.as_os_str().to_owned();
        name.push(suffix);
        files.push(PathBuf::from(name));
    }
    files
}

/// What reading one file gave.
enum Read {
    /// The file's item; a skill's `SKILL.md` is two, its prompt and itself as a resource
    /// (`library::skill_document`), a prompt list's rows the prompts of those that read;
    /// with them what was refused (a list's rows) or warned about (`library::skill_warning`,
    /// a list's renamed rows).
    Parsed(Vec<Parsed>, Problems),
    /// A file that holds no item.
    Nothing,
    /// No longer a file of the folder when it was opened (see `open`).
    Skipped(Skipped),
}

/// What went wrong reading files: the failures, and the warnings of what was changed to read
/// them.
#[derive(Default)]
struct Problems {
    refused: Vec<FileError>,
    warnings: Vec<FileError>,
}

/// Reads, parses and hashes every file, spread over the machine's cores; results keep the
/// walk's order.
fn read_all(
    source: &Source,
    files: &[walk::Found],
    max_file_size: u64,
    progress: &dyn Progress,
) -> (Vec<Parsed>, Problems, Vec<Skipped>) {
    progress.start("reading", files.len() as u64);
    let chunk = files.len().div_ceil(workers()).max(1);
    let results: Vec<Vec<Result<Read, FileError>>> = std::thread::scope(|scope| {
        let handles: Vec<_> = files
            .chunks(chunk)
            .map(|part| {
                scope.spawn(move || {
                    part.iter()
                        .map(|found| {
                            let result = read_one(source, found, max_file_size);
                            progress.advance(1);
                            result
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| {
                handle.join().unwrap_or_else(|_| {
                    vec![Err(FileError {
                        path: String::new(),
                        line: None,
                        message: "reading a file failed unexpectedly".into(),
                    })]
                })
            })
            .collect()
    });
    let mut parsed = Vec::with_capacity(files.len());
    let mut problems = Problems::default();
    let mut skipped = Vec::new();
    for result in results.into_iter().flatten() {
        match result {
            Ok(Read::Parsed(items, more)) => {
                parsed.extend(items);
                problems.refused.extend(more.refused);
                problems.warnings.extend(more.warnings);
            }
            Ok(Read::Nothing) => {}
            Ok(Read::Skipped(skip)) => skipped.push(skip),
            Err(failure) => problems.refused.push(failure),
        }
    }
    (parsed, problems, skipped)
}

fn read_one(source: &Source, found: &walk::Found, max_file_size: u64) -> Result<Read, FileError> {
    use std::io::Read as _;
    let failure = |err: std::io::Error| FileError {
        path: found.relative.clone(),
        line: None,
        message: format!("cannot read it: {}", plain_error(&err)),
    };
    // Never `File::open` alone: the file may have become a link out of the folder since the
    // walk saw it.
    let file = match open::open_inside(&source.root, &found.path) {
        Ok(file) => file,
        Err(open::Refused::Failed(err)) => return Err(failure(err)),
        Err(open::Refused::Skip(reason)) => {
            tracing::debug!(path = %found.relative, %reason, "not read");
            return Ok(Read::Skipped(Skipped {
                path: found.relative.clone(),
                reason,
            }));
        }
    };
    let mut bytes = Vec::new();
    // The size was checked when the file was found; it may have grown since.
    file.take(max_file_size.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(failure)?;
    if bytes.len() as u64 > max_file_size {
        return Err(walk::too_big(
            found.relative.clone(),
            bytes.len() as u64,
            max_file_size,
        ));
    }
    let parsed = |item: Item, line: Option<u64>, host_file: bool| Parsed {
        path: found.relative.clone(),
        line,
        modified_ms: found.modified_ms,
        hash: hash(&item),
        item,
        host_file,
    };
    if source.list.is_some() {
        let origin = Origin {
            collection: Some(source.collection.name.clone()),
            path: Some(found.relative.clone()),
        };
        let list = library::prompt_list(&found.relative, &bytes, &origin)?;
        let items = list
            .prompts
            .into_iter()
            .map(|(prompt, line)| parsed(Item::Prompt(prompt), Some(line), false))
            .collect();
        let problems = Problems {
            refused: list.refused,
            warnings: list.warnings,
        };
        return Ok(Read::Parsed(items, problems));
    }
    let Some(read) = library::read_file(
        &source.collection,
        &found.relative,
        source.folder,
        &bytes,
        source.strict,
    )?
    else {
        return Ok(Read::Nothing);
    };
    let mut warnings = read.warnings;
    let mut items = vec![parsed(read.item, None, read.host_file)];
    if matches!(items[0].item, Item::Prompt(_))
        && let Some(document) =
            library::skill_document(&source.collection, &found.relative, source.folder, &bytes)
    {
        items.push(parsed(Item::Resource(document?), None, true));
        warnings.extend(library::skill_warning(
            &found.relative,
            source.folder,
            &bytes,
        ));
    }
    Ok(Read::Parsed(
        items,
        Problems {
            refused: Vec::new(),
            warnings,
        },
    ))
}

/// Relative markdown links between the files become the URIs of their targets (see
/// `library::resolve_links`); an item whose text changed gets its hash again. Parsing the
/// markdown again is most of the work, so it is spread over the cores too.
fn resolve_links(parsed: &mut [Parsed]) {
    let targets = library::link_targets(parsed.iter().map(|file| (file.path.as_str(), &file.item)));
    let chunk = parsed.len().div_ceil(workers()).max(1);
    std::thread::scope(|scope| {
        for part in parsed.chunks_mut(chunk) {
            let targets = &targets;
            scope.spawn(move || {
                for file in part {
                    if library::resolve_links(&mut file.item, &file.path, targets) {
                        file.hash = hash(&file.item);
                    }
                }
            });
        }
    });
}

/// Nested Claude Code commands whose file's name another prompt of the import also has take
/// their folders into their names (`git/commit.md` is `git-commit`, see
/// `library::nested_command_names`), so that `git/commit.md` and `svn/commit.md` both import.
fn qualify_shared_command_names(parsed: &mut [Parsed], folder: Folder) {
    let mut counts: HashMap<String, usize> = HashMap::new();
    for file in parsed.iter() {
        if let Item::Prompt(prompt) = &file.item {
            *counts.entry(prompt.name.clone()).or_default() += 1;
        }
    }
    for file in parsed.iter_mut() {
        let Item::Prompt(prompt) = &mut file.item else {
            continue;
        };
        if counts.get(&prompt.name).is_some_and(|&count| count > 1)
            && let Some((name, qualified)) = library::nested_command_names(&file.path, folder)
            && prompt.name == name
        {
            prompt.name = qualified;
            file.hash = hash(&file.item);
        }
    }
}

/// The import as `validate` sees it: the store, and the files being imported.
struct Incoming<'a> {
    store: &'a Store,
    collection: &'a str,
    files: Files,
    /// The URIs of the import's resources.
    resources: HashSet<String>,
    /// The store's tables and the import's.
    tables: HashSet<String>,
}

impl validate::Library for Incoming<'_> {
    fn has_resource(&self, uri: &str) -> store::Result<bool> {
        if self.resources.contains(uri) {
            return Ok(true);
        }
        Ok(store::read::resource(&*self.store.conn()?, uri)?.is_some())
    }

    fn has_table(&self, name: &str) -> bool {
        self.tables.contains(name)
    }

    fn files(&self, collection: &str) -> Option<&Files> {
        (collection == self.collection).then_some(&self.files)
    }
}

/// The parsed files that pass `validate`; each one that does not is a failure for every
/// finding, at its line of the file where it can be found. Documents go first, so that a
/// prompt embedding a document that failed fails too rather than import broken. Both passes
/// are spread over the cores: a document's links are parsed again.
fn validated(
    source: &Source,
    found: &[walk::Found],
    parsed: Vec<Parsed>,
    store: &Store,
    brought: &Brought,
    report: &mut Report,
) -> store::Result<Vec<Parsed>> {
    let mut tables: HashSet<String> = store::read::tables(&*store.conn()?)?
        .into_iter()
        .map(|table| table.name)
        .collect();
    // Every part of the import brings its own (this one's among them).
    tables.extend(brought.tables.iter().cloned());
    let resources = brought.resources.clone();
    let mut incoming = Incoming {
        store,
        collection: &source.collection.name,
        files: Files::new(found.iter().map(|file| file.relative.as_str())),
        resources,
        tables,
    };
    let mut findings: Vec<Vec<Finding>> = in_parallel(&parsed, |file| match &file.item {
        Item::Resource(resource) => match &resource.content {
            Content::Text(text) => Ok(validate::document(text, &resource.info.origin, &incoming)),
            Content::Binary(_) => Ok(Vec::new()),
        },
        _ => Ok(Vec::new()),
    })?;
    for (file, findings) in parsed.iter().zip(&findings) {
        if let Item::Resource(resource) = &file.item
            && findings
                .iter()
                .any(|finding| refuses(source, file, finding))
        {
            incoming.resources.remove(&resource.info.uri);
        }
    }
    let prompts = in_parallel(&parsed, |file| match (&file.item, file.hash) {
        (Item::Prompt(prompt), Some(content_hash)) => {
            let stored = StoredPrompt {
                prompt: prompt.clone(),
                content_hash,
                last_modified: file.modified_ms,
            };
            validate::prompt(&stored, &incoming)
        }
        _ => Ok(Vec::new()),
    })?;
    for (findings, more) in findings.iter_mut().zip(prompts) {
        findings.extend(more);
    }
    let mut kept = Vec::with_capacity(parsed.len());
    for (file, findings) in parsed.into_iter().zip(findings) {
        if findings.is_empty() {
            kept.push(file);
            continue;
        }
        // Read again only to place the findings: most imports have none. A prompt list's
        // row is placed at its line.
        let text = file
            .line
            .is_none()
            .then(|| reread(source, &file.path))
            .flatten();
        let is_prompt = matches!(file.item, Item::Prompt(_));
        let refused = findings
            .iter()
            .any(|finding| refuses(source, &file, finding));
        for finding in findings.iter() {
            let mut problem = FileError {
                path: file.path.clone(),
                line: file.line.or_else(|| {
                    let place = finding.place.as_ref()?;
                    library::line_in_file(text.as_deref()?, is_prompt, place)
                }),
                message: finding.message.clone(),
            };
            if refuses(source, &file, finding) {
                report.failures.push(problem);
            } else {
                problem.message.push_str(" (kept as the text it is)");
                report.warnings.push(problem);
            }
        }
        if !refused {
            kept.push(file);
        }
    }
    Ok(kept)
}

/// Whether `finding` refuses `file`: anything but a relative link to no file in a host's
/// own file, which the file keeps as the text it is (often an example for the model), with
/// a warning, unless `--strict`.
fn refuses(source: &Source, file: &Parsed, finding: &Finding) -> bool {
    !(file.host_file && finding.missing_link && !source.strict)
}

/// `check` of every file, spread over the cores; results keep the files' order.
fn in_parallel(
    parsed: &[Parsed],
    check: impl Fn(&Parsed) -> store::Result<Vec<Finding>> + Sync,
) -> store::Result<Vec<Vec<Finding>>> {
    let chunk = parsed.len().div_ceil(workers()).max(1);
    let check = &check;
    let parts: Vec<store::Result<Vec<Vec<Finding>>>> = std::thread::scope(|scope| {
        let handles: Vec<_> = parsed
            .chunks(chunk)
            .map(|part| scope.spawn(move || part.iter().map(check).collect()))
            .collect();
        handles
            .into_iter()
            .map(|handle| {
                handle.join().unwrap_or_else(|_| {
                    Err(StoreError::Invalid(
                        "validating a file failed unexpectedly".into(),
                    ))
                })
            })
            .collect()
    });
    let mut all = Vec::with_capacity(parsed.len());
    for part in parts {
        all.extend(part?);
    }
    Ok(all)
}

/// The text of a file of the folder, opened as `read_one` opens it; None if that fails.
fn reread(source: &Source, relative: &str) -> Option<String> {
    use std::io::Read as _;
    let mut file = open::open_inside(&source.root, &source.root.join(relative)).ok()?;
    let mut text = String::new();
    file.read_to_string(&mut text).ok()?;
    Some(text)
}

/// Threads for reading and parsing: one per core, within reason.
fn workers() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .clamp(1, 8)
}

fn hash(item: &Item) -> Option<ContentHash> {
    match item {
        Item::Prompt(prompt) => Some(store::hash_prompt(prompt)),
        Item::Resource(resource) => Some(store::hash_resource(resource)),
        Item::Values { .. } => None,
    }
}

/// Two files naming the same prompt or table: the first (in path order) wins, the second is
/// a failure that names the first.
fn without_duplicates(
    source: &Source,
    parsed: Vec<Parsed>,
    failures: &mut Vec<FileError>,
) -> Vec<Parsed> {
    let mut seen: HashMap<(Kind, String), usize> = HashMap::new();
    let mut kept: Vec<Parsed> = Vec::with_capacity(parsed.len());
    for item in parsed {
        let (kind, key) = item.kind_and_key();
        let key = (kind, key.to_string());
        if let Some(first) = seen.get(&key).and_then(|&at| kept.get(at)) {
            let failure = match kind {
                Kind::Prompt => names::in_folder_clash(source, &key.1, first, &item),
                _ => {
                    let fix = match kind {
                        Kind::Values => "keep one of _values/NAME.csv and _values/NAME.txt",
                        _ => "rename one of them",
                    };
                    FileError::new(
                        &item.path,
                        None,
                        format!(
                            "{} '{}' is also defined by {}; {fix}",
                            kind.as_str(),
                            key.1,
                            first.path
                        ),
                    )
                }
            };
            failures.push(failure);
            continue;
        }
        seen.insert(key, kept.len());
        kept.push(item);
    }
    kept
}

/// A parsed file to write; `modified_at` becomes its lastModified if its hash changed.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Write {
    index: usize,
    modified_at: i64,
}

#[derive(Debug, Default)]
struct Plan {
    writes: Vec<Write>,
    removals: Vec<(Kind, String)>,
    add_template: bool,
    /// The hand-added templates (`ByHand::templates`, by index) to write.
    templates: Vec<usize>,
    /// The collection's row is missing or names another folder: an import that changes no
    /// item still writes it, once.
    record: bool,
    /// The prefix of the collection's prompt names to record (`--prefix`), or (Some(None))
    /// to forget (`--no-prefix`), when that changes it.
    prefix: Option<Option<String>>,
    changes: Vec<Change>,
    unchanged: usize,
    /// The collection's items whose files are gone, left in place (see `Report`).
    without_file: usize,
    conflicts: Vec<FileError>,
    /// Files whose item was detached from the collection (`prompt add --detach`, ...).
    detached: Vec<Skipped>,
}

impl Plan {
    fn is_empty(&self) -> bool {
        self.writes.is_empty()
            && self.removals.is_empty()
            && !self.add_template
            && self.templates.is_empty()
            && !self.record
            && self.prefix.is_none()
    }
}

/// Compares the parsed files with the store. Reads only.
fn plan(
    conn: &Connection,
    source: &Source,
    parsed: &[Parsed],
    options: &Options,
    protected: &[String],
) -> store::Result<Plan> {
    let collection = &source.collection;
    let prompts = by_key(store::read::prompt_states(conn)?);
    let resources = by_key(store::read::resource_states(conn)?);
    let mut plan = Plan {
        // Items added by hand are no collection's: there is nothing to record.
        record: source.by_hand.is_none()
            && store::read::collection(conn, &collection.name)?
                .is_none_or(|row| row.source.as_deref() != source.recorded().to_str()),
        ..Plan::default()
    };
    if source.by_hand.is_none() {
        let recorded = store::prefix::of(conn, &collection.name)?;
        plan.prefix = match &options.naming {
            Naming::PrefixAll(prefix) if recorded.as_ref() != Some(prefix) => {
                Some(Some(prefix.clone()))
            }
            Naming::Refuse if recorded.is_some() => Some(None),
            _ => None,
        };
    }
    let detached: HashSet<(Kind, String)> = store::detached::of_collection(conn, &collection.name)?
        .into_iter()
        .map(|(kind, key)| match kind {
            store::history::Kind::Prompt => (Kind::Prompt, key),
            _ => (Kind::Resource, key),
        })
        .collect();
    for (index, file) in parsed.iter().enumerate() {
        let (kind, key) = file.kind_and_key();
        if detached.contains(&(kind, key.to_string())) {
            let command = match kind {
                Kind::Prompt => "prompt",
                _ => "resource",
            };
            plan.detached.push(Skipped {
                path: file.path.clone(),
                reason: format!(
                    "{command} {key} was detached from the collection, so its file is left \
                     alone; `promptshelf {command} rm {key}` gives it back to the collection"
                ),
            });
            continue;
        }
        let change = |action| Change {
            action,
            kind,
            key: key.to_string(),
            path: Some(file.path.clone()),
        };
        let stored = match kind {
            Kind::Prompt => prompts.get(key),
            Kind::Resource => resources.get(key),
            _ => None,
        };
        if let Item::Values { table, values } = &file.item {
            match store::read::table_values(conn, table)? {
                None => plan.changes.push(change(Action::Add)),
                Some(stored) if same_values(&stored, values) => {
                    plan.unchanged += 1;
                    continue;
                }
                Some(_) => plan.changes.push(change(Action::Update)),
            }
            plan.writes.push(Write {
                index,
                modified_at: file.modified_ms,
            });
            continue;
        }
        let Some(stored) = stored else {
            plan.changes.push(change(Action::Add));
            plan.writes.push(Write {
                index,
                modified_at: file.modified_ms,
            });
            continue;
        };
        if let Some(other) = &stored.origin.collection
            && *other != collection.name
        {
            plan.conflicts.push(taken(
                source,
                file,
                (kind, key),
                other,
                &stored.origin.path,
                &options.naming,
            ));
            continue;
        }
        let origin = match &file.item {
            Item::Prompt(prompt) => &prompt.origin,
            Item::Resource(resource) => &resource.info.origin,
            Item::Values { .. } => continue,
        };
        if Some(stored.content_hash) == file.hash {
            plan.unchanged += 1;
            if stored.origin != *origin {
                // Same content from another file: only its origin is recorded.
                plan.writes.push(Write {
                    index,
                    modified_at: stored.last_modified,
                });
            }
            continue;
        }
        plan.changes.push(change(Action::Update));
        // lastModified moves forward even when the file claims an older time.
        plan.writes.push(Write {
            index,
            modified_at: file.modified_ms.max(stored.last_modified + 1),
        });
    }
    // The collection's items no file of this import gives any more: removed when pruning
    // (all of them, or those of the files `prune_files` names), otherwise counted, so the
    // summary can say that `--prune` would remove them.
    let imported: HashSet<(Kind, &str)> = parsed.iter().map(|file| file.kind_and_key()).collect();
    for (kind, states) in [(Kind::Prompt, &prompts), (Kind::Resource, &resources)] {
        let mut gone: Vec<&ItemState> = states
            .values()
            .filter(|state| {
                state.origin.collection.as_deref() == Some(collection.name.as_str())
                    && !imported.contains(&(kind, state.key.as_str()))
                    && !is_protected(state.origin.path.as_deref(), protected)
            })
            .collect();
        gone.sort_by(|a, b| a.key.cmp(&b.key));
        for state in gone {
            let pruned = options.prune
                || options.prune_files.as_ref().is_some_and(|files| {
                    state
                        .origin
                        .path
                        .as_ref()
                        .is_some_and(|path| files.contains(path))
                });
            if !pruned {
                plan.without_file += 1;
                continue;
            }
            plan.removals.push((kind, state.key.clone()));
            plan.changes.push(Change {
                action: Action::Remove,
                kind,
                key: state.key.clone(),
                path: state.origin.path.clone(),
            });
        }
    }
    let templates: HashMap<String, ContentHash> =
        store::read::templates(conn, store::read::Window::ALL)?
            .into_iter()
            .map(|stored| (stored.template.uri_template, stored.content_hash))
            .collect();
    if let Some(by_hand) = &source.by_hand {
        for (index, local) in by_hand.templates.iter().enumerate() {
            let action = match templates.get(&local.uri_template) {
                None => Action::Add,
                Some(hash) if *hash == store::hash_template(&local.template()) => continue,
                Some(_) => Action::Update,
            };
            plan.templates.push(index);
            plan.changes.push(Change {
                action,
                kind: Kind::Template,
                key: local.uri_template.clone(),
                path: None,
            });
        }
    }
    let template = collection.template();
    // The template is added when missing and otherwise left alone: someone may have given
    // it completions or a better title with `template add`.
    let exists = templates.contains_key(&template.uri_template);
    if !exists && source.by_hand.is_none() {
        plan.add_template = true;
        plan.changes.push(Change {
            action: Action::Add,
            kind: Kind::Template,
            key: template.uri_template,
            path: None,
        });
    }
    Ok(plan)
}

fn by_key(states: Vec<ItemState>) -> HashMap<String, ItemState> {
    states
        .into_iter()
        .map(|state| (state.key.clone(), state))
        .collect()
}

/// A failure for a file whose prompt name (or resource URI) belongs to another collection,
/// at the line the name comes from.
fn taken(
    source: &Source,
    file: &Parsed,
    (kind, key): (Kind, &str),
    other: &str,
    path: &Option<String>,
    naming: &Naming,
) -> FileError {
    let from = path
        .as_deref()
        .map(|path| format!(" ({path})"))
        .unwrap_or_default();
    let (line, fix) = match kind {
        Kind::Prompt => {
            let name = names::name_source(source, file);
            let prefix = match naming {
                Naming::Refuse => format!(
                    "import without --no-prefix to name it {}-{key}",
                    source.collection.name
                ),
                _ => "import the folder with another --prefix WORD".to_string(),
            };
            let fix = format!(
                "{prefix}; or {}; or remove the other with `promptshelf prompt rm {key}`",
                name.fix
            );
            (Some(name.line), fix)
        }
        _ => (
            file.line,
            format!("remove the other with `promptshelf resource rm {key}`"),
        ),
    };
    FileError {
        path: file.path.clone(),
        line,
        message: format!(
            "{} '{key}' belongs to the collection '{other}'{from}; {fix}",
            kind.as_str()
        ),
    }
}

/// Whether an item from `path` belongs to a file or folder that failed.
fn is_protected(path: Option<&str>, protected: &[String]) -> bool {
    let Some(path) = path else { return false };
    protected.iter().any(|failed| {
        path == failed
            || failed.is_empty()
            || path
                .strip_prefix(failed.as_str())
                .is_some_and(|rest| rest.starts_with('/'))
    })
}

/// Whether a table holds exactly `values` (the store keeps one row per value and context,
/// the last weight given winning, in value order).
fn same_values(stored: &[CompletionValue], values: &[CompletionValue]) -> bool {
    let key = |value: &CompletionValue| {
        let (name, context) = value.context.clone().unwrap_or_default();
        (value.value.clone(), name, context)
    };
    let mut wanted: HashMap<(String, String, String), f64> = HashMap::new();
    for value in values {
        wanted.insert(key(value), value.weight);
    }
    wanted.len() == stored.len()
        && stored
            .iter()
            .all(|value| wanted.get(&key(value)) == Some(&value.weight))
}

fn apply(
    tx: &rusqlite::Transaction,
    source: &Source,
    parsed: &[Parsed],
    plan: &Plan,
    progress: &dyn Progress,
) -> store::Result<()> {
    progress.start("writing", (plan.writes.len() + plan.removals.len()) as u64);
    let mut prompts = Vec::new();
    let mut resources = Vec::new();
    for write in &plan.writes {
        let Some(file) = parsed.get(write.index) else {
            return Err(StoreError::Invalid("an import step lost its file".into()));
        };
        match &file.item {
            Item::Prompt(prompt) => prompts.push((prompt, write.modified_at)),
            Item::Resource(resource) => resources.push((resource, write.modified_at)),
            Item::Values { table, values } => {
                store::write::put_values(tx, table, None, values, ValuesMode::Replace)?;
                progress.advance(1);
            }
        }
    }
    // Many items to a call, so that new ones are inserted many to a statement
    // (`ROWS_PER_INSERT` says why).
    for batch in resources.chunks(store::write::ROWS_PER_INSERT) {
        store::write::put_resources(tx, batch)?;
        progress.advance(batch.len() as u64);
    }
    for batch in prompts.chunks(store::write::ROWS_PER_INSERT) {
        store::write::put_prompts(tx, batch)?;
        progress.advance(batch.len() as u64);
    }
    for (kind, key) in &plan.removals {
        match kind {
            Kind::Prompt => store::write::remove_prompt(tx, key)?,
            _ => store::write::remove_resource(tx, key)?,
        };
        progress.advance(1);
    }
    let collection = &source.collection;
    if plan.add_template {
        store::write::put_template(tx, &collection.template(), store::now_ms())?;
    }
    if let Some(by_hand) = &source.by_hand {
        for local in plan
            .templates
            .iter()
            .filter_map(|&at| by_hand.templates.get(at))
        {
            store::write::put_template(tx, &local.template(), local.last_modified)?;
        }
    }
    if let Some(prefix) = &plan.prefix {
        store::prefix::set(tx, &collection.name, prefix.as_deref())?;
    }
    // Every import that writes records where the collection comes from and when: what
    // `collection list` shows and `prompt edit` opens.
    if source.by_hand.is_none() {
        // A collection's first import makes its record: undoing that import removes it.
        if store::read::collection(tx, &collection.name)?.is_none() {
            store::history::created_collection(tx, &collection.name)?;
        }
        store::write::record_collection(
            tx,
            &collection.name,
            source.recorded().to_str(),
            store::now_ms(),
        )?;
    }
    Ok(())
}

/// An io::Error's message without the " (os error N)" tail.
fn plain_error(err: &std::io::Error) -> String {
    let text = err.to_string();
    match text.rfind(" (os error ") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

/// `path` inside `dir`, as the user would write it (for messages).
pub fn shown_path(dir: &Path, relative: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protection_covers_failed_folders() {
        let failed = vec!["a/b".to_string()];
        assert!(is_protected(Some("a/b"), &failed));
        assert!(is_protected(Some("a/b/c.md"), &failed));
        assert!(!is_protected(Some("a/bc.md"), &failed));
        assert!(!is_protected(None, &failed));
    }

    #[test]
    fn values_compare_as_the_store_keeps_them() {
        let value = |value: &str, weight: f64| CompletionValue {
            value: value.into(),
            weight,
            context: None,
        };
        assert!(same_values(
            &[value("a", 2.0), value("b", 0.0)],
            &[value("b", 0.0), value("a", 1.0), value("a", 2.0)]
        ));
        assert!(!same_values(&[value("a", 1.0)], &[value("a", 2.0)]));
    }
}
