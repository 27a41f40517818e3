//! `server/discover` and `initialize`: what the server offers, and how fresh the library is.

use rusqlite::Connection;

use crate::config::{Mirror, Mirrors};
use crate::protocol::{Discovery, Failure};
use crate::store::read;
use crate::visibility::Visibility;

/// What the server offers; `mirrors` adds how to reach it through tools. A caller `seen`
/// shows only some collections to is told no counts: the library's would say how much it
/// does not see, and its own would take a pass over its collections at every handshake
/// (the library's come from `item_counts`, kept by the write triggers). Nothing in its
/// answer then depends on the library, so it is dated 0.
pub(crate) fn discover(
    conn: &Connection,
    mirrors: &Mirrors,
    seen: &Visibility,
) -> Result<Discovery, Failure> {
    let (library, last_modified) = if seen.is_limited() {
        (
            "a curated library of prompt templates and reference documents".to_string(),
            0,
        )
    } else {
        let read::Summary {
            prompts,
            resources,
            last_modified,
        } = read::summary(conn)?;
        (
            format!(
                "a curated library of {prompts} prompt templates and {resources} reference documents"
            ),
            last_modified,
        )
    };
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
            "promptshelf serves {library}. List prompts to find a workflow (code review, commit messages, \
             tests, ...), fill its arguments (completion suggests values), and read resources \
             for the guides they cite.{through_tools}"
        ),
        last_modified,
    })
}
