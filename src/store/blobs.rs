//! Resources' contents, one row of `blobs` per distinct content, keyed by its blake3 hash:
//! shared by every resource and every kept version of one (`history`) that holds the same
//! bytes, and dropped once none does.
//!
//! A content is stored packed (an LZ4 block, `packing` 1) when that makes it at least an
//! eighth smaller, and as it is otherwise (`packing` 0): the hash and `size` are always the
//! content's own. Rust reads unpack with `unpack`; SQL reads (the search index's view,
//! `search_source`) with the `unpacked(data, packing, size)` function, which `register`
//! adds to every connection the store opens, as it adds `packed(data)`, with which a
//! migration packs what an older version stored.

use rusqlite::functions::{Context, FunctionFlags};
use rusqlite::types::{Value, ValueRef};
use rusqlite::{Connection, Transaction, params};

use super::{Result, StoreError};
use crate::model::ContentHash;

/// Contents smaller than this are stored as they are: what little there is to find again in
/// a few dozen bytes leaves nothing to gain.
const MIN_PACKED: usize = 64;

/// Stores `bytes` unless a row already holds them; their hash, the key a resource keeps.
pub(super) fn put(tx: &Transaction, bytes: &[u8]) -> Result<ContentHash> {
    let hash = *blake3::hash(bytes).as_bytes();
    let exists = tx
        .prepare_cached("SELECT 1 FROM blobs WHERE hash = ?1")?
        .exists([&hash[..]])?;
    if !exists {
        let (data, packing) = match packed(bytes) {
            Some(packed) => (std::borrow::Cow::Owned(packed), 1),
            None => (std::borrow::Cow::Borrowed(bytes), 0),
        };
        tx.prepare_cached("INSERT INTO blobs (hash, size, data, packing) VALUES (?1, ?2, ?3, ?4)")?
            .execute(params![&hash[..], bytes.len() as i64, &data[..], packing])?;
    }
    Ok(hash)
}

/// `bytes` packed, when that saves at least an eighth of them.
fn packed(bytes: &[u8]) -> Option<Vec<u8>> {
    if bytes.len() < MIN_PACKED {
        return None;
    }
    let packed = lz4_flex::block::compress(bytes);
    (packed.len() <= bytes.len() - bytes.len() / 8).then_some(packed)
}

/// The content of a row of `blobs`: `data` as stored, its `packing`, and the content's
/// `size`.
pub(super) fn unpack(data: Vec<u8>, packing: i64, size: i64) -> Result<Vec<u8>> {
    match packing {
        0 => Ok(data),
        1 => {
            let size = usize::try_from(size).unwrap_or(0);
            let content = lz4_flex::block::decompress(&data, size).map_err(|err| damaged(&err))?;
            if content.len() != size {
                return Err(damaged(&format!(
                    "{} bytes where {size} were stored",
                    content.len()
                )));
            }
            Ok(content)
        }
        other => Err(damaged(&format!("an unknown packing {other}"))),
    }
}

fn damaged(err: &dyn std::fmt::Display) -> StoreError {
    StoreError::Invalid(format!(
        "a stored content cannot be unpacked ({err}); restore the database from a backup"
    ))
}

/// Adds `unpacked(data, packing, size)` and `packed(data)` to `conn` (see the module's
/// doc). Both are deterministic and read nothing else, so SQLite may use them in views,
/// triggers and indexes.
pub(super) fn register(conn: &Connection) -> rusqlite::Result<()> {
    let flags = FunctionFlags::SQLITE_UTF8
        | FunctionFlags::SQLITE_DETERMINISTIC
        | FunctionFlags::SQLITE_INNOCUOUS;
    conn.create_scalar_function("unpacked", 3, flags, |ctx| {
        let packing: i64 = ctx.get(1)?;
        let size: i64 = ctx.get(2)?;
        let data = blob_argument(ctx, 0)?;
        unpack(data, packing, size)
            .map(Value::Blob)
            .map_err(|err| rusqlite::Error::UserFunctionError(err.to_string().into()))
    })?;
    conn.create_scalar_function("packed", 1, flags, |ctx| {
        let data = blob_argument(ctx, 0)?;
        Ok(packed(&data).map(Value::Blob).unwrap_or(Value::Null))
    })
}

/// Argument `at` of a call as bytes, whether it came as a blob or as text.
fn blob_argument(ctx: &Context, at: usize) -> rusqlite::Result<Vec<u8>> {
    Ok(match ctx.get_raw(at) {
        ValueRef::Blob(bytes) | ValueRef::Text(bytes) => bytes.to_vec(),
        _ => Vec::new(),
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    /// What is packed unpacks to itself; small or incompressible contents are not packed;
    /// a damaged row is an error that says so, never a panic.
    #[test]
    fn packed_contents_unpack_to_themselves_and_damage_is_reported() {
        let text = "# A heading\n\nSome words, and some words again. ".repeat(40);
        let packed_text = packed(text.as_bytes()).expect("repetitive text is packed");
        assert!(packed_text.len() < text.len() / 4);
        assert_eq!(
            unpack(packed_text.clone(), 1, text.len() as i64).expect("unpacks"),
            text.as_bytes()
        );
        assert_eq!(packed(b"short"), None);
        let mut noise = vec![0; 4096];
        blake3::Hasher::new()
            .update(b"noise")
            .finalize_xof()
            .fill(&mut noise);
        assert_eq!(
            packed(&noise),
            None,
            "what does not shrink is kept as it is"
        );
        assert_eq!(unpack(noise.clone(), 0, 4096).expect("as it is"), noise);
        for (data, packing, size) in [
            (packed_text.clone(), 1, text.len() as i64 + 1),
            (packed_text[..10].to_vec(), 1, text.len() as i64),
            (noise.clone(), 1, 4096),
            (noise, 2, 4096),
        ] {
            let err = unpack(data, packing, size).expect_err("damaged");
            assert!(err.to_string().contains("restore the database"), "{err}");
        }
    }
}
