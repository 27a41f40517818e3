//! What every request shares, whatever the transport: the library read from the served
//! file (replaced as a whole when the path is renamed over), the settings, the watcher's
//! last position, and what is kept of the library between requests.

use std::path::Path;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{PoisonError, RwLock, RwLockReadGuard};

use super::cache::Cache;
use super::watch::Reopened;
use crate::config::{CacheScope, ServeConfig};
use crate::handlers::completion::CompletionIndexes;
use crate::handlers::prompts::{Retained, USED_STATES_LIMIT};
use crate::protocol::{Revision, Shaper};
use crate::store::{self, Store};
use crate::visibility::Visibility;

/// What is read from the served file: a new one when the path is renamed over.
pub(super) struct Library {
    pub(super) store: Store,
    /// The database's secret, for signing `requestState`.
    pub(super) secret: Vec<u8>,
    /// Completion tables' indexes, built on first use (a cache of the store, by version).
    pub(super) indexes: CompletionIndexes,
}

impl Library {
    /// The library `store` holds, and its change-log position now; its completion indexes
    /// take at most `max_index_bytes`.
    pub(super) fn of(store: Store, max_index_bytes: usize) -> store::Result<(Library, i64)> {
        let (secret, position) = store.first_read(|conn| {
            Ok((
                store::read::secret(conn)?,
                store::read::change_position(conn)?,
            ))
        })?;
        let library = Library {
            store,
            secret,
            indexes: CompletionIndexes::new(max_index_bytes),
        };
        Ok((library, position))
    }
}

pub(super) struct Shared {
    /// Each request holds it for reading while it answers: replacing the library waits for
    /// every request to let go, so no connection to the old file is in use when they all
    /// close (see `replace`). `None` only when a replacement could not be opened.
    library: RwLock<Option<Library>>,
    pub(super) config: ServeConfig,
    /// `config` with `cacheScope` private: what the answers to a caller limited to some
    /// collections are shaped with, whatever `--cache-scope` says, since they are its own.
    limited_config: ServeConfig,
    /// What `prompts/get` keeps between requests: the `requestState`s accepted so far, each
    /// until it expires (a state answers once), and the templates and patterns compiled.
    pub(super) retained: Retained,
    /// The change log's last position as the watcher last saw it. Kept answers and indexes
    /// are checked against it rather than against the database: an atomic load instead of
    /// a query per request, at the price of serving what was kept for up to one poll
    /// interval after another process commits (the moment the host is told, too).
    position: AtomicI64,
    /// Pages, prompts, templates and small resources kept until the library changes.
    pub(super) cache: Cache,
}

impl Shared {
    pub(super) fn new(library: Library, config: ServeConfig, position: i64) -> Shared {
        let limited_config = ServeConfig {
            cache_scope: CacheScope::Private,
            ..config.clone()
        };
        Shared {
            library: RwLock::new(Some(library)),
            config,
            limited_config,
            retained: Retained::new(USED_STATES_LIMIT),
            position: AtomicI64::new(position),
            cache: Cache::default(),
        }
    }

    /// The library, held for reading: take it once per answer (a second take on the same
    /// thread could wait on a replacement waiting for the first).
    pub(super) fn library(&self) -> RwLockReadGuard<'_, Option<Library>> {
        self.library.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// Serves the file now at `path` instead: waits for every request to let go of the
    /// library, closes every connection to the old file, then opens the new one. Closing
    /// first matters: a connection to the new file maps the same `-shm` as the old file's,
    /// and SQLite, seeing no other process on the new file, would truncate it under them.
    pub(super) fn replace(&self, path: &Path) -> Result<Reopened, String> {
        let mut library = self.library.write().unwrap_or_else(PoisonError::into_inner);
        let replica = library.as_ref().is_some_and(|old| old.store.replica());
        *library = None;
        let store = if replica {
            Store::open_replica(path)
        } else {
            Store::open_served(path)
        }
        .map_err(|err| err.to_string())?;
        let identity = store
            .identity()
            .ok_or_else(|| "a served store knows its file".to_string())?;
        let (new, position) =
            Library::of(store, self.config.max_index_bytes).map_err(|err| err.to_string())?;
        *library = Some(new);
        Ok(Reopened { position, identity })
    }

    /// What the bearer token `text` is, looked up now (`store::tokens::find`): a token made
    /// or removed by `promptshelf token` counts from the next request on.
    pub(super) fn token(&self, text: &str) -> store::Result<store::tokens::Presented> {
        let library = self.library();
        let library = library.as_ref().ok_or_else(|| {
            store::StoreError::Open("the served database file could not be opened again".into())
        })?;
        let conn = library.store.conn()?;
        store::tokens::find(&conn, text, store::now_ms())
    }

    pub(super) fn position(&self) -> i64 {
        self.position.load(Ordering::Acquire)
    }

    /// The watcher has seen the change log reach `position`. Stored before anyone is told,
    /// so a host re-listing on a notification is never answered from what was kept.
    pub(super) fn moved_to(&self, position: i64) {
        self.position.store(position, Ordering::Release);
    }

    /// Shapes results for `revision` as of now.
    pub(super) fn shaper(&self, revision: Revision) -> Shaper<'_> {
        Shaper {
            revision,
            config: &self.config,
            now: store::now_ms(),
        }
    }

    /// Shapes results for `revision` as of now, for a caller `seen` shows what it shows:
    /// privately cacheable when that is not the whole library.
    pub(super) fn shaper_for(&self, revision: Revision, seen: &Visibility) -> Shaper<'_> {
        Shaper {
            config: if seen.is_limited() {
                &self.limited_config
            } else {
                &self.config
            },
            ..self.shaper(revision)
        }
    }
}
