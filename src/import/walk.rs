//! Finding the files of a collection folder: the `.gitignore` and `.ignore` files inside it
//! are obeyed (the `ignore` crate), hidden files and folders are skipped as the format says,
//! symlinks are followed only while they stay inside the folder, and a file over the size
//! limit is refused.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::UNIX_EPOCH;

use ignore::WalkBuilder;

use super::plain_error;
use crate::library::{self, FileError};

/// A file to read.
#[derive(Debug, Clone)]
pub(super) struct Found {
    /// Relative to the folder, with forward slashes.
    pub relative: String,
    pub path: PathBuf,
    /// Unix milliseconds.
    pub modified_ms: i64,
}

/// Something left out on purpose, with the reason: not an error, but worth a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Skipped {
    pub path: String,
    pub reason: String,
}

#[derive(Debug, Default)]
pub(super) struct Walk {
    /// In path order.
    pub files: Vec<Found>,
    pub skipped: Vec<Skipped>,
    /// Files and folders that should have been read but could not be.
    pub failures: Vec<FileError>,
}

/// Walks `root` (canonical). `exclude` lists files never to read (the database itself, when
/// it lives inside the folder).
pub(super) fn walk(root: &Path, exclude: &[PathBuf], max_file_size: u64) -> Walk {
    let skipped: Arc<Mutex<Vec<Skipped>>> = Arc::default();
    let mut builder = WalkBuilder::new(root);
    builder
        .standard_filters(false)
        .git_ignore(true)
        .git_exclude(true)
        .ignore(true)
        // Ignore files apply whether or not the folder is a git checkout, and only those
        // inside it: a `.gitignore` of `*` in a home folder must not empty an import.
        .require_git(false)
        .parents(false)
        .follow_links(true);
    let filter_root = root.to_path_buf();
    let filter_skipped = Arc::clone(&skipped);
    builder.filter_entry(move |entry| {
        if entry.depth() == 0 {
            return true;
        }
        // A name that is not UTF-8 is reported by the loop below.
        let Some(relative) = relative_path(&filter_root, entry.path()) else {
            return true;
        };
        let is_folder = entry.file_type().is_some_and(|kind| kind.is_dir());
        let hidden = if is_folder {
            library::skips_folder(&relative)
        } else {
            library::is_skipped(&relative)
        };
        if hidden {
            return false;
        }
        if entry.path_is_symlink() {
            let reason = match std::fs::canonicalize(entry.path()) {
                Ok(target) if target.starts_with(&filter_root) => return true,
                Ok(_) => super::open::OUTSIDE.to_string(),
                Err(err) => super::open::link_problem(entry.path(), &err),
            };
            filter_skipped
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(Skipped {
                    path: relative,
                    reason,
                });
            return false;
        }
        true
    });
    let mut walk = Walk::default();
    for result in builder.build() {
        let entry = match result {
            Ok(entry) => entry,
            Err(err) => {
                walk_error(root, err, &mut walk);
                continue;
            }
        };
        if entry.depth() == 0 {
            continue;
        }
        let Some(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            continue;
        }
        let shown = entry
            .path()
            .strip_prefix(root)
            .unwrap_or(entry.path())
            .display()
            .to_string();
        let Some(relative) = relative_path(root, entry.path()) else {
            walk.failures.push(FileError {
                path: shown,
                line: None,
                column: None,
                message: "the file name is not UTF-8, so it cannot be part of a URI; rename it"
                    .into(),
            });
            continue;
        };
        if !kind.is_file() {
            walk.skipped.push(Skipped {
                path: relative,
                reason: "not a regular file".into(),
            });
            continue;
        }
        if exclude.iter().any(|path| path == entry.path()) {
            continue;
        }
        let metadata = match entry.metadata() {
            Ok(metadata) => metadata,
            Err(err) => {
                walk.failures.push(FileError {
                    path: relative,
                    line: None,
                    column: None,
                    message: format!("cannot read it: {}", plain_error(&err)),
                });
                continue;
            }
        };
        if metadata.len() > max_file_size {
            walk.failures
                .push(too_big(relative, metadata.len(), max_file_size));
            continue;
        }
        walk.files.push(Found {
            relative,
            path: entry.path().to_path_buf(),
            modified_ms: modified_ms(&metadata),
        });
    }
    walk.files.sort_by(|a, b| a.relative.cmp(&b.relative));
    walk.skipped.extend(
        skipped
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .drain(..),
    );
    walk.skipped.sort_by(|a, b| a.path.cmp(&b.path));
    walk
}

