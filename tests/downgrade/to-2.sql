-- What migration 3 adds, gone: the database as version 2 left it.
DROP TABLE search_terms; DROP TABLE search;
DROP TRIGGER prompts_searchable; DROP TRIGGER prompts_search_update;
DROP TRIGGER prompts_unsearchable; DROP TRIGGER prompt_messages_searchable;
DROP TRIGGER prompt_messages_search_update; DROP TRIGGER prompt_messages_unsearchable;
DROP TRIGGER resources_searchable; DROP TRIGGER resources_search_update;
DROP TRIGGER resources_unsearchable;
PRAGMA user_version = 2;
