//! `promptshelf backup FILE`: the library copied into a new file with SQLite's `VACUUM INTO`,
//! which reads one snapshot (a server serving the file, or a command writing it, goes on
//! meanwhile) and writes it compacted. The copy is made beside FILE and renamed to it once
//! whole, so FILE is never a half-written library.

use std::path::Path;

use anyhow::{Context, Result, anyhow, bail};

use super::common;
use crate::store::Store;

pub(super) fn run(store: &Store, file: &Path) -> Result<()> {
    if file.exists() {
        bail!(
            "{} exists already; give a new file (a backup never overwrites one)",
            file.display()
        );
    }
    let folder = match file.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    if !folder.is_dir() {
        bail!(
            "{} is not a folder; make it first, or give a file in another folder",
            folder.display()
        );
    }
    let name = file
        .file_name()
        .ok_or_else(|| anyhow!("{} names no file", file.display()))?
        .to_string_lossy();
    let partial = folder.join(format!(".{name}.promptshelf-backup-{}", std::process::id()));
    let _ = std::fs::remove_file(&partial);
    let copied = store
        .conn()?
        .execute("VACUUM INTO ?1", [partial.to_string_lossy()])
        .map(|_| ())
        .with_context(|| format!("cannot copy the library into {}", partial.display()));
    let outcome = copied.and_then(|()| {
        // Linked rather than renamed: a file that appeared at FILE meanwhile is not replaced.
        std::fs::hard_link(&partial, file)
            .with_context(|| format!("cannot put the copy at {}", file.display()))
    });
    let _ = std::fs::remove_file(&partial);
    outcome?;
    let bytes = std::fs::metadata(file).map(|m| m.len()).unwrap_or(0);
    common::say(&format!(
        "backed up {} to {} ({bytes} bytes); serve it, or copy it back in place of the \
         library while no server runs, to restore it",
        store.path().display(),
        file.display()
    ))
}
