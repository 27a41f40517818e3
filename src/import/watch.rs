//! `import --watch`: waits for files of the folder to change and runs another import round,
//! debounced (notify-debouncer-full), so that an editor's burst of writes is one round.
//! Changes to files the import skips (hidden ones, `.git`, the database itself) start none,
//! and neither does a file being opened or read (the import reads every file: were reads
//! changes, each round would start the next).

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use anyhow::{Context, Result};
use notify_debouncer_full::notify::{EventKind, RecommendedWatcher, RecursiveMode};
use notify_debouncer_full::{DebounceEventResult, Debouncer, RecommendedCache, new_debouncer};

use crate::library;

/// How long the folder must be quiet before a round starts.
const QUIET: Duration = Duration::from_millis(300);

/// A folder being watched. Started before the first import, so that a change made while it
/// runs still starts a round afterwards.
pub(crate) struct Watcher {
    root: PathBuf,
    ignored: Vec<PathBuf>,
    events: mpsc::Receiver<DebounceEventResult>,
    // Watching stops when this is dropped.
    _debouncer: Debouncer<RecommendedWatcher, RecommendedCache>,
}

impl Watcher {
    /// Starts watching `dir`. `ignored` lists files (canonical paths) whose changes start no
    /// round.
    pub(crate) fn start(dir: &Path, ignored: &[PathBuf]) -> Result<Watcher> {
        let root = dir
            .canonicalize()
            .with_context(|| format!("cannot watch {}", dir.display()))?;
        let (sender, events) = mpsc::channel::<DebounceEventResult>();
        let mut debouncer = new_debouncer(QUIET, None, sender)
            .context("cannot watch the folder: the system's file watcher is unavailable")?;
        debouncer
            .watch(&root, RecursiveMode::Recursive)
            .with_context(|| format!("cannot watch {}", dir.display()))?;
        Ok(Watcher {
            root,
            ignored: ignored.to_vec(),
            events,
            _debouncer: debouncer,
        })
    }

    /// Calls `round` after every debounced change until the watcher stops (in practice, until
    /// the process is interrupted). An error of the watcher itself (e.g. too many folders to
    /// watch) goes to `warn` and watching goes on.
    pub(crate) fn run(
        self,
        mut round: impl FnMut() -> Result<()>,
        mut warn: impl FnMut(&str),
    ) -> Result<()> {
        for batch in &self.events {
            match batch {
                Ok(events) => {
                    let changed = events.iter().any(|event| {
                        !matches!(event.kind, EventKind::Access(_))
                            && event
                                .paths
                                .iter()
                                .any(|path| matters(&self.root, &self.ignored, path))
                    });
                    if changed {
                        round()?;
                    } else {
                        tracing::debug!(
                            events = events.len(),
                            "files were only read, or are skipped: no round"
                        );
                    }
                }
                Err(errors) => {
                    for err in errors {
                        warn(&format!("watching {}: {err}", self.root.display()));
                    }
                }
            }
        }
        Ok(())
    }
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
