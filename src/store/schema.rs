//! Creating a new database from schema.sql and checking the version of an existing one.

use std::path::Path;

use rusqlite::{Connection, Transaction, TransactionBehavior};

use super::{Result, StoreError, not_a_database};

/// The version schema.sql creates, recorded in `PRAGMA user_version`.
pub const SCHEMA_VERSION: i64 = 1;

const SCHEMA: &str = include_str!("../../schema.sql");

/// Steps from each older version to the next: `MIGRATIONS[v - 1]` takes version `v` to `v + 1`.
/// Version 1 is the first, so there is nothing to migrate from yet.
const MIGRATIONS: &[&str] = &[];

/// Brings the database at `conn` to `SCHEMA_VERSION`: creates it (and runs `fill`) when it is
/// empty, migrates it when it is older, refuses it when it is newer or not ours.
pub(super) fn prepare(
    conn: &mut Connection,
    path: &Path,
    fill: impl FnOnce(&Transaction) -> Result<()>,
) -> Result<()> {
    let version = user_version(conn).map_err(|err| not_a_database(path, err))?;
    if version == SCHEMA_VERSION {
        return Ok(());
    }
    check_not_newer(path, version)?;
    // WAL can only be switched on outside a transaction; it is a property of the file.
    conn.pragma_update(None, "journal_mode", "WAL")
        .map_err(|err| not_a_database(path, err))?;
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    // Another process may have created or migrated it while we waited for the lock.
    let version = user_version(&tx)?;
    check_not_newer(path, version)?;
    if version == 0 {
        let tables: i64 =
            tx.query_row("SELECT count(*) FROM sqlite_schema", [], |row| row.get(0))?;
        if tables > 0 {
            return Err(other_tables(path));
        }
        tx.execute_batch(SCHEMA)?;
        let mut secret = [0u8; 32];
        getrandom::fill(&mut secret)
            .map_err(|err| StoreError::Open(format!("no random source for the secret: {err}")))?;
        tx.execute(
            "INSERT INTO meta (key, value) VALUES ('secret', ?1)",
            [&secret[..]],
        )?;
        tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
        fill(&tx)?;
    } else {
        for step in &MIGRATIONS[(version - 1) as usize..] {
            tx.execute_batch(step)?;
        }
        tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
    }
    tx.commit()?;
    Ok(())
}

/// What an existing database file holds, as far as this version is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Found {
    /// This version's schema: ready to serve.
    Current,
    /// No schema at all (an empty file, or an SQLite database without tables): not created yet.
    Empty,
    /// An older version's schema, which a writable open would migrate.
    Older(i64),
}

/// Looks at the database at `conn` without writing to it; a newer or foreign one is refused.
pub(super) fn inspect(conn: &Connection, path: &Path) -> Result<Found> {
    let version = user_version(conn).map_err(|err| not_a_database(path, err))?;
    check_not_newer(path, version)?;
    if version == SCHEMA_VERSION {
        return Ok(Found::Current);
    }
    if version > 0 {
        return Ok(Found::Older(version));
    }
    let tables: i64 = conn
        .query_row("SELECT count(*) FROM sqlite_schema", [], |row| row.get(0))
        .map_err(|err| not_a_database(path, err))?;
    if tables > 0 {
        return Err(other_tables(path));
    }
    Ok(Found::Empty)
}

fn other_tables(path: &Path) -> StoreError {
    StoreError::NotADatabase {
        path: path.display().to_string(),
        reason: "it is an SQLite database holding other tables".into(),
    }
}

fn user_version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row("PRAGMA user_version", [], |row| row.get(0))
}

fn check_not_newer(path: &Path, version: i64) -> Result<()> {
    if version < 0 {
        return Err(StoreError::NotADatabase {
            path: path.display().to_string(),
            reason: format!("its schema version {version} is not one promptshelf ever wrote"),
        });
    }
    if version > SCHEMA_VERSION {
        return Err(StoreError::TooNew {
            path: path.display().to_string(),
            found: version,
            supported: SCHEMA_VERSION,
        });
    }
    Ok(())
}
