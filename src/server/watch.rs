//! Noticing what other processes (the CLI, an import, a second server) commit to the
//! database while we serve it: poll `PRAGMA data_version` (about 2 µs) on a connection of our
//! own, and when it moves, read the change-log rows after the last one seen.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use crate::store::read::{Change, changes_since};

/// What one batch of commits changed, as the notifications need it. A whole import is one
/// batch, so it becomes at most one list_changed per list.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Changes {
    pub prompts: bool,
    /// Resources or resource templates.
    pub resources: bool,
    /// Resources inserted, updated or deleted, by URI.
    pub uris: BTreeSet<String>,
}

impl Changes {
    fn from_rows(rows: &[Change]) -> Changes {
        let mut changes = Changes::default();
        for row in rows {
            match row.kind.as_str() {
                "prompt" => changes.prompts = true,
                "resource" => {
                    changes.resources = true;
                    changes.uris.insert(row.key.clone());
                }
                "template" => changes.resources = true,
                // Completion tables have no notification of their own.
                _ => {}
            }
        }
        changes
    }

    pub fn is_empty(&self) -> bool {
        !self.prompts && !self.resources
    }
}

/// Starts the watching thread, which reports every move of the change log after `after`
/// (the position when serving began) to `on_moved`, with the new last position and what
/// the rows changed, for as long as the process lives. Its connection is opened on the
/// thread after one interval, off the path to the first answer.
pub fn spawn(
    path: &Path,
    interval: Duration,
    after: i64,
    on_moved: impl Fn(i64, &Changes) + Send + 'static,
) -> anyhow::Result<()> {
    let path = path.to_path_buf();
    std::thread::Builder::new()
        .name("watch".into())
        .spawn(move || {
            // Nothing to look at before one interval has passed; opening later keeps the
            // connection off the start of serving too.
            std::thread::sleep(interval);
            let conn = match open(&path) {
                Ok(conn) => conn,
                Err(err) => {
                    tracing::error!("cannot watch {} for changes: {err}", path.display());
                    return;
                }
            };
            let mut last_seq = after;
            // Changes committed before this first look are caught by the change log below.
            let mut last_version = None;
            loop {
                let version = match data_version(&conn) {
                    Ok(version) => version,
                    Err(err) => {
                        tracing::warn!("watching the database: {err}");
                        std::thread::sleep(interval);
                        continue;
                    }
                };
                if last_version != Some(version) {
                    last_version = Some(version);
                    match changes_since(&conn, last_seq) {
                        Ok(rows) => {
                            if let Some(last) = rows.last() {
                                last_seq = last.seq;
                                let changes = Changes::from_rows(&rows);
                                tracing::debug!(rows = rows.len(), ?changes, "library changed");
                                on_moved(last_seq, &changes);
                            }
                        }
                        Err(err) => tracing::warn!("reading the change log: {err}"),
                    }
                }
                std::thread::sleep(interval);
            }
        })?;
    Ok(())
}

fn open(path: &Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(Duration::from_secs(10))?;
    Ok(conn)
}

fn data_version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row("PRAGMA data_version", [], |row| row.get(0))
}
