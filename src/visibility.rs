//! What a caller sees of the library: all of it (stdio, or a token for the whole library),
//! or only some collections (a token limited to them, `store::tokens::Grant`), of the
//! library as it is now or of a release channel (`serve --channel`, a token's). Every answer
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

/// What a caller sees: which collections, and which release channel. The channel picks what
/// the library is to the caller (`store::channel`: the items its label is on, each at the
/// version the label names; None: the library as it is now); the collections then limit
/// that, as they limit the library.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Visibility {
    /// Only the items of these collections (sorted, each once): items of no collection
    /// (added by hand) and of other collections are not there for the caller. None: all.
    collections: Option<Vec<String>>,
    /// The release channel served, by its label's name.
    channel: Option<String>,
}

impl Visibility {
    /// The whole library as it is now.
    pub const EVERYTHING: Visibility = Visibility {
        collections: None,
        channel: None,
    };

    /// Only the items of `names`' collections.
    pub(crate) fn collections_only(mut names: Vec<String>) -> Visibility {
        names.sort();
        names.dedup();
        Visibility {
            collections: Some(names),
            channel: None,
        }
    }

    /// What this shows, on `channel` (None: the library as it is now).
    pub(crate) fn on_channel(self, channel: Option<String>) -> Visibility {
        Visibility { channel, ..self }
    }

    /// This, on `channel` when it names no channel of its own: a caller whose token or
    /// scopes name none is served the server's (`serve --channel`).
    pub(crate) fn or_channel(self, channel: Option<&str>) -> Visibility {
        match self.channel {
            Some(_) => self,
            None => self.on_channel(channel.map(str::to_string)),
        }
    }

    /// What `grant` lets its token's holder see; a token on no channel sees `channel`
    /// (the server's).
    pub(crate) fn of(grant: &Grant, channel: Option<&str>) -> Visibility {
        let seen = match &grant.collections {
            None => Visibility::EVERYTHING,
            Some(names) => Visibility::collections_only(names.clone()),
        };
        seen.on_channel(grant.channel.clone()).or_channel(channel)
    }

    /// Whether an item of `collection` (None: of none) is seen.
    pub(crate) fn shows(&self, collection: Option<&str>) -> bool {
        match &self.collections {
            None => true,
            Some(names) => {
                collection.is_some_and(|c| names.binary_search_by(|n| n.as_str().cmp(c)).is_ok())
            }
        }
    }

    /// The collections seen, or None for the whole library: what the store's reads keep to.
    pub(crate) fn collections(&self) -> Option<&[String]> {
        self.collections.as_deref()
    }

    /// The release channel seen, None for the library as it is now.
    pub(crate) fn channel(&self) -> Option<&str> {
        self.channel.as_deref()
    }

    /// Whether some of the library (or of the channel) is hidden: answers are then made for
    /// this caller alone (never kept for others nor taken from what was kept for them,
    /// `cacheScope` private). A channel alone hides nothing: what is kept of it is its own
    /// (`server::state::Channels`).
    pub(crate) fn is_limited(&self) -> bool {
        self.collections.is_some()
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
            channel: None,
        };
        let seen = Visibility::of(&grant, None);
        assert_eq!(
            seen.collections(),
            Some(&["a".to_string(), "b".to_string()][..])
        );
        assert!(seen.shows(Some("a")) && seen.shows(Some("b")));
        assert!(!seen.shows(Some("c")) && !seen.shows(None));
        assert!(seen.is_limited());
        let all = Visibility::of(
            &Grant {
                collections: None,
                ..grant.clone()
            },
            None,
        );
        assert_eq!(all, Visibility::EVERYTHING);
        assert!(all.shows(None) && all.shows(Some("c")) && !all.is_limited());
        // A token's own channel, else the server's.
        let staged = Grant {
            channel: Some("staging".into()),
            ..grant
        };
        assert_eq!(
            Visibility::of(&staged, Some("production")).channel(),
            Some("staging")
        );
        assert_eq!(seen.channel(), None);
        assert_eq!(
            Visibility::of(
                &Grant {
                    channel: None,
                    ..staged
                },
                Some("production")
            )
            .channel(),
            Some("production")
        );
    }
}
