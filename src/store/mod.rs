//! The SQLite store: one database file holds the whole library.
//!
//! `Store` is a pool of connections (r2d2) with WAL, `busy_timeout` and foreign keys on every
//! connection. Reads live in `read`, writes in `write`; every write runs in one transaction.
//! A serving store opens its connections read-only, so the server cannot write (the one
//! exception, creating a missing database from the seed, happens before the pool exists):
//! an existing file is never written by it, not even to create or migrate the schema.
//! A library whose file or folder cannot be written (a read-only mount or file) is read the
//! same way by commands that only read (`Access::Read`), `immutable` when SQLite could not
//! keep its WAL index beside it (`place`); writing there is refused at open, naming which.
//! A Litestream replica (`serve --replica`) is read one snapshot per request (`replica`).

mod blobs;
mod channel;
mod create;
pub(crate) mod detached;
mod hash;
pub(crate) mod history;
pub(crate) mod labels;
mod place;
pub(crate) mod prefix;
pub mod read;
mod replica;
pub(crate) mod revert;
mod schema;
pub mod search;
pub(crate) mod tokens;
mod words;
pub mod write;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use r2d2_sqlite::SqliteConnectionManager;
use rusqlite::{Connection, OpenFlags, Transaction};

pub use hash::hash_prompt;
pub(crate) use hash::{hash_resource, hash_template, hex};
use place::Place;
pub(crate) use place::{FileId, Reading};
pub(crate) use read::ItemState;
pub(crate) use schema::SCHEMA_VERSION;
pub(crate) use write::{Outcome, ValuesMode};

/// How long a connection waits for another process's write lock before giving up; long
/// enough that a client never sees `SQLITE_BUSY` while an import commits.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// The environment variable that shortens the busy timeout (milliseconds), so a test of a
/// locked database need not wait ten seconds. As `CLOCK_ENV`, only a build with debug
/// assertions (the one the tests run) reads it.
pub(crate) const BUSY_ENV: &str = "PROMPTSHELF_BUSY_MS";

/// How long a connection waits for another process's write lock: `BUSY_TIMEOUT`, or in a
/// build with debug assertions what `PROMPTSHELF_BUSY_MS` says.
pub(crate) fn busy_timeout() -> Duration {
    let set = || std::env::var(BUSY_ENV).ok()?.parse().ok();
    cfg!(debug_assertions)
        .then(set)
        .flatten()
        .map_or(BUSY_TIMEOUT, Duration::from_millis)
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{0}")]
    Open(String),
    #[error("{path} is not a promptshelf database ({reason}); point --db at another file")]
    NotADatabase { path: String, reason: String },
    #[error(
        "{path} has schema version {found}, newer than this promptshelf supports ({supported}); upgrade promptshelf"
    )]
    TooNew {
        path: String,
        found: i64,
        supported: i64,
    },
    #[error(
        "{path} is empty, not a promptshelf database, and serve does not write to an existing file; remove it (serve then creates it from the seed library) or create the library in it with any other command, e.g. `promptshelf --db {path} stats`"
    )]
    NotCreated { path: String },
    #[error(
        "{path} has schema version {found}, older than this promptshelf's ({supported}), and serve does not write to an existing file; migrate it with any other command, e.g. `promptshelf --db {path} stats`"
    )]
    TooOld {
        path: String,
        found: i64,
        supported: i64,
    },
    /// The file or its folder cannot be written, for what needs to write: one sentence
    /// naming which and the way out.
    #[error("{0}")]
    ReadOnly(String),
    /// What SQLite refused, said once (see `sqlite_sentence`); the command adds the path.
    #[error("{}", sqlite_sentence(.0))]
    Sqlite(rusqlite::Error),
    #[error("database pool error: {0}")]
    Pool(#[from] r2d2::Error),
    #[error("{0}")]
    Invalid(String),
}

pub(crate) type Result<T, E = StoreError> = std::result::Result<T, E>;

