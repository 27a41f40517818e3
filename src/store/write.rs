//! Every change to the library. Each function takes an open transaction, so a caller can
//! group many changes (a whole import) into one commit; `Store::write` opens one. Each change
//! to an item is recorded as a version of it in the same transaction (`history`), first, so
//! that a prompt's, resource's or template's row is written with that version's number.
//! `put_prompts` and `put_resources` store many items at once, the new ones many rows to a
//! statement (`ROWS_PER_INSERT`); `put_prompt` and `put_resource` are those of one item. The
//! statements run once per item are prepared once per connection (`prepare_cached`):
//! preparing a write to a table with triggers compiles the triggers too, which was 8 % of a
//! cold import's instructions (docs/benchmarks.md).

use rusqlite::{OptionalExtension, ToSql, Transaction, params, params_from_iter};

use super::history::{self, Change};
use super::{Result, StoreError, hash_prompt, hash_resource, hash_template};
use super::{blobs, detached};
use crate::model::{CompletionValue, ContentHash, Kind, Meta, Prompt, Resource, ResourceTemplate};

/// What a put did, for summaries and for skipping work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Added,
    Updated,
    Unchanged,
}

/// Whether new values join a table's values or take their place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ValuesMode {
    Append,
    Replace,
}

fn json_or_null<T: serde::Serialize>(items: &[T]) -> Result<Option<String>> {
    (!items.is_empty()).then(|| json(items)).transpose()
}

/// An item's kept front matter as a JSON object, or NULL when it has none.
fn meta_or_null(meta: &Meta) -> Result<Option<String>> {
    (!meta.is_empty()).then(|| json(meta)).transpose()
}

fn json<T: serde::Serialize + ?Sized>(value: &T) -> Result<String> {
    serde_json::to_string(value).map_err(|err| StoreError::Invalid(err.to_string()))
}

/// How many rows one statement inserts into a table whose triggers keep the search index.
/// Each such statement inside a transaction begins a savepoint, at which FTS5 writes out the
/// index it has gathered in memory as a new segment and merges segments: one statement per
/// item made a segment per item, and a cold import of 10,000 files spent about a third of
/// its instructions writing and merging them (docs/benchmarks.md, "Import in batches").
/// Many rows to a statement let FTS5 gather a batch's index and write it once.
pub(crate) const ROWS_PER_INSERT: usize = 256;

/// Stores `prompt` under its name. `modified_at` becomes its lastModified only if its content
/// hash differs from the stored one; an unchanged prompt is not written at all (its origin
/// and commit are refreshed if it moved).
pub fn put_prompt(tx: &Transaction, prompt: &Prompt, modified_at: i64) -> Result<Outcome> {
    Ok(put_prompts(tx, &[(prompt, modified_at)])?[0])
}

