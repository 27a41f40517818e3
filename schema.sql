-- The whole promptshelf database schema, version 12.
--
-- Embedded in the binary (`include_str!`) and run once, in one transaction, when a new
-- database is created; `PRAGMA user_version` then records the version so that a later
-- schema has a place to migrate from (see src/store/schema.rs).
--
-- Times are Unix milliseconds (UTC). Content hashes are 32-byte blake3 digests.

-- Key/value facts about this database: the random secret that signs `requestState`
-- (created with the database, so every process serving it accepts the same state).
CREATE TABLE meta (
    key   TEXT PRIMARY KEY NOT NULL,
    value BLOB NOT NULL
) STRICT;

-- Content-addressed storage: identical content is stored once, whatever refers to it.
-- `packing` (migration 13, written as SQLite writes an added column): 0 when `data` is the
-- content itself, 1 when it is the content packed as an LZ4 block (`store::blobs`); `hash` and
-- `size` are the content's own either way. SQL reads it with `unpacked(data, packing, size)`.
CREATE TABLE blobs (
    hash BLOB PRIMARY KEY NOT NULL CHECK (length(hash) = 32),
    size INTEGER NOT NULL CHECK (size >= 0),
    data BLOB NOT NULL
, packing INTEGER NOT NULL DEFAULT 0 CHECK (packing IN (0, 1))) STRICT;

