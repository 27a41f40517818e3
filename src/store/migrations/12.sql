-- Version 11 to 12: release channels (see schema.sql). Labels, the record of their moves,
-- the channel of a change and of a token.
ALTER TABLE change_log ADD COLUMN channel TEXT;
ALTER TABLE tokens ADD COLUMN channel TEXT;
CREATE INDEX change_log_by_channel ON change_log (channel, kind, seq) WHERE channel IS NOT NULL;
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
