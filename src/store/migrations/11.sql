-- Version 10 to 11: provenance (see schema.sql). Each prompt and resource keeps its newest
-- version's number and the commit its folder was at, each template its newest version's
-- number, and a move to another file or collection is logged as a change, since a server
-- serves both. The items already stored take their numbers from the history; their commits
-- were not known.
ALTER TABLE prompts ADD COLUMN version INTEGER;
ALTER TABLE prompts ADD COLUMN source_commit TEXT;
ALTER TABLE resources ADD COLUMN version INTEGER;
ALTER TABLE resources ADD COLUMN source_commit TEXT;
ALTER TABLE resource_templates ADD COLUMN version INTEGER;
UPDATE prompts SET version = (SELECT max(id) FROM versions
                              WHERE kind = 'prompt' AND key = prompts.name);
UPDATE resources SET version = (SELECT max(id) FROM versions
                                WHERE kind = 'resource' AND key = resources.uri);
UPDATE resource_templates SET version = (SELECT max(id) FROM versions
                                         WHERE kind = 'template'
                                         AND key = resource_templates.uri_template);
DROP TRIGGER prompts_update;
DROP TRIGGER resources_update;
CREATE TRIGGER prompts_update AFTER UPDATE ON prompts
WHEN OLD.content_hash IS NOT NEW.content_hash OR OLD.name IS NOT NEW.name
  OR OLD.origin IS NOT NEW.origin OR OLD.collection IS NOT NEW.collection BEGIN
    INSERT INTO change_log (at, kind, op, key)
    VALUES (CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER), 'prompt', 'update', NEW.name);
END;
CREATE TRIGGER resources_update AFTER UPDATE ON resources
WHEN OLD.content_hash IS NOT NEW.content_hash OR OLD.uri IS NOT NEW.uri
  OR OLD.origin IS NOT NEW.origin OR OLD.collection IS NOT NEW.collection BEGIN
    INSERT INTO change_log (at, kind, op, key)
    VALUES (CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER), 'resource', 'update', NEW.uri);
END;
