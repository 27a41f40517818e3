//! Every read the server and the CLI make. Functions take a plain connection so the server
//! can run several on one pooled connection.

use rusqlite::{Connection, OptionalExtension, Row};
use serde::Serialize;

use super::{Result, StoreError, blobs};
use crate::complete::{IndexBuilder, TableIndex, TooLarge};
use crate::model::{
    Annotations, ArgumentType, CompletionValue, Content, ContentHash, Icon, MessageTemplate,
    Origin, Prompt, PromptArgument, ResourceInfo, ResourceTemplate, Role, StoredPrompt,
    StoredResource, StoredTemplate, TableSummary,
};

fn hash_column(row: &Row, index: usize) -> rusqlite::Result<ContentHash> {
    row.get_ref(index)?.as_blob()?.try_into().map_err(|_| {
        rusqlite::Error::FromSqlConversionFailure(
            index,
            rusqlite::types::Type::Blob,
            "a content hash is not 32 bytes".into(),
        )
    })
}

fn json_column<T: serde::de::DeserializeOwned + Default>(
    row: &Row,
    index: usize,
) -> rusqlite::Result<T> {
    // Borrowed from the row: parsed where SQLite holds it, not copied into a String first.
    let text = row.get_ref(index)?.as_str_or_null()?;
    match text {
        None => Ok(T::default()),
        Some(text) => serde_json::from_str(text).map_err(|err| {
            rusqlite::Error::FromSqlConversionFailure(
                index,
                rusqlite::types::Type::Text,
                err.into(),
            )
        }),
    }
}

const PROMPT_COLUMNS: &str = "id, name, title, description, icons, content_hash, last_modified,
    origin, collection, meta, version, source_commit";

fn prompt_row(row: &Row) -> rusqlite::Result<(i64, StoredPrompt)> {
    let icons: Vec<Icon> = json_column(row, 4)?;
    Ok((
        row.get(0)?,
        StoredPrompt {
            prompt: Prompt {
                name: row.get(1)?,
                title: row.get(2)?,
                description: row.get(3)?,
                icons,
                arguments: Vec::new(),
                messages: Vec::new(),
                origin: Origin {
                    path: row.get(7)?,
                    collection: row.get(8)?,
                    commit: row.get(11)?,
                },
                meta: json_column(row, 9)?,
            },
            content_hash: hash_column(row, 5)?,
            last_modified: row.get(6)?,
            version: row.get(10)?,
        },
    ))
}

fn argument_row(row: &Row) -> rusqlite::Result<PromptArgument> {
    let kind = ArgumentType::parse(row.get_ref(6)?.as_str()?).unwrap_or_default();
    Ok(PromptArgument {
        name: row.get(1)?,
        title: row.get(2)?,
        description: row.get(3)?,
        required: row.get(4)?,
        default: row.get(5)?,
        kind,
        values: json_column(row, 7)?,
        pattern: row.get(8)?,
        max_length: row.get::<_, Option<i64>>(9)?.map(|n| n.max(0) as u64),
        min: row.get(10)?,
        max: row.get(11)?,
        completion: row.get(12)?,
    })
}

const ARGUMENT_COLUMNS: &str = "prompt_id, name, title, description, required, default_value, type,
     enum_values, pattern, max_length, minimum, maximum, completion_table";

fn message_row(row: &Row) -> rusqlite::Result<MessageTemplate> {
    let role: String = row.get(1)?;
    Ok(MessageTemplate {
        role: Role::parse(&role).unwrap_or(Role::User),
        body: row.get(2)?,
    })
}

/// Which part of a list to read: the items whose key (a prompt's name, a resource's URI, a
/// template's text) sorts after `after`, in key order, at most `limit` of them. A page of a
/// list is a range of the key's index, however long the list.
#[derive(Debug, Clone, Copy)]
pub struct Window<'a> {
    pub after: &'a str,
    pub limit: Option<usize>,
}

impl Window<'_> {
    /// The whole list (every key is longer than "", the schema makes sure).
    pub const ALL: Window<'static> = Window {
        after: "",
        limit: None,
    };

    /// SQLite's LIMIT: -1 for none.
    fn sql_limit(&self) -> i64 {
        self.limit
            .map_or(-1, |limit| i64::try_from(limit).unwrap_or(i64::MAX))
    }
}

/// The prompts in `window`, by name, with their arguments, and with their message templates
/// when `with_messages` (listings need no bodies, and bodies are most of a prompt's size).
pub fn prompts(
    conn: &Connection,
    window: Window,
    with_messages: bool,
) -> Result<Vec<StoredPrompt>> {
    prompts_within(conn, window, with_messages, None)
}

/// `prompts`, of the collections `within` alone (None: of the whole library).
pub(crate) fn prompts_within(
    conn: &Connection,
    window: Window,
    with_messages: bool,
    within: Option<&[String]>,
) -> Result<Vec<StoredPrompt>> {
    let among = among(within, 3);
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {PROMPT_COLUMNS} FROM prompts WHERE name > ?1{among} ORDER BY name LIMIT ?2"
    ))?;
    let bounds = window_bounds(window, within)?;
    let bounds = rusqlite::params_from_iter(bounds.iter());
    let mut prompts: Vec<(i64, StoredPrompt)> = stmt
        .query_map(bounds.clone(), prompt_row)?
        .collect::<rusqlite::Result<_>>()?;
    let index: std::collections::HashMap<i64, usize> = prompts
        .iter()
        .enumerate()
        .map(|(at, (id, _))| (*id, at))
        .collect();
    // The same window's ids: its rows of each table are a range of that table's key.
    let window_ids =
        format!("SELECT id FROM prompts WHERE name > ?1{among} ORDER BY name LIMIT ?2");
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {ARGUMENT_COLUMNS} FROM prompt_arguments WHERE prompt_id IN ({window_ids})
         ORDER BY prompt_id, position"
    ))?;
    let mut rows = stmt.query(bounds.clone())?;
    while let Some(row) = rows.next()? {
        let id: i64 = row.get(0)?;
        if let Some(&at) = index.get(&id) {
            prompts[at].1.prompt.arguments.push(argument_row(row)?);
        }
    }
    if !with_messages {
        return Ok(prompts.into_iter().map(|(_, prompt)| prompt).collect());
    }
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT prompt_id, role, body FROM prompt_messages WHERE prompt_id IN ({window_ids})
         ORDER BY prompt_id, position"
    ))?;
    let mut rows = stmt.query(bounds)?;
    while let Some(row) = rows.next()? {
        let id: i64 = row.get(0)?;
        if let Some(&at) = index.get(&id) {
            prompts[at].1.prompt.messages.push(message_row(row)?);
        }
    }
    Ok(prompts.into_iter().map(|(_, prompt)| prompt).collect())
}

