//! A release channel shown to a connection as if it were the library (`Store::on_channel`).
//!
//! Each connection of a channel's store gets TEMP views named as the library's tables
//! (`prompts`, `prompt_arguments`, ... `change_log`), made from the versions the channel's
//! labels name (`labels`, `versions`: each version's whole item as JSON). SQLite looks a
//! name up in `temp` before `main`, so every read of `store::read` and `store::search`, run
//! unchanged on such a connection, reads the channel: the items its label is on, each at
//! the version the label names, and nothing else. The views read the labels as they are at
//! each statement, so a label moved is served from the next request on; only the channel's
//! search index is a copy, built in memory when the connection first searches
//! (`fill_search`), which is why a server drops a channel's connections when its labels
//! move (`server::state`).
//!
//! What is not shadowed is the library's own: `blobs` (a version's content is a blob like a
//! resource's), `meta`, `collections`, `tokens`. The completion indexes a write stores are of
//! the library's tables, so a channel has none and a server builds each it needs.

use rusqlite::Connection;

/// The item of each label of the channel, with what a row of the library keeps beside it.
/// `{channel}` is the channel's name as an SQL string literal.
const LABELLED: &str = "
CREATE TEMP VIEW labelled AS
SELECT l.kind, l.key, l.version, l.last_modified, l.source_commit, v.content_hash, v.snapshot,
       v.content
FROM main.labels l JOIN main.whole_versions v ON v.id = l.version
WHERE l.label = {channel};
";

/// The library's tables, as the channel's versions hold them. A version's number is the
/// item's id: one sequence for the library, so ids of different kinds never meet.
const TABLES: &str = "
CREATE TEMP VIEW prompts AS
SELECT version AS id, key AS name, json_extract(snapshot, '$.title') AS title,
       json_extract(snapshot, '$.description') AS description,
       json_extract(snapshot, '$.icons') AS icons, content_hash, last_modified,
       json_extract(snapshot, '$.origin.path') AS origin,
       json_extract(snapshot, '$.origin.collection') AS collection,
       json_extract(snapshot, '$.meta') AS meta, version, source_commit
FROM temp.labelled WHERE kind = 'prompt';

CREATE TEMP VIEW prompt_arguments AS
SELECT l.version AS prompt_id, a.key AS position, json_extract(a.value, '$.name') AS name,
       json_extract(a.value, '$.title') AS title,
       json_extract(a.value, '$.description') AS description,
       json_extract(a.value, '$.required') AS required, json_extract(a.value, '$.kind') AS type,
       json_extract(a.value, '$.default') AS default_value,
       json_extract(a.value, '$.values') AS enum_values,
       json_extract(a.value, '$.pattern') AS pattern,
       json_extract(a.value, '$.max_length') AS max_length,
       json_extract(a.value, '$.min') AS minimum, json_extract(a.value, '$.max') AS maximum,
       json_extract(a.value, '$.completion') AS completion_table
FROM temp.labelled l, main.json_each(l.snapshot, '$.arguments') a WHERE l.kind = 'prompt';

CREATE TEMP VIEW prompt_messages AS
SELECT l.version AS prompt_id, m.key AS position, json_extract(m.value, '$.role') AS role,
       json_extract(m.value, '$.body') AS body
FROM temp.labelled l, main.json_each(l.snapshot, '$.messages') m WHERE l.kind = 'prompt';

CREATE TEMP VIEW resources AS
SELECT version AS id, key AS uri, json_extract(snapshot, '$.info.name') AS name,
       json_extract(snapshot, '$.info.title') AS title,
       json_extract(snapshot, '$.info.description') AS description,
       json_extract(snapshot, '$.info.mime_type') AS mime_type,
       json_extract(snapshot, '$.text') AS is_text, content AS blob_hash,
       (SELECT size FROM main.blobs WHERE hash = content) AS size,
       json_extract(snapshot, '$.info.annotations.audience') AS audience,
       json_extract(snapshot, '$.info.annotations.priority') AS priority,
       json_extract(snapshot, '$.info.icons') AS icons, content_hash, last_modified,
       json_extract(snapshot, '$.info.origin.path') AS origin,
       json_extract(snapshot, '$.info.origin.collection') AS collection,
       json_extract(snapshot, '$.info.meta') AS meta, version, source_commit
FROM temp.labelled WHERE kind = 'resource';

CREATE TEMP VIEW resource_templates AS
SELECT version AS id, key AS uri_template, json_extract(snapshot, '$.name') AS name,
       json_extract(snapshot, '$.title') AS title,
       json_extract(snapshot, '$.description') AS description,
       json_extract(snapshot, '$.mime_type') AS mime_type,
       json_extract(snapshot, '$.icons') AS icons,
       json_extract(snapshot, '$.collection') AS collection, content_hash, last_modified,
       version
