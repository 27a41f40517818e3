//! Creating a new database from schema.sql and checking the version of an existing one.

use std::path::Path;

use rusqlite::{Connection, Transaction, TransactionBehavior};

use super::{Result, StoreError, opening};

/// The version schema.sql creates, recorded in `PRAGMA user_version`.
pub(crate) const SCHEMA_VERSION: i64 = 14;

const SCHEMA: &str = include_str!("../../schema.sql");

/// Steps from each older version to the next: `MIGRATIONS[v - 1]` takes version `v` to `v + 1`.
/// Each leaves the database as schema.sql would have created it (a test checks).
const MIGRATIONS: &[&str] = &[
    include_str!("migrations/2.sql"),
    include_str!("migrations/3.sql"),
    include_str!("migrations/4.sql"),
    include_str!("migrations/5.sql"),
    include_str!("migrations/6.sql"),
    include_str!("migrations/7.sql"),
    include_str!("migrations/8.sql"),
    include_str!("migrations/9.sql"),
    include_str!("migrations/10.sql"),
    include_str!("migrations/11.sql"),
    include_str!("migrations/12.sql"),
    include_str!("migrations/13.sql"),
    include_str!("migrations/14.sql"),
];

/// The version from which each completion table's index is stored beside it.
const STORED_INDEXES: i64 = 7;

/// The version from which a resource's current version keeps no snapshot of its own
/// (schema.sql, `versions`).
const CURRENT_SNAPSHOTS_DROPPED: i64 = 14;

/// The last version whose migration frees many pages, which a vacuum gives back to the
/// disk: 14 leaves the search index's positions out (about two thirds of the index) and
/// the snapshots of resources' current versions, 13
/// packs the contents (about half their pages), 10 the search index's copy of the text.
const LAST_SHRINKING: i64 = 14;

/// Brings the database at `conn` to `SCHEMA_VERSION`: creates it (and runs `fill`) when it is
/// empty, migrates it when it is older, refuses it when it is newer or not ours.
pub(super) fn prepare(
    conn: &mut Connection,
    path: &Path,
    fill: impl FnOnce(&Transaction) -> Result<()>,
) -> Result<()> {
    let version = user_version(conn).map_err(|err| opening(path, err))?;
    if version == SCHEMA_VERSION {
        return Ok(());
    }
    check_not_newer(path, version)?;
    // The schema's view and the migrations use the store's SQL functions.
    super::blobs::register(conn).map_err(|err| opening(path, err))?;
    // WAL can only be switched on outside a transaction; it is a property of the file.
    conn.pragma_update(None, "journal_mode", "WAL")
        .map_err(|err| opening(path, err))?;
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    // Another process may have created or migrated it while we waited for the lock.
    let version = user_version(&tx)?;
    check_not_newer(path, version)?;
    if version == 0 {
        create(&tx, path, fill)?;
    } else {
        for step in &MIGRATIONS[(version - 1) as usize..] {
            tx.execute_batch(step)?;
        }
        if version < STORED_INDEXES {
            // The tables already there get the index every later write stores.
            let ids: Vec<i64> = tx
                .prepare("SELECT id FROM completion_tables ORDER BY id")?
                .query_map([], |row| row.get(0))?
                .collect::<rusqlite::Result<_>>()?;
            for id in ids {
                super::write::store_index(&tx, id)?;
            }
        }
        if version < CURRENT_SNAPSHOTS_DROPPED {
            super::history::drop_current_snapshots(&tx)?;
        }
        tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
    }
    tx.commit()?;
    if (1..LAST_SHRINKING).contains(&version) {
        shrink(conn, path);
    }
    Ok(())
}

/// Gives the pages a migration freed back to the disk (`VACUUM`), once, when it freed many
/// (`LAST_SHRINKING`). A vacuum
/// that cannot run now (another process is writing) is left for later: the freed pages are
/// taken by the next writes meanwhile, and `promptshelf backup` writes a compact copy.
fn shrink(conn: &Connection, path: &Path) {
    if let Err(err) = conn.execute_batch("VACUUM") {
        tracing::warn!(
            "{}: the space the migration freed is free for new writes, but the file was not shrunk ({err}); `promptshelf backup FILE` writes a compact copy",
            path.display()
        );
    }
}

