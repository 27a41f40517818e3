//! `server/discover` and `initialize`: what the server offers, and how fresh the library is.

use rusqlite::Connection;

use crate::protocol::{Discovery, Failure};
use crate::store::read;

pub fn discover(conn: &Connection) -> Result<Discovery, Failure> {
    let read::Summary {
        prompts,
        resources,
        last_modified,
    } = read::summary(conn)?;
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
