//! Noticing what other processes (the CLI, an import, a second server) commit to the
//! database while we serve it: poll `PRAGMA data_version` (about 2 µs) on a connection of our
//! own, and when it moves, read the change-log rows after the last one seen. Each poll also
//! checks that the path still names the file served (one `stat`): a file deleted or renamed
//! over under the server is said once in the log, and a new database at the path is served.
//! A Litestream replica is looked at differently: Litestream may change its pages without
//! moving `data_version` (`store::replica`), so every poll reads the change log, from an
//! emptied page cache.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use crate::store::read::{Change, changes_since, collection_of};
use crate::store::{self, FileId};
use crate::visibility::Visibility;

/// What one batch of commits changed, as the notifications need it. A whole import is one
/// batch, so it becomes at most one list_changed per list.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Changes {
    pub prompts: bool,
    /// Resources or resource templates.
    pub resources: bool,
    /// Resources inserted, updated or deleted, by URI.
    pub uris: BTreeSet<String>,
    /// Every resource may have changed (the served file was replaced): every subscribed URI
    /// is told, whatever `uris` holds.
    pub every_uri: bool,
    /// Which collections the changes touched, for subscribers that see only some.
    pub places: Places,
    /// What the batch changed on each release channel whose labels moved: told to that
    /// channel's subscribers, and only to them (`seen_by`).
    pub channels: BTreeMap<String, Changes>,
}

/// Where a batch's changed items belong, as the library holds them after it.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Places {
    /// The collections of the prompts added or changed.
    pub prompts: BTreeSet<String>,
    /// The collections of the resources and templates added or changed.
    pub resources: BTreeSet<String>,
    /// The collection of each resource added or changed that belongs to one, by URI.
    pub uris: BTreeMap<String, String>,
    /// A prompt, or a resource or template, is gone (or could not be looked up): the change
    /// log does not say which collection it was of, so every subscriber's list may have
    /// changed.
    pub unplaced_prompts: bool,
    pub unplaced_resources: bool,
}

impl Changes {
    /// The batch `rows` make; `collection_of` says where each row's item is now (see
    /// `store::read::collection_of`).
    pub(super) fn from_rows(
        rows: &[Change],
        collection_of: &mut dyn FnMut(&Change) -> store::Result<Option<Option<String>>>,
    ) -> Changes {
        let mut on_channels: BTreeMap<&str, Vec<&Change>> = BTreeMap::new();
        let mut library = Vec::new();
        for row in rows {
            match &row.channel {
                Some(channel) => on_channels.entry(channel).or_default().push(row),
                None => library.push(row),
            }
        }
        let mut changes = Changes::of_rows(&library, collection_of);
        for (channel, rows) in on_channels {
            let moved = Changes::of_rows(&rows, collection_of);
            changes.channels.insert(channel.to_string(), moved);
        }
        changes
    }

    /// What `rows`, all of the library or all of one channel, changed.
    fn of_rows(
        rows: &[&Change],
        collection_of: &mut dyn FnMut(&Change) -> store::Result<Option<Option<String>>>,
    ) -> Changes {
        let mut changes = Changes::default();
        for row in rows {
            let prompt = match row.kind.as_str() {
                "prompt" => {
                    changes.prompts = true;
                    true
                }
                "resource" => {
                    changes.resources = true;
                    changes.uris.insert(row.key.clone());
                    false
                }
                "template" => {
                    changes.resources = true;
                    false
                }
                // Completion tables have no notification of their own.
                _ => continue,
            };
            let places = &mut changes.places;
            match collection_of(row) {
                Ok(Some(Some(collection))) => {
                    if row.kind == "resource" {
                        places.uris.insert(row.key.clone(), collection.clone());
                    }
                    if prompt {
                        places.prompts.insert(collection);
                    } else {
                        places.resources.insert(collection);
                    }
                }
                // Of no collection: no limited subscriber's concern.
                Ok(Some(None)) => {}
                Ok(None) | Err(_) => {
                    if prompt {
                        places.unplaced_prompts = true;
                    } else {
                        places.unplaced_resources = true;
                    }
                }
            }
        }
        changes
    }

