-- Version 12 to 13: resources' contents packed (see schema.sql and `store::blobs`). Every
-- stored content that LZ4 makes at least an eighth smaller is packed; the search index's
-- view reads the text through `unpacked`, which the store adds to every connection, and its
-- two arms become views of their own, which the triggers read (an operator's `sqlite3`
-- writing a prompt never prepares the arm that unpacks). The pages the contents gave up are
-- free for later writes; the file itself shrinks when it is vacuumed (store::schema).
ALTER TABLE blobs ADD COLUMN packing INTEGER NOT NULL DEFAULT 0 CHECK (packing IN (0, 1));
UPDATE blobs SET data = packed(data), packing = 1 WHERE packed(data) IS NOT NULL;
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
DROP VIEW search_source;
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
