-- What migration 8 changed, undone: the change log's and the search body's triggers as
-- version 7 wrote them (with `unixepoch('subsec')` and an aggregate's ORDER BY).
DROP TRIGGER prompts_insert;
DROP TRIGGER prompts_update;
DROP TRIGGER prompts_delete;
DROP TRIGGER resources_insert;
DROP TRIGGER resources_update;
DROP TRIGGER resources_delete;
DROP TRIGGER templates_insert;
DROP TRIGGER templates_update;
DROP TRIGGER templates_delete;
DROP TRIGGER tables_insert;
DROP TRIGGER tables_update;
DROP TRIGGER tables_delete;
DROP TRIGGER prompt_messages_searchable;
DROP TRIGGER prompt_messages_search_update;
DROP TRIGGER prompt_messages_unsearchable;
CREATE TRIGGER prompts_insert AFTER INSERT ON prompts BEGIN
    INSERT INTO change_log (at, kind, op, key)
    VALUES (CAST(unixepoch('subsec') * 1000 AS INTEGER), 'prompt', 'insert', NEW.name);
END;
CREATE TRIGGER prompts_update AFTER UPDATE ON prompts
WHEN OLD.content_hash IS NOT NEW.content_hash OR OLD.name IS NOT NEW.name BEGIN
    INSERT INTO change_log (at, kind, op, key)
    VALUES (CAST(unixepoch('subsec') * 1000 AS INTEGER), 'prompt', 'update', NEW.name);
END;
CREATE TRIGGER prompts_delete AFTER DELETE ON prompts BEGIN
    INSERT INTO change_log (at, kind, op, key)
    VALUES (CAST(unixepoch('subsec') * 1000 AS INTEGER), 'prompt', 'delete', OLD.name);
END;
CREATE TRIGGER resources_insert AFTER INSERT ON resources BEGIN
    INSERT INTO change_log (at, kind, op, key)
    VALUES (CAST(unixepoch('subsec') * 1000 AS INTEGER), 'resource', 'insert', NEW.uri);
END;
CREATE TRIGGER resources_update AFTER UPDATE ON resources
WHEN OLD.content_hash IS NOT NEW.content_hash OR OLD.uri IS NOT NEW.uri BEGIN
    INSERT INTO change_log (at, kind, op, key)
    VALUES (CAST(unixepoch('subsec') * 1000 AS INTEGER), 'resource', 'update', NEW.uri);
END;
CREATE TRIGGER resources_delete AFTER DELETE ON resources BEGIN
    INSERT INTO change_log (at, kind, op, key)
    VALUES (CAST(unixepoch('subsec') * 1000 AS INTEGER), 'resource', 'delete', OLD.uri);
END;
CREATE TRIGGER templates_insert AFTER INSERT ON resource_templates BEGIN
    INSERT INTO change_log (at, kind, op, key)
    VALUES (CAST(unixepoch('subsec') * 1000 AS INTEGER), 'template', 'insert', NEW.uri_template);
END;
CREATE TRIGGER templates_update AFTER UPDATE ON resource_templates
WHEN OLD.content_hash IS NOT NEW.content_hash OR OLD.uri_template IS NOT NEW.uri_template BEGIN
    INSERT INTO change_log (at, kind, op, key)
    VALUES (CAST(unixepoch('subsec') * 1000 AS INTEGER), 'template', 'update', NEW.uri_template);
END;
CREATE TRIGGER templates_delete AFTER DELETE ON resource_templates BEGIN
    INSERT INTO change_log (at, kind, op, key)
    VALUES (CAST(unixepoch('subsec') * 1000 AS INTEGER), 'template', 'delete', OLD.uri_template);
END;
CREATE TRIGGER tables_insert AFTER INSERT ON completion_tables BEGIN
    INSERT INTO change_log (at, kind, op, key)
    VALUES (CAST(unixepoch('subsec') * 1000 AS INTEGER), 'values', 'insert', NEW.name);
END;
CREATE TRIGGER tables_update AFTER UPDATE ON completion_tables
WHEN OLD.version IS NOT NEW.version OR OLD.name IS NOT NEW.name BEGIN
    INSERT INTO change_log (at, kind, op, key)
    VALUES (CAST(unixepoch('subsec') * 1000 AS INTEGER), 'values', 'update', NEW.name);
END;
CREATE TRIGGER tables_delete AFTER DELETE ON completion_tables BEGIN
    INSERT INTO change_log (at, kind, op, key)
    VALUES (CAST(unixepoch('subsec') * 1000 AS INTEGER), 'values', 'delete', OLD.name);
END;
CREATE TRIGGER prompt_messages_searchable AFTER INSERT ON prompt_messages BEGIN
    UPDATE search SET body = (SELECT group_concat(body, char(10) ORDER BY position)
                              FROM prompt_messages WHERE prompt_id = NEW.prompt_id)
    WHERE rowid = -NEW.prompt_id;
END;
CREATE TRIGGER prompt_messages_search_update AFTER UPDATE ON prompt_messages BEGIN
    UPDATE search SET body = (SELECT group_concat(body, char(10) ORDER BY position)
                              FROM prompt_messages WHERE prompt_id = NEW.prompt_id)
    WHERE rowid = -NEW.prompt_id;
END;
CREATE TRIGGER prompt_messages_unsearchable AFTER DELETE ON prompt_messages BEGIN
    UPDATE search SET body = coalesce((SELECT group_concat(body, char(10) ORDER BY position)
                                       FROM prompt_messages WHERE prompt_id = OLD.prompt_id), '')
    WHERE rowid = -OLD.prompt_id;
END;
PRAGMA user_version = 7;
