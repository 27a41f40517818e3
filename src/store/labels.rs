//! Release channels' labels: a label names one version of an item (prompt, resource,
//! template or completion table), and a server on the channel of that name serves each item
//! at the version its label names, and only the items that have it (`store::channel`).
//!
//! Labels move only here, inside a `Store::write`: each move updates `labels`, is recorded in
//! `label_moves` under the command's `label_writes` row (for `label history` and `label
//! undo`), and is logged in `change_log` with the label as its `channel`, so a server tells
//! that channel's listeners, and no one else, that the item changed. A labelled version, and
//! every version a kept label write names, is kept whatever `--keep` says
//! (`history::finish`). The library's own writes never move a label: that is what pins a
//! channel to known versions.

use std::collections::BTreeSet;

use rusqlite::{Connection, OptionalExtension, Transaction, params};

use super::history::{self, Kind, kind_named};
use super::{Result, StoreError, now_ms};

/// How many label writes `label history` keeps (and `label undo` can go back through).
const KEPT_WRITES: i64 = 200;

/// The longest label name.
const MAX_NAME: usize = 64;

/// Whether `name` can be a label (and a channel): a letter or digit, then letters, digits,
/// `.`, `_` and `-`, at most `MAX_NAME` of them. The error says what is wrong and what to
/// give instead.
pub(crate) fn check_name(name: &str) -> Result<()> {
    let mut chars = name.chars();
    let starts_well = chars.next().is_some_and(|c| c.is_ascii_alphanumeric());
    let rest_well = chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if starts_well && rest_well && name.len() <= MAX_NAME {
        return Ok(());
    }
    Err(StoreError::Invalid(format!(
        "{name:?} is not a label name: use a letter or digit, then letters, digits, '.', '_' \
         or '-', at most {MAX_NAME} in all (e.g. production, staging)"
    )))
}

/// Which items a label command acts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Selection {
    /// These items, each by its kind and key.
    Items(Vec<(Kind, String)>),
    /// A collection's prompts, resources and templates, and the completion tables they
    /// complete from.
    Collection(String),
    /// Every item of the library.
    All,
}

/// One label on one item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Labelled {
    pub label: String,
    pub kind: Kind,
    pub key: String,
    pub version: i64,
}

/// One label moved by a write: the version it named before and after (None: not there).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Move {
    pub label: String,
    pub kind: Kind,
    pub key: String,
    pub before: Option<i64>,
    pub after: Option<i64>,
}

/// One `label` command's write, as `label history` lists it, with its moves.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LabelWrite {
    pub id: i64,
    pub at: i64,
    pub what: String,
    pub undone: bool,
    pub reverts: Option<i64>,
    pub moves: Vec<Move>,
}

/// Puts `label` on each selected item: on its newest version, or on `version` when one item
/// is selected. An item removed from the library, or never versioned, cannot be labelled
/// (the error names it); a label already on that version is left as it is.
pub(crate) fn set(
    tx: &Transaction,
    label: &str,
    selection: &Selection,
    version: Option<i64>,
) -> Result<Vec<Move>> {
    check_name(label)?;
    let items = selected_items(tx, selection)?;
    let mut targets = Vec::with_capacity(items.len());
    for (kind, key) in items {
        let target = match version {
            Some(version) => chosen_version(tx, kind, &key, version)?,
            None => newest_version(tx, kind, &key)?,
        };
        targets.push((kind, key, target));
    }
    let write = begin(tx)?;
    let mut moves = Vec::new();
    for (kind, key, target) in targets {
        moves.extend(move_label(tx, write, label, kind, &key, Some(target))?);
    }
    finish(tx, write, &moves)?;
    Ok(moves)
}

/// Takes `label` off each selected item that has it.
pub(crate) fn remove(tx: &Transaction, label: &str, selection: &Selection) -> Result<Vec<Move>> {
    check_name(label)?;
    let on: Vec<Labelled> = match selection {
        Selection::Items(items) => {
            let labelled = list(tx, Some(label))?;
            labelled
                .into_iter()
                .filter(|l| {
                    items
                        .iter()
                        .any(|(kind, key)| *kind == l.kind && *key == l.key)
                })
                .collect()
        }
        Selection::Collection(collection) => of_collection(tx, label, collection)?,
        Selection::All => list(tx, Some(label))?,
    };
    let write = begin(tx)?;
    let mut moves = Vec::new();
    for labelled in on {
        moves.extend(move_label(
            tx,
            write,
            label,
            labelled.kind,
            &labelled.key,
            None,
        )?);
    }
    finish(tx, write, &moves)?;
    Ok(moves)
}