-- `meta` (of prompts and resources): the front matter keys of the item's file that the format
-- does not read (a host's own, `allowed-tools`, `applyTo`), kept as a JSON object; NULL when
-- there are none. Migration 9 added it, so it is written as SQLite writes an added column.
-- `version` and `source_commit` (migration 10, written so too): what a server serves as the
-- item's provenance. `version` is its newest version's number in `versions`, written with
-- the row by the write that records that version (NULL for an item written before there
-- was a history and not changed since); `source_commit` the commit (hex) of the folder's
-- git working tree when the import that wrote this version, or moved it to its file, ran
-- (NULL outside git).
CREATE TABLE prompts (
    id            INTEGER PRIMARY KEY,
    name          TEXT NOT NULL UNIQUE CHECK (length(name) > 0),
    title         TEXT,
    description   TEXT,
    icons         TEXT CHECK (icons IS NULL OR json_valid(icons)),   -- JSON array of MCP icons
    content_hash  BLOB NOT NULL CHECK (length(content_hash) = 32),
    last_modified INTEGER NOT NULL,
    origin        TEXT,     -- the file it was imported from, relative to its collection folder
    collection    TEXT      -- the imported folder it belongs to; NULL when added by hand
, meta TEXT CHECK (meta IS NULL OR json_valid(meta)), version INTEGER, source_commit TEXT) STRICT;

-- Arguments are typed: MCP sends every value as a string, `prompts/get` checks it.
CREATE TABLE prompt_arguments (
    prompt_id        INTEGER NOT NULL REFERENCES prompts (id) ON DELETE CASCADE,
    position         INTEGER NOT NULL,
    name             TEXT NOT NULL CHECK (length(name) > 0),
    title            TEXT,
    description      TEXT,
    required         INTEGER NOT NULL DEFAULT 0 CHECK (required IN (0, 1)),
    type             TEXT NOT NULL DEFAULT 'string'
                     CHECK (type IN ('string', 'enum', 'integer', 'number', 'boolean', 'date', 'uri')),
    default_value    TEXT,
    enum_values      TEXT CHECK (enum_values IS NULL OR json_valid(enum_values)), -- JSON array
    pattern          TEXT,   -- string: a regular expression the whole value must match
    max_length       INTEGER,
    minimum          REAL,   -- integer/number: inclusive bounds
    maximum          REAL,
    completion_table TEXT,   -- name of a completion table; checked by `promptshelf check`
    PRIMARY KEY (prompt_id, position),
    UNIQUE (prompt_id, name)
) STRICT;

-- A prompt's body, split into runs of one role; each run is a minijinja template.
CREATE TABLE prompt_messages (
    prompt_id INTEGER NOT NULL REFERENCES prompts (id) ON DELETE CASCADE,
    position  INTEGER NOT NULL,
    role      TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
    body      TEXT NOT NULL,
    PRIMARY KEY (prompt_id, position)
) STRICT;

CREATE TABLE resources (
    id            INTEGER PRIMARY KEY,
    uri           TEXT NOT NULL UNIQUE CHECK (length(uri) > 0),
    name          TEXT NOT NULL,
    title         TEXT,
    description   TEXT,
    mime_type     TEXT NOT NULL,
    is_text       INTEGER NOT NULL CHECK (is_text IN (0, 1)),  -- served as `text`, else `blob`
    blob_hash     BLOB NOT NULL REFERENCES blobs (hash) ON DELETE RESTRICT,
    size          INTEGER NOT NULL,
    audience      TEXT CHECK (audience IS NULL OR json_valid(audience)),  -- JSON array
    priority      REAL CHECK (priority IS NULL OR (priority >= 0 AND priority <= 1)),
    icons         TEXT CHECK (icons IS NULL OR json_valid(icons)),
    content_hash  BLOB NOT NULL CHECK (length(content_hash) = 32),  -- content and metadata
    last_modified INTEGER NOT NULL,
    origin        TEXT,
    collection    TEXT
, meta TEXT CHECK (meta IS NULL OR json_valid(meta)), version INTEGER, source_commit TEXT) STRICT;
CREATE INDEX resources_by_blob ON resources (blob_hash);
CREATE INDEX resources_by_collection ON resources (collection, uri);
-- What a token limited to some collections sees (`serve --http`): its collections' items
-- without a pass over the others.
CREATE INDEX prompts_by_collection ON prompts (collection, name);

-- The folders imported as collections: where each was last imported from and when, for
-- `collection list`, `prompt edit` (the source file of an imported prompt is the folder
-- joined with the item's `origin`) and the next `import` of it. A collection has a row from
-- its first import on; the items say which collection they belong to.
CREATE TABLE collections (
    name        TEXT PRIMARY KEY NOT NULL CHECK (length(name) > 0),
    source      TEXT,     -- the folder's absolute path; NULL when not known (before version 4)
    imported_at INTEGER   -- when it was last imported; NULL when not known
) STRICT;

-- Bearer tokens for `serve --http`: a name for people, and only a keyed hash of the token
-- (blake3 keyed with a key derived from `meta`'s secret), so the token itself is shown once,
-- when it is made, and never stored. `collections`: a JSON array of the collection names
-- the token sees (with what their items link to); NULL for the whole library. `channel`
-- (migration 12, written as SQLite writes an added column): the release channel (a label)
-- the token is served, NULL for the library as it is now.
CREATE TABLE tokens (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE CHECK (length(name) > 0),
    hash        BLOB NOT NULL UNIQUE CHECK (length(hash) = 32),
    collections TEXT CHECK (collections IS NULL OR json_valid(collections)),
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER       -- NULL: never expires
, channel TEXT) STRICT;

-- `version`: as a prompt's (migration 10, written as SQLite writes an added column).
CREATE TABLE resource_templates (
    id            INTEGER PRIMARY KEY,
    uri_template  TEXT NOT NULL UNIQUE,
    name          TEXT NOT NULL,
    title         TEXT,
    description   TEXT,
    mime_type     TEXT,
    icons         TEXT CHECK (icons IS NULL OR json_valid(icons)),
    collection    TEXT,      -- set for the template an imported folder gets
    content_hash  BLOB NOT NULL CHECK (length(content_hash) = 32),
    last_modified INTEGER NOT NULL
, version INTEGER) STRICT;
CREATE INDEX templates_by_collection ON resource_templates (collection, uri_template);

-- Where each variable of a template takes its completions from; a variable with no row
-- completes from the stored resource URIs that match the template.
CREATE TABLE template_variables (
    template_id      INTEGER NOT NULL REFERENCES resource_templates (id) ON DELETE CASCADE,
    name             TEXT NOT NULL,
    completion_table TEXT NOT NULL,
    PRIMARY KEY (template_id, name)
) STRICT;

CREATE TABLE completion_tables (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE CHECK (length(name) > 0),
    description TEXT,
    version     INTEGER NOT NULL DEFAULT 0  -- bumped by every change to its values
) STRICT;

-- A value may carry a context: offered only when another argument has a given value.
CREATE TABLE completion_values (
    table_id      INTEGER NOT NULL REFERENCES completion_tables (id) ON DELETE CASCADE,
    value         TEXT NOT NULL,
    weight        REAL NOT NULL DEFAULT 0,
    context_name  TEXT NOT NULL DEFAULT '',
    context_value TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (table_id, value, context_name, context_value)
) STRICT, WITHOUT ROWID;

-- Each completion table's index as a server holds it in memory (src/complete/index.rs), built
-- and stored by the write that changed the table's values, in the same transaction, so that a
-- server reads it (tens of milliseconds for a million values) instead of building it (about a
-- second). An index of another version than its table's is not used: the server builds one.
CREATE TABLE completion_indexes (
    table_id INTEGER PRIMARY KEY REFERENCES completion_tables (id) ON DELETE CASCADE,
    version  INTEGER NOT NULL,  -- the table's version the index was built from
    bytes    BLOB NOT NULL      -- `TableIndex::encode`
) STRICT;

-- Every change to a prompt, resource, template or completion table, in order; a running
-- server reads the rows after the last one it saw to learn exactly what changed. Updates
-- that leave the content hash as it was leave no row, unless they move a prompt or resource
-- to another file or collection: a server serves where each comes from (its provenance).
--
-- Every statement of this file reads in SQLite 3.40 (Debian 12's `sqlite3`, the oldest
-- SQLite of a supported distribution), since operators open the file with their own tools
-- (SECURITY.md): the time in milliseconds through julianday, not 3.42's
-- `unixepoch('subsec')`; a body's messages gathered in order through an ordered subquery,
-- not 3.44's ORDER BY inside the aggregate (SQLite does not flatten an ordered subquery
-- into an aggregate, so group_concat sees the rows in that order).
-- `channel` (migration 12, written as SQLite writes an added column): NULL for a change to
-- the library, the label's name for a label put on, moved or taken off an item (the change
-- a server on that channel serves, `store::labels`).
CREATE TABLE change_log (
    seq   INTEGER PRIMARY KEY AUTOINCREMENT,
    at    INTEGER NOT NULL,
    kind  TEXT NOT NULL CHECK (kind IN ('prompt', 'resource', 'template', 'values')),
    op    TEXT NOT NULL CHECK (op IN ('insert', 'update', 'delete')),
    key   TEXT NOT NULL  -- prompt name, resource URI, URI template or table name
, channel TEXT) STRICT;

CREATE TRIGGER prompts_insert AFTER INSERT ON prompts BEGIN
    INSERT INTO change_log (at, kind, op, key)
    VALUES (CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER), 'prompt', 'insert', NEW.name);
