//! What a caller sees of the library: all of it (stdio, or a token for the whole library),
//! or only some collections (a token limited to them, `store::tokens::Grant`). Every answer
//! is made for one `Visibility` (`server::answer::answer`), and the handlers and store reads
//! it reaches keep to it: lists, reads, completions, search and the tool mirrors show only
//! the collections' items, and a name or URI outside them is answered as one the library
//! does not hold. The one widening: a resource outside that a visible prompt embeds or
//! links to by its URI can be read (`store::search::named_by_prompt_in`), since it is part
//! of a prompt the caller may see.
//!
//! Under `Collections`: lists are ranges of the `*_by_collection` indexes, their cursors
//! those of the whole library (a cursor says nothing of other collections' items), each page
//! dated by its own items; `initialize` and `server/discover` give no counts (the library's
//! would say how much is hidden); completions offer no search-index terms (counted over the
//! whole library); results are `cacheScope: private`, and list pages and search answers
//! are neither kept nor taken from `server::cache`, while kept items (of the whole library)
//! are checked against the visibility after they are taken. A subscriber is told only of
//! changes to what it sees (`server::watch::Changes::seen_by`); the change log keeps no
//! collection, so a removal is told to every subscriber as a list change, and a removed
//! resource's URI only to those that see everything.

use crate::store::tokens::Grant;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Visibility {
    /// The whole library.
    Everything,
    /// Only the items of these collections (sorted, each once): items of no collection
    /// (added by hand) and of other collections are not there for the caller.
    Collections(Vec<String>),
}

impl Visibility {
    /// What `grant` lets its token's holder see.
    pub(crate) fn of(grant: &Grant) -> Visibility {
        match &grant.collections {
            None => Visibility::Everything,
            Some(names) => {
                let mut names = names.clone();
                names.sort();
                names.dedup();
                Visibility::Collections(names)
            }
        }
    }

    /// Whether an item of `collection` (None: of none) is seen.
    pub(crate) fn shows(&self, collection: Option<&str>) -> bool {
        match self {
            Visibility::Everything => true,
            Visibility::Collections(names) => {
                collection.is_some_and(|c| names.binary_search_by(|n| n.as_str().cmp(c)).is_ok())
            }
        }
    }

    /// The collections seen, or None for the whole library: what the store's reads keep to.
    pub(crate) fn collections(&self) -> Option<&[String]> {
        match self {
            Visibility::Everything => None,
            Visibility::Collections(names) => Some(names),
        }
    }

    /// Whether some of the library is hidden: answers are then made for this caller alone
    /// (never kept for others nor taken from what was kept for them, `cacheScope` private).
    pub(crate) fn is_limited(&self) -> bool {
        matches!(self, Visibility::Collections(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_grant_limited_to_collections_shows_only_their_items() {
        let grant = Grant {
            name: "ci".into(),
            collections: Some(vec!["b".into(), "a".into(), "b".into()]),
            created_at: 0,
            expires_at: None,
        };
        let seen = Visibility::of(&grant);
        assert_eq!(
            seen.collections(),
            Some(&["a".to_string(), "b".to_string()][..])
        );
        assert!(seen.shows(Some("a")) && seen.shows(Some("b")));
        assert!(!seen.shows(Some("c")) && !seen.shows(None));
        assert!(seen.is_limited());
        let all = Visibility::of(&Grant {
            collections: None,
            ..grant
        });
        assert_eq!(all, Visibility::Everything);
        assert!(all.shows(None) && all.shows(Some("c")) && !all.is_limited());
    }
}