    /// The part of the batch a subscriber `seen` shows what it shows is told of: every
    /// change to an item of its collections, none to an item outside them. A list changed
    /// by the removal of an item whose collection is no longer known is told to every
    /// subscriber (a list_changed names nothing; the subscriber lists again and sees its
    /// own); a removed resource's URI only to those that see everything, since telling
    /// another would say that a URI it named was in the library.
    ///
    /// A subscriber on a release channel is told only of what moved on it, and one on the
    /// library only of the library's changes; a file replaced is told to every one.
    pub(super) fn seen_by(&self, seen: &Visibility) -> Cow<'_, Changes> {
        static NOTHING: Changes = Changes {
            prompts: false,
            resources: false,
            uris: BTreeSet::new(),
            every_uri: false,
            places: Places {
                prompts: BTreeSet::new(),
                resources: BTreeSet::new(),
                uris: BTreeMap::new(),
                unplaced_prompts: false,
                unplaced_resources: false,
            },
            channels: BTreeMap::new(),
        };
        let base = match seen.channel() {
            Some(channel) if !self.every_uri => self.channels.get(channel).unwrap_or(&NOTHING),
            _ => self,
        };
        base.seen_by_collections(seen)
    }

    /// `seen_by`, for the collections `seen` shows.
    fn seen_by_collections(&self, seen: &Visibility) -> Cow<'_, Changes> {
        if !seen.is_limited() {
            return Cow::Borrowed(self);
        }
        let places = &self.places;
        let shown = |collections: &BTreeSet<String>| {
            collections
                .iter()
                .any(|collection| seen.shows(Some(collection)))
        };
        Cow::Owned(Changes {
            prompts: self.prompts && (places.unplaced_prompts || shown(&places.prompts)),
            resources: self.resources && (places.unplaced_resources || shown(&places.resources)),
            uris: places
                .uris
                .iter()
                .filter(|(_, collection)| seen.shows(Some(collection)))
                .map(|(uri, _)| uri.clone())
                .collect(),
            every_uri: self.every_uri,
            places: Places::default(),
            channels: BTreeMap::new(),
        })
    }

    /// Everything may have changed.
    pub(super) fn everything() -> Changes {
        Changes {
            prompts: true,
            resources: true,
            uris: BTreeSet::new(),
            every_uri: true,
            places: Places {
                unplaced_prompts: true,
                unplaced_resources: true,
                ..Places::default()
            },
            channels: BTreeMap::new(),
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        !self.prompts && !self.resources && self.channels.values().all(Changes::is_empty)
    }
}

/// What the server did with the file now at its path (`Watched::replaced`).
pub(super) struct Reopened {
    /// The new file's change-log position.
    pub position: i64,
    /// The new file.
    pub identity: FileId,
}

/// The server's side of watching: what the watcher reports to.
pub(super) trait Watched: Send + 'static {
    /// The change log reached `position` (a position of the watcher's own count, see
    /// `spawn`), with what the rows changed.
    fn moved(&self, position: i64, changes: &Changes);
    /// Another process committed (on a replica: the watcher looked again), and `conn` reads
    /// the database as it is now; called before `moved`. For what is kept beside the change
    /// log, which has no rows for it (the HTTP server's bearer tokens).
    fn committed(&self, _conn: &Connection) {}
    /// The path names another file, which `check_replacement` found fit to serve: close
    /// every connection to the old file, then open the new one. The watcher has closed its
    /// own connection already.
    fn replaced(&self) -> Result<Reopened, String>;
}

/// What watching needs to know of a served store, taken before the store goes into the
/// library: which file it reads and how.
pub(super) struct Target {
    path: PathBuf,
    /// Why the store is read `immutable`, when it is: then there is nothing to watch.
    immutable: Option<String>,
    identity: Option<FileId>,
    replica: bool,
}

impl Target {
    pub(super) fn of(store: &store::Store) -> Target {
        Target {
            path: store.path().to_path_buf(),
            immutable: store.immutable().map(str::to_string),
            identity: store.identity(),
            replica: store.replica(),
        }
    }

    /// Starts watching (`spawn`), or, for a file read `immutable` (SQLite reads it as if
    /// nothing could change it), says once that it is not watched.
    pub(super) fn watch(
        self,
        interval: Duration,
        after: i64,
        watched: impl Watched,
    ) -> anyhow::Result<()> {
        match (self.immutable, self.identity) {
            (Some(why), _) => {
                tracing::warn!(
                    "serving {} read-only and immutable because {why}: changes to it are not \
                     watched (restart the server to serve them)",
                    self.path.display()
                );
                Ok(())
            }
            (None, Some(identity)) => {
                spawn(&self.path, interval, after, identity, self.replica, watched)
            }
            (None, None) => anyhow::bail!("a served store knows which file it reads"),
        }
    }
}

/// Starts the watching thread, which reports every move of the change log after `after`
/// (the position when serving began) to `watched`, with the new last position and what
/// the rows changed, for as long as the process lives. Its connection is opened on the
/// thread after one interval, off the path to the first answer.
///
/// Every poll also compares the file the path names with `served` (what the server reads).
/// A path that names no file any more gets one warning, and the open file goes on being
/// served. A path renamed over with another database gets it served, when it can be
/// cleanly (`check_replacement`; `Watched::replaced`), announced to every subscriber as a
/// change of everything; otherwise one warning says the old file goes on being served.
/// Positions handed to `moved` go on growing across files, so nothing kept from the old
/// file is taken for the new one's (each file's change log counts from its own start).
///
/// `replica`: the file is a Litestream replica (`Store::replica`).
fn spawn(
    path: &Path,
    interval: Duration,
    after: i64,
    served: FileId,
    replica: bool,
    watched: impl Watched,
) -> anyhow::Result<()> {
    let path = path.to_path_buf();
    std::thread::Builder::new()
        .name("watch".into())
        .spawn(move || {
            // Nothing to look at before one interval has passed; opening later keeps the
            // connection off the start of serving too.
            std::thread::sleep(interval);
            Watcher {
                path,
                served,
                conn: None,
                last_seq: after,
                offset: 0,
                last_version: None,
                told: None,
                replica,
            }
            .run(interval, &watched);
        })?;
    Ok(())
}

