-- Version 3 to 4: collections and bearer tokens, and the indexes by collection that a token
-- limited to some collections is served with (see schema.sql). The collections already in
-- the library get their rows, with where and when they were imported not known.
CREATE TABLE collections (
    name        TEXT PRIMARY KEY NOT NULL CHECK (length(name) > 0),
    source      TEXT,     -- the folder's absolute path; NULL when not known (before version 4)
    imported_at INTEGER   -- when it was last imported; NULL when not known
) STRICT;
INSERT INTO collections (name)
SELECT collection FROM prompts WHERE collection IS NOT NULL
UNION SELECT collection FROM resources WHERE collection IS NOT NULL
UNION SELECT collection FROM resource_templates WHERE collection IS NOT NULL;
CREATE TABLE tokens (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE CHECK (length(name) > 0),
    hash        BLOB NOT NULL UNIQUE CHECK (length(hash) = 32),
    collections TEXT CHECK (collections IS NULL OR json_valid(collections)),
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER       -- NULL: never expires
) STRICT;
CREATE INDEX prompts_by_collection ON prompts (collection, name);
CREATE INDEX templates_by_collection ON resource_templates (collection, uri_template);