/// The condition that keeps a read to the collections `within`, bound as a JSON array to
/// parameter `param` (`json_each` reads it): "" for the whole library. Written after the
/// key's condition, so SQLite searches the `*_by_collection` index (collection, key) once
/// per collection rather than the key's index across the library.
fn among(within: Option<&[String]>, param: usize) -> String {
    match within {
        None => String::new(),
        Some(_) => format!(" AND collection IN (SELECT value FROM json_each(?{param}))"),
    }
}

/// The collections `within` as the JSON array `among`'s parameter takes.
fn names_json(names: &[String]) -> Result<String> {
    serde_json::to_string(names)
        .map_err(|err| StoreError::Invalid(format!("collection names as JSON: {err}")))
}

/// A window's parameters (`?1` after, `?2` limit), then `within`'s (`?3`) when it is given.
fn window_bounds(window: Window, within: Option<&[String]>) -> Result<Vec<rusqlite::types::Value>> {
    use rusqlite::types::Value;
    let mut bounds = vec![
        Value::Text(window.after.to_string()),
        Value::Integer(window.sql_limit()),
    ];
    if let Some(names) = within {
        bounds.push(Value::Text(names_json(names)?));
    }
    Ok(bounds)
}

pub(crate) fn prompt(conn: &Connection, name: &str) -> Result<Option<StoredPrompt>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {PROMPT_COLUMNS} FROM prompts WHERE name = ?1"
    ))?;
    let Some((id, mut stored)) = stmt.query_row([name], prompt_row).optional()? else {
        return Ok(None);
    };
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {ARGUMENT_COLUMNS} FROM prompt_arguments WHERE prompt_id = ?1 ORDER BY position"
    ))?;
    stored.prompt.arguments = stmt
        .query_map([id], argument_row)?
        .collect::<rusqlite::Result<_>>()?;
    let mut stmt = conn.prepare_cached(
        "SELECT prompt_id, role, body FROM prompt_messages WHERE prompt_id = ?1 ORDER BY position",
    )?;
    stored.prompt.messages = stmt
        .query_map([id], message_row)?
        .collect::<rusqlite::Result<_>>()?;
    Ok(Some(stored))
}

pub(crate) fn prompt_names(conn: &Connection) -> Result<Vec<String>> {
    let mut stmt = conn.prepare_cached("SELECT name FROM prompts ORDER BY name")?;
    Ok(stmt
        .query_map([], |row| row.get(0))?
        .collect::<rusqlite::Result<_>>()?)
}

/// `prompt_names`, of the collections `within` alone (None: of the whole library).
pub(crate) fn prompt_names_within(
    conn: &Connection,
    within: Option<&[String]>,
) -> Result<Vec<String>> {
    let Some(names) = within else {
        return prompt_names(conn);
    };
    let mut stmt = conn.prepare_cached(
        "SELECT name FROM prompts WHERE collection IN (SELECT value FROM json_each(?1))
         ORDER BY name",
    )?;
    Ok(stmt
        .query_map([names_json(names)?], |row| row.get(0))?
        .collect::<rusqlite::Result<_>>()?)
}

/// Qualified, because `resource_content` joins `blobs`, which has a `size` of its own.
const RESOURCE_COLUMNS: &str = "resources.uri, resources.name, resources.title,
     resources.description, resources.mime_type, resources.is_text, resources.blob_hash,
     resources.size, resources.audience, resources.priority, resources.icons,
     resources.content_hash, resources.last_modified, resources.origin, resources.collection,
     resources.meta, resources.version, resources.source_commit";

fn resource_row(row: &Row) -> rusqlite::Result<StoredResource> {
    let audience: Vec<String> = json_column(row, 8)?;
    Ok(StoredResource {
        info: ResourceInfo {
            uri: row.get(0)?,
            name: row.get(1)?,
            title: row.get(2)?,
            description: row.get(3)?,
            mime_type: row.get(4)?,
            annotations: Annotations {
                audience: audience
                    .iter()
                    .filter_map(|role| Role::parse(role))
                    .collect(),
                priority: row.get(9)?,
            },
            icons: json_column(row, 10)?,
            origin: Origin {
                path: row.get(13)?,
                collection: row.get(14)?,
                commit: row.get(17)?,
            },
            meta: json_column(row, 15)?,
        },
        is_text: row.get(5)?,
        blob_hash: hash_column(row, 6)?,
        size: row.get::<_, i64>(7)?.max(0) as u64,
        content_hash: hash_column(row, 11)?,
        last_modified: row.get(12)?,
        version: row.get(16)?,
    })
}

/// The metadata of the resources in `window`, by URI.
pub(crate) fn resources(conn: &Connection, window: Window) -> Result<Vec<StoredResource>> {
    resources_within(conn, window, None)
}

