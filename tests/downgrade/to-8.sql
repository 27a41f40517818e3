-- What migration 9 added, gone: the kept front matter of prompts and resources.
ALTER TABLE prompts DROP COLUMN meta;
ALTER TABLE resources DROP COLUMN meta;
PRAGMA user_version = 8;
