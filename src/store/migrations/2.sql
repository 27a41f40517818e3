-- Version 1 to 2: the library's summary for the handshake (see schema.sql).
-- What `initialize`, `server/discover` and the lists report, without a pass over any table:
-- how many prompts and resources there are (kept by the triggers below, in the writing
-- transaction) and, through the `*_by_last_modified` indexes, when the newest item changed.
CREATE TABLE item_counts (
    kind  TEXT PRIMARY KEY NOT NULL CHECK (kind IN ('prompt', 'resource')),
    items INTEGER NOT NULL CHECK (items >= 0)
) STRICT;
INSERT INTO item_counts (kind, items)
VALUES ('prompt', (SELECT count(*) FROM prompts)), ('resource', (SELECT count(*) FROM resources));
CREATE TRIGGER prompts_counted_in AFTER INSERT ON prompts BEGIN
    UPDATE item_counts SET items = items + 1 WHERE kind = 'prompt';
END;
CREATE TRIGGER prompts_counted_out AFTER DELETE ON prompts BEGIN
    UPDATE item_counts SET items = items - 1 WHERE kind = 'prompt';
END;
CREATE TRIGGER resources_counted_in AFTER INSERT ON resources BEGIN
    UPDATE item_counts SET items = items + 1 WHERE kind = 'resource';
END;
CREATE TRIGGER resources_counted_out AFTER DELETE ON resources BEGIN
    UPDATE item_counts SET items = items - 1 WHERE kind = 'resource';
END;
CREATE INDEX prompts_by_last_modified ON prompts (last_modified);
CREATE INDEX resources_by_last_modified ON resources (last_modified);
CREATE INDEX templates_by_last_modified ON resource_templates (last_modified);
-- A list's version (what its cursors are bound to): the last change of its kind.
CREATE INDEX change_log_by_kind ON change_log (kind, seq);