/// `put_prompt` for each of `prompts` (no two with the same name), with its `modified_at`;
/// what each put did, in their order. The new ones are inserted `ROWS_PER_INSERT` to a
/// statement, with their messages; a changed one is written on its own.
pub(crate) fn put_prompts(tx: &Transaction, prompts: &[(&Prompt, i64)]) -> Result<Vec<Outcome>> {
    let mut outcomes = Vec::with_capacity(prompts.len());
    let mut added = Vec::new();
    for &(prompt, modified_at) in prompts {
        let hash = hash_prompt(prompt);
        let existing: Option<(i64, Vec<u8>)> = tx
            .prepare_cached("SELECT id, content_hash FROM prompts WHERE name = ?1")?
            .query_row([&prompt.name], |row| Ok((row.get(0)?, row.get(1)?)))
            .optional()?;
        match existing {
            Some((id, stored)) if stored == hash => {
                tx.prepare_cached(MOVE_PROMPT)?.execute(params![
                    id,
                    prompt.origin.path,
                    prompt.origin.collection,
                    prompt.origin.commit
                ])?;
                outcomes.push(Outcome::Unchanged);
            }
            Some((id, _)) => {
                let version = history::prompt_written(tx, prompt, Change::Updated, &hash)?;
                tx.prepare_cached(
                    "UPDATE prompts SET title = ?2, description = ?3, icons = ?4,
                     content_hash = ?5, last_modified = ?6, origin = ?7, collection = ?8,
                     meta = ?9, source_commit = ?10, version = ?11 WHERE id = ?1",
                )?
                .execute(params![
                    id,
                    prompt.title,
                    prompt.description,
                    json_or_null(&prompt.icons)?,
                    &hash[..],
                    modified_at,
                    prompt.origin.path,
                    prompt.origin.collection,
                    meta_or_null(&prompt.meta)?,
                    prompt.origin.commit,
                    version
                ])?;
                tx.prepare_cached("DELETE FROM prompt_arguments WHERE prompt_id = ?1")?
                    .execute([id])?;
                tx.prepare_cached("DELETE FROM prompt_messages WHERE prompt_id = ?1")?
                    .execute([id])?;
                put_body(tx, &[(id, prompt)])?;
                outcomes.push(Outcome::Updated);
            }
            None => {
                let json = (json_or_null(&prompt.icons)?, meta_or_null(&prompt.meta)?);
                added.push((prompt, hash, modified_at, json));
                outcomes.push(Outcome::Added);
            }
        }
    }
    for batch in added.chunks(ROWS_PER_INSERT) {
        // FTS5 also writes out what it has gathered when a row comes with a smaller rowid
        // than the one before, and a prompt's rowid in `search` is minus its id: the batch
        // is inserted last prompt first, each with the id it would have been given, so that
        // its index is written out once, not once per prompt (docs/benchmarks.md).
        let first: i64 = tx
            .prepare_cached("SELECT coalesce(max(id), 0) + 1 FROM prompts")?
            .query_row([], |row| row.get(0))?;
        let ids: Vec<i64> = (first..).take(batch.len()).collect();
        // Each version is recorded first, so that its number goes in with the row.
        let versions = batch
            .iter()
            .map(|(prompt, hash, _, _)| history::prompt_written(tx, prompt, Change::Added, hash))
            .collect::<Result<Vec<i64>>>()?;
        let mut values: Vec<&dyn ToSql> = Vec::with_capacity(batch.len() * 12);
        let mut bodies = Vec::with_capacity(batch.len());
        for (((prompt, hash, modified_at, (icons, meta)), id), version) in
            batch.iter().zip(&ids).zip(&versions).rev()
        {
            values.extend_from_slice(&[
                id,
                &prompt.name,
                &prompt.title,
                &prompt.description,
                icons,
                hash,
                modified_at,
                &prompt.origin.path,
                &prompt.origin.collection,
                meta,
                &prompt.origin.commit,
                version,
            ]);
            bodies.push((*id, *prompt));
        }
        let sql = insert_sql(
            "prompts (id, name, title, description, icons, content_hash, last_modified, origin,
             collection, meta, source_commit, version)",
            batch.len(),
        );
        tx.prepare_cached(&sql)?.execute(params_from_iter(values))?;
        put_body(tx, &bodies)?;
    }
    Ok(outcomes)
}

/// The arguments and messages of `prompts` (by id), which have none stored: the messages
/// `ROWS_PER_INSERT` to a statement (their trigger indexes the prompt's body).
fn put_body(tx: &Transaction, prompts: &[(i64, &Prompt)]) -> Result<()> {
    let mut insert_argument = tx.prepare_cached(
        "INSERT INTO prompt_arguments (prompt_id, position, name, title, description, required,
         type, default_value, enum_values, pattern, max_length, minimum, maximum, completion_table)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
    )?;
    let mut messages = Vec::new();
    for (id, prompt) in prompts {
        for (position, arg) in prompt.arguments.iter().enumerate() {
            insert_argument.execute(params![
                id,
                position as i64,
                arg.name,
                arg.title,
                arg.description,
                arg.required,
                arg.kind.as_str(),
                arg.default,
                json_or_null(&arg.values)?,
                arg.pattern,
                arg.max_length.map(|n| n as i64),
                arg.min,
                arg.max,
                arg.completion
            ])?;
        }
        for (position, message) in prompt.messages.iter().enumerate() {
            messages.push((id, position as i64, message.role.as_str(), &message.body));
        }
    }
    for batch in messages.chunks(ROWS_PER_INSERT) {
        let mut values: Vec<&dyn ToSql> = Vec::with_capacity(batch.len() * 4);
        for (id, position, role, body) in batch {
            values.extend_from_slice(&[*id, position, role, *body]);
        }
        let sql = insert_sql(
            "prompt_messages (prompt_id, position, role, body)",
            batch.len(),
        );
        tx.prepare_cached(&sql)?.execute(params_from_iter(values))?;
    }
    Ok(())
}

