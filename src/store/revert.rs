//! `rollback` and `undo`: versions the history keeps (`history`) written back through the
//! write path (`write`), so each is a new write with versions, change-log rows and
//! notifications like any other. `history` records and reads; this module alone writes back,
//! so the write path that records versions never depends on what writes them back.

use rusqlite::{OptionalExtension, Transaction, params};

use super::history::{self, Change, Item, Version};
use super::{Result, StoreError, now_ms, write};
use crate::model::Kind;

/// Writes `item` (or, for None, the removal of `key`) as the current version of its item.
fn write_back(tx: &Transaction, kind: Kind, key: &str, item: Option<&Item>) -> Result<()> {
    let now = now_ms();
    match item {
        Some(Item::Prompt(prompt)) => write::put_prompt(tx, prompt, now).map(drop),
        Some(Item::Resource(resource)) => write::put_resource(tx, resource, now).map(drop),
        Some(Item::Template(template)) => write::put_template(tx, template, now).map(drop),
        Some(Item::Values(table)) => write::put_values(
            tx,
            &table.name,
            table.description.as_deref(),
            &table.values,
            write::ValuesMode::Replace,
        )
        .map(drop),
        None => match kind {
            Kind::Prompt => write::remove_prompt(tx, key).map(drop),
            Kind::Resource => write::remove_resource(tx, key).map(drop),
            Kind::Template => write::remove_template(tx, key).map(drop),
            Kind::Values => write::remove_values(tx, key, None).map(drop),
        },
    }
}

/// Writes version `id` of its item back as a new version (`rollback`). Returns the version.
pub(crate) fn roll_back(tx: &Transaction, id: i64) -> Result<Version> {
    let (version, item) = history::item(tx, id)?.ok_or_else(|| {
        StoreError::Invalid(format!(
            "there is no version {id}; `promptshelf history` lists them"
        ))
    })?;
    write_back(tx, version.kind, &version.key, item.as_ref())?;
    Ok(version)
}

/// What `undo` reverted.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Undone {
    /// The write reverted: its id, when and what.
    pub write_id: i64,
    pub at: i64,
    pub what: String,
    /// The items it changed, which are now as they were before it.
    pub items: Vec<(Kind, String)>,
    /// The collections whose record it created, removed with their items.
    pub collections: Vec<String>,
}

/// Reverts the newest write that is neither undone nor an undo itself, as part of the write
/// `tx` records: every item it changed gets back the version it had before. Refused, with
/// nothing written, when an item has changed since (another write not undone), or its version
/// from before is no longer kept. None when there is nothing to undo.
pub(crate) fn undo(tx: &Transaction) -> Result<Option<Undone>> {
    let last: Option<(i64, i64, String)> = tx
        .query_row(
            "SELECT id, at, what FROM writes WHERE open = 0 AND undone = 0 AND reverts IS NULL
             ORDER BY id DESC LIMIT 1",
            [],
            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
        )
        .optional()?;
    let Some((write_id, at, what)) = last else {
        return Ok(None);
    };
    let changed: Vec<(i64, String, String, Option<Vec<u8>>)> = tx
        .prepare(
            "SELECT id, kind, key, content_hash FROM whole_versions WHERE write_id = ?1
             ORDER BY id DESC",
        )?
        .query_map([write_id], |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
        })?
        .collect::<rusqlite::Result<_>>()?;
    let mut items = Vec::new();
    for (id, kind, key, hash) in changed {
        let kind = history::kind_named(&kind)?;
        if history::current_hash(tx, kind, &key)? != hash {
            return Err(StoreError::Invalid(format!(
                "cannot undo write {write_id} ({what}): {} {key} has changed since; see \
                 `promptshelf history {key}`, and roll it back with `promptshelf rollback {key} \
                 --to VERSION` instead",
                kind.as_str()
            )));
        }
        let before: Option<i64> = tx.query_row(
            "SELECT max(id) FROM versions WHERE kind = ?1 AND key = ?2 AND id < ?3",
            params![kind.as_str(), key, id],
            |row| row.get(0),
        )?;
        let (_, change) = tx.query_row(
            "SELECT kind, change FROM versions WHERE id = ?1",
            [id],
            |row| Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?)),
        )?;
        let previous = match before {
            Some(before) => history::item(tx, before)?.and_then(|(_, item)| item),
            None if Change::parse(&change)? == Change::Added => None,
            None => {
                return Err(StoreError::Invalid(format!(
                    "cannot undo write {write_id} ({what}): no version of {} {key} from before \
                     it is kept (its history began later)",
                    kind.as_str()
                )));
            }
        };
        write_back(tx, kind, &key, previous.as_ref())?;
        items.push((kind, key));
    }
    // The collections it created go too, once they hold nothing (a collection's items all
    // come from its imports, which an undo reaches newest first).
    let mut collections = Vec::new();
    for name in history::forget_created(tx, write_id)? {
        let holds: bool = tx.query_row(
            "SELECT EXISTS (SELECT 1 FROM prompts WHERE collection = ?1)
             OR EXISTS (SELECT 1 FROM resources WHERE collection = ?1)
             OR EXISTS (SELECT 1 FROM resource_templates WHERE collection = ?1)",
            [&name],
            |row| row.get(0),
        )?;
        if !holds && tx.execute("DELETE FROM collections WHERE name = ?1", [&name])? > 0 {
            // The prefix its import recorded goes with it: an import of the folder after
            // the undo names its prompts as one that never had the prefix.
            super::prefix::set(tx, &name, None)?;
            collections.push(name);
        }
    }
    collections.sort();
    tx.execute("UPDATE writes SET undone = 1 WHERE id = ?1", [write_id])?;
    let undoing = history::open_write(tx)?;
    tx.execute(
        "UPDATE writes SET reverts = ?2 WHERE id = ?1",
        params![undoing, write_id],
    )?;
    items.sort();
    Ok(Some(Undone {
        write_id,
        at,
        what,
        items,
        collections,
    }))
}
