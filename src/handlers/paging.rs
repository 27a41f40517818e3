//! Deterministic pages of a list, with opaque cursors bound to the list's version (a hash
//! over its items' content hashes), so a cursor from before a change is refused and the
//! client starts over instead of skipping or repeating items.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use crate::model::ContentHash;
use crate::protocol::{Failure, Page};

/// The version of a list: what a cursor is bound to.
fn version(hashes: impl Iterator<Item = ContentHash>) -> String {
    let mut hasher = blake3::Hasher::new();
    for hash in hashes {
        hasher.update(&hash);
    }
    hasher.finalize().to_hex()[..16].to_string()
}

/// Cuts `items` (already in their stable order) into the page `cursor` points at.
pub fn paginate<T>(
    items: Vec<T>,
    cursor: Option<&str>,
    page_size: usize,
    hash_of: impl Fn(&T) -> ContentHash,
    modified_of: impl Fn(&T) -> i64,
) -> Result<Page<T>, Failure> {
    let version = version(items.iter().map(&hash_of));
    let last_modified = items.iter().map(&modified_of).max().unwrap_or(0);
    let start = match cursor {
        None => 0,
        Some(cursor) => {
            let (cursor_version, offset) = decode(cursor).ok_or_else(|| {
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
            offset.min(items.len())
        }
    };
    let end = (start + page_size.max(1)).min(items.len());
    let next_cursor = (end < items.len()).then(|| encode(&version, end));
    let items = items.into_iter().skip(start).take(end - start).collect();
    Ok(Page {
        items,
        next_cursor,
        last_modified,
    })
}

fn encode(version: &str, offset: usize) -> String {
    URL_SAFE_NO_PAD.encode(format!("{version}:{offset}"))
}

fn decode(cursor: &str) -> Option<(String, usize)> {
    let bytes = URL_SAFE_NO_PAD.decode(cursor).ok()?;
    let text = String::from_utf8(bytes).ok()?;
    let (version, offset) = text.split_once(':')?;
    Some((version.to_string(), offset.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(items: Vec<u8>, cursor: Option<&str>) -> Result<Page<u8>, Failure> {
        paginate(items, cursor, 2, |item| [*item; 32], |item| *item as i64)
    }

    #[test]
    fn pages_follow_one_another_and_stale_cursors_fail() {
        let first = page(vec![1, 2, 3], None).unwrap();
        assert_eq!(first.items, [1, 2]);
        let cursor = first.next_cursor.unwrap();
        let second = page(vec![1, 2, 3], Some(&cursor)).unwrap();
        assert_eq!((second.items, second.next_cursor), (vec![3], None));
        assert!(matches!(
            page(vec![1, 2, 4], Some(&cursor)),
            Err(Failure::InvalidParams(_))
        ));
        assert!(matches!(
            page(vec![1], Some("nonsense")),
            Err(Failure::InvalidParams(_))
        ));
    }
}
