//! Shaped list pages, kept until the library changes. Hosts list often and the library
//! changes rarely, and shaping a page (reading every item, building its JSON) costs far more
//! than checking whether anything changed: one look at the change log's last row.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use rusqlite::Connection;

use crate::handlers::Failure;
use crate::protocol::{Revision, ShapedPage};

/// Which list a page belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum ListKind {
    Prompts,
    Resources,
    Templates,
}

/// Pages more than this are forgotten at once (cursors are bounded by list length, so only a
/// client walking huge lists in every revision gets near it).
const MAX_PAGES: usize = 1024;

type Key = (ListKind, Revision, Option<String>);

#[derive(Default)]
pub(super) struct PageCache {
    /// Each page with the change-log position it was shaped at.
    pages: Mutex<HashMap<Key, (i64, Arc<ShapedPage>)>>,
}

impl PageCache {
    /// The page for `key` as of now: the kept one if nothing changed since it was shaped,
    /// else a fresh one from `shape`. Failures (a stale cursor, say) are not kept.
    pub(super) fn page(
        &self,
        conn: &Connection,
        kind: ListKind,
        revision: Revision,
        cursor: Option<&str>,
        shape: impl FnOnce() -> Result<ShapedPage, Failure>,
    ) -> Result<Arc<ShapedPage>, Failure> {
        // Read before the data: a commit in between leaves the page newer than its key, and
        // the next request, seeing a later position, shapes it again.
        let position = crate::store::read::change_position(conn)?;
        let key = (kind, revision, cursor.map(str::to_string));
        if let Some((at, page)) = self.lock().get(&key)
            && *at == position
        {
            return Ok(Arc::clone(page));
        }
        let page = Arc::new(shape()?);
        let mut pages = self.lock();
        if pages.len() >= MAX_PAGES {
            pages.clear();
        }
        pages.insert(key, (position, Arc::clone(&page)));
        Ok(page)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Key, (i64, Arc<ShapedPage>)>> {
        self.pages.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
