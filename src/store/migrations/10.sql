-- Version 9 to 10: the search index keeps only its terms and reads the text it indexed from
-- `search_source`, a view of the items (FTS5's "external content"), instead of a second copy
-- of every prompt's body and every text resource in its own table (see schema.sql). FTS5
-- fixes its options when a table is made, so the table and its triggers are made again and
-- the items indexed anew from the view ('rebuild'). The pages the copy took are free for
-- later writes; the file itself shrinks when it is vacuumed (store::schema).
DROP TRIGGER prompts_searchable;
DROP TRIGGER prompts_search_update;
DROP TRIGGER prompts_unsearchable;
DROP TRIGGER prompt_messages_searchable;
DROP TRIGGER prompt_messages_search_update;
DROP TRIGGER prompt_messages_unsearchable;
DROP TRIGGER resources_searchable;
DROP TRIGGER resources_search_update;
DROP TRIGGER resources_unsearchable;
DROP TABLE search_terms;
DROP TABLE search;
-- What the search index reads its text from, one row per prompt and per resource: the index
-- keeps only its terms, and reads a row's text here when it makes a snippet or filters on an
-- unindexed column, so a resource's text is stored once, in `blobs` (FTS5's "external
-- content"). `key` is the index's rowid: the resource's id, or minus the prompt's id. A
-- lookup by `key` reaches one row of each table by its index (`prompts_by_search_key` for
-- the prompts' arm). A prompt's body is its message templates in order; a text resource's
-- is its content; a binary resource has none.
CREATE VIEW search_source (key, name, title, description, body, kind, uri, collection) AS
    SELECT -id, name, title, description,
           coalesce((SELECT group_concat(body, char(10)) FROM (
                         SELECT body FROM prompt_messages WHERE prompt_id = prompts.id
                         ORDER BY position)), ''),
           'prompt', NULL, collection
    FROM prompts
    UNION ALL
    SELECT id, name, title, description,
           (SELECT CAST(data AS TEXT) FROM blobs WHERE hash = resources.blob_hash AND resources.is_text),
           'resource', uri, collection
    FROM resources;
CREATE INDEX prompts_by_search_key ON prompts (-id);
CREATE VIRTUAL TABLE search USING fts5(
    name, title, description, body, kind UNINDEXED, uri UNINDEXED, collection UNINDEXED,
    content = 'search_source', content_rowid = 'key',
    tokenize = 'unicode61 remove_diacritics 2', prefix = '2 3'
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
-- the old text exactly; reading it from `search_source` itself keeps the two the same.
CREATE TRIGGER prompts_searchable AFTER INSERT ON prompts BEGIN
    INSERT INTO search (rowid, name, title, description, body, kind, uri, collection)
    SELECT * FROM search_source WHERE key = -NEW.id;
END;
CREATE TRIGGER prompts_search_before BEFORE UPDATE ON prompts
WHEN OLD.name IS NOT NEW.name OR OLD.title IS NOT NEW.title
  OR OLD.description IS NOT NEW.description OR OLD.collection IS NOT NEW.collection BEGIN
    INSERT INTO search (search, rowid, name, title, description, body, kind, uri, collection)
    SELECT 'delete', * FROM search_source WHERE key = -OLD.id;
END;
CREATE TRIGGER prompts_search_after AFTER UPDATE ON prompts
WHEN OLD.name IS NOT NEW.name OR OLD.title IS NOT NEW.title
  OR OLD.description IS NOT NEW.description OR OLD.collection IS NOT NEW.collection BEGIN
    INSERT INTO search (rowid, name, title, description, body, kind, uri, collection)
    SELECT * FROM search_source WHERE key = -NEW.id;
END;
CREATE TRIGGER prompts_unsearchable BEFORE DELETE ON prompts BEGIN
    INSERT INTO search (search, rowid, name, title, description, body, kind, uri, collection)
    SELECT 'delete', * FROM search_source WHERE key = -OLD.id;
END;
-- A prompt's messages are its body: each message written indexes the prompt again. (Writers
-- never move a message to another prompt.)
CREATE TRIGGER prompt_messages_search_before_insert BEFORE INSERT ON prompt_messages BEGIN
    INSERT INTO search (search, rowid, name, title, description, body, kind, uri, collection)
    SELECT 'delete', * FROM search_source WHERE key = -NEW.prompt_id;
END;
CREATE TRIGGER prompt_messages_search_after_insert AFTER INSERT ON prompt_messages BEGIN
    INSERT INTO search (rowid, name, title, description, body, kind, uri, collection)
    SELECT * FROM search_source WHERE key = -NEW.prompt_id;
END;
CREATE TRIGGER prompt_messages_search_before_update BEFORE UPDATE ON prompt_messages BEGIN
    INSERT INTO search (search, rowid, name, title, description, body, kind, uri, collection)
    SELECT 'delete', * FROM search_source WHERE key = -OLD.prompt_id;
END;
CREATE TRIGGER prompt_messages_search_after_update AFTER UPDATE ON prompt_messages BEGIN
    INSERT INTO search (rowid, name, title, description, body, kind, uri, collection)
    SELECT * FROM search_source WHERE key = -NEW.prompt_id;
END;
CREATE TRIGGER prompt_messages_search_before_delete BEFORE DELETE ON prompt_messages BEGIN
    INSERT INTO search (search, rowid, name, title, description, body, kind, uri, collection)
    SELECT 'delete', * FROM search_source WHERE key = -OLD.prompt_id;
END;
CREATE TRIGGER prompt_messages_search_after_delete AFTER DELETE ON prompt_messages BEGIN
    INSERT INTO search (rowid, name, title, description, body, kind, uri, collection)
    SELECT * FROM search_source WHERE key = -OLD.prompt_id;
END;
CREATE TRIGGER resources_searchable AFTER INSERT ON resources BEGIN
    INSERT INTO search (rowid, name, title, description, body, kind, uri, collection)
    SELECT * FROM search_source WHERE key = NEW.id;
END;
CREATE TRIGGER resources_search_before BEFORE UPDATE ON resources
WHEN OLD.uri IS NOT NEW.uri OR OLD.name IS NOT NEW.name OR OLD.title IS NOT NEW.title
  OR OLD.description IS NOT NEW.description OR OLD.is_text IS NOT NEW.is_text
  OR OLD.blob_hash IS NOT NEW.blob_hash OR OLD.collection IS NOT NEW.collection BEGIN
    INSERT INTO search (search, rowid, name, title, description, body, kind, uri, collection)
    SELECT 'delete', * FROM search_source WHERE key = OLD.id;
END;
CREATE TRIGGER resources_search_after AFTER UPDATE ON resources
WHEN OLD.uri IS NOT NEW.uri OR OLD.name IS NOT NEW.name OR OLD.title IS NOT NEW.title
  OR OLD.description IS NOT NEW.description OR OLD.is_text IS NOT NEW.is_text
  OR OLD.blob_hash IS NOT NEW.blob_hash OR OLD.collection IS NOT NEW.collection BEGIN
    INSERT INTO search (rowid, name, title, description, body, kind, uri, collection)
    SELECT * FROM search_source WHERE key = NEW.id;
END;
CREATE TRIGGER resources_unsearchable BEFORE DELETE ON resources BEGIN
    INSERT INTO search (search, rowid, name, title, description, body, kind, uri, collection)
    SELECT 'delete', * FROM search_source WHERE key = OLD.id;
END;
-- The items already stored, indexed from the view as the triggers index new ones.
INSERT INTO search (search) VALUES ('rebuild');
