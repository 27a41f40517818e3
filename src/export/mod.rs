//! `promptshelf export`: the library written back out as folders of the format
//! (docs/format.md), one per collection, such that importing a folder gives back what was
//! exported from it; or, with `--format`, its prompts as the hosts' own files (`hosts`, one
//! module per format, `body` the prompt text they all start from). Every written file is read
//! back and compared with the stored item, and any difference (something the format cannot
//! say) is reported rather than hidden.

pub mod body;
mod hosts;

pub(crate) use hosts::Format;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use anyhow::{Context, Result, anyhow, bail};
use percent_encoding::percent_decode_str;

use crate::library::{self, Collection, Folder, Item, emit, manifest};
use crate::model::{Resource, StoredPrompt, StoredResource};
use crate::signing;
use crate::store::{self, Store};

/// Items that belong to no collection (added by hand) are exported as this one, whose URIs
/// `resource add` gives them.
pub(crate) const LOCAL: &str = "local";

#[derive(Debug, Clone, Default)]
pub(crate) struct Options {
    /// Export only this collection, straight into the folder; otherwise every collection
    /// goes into a subfolder of its name.
    pub collection: Option<String>,
    /// The files to write: our folder format, or a host's.
    pub format: Format,
    /// Write nothing: the report's `planned` lists what would be written.
    pub dry_run: bool,
    /// Write into the folder a collection was imported from too.
    pub force: bool,
    /// Sign the export with this OpenSSH private key (`signing`); without it, a signature
    /// an earlier export left in the folder is removed, since it no longer vouches for it.
    pub sign: Option<PathBuf>,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Report {
    pub prompts: usize,
    pub resources: usize,
    pub tables: usize,
    /// Files written because they were missing or different.
    pub written: usize,
    /// Files already holding exactly what would be written.
    pub unchanged: usize,
    /// Items that will not read back exactly as stored, and items left out.
    pub warnings: Vec<String>,
    /// A dry run: nothing is written, and `planned` says what would be.
    pub dry_run: bool,
    /// In a dry run, each file that would be written (its path under DIR) and how.
    pub planned: Vec<(PathBuf, Planned)>,
    /// Every file of the export, written or unchanged (its path under DIR), and its SHA-256.
    pub files: Vec<(PathBuf, signing::Digest)>,
    /// With `--sign`: the signing key's fingerprint.
    pub signed_by: Option<String>,
}

/// What a dry run would do to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Planned {
    /// It is missing: it would be made.
    Create,
    /// It holds something else: it would be overwritten.
    Overwrite,
    /// A completion table's file of the other form, which would make the folder define the
    /// table twice: it would be removed.
    Remove,
}

impl Planned {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Planned::Create => "write",
            Planned::Overwrite => "overwrite",
            Planned::Remove => "remove",
        }
    }
}

/// One collection's items.
#[derive(Default)]
struct Group<'a> {
    prompts: Vec<&'a StoredPrompt>,
    resources: Vec<&'a StoredResource>,
}

