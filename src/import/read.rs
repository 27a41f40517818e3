//! Reading, parsing and hashing every file of the folder (on every core), and what is done
//! to the parsed files before they are checked: metadata, skills, links, names, duplicates.

use std::collections::HashMap;

use crate::library::{self, FileError, Folder, Item};
use crate::model::{Content, ContentHash, Origin};
use crate::store;

use super::source::Source;
use super::{Kind, Progress, Skipped, names, open, plain_error, walk};

/// A file read and parsed, with what the plan compares.
pub(super) struct Parsed {
    pub(super) path: String,
    /// The line its item starts on, for a file of several (a prompt list's row).
    pub(super) line: Option<u64>,
    pub(super) modified_ms: i64,
    pub(super) item: Item,
    /// The content hash of a prompt or resource (tables have none).
    pub(super) hash: Option<ContentHash>,
    /// From a host's own file (`library::FileRead::host_file`): a relative link in it to no
    /// file is warned about, not refused, unless `--strict`.
    pub(super) host_file: bool,
}

impl Parsed {
    pub(super) fn kind_and_key(&self) -> (Kind, &str) {
        match &self.item {
            Item::Prompt(prompt) => (Kind::Prompt, &prompt.name),
            Item::Resource(resource) => (Kind::Resource, &resource.info.uri),
            Item::Values { table, .. } => (Kind::Values, table),
        }
    }
}

/// Metadata files (`NAME.meta.yaml`, docs/format.md) given to the resources they are named
/// after, whose hashes then cover them; a metadata file with no such resource beside it is
/// a resource of its own. One that does not read fails, and so does its resource, which
/// would otherwise import without it.
pub(super) fn with_metadata(parsed: Vec<Parsed>, failures: &mut Vec<FileError>) -> Vec<Parsed> {
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
pub(super) fn without_failed_skills(
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

/// Items of the folder of hand-added items: of no collection, with the URIs they had.
pub(super) fn made_by_hand(parsed: &mut [Parsed], uris: &HashMap<String, String>) {
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

/// Items of a folder in a git working tree: each records the commit the folder is at.
pub(super) fn at_commit(parsed: &mut [Parsed], commit: &str) {
    for file in parsed {
        let origin = match &mut file.item {
            Item::Prompt(prompt) => &mut prompt.origin,
            Item::Resource(resource) => &mut resource.info.origin,
            Item::Values { .. } => continue,
        };
        origin.commit = Some(commit.to_string());
    }
}

/// What reading one file gave.
pub(super) enum Read {
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
pub(super) struct Problems {
    pub(super) refused: Vec<FileError>,
    pub(super) warnings: Vec<FileError>,
}

/// Reads, parses and hashes every file, spread over the machine's cores; results keep the
/// walk's order.
pub(super) fn read_all(
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
                        column: None,
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
        column: None,
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
    // What is imported is what `import --verify` checked, whatever happened since.
    if let Some(signed) = &source.verified {
        signed
            .check(&source.root, &found.relative, &bytes)
            .map_err(|message| FileError {
                path: found.relative.clone(),
                line: None,
                column: None,
                message,
            })?;
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
            commit: None,
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
        return Ok(with_hidden(source, found, &bytes, items, problems));
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
    let problems = Problems {
        refused: Vec::new(),
        warnings,
    };
    Ok(with_hidden(source, found, &bytes, items, problems))
}

/// A file's items with the hidden text found in it (`library::hidden_in`) as warnings, or
/// with `--strict` as the failures that refuse the file. Completion values and binary files
/// are not prompt text.
fn with_hidden(
    source: &Source,
    found: &walk::Found,
    bytes: &[u8],
    items: Vec<Parsed>,
    mut problems: Problems,
) -> Read {
    let text = items.iter().any(|file| match &file.item {
        Item::Prompt(_) => true,
        Item::Resource(resource) => matches!(resource.content, Content::Text(_)),
        Item::Values { .. } => false,
    });
    let hidden = if text {
        library::hidden_in(&found.relative, bytes)
    } else {
        Vec::new()
    };
    if source.strict && !hidden.is_empty() {
        problems.refused.extend(hidden);
        return Read::Parsed(Vec::new(), problems);
    }
    problems.warnings.extend(hidden);
    Read::Parsed(items, problems)
}

/// Relative markdown links between the files become the URIs of their targets (see
/// `library::resolve_links`); an item whose text changed gets its hash again. Parsing the
/// markdown again is most of the work, so it is spread over the cores too.
pub(super) fn resolve_links(parsed: &mut [Parsed]) {
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
pub(super) fn qualify_shared_command_names(parsed: &mut [Parsed], folder: Folder) {
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

/// The text of a file of the folder, opened as `read_one` opens it; None if that fails.
pub(super) fn reread(source: &Source, relative: &str) -> Option<String> {
    use std::io::Read as _;
    let mut file = open::open_inside(&source.root, &source.root.join(relative)).ok()?;
    let mut text = String::new();
    file.read_to_string(&mut text).ok()?;
    Some(text)
}

/// Threads for reading and parsing: one per core, within reason.
pub(super) fn workers() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .clamp(1, 8)
}

pub(super) fn hash(item: &Item) -> Option<ContentHash> {
    match item {
        Item::Prompt(prompt) => Some(store::hash_prompt(prompt)),
        Item::Resource(resource) => Some(store::hash_resource(resource)),
        Item::Values { .. } => None,
    }
}

/// Two files naming the same prompt or table: the first (in path order) wins, the second is
/// a failure that names the first.
pub(super) fn without_duplicates(
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
