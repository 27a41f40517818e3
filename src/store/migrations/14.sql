-- Version 13 to 14: a database nearer its content (see schema.sql).
-- The search index keeps which columns of an item hold each term, not where in them (FTS5's
-- `detail = column`). FTS5 fixes its options when a table is made, so the table is made
-- again and the items indexed anew from its view ('rebuild'); the triggers name the table
-- and stay as they are.
-- A resource's version that its row still is keeps no snapshot: the views and triggers
-- below, and `store::history::drop_current_snapshots`, which drops each such snapshot that
-- says what the row says.
-- The pages both free are free for later writes; the file itself shrinks when it is
-- vacuumed (store::schema).
DROP TABLE search_terms;
DROP TABLE search;
CREATE VIRTUAL TABLE search USING fts5(
    name, title, description, body, kind UNINDEXED, uri UNINDEXED, collection UNINDEXED,
    content = 'search_source', content_rowid = 'key',
    tokenize = 'unicode61 remove_diacritics 2', prefix = '2 3', detail = column
);
INSERT INTO search (search, rank) VALUES ('hashsize', 16777216);
CREATE VIRTUAL TABLE search_terms USING fts5vocab(search, row);
INSERT INTO search (search) VALUES ('rebuild');
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
