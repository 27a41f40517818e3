-- What migration 2 adds, gone too: the database as version 1 left it.
DROP TABLE item_counts;
DROP TRIGGER prompts_counted_in; DROP TRIGGER prompts_counted_out;
DROP TRIGGER resources_counted_in; DROP TRIGGER resources_counted_out;
DROP INDEX prompts_by_last_modified; DROP INDEX resources_by_last_modified;
DROP INDEX templates_by_last_modified; DROP INDEX change_log_by_kind;
PRAGMA user_version = 1;