END;
CREATE TRIGGER prompts_update AFTER UPDATE ON prompts
WHEN OLD.content_hash IS NOT NEW.content_hash OR OLD.name IS NOT NEW.name
  OR OLD.origin IS NOT NEW.origin OR OLD.collection IS NOT NEW.collection BEGIN
    INSERT INTO change_log (at, kind, op, key)
    VALUES (CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER), 'prompt', 'update', NEW.name);
END;
CREATE TRIGGER prompts_delete AFTER DELETE ON prompts BEGIN
    INSERT INTO change_log (at, kind, op, key)
    VALUES (CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER), 'prompt', 'delete', OLD.name);
END;

CREATE TRIGGER resources_insert AFTER INSERT ON resources BEGIN
    INSERT INTO change_log (at, kind, op, key)
    VALUES (CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER), 'resource', 'insert', NEW.uri);
END;
CREATE TRIGGER resources_update AFTER UPDATE ON resources
WHEN OLD.content_hash IS NOT NEW.content_hash OR OLD.uri IS NOT NEW.uri
  OR OLD.origin IS NOT NEW.origin OR OLD.collection IS NOT NEW.collection BEGIN
    INSERT INTO change_log (at, kind, op, key)
    VALUES (CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER), 'resource', 'update', NEW.uri);