impl From<rusqlite::Error> for StoreError {
    /// Not a `source`: rusqlite's text of an SQLite failure already holds SQLite's message
    /// and code, and a chain would print them again after the sentence.
    fn from(err: rusqlite::Error) -> StoreError {
        StoreError::Sqlite(err)
    }
}

/// What a failed SQLite call means to the person who ran the command, and what to do about
/// it, in one sentence. rusqlite's own text says SQLite's message, then its code, then the
/// message again ("database is locked: Error code 5: database is locked").
fn sqlite_sentence(err: &rusqlite::Error) -> String {
    use rusqlite::ErrorCode as Code;
    let rusqlite::Error::SqliteFailure(failure, message) = err else {
        return format!("database error: {err}");
    };
    let said = message.as_deref().unwrap_or("no message");
    match failure.code {
        Code::DatabaseBusy | Code::DatabaseLocked => format!(
            "the database is locked by another program writing to it (waited {} s); try \
             again when it is done, or close it",
            busy_timeout().as_secs_f64()
        ),
        Code::DiskFull => "the disk holding the database is full, so nothing was written; free \
                           some space and try again"
            .to_string(),
        Code::ReadOnly => "the database cannot be written: the file, its folder or the disk is \
                           read-only; make them writable, or use a read-only command"
            .to_string(),
        Code::NotADatabase => {
            "the file is not a promptshelf database; point --db at another file".to_string()
        }
        Code::DatabaseCorrupt => format!(
            "the database file is damaged ({said}); restore it from a backup, or `export` what \
             still reads into a folder and import that into a new database"
        ),
        Code::CannotOpen | Code::PermissionDenied => format!(
            "the database cannot be opened ({said}); check that the file and its folder exist \
             and that this user may read and write them"
        ),
        Code::SystemIoFailure => format!(
            "reading or writing the database failed with an I/O error ({said}); check the disk"
        ),
        Code::OutOfMemory => "SQLite ran out of memory; free some and try again".to_string(),
        _ => format!("database error: {said}"),
    }
}

/// An error opening or preparing the file at `path`: a sentence naming it.
fn opening(path: &Path, err: rusqlite::Error) -> StoreError {
    match &err {
        rusqlite::Error::SqliteFailure(failure, _)
            if failure.code == rusqlite::ErrorCode::NotADatabase =>
        {
            StoreError::NotADatabase {
                path: path.display().to_string(),
                reason: "it is not an SQLite file".into(),
            }
        }
        _ => StoreError::Open(format!("{}: {}", path.display(), sqlite_sentence(&err))),
    }
}

/// Where the library lives when no path is given: `library.db` in the user's data
/// directory; None without a home directory.
pub(crate) fn default_database() -> Option<PathBuf> {
    let dirs = directories::ProjectDirs::from("", "", "promptshelf")?;
    Some(dirs.data_dir().join("library.db"))
}

/// Whether this process may write through the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    ReadWrite,
    /// A command that only reads: where the file can be written, as `ReadWrite` (a missing
    /// file is created, an older schema migrated); where it cannot (a read-only mount or
    /// file), read-only as the server reads.
    Read,
    /// Connections are opened read-only: the server's mode.
    ReadOnly,
}

#[derive(Clone)]
pub struct Store {
    pool: r2d2::Pool<Manager>,
    /// The one thread the pool opens connections on (see `close`).
    opener: Opener,
    /// The connection that checked the schema until the pool hands it out (`first_read`).
    first: FirstConnection,
    path: PathBuf,
    /// The name and flags its connections are opened with, for `on_channel`.
    opened: (std::ffi::OsString, OpenFlags),
    reading: Reading,
    /// The file the store reads, for a read-only store: what the path named when it opened.
    identity: Option<FileId>,
    /// Why the store is read `immutable`, when it is.
    immutable_because: Option<String>,
    /// Whether the file is a Litestream replica, written in place by Litestream in ways
    /// SQLite's cache cannot see (`replica`): then each request reads its own snapshot.
    replica: bool,
    /// What `write` records its writes as.
    history: history::Settings,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("path", &self.path).finish()
    }
}

