-- What migration 7 added, gone: the stored completion indexes, the database as version 6
-- left it.
DROP TABLE completion_indexes;
PRAGMA user_version = 6;
