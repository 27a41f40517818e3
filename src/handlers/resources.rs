//! `resources/list` and `resources/read`, including reading a URI through a resource
//! template when it is not stored under exactly that spelling.

use std::sync::Arc;

use rusqlite::Connection;

use super::Resolve;
use super::paging;
use super::templates::Templates;
use crate::config::ServeConfig;
use crate::model::{StoredPrompt, StoredResource};
use crate::protocol::{Failure, Page, ReadResult};
use crate::store::read::{self, Listed};
use crate::visibility::Visibility;

/// A page of the resources `seen` shows.
pub fn list(
    conn: &Connection,
    config: &ServeConfig,
    cursor: Option<&str>,
    seen: &Visibility,
) -> Result<Page<StoredResource>, Failure> {
    let within = seen.collections();
    let mut page = paging::list(
        conn,
        Listed::Resources,
        cursor,
        config.page_size,
        |tx, window| read::resources_within(tx, window, within),
        |r| &r.info.uri,
    )?;
    if seen.is_limited() {
        paging::dated_by_items(&mut page, |r| r.last_modified);
    }
    Ok(page)
}

/// The resource stored under exactly `uri`, read from the database (for callers that keep
/// nothing, and for the server's cache when it does not hold it).
pub fn stored(conn: &Connection, uri: &str) -> Result<Option<Arc<ReadResult>>, Failure> {
    Ok(read::resource_content(conn, uri)?
        .map(|(resource, content)| Arc::new(ReadResult::new(resource, content))))
}

/// A resource found larger than the reader would read (`stored_up_to`).
pub(crate) struct TooLarge;

/// `stored`, only when the content is at most `max_bytes`.
pub(crate) fn stored_up_to(
    conn: &Connection,
    uri: &str,
    max_bytes: u64,
) -> Result<Option<Result<Arc<ReadResult>, TooLarge>>, Failure> {
    Ok(
        read::resource_content_up_to(conn, uri, max_bytes)?.map(|(resource, content)| {
            content
                .map(|content| Arc::new(ReadResult::new(resource, content)))
                .ok_or(TooLarge)
        }),
    )
}

/// Reads `uri`; `resolve` finds a resource by its exact URI (the caller's cache, or the
/// database), `search` answers a URI of the built-in search template with its query
/// (`handlers::search`), `prompt` gives a prompt the caller may get, by name, for a prompt's
/// file (`handlers::prompt_source`), `templates` gives the library's resource templates;
/// each is asked only when the one before has no answer.
pub(crate) fn read<E: From<Failure>>(
    uri: &str,
    resolve: Resolve<E>,
    search: impl FnOnce(&str) -> Result<Arc<ReadResult>, E>,
    prompt: impl FnOnce(&str) -> Result<Option<Arc<StoredPrompt>>, E>,
    templates: impl FnOnce() -> Result<Arc<Templates>, E>,
) -> Result<Arc<ReadResult>, E> {
    if let Some(found) = resolve(uri)? {
        return Ok(found);
    }
    if let Some(query) = super::search::query_of(uri) {
        return search(&query);
    }
    if let Some(name) = super::prompt_source::name_of(uri)
        && let Some(stored) = prompt(&name)?
    {
        return Ok(super::prompt_source::read(&stored, uri));
    }
    // A URI that matches a template resolves to the stored resource the template maps its
    // variables to (e.g. a percent-encoded spelling of a stored URI).
    for template in templates()?.parsed() {
        let Some(values) = template.matches(uri) else {
            continue;
        };
        let Ok(canonical) = template.expand(&values) else {
            continue;
        };
        if canonical != uri
            && let Some(found) = resolve(&canonical)?
        {
            return Ok(found);
        }
    }
    Err(E::from(Failure::ResourceNotFound {
        uri: uri.to_string(),
        message: format!(
            "no resource '{uri}' in the library; resources/list shows the URIs there are"
        ),
    }))
}
