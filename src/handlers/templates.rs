//! `resources/templates/list`.

use rusqlite::Connection;

use super::Failure;
use super::paging::{Page, paginate};
use crate::config::ServeConfig;
use crate::model::StoredTemplate;
use crate::store::read;

pub fn list(
    conn: &Connection,
    config: &ServeConfig,
    cursor: Option<&str>,
) -> Result<Page<StoredTemplate>, Failure> {
    paginate(
        read::templates(conn)?,
        cursor,
        config.page_size,
        |t| t.content_hash,
        |t| t.last_modified,
    )
}