/// The walk of one file, `name` in the folder `root` (a prompt list imported on its own).
pub(super) fn one(root: &Path, name: &str, max_file_size: u64) -> Walk {
    let path = root.join(name);
    let mut walk = Walk::default();
    match std::fs::metadata(&path) {
        Err(err) => walk.failures.push(FileError {
            path: name.to_string(),
            line: None,
            column: None,
            message: format!("cannot read it: {}", plain_error(&err)),
        }),
        Ok(metadata) if metadata.len() > max_file_size => {
            walk.failures
                .push(too_big(name.to_string(), metadata.len(), max_file_size));
        }
        Ok(metadata) => walk.files.push(Found {
            relative: name.to_string(),
            path,
            modified_ms: modified_ms(&metadata),
        }),
    }
    walk
}

/// A file's modification time in Unix milliseconds (now, when the system keeps none).
fn modified_ms(metadata: &std::fs::Metadata) -> i64 {
    metadata
        .modified()
        .ok()
        .and_then(|at| at.duration_since(UNIX_EPOCH).ok())
        .and_then(|since| i64::try_from(since.as_millis()).ok())
        .unwrap_or_else(crate::store::now_ms)
}

/// The failure for a file over the limit.
pub(super) fn too_big(path: String, size: u64, limit: u64) -> FileError {
    FileError {
        path,
        line: None,
        column: None,
        message: format!(
            "the file is {}, over the limit of {}; raise --max-file-size or list it in .gitignore",
            mebibytes(size),
            mebibytes(limit)
        ),
    }
}

fn mebibytes(bytes: u64) -> String {
    if bytes < 1024 * 1024 {
        format!("{bytes} bytes")
    } else {
        format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
    }
}

/// `path` relative to `root` with forward slashes, or None when a name is not UTF-8.
fn relative_path(root: &Path, path: &Path) -> Option<String> {
    let relative = path.strip_prefix(root).ok()?;
    let mut parts = Vec::new();
    for component in relative.components() {
        parts.push(component.as_os_str().to_str()?);
    }
    Some(parts.join("/"))
}

/// An error of the walk: a loop of symlinks is skipped, a folder or file that cannot be read
/// is a failure, and a broken ignore file is reported while its good lines still apply.
fn walk_error(root: &Path, err: ignore::Error, walk: &mut Walk) {
    let mut path: Option<PathBuf> = None;
    let mut line = None;
    let mut inner = &err;
    loop {
        match inner {
            ignore::Error::WithPath { path: at, err } => {
                path = Some(at.clone());
                inner = err;
            }
            ignore::Error::WithDepth { err, .. } => inner = err,
            ignore::Error::WithLineNumber { line: at, err } => {
                line = Some(*at);
                inner = err;
            }
            ignore::Error::Partial(errors) => {
                for err in errors {
                    walk_error(root, err.clone(), walk);
                }
                return;
            }
            _ => break,
        }
    }
    let shown =
        |path: &Path| relative_path(root, path).unwrap_or_else(|| path.display().to_string());
    match inner {
        ignore::Error::Loop { child, .. } => walk.skipped.push(Skipped {
            path: shown(child),
            reason: "a symlink loop".into(),
        }),
        // A symlink the walker could not follow (to nothing, or a loop of file links): the
        // walker stats it before the filter above sees it.
        ignore::Error::Io(io) if path.as_deref().is_some_and(is_symlink) => {
            let link = path.as_deref().unwrap_or(root);
            let err = std::fs::metadata(link)
                .err()
                .unwrap_or_else(|| std::io::Error::other(io.to_string()));
            walk.skipped.push(Skipped {
                path: shown(link),
                reason: super::open::link_problem(link, &err),
            });
        }
        ignore::Error::Io(io) => walk.failures.push(FileError {
            path: path.as_deref().map(shown).unwrap_or_default(),
            line,
            column: None,
            message: format!("cannot read it: {}", plain_error(io)),
        }),
        other => walk.skipped.push(Skipped {
            path: path.as_deref().map(shown).unwrap_or_default(),
            reason: format!(
                "{}a line of this ignore file is not understood ({other}); the rest applies",
                line.map(|line| format!("line {line}: "))
                    .unwrap_or_default()
            ),
        }),
    }
}

fn is_symlink(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|here| here.file_type().is_symlink())
}