pub(crate) fn run(store: &Store, dir: &Path, options: &Options) -> Result<Report> {
    // The key is read before anything is written: a key that cannot sign stops the export.
    let key = match &options.sign {
        Some(_) if options.format != Format::Promptshelf => bail!(
            "--sign signs an export in promptshelf's own format, which import --verify \
             checks; export --format {} without it",
            options.format.as_str()
        ),
        Some(path) => Some(signing::SigningKey::read(path)?),
        None => None,
    };
    let conn = store.conn()?;
    // One read transaction: a consistent snapshot even while an import commits.
    let tx = conn.unchecked_transaction()?;
    let prompts = store::read::prompts(&tx, store::read::Window::ALL, true)?;
    let resources = store::read::resources(&tx, store::read::Window::ALL)?;
    let tables: Vec<String> = store::read::tables(&tx)?
        .into_iter()
        .map(|table| table.name)
        .collect();
    let mut groups: BTreeMap<String, Group> = BTreeMap::new();
    for stored in &prompts {
        groups
            .entry(collection_of(&stored.prompt.origin))
            .or_default()
            .prompts
            .push(stored);
    }
    for stored in &resources {
        groups
            .entry(collection_of(&stored.info.origin))
            .or_default()
            .resources
            .push(stored);
    }
    if let Some(wanted) = &options.collection {
        if !groups.contains_key(wanted) {
            let known: Vec<String> = groups.keys().cloned().collect();
            bail!(
                "no collection '{wanted}'; {} (`promptshelf export DIR` without --collection \
                 writes them all)",
                crate::suggest::advice(wanted, &known, "collections")
            );
        }
        groups.retain(|name, _| name == wanted);
    }
    // Into a collection's own folder only what changes nothing, unless forced: a dry run
    // first says whether anything would be written there.
    if !options.force
        && !options.dry_run
        && let Some(refusal) = source_in(&tx, dir, options, groups.keys())?
    {
        drop(tx);
        drop(conn);
        let planned = run(
            store,
            dir,
            &Options {
                dry_run: true,
                ..options.clone()
            },
        )?;
        if planned.planned.is_empty() {
            return Ok(Report {
                dry_run: false,
                ..planned
            });
        }
        bail!(
            "{refusal}; {} files there would be written or overwritten: export elsewhere, \
             import the folder first, or pass --force (`--dry-run` lists them)",
            planned.planned.len()
        );
    }
    if options.format != Format::Promptshelf {
        let mut report = Report {
            dry_run: options.dry_run,
            ..Report::default()
        };
        let prompts: Vec<&StoredPrompt> = groups
            .values()
            .flat_map(|group| group.prompts.iter().copied())
            .collect();
        hosts::run(&tx, &prompts, dir, options.format, &mut report)?;
        return Ok(report);
    }
    if !options.dry_run {
        std::fs::create_dir_all(dir)
            .map_err(|err| anyhow!("cannot create {}: {err}", dir.display()))?;
    }
    let mut report = Report {
        dry_run: options.dry_run,
        ..Report::default()
    };
    let mut used_tables: BTreeSet<String> = BTreeSet::new();
    let mut collections = Vec::new();
    let mut local = manifest::Local {
        folder: LOCAL.to_string(),
        resources: Vec::new(),
        templates: Vec::new(),
    };
    for (name, group) in &groups {
        let by_hand = name == LOCAL;
        let scheme = scheme_of(name, &group.resources);
        let layout = if by_hand {
            Folder::Plain
        } else {
            layout_of(&tx, name)?
        };
        if !by_hand {
            collections.push(manifest::CollectionEntry {
                name: name.clone(),
                folder: safe_segment(name),
                scheme: scheme.clone(),
                layout: Some(layout.into()),
                prefix: store::prefix::of(&tx, name)?,
            });
        }
        let target = match &options.collection {
            Some(_) => dir.to_path_buf(),
            None => dir.join(safe_segment(name)),
        };
        // Only a whole library's manifest says how each folder is read; a folder alone is
        // read by its name.
        if options.collection.is_some()
            && let Some(warning) = layout_warning(name, layout, &target)
        {
            report.warnings.push(warning);
        }
        let mut out = Out::new(target.clone(), layout, scheme);
        out.by_hand = by_hand && options.collection.is_none();
        // Only a whole library's manifest keeps the prefix.
        if options.collection.is_none() {
            out.prefix = store::prefix::of(&tx, name)?;
        }
        // Resources written back where they were imported from: links to them from files
        // also written back there are made relative again, as their authors wrote them.
        if !by_hand {
            out.links = group
                .resources
                .iter()
                .filter_map(|stored| {
                    let path = safe_origin(&stored.info.origin, name)?;
                    Some((stored.info.uri.clone(), path))
                })
                .collect();
            out.targets = out
                .links
                .iter()
                .map(|(uri, path)| (path.clone(), uri.clone()))
                .collect();
        }
        for stored in &group.prompts {
            out.prompt(name, stored, &mut report)?;
            for argument in &stored.prompt.arguments {
                if let Some(table) = &argument.completion {
                    out.tables.insert(table.clone());
                }
            }
        }
        for stored in &group.resources {
            let Some((_, content)) = store::read::resource_content(&tx, &stored.info.uri)? else {
                continue;
            };
            let resource = Resource {
                info: stored.info.clone(),
                content,
            };
            let written = out.resource(name, stored, &resource, &mut report)?;
            if let Some(file) = written.filter(|_| by_hand) {
                local.resources.push(manifest::LocalResource {
                    file,
                    uri: stored.info.uri.clone(),
                });
            }
        }
        let wanted: Vec<String> = out.tables.iter().cloned().collect();
        for table in wanted {
            if tables.contains(&table) {
                out.table(&tx, &table, &mut report)?;
                used_tables.insert(table);
            }
        }
    }
    // A full export keeps tables no prompt uses too, with the items added by hand.
    if options.collection.is_none() {
        let mut out = Out::new(
            dir.join(LOCAL),
            Folder::Plain,
            library::DEFAULT_SCHEME.to_string(),
        );
        for table in tables.iter().filter(|table| !used_tables.contains(*table)) {
            out.table(&tx, table, &mut report)?;
        }
        // The templates added by hand have no file: the manifest holds them whole. (A
        // collection's own template is made again by its import.)
        local.templates = store::read::templates(&tx, store::read::Window::ALL)?
            .iter()
            .filter(|stored| stored.template.collection.is_none())
            .map(|stored| manifest::LocalTemplate::of(&stored.template, stored.last_modified))
            .collect();
        // What `import DIR` needs to restore the library from this folder in one command.
        let local =
            (groups.contains_key(LOCAL) || !out.paths.is_empty() || !local.templates.is_empty())
                .then_some(local);
        let manifest = manifest::Manifest::new(collections, local);
        write_file(
            dir,
            manifest::FILE,
            &manifest.to_bytes(),
            store::now_ms(),
            &mut report,
        )?;
    }
    match key {
        Some(key) => sign(store, dir, &key, &mut report)?,
        None => remove_signature(dir, &mut report)?,
    }
    Ok(report)
}

