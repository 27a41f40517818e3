//! `resources/list` and `resources/read`, including reading a URI through a resource
//! template when it is not stored under exactly that spelling.

use rusqlite::Connection;

use super::paging::{Page, paginate};
use super::{Failure, ReadResult};
use crate::config::ServeConfig;
use crate::model::StoredResource;
use crate::store::read;
use crate::uri_template::UriTemplate;

pub fn list(
    conn: &Connection,
    config: &ServeConfig,
    cursor: Option<&str>,
) -> Result<Page<StoredResource>, Failure> {
    paginate(
        read::resources(conn)?,
        cursor,
        config.page_size,
        |r| r.content_hash,
        |r| r.last_modified,
    )
}

pub fn read(conn: &Connection, uri: &str) -> Result<ReadResult, Failure> {
    if let Some((resource, content)) = read::resource_content(conn, uri)? {
        return Ok(ReadResult::new(resource, content));
    }
    // A URI that matches a template resolves to the stored resource the template maps its
    // variables to (e.g. a percent-encoded spelling of a stored URI).
    for stored in read::templates(conn)? {
        let Ok(template) = UriTemplate::parse(&stored.template.uri_template) else {
            continue;
        };
        let Some(values) = template.matches(uri) else {
            continue;
        };
        let Ok(canonical) = template.expand(&values) else {
            continue;
        };
        if canonical != uri
            && let Some((resource, content)) = read::resource_content(conn, &canonical)?
        {
            return Ok(ReadResult::new(resource, content));
        }
    }
    Err(Failure::ResourceNotFound {
        uri: uri.to_string(),
        message: format!(
            "no resource '{uri}' in the library; resources/list shows the URIs there are"
        ),
    })
}