FROM temp.labelled WHERE kind = 'template';

CREATE TEMP VIEW template_variables AS
SELECT l.version AS template_id, json_extract(c.value, '$[0]') AS name,
       json_extract(c.value, '$[1]') AS completion_table
FROM temp.labelled l, main.json_each(l.snapshot, '$.completions') c WHERE l.kind = 'template';

CREATE TEMP VIEW completion_tables AS
SELECT version AS id, key AS name, json_extract(snapshot, '$.description') AS description,
       version
FROM temp.labelled WHERE kind = 'values';

CREATE TEMP VIEW completion_values AS
SELECT l.version AS table_id, json_extract(v.value, '$.value') AS value,
       json_extract(v.value, '$.weight') AS weight,
       coalesce(json_extract(v.value, '$.context[0]'), '') AS context_name,
       coalesce(json_extract(v.value, '$.context[1]'), '') AS context_value
FROM temp.labelled l, main.json_each(l.snapshot, '$.values') v WHERE l.kind = 'values';

CREATE TEMP VIEW completion_indexes AS
SELECT NULL AS table_id, NULL AS version, NULL AS bytes WHERE 0;

CREATE TEMP VIEW item_counts AS
SELECT 'prompt' AS kind, (SELECT count(*) FROM temp.labelled WHERE kind = 'prompt') AS items
UNION ALL
SELECT 'resource', (SELECT count(*) FROM temp.labelled WHERE kind = 'resource');

CREATE TEMP VIEW change_log AS
SELECT seq, at, kind, op, key, channel FROM main.change_log WHERE channel = {channel};
";

/// The options of the library's search index (schema.sql) that make it read its text from
/// `search_source`. A channel's index keeps its own copy instead: FTS5 prepares its reads of
/// an external content table so that they cannot use a virtual table, and the channel's
/// views read each version through `json_each`.
const EXTERNAL_CONTENT: &str = "content = 'search_source', content_rowid = 'key',";

/// Shows `channel` to `conn` in place of the library: the views above, and the channel's
/// own search index, made with the library's index's options (schema.sql's own statement,
/// made TEMP and given its own copy of the text, so the two rank and fold alike) and
/// filled from the views the library's index reads (schema.sql's too, made TEMP, so they read
/// the views above).
pub(super) fn show(conn: &Connection, channel: &str) -> rusqlite::Result<()> {
    let literal = format!("'{}'", channel.replace('\'', "''"));
    let views = format!("{LABELLED}{TABLES}").replace("{channel}", &literal);
    conn.pragma_update(None, "temp_store", "MEMORY")?;
    conn.execute_batch(&views)?;
    let schema_sql = |name: &str| -> rusqlite::Result<String> {
        conn.query_row(
            "SELECT sql FROM main.sqlite_schema WHERE name = ?1",
            [name],
            |row| row.get(0),
        )
    };
    let mut sources = String::new();
    for view in SEARCH_SOURCES {
        let Some(source) = schema_sql(view)?
            .strip_prefix(&format!("CREATE VIEW {view}"))
            .map(|source| format!("CREATE VIEW temp.{view}{source};\n"))
        else {
            return Err(not_the_schemas_index());
        };
        sources.push_str(&source);
    }
    let index = schema_sql("search")?;
    let Some(index) = index
        .contains(EXTERNAL_CONTENT)
        .then(|| index.replace(EXTERNAL_CONTENT, ""))
        .and_then(|index| {
            index
                .strip_prefix("CREATE VIRTUAL TABLE search")
                .map(str::to_string)
        })
    else {
        return Err(not_the_schemas_index());
    };
    conn.execute_batch(&format!(
        "{sources}
         CREATE VIRTUAL TABLE temp.search{index};
         CREATE VIRTUAL TABLE temp.search_terms USING fts5vocab(temp, search, row);
         CREATE TABLE temp.search_unfilled (unfilled INTEGER);"
    ))?;
    Ok(())
}

/// The views the library's search index reads (schema.sql), each after those it reads.
const SEARCH_SOURCES: [&str; 3] = [
    "prompt_search_source",
    "resource_search_source",
    "search_source",
];

/// Only a database whose schema was changed by hand gets here.
fn not_the_schemas_index() -> rusqlite::Error {
    rusqlite::Error::SqliteFailure(
        rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_ERROR),
        Some(
            "the library's search index is not the one schema.sql makes, so a release \
             channel cannot make its own like it; restore the database from a backup"
                .into(),
        ),
    )
}

