-- What migration 6 changes, undone: the search index without its prefix indexes, the
-- database as version 5 left it.
DROP TABLE search_terms;
DROP TABLE search;
CREATE VIRTUAL TABLE search USING fts5(
    name, title, description, body, kind UNINDEXED, uri UNINDEXED, collection UNINDEXED,
    tokenize = 'unicode61 remove_diacritics 2'
);
-- The index's terms with how many items hold each, for completing a search query.
CREATE VIRTUAL TABLE search_terms USING fts5vocab(search, row);
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
PRAGMA user_version = 5;