END;
CREATE TRIGGER resources_delete AFTER DELETE ON resources BEGIN
    INSERT INTO change_log (at, kind, op, key)
    VALUES (CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER), 'resource', 'delete', OLD.uri);
END;

CREATE TRIGGER templates_insert AFTER INSERT ON resource_templates BEGIN
    INSERT INTO change_log (at, kind, op, key)
    VALUES (CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER), 'template', 'insert', NEW.uri_template);
END;
CREATE TRIGGER templates_update AFTER UPDATE ON resource_templates
WHEN OLD.content_hash IS NOT NEW.content_hash OR OLD.uri_template IS NOT NEW.uri_template BEGIN
    INSERT INTO change_log (at, kind, op, key)
    VALUES (CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER), 'template', 'update', NEW.uri_template);
END;
CREATE TRIGGER templates_delete AFTER DELETE ON resource_templates BEGIN
    INSERT INTO change_log (at, kind, op, key)
    VALUES (CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER), 'template', 'delete', OLD.uri_template);
END;

CREATE TRIGGER tables_insert AFTER INSERT ON completion_tables BEGIN
    INSERT INTO change_log (at, kind, op, key)
    VALUES (CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER), 'values', 'insert', NEW.name);
END;
CREATE TRIGGER tables_update AFTER UPDATE ON completion_tables
WHEN OLD.version IS NOT NEW.version OR OLD.name IS NOT NEW.name BEGIN
    INSERT INTO change_log (at, kind, op, key)
    VALUES (CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER), 'values', 'update', NEW.name);
END;
CREATE TRIGGER tables_delete AFTER DELETE ON completion_tables BEGIN
    INSERT INTO change_log (at, kind, op, key)
    VALUES (CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER), 'values', 'delete', OLD.name);
END;

-- What `initialize`, `server/discover` and the lists report, without a pass over any table:
-- how many prompts and resources there are (kept by the triggers below, in the writing
-- transaction) and, through the `*_by_last_modified` indexes, when the newest item changed.
CREATE TABLE item_counts (
    kind  TEXT PRIMARY KEY NOT NULL CHECK (kind IN ('prompt', 'resource')),
    items INTEGER NOT NULL CHECK (items >= 0)
) STRICT;
INSERT INTO item_counts (kind, items)
VALUES ('prompt', (SELECT count(*) FROM prompts)), ('resource', (SELECT count(*) FROM resources));
CREATE TRIGGER prompts_counted_in AFTER INSERT ON prompts BEGIN
    UPDATE item_counts SET items = items + 1 WHERE kind = 'prompt';
END;
CREATE TRIGGER prompts_counted_out AFTER DELETE ON prompts BEGIN
    UPDATE item_counts SET items = items - 1 WHERE kind = 'prompt';
END;
CREATE TRIGGER resources_counted_in AFTER INSERT ON resources BEGIN
    UPDATE item_counts SET items = items + 1 WHERE kind = 'resource';
END;
CREATE TRIGGER resources_counted_out AFTER DELETE ON resources BEGIN
    UPDATE item_counts SET items = items - 1 WHERE kind = 'resource';
END;
CREATE INDEX prompts_by_last_modified ON prompts (last_modified);
CREATE INDEX resources_by_last_modified ON resources (last_modified);
CREATE INDEX templates_by_last_modified ON resource_templates (last_modified);
-- A list's version (what its cursors are bound to): the last change of its kind.
CREATE INDEX change_log_by_kind ON change_log (kind, seq);
-- A channel's list versions: the last change of a kind on that channel.
CREATE INDEX change_log_by_channel ON change_log (channel, kind, seq) WHERE channel IS NOT NULL;

