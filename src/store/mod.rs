//! The SQLite store: one database file holds the whole library.
//!
//! `Store` is a pool of connections (r2d2) with WAL, `busy_timeout` and foreign keys on every
//! connection. Reads live in `read`, writes in `write`; every write runs in one transaction.
//! A serving store opens its connections read-only, so the server cannot write (the one
//! exception, creating a missing database from the seed, happens before the pool exists):
//! an existing file is never written by it, not even to create or migrate the schema.

mod hash;
pub mod read;
mod schema;
pub mod write;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use r2d2_sqlite::SqliteConnectionManager;
use rusqlite::{Connection, OpenFlags, Transaction};

pub use hash::{hash_prompt, hash_resource, hash_template, hex};
pub use read::{Change, ItemState, Stats};
pub use schema::SCHEMA_VERSION;
pub use write::{Outcome, ValuesMode};

/// How long a connection waits for another process's write lock before giving up; long
/// enough that a client never sees `SQLITE_BUSY` while an import commits.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

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
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("database pool error: {0}")]
    Pool(#[from] r2d2::Error),
    #[error("{0}")]
    Invalid(String),
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// Whether this process may write through the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    ReadWrite,
    /// Connections are opened read-only: the server's mode.
    ReadOnly,
}

#[derive(Clone)]
pub struct Store {
    pool: r2d2::Pool<Manager>,
    path: PathBuf,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("path", &self.path).finish()
    }
}

impl Store {
    /// Opens the database at `path`, creating it from schema.sql and `fill` when it does not
    /// exist yet. The folder must exist. `fill` runs inside the creating transaction, so a
    /// half-created database is never left behind.
    ///
    /// `ReadWrite` also fills an existing empty file and migrates an older schema.
    /// `ReadOnly` (the server) creates only a missing file: an existing one is opened
    /// read-only and must already hold this version's schema, or the open fails with an
    /// error naming the file and the command that prepares it.
    pub fn open(
        path: &Path,
        access: Access,
        fill: impl FnOnce(&Transaction) -> Result<()>,
    ) -> Result<Store> {
        check_folder(path)?;
        // A server opening an existing database checks its version without ever holding a
        // writable connection (closing one may checkpoint the WAL into the file), and keeps
        // the connection that checked as the pool's first.
        let mut checked = None;
        if access == Access::ReadOnly && path.exists() {
            let conn = Connection::open_with_flags(
                path,
                OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            )
            .map_err(|err| StoreError::Open(format!("cannot open {}: {err}", path.display())))?;
            configure(&conn).map_err(|err| not_a_database(path, err))?;
            let shown = || path.display().to_string();
            match schema::inspect(&conn, path)? {
                schema::Found::Current => checked = Some(conn),
                schema::Found::Empty => return Err(StoreError::NotCreated { path: shown() }),
                schema::Found::Older(found) => {
                    return Err(StoreError::TooOld {
                        path: shown(),
                        found,
                        supported: SCHEMA_VERSION,
                    });
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
            .map_err(|err| StoreError::Open(format!("cannot open {}: {err}", path.display())))?;
            configure(&conn).map_err(|err| not_a_database(path, err))?;
            schema::prepare(&mut conn, path, fill)?;
        }
        let flags = match access {
            Access::ReadWrite => {
                OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX
            }
            Access::ReadOnly => OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        };
        let manager = Manager {
            files: SqliteConnectionManager::file(path)
                .with_flags(flags)
                .with_init(|conn| configure(conn)),
            first: Mutex::new(checked),
        };
        // Connections are opened when first needed and then kept: each one parses the whole
        // schema on its first statement, so none is opened ahead (cold start is a budget)
        // and none is closed for being idle.
        let pool = r2d2::Pool::builder()
            .max_size(8)
            .min_idle(Some(0))
            .idle_timeout(None)
            // A local file's connection does not go stale: no check on every checkout.
            .test_on_check_out(false)
            // Connections are opened one at a time anyway; r2d2's default of three threads
            // for that costs a cold start more than the one it opens.
            .thread_pool(Arc::new(
                scheduled_thread_pool::ScheduledThreadPool::builder()
                    .num_threads(1)
                    .thread_name_pattern("sqlite-open")
                    .build(),
            ))
            .build(manager)?;
        Ok(Store {
            pool,
            path: path.to_path_buf(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A pooled connection, for reads.
    pub fn conn(&self) -> Result<r2d2::PooledConnection<Manager>> {
        Ok(self.pool.get()?)
    }

    /// Runs `change` in one IMMEDIATE transaction (the write lock is taken up front, so two
    /// writers queue on `busy_timeout` instead of failing half-way) and commits it.
    pub fn write<T>(&self, change: impl FnOnce(&Transaction) -> Result<T>) -> Result<T> {
        let mut conn = self.pool.get()?;
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let value = change(&tx)?;
        tx.commit()?;
        Ok(value)
    }
}

/// Opens the pool's connections. The first it hands out may be the connection that checked
/// the database's version, already configured and with the schema parsed, so that a
/// server's first request does not wait for a second connection to parse it again.
pub struct Manager {
    files: SqliteConnectionManager,
    first: Mutex<Option<Connection>>,
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
        match first {
            Some(conn) => Ok(conn),
            None => self.files.connect(),
        }
    }

    fn is_valid(&self, conn: &mut Connection) -> rusqlite::Result<()> {
        self.files.is_valid(conn)
    }

    fn has_broken(&self, conn: &mut Connection) -> bool {
        self.files.has_broken(conn)
    }
}

fn configure(conn: &Connection) -> rusqlite::Result<()> {
    conn.busy_timeout(BUSY_TIMEOUT)?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    // 512 KiB of page cache per connection (SQLite's default is 2 MiB): the pool's eight
    // connections then stay within the server's memory budget; the OS caches the file.
    conn.pragma_update(None, "cache_size", -512)?;
    Ok(())
}

fn check_folder(path: &Path) -> Result<()> {
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
        Ok(meta) if meta.is_dir() => Ok(()),
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

fn not_a_database(path: &Path, err: rusqlite::Error) -> StoreError {
    StoreError::NotADatabase {
        path: path.display().to_string(),
        reason: err.to_string(),
    }
}

/// The environment variable that pins the clock (Unix milliseconds), so tests can check
/// `lastModified` and `ttlMs` exactly. Unset in normal use.
pub const CLOCK_ENV: &str = "PROMPTSHELF_NOW_MS";

/// Unix milliseconds now (or the pinned time when `PROMPTSHELF_NOW_MS` is set).
pub fn now_ms() -> i64 {
    static PINNED: std::sync::OnceLock<Option<i64>> = std::sync::OnceLock::new();
    let pinned = PINNED.get_or_init(|| std::env::var(CLOCK_ENV).ok()?.parse().ok());
    pinned.unwrap_or_else(|| jiff::Timestamp::now().as_millisecond())
}