/// `INSERT INTO {into} VALUES` with `rows` rows, each of as many values as `into`
/// (`table (column, ...)`) names columns.
fn insert_sql(into: &str, rows: usize) -> String {
    let width = into.matches(',').count() + 1;
    let row = format!("({})", vec!["?"; width].join(", "));
    format!("INSERT INTO {into} VALUES {}", vec![row; rows].join(", "))
}

/// The change a put that wrote something made.
fn change_of(outcome: Outcome) -> Change {
    match outcome {
        Outcome::Added => Change::Added,
        _ => Change::Updated,
    }
}

pub(crate) fn remove_prompt(tx: &Transaction, name: &str) -> Result<bool> {
    let removed = tx.execute("DELETE FROM prompts WHERE name = ?1", [name])? > 0;
    if removed {
        history::removed(tx, Kind::Prompt, name)?;
    }
    Ok(removed)
}

/// Stores `resource` under its URI, its content once per distinct blake3 hash.
pub fn put_resource(tx: &Transaction, resource: &Resource, modified_at: i64) -> Result<Outcome> {
    Ok(put_resources(tx, &[(resource, modified_at)])?[0])
}

/// A resource's row as `put_resources` writes it.
struct ResourceRow<'a> {
    resource: &'a Resource,
    hash: ContentHash,
    blob: ContentHash,
    size: i64,
    is_text: bool,
    audience: Option<String>,
    icons: Option<String>,
    meta: Option<String>,
    modified_at: i64,
    /// The number of the version the write records.
    version: i64,
}

impl ResourceRow<'_> {
    /// Its values in the order of `RESOURCE_COLUMNS`.
    fn values(&self) -> [&dyn ToSql; 18] {
        let info = &self.resource.info;
        [
            &info.uri,
            &info.name,
            &info.title,
            &info.description,
            &info.mime_type,
            &self.is_text,
            &self.blob,
            &self.size,
            &self.audience,
            &info.annotations.priority,
            &self.icons,
            &self.hash,
            &self.modified_at,
            &info.origin.path,
            &info.origin.collection,
            &self.meta,
            &info.origin.commit,
            &self.version,
        ]
    }
}

const RESOURCE_COLUMNS: &str = "resources (uri, name, title, description, mime_type, is_text,
    blob_hash, size, audience, priority, icons, content_hash, last_modified, origin, collection,
    meta, source_commit, version)";

/// An unchanged item's row given the file, collection and commit it was read from, when it
/// was read from another file or collection (its content, hash and version stay): the
/// same item, moved.
const MOVE_PROMPT: &str = "UPDATE prompts SET origin = ?2, collection = ?3, source_commit = ?4
    WHERE id = ?1 AND (origin IS NOT ?2 OR collection IS NOT ?3)";
const MOVE_RESOURCE: &str = "UPDATE resources SET origin = ?2, collection = ?3,
    source_commit = ?4 WHERE id = ?1 AND (origin IS NOT ?2 OR collection IS NOT ?3)";