/// Writes the list of the export's files and its signature beside them, and warns of what
/// `import --verify` would refuse: a file in the folder this export did not write, or one
/// it wrote that an import does not read.
fn sign(store: &Store, dir: &Path, key: &signing::SigningKey, report: &mut Report) -> Result<()> {
    let exported: Vec<(String, signing::Digest)> = report
        .files
        .iter()
        .filter_map(|(path, digest)| Some((relative_to(dir, path)?, *digest)))
        .collect();
    let list = signing::list(&exported)?;
    let signature = key.sign(&list)?;
    write_file(dir, signing::LIST, &list, store::now_ms(), report)?;
    write_file(dir, signing::SIGNATURE, &signature, store::now_ms(), report)?;
    report.signed_by = Some(key.fingerprint());
    if report.dry_run {
        return Ok(());
    }
    // The files are written and signed by now: a folder that cannot be walked is a warning.
    let found = match crate::import::files_of(dir, store.path(), u64::MAX) {
        Ok(found) => found,
        Err(err) => {
            report.warnings.push(format!(
                "{err:#}, so whether import --verify takes the folder is not known"
            ));
            return Ok(());
        }
    };
    let exported: BTreeSet<&str> = exported.iter().map(|(path, _)| path.as_str()).collect();
    for path in &found {
        if !exported.contains(path.as_str()) {
            report.warnings.push(format!(
                "{path} is in {} but not part of this export, so import --verify refuses the \
                 folder while it is there; remove it and export again",
                dir.display()
            ));
        }
    }
    for path in exported {
        if !found.iter().any(|found| found == path) {
            report.warnings.push(format!(
                "{path} is exported but an import of {} does not read it (a hidden or ignored \
                 path), so import --verify refuses the folder as missing it",
                dir.display()
            ));
        }
    }
    Ok(())
}

/// An export without `--sign` leaves no signature of an earlier one: the files it vouched
/// for may have changed.
fn remove_signature(dir: &Path, report: &mut Report) -> Result<()> {
    let mut removed = false;
    for name in [signing::LIST, signing::SIGNATURE] {
        let path = dir.join(name);
        if !path.is_file() {
            continue;
        }
        if report.dry_run {
            report.planned.push((path, Planned::Remove));
        } else {
            std::fs::remove_file(&path)
                .with_context(|| format!("cannot remove {}", path.display()))?;
            removed = true;
        }
    }
    if removed {
        report.warnings.push(format!(
            "removed the signature an earlier export left in {}: this export is not signed \
             (--sign KEY signs it)",
            dir.display()
        ));
    }
    Ok(())
}

/// `path` under `dir` as a relative path with `/`, as the list and the import name files.
fn relative_to(dir: &Path, path: &Path) -> Option<String> {
    let parts: Option<Vec<&str>> = path
        .strip_prefix(dir)
        .ok()?
        .components()
        .map(|part| part.as_os_str().to_str())
        .collect();
    parts.map(|parts| parts.join("/"))
}