impl Store {
    /// Opens the database at `path`, creating it from schema.sql and `fill` when it does not
    /// exist yet. The folder must exist. A new file is built beside the path and moved
    /// there whole (`create`), so a half-created database is never left at the path.
    ///
    /// `ReadWrite` also fills an existing empty file and migrates an older schema; where the
    /// file or its folder cannot be written it fails at once, naming which.
    /// `ReadOnly` (the server) creates only a missing file, or replaces an empty one that a
    /// creation which did not finish left (with a warning): any other existing one is opened
    /// read-only and must already hold this version's schema, or the open fails with an
    /// error naming the file and the command that prepares it. In a folder that cannot be
    /// written it is opened `immutable` unless its `-wal` and `-shm` are there
    /// (`place::Place::reading`).
    pub fn open(
        path: &Path,
        access: Access,
        fill: impl FnOnce(&Transaction) -> Result<()>,
    ) -> Result<Store> {
        Store::open_with(path, access, true, fill)
    }

    /// Opens the file that now lies at `path` to serve it, as `open(path, ReadOnly, ..)`
    /// would, but never creates one: for a server whose file was replaced.
    pub(crate) fn open_served(path: &Path) -> Result<Store> {
        Store::open_with(path, Access::ReadOnly, false, |_| Ok(()))
    }

    /// Opens the Litestream replica at `path` to serve it (`serve --replica`): as
    /// `open_served`, once its header is set so that Litestream can go on applying changes
    /// while it is read (`replica::prepare`). The file must exist: Litestream makes it.
    pub(crate) fn open_replica(path: &Path) -> Result<Store> {
        check_folder(path)?;
        if !path.exists() {
            return Err(StoreError::Open(format!(
                "the replica {} does not exist yet; start `litestream restore -f -o {} \
                 REPLICA_URL` first (docs/deploy.md), then serve it",
                path.display(),
                path.display()
            )));
        }
        if replica::prepare(path)? {
            tracing::info!(
                "set {} to rollback-journal mode, so that Litestream can apply changes while it \
                 is served",
                path.display()
            );
        }
        let mut store = Store::open_with(path, Access::ReadOnly, false, |_| Ok(()))?;
        store.replica = true;
        Ok(store)
    }

