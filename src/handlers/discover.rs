//! `server/discover` and `initialize`: what the server offers, and how fresh the library is.

use rusqlite::Connection;

use crate::config::{Mirror, Mirrors};
use crate::protocol::{Discovery, Failure};
use crate::store::read;

/// What the server offers; `mirrors` adds how to reach it through tools.
pub fn discover(conn: &Connection, mirrors: &Mirrors) -> Result<Discovery, Failure> {
    let read::Summary {
        prompts,
        resources,
        last_modified,
    } = read::summary(conn)?;
    let mut tools = Vec::new();
    if mirrors.has(Mirror::Prompts) {
        tools.push("list_prompts and get_prompt for the prompts");
    }
    if mirrors.has(Mirror::Resources) {
        tools.push("list_resources and read_resource for the documents");
    }
    if mirrors.has(Mirror::Search) {
        tools.push("search_library to find either by words");
    }
    let through_tools = if tools.is_empty() {
        String::new()
    } else {
        format!(" The same through tools: {}.", tools.join("; "))
    };
    Ok(Discovery {
        instructions: format!(
            "promptshelf serves a curated library of {prompts} prompt templates and {resources} \
             reference documents. List prompts to find a workflow (code review, commit messages, \
             tests, ...), fill its arguments (completion suggests values), and read resources \
             for the guides they cite.{through_tools}"
        ),
        last_modified,
    })
}