/// Which prompts `host_files` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Which {
    All,
    /// Those imported from a skill folder (`SKILL.md`).
    Skills,
    /// Every other prompt.
    NotSkills,
}

/// A host's own files for some of the library's prompts, as `export --format` makes them.
#[derive(Debug, Default)]
pub(crate) struct HostFiles {
    pub prompts: Vec<HostPrompt>,
    /// The prompts left out, and why, one sentence each.
    pub left_out: Vec<String>,
}

/// One prompt's files in a host's format.
#[derive(Debug)]
pub(crate) struct HostPrompt {
    /// Each file's path under the format's folder (`review.md` for
    /// `.claude/commands/review.md`), and its bytes.
    pub files: Vec<(String, Vec<u8>)>,
    /// The prompt's lastModified, the files' mtime.
    pub modified_ms: i64,
    /// What the format cannot say of the prompt, in a sentence naming it.
    pub warning: Option<String>,
}

/// The files `format` (not our own folder format) makes of the prompts of `collections`
/// (every collection when empty, the items added by hand being `local`) that `which` picks,
/// read in one transaction; `sync` writes them into the hosts' folders.
pub(crate) fn host_files(
    store: &Store,
    collections: &[String],
    format: Format,
    which: Which,
) -> Result<HostFiles> {
    let conn = store.conn()?;
    let tx = conn.unchecked_transaction()?;
    let prompts = store::read::prompts(&tx, store::read::Window::ALL, true)?;
    let known: BTreeSet<String> = store::read::collections(&tx)?
        .into_iter()
        .map(|collection| collection.name)
        .chain([LOCAL.to_string()])
        .collect();
    if let Some(unknown) = collections.iter().find(|name| !known.contains(*name)) {
        bail!(
            "no collection '{unknown}'; the library has {} (`promptshelf collection list`)",
            known.iter().cloned().collect::<Vec<_>>().join(", ")
        );
    }
    let mut picked = Vec::new();
    for stored in &prompts {
        let wanted =
            collections.is_empty() || collections.contains(&collection_of(&stored.prompt.origin));
        let fits = match which {
            Which::All => true,
            Which::Skills => hosts::is_skill(&tx, stored)?,
            Which::NotSkills => !hosts::is_skill(&tx, stored)?,
        };
        if wanted && fits {
            picked.push(stored);
        }
    }
    let mut report = Report::default();
    let made = hosts::files(&tx, &picked, format, &mut report)?;
    let mut left_out = report.warnings;
    left_out.retain(|warning| {
        !made
            .iter()
            .any(|made| made.warning.as_ref() == Some(warning))
    });
    let folder = format!("{}/", format.folder());
    let prompts = made
        .into_iter()
        .map(|made| HostPrompt {
            files: made
                .files
                .into_iter()
                .map(|file| {
                    let path = file.path.strip_prefix(&folder).unwrap_or(&file.path);
                    (path.to_string(), file.bytes)
                })
                .collect(),
            modified_ms: made.modified_ms,
            warning: made.warning,
        })
        .collect();
    Ok(HostFiles { prompts, left_out })
}

/// Whether the export writes into the folder a collection was imported from (its
/// `collections` source), where the stored versions would overwrite its authors' files,
/// which may hold edits not yet imported: the sentence that says so. `groups` are the
/// collections being exported.
fn source_in<'a>(
    conn: &rusqlite::Connection,
    dir: &Path,
    options: &Options,
    groups: impl Iterator<Item = &'a String>,
) -> Result<Option<String>> {
    let mut targets: Vec<PathBuf> = match (options.format, &options.collection) {
        (Format::Promptshelf, Some(_)) => vec![dir.to_path_buf()],
        (Format::Promptshelf, None) => {
            let mut targets = vec![dir.to_path_buf()];
            targets.extend(groups.map(|name| dir.join(safe_segment(name))));
            targets.push(dir.join(LOCAL));
            targets
        }
        (format, _) => vec![dir.join(format.folder())],
    };
    targets.retain(|target| target.is_dir());
    let targets: Vec<PathBuf> = targets
        .iter()
        .filter_map(|target| target.canonicalize().ok())
        .collect();
    for collection in store::read::collections(conn)? {
        let Some(source) = collection.source.source.as_deref() else {
            continue;
        };
        let source = Path::new(source);
        let Some(target) = targets.iter().find(|target| target.starts_with(source)) else {
            continue;
        };
        return Ok(Some(format!(
            "{} is {} the collection '{}' is imported from ({}): the stored versions would \
             overwrite its files, and any edit not yet imported (`promptshelf import {}`) \
             would be lost",
            target.display(),
            if target.as_path() == source {
                "the folder"
            } else {
                "inside the folder"
            },
            collection.name,
            source.display(),
            source.display()
        )));
    }
    Ok(None)
}

