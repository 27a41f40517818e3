-- What migration 4 adds, gone: the database as version 3 left it.
DROP TABLE collections; DROP TABLE tokens;
DROP INDEX prompts_by_collection; DROP INDEX templates_by_collection;
PRAGMA user_version = 3;