    fn open_with(
        path: &Path,
        access: Access,
        create: bool,
        fill: impl FnOnce(&Transaction) -> Result<()>,
    ) -> Result<Store> {
        settle_sqlite();
        let folder = check_folder(path)?;
        let place = Place::of(path, folder);
        let serving = access == Access::ReadOnly;
        let access = match access {
            Access::Read if place.writable() => Access::ReadWrite,
            Access::Read => Access::ReadOnly,
            other => other,
        };
        let doing = if place.exists {
            "change"
        } else {
            "create the library in"
        };
        if access == Access::ReadWrite
            && let Some(refused) = place.refusal(doing)
        {
            return Err(refused);
        }
        if access == Access::ReadOnly && !place.exists {
            if !create {
                return Err(StoreError::Open(format!(
                    "{} is gone; nothing to serve there",
                    path.display()
                )));
            }
            if let Some(refused) = place.refusal("create the library in") {
                return Err(refused);
            }
        }
        if !place.exists {
            create::whole(path, folder, create::Found::Nothing, fill)?;
            return Store::open_with(path, access, false, created);
        }
        let reading = match access {
            Access::ReadOnly if place.exists => place.reading()?,
            _ => Reading::Shared,
        };
        let read_only_flags = match reading {
            Reading::Shared => OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            Reading::Immutable => {
                OpenFlags::SQLITE_OPEN_READ_ONLY
                    | OpenFlags::SQLITE_OPEN_NO_MUTEX
                    | OpenFlags::SQLITE_OPEN_URI
            }
        };
        let name = match reading {
            Reading::Shared => path.as_os_str().to_os_string(),
            Reading::Immutable => place::immutable_uri(path).into(),
        };
        // A server opening an existing database checks its version without ever holding a
        // writable connection (closing one may checkpoint the WAL into the file), and keeps
        // the connection that checked as the pool's first.
        let mut checked = None;
        if access == Access::ReadOnly && place.exists {
            let conn = Connection::open_with_flags(&name, read_only_flags)
                .map_err(|err| opening(path, err))?;
            configure(&conn).map_err(|err| opening(path, err))?;
            let shown = || path.display().to_string();
            match schema::inspect(&conn, path)? {
                schema::Found::Current => checked = Some(conn),
                // Left by a creation that did not finish (an older build made the file
                // first and filled it after): replaced, as a missing file is created.
                schema::Found::Empty if serving && place.writable() => {
                    drop(conn);
                    tracing::warn!(
                        "{} is an empty file, left by a creation that did not finish; \
                         creating the library there again",
                        path.display()
                    );
                    create::whole(path, folder, create::Found::EmptyFile, fill)?;
                    return Store::open_with(path, access, false, created);
                }
                schema::Found::Empty if serving => {
                    return Err(StoreError::NotCreated { path: shown() });
                }
                schema::Found::Older(found) if serving => {
                    return Err(StoreError::TooOld {
                        path: shown(),
                        found,
                        supported: SCHEMA_VERSION,
                    });
                }
                schema::Found::Empty => {
                    return Err(place
                        .refusal("create the library in")
                        .unwrap_or(StoreError::NotCreated { path: shown() }));
                }
                schema::Found::Older(found) => {
                    let doing = format!("migrate (schema version {found} to {SCHEMA_VERSION})");
                    return Err(place.refusal(&doing).unwrap_or(StoreError::TooOld {
                        path: shown(),
                        found,
                        supported: SCHEMA_VERSION,
                    }));
                }
            }
        }
        let current = checked.is_some();
        if !current {
            let mut conn = Connection::open_with_flags(
                path,
                OpenFlags::SQLITE_OPEN_READ_WRITE
                    | OpenFlags::SQLITE_OPEN_CREATE
                    | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            )
            .map_err(|err| opening(path, err))?;
            configure(&conn).map_err(|err| opening(path, err))?;
            schema::prepare(&mut conn, path, fill)?;
        }
        let flags = match access {
            Access::ReadWrite | Access::Read => {
                OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX
            }
            Access::ReadOnly => read_only_flags,
        };
        // A read-only store reads one file: the one the path names now. The pool opens its
        // connections by path when first needed, so once the path names another file (or
        // none) it opens no more (`Manager::connect`): a connection to a new file would map
        // the same `-shm` as the old file's connections, and SQLite, finding no other
        // process on the new file, would truncate it under them (SIGBUS).
        let identity = match access {
            Access::ReadOnly => Some(FileId::of(path).map_err(|err| {
                StoreError::Open(format!("cannot open {}: {err}", path.display()))
            })?),
            _ => None,
        };
        let manager = Manager {
            files: SqliteConnectionManager::file(&name)
                .with_flags(flags)
                .with_init(|conn| configure(conn)),
            first: Arc::new(Mutex::new(checked)),
            path: path.to_path_buf(),
            identity,
        };
        let (pool, opener, first) = pooled(manager)?;
        Ok(Store {
            pool,
            opener,
            first,
            path: path.to_path_buf(),
            opened: (name, flags),
            reading,
            identity,
            immutable_because: (reading == Reading::Immutable).then(|| place.folder_reason()),
            replica: false,
            history: history::Settings::default(),
        })
    }

