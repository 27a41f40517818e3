-- What migration 5 adds, gone: the database as version 4 left it.
DROP TABLE versions; DROP TABLE writes;
PRAGMA user_version = 4;