/// The URI scheme of a collection's resources (`<scheme>://<collection>/...`, as its import
/// made them), for `import --scheme`; the default one when none of them says.
fn scheme_of(collection: &str, resources: &[&StoredResource]) -> String {
    resources
        .iter()
        .find_map(|stored| {
            let (scheme, _) = stored.info.uri.split_once("://")?;
            let ours = Collection {
                name: collection.to_string(),
                scheme: scheme.to_string(),
            }
            .resource_uri("");
            stored
                .info
                .uri
                .starts_with(&ours)
                .then(|| scheme.to_string())
        })
        .unwrap_or_else(|| library::DEFAULT_SCHEME.to_string())
}

/// How the collection's folder was read when it was imported, so that it is read so again:
/// a folder of skill folders (`import::is_skills_collection`), a Claude Code plugin (its
/// source folder holds `.claude-plugin/`), else as the name of the folder it was imported
/// from says (a `commands` folder), or plain.
fn layout_of(conn: &rusqlite::Connection, collection: &str) -> Result<Folder> {
    if crate::import::is_skills_collection(conn, collection)? {
        return Ok(Folder::Skills);
    }
    let source = store::read::collection(conn, collection)?.and_then(|row| row.source);
    // A Claude Code plugin says so by its `.claude-plugin/` folder, which is not exported.
    if source.as_deref().is_some_and(|source| {
        Path::new(source)
            .join(library::PLUGIN_MANIFEST_FOLDER)
            .is_dir()
    }) {
        return Ok(Folder::Plugin);
    }
    Ok(source
        .as_deref()
        .and_then(|source| Path::new(source).file_name())
        .and_then(|name| name.to_str())
        .map(Folder::of)
        .unwrap_or_default())
}

/// The warning for a collection exported alone into a folder whose name makes an import read
/// it otherwise as to skills (a folder of skills exported into `out/`, or a collection that
/// is none into `skills/`); None when the import reads it as it was read. (A commands
/// folder's files are written in our format, which reads the same in any folder.)
fn layout_warning(collection: &str, layout: Folder, target: &Path) -> Option<String> {
    let named = target
        .file_name()
        .and_then(|name| name.to_str())
        .map(Folder::of)
        .unwrap_or_default();
    let kind = match (layout, named) {
        (Folder::Skills, Folder::Skills) => return None,
        (Folder::Skills, _) => {
            "a folder of skill folders, which an import reads as one only from a folder \
             named `skills`"
        }
        (_, Folder::Skills) => {
            "not a folder of skills, which an import reads a folder named `skills` as"
        }
        _ => return None,
    };
    Some(format!(
        "collection {collection}: it is {kind}; import {} from a folder named as it was, or \
         export the whole library (its manifest says how each folder is read)",
        target.display()
    ))
}

fn collection_of(origin: &crate::model::Origin) -> String {
    origin
        .collection
        .clone()
        .unwrap_or_else(|| LOCAL.to_string())
}

/// Writes the files of one collection folder.
struct Out {
    root: PathBuf,
    folder: Folder,
    /// The scheme its import gives the collection's resources (`import --scheme`).
    scheme: String,
    /// Paths written so far, to catch two items wanting one file.
    paths: HashSet<String>,
    /// Completion tables the collection's prompts use.
    tables: BTreeSet<String>,
    /// The items added by hand, of a whole-library export: the manifest keeps their URIs.
    by_hand: bool,
    /// The URIs of the collection's resources written where they came from, with their paths
    /// (`library::relative_links`), and the other way round, to read the files back.
    links: HashMap<String, String>,
    targets: HashMap<String, String>,
    /// The prefix its prompt names were given (`import --prefix`), which the manifest keeps:
    /// its restore names the skills so again, their files under `skill://PREFIX/NAME/`.
    prefix: Option<String>,
}