    /// The same file shown as the release channel `channel` (`channel::show`): a store of
    /// its own, whose connections read only the items the channel's label is on, each at
    /// the version it names. For serving: opened as this store was (read-only for a server).
    pub(crate) fn on_channel(&self, channel: &str) -> Result<Store> {
        let (name, flags) = &self.opened;
        let shown = channel.to_string();
        let manager = Manager {
            files: SqliteConnectionManager::file(name)
                .with_flags(*flags)
                .with_init(move |conn| {
                    configure(conn)?;
                    channel::show(conn, &shown)
                }),
            first: Arc::new(Mutex::new(None)),
            path: self.path.clone(),
            identity: self.identity,
        };
        let (pool, opener, first) = pooled(manager)?;
        Ok(Store {
            pool,
            opener,
            first,
            path: self.path.clone(),
            opened: self.opened.clone(),
            reading: self.reading,
            identity: self.identity,
            immutable_because: self.immutable_because.clone(),
            replica: self.replica,
            history: self.history.clone(),
        })
    }

    /// Closes every connection before returning, so that SQLite, closing the last one,
    /// checkpoints the WAL and removes the `-wal` and `-shm` files: a command leaves the
    /// folder as it found it. Dropping the store alone may leave the pool's last reference
    /// with the thread that opened a connection, and a command's process can end before
    /// that thread gets to close it (seen as `-wal` files left by one run in three).
    pub(crate) fn close(self) {
        let Store { pool, opener, .. } = self;
        drop(pool);
        // The opener runs one job at a time: when this one runs, the job before it (and the
        // pool it may have held last) is gone.
        let (done, finished) = std::sync::mpsc::channel();
        opener.execute(move || {
            let _ = done.send(());
        });
        let _ = finished.recv();
    }

    /// Whether the store reads the file `immutable`, and why: SQLite then assumes nothing
    /// changes it, so there is nothing to watch.
    pub(crate) fn immutable(&self) -> Option<&str> {
        match self.reading {
            Reading::Immutable => self.immutable_because.as_deref(),
            Reading::Shared => None,
        }
    }

    /// The file a read-only store reads (what the path named when it opened).
    pub(crate) fn identity(&self) -> Option<FileId> {
        self.identity
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// A pooled connection, for reads.
    pub fn conn(&self) -> Result<r2d2::PooledConnection<Manager>> {
        Ok(self.pool.get()?)
    }

    /// `read` with the connection that checked the schema, on this thread, while the pool
    /// has not handed it out yet (a server's reads at start, `server::state::Library::of`):
    /// through the pool they would wait for its opener thread to start and hand it over,
    /// which the pool's first request, later, finds started. Otherwise a pooled connection.
    pub(crate) fn first_read<T>(&self, read: impl FnOnce(&Connection) -> Result<T>) -> Result<T> {
        let first = self.first.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(conn) = first.as_ref() {
            return read(conn);
        }
        drop(first);
        read(&*self.conn()?)
    }

    /// Whether the store is a Litestream replica (`open_replica`).
    pub(crate) fn replica(&self) -> bool {
        self.replica
    }

    /// A pooled connection for one request's reads. On a replica they are one snapshot:
    /// the connection's page cache is emptied (Litestream may have changed pages without
    /// SQLite being able to tell) and a read transaction is begun, held until the
    /// `Snapshot` is dropped, so that Litestream applies no change half-way through the
    /// request. Elsewhere it is the pooled connection as it is.
    pub(crate) fn snapshot(&self) -> Result<Snapshot> {
        let conn = self.pool.get()?;
        if self.replica {
            conn.release_memory()?;
            conn.execute_batch("BEGIN DEFERRED")?;
        }
        Ok(Snapshot {
            conn,
            open: self.replica,
        })
    }

    /// An idle pooled connection for one read that must not wait, or None when none is idle
    /// (or the store is a replica, whose reads may wait for Litestream's lock): for a point
    /// read on a thread that has other work (`server::answer`'s `Reach::Point`). In WAL
    /// mode a read never waits for a writer.
    pub(crate) fn idle_snapshot(&self) -> Option<Snapshot> {
        if self.replica {
            return None;
        }
        let conn = self.pool.try_get()?;
        Some(Snapshot { conn, open: false })
    }

    /// The store, its writes recorded as `settings` say (what wrote them, how many versions
    /// of an item are kept) instead of the defaults.
    pub(crate) fn recording(self, settings: history::Settings) -> Store {
        Store {
            history: settings,
            ..self
        }
    }

    /// Runs `change` in one IMMEDIATE transaction (the write lock is taken up front, so two
    /// writers queue on `busy_timeout` instead of failing half-way) and commits it.
    /// The write is recorded in the history (`history`): what wrote it, and a version of
    /// every item it changed.
    pub fn write<T>(&self, change: impl FnOnce(&Transaction) -> Result<T>) -> Result<T> {
        let mut conn = self.pool.get()?;
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        history::begin(&tx, &self.history)?;
        let value = change(&tx)?;
        history::finish(&tx, &self.history)?;
        tx.commit()?;
        Ok(value)
    }
}

/// One request's connection (`Store::snapshot`).
pub(crate) struct Snapshot {
    conn: r2d2::PooledConnection<Manager>,
    /// Whether a read transaction was begun for the request, to end when it is dropped.
    open: bool,
}

impl std::ops::Deref for Snapshot {
    type Target = Connection;

