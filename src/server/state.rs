//! What every request shares, whatever the transport: the library read from the served
//! file (replaced as a whole when the path is renamed over) and the release channels
//! served from it, the settings, the watcher's last position, and what is kept of the
//! library between requests.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock, RwLockReadGuard};

use super::cache::Cache;
use super::watch::{Changes, Reopened};
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
    /// The release channels served from the file so far.
    channels: Channels,
}

/// The most release channels served at once: each is a pool of connections with its own
/// search index and what is kept of it, and callers name channels (tokens, scopes).
const MAX_CHANNELS: usize = 32;

/// What one release channel is served from: a store of its own on the served file
/// (`Store::on_channel`), and what is kept of it, apart from the library's, so that an
/// answer for one is never taken for the other.
pub(super) struct Channel {
    store: Store,
    indexes: CompletionIndexes,
    cache: Cache,
}

/// The channels callers have asked for, each opened at its first request.
struct Channels {
    open: Mutex<HashMap<String, Arc<Channel>>>,
    max_index_bytes: usize,
}

/// Where one answer is read from and what it keeps: the library's store, indexes and
/// cache, or a channel's.
#[derive(Clone, Copy)]
pub(super) struct Served<'a> {
    pub(super) store: &'a Store,
    pub(super) indexes: &'a CompletionIndexes,
    pub(super) cache: &'a Cache,
}

impl Channel {
    pub(super) fn served(&self) -> Served<'_> {
        Served {
            store: &self.store,
            indexes: &self.indexes,
            cache: &self.cache,
        }
    }
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
            channels: Channels {
                open: Mutex::new(HashMap::new()),
                max_index_bytes,
            },
        };
        Ok((library, position))
    }

    /// The release channel `name`, opened if no caller asked for it before.
    pub(super) fn channel(&self, name: &str) -> store::Result<Arc<Channel>> {
        let mut open = self
            .channels
            .open
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(channel) = open.get(name) {
            return Ok(Arc::clone(channel));
        }
        if open.len() >= MAX_CHANNELS {
            return Err(store::StoreError::Invalid(format!(
                "this server already serves {MAX_CHANNELS} release channels, the most it serves \
                 at once; restart it to serve others"
            )));
        }
        let channel = Arc::new(Channel {
            store: self.store.on_channel(name)?,
            indexes: CompletionIndexes::new(self.channels.max_index_bytes),
            cache: Cache::default(),
        });
        open.insert(name.to_string(), Arc::clone(&channel));
        Ok(channel)
    }

    /// Forgets the channels whose labels moved: each connection's search index is a copy
    /// made at its first search (`store::channel`), so the next request opens the channel
    /// again. Requests under way finish on what they hold.
    fn forget_channels<'a>(&self, moved: impl Iterator<Item = &'a String>) {
        let mut open = self
            .channels
            .open
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        for name in moved {
            open.remove(name);
        }
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
    /// What a caller that names no collections nor channel sees: stdio's client, and over
    /// HTTP one let in without a token (`--auth none`). The whole library, on the server's
    /// channel (`--channel`).
    whole: Visibility,
}

impl Shared {
    pub(super) fn new(library: Library, config: ServeConfig, position: i64) -> Shared {
        let limited_config = ServeConfig {
            cache_scope: CacheScope::Private,
            ..config.clone()
        };
        let whole = Visibility::EVERYTHING.on_channel(config.channel.clone());
        Shared {
            library: RwLock::new(Some(library)),
            whole,
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

    /// What a caller that names no collections nor channel of its own sees.
    pub(super) fn whole(&self) -> &Visibility {
        &self.whole
    }

    /// The watcher has seen the change log reach `position`, with `changes`. The channels
    /// whose labels moved are forgotten and the position stored before anyone is told, so a
    /// host re-listing on a notification is never answered from what was kept.
    pub(super) fn moved(&self, position: i64, changes: &Changes) {
        if let Some(library) = self.library().as_ref() {
            library.forget_channels(changes.channels.keys());
        }
        self.position.store(position, Ordering::Release);
    }

    /// Where an answer for a caller `seen` shows what it shows is read from: the library,
    /// or the channel it is on (held by the caller for as long as it reads it).
    pub(super) fn served<'a>(
        &'a self,
        library: &'a Library,
        channel: Option<&'a Channel>,
    ) -> Served<'a> {
        match channel {
            Some(channel) => channel.served(),
            None => Served {
                store: &library.store,
                indexes: &library.indexes,
                cache: &self.cache,
            },
        }
    }

    /// Shapes results for `revision` as of now.
    pub(super) fn shaper(&self, revision: Revision) -> Shaper<'_> {
        Shaper {
            revision,
            config: &self.config,
            now: store::now_ms(),
            label: None,
        }
    }

    /// Shapes results for `revision` as of now, for a caller `seen` shows what it shows:
    /// privately cacheable when that is not the whole library.
    pub(super) fn shaper_for<'a>(&'a self, revision: Revision, seen: &'a Visibility) -> Shaper<'a> {
        Shaper {
            label: seen.channel(),
            config: if seen.is_limited() {
                &self.limited_config
            } else {
                &self.config
            },
            ..self.shaper(revision)
        }
    }
}