/// What the watcher has said about the path, so it says it once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Told {
    Deleted,
    /// That this file at the path is not served.
    NotServed(FileId),
}

struct Watcher {
    path: PathBuf,
    /// The file being served.
    served: FileId,
    /// Opened at the first poll that finds the served file at the path.
    conn: Option<Connection>,
    /// The served file's change-log position last seen.
    last_seq: i64,
    /// What is added to `last_seq` to make the position reported: grows at each file.
    offset: i64,
    last_version: Option<i64>,
    told: Option<Told>,
    /// Whether the file is a Litestream replica: `data_version` then tells nothing.
    replica: bool,
}

impl Watcher {
    fn run(mut self, interval: Duration, watched: &impl Watched) {
        loop {
            match FileId::of(&self.path) {
                Ok(now) if now == self.served => {
                    self.told = None;
                    self.poll(watched);
                }
                Ok(now) => self.replaced(now, watched),
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                    if self.told != Some(Told::Deleted) {
                        self.told = Some(Told::Deleted);
                        tracing::warn!(
                            "{} was deleted; the server keeps serving the file it has open,                              as it was, until a database is put at that path again",
                            self.path.display()
                        );
                    }
                    // A deleted file may still be written by a process that has it open.
                    self.poll(watched);
                }
                // Not knowing which file the path names (a permission changed, say) is not a
                // reason to stop serving the one open.
                Err(_) => self.poll(watched),
            }
            // After everything this look found was told: a sign, for whoever reads the
            // log at trace level, that the change log up to here has been seen.
            tracing::trace!(
                position = self.last_seq + self.offset,
                "looked at the library"
            );
            std::thread::sleep(interval);
        }
    }

    /// One look at `data_version`, and at the change log when it moved.
    fn poll(&mut self, watched: &impl Watched) {
        if self.conn.is_none() {
            match open(&self.path) {
                // Opened by path: only while the path names the served file, checked again
                // after the open so the connection is to that file.
                Ok(conn) if FileId::of(&self.path).ok() == Some(self.served) => {
                    self.conn = Some(conn)
                }
                Ok(_) => return,
                Err(err) => {
                    tracing::debug!("cannot watch {} yet: {err}", self.path.display());
                    return;
                }
            }
        }
        let Some(conn) = &self.conn else { return };
        if self.replica {
            // Pages kept from the last poll may be stale without SQLite knowing.
            if let Err(err) = conn.release_memory() {
                tracing::warn!("watching the database: {err}");
                return;
            }
        } else {
            let version = match data_version(conn) {
                Ok(version) => version,
                Err(err) => {
                    tracing::warn!("watching the database: {err}");
                    return;
                }
            };
            if self.last_version == Some(version) {
                return;
            }
            self.last_version = Some(version);
        }
        watched.committed(conn);
        match changes_since(conn, self.last_seq) {
            Ok(rows) => {
                if let Some(last) = rows.last() {
                    self.last_seq = last.seq;
                    let changes = Changes::from_rows(&rows, &mut |row| collection_of(conn, row));
                    tracing::debug!(rows = rows.len(), ?changes, "library changed");
                    watched.moved(self.last_seq + self.offset, &changes);
                }
            }
            Err(err) => tracing::warn!("reading the change log: {err}"),
        }
    }

    /// The path names `now`, another file than the one served.
    fn replaced(&mut self, now: FileId, watched: &impl Watched) {
        if self.told == Some(Told::NotServed(now)) {
            self.poll(watched);
            return;
        }
        let shown = self.path.display();
        if let Err(reason) = store::check_replacement(&self.path) {
            tracing::warn!(
                "{shown} was replaced by another file, which is not served ({reason}); the                  server keeps serving the file it has open, as it was"
            );
            self.told = Some(Told::NotServed(now));
            self.poll(watched);
            return;
        }
        // Closed before the new file is opened: see `Watched::replaced`.
        self.conn = None;
        match watched.replaced() {
            Ok(reopened) => {
                let reported = self.last_seq + self.offset + 1;
                self.offset = reported - reopened.position;
                self.last_seq = reopened.position;
                self.last_version = None;
                self.served = reopened.identity;
                self.told = None;
                tracing::warn!(
                    "{shown} was replaced by another file; serving the new file from now on                      (clients are told that every list changed)"
                );
                watched.moved(reported, &Changes::everything());
            }
            Err(reason) => {
                tracing::error!(
                    "{shown} was replaced by another file, which could not be opened                      ({reason}); requests fail until the server is restarted"
                );
                self.told = Some(Told::NotServed(now));
            }
        }
    }
}
fn open(path: &Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(store::busy_timeout())?;
    Ok(conn)
}

fn data_version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row("PRAGMA data_version", [], |row| row.get(0))
}
