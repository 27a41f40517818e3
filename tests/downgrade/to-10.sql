-- What migration 11 added, gone: each item's version and commit, and the change log's rows
-- for moves.
DROP TRIGGER prompts_update;
DROP TRIGGER resources_update;
CREATE TRIGGER prompts_update AFTER UPDATE ON prompts
WHEN OLD.content_hash IS NOT NEW.content_hash OR OLD.name IS NOT NEW.name BEGIN
    INSERT INTO change_log (at, kind, op, key)
    VALUES (CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER), 'prompt', 'update', NEW.name);
END;
CREATE TRIGGER resources_update AFTER UPDATE ON resources
WHEN OLD.content_hash IS NOT NEW.content_hash OR OLD.uri IS NOT NEW.uri BEGIN
    INSERT INTO change_log (at, kind, op, key)
    VALUES (CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER), 'resource', 'update', NEW.uri);
END;
ALTER TABLE prompts DROP COLUMN source_commit;
ALTER TABLE prompts DROP COLUMN version;
ALTER TABLE resources DROP COLUMN source_commit;
ALTER TABLE resources DROP COLUMN version;
ALTER TABLE resource_templates DROP COLUMN version;
PRAGMA user_version = 10;