/// `resources`, of the collections `within` alone (None: of the whole library).
pub(crate) fn resources_within(
    conn: &Connection,
    window: Window,
    within: Option<&[String]>,
) -> Result<Vec<StoredResource>> {
    let among = among(within, 3);
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {RESOURCE_COLUMNS} FROM resources WHERE uri > ?1{among} ORDER BY uri LIMIT ?2"
    ))?;
    let bounds = window_bounds(window, within)?;
    Ok(stmt
        .query_map(rusqlite::params_from_iter(bounds.iter()), resource_row)?
        .collect::<rusqlite::Result<_>>()?)
}

pub(crate) fn resource(conn: &Connection, uri: &str) -> Result<Option<StoredResource>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {RESOURCE_COLUMNS} FROM resources WHERE uri = ?1"
    ))?;
    Ok(stmt.query_row([uri], resource_row).optional()?)
}

/// A resource with its content.
pub(crate) fn resource_content(
    conn: &Connection,
    uri: &str,
) -> Result<Option<(StoredResource, Content)>> {
    let found = resource_content_up_to(conn, uri, u64::MAX)?;
    Ok(found.and_then(|(stored, content)| Some((stored, content?))))
}

/// `resource_content`, the content only when it is at most `max_bytes` (None otherwise,
/// and the content is not read): for a reader that must not be held up by a large one.
pub(crate) fn resource_content_up_to(
    conn: &Connection,
    uri: &str,
    max_bytes: u64,
) -> Result<Option<(StoredResource, Option<Content>)>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {RESOURCE_COLUMNS}, CASE WHEN resources.size <= ?2 THEN blobs.data END,
                blobs.packing
         FROM resources JOIN blobs ON blobs.hash = resources.blob_hash WHERE uri = ?1"
    ))?;
    let max_bytes = i64::try_from(max_bytes).unwrap_or(i64::MAX);
    let found = stmt
        .query_row(rusqlite::params![uri, max_bytes], |row| {
            let stored = resource_row(row)?;
            let data: Option<Vec<u8>> = row.get(18)?;
            let packing: i64 = row.get(19)?;
            Ok((stored, data, packing))
        })
        .optional()?;
    let Some((stored, data, packing)) = found else {
        return Ok(None);
    };
    let Some(data) = data else {
        return Ok(Some((stored, None)));
    };
    let data = blobs::unpack(data, packing, stored.size as i64)?;
    let content =
        if stored.is_text {
            Content::Text(String::from_utf8(data).map_err(|_| {
                StoreError::Invalid(format!("text resource {uri} holds invalid UTF-8"))
            })?)
        } else {
            Content::Binary(data)
        };
    Ok(Some((stored, Some(content))))
}

/// URIs of stored resources starting with `prefix`, in order (for completing templates):
/// a range of the URI index, `prefix` up to the first string after every string with it.
pub(crate) fn resource_uris_with_prefix(conn: &Connection, prefix: &str) -> Result<Vec<String>> {
    resource_uris_with_prefix_within(conn, prefix, None)
}

/// `resource_uris_with_prefix`, of the collections `within` alone (None: of the whole
/// library).
pub(crate) fn resource_uris_with_prefix_within(
    conn: &Connection,
    prefix: &str,
    within: Option<&[String]>,
) -> Result<Vec<String>> {
    use rusqlite::types::Value;
    let among = among(within, 3);
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT uri FROM resources WHERE uri >= ?1 AND (?2 IS NULL OR uri < ?2){among} ORDER BY uri"
    ))?;
    let mut bounds = vec![
        Value::Text(prefix.to_string()),
        after_prefix(prefix).map_or(Value::Null, Value::Text),
    ];
    if let Some(names) = within {
        bounds.push(Value::Text(names_json(names)?));
    }
    Ok(stmt
        .query_map(rusqlite::params_from_iter(bounds.iter()), |row| row.get(0))?
        .collect::<rusqlite::Result<_>>()?)
}

/// The resources in `window` whose URI starts with `prefix` and ends with `suffix`, by URI,
/// of the collections `within` alone (None: of the whole library): a range of the URI
/// index (`prefix` up to the first string after those with it), filtered as it is read.
pub(crate) fn resources_framed_within(
    conn: &Connection,
    window: Window,
    prefix: &str,
    suffix: &str,
    within: Option<&[String]>,
) -> Result<Vec<StoredResource>> {
    use rusqlite::types::Value;
    let among = among(within, 5);
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {RESOURCE_COLUMNS} FROM resources
         WHERE uri > ?1 AND uri >= ?3 AND (?4 IS NULL OR uri < ?4)
           AND substr(uri, length(uri) - length(?6) + 1) = ?6{among}
         ORDER BY uri LIMIT ?2"
    ))?;
    let mut bounds = vec![
        Value::Text(window.after.to_string()),
        Value::Integer(window.sql_limit()),
        Value::Text(prefix.to_string()),
        after_prefix(prefix).map_or(Value::Null, Value::Text),
    ];
    bounds.push(match within {
        Some(names) => Value::Text(names_json(names)?),
        None => Value::Null,
    });
    bounds.push(Value::Text(suffix.to_string()));
    Ok(stmt
        .query_map(rusqlite::params_from_iter(bounds.iter()), resource_row)?
        .collect::<rusqlite::Result<_>>()?)
}

/// The first resource by URI after `after` and from `from` on, before `below`, of the
/// collections `within` alone (None: of the whole library): one search of the URI index.
pub(crate) fn first_resource_within(
    conn: &Connection,
    after: &str,
    from: &str,
    below: &str,
    within: Option<&[String]>,
) -> Result<Option<StoredResource>> {
    use rusqlite::types::Value;
    let among = among(within, 4);
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {RESOURCE_COLUMNS} FROM resources
         WHERE uri > ?1 AND uri >= ?2 AND uri < ?3{among} ORDER BY uri LIMIT 1"
    ))?;
    let mut bounds = vec![
        Value::Text(after.to_string()),
        Value::Text(from.to_string()),
        Value::Text(below.to_string()),
    ];
    if let Some(names) = within {
        bounds.push(Value::Text(names_json(names)?));
    }
    Ok(stmt
        .query_row(rusqlite::params_from_iter(bounds.iter()), resource_row)
        .optional()?)
}

