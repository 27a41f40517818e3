//! The folder or prompt list being imported, resolved once, and the checks of its names.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Result, bail};

use crate::library::{self, Collection, Folder};
use crate::signing::Signed;

use super::{ByHand, Naming, Options, Part, plain_error};

/// The folder being imported, resolved once.
pub(super) struct Source {
    pub(super) root: PathBuf,
    /// A CSV list of prompts imported on its own (`import FILE.csv`): its name in `root`,
    /// its folder.
    pub(super) list: Option<String>,
    pub(super) collection: Collection,
    pub(super) folder: Folder,
    /// The database's files, when they live inside the folder.
    pub(super) exclude: Vec<PathBuf>,
    /// The folder of hand-added items of a whole-library import (`Part::by_hand`).
    pub(super) by_hand: Option<ByHand>,
    /// `Options::strict`.
    pub(super) strict: bool,
    /// `Options::verified`: each file read is checked against it.
    pub(super) verified: Option<Arc<Signed>>,
    /// How prompt names are given: `Options::naming`, or for a part of a whole-library
    /// import, the prefix its manifest recorded.
    pub(super) naming: Naming,
    /// The commit the folder's git working tree is at, if it is in one.
    pub(super) commit: Option<String>,
}

impl Source {
    pub(super) fn open(dir: &Path, db: &Path, options: &Options, part: &Part) -> Result<Source> {
        let root = match dir.canonicalize() {
            Ok(root) => root,
            // A hand-added part without a folder (see `run_parts`).
            Err(err) if part.by_hand.is_some() && err.kind() == std::io::ErrorKind::NotFound => {
                dir.to_path_buf()
            }
            // `notes.md/` or `notes.md/x`: the file is named, not the system's "Not a
            // directory".
            Err(_)
                if let Some(file) = dir
                    .ancestors()
                    .map(|path| path.components().collect::<PathBuf>())
                    .find(|path| path.is_file()) =>
            {
                bail!(
                    "cannot import {}: {} is a file, not a folder; import takes a folder or a \
                     CSV list of prompts (FILE.csv), and `promptshelf prompt add` or \
                     `resource add` one file",
                    dir.display(),
                    file.display()
                )
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
        let mut exclude = database_files(db);
        exclude.extend(signature_files(&root));
        let folder = match list {
            Some(_) => Folder::of(&folder_name),
            None => read_as(&root, &folder_name),
        };
        // The items added by hand have no folder of their own, whatever holds the export.
        let commit = match part.by_hand {
            Some(_) => None,
            None => super::commit::head_commit(&root),
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
            verified: options.verified.clone(),
            naming: match &part.prefix {
                Some(prefix) => Naming::PrefixAll(prefix.clone()),
                None => options.naming.clone(),
            },
            commit,
        })
    }
}

impl Source {
    /// Where the collection comes from, as its record says: the folder, or a prompt list's
    /// file (which `prompt edit` opens and imports again).
    pub(super) fn recorded(&self) -> PathBuf {
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
pub(crate) fn database_files(db: &Path) -> Vec<PathBuf> {
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

/// The list and signature of a signed export at the top of `root` (canonical): they vouch
/// for the folder's files and are none of them.
pub(super) fn signature_files(root: &Path) -> [PathBuf; 2] {
    [crate::signing::LIST, crate::signing::SIGNATURE].map(|name| root.join(name))
}

/// How the folder `root`, called `folder_name`, is read: a Claude Code plugin says so by its
/// `.claude-plugin/` folder, a folder of commands or skills by its name.
pub(super) fn read_as(root: &Path, folder_name: &str) -> Folder {
    if root.join(library::PLUGIN_MANIFEST_FOLDER).is_dir() {
        Folder::Plugin
    } else {
        Folder::of(folder_name)
    }
}
