//! Resources' contents, one row of `blobs` per distinct content, keyed by its blake3 hash:
//! shared by every resource and every kept version of one (`history`) that holds the same
//! bytes, and dropped once none does.

use rusqlite::{Transaction, params};

use super::Result;
use crate::model::ContentHash;

/// Stores `bytes` unless a row already holds them; their hash, the key a resource keeps.
pub(super) fn put(tx: &Transaction, bytes: &[u8]) -> Result<ContentHash> {
    let hash = *blake3::hash(bytes).as_bytes();
    tx.prepare_cached("INSERT OR IGNORE INTO blobs (hash, size, data) VALUES (?1, ?2, ?3)")?
        .execute(params![&hash[..], bytes.len() as i64, bytes])?;
    Ok(hash)
}

/// Removes a content blob that neither a resource nor a kept version of one holds.
pub(super) fn drop_if_unused(tx: &Transaction, blob: &[u8]) -> Result<()> {
    tx.prepare_cached(
        "DELETE FROM blobs WHERE hash = ?1
         AND NOT EXISTS (SELECT 1 FROM resources WHERE blob_hash = ?1)
         AND NOT EXISTS (SELECT 1 FROM versions WHERE content = ?1)",
    )?
    .execute([blob])?;
    Ok(())
}