-- Full-text search over the library (`promptshelf search`, the `shelf://search/{query}`
-- template): one FTS5 row per prompt and per resource, kept by the triggers below in the
-- writing transaction, so every write, import and removal leaves it current and serving
-- builds nothing. The rowid is the resource's id, or minus the prompt's id. Indexed:
-- name, title, description, and the body (a prompt's message templates in order, a text
-- resource's content; nothing for binary content). `kind`, `uri` (NULL for a prompt) and
-- `collection` are there to answer and filter with, not indexed. The tokenizer is
-- unicode61 alone, without porter stemming: libraries hold code and names that stemming
-- would mangle, in any language, and the index's terms are what completion offers, so
-- they should be words as written (folded to lower case, diacritics removed). `prefix`
-- keeps an index of every term's first two and first three letters beside the terms, so a
-- query of a short prefix (`re*`) reads one list instead of merging those of every term it
-- starts (src/store/search.rs, docs/benchmarks.md "search"). `detail = column`: the index
-- keeps which columns of an item hold each term, not where in them, a third of the size
-- with the prefix indexes (docs/benchmarks.md, "A database near its content"). FTS5
-- answers no phrase from such an index, so `store::search` looks for a phrase's words and
-- checks each match it shows against the item's words, found by FTS5's own tokenizer
-- (`store::words`).
--
-- What the search index reads its text from, one row per prompt and per resource: the index
-- keeps only its terms, and reads a row's text here when it makes a snippet or filters on an
-- unindexed column, so a resource's text is stored once, in `blobs` (FTS5's "external
-- content"). `key` is the index's rowid: the resource's id, or minus the prompt's id. A
-- lookup by `key` reaches one row of each table by its index (`prompts_by_search_key` for
-- the prompts' arm). A prompt's body is its message templates in order; a text resource's
-- is its content, unpacked (`store::blobs`); a binary resource has none. The two arms are
-- views of their own so that the triggers on prompts read only theirs: an operator's own
-- `sqlite3`, which lacks the store's `unpacked` function, can still write prompts
-- (SECURITY.md).
CREATE VIEW prompt_search_source (key, name, title, description, body, kind, uri, collection) AS
    SELECT -id, name, title, description,
           coalesce((SELECT group_concat(body, char(10)) FROM (
                         SELECT body FROM prompt_messages WHERE prompt_id = prompts.id
                         ORDER BY position)), ''),
           'prompt', NULL, collection
    FROM prompts;
CREATE VIEW resource_search_source (key, name, title, description, body, kind, uri, collection) AS
    SELECT id, name, title, description,
           (SELECT CAST(unpacked(data, packing, size) AS TEXT) FROM blobs
            WHERE hash = resources.blob_hash AND resources.is_text),
           'resource', uri, collection
    FROM resources;
CREATE VIEW search_source AS
    SELECT * FROM prompt_search_source UNION ALL SELECT * FROM resource_search_source;
CREATE INDEX prompts_by_search_key ON prompts (-id);
CREATE VIRTUAL TABLE search USING fts5(
    name, title, description, body, kind UNINDEXED, uri UNINDEXED, collection UNINDEXED,
    content = 'search_source', content_rowid = 'key',
    tokenize = 'unicode61 remove_diacritics 2', prefix = '2 3', detail = column
);
-- A write gathers up to 16 MiB of index in memory before it writes a segment (FTS5's
-- default is 1 MiB): with the prefix indexes, an import of 10,000 files spent much of its
-- index time writing and merging small segments (docs/benchmarks.md, "What the search
-- index adds to an import"). FTS5 also writes one out at the start of every statement that
-- fires these triggers, so an import inserts many rows to a statement
-- (`store::write::ROWS_PER_INSERT`). Only writers hold that memory; serving never writes.
-- Merging is left as it is (`automerge` 4): merging less often made searches slower.
INSERT INTO search (search, rank) VALUES ('hashsize', 16777216);
-- The index's terms with how many items hold each, for completing a search query.
CREATE VIRTUAL TABLE search_terms USING fts5vocab(search, row);
-- The triggers that keep the index: an item's row is taken out of the index BEFORE a change
-- to what `search_source` shows of it, with the text it shows then (what was indexed), and
-- indexed again AFTER, with the text it shows now. An external-content index must be told
-- the old text exactly; reading it from the view's own arm keeps the two the same.
CREATE TRIGGER prompts_searchable AFTER INSERT ON prompts BEGIN
    INSERT INTO search (rowid, name, title, description, body, kind, uri, collection)
    SELECT * FROM prompt_search_source WHERE key = -NEW.id;
END;
CREATE TRIGGER prompts_search_before BEFORE UPDATE ON prompts
WHEN OLD.name IS NOT NEW.name OR OLD.title IS NOT NEW.title
  OR OLD.description IS NOT NEW.description OR OLD.collection IS NOT NEW.collection BEGIN
    INSERT INTO search (search, rowid, name, title, description, body, kind, uri, collection)
    SELECT 'delete', * FROM prompt_search_source WHERE key = -OLD.id;
END;
CREATE TRIGGER prompts_search_after AFTER UPDATE ON prompts
WHEN OLD.name IS NOT NEW.name OR OLD.title IS NOT NEW.title
  OR OLD.description IS NOT NEW.description OR OLD.collection IS NOT NEW.collection BEGIN
    INSERT INTO search (rowid, name, title, description, body, kind, uri, collection)
    SELECT * FROM prompt_search_source WHERE key = -NEW.id;
END;
CREATE TRIGGER prompts_unsearchable BEFORE DELETE ON prompts BEGIN
    INSERT INTO search (search, rowid, name, title, description, body, kind, uri, collection)
    SELECT 'delete', * FROM prompt_search_source WHERE key = -OLD.id;
END;
-- A prompt's messages are its body: each message written indexes the prompt again. (Writers
-- never move a message to another prompt.)
CREATE TRIGGER prompt_messages_search_before_insert BEFORE INSERT ON prompt_messages BEGIN
    INSERT INTO search (search, rowid, name, title, description, body, kind, uri, collection)
    SELECT 'delete', * FROM prompt_search_source WHERE key = -NEW.prompt_id;
END;
CREATE TRIGGER prompt_messages_search_after_insert AFTER INSERT ON prompt_messages BEGIN
    INSERT INTO search (rowid, name, title, description, body, kind, uri, collection)
    SELECT * FROM prompt_search_source WHERE key = -NEW.prompt_id;
END;
CREATE TRIGGER prompt_messages_search_before_update BEFORE UPDATE ON prompt_messages BEGIN
    INSERT INTO search (search, rowid, name, title, description, body, kind, uri, collection)
    SELECT 'delete', * FROM prompt_search_source WHERE key = -OLD.prompt_id;
END;
CREATE TRIGGER prompt_messages_search_after_update AFTER UPDATE ON prompt_messages BEGIN
    INSERT INTO search (rowid, name, title, description, body, kind, uri, collection)
    SELECT * FROM prompt_search_source WHERE key = -NEW.prompt_id;
END;
CREATE TRIGGER prompt_messages_search_before_delete BEFORE DELETE ON prompt_messages BEGIN
    INSERT INTO search (search, rowid, name, title, description, body, kind, uri, collection)
    SELECT 'delete', * FROM prompt_search_source WHERE key = -OLD.prompt_id;
END;
CREATE TRIGGER prompt_messages_search_after_delete AFTER DELETE ON prompt_messages BEGIN
    INSERT INTO search (rowid, name, title, description, body, kind, uri, collection)
    SELECT * FROM prompt_search_source WHERE key = -OLD.prompt_id;
END;
CREATE TRIGGER resources_searchable AFTER INSERT ON resources BEGIN
    INSERT INTO search (rowid, name, title, description, body, kind, uri, collection)
    SELECT * FROM resource_search_source WHERE key = NEW.id;
END;
CREATE TRIGGER resources_search_before BEFORE UPDATE ON resources
WHEN OLD.uri IS NOT NEW.uri OR OLD.name IS NOT NEW.name OR OLD.title IS NOT NEW.title
  OR OLD.description IS NOT NEW.description OR OLD.is_text IS NOT NEW.is_text
  OR OLD.blob_hash IS NOT NEW.blob_hash OR OLD.collection IS NOT NEW.collection BEGIN
    INSERT INTO search (search, rowid, name, title, description, body, kind, uri, collection)
    SELECT 'delete', * FROM resource_search_source WHERE key = OLD.id;
END;
CREATE TRIGGER resources_search_after AFTER UPDATE ON resources
WHEN OLD.uri IS NOT NEW.uri OR OLD.name IS NOT NEW.name OR OLD.title IS NOT NEW.title
  OR OLD.description IS NOT NEW.description OR OLD.is_text IS NOT NEW.is_text
  OR OLD.blob_hash IS NOT NEW.blob_hash OR OLD.collection IS NOT NEW.collection BEGIN
    INSERT INTO search (rowid, name, title, description, body, kind, uri, collection)
    SELECT * FROM resource_search_source WHERE key = NEW.id;
END;
CREATE TRIGGER resources_unsearchable BEFORE DELETE ON resources BEGIN
    INSERT INTO search (search, rowid, name, title, description, body, kind, uri, collection)
    SELECT 'delete', * FROM resource_search_source WHERE key = OLD.id;
END;

-- History (`promptshelf history`, `diff`, `rollback`, `undo`): every write transaction that
-- changed an item (a command, an import, the seed) and the version of each item it wrote.
-- Written by the store's own write path in the same transaction (`store::history`), read by
-- the history commands alone: serving never looks at them.
CREATE TABLE writes (
    id        INTEGER PRIMARY KEY,
    at        INTEGER NOT NULL,
    what      TEXT NOT NULL,       -- the command line that wrote it, or 'seed'
    open      INTEGER NOT NULL DEFAULT 1 CHECK (open IN (0, 1)),  -- 1 until it commits
    undone    INTEGER NOT NULL DEFAULT 0 CHECK (undone IN (0, 1)),  -- reverted by an `undo`
    reverts   INTEGER          -- for an `undo`, the write it reverted (kept if that one goes)
) STRICT;
-- One version of one item: its whole stored form as JSON (`snapshot`; NULL when the write
-- removed it), and for a resource the blob of its content, which `blobs` keeps for as long as
-- a version or a resource refers to it. At most `--keep` versions per item are kept. A
-- resource's version that its row still is (the row's `version`) keeps no snapshot, content
-- or content hash of its own: the row holds the same, and `whole_versions` shows it; the
-- row's first change or removal writes them into the version first (the triggers below). A
-- library's resources are most of its items, and each one's current version was a second
-- copy of its row (docs/benchmarks.md, "A database near its content").
CREATE TABLE versions (
    id           INTEGER PRIMARY KEY,  -- the version's number, one sequence for the library
    write_id     INTEGER NOT NULL REFERENCES writes (id),
    kind         TEXT NOT NULL CHECK (kind IN ('prompt', 'resource', 'template', 'values')),
    key          TEXT NOT NULL,        -- prompt name, resource URI, URI template or table name
    change       TEXT NOT NULL CHECK (change IN ('added', 'updated', 'removed')),
    content_hash BLOB CHECK (content_hash IS NULL OR length(content_hash) = 32),
    snapshot     TEXT CHECK (snapshot IS NULL OR json_valid(snapshot)),
    content      BLOB REFERENCES blobs (hash)
) STRICT;
CREATE INDEX versions_by_item ON versions (kind, key, id);
CREATE INDEX versions_by_write ON versions (write_id);
CREATE INDEX versions_by_content ON versions (content) WHERE content IS NOT NULL;
-- A resource's row as its version's snapshot (`store::history`'s ResourceSnapshot: the
-- resource's info and whether its content is text), for the version its row is.
CREATE VIEW resource_snapshots (uri, version, content_hash, blob_hash, snapshot) AS
    SELECT uri, version, content_hash, blob_hash, json_object(
        'info', json_object(
            'uri', uri, 'name', name, 'title', title, 'description', description,
            'mime_type', mime_type,
            'annotations', json_object(
                'audience', json(coalesce(audience, '[]')), 'priority', priority),
            'icons', json(coalesce(icons, '[]')),
            'origin', json_object('collection', collection, 'path', origin,
                                  'commit', source_commit),
            'meta', json(coalesce(meta, '{}'))),
        'text', json(CASE is_text WHEN 1 THEN 'true' ELSE 'false' END))
    FROM resources;
-- Every version with its whole snapshot: what a reader of the history reads. A version
-- without a snapshot of its own is read from its resource's row, found once by its URI.
CREATE VIEW whole_versions (id, write_id, kind, key, change, content_hash, snapshot, content) AS
    SELECT v.id, v.write_id, v.kind, v.key, v.change, coalesce(v.content_hash, s.content_hash),
           coalesce(v.snapshot, s.snapshot), coalesce(v.content, s.blob_hash)
    FROM versions v LEFT JOIN resource_snapshots s
        ON v.snapshot IS NULL AND v.kind = 'resource' AND v.change <> 'removed'
       AND s.uri = v.key AND s.version = v.id;
CREATE TRIGGER resources_version_kept_before_update BEFORE UPDATE ON resources
WHEN OLD.version IS NOT NULL BEGIN
    UPDATE versions SET snapshot = (SELECT snapshot FROM resource_snapshots WHERE uri = OLD.uri),
                        content = OLD.blob_hash, content_hash = OLD.content_hash
    WHERE id = OLD.version AND snapshot IS NULL;
END;
CREATE TRIGGER resources_version_kept_before_delete BEFORE DELETE ON resources
WHEN OLD.version IS NOT NULL BEGIN
    UPDATE versions SET snapshot = (SELECT snapshot FROM resource_snapshots WHERE uri = OLD.uri),
                        content = OLD.blob_hash, content_hash = OLD.content_hash
    WHERE id = OLD.version AND snapshot IS NULL;
END;

-- Release channels (`promptshelf label`; `serve --channel`, `token add --channel`, an OAuth
-- scope): a label names one version of an item, and a server on the channel of that name
-- serves each item at the version its label names, and only the items that have it
-- (`store::channel`). A labelled version is kept whatever `--keep` says. `last_modified` and
-- `source_commit`: the item's row's when the label was put on its newest version, else
-- the time of the version's write and no commit, so a channel serves the provenance the
-- library served.
CREATE TABLE labels (
    label         TEXT NOT NULL CHECK (length(label) > 0),
    kind          TEXT NOT NULL CHECK (kind IN ('prompt', 'resource', 'template', 'values')),
    key           TEXT NOT NULL,
    version       INTEGER NOT NULL REFERENCES versions (id),
    last_modified INTEGER NOT NULL,
    source_commit TEXT,
    PRIMARY KEY (label, kind, key)
) STRICT, WITHOUT ROWID;
CREATE INDEX labels_by_version ON labels (version);
-- Each `label` command that moved labels (`label history`), and each move, for `label undo`:
-- the version the label named before (NULL: the item did not have it) and after (NULL: taken
-- off). The newest writes are kept (`store::labels::KEPT_WRITES`); the versions their moves
-- name are kept with them.
CREATE TABLE label_writes (
    id      INTEGER PRIMARY KEY,
    at      INTEGER NOT NULL,
    what    TEXT NOT NULL,          -- the command line that moved them
    undone  INTEGER NOT NULL DEFAULT 0 CHECK (undone IN (0, 1)),
    reverts INTEGER                 -- for a `label undo`, the write it reverted
) STRICT;
CREATE TABLE label_moves (
    write_id INTEGER NOT NULL REFERENCES label_writes (id) ON DELETE CASCADE,
    label    TEXT NOT NULL,
    kind     TEXT NOT NULL CHECK (kind IN ('prompt', 'resource', 'template', 'values')),
    key      TEXT NOT NULL,
    before   INTEGER,
    after    INTEGER,
    PRIMARY KEY (write_id, label, kind, key)
) STRICT, WITHOUT ROWID;
CREATE INDEX label_moves_by_before ON label_moves (before) WHERE before IS NOT NULL;
CREATE INDEX label_moves_by_after ON label_moves (after) WHERE after IS NOT NULL;
