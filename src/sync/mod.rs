//! `promptshelf sync HOST...`: the library's prompts and skills written into each host's own
//! folders, in that host's format (the files `export --format` makes), and kept in step on
//! later runs. Each folder holds a record of what sync wrote there (`record`), so a run writes
//! only what changed, removes the files of items that left the library, keeps a file changed
//! by hand since sync wrote it (unless forced), and never touches a file it did not write.
//! `hosts` says which folders each host reads.

pub(crate) mod hosts;
mod record;
pub(crate) mod remote;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow, bail};

use crate::export::{self, Format, HostPrompt, Which};
use crate::hosts::{Host, Scope};
use crate::store::Store;
use hosts::Folder;
use record::{Record, digest};

#[derive(Debug, Clone)]
pub(crate) struct Options {
    pub hosts: Vec<Host>,
    pub scope: Scope,
    /// The project's root, for `Scope::Project`.
    pub project: PathBuf,
    /// Only the prompts of these collections (every collection when empty).
    pub collections: Vec<String>,
    /// Write nothing; the report says what would be done.
    pub dry_run: bool,
    /// Replace, or remove, files changed by hand since sync wrote them.
    pub force: bool,
}

/// What a run did, or would do, to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Action {
    /// Missing: written.
    Write,
    /// Holding what sync wrote before, and the library's version is another: replaced.
    Overwrite,
    /// Written by sync for an item no longer synced, and not changed since: removed.
    Remove,
    /// Already holding the library's version.
    Unchanged,
    /// Changed by hand since sync wrote it: kept as it is.
    KeptEdited,
    /// At a path sync would write but did not write itself: never touched.
    LeftAlone,
}

impl Action {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Action::Write => "write",
            Action::Overwrite => "overwrite",
            Action::Remove => "remove",
            Action::Unchanged => "unchanged",
            Action::KeptEdited => "kept",
            Action::LeftAlone => "left alone",
        }
    }

    /// Whether the file is not as the library has it after the run.
    pub(crate) fn is_conflict(self) -> bool {
        matches!(self, Action::KeptEdited | Action::LeftAlone)
    }
}

/// One host folder's outcome.
#[derive(Debug)]
pub(crate) struct FolderReport {
    pub folder: PathBuf,
    /// The hosts that read the folder, among those asked for.
    pub hosts: Vec<Host>,
    pub format: Format,
    pub prompts: usize,
    /// Each file sync looked at, by its path under the folder, and what it did.
    pub files: Vec<(String, Action)>,
    /// What the format cannot say, and prompts left out.
    pub warnings: Vec<String>,
}

impl FolderReport {
    pub(crate) fn count(&self, action: Action) -> usize {
        self.files
            .iter()
            .filter(|(_, done)| *done == action)
            .count()
    }
}

/// Syncs every folder of the hosts in `options`; a folder two hosts read is written once.
pub(crate) fn run(store: &Store, options: &Options) -> Result<Vec<FolderReport>> {
    let mut folders: BTreeMap<PathBuf, (Folder, Vec<Host>)> = BTreeMap::new();
    for &host in &options.hosts {
        for folder in hosts::folders(host, options.scope, &options.project)? {
            match folders.get_mut(&folder.path) {
                Some((shared, readers)) => {
                    // Two hosts reading one skills folder: what either wants goes there.
                    if shared.which != folder.which {
                        shared.which = Which::All;
                    }
                    if !readers.contains(&host) {
                        readers.push(host);
                    }
                }
                None => {
                    folders.insert(folder.path.clone(), (folder, vec![host]));
                }
            }
        }
    }
    let mut reports = Vec::new();
    for (path, (folder, readers)) in folders {
        let made = export::host_files(store, &options.collections, folder.format, folder.which)?;
        let prompts = made.prompts.len();
        let (files, mut warnings) = sync_folder(&path, made.prompts, options)?;
        warnings.splice(0..0, made.left_out);
        reports.push(FolderReport {
            folder: path,
            hosts: readers,
            format: folder.format,
            prompts,
            files,
            warnings,
        });
    }
    Ok(reports)
}

