-- Version 4 to 5: history (see schema.sql). What was written before version 5 has no
-- versions: its history starts with its next change.
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
-- a version or a resource refers to it. At most `--keep` versions per item are kept.
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