/// Makes `to` name what `from` names, for the items of `collection` (None: of the whole
/// library), in one write: every item `from` is on gets `to` at the same version, and `to`
/// comes off the prompts, resources and templates in scope that `from` is not on (a
/// completion table keeps `to`, since another collection may complete from it).
pub(crate) fn promote(
    tx: &Transaction,
    from: &str,
    to: &str,
    collection: Option<&str>,
) -> Result<Vec<Move>> {
    check_name(from)?;
    check_name(to)?;
    if from == to {
        return Err(StoreError::Invalid(format!(
            "promoting {from:?} to itself changes nothing; name two labels, e.g. `label promote staging production`"
        )));
    }
    let scope = |label: &str| match collection {
        Some(collection) => of_collection(tx, label, collection),
        None => list(tx, Some(label)),
    };
    let source = scope(from)?;
    if source.is_empty() {
        let within = collection.map_or(String::new(), |c| format!(" in collection {c:?}"));
        return Err(StoreError::Invalid(format!(
            "no item{within} has the label {from:?}, so there is nothing to promote; `label list` shows the labels there are"
        )));
    }
    let target = scope(to)?;
    let write = begin(tx)?;
    let mut moves = Vec::new();
    for item in &source {
        moves.extend(move_label(
            tx,
            write,
            to,
            item.kind,
            &item.key,
            Some(item.version),
        )?);
    }
    for item in target {
        let kept = source
            .iter()
            .any(|s| s.kind == item.kind && s.key == item.key);
        if !kept && (item.kind != Kind::Values || collection.is_none()) {
            moves.extend(move_label(tx, write, to, item.kind, &item.key, None)?);
        }
    }
    finish(tx, write, &moves)?;
    Ok(moves)
}

/// Reverts the newest label write not yet undone (an undo is undone by another `undo` of
/// the write before it, as the library's history does), as a write of its own. Returns
/// the write undone (its id and what made it) and the moves made, or None when there is
/// nothing to undo.
pub(crate) fn undo(tx: &Transaction) -> Result<Option<(i64, String, Vec<Move>)>> {
    let newest: Option<(i64, String)> = tx
        .query_row(
            "SELECT id, what FROM label_writes WHERE undone = 0 AND reverts IS NULL
             ORDER BY id DESC LIMIT 1",
            [],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .optional()?;
    let Some((undone, what)) = newest else {
        return Ok(None);
    };
    let moved = moves_of(tx, undone)?;
    let write = begin(tx)?;
    let mut moves = Vec::new();
    for step in moved.iter().rev() {
        moves.extend(move_label(
            tx,
            write,
            &step.label,
            step.kind,
            &step.key,
            step.before,
        )?);
    }
    tx.execute("UPDATE label_writes SET undone = 1 WHERE id = ?1", [undone])?;
    tx.execute(
        "UPDATE label_writes SET reverts = ?2 WHERE id = ?1",
        params![write, undone],
    )?;
    finish(tx, write, &moves)?;
    Ok(Some((undone, what, moves)))
}

/// Every label (or every item `label` is on), by label, kind and key.
pub(crate) fn list(conn: &Connection, label: Option<&str>) -> Result<Vec<Labelled>> {
    let rows: Vec<(String, String, String, i64)> = conn
        .prepare_cached(
            "SELECT label, kind, key, version FROM labels WHERE ?1 IS NULL OR label = ?1
             ORDER BY label, kind, key",
        )?
        .query_map([label], |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
        })?
        .collect::<rusqlite::Result<_>>()?;
    rows.into_iter()
        .map(|(label, kind, key, version)| {
            Ok(Labelled {
                label,
                kind: kind_named(&kind)?,
                key,
                version,
            })
        })
        .collect()
}