impl Out {
    fn new(root: PathBuf, folder: Folder, scheme: String) -> Out {
        Out {
            root,
            folder,
            scheme,
            paths: HashSet::new(),
            tables: BTreeSet::new(),
            by_hand: false,
            links: HashMap::new(),
            targets: HashMap::new(),
            prefix: None,
        }
    }

    fn prompt(
        &mut self,
        collection: &str,
        stored: &StoredPrompt,
        report: &mut Report,
    ) -> Result<()> {
        let prompt = &stored.prompt;
        let (path, in_place) = match safe_origin(&prompt.origin, collection) {
            Some(path) if is_readable_prompt_path(&path) => (path, true),
            _ => {
                let segments: Vec<String> = prompt.name.split('/').map(safe_segment).collect();
                (format!("{}.prompt.md", segments.join("/")), false)
            }
        };
        // A skill's SKILL.md is also a resource of the collection (`library::skill_document`),
        // the file as it was: that resource writes it back, which gives this prompt back too.
        if in_place
            && self.targets.contains_key(&path)
            && library::skill_file(&path, self.folder)
                .is_some_and(|(_, inside)| inside == "SKILL.md")
        {
            report.prompts += 1;
            return Ok(());
        }
        if !self.claim(&path, &format!("prompt {}", prompt.name), report) {
            return Ok(());
        }
        let mut item = Item::Prompt(prompt.clone());
        if in_place {
            library::relative_links(&mut item, &path, &self.links);
        }
        // The name without the prefix the manifest keeps, which a restore gives it again.
        let unprefixed = self.prefix.as_ref().and_then(|prefix| {
            let name = prompt.name.strip_prefix(prefix.as_str())?;
            name.strip_prefix(crate::import::SEPARATOR)
                .map(str::to_string)
        });
        if let (Item::Prompt(written), Some(name)) = (&mut item, &unprefixed) {
            written.name = name.clone();
        }
        let Item::Prompt(written) = &item else {
            return Ok(());
        };
        let text = emit::prompt_file(written, &path);
        let scheme = library::DEFAULT_SCHEME;
        let reads_back = library::parse_file_kept(
            &Collection {
                name: collection.to_string(),
                scheme: scheme.to_string(),
            },
            &path,
            self.folder,
            text.as_bytes(),
        );
        let reads_back = reads_back.map(|item| item.map(|item| self.resolved(item, &path)));
        let same = match reads_back {
            Ok(Some(Item::Prompt(mut read))) => {
                if unprefixed.as_ref() == Some(&read.name) {
                    read.name = prompt.name.clone();
                }
                store::hash_prompt(&read) == stored.content_hash
            }
            _ => false,
        };
        if !same {
            report.warnings.push(format!(
                "prompt {}: {path} does not read back exactly as stored (the format cannot say \
                 everything it holds)",
                prompt.name
            ));
        }
        self.write(&path, text.as_bytes(), stored.last_modified, report)?;
        report.prompts += 1;
        Ok(())
    }