/// Creates this version's schema, the secret and what `fill` writes in `tx`, on a database
/// that holds nothing yet (`path` for messages).
pub(super) fn create(
    tx: &Transaction,
    path: &Path,
    fill: impl FnOnce(&Transaction) -> Result<()>,
) -> Result<()> {
    let tables: i64 = tx.query_row("SELECT count(*) FROM sqlite_schema", [], |row| row.get(0))?;
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
    // What a new database is filled with (the seed library) is its history's first write.
    super::history::begin_as(tx, "seed")?;
    fill(tx)?;
    super::history::finish(tx, &super::history::Settings::default())
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
    let version = user_version(conn).map_err(|err| opening(path, err))?;
    check_not_newer(path, version)?;
    if version == SCHEMA_VERSION {
        return Ok(Found::Current);
    }
    if version > 0 {
        return Ok(Found::Older(version));
    }
    let tables: i64 = conn
        .query_row("SELECT count(*) FROM sqlite_schema", [], |row| row.get(0))
        .map_err(|err| opening(path, err))?;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every table, index and trigger with its SQL, by name.
    fn objects(conn: &Connection) -> Vec<(String, String, Option<String>)> {
        let mut stmt = conn
            .prepare("SELECT type, name, sql FROM sqlite_schema ORDER BY name")
            .expect("prepare");
        stmt.query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
            .expect("query")
            .collect::<rusqlite::Result<_>>()
            .expect("rows")
    }

    fn counts(conn: &Connection) -> (i64, i64) {
        conn.query_row(
            "SELECT (SELECT items FROM item_counts WHERE kind = 'prompt'),
                    (SELECT items FROM item_counts WHERE kind = 'resource')",
            [],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .expect("counts")
    }

    /// The downgrades, newest first: `to-N.sql` takes a database of version N + 1 back to N,
    /// the way version N left it (tests/downgrade/README.md).
    const DOWNGRADES: [&str; 13] = [
        include_str!("../../tests/downgrade/to-13.sql"),
        include_str!("../../tests/downgrade/to-12.sql"),
        include_str!("../../tests/downgrade/to-11.sql"),
        include_str!("../../tests/downgrade/to-10.sql"),
        include_str!("../../tests/downgrade/to-9.sql"),
        include_str!("../../tests/downgrade/to-8.sql"),
        include_str!("../../tests/downgrade/to-7.sql"),
        include_str!("../../tests/downgrade/to-6.sql"),
        include_str!("../../tests/downgrade/to-5.sql"),
        include_str!("../../tests/downgrade/to-4.sql"),
        include_str!("../../tests/downgrade/to-3.sql"),
        include_str!("../../tests/downgrade/to-2.sql"),
        include_str!("../../tests/downgrade/to-1.sql"),
    ];

    /// The downgrades that take a database of this build's schema back to `version`.
    fn downgrades_to(version: i64) -> &'static [&'static str] {
        &DOWNGRADES[..DOWNGRADES.len() + 1 - version as usize]
    }

    /// How many prompts and resources the search index holds, and how many items match a
    /// word every text of the seed library's `code-review` prompt holds.
    fn indexed(conn: &Connection) -> (i64, i64, i64) {
        conn.query_row(
            "SELECT (SELECT count(*) FROM search WHERE kind = 'prompt'),
                    (SELECT count(*) FROM search WHERE kind = 'resource'),
                    (SELECT count(*) FROM search WHERE search MATCH 'review')",
            [],
            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
        )
        .expect("search counts")
    }

    /// A seeded database taken back to an older version by `back`, with one prompt
    /// removed meanwhile (the migration must count and index what is there), then migrated.
    fn migrated_from(back: &[&str]) {
        let folder = tempfile::tempdir().expect("a temporary folder");
        let path = folder.path().join("library.db");
        let mut conn = Connection::open(&path).expect("open");
        prepare(&mut conn, &path, crate::seed::load).expect("create");
        let created = objects(&conn);
        let seeded = conn
            .query_row(
                "SELECT (SELECT count(*) FROM prompts), (SELECT count(*) FROM resources)",
                [],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .expect("count");
        assert_eq!(counts(&conn), seeded);
        assert!(
            seeded.0 > 0 && seeded.1 > 0,
            "the seed has prompts and resources"
        );
        let (_, _, matching) = indexed(&conn);
        assert!(matching > 0, "the seed mentions reviews");
        assert_eq!(indexed(&conn), (seeded.0, seeded.1, matching));
        for step in back {
            conn.execute_batch(step).expect("go back a version");
        }
        conn.execute("DELETE FROM prompts WHERE name = 'code-review'", [])
            .expect("remove a prompt");
        prepare(&mut conn, &path, |_| {
            panic!("an existing database is not filled")
        })
        .expect("migrate");
        assert_eq!(user_version(&conn).expect("version"), SCHEMA_VERSION);
        assert_eq!(objects(&conn), created);
        // Every completion table has its index stored, at its version.
        let (tables, indexed_tables): (i64, i64) = conn
            .query_row(
                "SELECT (SELECT count(*) FROM completion_tables),
                        (SELECT count(*) FROM completion_tables JOIN completion_indexes
                         ON table_id = id AND completion_indexes.version = completion_tables.version)",
                [],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .expect("count the stored indexes");
        assert!(tables > 0, "the seed has completion tables");
        assert_eq!(indexed_tables, tables);
        // The counts and the index are of the rows there are, and the triggers keep them.
        assert_eq!(counts(&conn), (seeded.0 - 1, seeded.1));
        let (prompts, resources, fewer) = indexed(&conn);
        assert_eq!((prompts, resources), (seeded.0 - 1, seeded.1));
        assert!(fewer < matching, "the removed prompt is not found");
        conn.execute("DELETE FROM prompts", []).expect("delete");
        assert_eq!(counts(&conn), (0, seeded.1));
        assert_eq!(indexed(&conn).0, 0);
        conn.execute(
            "INSERT INTO search (search, rank) VALUES ('integrity-check', 1)",
            [],
        )
        .expect("the index agrees with its content");
    }

    #[test]
    fn a_database_migrated_from_version_1_is_what_schema_sql_creates() {
        migrated_from(downgrades_to(1));
    }

    #[test]
    fn a_database_migrated_from_version_2_is_what_schema_sql_creates() {
        migrated_from(downgrades_to(2));
    }

    #[test]
    fn a_database_migrated_from_version_3_is_what_schema_sql_creates() {
        migrated_from(downgrades_to(3));
    }

    #[test]
    fn a_database_migrated_from_version_4_is_what_schema_sql_creates() {
        migrated_from(downgrades_to(4));
    }

    #[test]
    fn a_database_migrated_from_version_5_is_what_schema_sql_creates() {
        migrated_from(downgrades_to(5));
    }

    #[test]
    fn a_database_migrated_from_version_6_is_what_schema_sql_creates() {
        migrated_from(downgrades_to(6));
    }

    #[test]
    fn a_database_migrated_from_version_7_is_what_schema_sql_creates() {
        migrated_from(downgrades_to(7));
    }

    #[test]
    fn a_database_migrated_from_version_8_is_what_schema_sql_creates() {
        migrated_from(downgrades_to(8));
    }

    #[test]
    fn a_database_migrated_from_version_9_is_what_schema_sql_creates() {
        migrated_from(downgrades_to(9));
    }

    #[test]
    fn a_database_migrated_from_version_10_is_what_schema_sql_creates() {
        migrated_from(downgrades_to(10));
    }

    #[test]
    fn a_database_migrated_from_version_11_is_what_schema_sql_creates() {
        migrated_from(downgrades_to(11));
    }
}
