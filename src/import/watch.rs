//! `import --watch`: waits for files of the folder to change and runs another import round,
//! debounced (notify-debouncer-mini), so that an editor's burst of writes is one round.
//! Changes to files the import skips (hidden ones, `.git`, the database itself) start none.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use anyhow::{Context, Result};
use notify_debouncer_mini::notify::RecursiveMode;
use notify_debouncer_mini::{DebounceEventResult, new_debouncer};

use crate::library;

/// How long the folder must be quiet before a round starts.
const QUIET: Duration = Duration::from_millis(300);

/// Calls `round` after every debounced change under `dir` until the watcher stops (it runs
/// until the process is interrupted). `ignored` lists files (canonical paths) whose changes
/// start no round.
/// An error from the watcher itself (e.g. too many watched folders) is reported through
/// `warn` and watching goes on.
pub fn watch(
    dir: &Path,
    ignored: &[PathBuf],
    mut round: impl FnMut() -> Result<()>,
    mut warn: impl FnMut(&str),
) -> Result<()> {
    let root = dir
        .canonicalize()
        .with_context(|| format!("cannot watch {}", dir.display()))?;
    let (sender, events) = mpsc::channel::<DebounceEventResult>();
    let mut debouncer = new_debouncer(QUIET, sender)
        .context("cannot watch the folder: the system's file watcher is unavailable")?;
    debouncer
        .watcher()
        .watch(&root, RecursiveMode::Recursive)
        .with_context(|| format!("cannot watch {}", dir.display()))?;
    for batch in events {
        match batch {
            Ok(changes) => {
                if changes
                    .iter()
                    .any(|change| matters(&root, ignored, &change.path))
                {
                    round()?;
                }
            }
            Err(err) => warn(&format!("watching {}: {err}", dir.display())),
        }
    }
    Ok(())
}

/// Whether a change at `path` can change what the import reads.
fn matters(root: &Path, ignored: &[PathBuf], path: &Path) -> bool {
    if ignored.iter().any(|skip| skip == path) {
        return false;
    }
    let Ok(relative) = path.strip_prefix(root) else {
        // Outside the folder (through a symlink): take it seriously.
        return true;
    };
    let relative = relative.to_string_lossy().replace('\\', "/");
    relative.is_empty() || !library::is_skipped(&relative)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_files_and_the_database_do_not_matter() {
        let root = Path::new("/lib");
        let db = vec![PathBuf::from("/lib/library.db-wal")];
        assert!(matters(root, &db, Path::new("/lib/a.md")));
        assert!(matters(root, &db, Path::new("/lib/.claude/commands/a.md")));
        assert!(!matters(root, &db, Path::new("/lib/.git/index")));
        assert!(!matters(root, &db, Path::new("/lib/library.db-wal")));
    }
}