/// `put_resource` for each of `resources` (no two with the same URI), with its
/// `modified_at`; what each put did, in their order. The new ones are inserted
/// `ROWS_PER_INSERT` to a statement; a changed one is written on its own.
pub(crate) fn put_resources(
    tx: &Transaction,
    resources: &[(&Resource, i64)],
) -> Result<Vec<Outcome>> {
    let mut outcomes = Vec::with_capacity(resources.len());
    let mut added = Vec::new();
    let mut replaced = Vec::new();
    for &(resource, modified_at) in resources {
        let info = &resource.info;
        let hash = hash_resource(resource);
        let existing: Option<(i64, Vec<u8>, Vec<u8>)> = tx
            .prepare_cached("SELECT id, content_hash, blob_hash FROM resources WHERE uri = ?1")?
            .query_row([&info.uri], |row| {
                Ok((row.get(0)?, row.get(1)?, row.get(2)?))
            })
            .optional()?;
        if let Some((id, stored, _)) = &existing
            && *stored == hash
        {
            tx.prepare_cached(MOVE_RESOURCE)?.execute(params![
                id,
                info.origin.path,
                info.origin.collection,
                info.origin.commit
            ])?;
            outcomes.push(Outcome::Unchanged);
            continue;
        }
        let bytes = resource.content.as_bytes();
        let blob = blobs::put(tx, bytes)?;
        let change = match existing {
            Some(_) => Change::Updated,
            None => Change::Added,
        };
        // Recorded first, so that its number goes in with the row.
        let version = history::resource_written(tx, resource, change)?;
        let audience: Vec<&str> = info.annotations.audience_names();
        let row = ResourceRow {
            resource,
            hash,
            blob,
            size: bytes.len() as i64,
            is_text: resource.content.is_text(),
            audience: json_or_null(&audience)?,
            icons: json_or_null(&info.icons)?,
            meta: meta_or_null(&info.meta)?,
            modified_at,
            version,
        };
        match existing {
            Some((_, _, old_blob)) => {
                tx.prepare_cached(
                    "UPDATE resources SET name = ?2, title = ?3, description = ?4,
                     mime_type = ?5, is_text = ?6, blob_hash = ?7, size = ?8, audience = ?9,
                     priority = ?10, icons = ?11, content_hash = ?12, last_modified = ?13,
                     origin = ?14, collection = ?15, meta = ?16, source_commit = ?17,
                     version = ?18 WHERE uri = ?1",
                )?
                .execute(&row.values()[..])?;
                replaced.push(old_blob);
                outcomes.push(Outcome::Updated);
            }
            None => {
                added.push(row);
                outcomes.push(Outcome::Added);
            }
        }
    }
    for batch in added.chunks(ROWS_PER_INSERT) {
        let values: Vec<&dyn ToSql> = batch.iter().flat_map(ResourceRow::values).collect();
        let sql = insert_sql(RESOURCE_COLUMNS, batch.len());
        tx.prepare_cached(&sql)?.execute(params_from_iter(values))?;
    }
    // Only now that the new rows are in: one may hold the content an updated one let go.
    for blob in &replaced {
        blobs::drop_if_unused(tx, blob)?;
    }
    Ok(outcomes)
}

pub(crate) fn remove_resource(tx: &Transaction, uri: &str) -> Result<bool> {
    let blob: Option<Vec<u8>> = tx
        .query_row(
            "DELETE FROM resources WHERE uri = ?1 RETURNING blob_hash",
            [uri],
            |row| row.get(0),
        )
        .optional()?;
    match blob {
        Some(blob) => {
            history::removed(tx, Kind::Resource, uri)?;
            blobs::drop_if_unused(tx, &blob)?;
            Ok(true)
        }
        None => Ok(false),
    }
}

pub(crate) fn put_template(
    tx: &Transaction,
    template: &ResourceTemplate,
    modified_at: i64,
) -> Result<Outcome> {
    let hash = hash_template(template);
    let existing: Option<(i64, Vec<u8>)> = tx
        .query_row(
            "SELECT id, content_hash FROM resource_templates WHERE uri_template = ?1",
            [&template.uri_template],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .optional()?;
    let icons = json_or_null(&template.icons)?;
    let outcome = match existing {
        Some((_, ref stored)) if *stored == hash => return Ok(Outcome::Unchanged),
        Some(_) => Outcome::Updated,
        None => Outcome::Added,
    };
    // Recorded first, so that its number goes in with the row.
    let version = history::template_written(tx, template, change_of(outcome), &hash)?;
    let id = match existing {
        Some((id, _)) => {
            tx.execute(
                "UPDATE resource_templates SET name = ?2, title = ?3, description = ?4,
                 mime_type = ?5, icons = ?6, collection = ?7, content_hash = ?8,
                 last_modified = ?9, version = ?10 WHERE id = ?1",
                params![
                    id,
                    template.name,
                    template.title,
                    template.description,
                    template.mime_type,
                    icons,
                    template.collection,
                    &hash[..],
                    modified_at,
                    version
                ],
            )?;
            tx.execute(
                "DELETE FROM template_variables WHERE template_id = ?1",
                [id],
            )?;
            id
        }
        None => {
            tx.execute(
                "INSERT INTO resource_templates (uri_template, name, title, description, mime_type,
                 icons, collection, content_hash, last_modified, version)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                params![
                    template.uri_template,
                    template.name,
                    template.title,
                    template.description,
                    template.mime_type,
                    icons,
                    template.collection,
                    &hash[..],
                    modified_at,
                    version
                ],
            )?;
            tx.last_insert_rowid()
        }
    };
    for (variable, table) in &template.completions {
        tx.execute(
            "INSERT INTO template_variables (template_id, name, completion_table) VALUES (?1, ?2, ?3)",
            params![id, variable, table],
        )?;
    }
    Ok(outcome)
}