/// The bytes of the content stored under `hash` (a resource's `blob_hash`).
pub(crate) fn blob(conn: &Connection, hash: &[u8; 32]) -> Result<Option<Vec<u8>>> {
    let mut stmt = conn.prepare_cached("SELECT data, packing, size FROM blobs WHERE hash = ?1")?;
    let found = stmt
        .query_row([&hash[..]], |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?))
        })
        .optional()?;
    found
        .map(|(data, packing, size)| blobs::unpack(data, packing, size))
        .transpose()
}

/// The least string greater than every string that starts with `prefix` (None for the
/// empty prefix, which every string has): its last character that has a successor, moved
/// on by one. SQLite compares text byte by byte, and UTF-8's byte order is code point order.
fn after_prefix(prefix: &str) -> Option<String> {
    let mut chars: Vec<char> = prefix.chars().collect();
    while let Some(last) = chars.pop() {
        // The next scalar value: surrogates are skipped, U+10FFFF has none.
        let next = (last as u32 + 1..=char::MAX as u32).find_map(char::from_u32);
        if let Some(next) = next {
            chars.push(next);
            return Some(chars.into_iter().collect());
        }
    }
    None
}

/// The three lists a client pages through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Listed {
    Prompts,
    Resources,
    Templates,
}

/// What a page of a list is told of the whole list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Listing {
    /// The change-log position of the list's last change: a cursor is bound to it.
    pub version: i64,
    /// The newest `last_modified` in the list (Unix ms; 0 when it is empty).
    pub last_modified: i64,
}

/// The listing of `list`: two index lookups (the change log by kind, `last_modified`).
pub(crate) fn listing(conn: &Connection, list: Listed) -> Result<Listing> {
    let (kind, table) = match list {
        Listed::Prompts => ("prompt", "prompts"),
        Listed::Resources => ("resource", "resources"),
        Listed::Templates => ("template", "resource_templates"),
    };
    Ok(conn
        .prepare_cached(&format!(
            "SELECT (SELECT coalesce(max(seq), 0) FROM change_log WHERE kind = '{kind}'),
                    (SELECT coalesce(max(last_modified), 0) FROM {table})"
        ))?
        .query_row([], |row| {
            Ok(Listing {
                version: row.get(0)?,
                last_modified: row.get(1)?,
            })
        })?)
}

/// What the handshake reports of the library.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Summary {
    pub prompts: i64,
    pub resources: i64,
    /// When the newest prompt, resource or template changed (Unix ms; 0 for none).
    pub last_modified: i64,
}

/// The library's summary, from the counts the write triggers keep and the `last_modified`
/// indexes: a few page reads however large the library is.
pub(crate) fn summary(conn: &Connection) -> Result<Summary> {
    Ok(conn
        .prepare_cached(
            "SELECT (SELECT items FROM item_counts WHERE kind = 'prompt'),
                    (SELECT items FROM item_counts WHERE kind = 'resource'),
                    max(coalesce((SELECT max(last_modified) FROM prompts), 0),
                        coalesce((SELECT max(last_modified) FROM resources), 0),
                        coalesce((SELECT max(last_modified) FROM resource_templates), 0))",
        )?
        .query_row([], |row| {
            Ok(Summary {
                prompts: row.get(0)?,
                resources: row.get(1)?,
                last_modified: row.get(2)?,
            })
        })?)
}

/// Every resource template, by URI template, with its variables' completion tables.
pub(crate) fn templates(conn: &Connection, window: Window) -> Result<Vec<StoredTemplate>> {
    templates_within(conn, window, None)
}

