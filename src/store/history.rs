//! The library's history: every write transaction that changed an item (a command, an import,
//! the seed) and the version of each item it wrote, kept by the store's own write path in
//! the same transaction (`write` records, `Store::write` begins and finishes). Versions are
//! numbered in one sequence for the whole library and hold the item's whole stored form as
//! JSON (a resource's content stays in `blobs`, shared by hash), so any version can be
//! written back (`revert`: `rollback` one item, or `undo` the last write as one new write).
//! Serving never reads any of this.
//!
//! A collection's record (its `collections` row: folder, last import) is not versioned, but
//! the write that made it is remembered (`created_collection`, a row of `meta`, so no schema
//! change), so that undoing that write removes the record with the items.

use std::collections::BTreeSet;

use rusqlite::{Connection, OptionalExtension, Transaction, params};
use serde::{Deserialize, Serialize};

use super::{Result, StoreError, blobs, now_ms, read};
use crate::model::{CompletionTable, Content, Prompt, Resource, ResourceInfo, ResourceTemplate};

/// How many versions of each item are kept unless `Settings` say otherwise.
pub(crate) const DEFAULT_KEEP: u32 = 50;

/// What a store's writes are recorded as (the command line that runs) and how many versions
/// of an item they keep; carried by the `Store` that writes (`Store::recording`). By
/// default, writes are recorded as `promptshelf`, keeping `DEFAULT_KEEP`.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    what: String,
    keep: u32,
}

impl Settings {
    pub(crate) fn new(what: String, keep: u32) -> Settings {
        Settings {
            what,
            keep: keep.max(1),
        }
    }
}

impl Default for Settings {
    fn default() -> Settings {
        Settings::new("promptshelf".into(), DEFAULT_KEEP)
    }
}

// Also named `store::history::Kind`, as `cmd::prompt` and `cmd::edit` name it.
pub(crate) use crate::model::Kind;

/// The kind `name` names, as the history's rows hold it.
pub(super) fn kind_named(name: &str) -> Result<Kind> {
    Kind::named(name)
        .ok_or_else(|| StoreError::Invalid(format!("a version of an unknown kind {name:?}")))
}

/// What a version did to its item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Change {
    Added,
    Updated,
    Removed,
}

impl Change {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Change::Added => "added",
            Change::Updated => "updated",
            Change::Removed => "removed",
        }
    }

    pub(super) fn parse(name: &str) -> Result<Change> {
        match name {
            "added" => Ok(Change::Added),
            "updated" => Ok(Change::Updated),
            "removed" => Ok(Change::Removed),
            other => Err(StoreError::Invalid(format!("a version that was {other:?}"))),
        }
    }
}

/// A resource's version: everything but its content, which the version's `content` blob is.
/// schema.sql's `resource_snapshots` writes the same from a row.
#[derive(Serialize, Deserialize, PartialEq)]
struct ResourceSnapshot {
    info: ResourceInfo,
    text: bool,
}

/// Begins the record of a write transaction, before anything in it is written.
pub(super) fn begin(tx: &Transaction, settings: &Settings) -> Result<()> {
    begin_as(tx, &settings.what)
}

/// `begin`, recording the write as `what` (the seed).
pub(super) fn begin_as(tx: &Transaction, what: &str) -> Result<()> {
    tx.execute(
        "INSERT INTO writes (at, what) VALUES (?1, ?2)",
        params![now_ms(), what],
    )?;
    Ok(())
}

