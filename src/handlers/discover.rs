//! `server/discover` and `initialize`: what the server offers, and how fresh the library is.

use rusqlite::Connection;

use crate::protocol::{Discovery, Failure};

pub fn discover(conn: &Connection) -> Result<Discovery, Failure> {
    let (prompts, resources, last_modified): (i64, i64, i64) = conn
        .query_row(
            "SELECT (SELECT count(*) FROM prompts), (SELECT count(*) FROM resources),
             max(coalesce((SELECT max(last_modified) FROM prompts), 0),
                 coalesce((SELECT max(last_modified) FROM resources), 0),
                 coalesce((SELECT max(last_modified) FROM resource_templates), 0))",
            [],
            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
        )
        .map_err(crate::store::StoreError::from)?;
    Ok(Discovery {
        instructions: format!(
            "promptshelf serves a curated library of {prompts} prompt templates and {resources} \
             reference documents. List prompts to find a workflow (code review, commit messages, \
             tests, ...), fill its arguments (completion suggests values), and read resources \
             for the guides they cite."
        ),
        last_modified,
    })
}