/// `templates`, of the collections `within` alone (None: of the whole library).
pub(crate) fn templates_within(
    conn: &Connection,
    window: Window,
    within: Option<&[String]>,
) -> Result<Vec<StoredTemplate>> {
    let among = among(within, 3);
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT id, uri_template, name, title, description, mime_type, icons, collection,
         content_hash, last_modified, version FROM resource_templates
         WHERE uri_template > ?1{among} ORDER BY uri_template LIMIT ?2"
    ))?;
    let bounds = window_bounds(window, within)?;
    let rows: Vec<(i64, StoredTemplate)> = stmt
        .query_map(rusqlite::params_from_iter(bounds.iter()), |row| {
            Ok((
                row.get(0)?,
                StoredTemplate {
                    template: ResourceTemplate {
                        uri_template: row.get(1)?,
                        name: row.get(2)?,
                        title: row.get(3)?,
                        description: row.get(4)?,
                        mime_type: row.get(5)?,
                        icons: json_column(row, 6)?,
                        completions: Vec::new(),
                        collection: row.get(7)?,
                    },
                    content_hash: hash_column(row, 8)?,
                    last_modified: row.get(9)?,
                    version: row.get(10)?,
                },
            ))
        })?
        .collect::<rusqlite::Result<_>>()?;
    let mut stmt = conn.prepare_cached(
        "SELECT name, completion_table FROM template_variables WHERE template_id = ?1 ORDER BY name",
    )?;
    let mut templates = Vec::with_capacity(rows.len());
    for (id, mut stored) in rows {
        stored.template.completions = stmt
            .query_map([id], |row| Ok((row.get(0)?, row.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?;
        templates.push(stored);
    }
    Ok(templates)
}

pub(crate) fn tables(conn: &Connection) -> Result<Vec<TableSummary>> {
    let mut stmt = conn.prepare_cached(
        "SELECT name, description, (SELECT count(*) FROM completion_values WHERE table_id = id)
         FROM completion_tables ORDER BY name",
    )?;
    Ok(stmt
        .query_map([], |row| {
            Ok(TableSummary {
                name: row.get(0)?,
                description: row.get(1)?,
                values: row.get::<_, i64>(2)?.max(0) as u64,
            })
        })?
        .collect::<rusqlite::Result<_>>()?)
}

/// The values of a table in storage order (by value), or None when there is no such table.
pub(crate) fn table_values(conn: &Connection, name: &str) -> Result<Option<Vec<CompletionValue>>> {
    let id: Option<i64> = conn
        .prepare_cached("SELECT id FROM completion_tables WHERE name = ?1")?
        .query_row([name], |row| row.get(0))
        .optional()?;
    let Some(id) = id else { return Ok(None) };
    let mut stmt = conn.prepare_cached(
        "SELECT value, weight, context_name, context_value FROM completion_values
         WHERE table_id = ?1 ORDER BY value, context_name, context_value",
    )?;
    let values = stmt
        .query_map([id], |row| {
            let context_name: String = row.get(2)?;
            let context_value: String = row.get(3)?;
            Ok(CompletionValue {
                value: row.get(0)?,
                weight: row.get(1)?,
                context: (!context_name.is_empty()).then_some((context_name, context_value)),
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    Ok(Some(values))
}

/// What an importer needs to know of a stored prompt or resource to plan a change without
/// reading the item itself.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ItemState {
    /// The prompt's name or the resource's URI.
    pub key: String,
    pub content_hash: ContentHash,
    pub last_modified: i64,
    /// Its collection and file; not its commit (a plan compares files, `Origin::same_file`).
    pub origin: Origin,
}

/// Every prompt's state, by name.
pub(crate) fn prompt_states(conn: &Connection) -> Result<Vec<ItemState>> {
    item_states(
        conn,
        "SELECT name, content_hash, last_modified, origin, collection FROM prompts",
    )
}

/// Every resource's state, by URI.
pub(crate) fn resource_states(conn: &Connection) -> Result<Vec<ItemState>> {
    item_states(
        conn,
        "SELECT uri, content_hash, last_modified, origin, collection FROM resources",
    )
}

fn item_states(conn: &Connection, sql: &str) -> Result<Vec<ItemState>> {
    let mut stmt = conn.prepare_cached(sql)?;
    Ok(stmt
        .query_map([], |row| {
            Ok(ItemState {
                key: row.get(0)?,
                content_hash: hash_column(row, 1)?,
                last_modified: row.get(2)?,
                origin: Origin {
                    path: row.get(3)?,
                    collection: row.get(4)?,
                    commit: None,
                },
            })
        })?
        .collect::<rusqlite::Result<_>>()?)
}

/// A completion table's id and version (bumped by every change to its values), or None when
/// there is no such table. Cheap: what a server checks before trusting its in-memory index.
pub(crate) fn table_version(conn: &Connection, name: &str) -> Result<Option<(i64, i64)>> {
    Ok(conn
        .prepare_cached("SELECT id, version FROM completion_tables WHERE name = ?1")?
        .query_row([name], |row| Ok((row.get(0)?, row.get(1)?)))
        .optional()?)
}

/// Calls `each` with every value of the table with this id: the value, its weight and its
/// context (None when it has none), in storage order, without collecting them first.
pub(crate) fn each_table_value(
    conn: &Connection,
    table_id: i64,
    mut each: impl FnMut(&str, f64, Option<(&str, &str)>) -> Result<()>,
) -> Result<()> {
    let mut stmt = conn.prepare_cached(
        "SELECT value, weight, context_name, context_value FROM completion_values
         WHERE table_id = ?1",
    )?;
    let mut rows = stmt.query([table_id])?;
    while let Some(row) = rows.next()? {
        let value = row.get_ref(0)?.as_str().map_err(rusqlite::Error::from)?;
        let context_name = row.get_ref(2)?.as_str().map_err(rusqlite::Error::from)?;
        let context_value = row.get_ref(3)?.as_str().map_err(rusqlite::Error::from)?;
        let context = (!context_name.is_empty()).then_some((context_name, context_value));
        each(value, row.get(1)?, context)?;
    }
    Ok(())
}

/// The index of the table with this id built from its values as they are now, within
/// `max_bytes` (`IndexBuilder::within`): the inner error when it would take more, or when
/// the table is too large to index at all. What a write stores and what a server builds
/// when nothing it can use is stored.
pub(crate) fn build_index(
    conn: &Connection,
    table_id: i64,
    max_bytes: usize,
) -> Result<std::result::Result<TableIndex, TooLarge>> {
    let mut builder = IndexBuilder::within(max_bytes);
    let mut too_large = None;
    let read = each_table_value(conn, table_id, |value, weight, context| {
        builder.push(value, weight, context).map_err(|err| {
            // Stops the read; told apart from a store error below.
            let stop = StoreError::Invalid(err.to_string());
            too_large = Some(err);
            stop
        })
    });
    match (read, too_large) {
        (_, Some(err)) => Ok(Err(err)),
        (Err(err), None) => Err(err),
        (Ok(()), None) => Ok(builder.finish()),
    }
}

/// The bytes of the index stored for completion table `table_id` (`write::store_index`,
/// `TableIndex::encode`), if it was built at `version`: a handle to read them a piece at a
/// time, so they are never held beside the index they make, and whose length says what
/// they will take before they are read. None when none is stored for that version.
pub(crate) fn stored_index(
    conn: &Connection,
    table_id: i64,
    version: i64,
) -> Result<Option<rusqlite::blob::Blob<'_>>> {
    let stored: Option<i64> = conn
        .prepare_cached("SELECT version FROM completion_indexes WHERE table_id = ?1")?
        .query_row([table_id], |row| row.get(0))
        .optional()?;
    if stored != Some(version) {
        return Ok(None);
    }
    let blob = conn.blob_open(
        rusqlite::MAIN_DB,
        c"completion_indexes",
        c"bytes",
        table_id,
        true,
    )?;
    Ok(Some(blob))
}

/// The database's secret for signing `requestState`.
pub fn secret(conn: &Connection) -> Result<Vec<u8>> {
    Ok(
        conn.query_row("SELECT value FROM meta WHERE key = 'secret'", [], |row| {
            row.get(0)
        })?,
    )
}

/// Where a collection was last imported from and when (its `collections` row).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CollectionSource {
    /// The folder's absolute path; None when not known.
    pub source: Option<String>,
    /// Unix milliseconds of the last import that wrote something; None when not known.
    pub imported_at: Option<i64>,
}

/// The `collections` row of `name`, None when it has none.
pub(crate) fn collection(conn: &Connection, name: &str) -> Result<Option<CollectionSource>> {
    Ok(conn
        .prepare_cached("SELECT source, imported_at FROM collections WHERE name = ?1")?
        .query_row([name], |row| {
            Ok(CollectionSource {
                source: row.get(0)?,
                imported_at: row.get(1)?,
            })
        })
        .optional()?)
}

/// The URI scheme of the collection `name`'s resources (of its template when it has none),
/// which an import of its folder must be given again; None when neither is stored.
pub(crate) fn collection_scheme(conn: &Connection, name: &str) -> Result<Option<String>> {
    let uri: Option<String> = conn
        .prepare_cached(
            "SELECT uri FROM (SELECT uri, 0 AS rank FROM resources WHERE collection = ?1
             UNION ALL SELECT uri_template, 1 FROM resource_templates WHERE collection = ?1)
             ORDER BY rank LIMIT 1",
        )?
        .query_row([name], |row| row.get(0))
        .optional()?;
    Ok(uri.and_then(|uri| uri.split_once("://").map(|(scheme, _)| scheme.to_string())))
}

/// A collection as `collection list` shows it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CollectionSummary {
    pub name: String,
    pub source: CollectionSource,
    pub prompts: u64,
    pub resources: u64,
    pub templates: u64,
}

/// Every collection, by name: those with a `collections` row and those only items name
/// (the seed's, or any that lost its row), each with how many items it holds.
pub(crate) fn collections(conn: &Connection) -> Result<Vec<CollectionSummary>> {
    let mut stmt = conn.prepare_cached(
        "WITH names (name) AS (
             SELECT name FROM collections
             UNION SELECT collection FROM prompts WHERE collection IS NOT NULL
             UNION SELECT collection FROM resources WHERE collection IS NOT NULL
             UNION SELECT collection FROM resource_templates WHERE collection IS NOT NULL)
         SELECT names.name, collections.source, collections.imported_at,
             (SELECT count(*) FROM prompts WHERE collection = names.name),
             (SELECT count(*) FROM resources WHERE collection = names.name),
             (SELECT count(*) FROM resource_templates WHERE collection = names.name)
         FROM names LEFT JOIN collections ON collections.name = names.name
         ORDER BY names.name",
    )?;
    let count = |row: &Row, index: usize| -> rusqlite::Result<u64> {
        Ok(row.get::<_, i64>(index)?.max(0) as u64)
    };
    Ok(stmt
        .query_map([], |row| {
            Ok(CollectionSummary {
                name: row.get(0)?,
                source: CollectionSource {
                    source: row.get(1)?,
                    imported_at: row.get(2)?,
                },
                prompts: count(row, 3)?,
                resources: count(row, 4)?,
                templates: count(row, 5)?,
            })
        })?
        .collect::<rusqlite::Result<_>>()?)
}