    fn deref(&self) -> &Connection {
        &self.conn
    }
}

impl Drop for Snapshot {
    fn drop(&mut self) {
        // A read transaction has nothing to commit; ending it releases the shared lock
        // Litestream waits for. A connection it could not end is not taken back by the
        // pool (`Manager::has_broken`).
        if self.open {
            let _ = self.conn.execute_batch("COMMIT");
        }
    }
}

/// A read transaction for reads that must agree with one another, unless the connection is
/// in one already (a replica's request, `Store::snapshot`), whose snapshot they then share.
pub(crate) fn read_transaction(conn: &Connection) -> rusqlite::Result<Option<Transaction<'_>>> {
    if conn.is_autocommit() {
        conn.unchecked_transaction().map(Some)
    } else {
        Ok(None)
    }
}

/// Whether the file now at `path`, which replaced the one a server reads, can be served in
/// its place: it must hold this version's schema, and no commits may wait in the `-wal`
/// beside it. That `-wal` (and the `-shm`) belong to the path, not to a file: commits the
/// replaced file left there would be read by SQLite as the new file's pages, so a file
/// renamed over one that was written while served is not taken. Read `immutable`: the check
/// touches neither the `-wal` nor the `-shm`, which the old file's connections still hold.
pub(crate) fn check_replacement(path: &Path) -> std::result::Result<(), String> {
    let wal = place::sidecar(path, "-wal");
    if std::fs::metadata(&wal).is_ok_and(|meta| meta.len() > 0) {
        return Err(format!(
            "{} holds commits made to the replaced file, which SQLite would read as the new              file's; restart the server to serve the new file, and see SECURITY.md on              replacing a served library",
            wal.display()
        ));
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_URI;
    let conn = Connection::open_with_flags(place::immutable_uri(path), flags)
        .map_err(|err| err.to_string())?;
    match schema::inspect(&conn, path) {
        Ok(schema::Found::Current) => Ok(()),
        Ok(schema::Found::Empty) => Err("it holds no library".into()),
        Ok(schema::Found::Older(found)) => Err(format!(
            "its schema version {found} is older than {SCHEMA_VERSION}; migrate it with              `promptshelf --db FILE stats` before putting it there"
        )),
        Err(err) => Err(err.to_string()),
    }
}

/// The one thread a pool opens its connections on.
type Opener = Arc<scheduled_thread_pool::ScheduledThreadPool>;

/// The connection that checked the schema, until the pool hands it out.
type FirstConnection = Arc<Mutex<Option<Connection>>>;

/// The pool of a store's connections, and the one thread that opens them.
///
/// Connections are opened when first needed and then kept: each one parses the whole
/// schema on its first statement, so none is opened ahead (cold start is a budget) and
/// none is closed for being idle or old (a served file that was deleted could not be
/// opened again).
/// Also the place of the connection that checked the schema (`Store::first_read`).
fn pooled(manager: Manager) -> Result<(r2d2::Pool<Manager>, Opener, FirstConnection)> {
    let first = Arc::clone(&manager.first);
    let opener = Arc::new(
        scheduled_thread_pool::ScheduledThreadPool::builder()
            .num_threads(1)
            .thread_name_pattern("sqlite-open")
            .build(),
    );
    let pool = r2d2::Pool::builder()
        .max_size(8)
        .min_idle(Some(0))
        .idle_timeout(None)
        .max_lifetime(None)
        // A local file's connection does not go stale: no check on every checkout.
        .test_on_check_out(false)
        // Connections are opened one at a time anyway; r2d2's default of three threads
        // for that costs a cold start more than the one it opens.
        .thread_pool(opener.clone())
        .build(manager)?;
    Ok((pool, opener, first))
}

/// Opens the pool's connections. The first it hands out may be the connection that checked
/// the database's version, already configured and with the schema parsed, so that a
/// server's first request does not wait for a second connection to parse it again.
pub struct Manager {
    files: SqliteConnectionManager,
    first: FirstConnection,
    path: PathBuf,
    /// For a read-only store, the file every connection must be to.
    identity: Option<FileId>,
}

impl r2d2::ManageConnection for Manager {
    type Connection = Connection;
    type Error = rusqlite::Error;

    fn connect(&self) -> rusqlite::Result<Connection> {
        let first = self
            .first
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(conn) = first {
            return Ok(conn);
        }
        if let Some(identity) = self.identity
            && FileId::of(&self.path).ok() != Some(identity)
        {
            // The pool then waits for one of the connections it has.
            return Err(rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CANTOPEN),
                Some(format!(
                    "{} no longer names the file being served",
                    self.path.display()
                )),
            ));
        }
        self.files.connect()
    }

    fn is_valid(&self, conn: &mut Connection) -> rusqlite::Result<()> {
        self.files.is_valid(conn)
    }

    /// A connection still in a transaction (one a request could not end) would hold its
    /// lock while idle in the pool: it is closed instead.
    fn has_broken(&self, conn: &mut Connection) -> bool {
        self.files.has_broken(conn) || !conn.is_autocommit()
    }
}

