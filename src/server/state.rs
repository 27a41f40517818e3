//! What every request shares: the store and its settings, where answers go, the watcher's
//! last position, and what is kept of the library between requests.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use super::cache::Cache;
use super::transport::Output;
use crate::complete::CompletionIndexes;
use crate::config::ServeConfig;
use crate::handlers::prompts::{USED_STATES_LIMIT, UsedStates};
use crate::protocol::{Revision, Shaper};
use crate::store::{self, Store};

pub(super) struct Shared {
    pub(super) store: Store,
    pub(super) config: ServeConfig,
    /// The database's secret, for signing `requestState`.
    pub(super) secret: Vec<u8>,
    /// The `requestState`s accepted so far, each until it expires: a state answers once.
    pub(super) used_states: UsedStates,
    /// Where answers go: the writer thread.
    pub(super) output: Arc<Output>,
    /// The change log's last position as the watcher last saw it. Kept answers and indexes
    /// are checked against it rather than against the database: an atomic load instead of
    /// a query per request, at the price of serving what was kept for up to one poll
    /// interval after another process commits (the moment the host is told, too).
    position: AtomicI64,
    /// Pages, prompts, templates and small resources kept until the library changes.
    pub(super) cache: Cache,
    /// Completion tables' indexes, built on first use (a cache of the store, by version).
    pub(super) indexes: CompletionIndexes,
}

impl Shared {
    pub(super) fn new(
        store: Store,
        config: ServeConfig,
        secret: Vec<u8>,
        output: Arc<Output>,
        position: i64,
    ) -> Shared {
        Shared {
            store,
            config,
            secret,
            used_states: UsedStates::new(USED_STATES_LIMIT),
            output,
            position: AtomicI64::new(position),
            cache: Cache::default(),
            indexes: CompletionIndexes::new(),
        }
    }

    pub(super) fn position(&self) -> i64 {
        self.position.load(Ordering::Acquire)
    }

    /// The watcher has seen the change log reach `position`. Stored before anyone is told,
    /// so a host re-listing on a notification is never answered from what was kept.
    pub(super) fn moved_to(&self, position: i64) {
        self.position.store(position, Ordering::Release);
    }

    /// Shapes results for `revision` as of now.
    pub(super) fn shaper(&self, revision: Revision) -> Shaper<'_> {
        Shaper {
            revision,
            config: &self.config,
            now: store::now_ms(),
        }
    }
}