pub(crate) fn remove_template(tx: &Transaction, uri_template: &str) -> Result<bool> {
    let removed = tx.execute(
        "DELETE FROM resource_templates WHERE uri_template = ?1",
        [uri_template],
    )? > 0;
    if removed {
        history::removed(tx, Kind::Template, uri_template)?;
    }
    Ok(removed)
}

/// Records that the collection `name` was imported from the folder `source` (None when its
/// path cannot be kept as text) at `at`: its `collections` row, made or replaced.
pub(crate) fn record_collection(
    tx: &Transaction,
    name: &str,
    source: Option<&str>,
    at: i64,
) -> Result<()> {
    tx.execute(
        "INSERT INTO collections (name, source, imported_at) VALUES (?1, ?2, ?3)
         ON CONFLICT (name) DO UPDATE SET source = excluded.source,
         imported_at = excluded.imported_at",
        params![name, source, at],
    )?;
    Ok(())
}

/// What removing a collection removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct CollectionRemoved {
    pub prompts: u64,
    pub resources: u64,
    pub templates: u64,
    /// Whether it had a `collections` row.
    pub recorded: bool,
}

impl CollectionRemoved {
    /// Whether there was any such collection.
    pub(crate) fn found(&self) -> bool {
        self.recorded || self.prompts + self.resources + self.templates > 0
    }
}

/// Removes the collection `name`: its prompts, resources (and the contents no other resource
/// shares), templates and row. Completion tables belong to no collection and stay. The
/// triggers log every item removed, so a running server notifies its hosts.
pub(crate) fn remove_collection(tx: &Transaction, name: &str) -> Result<CollectionRemoved> {
    let prompts = tx.execute("DELETE FROM prompts WHERE collection = ?1", [name])? as u64;
    let blobs: Vec<Vec<u8>> = tx
        .prepare("DELETE FROM resources WHERE collection = ?1 RETURNING blob_hash")?
        .query_map([name], |row| row.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let mut dropped = std::collections::HashSet::new();
    for blob in &blobs {
        if dropped.insert(blob) {
            blobs::drop_if_unused(tx, blob)?;
        }
    }
    let templates = tx.execute(
        "DELETE FROM resource_templates WHERE collection = ?1",
        [name],
    )? as u64;
    let recorded = tx.execute("DELETE FROM collections WHERE name = ?1", [name])? > 0;
    detached::clear_collection(tx, name)?;
    super::prefix::set(tx, name, None)?;
    Ok(CollectionRemoved {
        prompts,
        resources: blobs.len() as u64,
        templates,
        recorded,
    })
}

/// Gives the prompt `old` the name `new` (free, checked by the caller in the same
/// transaction), as a removal of `old` and an addition of `new` at `at`, so that the change
/// log says both and a host that holds `old` learns it is gone. Returns false when there is
/// no prompt `old`.
pub(crate) fn rename_prompt(tx: &Transaction, old: &str, new: &str, at: i64) -> Result<bool> {
    let Some(stored) = super::read::prompt(tx, old)? else {
        return Ok(false);
    };
    let mut prompt = stored.prompt;
    prompt.name = new.to_string();
    remove_prompt(tx, old)?;
    put_prompt(tx, &prompt, at)?;
    Ok(true)
}

/// Gives the resource `old` the URI `new` (free, checked by the caller in the same
/// transaction) and the name `name`, as a removal and an addition like `rename_prompt`; its
/// content stays stored once. Returns false when there is no resource `old`.
pub(crate) fn rename_resource(
    tx: &Transaction,
    old: &str,
    new: &str,
    name: &str,
    at: i64,
) -> Result<bool> {
    let Some((stored, content)) = super::read::resource_content(tx, old)? else {
        return Ok(false);
    };
    let mut info = stored.info;
    info.uri = new.to_string();
    info.name = name.to_string();
    // Added first, so that the content both share is never dropped in between.
    put_resource(tx, &Resource { info, content }, at)?;
    remove_resource(tx, old)?;
    Ok(true)
}

/// What writing a completion table's values did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ValuesWritten {
    /// How many values the table holds afterwards.
    pub total: u64,
    /// How many values were added or took a new weight (for a replacement that changed
    /// anything: all of them); 0 when the table was already so, and then nothing was written.
    pub changed: u64,
    /// Whether the table was created.
    pub created: bool,
}

