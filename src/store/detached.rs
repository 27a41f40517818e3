//! Items detached from their collection (`prompt add --detach`, `resource rm --detach`, ...):
//! which prompt names and resource URIs the next imports of a collection leave alone, even
//! while the folder still has their files.
//!
//! Kept as rows of the key/value `meta` table (`detached/<kind>/<key>`, the collection's name
//! as the value), written in the same transaction as the item, so a detachment needs no
//! schema change and goes and comes with the item's own write.

use rusqlite::{Connection, OptionalExtension, Transaction, params};

use super::Result;
use crate::model::Kind;

fn key(kind: Kind, key: &str) -> String {
    format!("detached/{}/{key}", kind.as_str())
}

/// Records that the item `item` of `kind` no longer follows the collection `collection`.
pub(crate) fn mark(tx: &Transaction, kind: Kind, item: &str, collection: &str) -> Result<()> {
    tx.execute(
        "INSERT INTO meta (key, value) VALUES (?1, ?2)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        params![key(kind, item), collection.as_bytes()],
    )?;
    Ok(())
}

/// Drops the mark, if any: the collection's imports take the item again. Whether there was one.
pub(crate) fn clear(tx: &Transaction, kind: Kind, item: &str) -> Result<bool> {
    Ok(tx.execute("DELETE FROM meta WHERE key = ?1", [key(kind, item)])? > 0)
}

/// The collection the item was detached from, if it was.
pub(crate) fn from(conn: &Connection, kind: Kind, item: &str) -> Result<Option<String>> {
    let value: Option<Vec<u8>> = conn
        .query_row(
            "SELECT value FROM meta WHERE key = ?1",
            [key(kind, item)],
            |row| row.get(0),
        )
        .optional()?;
    Ok(value.map(|bytes| String::from_utf8_lossy(&bytes).into_owned()))
}

/// Drops every mark of a collection (it was removed: nothing will import it any more).
pub(crate) fn clear_collection(tx: &Transaction, collection: &str) -> Result<()> {
    tx.execute(
        "DELETE FROM meta WHERE key LIKE 'detached/%' AND value = ?1",
        [collection.as_bytes()],
    )?;
    Ok(())
}

/// The items detached from `collection`: (kind, key) pairs, for an import's plan.
pub(crate) fn of_collection(conn: &Connection, collection: &str) -> Result<Vec<(Kind, String)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT key FROM meta WHERE key LIKE 'detached/%' AND value = ?1 ORDER BY key",
    )?;
    let keys = stmt
        .query_map([collection.as_bytes()], |row| row.get::<_, String>(0))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(keys
        .iter()
        .filter_map(|key| {
            let rest = key.strip_prefix("detached/")?;
            let (kind, item) = rest.split_once('/')?;
            let kind = [Kind::Prompt, Kind::Resource]
                .into_iter()
                .find(|known| known.as_str() == kind)?;
            Some((kind, item.to_string()))
        })
        .collect())
}
