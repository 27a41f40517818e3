-- What migration 10 changed, undone: the search index with its own copy of the text it
-- indexed, and the triggers that filled it.
DROP TRIGGER prompts_searchable;
DROP TRIGGER prompts_search_before;
DROP TRIGGER prompts_search_after;
DROP TRIGGER prompts_unsearchable;
DROP TRIGGER prompt_messages_search_before_insert;
DROP TRIGGER prompt_messages_search_after_insert;
DROP TRIGGER prompt_messages_search_before_update;
DROP TRIGGER prompt_messages_search_after_update;
DROP TRIGGER prompt_messages_search_before_delete;
DROP TRIGGER prompt_messages_search_after_delete;
DROP TRIGGER resources_searchable;
DROP TRIGGER resources_search_before;
DROP TRIGGER resources_search_after;
DROP TRIGGER resources_unsearchable;
DROP TABLE search_terms;
DROP TABLE search;
DROP INDEX prompts_by_search_key;
DROP VIEW search_source;
CREATE VIRTUAL TABLE search USING fts5(
    name, title, description, body, kind UNINDEXED, uri UNINDEXED, collection UNINDEXED,
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
CREATE TRIGGER prompts_searchable AFTER INSERT ON prompts BEGIN
    INSERT INTO search (rowid, name, title, description, body, kind, collection)
    VALUES (-NEW.id, NEW.name, NEW.title, NEW.description, '', 'prompt', NEW.collection);
END;
CREATE TRIGGER prompts_search_update AFTER UPDATE ON prompts
WHEN OLD.name IS NOT NEW.name OR OLD.title IS NOT NEW.title
  OR OLD.description IS NOT NEW.description OR OLD.collection IS NOT NEW.collection BEGIN
    UPDATE search SET name = NEW.name, title = NEW.title, description = NEW.description,
        collection = NEW.collection
    WHERE rowid = -NEW.id;
END;
CREATE TRIGGER prompts_unsearchable AFTER DELETE ON prompts BEGIN
    DELETE FROM search WHERE rowid = -OLD.id;
END;
-- A prompt's body is its messages in order; each message written re-indexes it.
CREATE TRIGGER prompt_messages_searchable AFTER INSERT ON prompt_messages BEGIN
    UPDATE search SET body = (SELECT group_concat(body, char(10)) FROM (
                              SELECT body FROM prompt_messages WHERE prompt_id = NEW.prompt_id
                              ORDER BY position))
    WHERE rowid = -NEW.prompt_id;
END;
CREATE TRIGGER prompt_messages_search_update AFTER UPDATE ON prompt_messages BEGIN
    UPDATE search SET body = (SELECT group_concat(body, char(10)) FROM (
                              SELECT body FROM prompt_messages WHERE prompt_id = NEW.prompt_id
                              ORDER BY position))
    WHERE rowid = -NEW.prompt_id;
END;
CREATE TRIGGER prompt_messages_unsearchable AFTER DELETE ON prompt_messages BEGIN
    UPDATE search SET body = coalesce((SELECT group_concat(body, char(10)) FROM (
                                       SELECT body FROM prompt_messages WHERE prompt_id = OLD.prompt_id
                                       ORDER BY position)), '')
    WHERE rowid = -OLD.prompt_id;
END;
CREATE TRIGGER resources_searchable AFTER INSERT ON resources BEGIN
    INSERT INTO search (rowid, name, title, description, body, kind, uri, collection)
    VALUES (NEW.id, NEW.name, NEW.title, NEW.description,
            (SELECT CAST(data AS TEXT) FROM blobs WHERE hash = NEW.blob_hash AND NEW.is_text),
            'resource', NEW.uri, NEW.collection);
END;
CREATE TRIGGER resources_search_update AFTER UPDATE ON resources
WHEN OLD.uri IS NOT NEW.uri OR OLD.name IS NOT NEW.name OR OLD.title IS NOT NEW.title
  OR OLD.description IS NOT NEW.description OR OLD.is_text IS NOT NEW.is_text
  OR OLD.blob_hash IS NOT NEW.blob_hash OR OLD.collection IS NOT NEW.collection BEGIN
    UPDATE search SET name = NEW.name, title = NEW.title, description = NEW.description,
        body = (SELECT CAST(data AS TEXT) FROM blobs WHERE hash = NEW.blob_hash AND NEW.is_text),
        uri = NEW.uri, collection = NEW.collection
    WHERE rowid = NEW.id;
END;
CREATE TRIGGER resources_unsearchable AFTER DELETE ON resources BEGIN
    DELETE FROM search WHERE rowid = OLD.id;
END;
INSERT INTO search (rowid, name, title, description, body, kind, collection)
SELECT -id, name, title, description,
       coalesce((SELECT group_concat(body, char(10)) FROM (
                     SELECT body FROM prompt_messages WHERE prompt_id = prompts.id
                     ORDER BY position)), ''),
       'prompt', collection
FROM prompts;
INSERT INTO search (rowid, name, title, description, body, kind, uri, collection)
SELECT resources.id, name, title, description,
       CASE WHEN is_text THEN CAST(blobs.data AS TEXT) END, 'resource', uri, collection
FROM resources JOIN blobs ON blobs.hash = resources.blob_hash;
PRAGMA user_version = 9;
