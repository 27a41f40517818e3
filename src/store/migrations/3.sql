-- Version 2 to 3: full-text search (see schema.sql).
-- Full-text search over the library (`promptshelf search`, the `shelf://search/{query}`
-- template): one FTS5 row per prompt and per resource, kept by the triggers below in the
-- writing transaction, so every write, import and removal leaves it current and serving
-- builds nothing. The rowid is the resource's id, or minus the prompt's id. Indexed:
-- name, title, description, and the body (a prompt's message templates in order, a text
-- resource's content; nothing for binary content). `kind`, `uri` (NULL for a prompt) and
-- `collection` are stored to answer and filter with, not indexed. The tokenizer is
-- unicode61 alone, without porter stemming: libraries hold code and names that stemming
-- would mangle, in any language, and the index's terms are what completion offers, so
-- they should be words as written (folded to lower case, diacritics removed).
CREATE VIRTUAL TABLE search USING fts5(
    name, title, description, body, kind UNINDEXED, uri UNINDEXED, collection UNINDEXED,
    tokenize = 'unicode61 remove_diacritics 2'
);
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
    UPDATE search SET body = (SELECT group_concat(body, char(10) ORDER BY position)
                              FROM prompt_messages WHERE prompt_id = NEW.prompt_id)
    WHERE rowid = -NEW.prompt_id;
END;
CREATE TRIGGER prompt_messages_search_update AFTER UPDATE ON prompt_messages BEGIN
    UPDATE search SET body = (SELECT group_concat(body, char(10) ORDER BY position)
                              FROM prompt_messages WHERE prompt_id = NEW.prompt_id)
    WHERE rowid = -NEW.prompt_id;
END;
CREATE TRIGGER prompt_messages_unsearchable AFTER DELETE ON prompt_messages BEGIN
    UPDATE search SET body = coalesce((SELECT group_concat(body, char(10) ORDER BY position)
                                       FROM prompt_messages WHERE prompt_id = OLD.prompt_id), '')
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

-- The items already stored, indexed as the triggers index new ones.
INSERT INTO search (rowid, name, title, description, body, kind, collection)
SELECT -id, name, title, description,
       coalesce((SELECT group_concat(body, char(10) ORDER BY position)
                 FROM prompt_messages WHERE prompt_id = prompts.id), ''),
       'prompt', collection
FROM prompts;
INSERT INTO search (rowid, name, title, description, body, kind, uri, collection)
SELECT resources.id, name, title, description,
       CASE WHEN is_text THEN CAST(blobs.data AS TEXT) END, 'resource', uri, collection
FROM resources JOIN blobs ON blobs.hash = resources.blob_hash;