/// Adds `values` to the completion table `name` (created if missing), or replaces its values.
/// A value already present (same value and context) takes the new weight. A table left as
/// it was keeps its version, so a server keeps its index and notifies nothing.
pub(crate) fn put_values(
    tx: &Transaction,
    name: &str,
    description: Option<&str>,
    values: &[CompletionValue],
    mode: ValuesMode,
) -> Result<ValuesWritten> {
    put_values_with_progress(tx, name, description, values, mode, |_| {})
}

/// Removes one value (every context of it) from a table, or the whole table when `value` is
/// None. Returns whether anything was removed.
pub(crate) fn remove_values(tx: &Transaction, table: &str, value: Option<&str>) -> Result<bool> {
    match value {
        None => {
            let removed = tx.execute("DELETE FROM completion_tables WHERE name = ?1", [table])? > 0;
            if removed {
                history::removed(tx, Kind::Values, table)?;
            }
            Ok(removed)
        }
        Some(value) => {
            let removed = tx.execute(
                "DELETE FROM completion_values WHERE value = ?2
                 AND table_id = (SELECT id FROM completion_tables WHERE name = ?1)",
                params![table, value],
            )?;
            if removed > 0 {
                tx.execute(
                    "UPDATE completion_tables SET version = version + 1 WHERE name = ?1",
                    [table],
                )?;
                history::values_written(tx, table, Change::Updated)?;
                let id: i64 = tx.query_row(
                    "SELECT id FROM completion_tables WHERE name = ?1",
                    [table],
                    |row| row.get(0),
                )?;
                store_index(tx, id)?;
            }
            Ok(removed > 0)
        }
    }
}

/// How many values `put_values_with_progress` writes between two progress reports.
const PROGRESS_EVERY: usize = 1024;