/// What refers to the resource `uri` by its text: the prompts whose message templates hold
/// it (an `embed` or `link` of it) and the other text resources whose content holds it (a
/// link an import rewrote to it), as (`prompt` or `resource`, name or URI), in that order.
/// A scan of the bodies; for the commands that rename or remove, not for serving.
pub(crate) fn referring_to(conn: &Connection, uri: &str) -> Result<Vec<(&'static str, String)>> {
    let mut found = Vec::new();
    let mut stmt = conn.prepare_cached(
        "SELECT DISTINCT prompts.name FROM prompts
         JOIN prompt_messages ON prompt_messages.prompt_id = prompts.id
         WHERE instr(prompt_messages.body, ?1) > 0 ORDER BY prompts.name",
    )?;
    for name in stmt.query_map([uri], |row| row.get::<_, String>(0))? {
        found.push(("prompt", name?));
    }
    let mut stmt = conn.prepare_cached(
        "SELECT resources.uri FROM resources JOIN blobs ON blobs.hash = resources.blob_hash
         WHERE resources.is_text AND resources.uri <> ?1
           AND instr(CAST(unpacked(blobs.data, blobs.packing, blobs.size) AS TEXT), ?1) > 0
         ORDER BY resources.uri",
    )?;
    for other in stmt.query_map([uri], |row| row.get::<_, String>(0))? {
        found.push(("resource", other?));
    }
    Ok(found)
}

/// Counts for `promptshelf stats`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Stats {
    pub prompts: u64,
    pub resources: u64,
    pub templates: u64,
    pub tables: u64,
    pub values: u64,
    pub blobs: u64,
    pub blob_bytes: u64,
    pub changes: u64,
    pub schema_version: i64,
    pub file_bytes: u64,
}