/// Ends the record of the write transaction: a write that changed nothing leaves no row, and
/// each item it changed keeps its newest versions only (`Settings`), the content of older
/// ones dropped unless something else holds it; a version a label names, or a kept label
/// write moved a label from or to, is kept (`labels`).
pub(super) fn finish(tx: &Transaction, settings: &Settings) -> Result<()> {
    let id = open_write(tx)?;
    let touched: Vec<(String, String)> = tx
        .prepare("SELECT DISTINCT kind, key FROM versions WHERE write_id = ?1")?
        .query_map([id], |row| Ok((row.get(0)?, row.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    if touched.is_empty() {
        tx.execute("DELETE FROM writes WHERE id = ?1", [id])?;
        // Its id may be taken again by the next write, which did not create the record.
        forget_created(tx, id)?;
        return Ok(());
    }
    let keep = settings.keep;
    let mut dropped = BTreeSet::new();
    let mut prune = tx.prepare_cached(
        "DELETE FROM versions WHERE id IN (SELECT id FROM versions WHERE kind = ?1 AND key = ?2
         ORDER BY id DESC LIMIT -1 OFFSET ?3)
         AND id NOT IN (SELECT version FROM labels)
         AND id NOT IN (SELECT before FROM label_moves WHERE before IS NOT NULL)
         AND id NOT IN (SELECT after FROM label_moves WHERE after IS NOT NULL)
         RETURNING write_id, content",
    )?;
    for (kind, key) in &touched {
        let rows = prune.query_map(params![kind, key, keep], |row| {
            Ok((row.get::<_, i64>(0)?, row.get::<_, Option<Vec<u8>>>(1)?))
        })?;
        for row in rows {
            let (write_id, content) = row?;
            dropped.insert(write_id);
            if let Some(content) = content {
                blobs::drop_if_unused(tx, &content)?;
            }
        }
    }
    for write_id in dropped {
        let gone = tx.execute(
            "DELETE FROM writes WHERE id = ?1
             AND NOT EXISTS (SELECT 1 FROM versions WHERE write_id = ?1)",
            [write_id],
        )?;
        if gone > 0 {
            forget_created(tx, write_id)?;
        }
    }
    tx.execute("UPDATE writes SET open = 0 WHERE id = ?1", [id])?;
    Ok(())
}

/// The `meta` rows naming, for a collection, the write that created its record; the value
/// is the write's id, as text.
const CREATED: &str = "collection-created/";

/// Records that the write being recorded creates the record (`collections` row) of
/// `collection`, so that `undo` of it removes the record too.
pub(crate) fn created_collection(tx: &Transaction, collection: &str) -> Result<()> {
    let write_id = open_write(tx)?;
    tx.execute(
        "INSERT INTO meta (key, value) VALUES (?1, ?2)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        params![
            format!("{CREATED}{collection}"),
            write_id.to_string().as_bytes()
        ],
    )?;
    Ok(())
}

/// Drops what `created_collection` remembered of the write `write_id`, returning the
/// collections whose record it created.
pub(super) fn forget_created(tx: &Transaction, write_id: i64) -> Result<Vec<String>> {
    let keys: Vec<String> = tx
        .prepare_cached(
            "DELETE FROM meta WHERE key >= ?1 AND key < ?2 AND value = ?3 RETURNING key",
        )?
        .query_map(
            params![
                CREATED,
                format!("{}0", CREATED.trim_end_matches('/')),
                write_id.to_string().as_bytes()
            ],
            |row| row.get(0),
        )?
        .collect::<rusqlite::Result<_>>()?;
    Ok(keys
        .iter()
        .filter_map(|key| key.strip_prefix(CREATED).map(str::to_string))
        .collect())
}

/// The write transaction being recorded.
pub(super) fn open_write(tx: &Transaction) -> Result<i64> {
    // Once per item written: the open write is the newest, found without a pass over them.
    tx.prepare_cached("SELECT id FROM writes WHERE open = 1 ORDER BY id DESC LIMIT 1")?
        .query_row([], |row| row.get(0))
        .optional()?
        .ok_or_else(|| {
            StoreError::Invalid(
                "a change was written outside a recorded write (Store::write)".into(),
            )
        })
}

/// Records one version of an item; returns its number, which a prompt's, resource's or
/// template's row keeps (`version`, what a server serves as its provenance).
fn record(
    tx: &Transaction,
    kind: Kind,
    key: &str,
    change: Change,
    content_hash: Option<&[u8]>,
    snapshot: Option<String>,
    content: Option<&[u8]>,
) -> Result<i64> {
    let write_id = open_write(tx)?;
    tx.prepare_cached(
        "INSERT INTO versions (write_id, kind, key, change, content_hash, snapshot, content)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?
    .execute(params![
        write_id,
        kind.as_str(),
        key,
        change.as_str(),
        content_hash,
        snapshot,
        content
    ])?;
    Ok(tx.last_insert_rowid())
}

fn json<T: Serialize>(value: &T) -> Result<String> {
    serde_json::to_string(value).map_err(|err| StoreError::Invalid(err.to_string()))
}

pub(super) fn prompt_written(
    tx: &Transaction,
    prompt: &Prompt,
    change: Change,
    hash: &[u8],
) -> Result<i64> {
    record(
        tx,
        Kind::Prompt,
        &prompt.name,
        change,
        Some(hash),
        Some(json(prompt)?),
        None,
    )
}

pub(super) fn resource_written(
    tx: &Transaction,
    resource: &Resource,
    change: Change,
) -> Result<i64> {
    // No snapshot, content or hash: the row written next is this version, and holds them
    // (schema.sql, `versions`).
    let key = &resource.info.uri;
    record(tx, Kind::Resource, key, change, None, None, None)
}

/// Drops the snapshot, content and content hash of every resource version that its row
/// still is and says the same (schema.sql, `versions`): what a migration to version 14 does once, the
/// versions written before keeping them. A version that says anything else (a row moved to
/// another file since, with no new version) keeps them.
pub(super) fn drop_current_snapshots(tx: &Transaction) -> Result<()> {
    let mut current = tx.prepare(
        "SELECT v.id, v.snapshot, s.snapshot FROM resource_snapshots s
         JOIN versions v ON v.id = s.version
         WHERE v.snapshot IS NOT NULL AND v.content IS s.blob_hash
           AND v.content_hash IS s.content_hash",
    )?;
    let mut same = Vec::new();
    let mut rows = current.query([])?;
    while let Some(row) = rows.next()? {
        let (id, kept, now): (i64, String, String) = (row.get(0)?, row.get(1)?, row.get(2)?);
        let kept: Option<ResourceSnapshot> = serde_json::from_str(&kept).ok();
        let now: Option<ResourceSnapshot> = serde_json::from_str(&now).ok();
        if kept.is_some() && kept == now {
            same.push(id);
        }
    }
    let mut drop = tx.prepare(
        "UPDATE versions SET snapshot = NULL, content = NULL, content_hash = NULL WHERE id = ?1",
    )?;
    for &id in &same {
        drop.execute([id])?;
    }
    Ok(())
}

pub(super) fn template_written(
    tx: &Transaction,
    template: &ResourceTemplate,
    change: Change,
    hash: &[u8],
) -> Result<i64> {
    let key = &template.uri_template;
    record(
        tx,
        Kind::Template,
        key,
        change,
        Some(hash),
        Some(json(template)?),
        None,
    )
}

/// A completion table's version: its values as they are now, after the write.
pub(super) fn values_written(tx: &Transaction, name: &str, change: Change) -> Result<()> {
    let table = stored_table(tx, name)?;
    let snapshot = json(&table)?;
    let hash = blake3::hash(snapshot.as_bytes());
    record(
        tx,
        Kind::Values,
        name,
        change,
        Some(hash.as_bytes()),
        Some(snapshot),
        None,
    )
    .map(drop)
}

pub(super) fn removed(tx: &Transaction, kind: Kind, key: &str) -> Result<()> {
    record(tx, kind, key, Change::Removed, None, None, None).map(drop)
}

/// The completion table `name` as stored (empty when there is none).
fn stored_table(conn: &Connection, name: &str) -> Result<CompletionTable> {
    let description: Option<String> = conn
        .query_row(
            "SELECT description FROM completion_tables WHERE name = ?1",
            [name],
            |row| row.get(0),
        )
        .optional()?
        .flatten();
    Ok(CompletionTable {
        name: name.to_string(),
        description,
        values: read::table_values(conn, name)?.unwrap_or_default(),
    })
}

/// One version as the history lists it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Version {
    pub id: i64,
    pub kind: Kind,
    pub key: String,
    pub change: Change,
    pub content_hash: Option<Vec<u8>>,
    /// When its write committed, and what wrote it.
    pub at: i64,
    pub what: String,
    pub write_id: i64,
}

const VERSION_COLUMNS: &str =
    "v.id, v.kind, v.key, v.change, v.content_hash, w.at, w.what, v.write_id";

fn version_of(row: &rusqlite::Row) -> rusqlite::Result<(Version, String, String)> {
    Ok((
        Version {
            id: row.get(0)?,
            kind: Kind::Prompt,
            key: row.get(2)?,
            change: Change::Added,
            content_hash: row.get(4)?,
            at: row.get(5)?,
            what: row.get(6)?,
            write_id: row.get(7)?,
        },
        row.get(1)?,
        row.get(3)?,
    ))
}

fn typed((mut version, kind, change): (Version, String, String)) -> Result<Version> {
    version.kind = kind_named(&kind)?;
    version.change = Change::parse(&change)?;
    Ok(version)
}

/// The kinds of item that have versions under `key`.
pub(crate) fn kinds_of(conn: &Connection, key: &str) -> Result<Vec<Kind>> {
    let names: Vec<String> = conn
        .prepare("SELECT DISTINCT kind FROM versions WHERE key = ?1 ORDER BY kind")?
        .query_map([key], |row| row.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    names.iter().map(|name| kind_named(name)).collect()
}

/// The keys the history keeps versions of (of one kind, or of every kind), sorted: what a
/// key that it does not keep may have meant.
pub(crate) fn keys(conn: &Connection, kind: Option<Kind>) -> Result<Vec<String>> {
    let keys = conn
        .prepare("SELECT DISTINCT key FROM versions WHERE ?1 IS NULL OR kind = ?1 ORDER BY key")?
        .query_map([kind.map(Kind::as_str)], |row| row.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    Ok(keys)
}

/// Every kept version of one item, newest first.
pub(crate) fn versions(conn: &Connection, kind: Kind, key: &str) -> Result<Vec<Version>> {
    let sql = format!(
        "SELECT {VERSION_COLUMNS} FROM whole_versions v JOIN writes w ON w.id = v.write_id
         WHERE v.kind = ?1 AND v.key = ?2 ORDER BY v.id DESC"
    );
    let rows: Vec<_> = conn
        .prepare(&sql)?
        .query_map(params![kind.as_str(), key], version_of)?
        .collect::<rusqlite::Result<_>>()?;
    rows.into_iter().map(typed).collect()
}

/// What a version holds: the item as it was written, or None for a removal.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Item {
    Prompt(Prompt),
    Resource(Resource),
    Template(ResourceTemplate),
    Values(CompletionTable),
}

/// The item version `id` holds (None when it removed the item), with the version itself;
/// None when no such version is kept.
pub(crate) fn item(conn: &Connection, id: i64) -> Result<Option<(Version, Option<Item>)>> {
    let sql = format!(
        "SELECT {VERSION_COLUMNS}, v.snapshot, v.content FROM whole_versions v
         JOIN writes w ON w.id = v.write_id WHERE v.id = ?1"
    );
    let found = conn
        .query_row(&sql, [id], |row| {
            Ok((
                version_of(row)?,
                row.get::<_, Option<String>>(8)?,
                row.get::<_, Option<Vec<u8>>>(9)?,
            ))
        })
        .optional()?;
    let Some((version, snapshot, content)) = found else {
        return Ok(None);
    };
    let version = typed(version)?;
    let Some(snapshot) = snapshot else {
        return Ok(Some((version, None)));
    };
    let item = decode(conn, version.kind, &snapshot, content.as_deref())?;
    Ok(Some((version, Some(item))))
}

fn decode(conn: &Connection, kind: Kind, snapshot: &str, content: Option<&[u8]>) -> Result<Item> {
    let bad = |err: serde_json::Error| StoreError::Invalid(format!("a stored version: {err}"));
    Ok(match kind {
        Kind::Prompt => Item::Prompt(serde_json::from_str(snapshot).map_err(bad)?),
        Kind::Template => Item::Template(serde_json::from_str(snapshot).map_err(bad)?),
        Kind::Values => Item::Values(serde_json::from_str(snapshot).map_err(bad)?),
        Kind::Resource => {
            let ResourceSnapshot { info, text } = serde_json::from_str(snapshot).map_err(bad)?;
            let blob = content
                .ok_or_else(|| StoreError::Invalid("a resource version without content".into()))?;
            let gone =
                || StoreError::Invalid(format!("the stored content of {} is gone", info.uri));
            let hash = <&[u8; 32]>::try_from(blob).map_err(|_| gone())?;
            let bytes = read::blob(conn, hash)?.ok_or_else(gone)?;
            let content = if text {
                Content::Text(String::from_utf8(bytes).map_err(|_| {
                    StoreError::Invalid(format!("the stored text of {} is not UTF-8", info.uri))
                })?)
            } else {
                Content::Binary(bytes)
            };
            Item::Resource(Resource { info, content })
        }
    })
}

/// The content hash the item has now (None when there is no such item), as its versions
/// record it.
pub(super) fn current_hash(conn: &Connection, kind: Kind, key: &str) -> Result<Option<Vec<u8>>> {
    let sql = match kind {
        Kind::Prompt => "SELECT content_hash FROM prompts WHERE name = ?1",
        Kind::Resource => "SELECT content_hash FROM resources WHERE uri = ?1",
        Kind::Template => "SELECT content_hash FROM resource_templates WHERE uri_template = ?1",
        Kind::Values => {
            let exists = conn
                .query_row(
                    "SELECT 1 FROM completion_tables WHERE name = ?1",
                    [key],
                    |_| Ok(()),
                )
                .optional()?;
            if exists.is_none() {
                return Ok(None);
            }
            let snapshot = json(&stored_table(conn, key)?)?;
            return Ok(Some(blake3::hash(snapshot.as_bytes()).as_bytes().to_vec()));
        }
    };
    Ok(conn.query_row(sql, [key], |row| row.get(0)).optional()?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Access, Store, write};

    /// Two stores in one process each record their writes as their own settings say: what
    /// wrote them, and how many versions of an item are kept.
    #[test]
    fn each_store_records_its_writes_as_its_own_settings_say() {
        let folder = tempfile::tempdir().expect("a temporary folder");
        let open = |name: &str, what: &str, keep: u32| {
            Store::open(
                &folder.path().join(name),
                Access::ReadWrite,
                crate::seed::load,
            )
            .expect("a library")
            .recording(Settings::new(what.to_string(), keep))
        };
        let first = open("first.db", "promptshelf first", 1);
        let second = open("second.db", "promptshelf second", 3);
        for (store, what, versions) in [
            (&first, "promptshelf first", 1),
            (&second, "promptshelf second", 2),
        ] {
            store
                .write(|tx| write::remove_prompt(tx, "code-review"))
                .expect("removed");
            let conn = store.conn().expect("a connection");
            let recorded: String = conn
                .query_row(
                    "SELECT what FROM writes ORDER BY id DESC LIMIT 1",
                    [],
                    |row| row.get(0),
                )
                .expect("the write");
            assert_eq!(recorded, what);
            let kept: i64 = conn
                .query_row(
                    "SELECT count(*) FROM versions WHERE kind = 'prompt' AND key = 'code-review'",
                    [],
                    |row| row.get(0),
                )
                .expect("the versions");
            assert_eq!(
                kept, versions,
                "{what}: the seed's version and the removal's"
            );
        }
    }
}