/// SQLite's process-wide settings, made once before the first connection opens (SQLite
/// takes them only then). Memory statistics are off, as SQLite's recommended options have
/// them: with them on, every allocation takes a global mutex and updates counters that
/// nothing here reads. Parsing the schema, the largest piece of a server's start, took
/// 13% fewer instructions (callgrind: 2.97 -> 2.57 M), and every query allocates less
/// dearly (docs/benchmarks.md, "Where a start goes").
fn settle_sqlite() {
    static SETTLED: std::sync::Once = std::sync::Once::new();
    SETTLED.call_once(|| {
        // SAFETY: SQLITE_CONFIG_MEMSTATUS takes one int. Called before this process opens
        // a connection (`Once`, first thing of every open); should SQLite already be
        // initialized, it returns SQLITE_MISUSE and changes nothing, which is harmless.
        let code = unsafe {
            rusqlite::ffi::sqlite3_config(rusqlite::ffi::SQLITE_CONFIG_MEMSTATUS, 0 as libc::c_int)
        };
        if code != rusqlite::ffi::SQLITE_OK {
            tracing::debug!("SQLite kept its memory statistics (sqlite3_config: {code})");
        }
    });
}

fn configure(conn: &Connection) -> rusqlite::Result<()> {
    conn.busy_timeout(busy_timeout())?;
    // A plan that does not depend on the values bound to it. Without this, SQLite reads a
    // bound `LIMIT ?` while preparing and marks the statement to be prepared again whenever
    // a new value is bound, so every page of a list prepared its statements anew; no query
    // here binds what a plan could use (no `LIKE ?`, no statistics from ANALYZE).
    conn.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
        true,
    )?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    // 256 KiB of page cache per connection (SQLite's default is 2 MiB), which holds the
    // upper levels of the indexes a read walks; the OS caches the rest of the file. No
    // memory map (SQLite's default): mapped pages would count as the server's own memory.
    // With 512 KiB the large bench's server peaked at 24-28 MB serving random reads of a
    // 500,000-document library, with 256 KiB at 24 MB (budget: under 25 MB).
    conn.pragma_update(None, "cache_size", -256)?;
    // The search index's view reads packed contents with `unpacked`.
    blobs::register(conn)
}

