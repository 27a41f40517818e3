-- What migration 12 added, gone: labels, their moves, the channel of changes and tokens.
DROP TABLE label_moves;
DROP TABLE label_writes;
DROP TABLE labels;
DROP INDEX change_log_by_channel;
ALTER TABLE change_log DROP COLUMN channel;
ALTER TABLE tokens DROP COLUMN channel;
PRAGMA user_version = 11;
