//! The prefix `import --prefix WORD` gave a collection's prompt names, so that its later
//! imports (without flags, as `prompt edit` makes) name them so again.
//!
//! Kept as a row of the key/value `meta` table (`prefix/<collection>`, the word as the
//! value), written in the import's transaction, so it needs no schema change.

use rusqlite::{Connection, OptionalExtension, Transaction, params};

use super::Result;

fn key(collection: &str) -> String {
    format!("prefix/{collection}")
}

/// The prefix of the collection's prompt names, if one was given.
pub(crate) fn of(conn: &Connection, collection: &str) -> Result<Option<String>> {
    let value: Option<Vec<u8>> = conn
        .query_row(
            "SELECT value FROM meta WHERE key = ?1",
            [key(collection)],
            |row| row.get(0),
        )
        .optional()?;
    Ok(value.map(|bytes| String::from_utf8_lossy(&bytes).into_owned()))
}

/// Records the collection's prefix, or (None) forgets it.
pub(crate) fn set(tx: &Transaction, collection: &str, prefix: Option<&str>) -> Result<()> {
    match prefix {
        Some(prefix) => tx.execute(
            "INSERT INTO meta (key, value) VALUES (?1, ?2)
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            params![key(collection), prefix.as_bytes()],
        )?,
        None => tx.execute("DELETE FROM meta WHERE key = ?1", [key(collection)])?,
    };
    Ok(())
}