/// Fills a channel connection's search index from the channel's items, the first time the
/// connection searches (`store::search` calls it first): indexing a channel's text takes
/// about as long as an import's index does (docs/benchmarks.md, "`channel`"),
/// and most connections only list, get and read. On the library's connections, and once
/// filled, one look at the connection's own TEMP schema.
pub(super) fn fill_search(conn: &Connection) -> rusqlite::Result<()> {
    let unfilled: bool = conn
        .prepare_cached(
            "SELECT EXISTS (SELECT 1 FROM temp.sqlite_schema WHERE name = 'search_unfilled')",
        )?
        .query_row([], |row| row.get(0))?;
    if unfilled {
        conn.execute_batch(
            "INSERT INTO temp.search (rowid, name, title, description, body, kind, uri, collection)
             SELECT * FROM temp.search_source;
             DROP TABLE temp.search_unfilled;",
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::labels::{self, Selection};
    use super::super::{Access, Store, read, search};
    use crate::model::Kind;

    /// What the serving reads give on one connection: every list, prompt, resource with its
    /// content, template, table, the summary and a search.
    fn served(conn: &rusqlite::Connection) -> String {
        let mut seen = String::new();
        let prompts = read::prompts(conn, read::Window::ALL, true).expect("prompts");
        for prompt in &prompts {
            let one = read::prompt(conn, &prompt.prompt.name).expect("a prompt");
            seen += &format!("{one:?}\n");
        }
        seen += &format!("{prompts:?}\n");
        let resources = read::resources(conn, read::Window::ALL).expect("resources");
        for resource in &resources {
            let read = read::resource_content(conn, &resource.info.uri).expect("content");
            seen += &format!("{read:?}\n");
        }
        seen += &format!("{resources:?}\n");
        seen += &format!(
            "{:?}\n",
            read::templates(conn, read::Window::ALL).expect("templates")
        );
        for table in read::tables(conn).expect("tables") {
            let values = read::table_values(conn, &table.name).expect("values");
            seen += &format!("{table:?} {values:?}\n");
        }
        let summary = read::summary(conn).expect("summary");
        seen += &format!("{} {}\n", summary.prompts, summary.resources);
        // A word, and a phrase, which is checked in the channel's own texts.
        for expression in ["\"review\"", "\"code review\""] {
            let query = search::Query {
                expression,
                kind: None,
                collection: None,
                within: None,
                limit: 100,
                marks: ("[", "]"),
            };
            let hits = search::search(conn, &query).expect("search");
            assert!(!hits.is_empty(), "the seed holds {expression}");
            seen += &format!("{hits:?}\n");
        }
        seen += &format!(
            "{:?}",
            search::terms_with_prefix(conn, "rev", 10).expect("terms")
        );
        seen
    }

    #[test]
    fn a_channel_with_every_item_labelled_at_its_newest_version_reads_as_the_library() {
        let folder = tempfile::tempdir().expect("a folder");
        let path = folder.path().join("library.db");
        let store = Store::open(&path, Access::ReadWrite, crate::seed::load).expect("seeded");
        store
            .write(|tx| labels::set(tx, "production", &Selection::All, None))
            .expect("labelled");
        let library = served(&store.conn().expect("a connection"));
        let channel = store.on_channel("production").expect("the channel");
        assert_eq!(served(&channel.conn().expect("a connection")), library);
        assert!(library.contains("code-review") && library.contains("[review]"));
    }

    #[test]
    fn a_channel_serves_only_its_items_at_the_versions_its_labels_name() {
        let folder = tempfile::tempdir().expect("a folder");
        let path = folder.path().join("library.db");
        let store = Store::open(&path, Access::ReadWrite, crate::seed::load).expect("seeded");
        let conn = store.conn().expect("a connection");
        let mut old = read::prompt(&conn, "summarize")
            .expect("read")
            .expect("seeded");
        drop(conn);
        let pinned = Selection::Items(vec![(Kind::Prompt, "summarize".into())]);
        store
            .write(|tx| labels::set(tx, "production", &pinned, None))
            .expect("labelled");
        let mut changed = old.prompt.clone();
        changed.messages[0].body = "Summarize {{ text }} in one line.".into();
        store
            .write(|tx| super::super::write::put_prompt(tx, &changed, 1))
            .expect("changed");
        let channel = store.on_channel("production").expect("the channel");
        let conn = channel.conn().expect("a connection");
        let prompts = read::prompts(&conn, read::Window::ALL, true).expect("prompts");
        assert_eq!(prompts.len(), 1, "only the labelled prompt: {prompts:?}");
        old.prompt
            .arguments
            .clone_from(&prompts[0].prompt.arguments);
        assert_eq!(prompts[0], old, "the version the label names");
        assert!(read::prompt(&conn, "code-review").expect("read").is_none());
        assert_eq!(read::summary(&conn).expect("summary").resources, 0);
        let library = store.conn().expect("a connection");
        let now = read::prompt(&library, "summarize")
            .expect("read")
            .expect("there");
        assert_eq!(
            now.prompt.messages[0].body,
            "Summarize {{ text }} in one line."
        );
    }
}