/// What `sync_folder` did: each file and what was done to it, and what the format cannot
/// say of each prompt written now (said once, when its files change, not on every run).
type Done = (Vec<(String, Action)>, Vec<String>);

/// Brings `folder` in step with the files of `prompts`, as the module doc says, and writes
/// its record.
fn sync_folder(folder: &Path, prompts: Vec<HostPrompt>, options: &Options) -> Result<Done> {
    let record = Record::read(folder)?;
    let mut kept = Record::default();
    let mut done = Vec::new();
    let mut warnings = Vec::new();
    let wanted: BTreeSet<String> = prompts
        .iter()
        .flat_map(|prompt| prompt.files.iter().map(|(path, _)| path.clone()))
        .collect();
    for prompt in prompts {
        let mut written = false;
        for (path, bytes) in prompt.files {
            let action = sync_file(folder, &path, &bytes, prompt.modified_ms, &record, options)?;
            match action {
                Action::Write | Action::Overwrite | Action::Unchanged => {
                    written |= action != Action::Unchanged;
                    kept.files.insert(path.clone(), digest(&bytes));
                }
                // Still sync's file: the next run looks at it again.
                Action::KeptEdited => {
                    if let Some(wrote) = record.files.get(&path) {
                        kept.files.insert(path.clone(), wrote.clone());
                    }
                }
                Action::LeftAlone | Action::Remove => {}
            }
            done.push((path, action));
        }
        if written {
            warnings.extend(prompt.warning);
        }
    }
    for (path, wrote) in &record.files {
        if wanted.contains(path) {
            continue;
        }
        let target = folder.join(path);
        // A file already gone is simply forgotten.
        let Some(there) = read_if_there(&target)? else {
            continue;
        };
        if digest(&there) == *wrote || options.force {
            if !options.dry_run {
                std::fs::remove_file(&target)
                    .map_err(|err| anyhow!("cannot remove {}: {err}", target.display()))?;
                remove_empty_parents(folder, &target);
            }
            done.push((path.clone(), Action::Remove));
        } else {
            kept.files.insert(path.clone(), wrote.clone());
            done.push((path.clone(), Action::KeptEdited));
        }
    }
    if !options.dry_run {
        kept.write(folder)?;
    }
    Ok((done, warnings))
}

/// Writes `bytes` at `path` under `folder` unless the file there holds them, was changed by
/// hand since sync wrote it (`record` says what it wrote) or was not written by sync; says
/// which.
fn sync_file(
    folder: &Path,
    path: &str,
    bytes: &[u8],
    modified_ms: i64,
    record: &Record,
    options: &Options,
) -> Result<Action> {
    let target = folder.join(path);
    let action = match (read_if_there(&target)?, record.files.get(path)) {
        (None, _) => Action::Write,
        (Some(there), _) if there == bytes => Action::Unchanged,
        (Some(there), Some(wrote)) if digest(&there) == *wrote || options.force => {
            Action::Overwrite
        }
        (Some(_), Some(_)) => Action::KeptEdited,
        (Some(_), None) => Action::LeftAlone,
    };
    if matches!(action, Action::Write | Action::Overwrite) && !options.dry_run {
        export::write_whole(&target, bytes, modified_ms)?;
    }
    Ok(action)
}

/// The bytes of `path`, or None when there is no file.
fn read_if_there(path: &Path) -> Result<Option<Vec<u8>>> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(err) if path.is_dir() => bail!(
            "{} is a folder where sync writes a file; move it away ({err})",
            path.display()
        ),
        Err(err) => bail!("cannot read {}: {err}", path.display()),
    }
}

/// Removes the folders between `file` (just removed) and `folder` that are left empty, such
/// as a removed skill's own folder.
fn remove_empty_parents(folder: &Path, file: &Path) {
    let mut at = file.parent();
    while let Some(dir) = at {
        if dir == folder || !dir.starts_with(folder) || std::fs::remove_dir(dir).is_err() {
            break;
        }
        at = dir.parent();
    }
}