/// What an open fills a database with once it was created (nothing more).
fn created(_: &Transaction) -> Result<()> {
    Ok(())
}

/// Checks that `path` can be a database file and returns its folder.
fn check_folder(path: &Path) -> Result<&Path> {
    if path.is_dir() {
        return Err(StoreError::Open(format!(
            "cannot open {}: it is a folder; pass the database file, e.g. --db {}",
            path.display(),
            path.join("library.db").display()
        )));
    }
    let folder = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    match std::fs::metadata(folder) {
        Ok(meta) if meta.is_dir() => Ok(folder),
        Ok(_) => Err(StoreError::Open(format!(
            "cannot open {}: {} is not a folder",
            path.display(),
            folder.display()
        ))),
        Err(err) => Err(StoreError::Open(format!(
            "cannot open {}: folder {} is not usable ({err}); create it or pass another --db",
            path.display(),
            folder.display()
        ))),
    }
}

/// The environment variable that pins the clock (Unix milliseconds), so tests can check
/// `lastModified` and `ttlMs` exactly. Only a build with debug assertions (the one the tests
/// run) reads it: a release binary's clock, token expiry included, is never set from outside.
pub(crate) const CLOCK_ENV: &str = "PROMPTSHELF_NOW_MS";

/// Unix milliseconds now (or, in a build with debug assertions, the pinned time when
/// `PROMPTSHELF_NOW_MS` is set).
pub fn now_ms() -> i64 {
    static PINNED: std::sync::OnceLock<Option<i64>> = std::sync::OnceLock::new();
    let pinned = PINNED.get_or_init(|| {
        if !cfg!(debug_assertions) {
            return None;
        }
        std::env::var(CLOCK_ENV).ok()?.parse().ok()
    });
    pinned.unwrap_or_else(|| jiff::Timestamp::now().as_millisecond())
}

/// A library made from the seed in a temporary folder (kept while the folder is), and a
/// plain connection to it, with SQLite's defaults (not `configure`d): for the store's unit
/// tests.
#[cfg(test)]
fn seed_library() -> (tempfile::TempDir, Connection) {
    let folder = tempfile::tempdir().expect("a temporary folder");
    let path = folder.path().join("library.db");
    let mut conn = Connection::open(&path).expect("open");
    schema::prepare(&mut conn, &path, crate::seed::load).expect("create");
    (folder, conn)
}

#[cfg(test)]
mod tests {
    /// The bundled SQLite is built without SQLITE_ENABLE_MEMORY_MANAGEMENT
    /// (`.cargo/config.toml`): with it, every connection's page cache shares one mutex, which
    /// the server's pool threads waited on at every page they read.
    #[test]
    fn connections_have_page_caches_of_their_own() {
        let conn = rusqlite::Connection::open_in_memory().expect("open");
        let shared: bool = conn
            .query_row(
                "SELECT sqlite_compileoption_used('ENABLE_MEMORY_MANAGEMENT')",
                [],
                |row| row.get(0),
            )
            .expect("ask SQLite how it was built");
        assert!(
            !shared,
            "SQLite was built with SQLITE_ENABLE_MEMORY_MANAGEMENT: build from the repository's \
             root, whose .cargo/config.toml sets LIBSQLITE3_FLAGS"
        );
    }
}