pub(crate) fn stats(conn: &Connection) -> Result<Stats> {
    let count = |sql: &str| -> Result<u64> {
        Ok(conn.query_row(sql, [], |row| row.get::<_, i64>(0))?.max(0) as u64)
    };
    let page_size = count("PRAGMA page_size")?;
    let page_count = count("PRAGMA page_count")?;
    Ok(Stats {
        prompts: count("SELECT count(*) FROM prompts")?,
        resources: count("SELECT count(*) FROM resources")?,
        templates: count("SELECT count(*) FROM resource_templates")?,
        tables: count("SELECT count(*) FROM completion_tables")?,
        values: count("SELECT count(*) FROM completion_values")?,
        blobs: count("SELECT count(*) FROM blobs")?,
        blob_bytes: count("SELECT coalesce(sum(size), 0) FROM blobs")?,
        changes: count("SELECT count(*) FROM change_log")?,
        schema_version: conn.query_row("PRAGMA user_version", [], |row| row.get(0))?,
        file_bytes: page_size * page_count,
    })
}

/// One row of the change log.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Change {
    pub seq: i64,
    pub at: i64,
    pub kind: String,
    pub op: String,
    pub key: String,
    /// The release channel whose label moved (`store::labels`); None for the library.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub channel: Option<String>,
}

/// Change-log rows after `after`, oldest first.
pub(crate) fn changes_since(conn: &Connection, after: i64) -> Result<Vec<Change>> {
    let mut stmt = conn.prepare_cached(
        "SELECT seq, at, kind, op, key, channel FROM change_log WHERE seq > ?1 ORDER BY seq",
    )?;
    Ok(stmt
        .query_map([after], |row| {
            Ok(Change {
                seq: row.get(0)?,
                at: row.get(1)?,
                kind: row.get(2)?,
                op: row.get(3)?,
                key: row.get(4)?,
                channel: row.get(5)?,
            })
        })?
        .collect::<rusqlite::Result<_>>()?)
}

/// Where the item a change-log row names is now: None when the library (or the row's
/// channel) no longer holds it (the log keeps no collection, so a deleted item's is not
/// known any more), Some(None) when it belongs to no collection. One search of the kind's
/// key index; on a channel, of its labels, and the collection its labelled version names.
pub(crate) fn collection_of(conn: &Connection, change: &Change) -> Result<Option<Option<String>>> {
    if let Some(channel) = &change.channel {
        let path = match change.kind.as_str() {
            "prompt" => "$.origin.collection",
            "resource" => "$.info.origin.collection",
            "template" => "$.collection",
            _ => return Ok(Some(None)),
        };
        return Ok(conn
            .prepare_cached(
                "SELECT json_extract(v.snapshot, ?4) FROM labels l
                 JOIN whole_versions v ON v.id = l.version
                 WHERE l.label = ?1 AND l.kind = ?2 AND l.key = ?3",
            )?
            .query_row(
                rusqlite::params![channel, change.kind, change.key, path],
                |row| row.get(0),
            )
            .optional()?);
    }
    let sql = match change.kind.as_str() {
        "prompt" => "SELECT collection FROM prompts WHERE name = ?1",
        "resource" => "SELECT collection FROM resources WHERE uri = ?1",
        "template" => "SELECT collection FROM resource_templates WHERE uri_template = ?1",
        // Completion tables belong to no collection.
        _ => return Ok(Some(None)),
    };
    Ok(conn
        .prepare_cached(sql)?
        .query_row([&change.key], |row| row.get(0))
        .optional()?)
}