    fn resource(
        &mut self,
        collection: &str,
        stored: &StoredResource,
        resource: &Resource,
        report: &mut Report,
    ) -> Result<Option<String>> {
        let uri = &stored.info.uri;
        let origin = safe_origin(&stored.info.origin, collection);
        let in_place = origin.is_some();
        let path = origin.unwrap_or_else(|| path_from_uri(uri, collection));
        if !self.claim(&path, &format!("resource {uri}"), report) {
            return Ok(None);
        }
        let mut item = Item::Resource(resource.clone());
        if in_place {
            library::relative_links(&mut item, &path, &self.links);
        }
        let Item::Resource(written) = &item else {
            return Ok(None);
        };
        let bytes = emit::resource_file(written, &path, self.folder);
        // Read back with the collection's scheme, as its import would read it.
        let collection = Collection {
            name: collection.to_string(),
            scheme: self.scheme.clone(),
        };
        // A skill's SKILL.md reads back as the resource its import makes of it, named,
        // titled and described as its prompt is.
        let skill_document = library::skill_document(&collection, &path, self.folder, &bytes);
        // What the file cannot carry goes into the metadata file beside it.
        let metadata =
            if skill_document.is_some() || emit::carries_metadata(written, &path, self.folder) {
                None
            } else {
                emit::metadata_file(written, &path)
                    .map(|yaml| (format!("{path}{}", library::METADATA_SUFFIX), yaml))
            };
        let parsed = match skill_document {
            Some(document) => document.map(|resource| Some(Item::Resource(resource))),
            None => library::parse_file_kept(&collection, &path, self.folder, &bytes),
        };
        let read_back = parsed
            .map(|item| item.map(|item| self.resolved(item, &path)))
            .map(|item| match item {
                // The manifest gives a hand-added resource its URI back.
                Some(Item::Resource(mut read)) if self.by_hand => {
                    read.info.uri = uri.clone();
                    Some(Item::Resource(read))
                }
                // A restore gives a prefixed collection's skill files the prefix again, as
                // `import::names` does.
                Some(Item::Resource(mut read)) if self.prefix.is_some() => {
                    let skill = format!("{}://", library::SKILL_SCHEME);
                    if let (Some(prefix), Some(path)) =
                        (&self.prefix, read.info.uri.strip_prefix(&skill))
                    {
                        read.info.uri = library::skill_uri(prefix, path);
                    }
                    Some(Item::Resource(read))
                }
                item => item,
            })
            .and_then(|item| match (item, &metadata) {
                (Some(Item::Resource(mut read)), Some((file, yaml))) => {
                    let yaml = String::from_utf8_lossy(yaml);
                    library::apply_metadata(&mut read, file, &yaml)?;
                    Ok(Some(Item::Resource(read)))
                }
                (item, _) => Ok(item),
            });
        match read_back {
            Ok(Some(Item::Resource(read)))
                if store::hash_resource(&read) == stored.content_hash => {}
            Ok(Some(Item::Resource(read))) if read.info.uri != *uri => {
                report.warnings.push(format!(
                    "resource {uri}: written to {path}, which imports as {}",
                    read.info.uri
                ))
            }
            _ => report.warnings.push(format!(
                "resource {uri}: {path} does not read back exactly as stored (a file of this \
                 type cannot hold all of its metadata)"
            )),
        }
        self.write(&path, &bytes, stored.last_modified, report)?;
        if let Some((file, yaml)) = &metadata
            && self.claim(file, &format!("the metadata of resource {uri}"), report)
        {
            self.write(file, yaml, stored.last_modified, report)?;
        }
        report.resources += 1;
        Ok(Some(path))
    }

    fn table(
        &mut self,
        conn: &rusqlite::Connection,
        table: &str,
        report: &mut Report,
    ) -> Result<()> {
        let Some(values) = store::read::table_values(conn, table)? else {
            return Ok(());
        };
        let segment = safe_segment(table);
        if segment != table {
            report.warnings.push(format!(
                "completion table '{table}': its name cannot be a file name; left out"
            ));
            return Ok(());
        }
        let (extension, bytes) = emit::values_file(&values);
        let path = format!("_values/{table}.{extension}");
        if !self.claim(&path, &format!("completion table {table}"), report) {
            return Ok(());
        }
        // A table written earlier in the other form would make the folder define it twice.
        let other = if extension == "csv" { "txt" } else { "csv" };
        let stale = self.root.join("_values").join(format!("{table}.{other}"));
        if stale.is_file() && report.dry_run {
            report.planned.push((stale.clone(), Planned::Remove));
        } else if stale.is_file() {
            std::fs::remove_file(&stale)
                .with_context(|| format!("cannot remove {}", stale.display()))?;
        }
        self.write(&path, &bytes, store::now_ms(), report)?;
        report.tables += 1;
        Ok(())
    }

    /// An item read back from the file at `path`, its relative links made URIs as an import
    /// makes them.
    fn resolved(&self, mut item: Item, path: &str) -> Item {
        library::resolve_links(&mut item, path, &self.targets);
        item
    }

    /// Whether `path` is still free; a second item wanting it is reported and left out.
    fn claim(&mut self, path: &str, what: &str, report: &mut Report) -> bool {
        if self.paths.insert(path.to_string()) {
            return true;
        }
        report.warnings.push(format!(
            "{what}: {path} is already written by another item; left out"
        ));
        false
    }

    fn write(&self, path: &str, bytes: &[u8], modified_ms: i64, report: &mut Report) -> Result<()> {
        write_file(&self.root, path, bytes, modified_ms, report)
    }
}

