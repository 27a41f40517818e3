-- Version 8 to 9: the front matter keys of an item's file that the format does not read (a
-- host's own, such as Claude Code's `allowed-tools` or VS Code's `applyTo`), kept with the
-- item as a JSON object so that an export can write them back.
ALTER TABLE prompts ADD COLUMN meta TEXT CHECK (meta IS NULL OR json_valid(meta));
ALTER TABLE resources ADD COLUMN meta TEXT CHECK (meta IS NULL OR json_valid(meta));