/// The change log's last position: it moves with every change a client could see.
pub(crate) fn change_position(conn: &Connection) -> Result<i64> {
    Ok(conn
        .prepare_cached("SELECT coalesce(max(seq), 0) FROM change_log")?
        .query_row([], |row| row.get(0))?)
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    /// The statements run on the traced connection, as SQLite expanded them.
    static STATEMENTS: Mutex<Vec<String>> = Mutex::new(Vec::new());

    fn keep(event: rusqlite::trace::TraceEvent<'_>) {
        if let rusqlite::trace::TraceEvent::Stmt(statement, sql) = event {
            let expanded = statement.expanded_sql().unwrap_or_else(|| sql.to_string());
            STATEMENTS
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(expanded);
        }
    }

    /// What SQLite plans for `sql`: one line per step.
    fn plan(conn: &Connection, sql: &str) -> Vec<String> {
        let mut stmt = conn
            .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
            .unwrap_or_else(|err| panic!("explain {sql}: {err}"));
        stmt.query_map([], |row| row.get::<_, String>(3))
            .expect("query plan")
            .collect::<rusqlite::Result<_>>()
            .expect("plan rows")
    }

    /// A page of a list binds its `LIMIT`: SQLite, left to itself, reads that value while
    /// planning and prepares the statement again whenever it is bound anew (every page,
    /// every request). A connection the store configures plans once.
    #[test]
    fn a_bound_limit_does_not_make_a_statement_prepare_again() {
        let (_folder, conn) = super::super::seed_library();
        let prepared_again = |conn: &Connection| {
            let mut stmt = conn
                .prepare("SELECT name FROM prompts WHERE name > ?1 ORDER BY name LIMIT ?2")
                .expect("prepare a page");
            for (after, limit) in [("", 2), ("b", 3), ("c", 2)] {
                let names: Vec<String> = stmt
                    .query_map(rusqlite::params![after, limit], |row| row.get(0))
                    .expect("query a page")
                    .collect::<rusqlite::Result<_>>()
                    .expect("a page");
                assert!(!names.is_empty(), "the seed has prompts after {after:?}");
            }
            stmt.get_status(rusqlite::StatementStatus::RePrepare)
        };
        assert!(
            prepared_again(&conn) > 0,
            "SQLite's default, which the setting is for, prepares again"
        );
        super::super::configure(&conn).expect("configure");
        assert_eq!(prepared_again(&conn), 0);
    }

    /// Every read a serving process makes at start, per handshake and per request (a page of
    /// a list too) is a search of an index or a scan of a table that stays small whatever
    /// the library holds, so none grows with the library.
    #[test]
    fn serving_reads_search_indexes_instead_of_scanning_the_library() {
        let (_folder, conn) = super::super::seed_library();
        // Planned as a served connection plans (no bound value read while planning).
        super::super::configure(&conn).expect("configure");
        let table = conn
            .query_row("SELECT name FROM completion_tables LIMIT 1", [], |row| {
                row.get::<_, String>(0)
            })
            .expect("the seed has a completion table");
        conn.trace_v2(
            rusqlite::trace::TraceEventCodes::SQLITE_TRACE_STMT,
            Some(keep),
        );
        summary(&conn).expect("summary");
        secret(&conn).expect("secret");
        change_position(&conn).expect("position");
        changes_since(&conn, 0).expect("changes");
        prompt(&conn, "code-review").expect("prompt");
        prompt_names(&conn).expect("prompt names");
        resource(&conn, "shelf://library/guides/testing.md").expect("resource");
        resource_content(&conn, "shelf://library/guides/testing.md").expect("content");
        resource_uris_with_prefix(&conn, "shelf://library/").expect("uris");
        // The Skills extension's: a page of SKILL.md files, one skill's files, a file's bytes.
        resources_framed_within(&conn, Window::ALL, "skill://", "/SKILL.md", None)
            .expect("skill documents");
        resources_framed_within(&conn, Window::ALL, "skill://lint/", "", None)
            .expect("a skill's files");
        blob(&conn, &[0; 32]).expect("a blob");
        first_resource_within(&conn, "", "skill://lint/", "skill://lint0", None)
            .expect("a directory's next child");
        templates(&conn, Window::ALL).expect("templates");
        // A page of each list, after a key, as the list handlers read them.
        let page = Window {
            after: "b",
            limit: Some(51),
        };
        for list in [Listed::Prompts, Listed::Resources, Listed::Templates] {
            listing(&conn, list).expect("listing");
        }
        prompts(&conn, page, false).expect("prompts page");
        resources(&conn, page).expect("resources page");
        templates(&conn, page).expect("templates page");
        let (id, version) = table_version(&conn, &table)
            .expect("version")
            .expect("a table");
        each_table_value(&conn, id, |_, _, _| Ok(())).expect("values");
        assert!(
            stored_index(&conn, id, version)
                .expect("the stored index")
                .is_some(),
            "the seed's tables have their indexes stored"
        );
        conn.trace_v2(rusqlite::trace::TraceEventCodes::empty(), None);
        let statements = std::mem::take(
            &mut *STATEMENTS
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        assert!(statements.len() >= 12, "traced: {statements:#?}");
        // Tables a library keeps small: settings, templates, and the names of prompts (an
        // unknown name's error lists them).
        let small = ["meta", "resource_templates", "template_variables"];
        for sql in &statements {
            for step in plan(&conn, sql) {
                let scanned = step
                    .strip_prefix("SCAN ")
                    .map(|rest| rest.split_whitespace().next().unwrap_or(""));
                let allowed = match scanned {
                    None | Some("CONSTANT") => true,
                    Some(table) => {
                        small.contains(&table)
                            || (table == "prompts" && sql.starts_with("SELECT name FROM prompts"))
                    }
                };
                assert!(allowed, "{sql}\n  plans: {step}");
            }
        }
    }

    /// A read kept to some collections searches the collection's index (collection, key)
    /// rather than walking the key's index across the library.
    #[test]
    fn reads_within_collections_search_the_collection_indexes() {
        let (_folder, conn) = super::super::seed_library();
        let within = ["library".to_string(), "other".to_string()];
        let page = Window {
            after: "",
            limit: Some(3),
        };
        assert_eq!(
            prompts_within(&conn, page, true, Some(&within))
                .expect("prompts")
                .len(),
            3
        );
        assert_eq!(
            prompts_within(&conn, page, false, Some(&within[1..])).expect("prompts"),
            []
        );
        assert_eq!(
            resources_within(&conn, page, Some(&within))
                .expect("resources")
                .len(),
            3
        );
        assert_eq!(
            templates_within(&conn, Window::ALL, Some(&within))
                .expect("templates")
                .len(),
            1
        );
        let uris = resource_uris_with_prefix_within(&conn, "shelf://library/g", Some(&within))
            .expect("uris");
        assert!(!uris.is_empty() && uris.iter().all(|uri| uri.starts_with("shelf://library/g")));
        assert_eq!(
            resource_uris_with_prefix_within(&conn, "shelf://library/", Some(&within[1..]))
                .expect("uris"),
            Vec::<String>::new()
        );
        assert!(
            !prompt_names_within(&conn, Some(&within))
                .expect("names")
                .is_empty()
        );
        let among = among(Some(&within), 3);
        for (sql, index) in [
            (
                format!("SELECT id FROM prompts WHERE name > ?1{among} ORDER BY name LIMIT ?2"),
                "prompts_by_collection",
            ),
            (
                format!("SELECT uri FROM resources WHERE uri > ?1{among} ORDER BY uri LIMIT ?2"),
                "resources_by_collection",
            ),
            (
                format!(
                    "SELECT id FROM resource_templates WHERE uri_template > ?1{among} ORDER BY uri_template LIMIT ?2"
                ),
                "templates_by_collection",
            ),
        ] {
            let json = names_json(&within).expect("JSON");
            let mut stmt = conn
                .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
                .expect("explain");
            let steps: Vec<String> = stmt
                .query_map(rusqlite::params!["", 3, json], |row| row.get(3))
                .expect("plan")
                .collect::<rusqlite::Result<_>>()
                .expect("plan rows");
            assert!(
                steps.iter().any(|step| step.contains(index)),
                "{sql}\n  plans: {steps:#?}"
            );
        }
    }
}