/// Writes `bytes` at `path` unless the file already holds them. The file appears whole
/// (written beside it, then renamed) and carries the item's lastModified as its mtime, so
/// a later import into a new library keeps the item's time.
fn write_file(
    root: &Path,
    path: &str,
    bytes: &[u8],
    modified_ms: i64,
    report: &mut Report,
) -> Result<()> {
    let target = root.join(path);
    report.files.push((target.clone(), signing::digest(bytes)));
    if std::fs::read(&target).is_ok_and(|existing| existing == bytes) {
        report.unchanged += 1;
        return Ok(());
    }
    if report.dry_run {
        let planned = if target.exists() {
            Planned::Overwrite
        } else {
            Planned::Create
        };
        report.planned.push((target, planned));
        report.written += 1;
        return Ok(());
    }
    write_whole(&target, bytes, modified_ms)?;
    report.written += 1;
    Ok(())
}

/// Writes `bytes` to `target`, its folders made as needed, so that the file appears whole
/// (written beside it, then renamed) with `modified_ms` as its mtime.
pub(crate) fn write_whole(target: &Path, bytes: &[u8], modified_ms: i64) -> Result<()> {
    let parent = target.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent)
        .map_err(|err| anyhow!("cannot create {}: {err}", parent.display()))?;
    let file_name = target
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temporary = parent.join(format!(".{file_name}.promptshelf-export"));
    let result = (|| -> std::io::Result<()> {
        let file = std::fs::File::create(&temporary)?;
        std::io::Write::write_all(&mut &file, bytes)?;
        let at = UNIX_EPOCH + Duration::from_millis(modified_ms.max(0).unsigned_abs());
        file.set_modified(at)?;
        std::fs::rename(&temporary, target)
    })();
    if let Err(err) = result {
        let _ = std::fs::remove_file(&temporary);
        return Err(anyhow!("cannot write {}: {err}", target.display()));
    }
    Ok(())
}

/// The item's file, when it came from this collection and its path is safe to write.
fn safe_origin(origin: &crate::model::Origin, collection: &str) -> Option<String> {
    let path = origin.path.as_deref()?;
    if origin.collection.as_deref() != Some(collection) {
        return None;
    }
    let safe = path
        .split('/')
        .all(|segment| safe_segment(segment) == segment);
    safe.then(|| path.to_string())
}

/// A prompt's origin is kept only where the file would be read as a prompt again.
fn is_readable_prompt_path(path: &str) -> bool {
    path.ends_with(".md") || path.ends_with(".txt")
}

/// A resource's path from its URI: the part after `<scheme>://<collection>/`, or after
/// `<scheme>://` when the URI is not one of the collection's.
fn path_from_uri(uri: &str, collection: &str) -> String {
    let (scheme, after_scheme) = uri.split_once("://").unwrap_or(("", uri));
    let prefix = Collection {
        name: collection.to_string(),
        scheme: scheme.to_string(),
    }
    .resource_uri("");
    let rest = uri.strip_prefix(&prefix).unwrap_or(after_scheme);
    let rest = rest.split(['?', '#']).next().unwrap_or(rest);
    let segments: Vec<String> = rest
        .split('/')
        .filter(|segment| !segment.is_empty())
        .map(|segment| safe_segment(&percent_decode_str(segment).decode_utf8_lossy()))
        .collect();
    if segments.is_empty() {
        "resource".to_string()
    } else {
        segments.join("/")
    }
}

/// One path segment that stays where it is put: no separators, no `.`/`..`, no control
/// characters, not empty.
fn safe_segment(segment: &str) -> String {
    let cleaned: String = segment
        .chars()
        .map(|c| {
            if c == '/' || c == '\\' || c.is_control() {
                '_'
            } else {
                c
            }
        })
        .collect();
    match cleaned.as_str() {
        "" | "." | ".." => "_".to_string(),
        _ => cleaned,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_from_uris_stay_inside_the_folder() {
        assert_eq!(path_from_uri("shelf://local/a%20b.md", "local"), "a b.md");
        assert_eq!(path_from_uri("shelf://my%20docs/x.md", "my docs"), "x.md");
        assert_eq!(
            path_from_uri("https://example.com/x/../y?q=1", "local"),
            "example.com/x/_/y"
        );
        assert_eq!(path_from_uri("s://c/%2E%2E/%2Fetc", "c"), "_/_etc");
    }

    #[test]
    fn unsafe_origins_are_not_used() {
        let origin = crate::model::Origin {
            collection: Some("c".into()),
            path: Some("../x.md".into()),
            commit: None,
        };
        assert_eq!(safe_origin(&origin, "c"), None);
    }
}