/// The labels on versions of one item, by label.
pub(crate) fn of_item(conn: &Connection, kind: Kind, key: &str) -> Result<Vec<(String, i64)>> {
    let rows = conn
        .prepare_cached(
            "SELECT label, version FROM labels WHERE kind = ?1 AND key = ?2 ORDER BY label",
        )?
        .query_map(params![kind.as_str(), key], |row| {
            Ok((row.get(0)?, row.get(1)?))
        })?
        .collect::<rusqlite::Result<_>>()?;
    Ok(rows)
}

/// The kept label writes, newest first, each with its moves.
pub(crate) fn writes(conn: &Connection) -> Result<Vec<LabelWrite>> {
    let rows: Vec<(i64, i64, String, bool, Option<i64>)> = conn
        .prepare("SELECT id, at, what, undone, reverts FROM label_writes ORDER BY id DESC")?
        .query_map([], |row| row.try_into())?
        .collect::<rusqlite::Result<_>>()?;
    rows.into_iter()
        .map(|(id, at, what, undone, reverts)| {
            Ok(LabelWrite {
                id,
                at,
                what,
                undone,
                reverts,
                moves: moves_of(conn, id)?,
            })
        })
        .collect()
}

/// The labels there are, each with how many items it is on.
pub(crate) fn names(conn: &Connection) -> Result<Vec<(String, i64)>> {
    let rows = conn
        .prepare_cached("SELECT label, count(*) FROM labels GROUP BY label ORDER BY label")?
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    Ok(rows)
}

/// A row of `label_moves`: label, kind, key, before, after.
type MoveRow = (String, String, String, Option<i64>, Option<i64>);

/// The moves of the label write `id`, by label, kind and key (one each at most).
fn moves_of(conn: &Connection, id: i64) -> Result<Vec<Move>> {
    let rows: Vec<MoveRow> = conn
        .prepare_cached(
            "SELECT label, kind, key, before, after FROM label_moves WHERE write_id = ?1
             ORDER BY label, kind, key",
        )?
        .query_map([id], |row| row.try_into())?
        .collect::<rusqlite::Result<_>>()?;
    rows.into_iter()
        .map(|(label, kind, key, before, after)| {
            Ok(Move {
                label,
                kind: kind_named(&kind)?,
                key,
                before,
                after,
            })
        })
        .collect()
}

/// Begins a label write, recorded as what the open library write is recorded as (the
/// command line).
fn begin(tx: &Transaction) -> Result<i64> {
    let what: String = tx.query_row(
        "SELECT what FROM writes WHERE id = ?1",
        [history::open_write(tx)?],
        |row| row.get(0),
    )?;
    tx.execute(
        "INSERT INTO label_writes (at, what) VALUES (?1, ?2)",
        params![now_ms(), what],
    )?;
    Ok(tx.last_insert_rowid())
}

/// Ends a label write: one that moved nothing leaves no row; the oldest beyond
/// `KEPT_WRITES` go, with their moves.
fn finish(tx: &Transaction, write: i64, moves: &[Move]) -> Result<()> {
    if moves.is_empty() {
        tx.execute("DELETE FROM label_writes WHERE id = ?1", [write])?;
        return Ok(());
    }
    tx.execute(
        "DELETE FROM label_writes WHERE id IN
         (SELECT id FROM label_writes ORDER BY id DESC LIMIT -1 OFFSET ?1)",
        [KEPT_WRITES],
    )?;
    Ok(())
}

