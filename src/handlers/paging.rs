//! Pages of a list, read as ranges of the list's key (`store::read::Window`), with opaque
//! cursors that carry the key to go on after and the list's version (the change-log
//! position of its last change), so a cursor from before a change is refused and the
//! client starts over instead of skipping or repeating items.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use rusqlite::Connection;

use crate::protocol::{Failure, Page};
use crate::store::read::{self, Listed, Listing, Window};
use crate::store::{self, StoreError};

/// The page of `list` that `cursor` points at (the first without one): `read` reads the
/// list's items in a window, `key_of` is the key the list is ordered by. The list's version
/// and the page are read in one read transaction, so the page is of the list its next
/// cursor is bound to.
pub(super) fn list<T>(
    conn: &Connection,
    list: Listed,
    cursor: Option<&str>,
    page_size: usize,
    read: impl FnOnce(&Connection, Window) -> store::Result<Vec<T>>,
    key_of: impl Fn(&T) -> &str,
) -> Result<Page<T>, Failure> {
    let _tx = store::read_transaction(conn).map_err(StoreError::from)?;
    let listing = read::listing(conn, list)?;
    let after = start_after(cursor, listing.version)?;
    let window = Window {
        after: &after,
        limit: Some(page_size.max(1) + 1),
    };
    let items = read(conn, window)?;
    Ok(page(items, page_size, listing, key_of))
}

/// Dates a page read for a caller limited to some collections by its own items: the list's
/// `last_modified` is the whole library's, and would tell when items it does not see last
/// changed (through the caching hint made from it).
pub(super) fn dated_by_items<T>(page: &mut Page<T>, modified_of: impl Fn(&T) -> i64) {
    page.last_modified = page.items.iter().map(modified_of).max().unwrap_or(0);
}

/// The key the page `cursor` points at goes on after ("" for the first page), checked
/// against the list's `version`.
fn start_after(cursor: Option<&str>, version: i64) -> Result<String, Failure> {
    let Some(cursor) = cursor else {
        return Ok(String::new());
    };
    let (cursor_version, after) = decode(cursor).ok_or_else(|| {
        Failure::InvalidParams(
            "invalid cursor: it was not issued by this server; list again without a cursor"
                .to_string(),
        )
    })?;
    if cursor_version != version {
        return Err(Failure::InvalidParams(
            "stale cursor: the list changed since this cursor was issued; list again without a cursor"
                .to_string(),
        ));
    }
    Ok(after)
}

/// The page made of `items`: those after the cursor's key, in key order, up to one more
/// than `page_size` (the one more only says that another page follows).
fn page<T>(
    mut items: Vec<T>,
    page_size: usize,
    listing: Listing,
    key_of: impl Fn(&T) -> &str,
) -> Page<T> {
    let page_size = page_size.max(1);
    let more = items.len() > page_size;
    items.truncate(page_size);
    let next_cursor = match items.last() {
        Some(last) if more => Some(encode(listing.version, key_of(last))),
        _ => None,
    };
    Page {
        items,
        next_cursor,
        last_modified: listing.last_modified,
    }
}

fn encode(version: i64, after: &str) -> String {
    URL_SAFE_NO_PAD.encode(format!("{version}:{after}"))
}

fn decode(cursor: &str) -> Option<(i64, String)> {
    let bytes = URL_SAFE_NO_PAD.decode(cursor).ok()?;
    let text = String::from_utf8(bytes).ok()?;
    let (version, after) = text.split_once(':')?;
    Some((version.parse().ok()?, after.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const LISTING: Listing = Listing {
        version: 7,
        last_modified: 1,
    };

    #[test]
    fn pages_follow_one_another_and_stale_cursors_fail() {
        let names = |items: &[&str]| items.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let first = page(names(&["a", "b", "c"]), 2, LISTING, String::as_str);
        assert_eq!(first.items, ["a", "b"]);
        let cursor = first.next_cursor.expect("a next page");
        assert_eq!(start_after(Some(&cursor), 7), Ok("b".to_string()));
        let last = page(names(&["c"]), 2, LISTING, String::as_str);
        assert_eq!((last.items, last.next_cursor), (names(&["c"]), None));
        assert!(matches!(
            start_after(Some(&cursor), 8),
            Err(Failure::InvalidParams(message)) if message.starts_with("stale cursor")
        ));
        assert!(matches!(
            start_after(Some("nonsense"), 7),
            Err(Failure::InvalidParams(message)) if message.starts_with("invalid cursor")
        ));
        assert_eq!(start_after(None, 7), Ok(String::new()));
    }

    #[test]
    fn a_key_with_a_colon_comes_back_whole() {
        let cursor = encode(3, "shelf://a:b/c");
        assert_eq!(
            start_after(Some(&cursor), 3),
            Ok("shelf://a:b/c".to_string())
        );
    }
}
