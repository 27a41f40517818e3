-- Version 6 to 7: each completion table's index is stored beside it (see schema.sql). The
-- indexes of the tables already there are built and stored after this step, by
-- `store::schema::prepare`.
CREATE TABLE completion_indexes (
    table_id INTEGER PRIMARY KEY REFERENCES completion_tables (id) ON DELETE CASCADE,
    version  INTEGER NOT NULL,  -- the table's version the index was built from
    bytes    BLOB NOT NULL      -- `TableIndex::encode`
) STRICT;
