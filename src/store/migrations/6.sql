-- Version 5 to 6: the search index keeps prefix indexes of two and three letters (see
-- schema.sql). FTS5 fixes its options when a table is made, so the table is made again and
-- what is stored indexed anew; the triggers that keep it name the table, not its options,
-- and stay as they are.
DROP TABLE search_terms;
DROP TABLE search;
CREATE VIRTUAL TABLE search USING fts5(
    name, title, description, body, kind UNINDEXED, uri UNINDEXED, collection UNINDEXED,
    tokenize = 'unicode61 remove_diacritics 2', prefix = '2 3'
);
-- A write gathers up to 16 MiB of index in memory before it writes a segment (FTS5's
-- default is 1 MiB): with the prefix indexes, an import of 10,000 files spent much of its
-- index time writing and merging small segments (docs/benchmarks.md, "What the search
-- index adds to an import"). Only writers hold that memory; serving never writes. Merging
-- is left as it is (`automerge` 4): merging less often made searches slower.
INSERT INTO search (search, rank) VALUES ('hashsize', 16777216);
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