/// `put_values`, calling `progress` with the number of values written so far every
/// `PROGRESS_EVERY` values and at the end (for a progress bar on a long import).
pub(crate) fn put_values_with_progress(
    tx: &Transaction,
    name: &str,
    description: Option<&str>,
    values: &[CompletionValue],
    mode: ValuesMode,
    mut progress: impl FnMut(u64),
) -> Result<ValuesWritten> {
    let created = tx.execute(
        "INSERT INTO completion_tables (name, description) VALUES (?1, ?2)
         ON CONFLICT (name) DO NOTHING",
        params![name, description],
    )? > 0;
    let described = !created
        && description.is_some()
        && tx.execute(
            "UPDATE completion_tables SET description = ?2
             WHERE name = ?1 AND description IS NOT ?2",
            params![name, description],
        )? > 0;
    let id: i64 = tx.query_row(
        "SELECT id FROM completion_tables WHERE name = ?1",
        [name],
        |row| row.get(0),
    )?;
    let replacing = mode == ValuesMode::Replace && !holds_exactly(tx, id, values)?;
    if replacing {
        tx.execute("DELETE FROM completion_values WHERE table_id = ?1", [id])?;
    }
    let mut changed = 0u64;
    if mode == ValuesMode::Append || replacing {
        // A value already there with the same weight is left alone, so that it is not
        // counted as a change.
        let mut insert = tx.prepare_cached(
            "INSERT INTO completion_values (table_id, value, weight, context_name, context_value)
             VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT DO UPDATE SET weight = excluded.weight
             WHERE weight IS NOT excluded.weight",
        )?;
        for (done, value) in values.iter().enumerate() {
            if done % PROGRESS_EVERY == 0 {
                progress(done as u64);
            }
            let (context_name, context_value) = context_columns(value);
            changed += insert.execute(params![
                id,
                value.value,
                value.weight,
                context_name,
                context_value
            ])? as u64;
        }
    }
    progress(values.len() as u64);
    if replacing {
        changed = changed.max(1);
    }
    if created || described || changed > 0 {
        tx.execute(
            "UPDATE completion_tables SET version = version + 1 WHERE id = ?1",
            [id],
        )?;
        let change = if created {
            Change::Added
        } else {
            Change::Updated
        };
        history::values_written(tx, name, change)?;
        store_index(tx, id)?;
    }
    let total: i64 = tx.query_row(
        "SELECT count(*) FROM completion_values WHERE table_id = ?1",
        [id],
        |row| row.get(0),
    )?;
    Ok(ValuesWritten {
        total: total as u64,
        changed,
        created,
    })
}

/// The most a stored completion index may take: SQLite holds at most a billion bytes in one
/// value (`SQLITE_MAX_LENGTH`), and an index is encoded in about its size in memory. A table
/// whose index would be larger is stored without one; a server then builds it itself, or
/// refuses it past its `--max-index-bytes`.
const STORED_INDEX_MAX_BYTES: usize = 900_000_000;

/// Builds the index of completion table `id` from its values as they are now and stores it
/// with the table's version, in place of the one stored before (`completion_indexes`, read
/// by a server through `read::stored_index`). Called by every write that moves a table's
/// version, after it.
pub(super) fn store_index(tx: &Transaction, id: i64) -> Result<()> {
    tx.execute("DELETE FROM completion_indexes WHERE table_id = ?1", [id])?;
    let version: i64 = tx.query_row(
        "SELECT version FROM completion_tables WHERE id = ?1",
        [id],
        |row| row.get(0),
    )?;
    let index = super::read::build_index(tx, id, STORED_INDEX_MAX_BYTES)?;
    match index {
        Ok(index) => {
            tx.prepare_cached(
                "INSERT INTO completion_indexes (table_id, version, bytes) VALUES (?1, ?2, ?3)",
            )?
            .execute(params![id, version, index.encode()])?;
        }
        Err(err) => tracing::info!("completion table {id} is stored without its index: {err}"),
    }
    Ok(())
}

/// A value's context as the two columns store it ("" for none).
fn context_columns(value: &CompletionValue) -> (&str, &str) {
    match &value.context {
        Some((name, value)) => (name.as_str(), value.as_str()),
        None => ("", ""),
    }
}

/// Whether table `id` holds exactly `values` (a value given twice counts with its last
/// weight, as the insert would leave it).
fn holds_exactly(tx: &Transaction, id: i64, values: &[CompletionValue]) -> Result<bool> {
    let mut wanted = std::collections::HashMap::with_capacity(values.len());
    for value in values {
        wanted.insert(
            (value.value.as_str(), context_columns(value)),
            value.weight.to_bits(),
        );
    }
    let mut stmt = tx.prepare_cached(
        "SELECT value, weight, context_name, context_value FROM completion_values
         WHERE table_id = ?1",
    )?;
    let mut rows = stmt.query([id])?;
    let mut held = 0usize;
    while let Some(row) = rows.next()? {
        held += 1;
        let (value, weight, context_name, context_value): (String, f64, String, String) =
            (row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?);
        let key = (
            value.as_str(),
            (context_name.as_str(), context_value.as_str()),
        );
        if wanted.get(&key) != Some(&weight.to_bits()) {
            return Ok(false);
        }
    }
    Ok(held == wanted.len())
}