/// Moves `label` on one item to `to` (None: takes it off), recording the move and logging
/// it as a change of the label's channel; None when the label already names `to`.
fn move_label(
    tx: &Transaction,
    write: i64,
    label: &str,
    kind: Kind,
    key: &str,
    to: Option<i64>,
) -> Result<Option<Move>> {
    let before: Option<i64> = tx
        .prepare_cached("SELECT version FROM labels WHERE label = ?1 AND kind = ?2 AND key = ?3")?
        .query_row(params![label, kind.as_str(), key], |row| row.get(0))
        .optional()?;
    if before == to {
        return Ok(None);
    }
    let op = match (before, to) {
        (None, _) => "insert",
        (Some(_), Some(_)) => "update",
        (Some(_), None) => "delete",
    };
    match to {
        Some(version) => {
            let (last_modified, commit) = served_facts(tx, kind, key, version)?;
            tx.prepare_cached(
                "INSERT INTO labels (label, kind, key, version, last_modified, source_commit)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT (label, kind, key) DO UPDATE SET version = excluded.version,
                 last_modified = excluded.last_modified, source_commit = excluded.source_commit",
            )?
            .execute(params![
                label,
                kind.as_str(),
                key,
                version,
                last_modified,
                commit
            ])?;
        }
        None => {
            tx.prepare_cached("DELETE FROM labels WHERE label = ?1 AND kind = ?2 AND key = ?3")?
                .execute(params![label, kind.as_str(), key])?;
        }
    }
    tx.prepare_cached(
        "INSERT INTO label_moves (write_id, label, kind, key, before, after)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![write, label, kind.as_str(), key, before, to])?;
    tx.prepare_cached(
        "INSERT INTO change_log (at, kind, op, key, channel) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![now_ms(), kind.as_str(), op, key, label])?;
    Ok(Some(Move {
        label: label.to_string(),
        kind,
        key: key.to_string(),
        before,
        after: to,
    }))
}

/// The time and commit a channel serves with `version` of an item: its row's when that is
/// the item's newest version, else the time of the version's write and no commit (the row's
/// commit is the newest version's, not this one's).
fn served_facts(
    tx: &Transaction,
    kind: Kind,
    key: &str,
    version: i64,
) -> Result<(i64, Option<String>)> {
    let row_sql = match kind {
        Kind::Prompt => Some(
            "SELECT last_modified, source_commit FROM prompts WHERE name = ?1 AND version = ?2",
        ),
        Kind::Resource => Some(
            "SELECT last_modified, source_commit FROM resources WHERE uri = ?1 AND version = ?2",
        ),
        Kind::Template => Some(
            "SELECT last_modified, NULL FROM resource_templates WHERE uri_template = ?1 AND version = ?2",
        ),
        Kind::Values => None,
    };
    if let Some(sql) = row_sql {
        let row = tx
            .prepare_cached(sql)?
            .query_row(params![key, version], |row| Ok((row.get(0)?, row.get(1)?)))
            .optional()?;
        if let Some(facts) = row {
            return Ok(facts);
        }
    }
    let at = tx
        .prepare_cached(
            "SELECT w.at FROM versions v JOIN writes w ON w.id = v.write_id WHERE v.id = ?1",
        )?
        .query_row([version], |row| row.get(0))?;
    Ok((at, None))
}

/// The items a selection names, each once, in order.
fn selected_items(conn: &Connection, selection: &Selection) -> Result<Vec<(Kind, String)>> {
    let keys = |sql: &str, param: Option<&str>| -> Result<Vec<String>> {
        let rows = conn
            .prepare(sql)?
            .query_map([param], |row| row.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(rows)
    };
    let mut items = Vec::new();
    match selection {
        Selection::Items(named) => return Ok(named.clone()),
        Selection::All => {
            for (kind, sql) in [
                (
                    Kind::Prompt,
                    "SELECT name FROM prompts WHERE ?1 IS NULL ORDER BY name",
                ),
                (
                    Kind::Resource,
                    "SELECT uri FROM resources WHERE ?1 IS NULL ORDER BY uri",
                ),
                (
                    Kind::Template,
                    "SELECT uri_template FROM resource_templates WHERE ?1 IS NULL ORDER BY uri_template",
                ),
                (
                    Kind::Values,
                    "SELECT name FROM completion_tables WHERE ?1 IS NULL ORDER BY name",
                ),
            ] {
                items.extend(keys(sql, None)?.into_iter().map(|key| (kind, key)));
            }
        }
        Selection::Collection(collection) => {
            let c = Some(collection.as_str());
            let found = [
                (
                    Kind::Prompt,
                    "SELECT name FROM prompts WHERE collection = ?1 ORDER BY name",
                ),
                (
                    Kind::Resource,
                    "SELECT uri FROM resources WHERE collection = ?1 ORDER BY uri",
                ),
                (
                    Kind::Template,
                    "SELECT uri_template FROM resource_templates WHERE collection = ?1 ORDER BY uri_template",
                ),
                (
                    Kind::Values,
                    "SELECT DISTINCT name FROM (
                         SELECT a.completion_table AS name FROM prompt_arguments a
                         JOIN prompts p ON p.id = a.prompt_id WHERE p.collection = ?1
                         UNION SELECT v.completion_table FROM template_variables v
                         JOIN resource_templates t ON t.id = v.template_id WHERE t.collection = ?1)
                     WHERE name IN (SELECT name FROM completion_tables) ORDER BY name",
                ),
            ];
            for (kind, sql) in found {
                items.extend(keys(sql, c)?.into_iter().map(|key| (kind, key)));
            }
            if items.is_empty() {
                return Err(StoreError::Invalid(format!(
                    "collection {collection:?} holds no items; `collection list` shows the collections there are"
                )));
            }
        }
    }
    Ok(items)
}

/// The items of `collection` that `label` is on, by the collection of the version it
/// names (an item since moved or removed is still in the collection it was labelled in),
/// and the completion tables their prompts and templates complete from.
fn of_collection(conn: &Connection, label: &str, collection: &str) -> Result<Vec<Labelled>> {
    let labelled = list(conn, Some(label))?;
    let mut within = Vec::new();
    let mut tables = BTreeSet::new();
    let mut stmt = conn.prepare_cached(
        "SELECT CASE ?2
             WHEN 'prompt' THEN json_extract(snapshot, '$.origin.collection')
             WHEN 'resource' THEN json_extract(snapshot, '$.info.origin.collection')
             WHEN 'template' THEN json_extract(snapshot, '$.collection') END,
         CASE ?2
             WHEN 'prompt' THEN (SELECT json_group_array(json_extract(value, '$.completion'))
                                 FROM json_each(snapshot, '$.arguments'))
             WHEN 'template' THEN (SELECT json_group_array(json_extract(value, '$[1]'))
                                   FROM json_each(snapshot, '$.completions')) END
         FROM whole_versions WHERE id = ?1",
    )?;
    for item in &labelled {
        if item.kind == Kind::Values {
            continue;
        }
        let (of, completes): (Option<String>, Option<String>) = stmt
            .query_row(params![item.version, item.kind.as_str()], |row| {
                Ok((row.get(0)?, row.get(1)?))
            })?;
        if of.as_deref() == Some(collection) {
            within.push(item.clone());
            let names: Vec<Option<String>> = completes
                .map(|json| serde_json::from_str(&json).unwrap_or_default())
                .unwrap_or_default();
            tables.extend(names.into_iter().flatten());
        }
    }
    within.extend(
        labelled
            .into_iter()
            .filter(|item| item.kind == Kind::Values && tables.contains(&item.key)),
    );
    Ok(within)
}

/// The newest version of an item in the library now, for a label to name.
fn newest_version(conn: &Connection, kind: Kind, key: &str) -> Result<i64> {
    let newest: Option<(i64, String)> = conn
        .prepare_cached(
            "SELECT id, change FROM versions WHERE kind = ?1 AND key = ?2 ORDER BY id DESC LIMIT 1",
        )?
        .query_row(params![kind.as_str(), key], |row| {
            Ok((row.get(0)?, row.get(1)?))
        })
        .optional()?;
    match newest {
        Some((id, change)) if change != "removed" => Ok(id),
        Some(_) => Err(StoreError::Invalid(format!(
            "the {} {key:?} was removed from the library; give a version it had with --version (`history {key}` lists them)",
            kind.as_str()
        ))),
        None => Err(StoreError::Invalid(format!(
            "the {} {key:?} has no recorded version to label; write it once (an import or an edit) so the history records one",
            kind.as_str()
        ))),
    }
}

/// `version`, checked to be a kept version of this item that did not remove it.
fn chosen_version(conn: &Connection, kind: Kind, key: &str, version: i64) -> Result<i64> {
    let found: Option<(String, String, String)> = conn
        .prepare_cached("SELECT kind, key, change FROM versions WHERE id = ?1")?
        .query_row([version], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
        .optional()?;
    match found {
        Some((k, found_key, change)) if k == kind.as_str() && found_key == key => {
            if change == "removed" {
                return Err(StoreError::Invalid(format!(
                    "version {version} removed the {} {key:?}, so there is nothing to label; `history {key}` lists its versions",
                    kind.as_str()
                )));
            }
            Ok(version)
        }
        // Another item's version, even one that removed it, is not this item's.
        _ => Err(StoreError::Invalid(format!(
            "version {version} is not a kept version of the {} {key:?}; `history {key}` lists its versions",
            kind.as_str()
        ))),
    }
}
