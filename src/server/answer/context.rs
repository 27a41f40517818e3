//! What answering one request takes (`Context`): the shared state and the served library,
//! the caller's visibility, the revision's shaper and the request's id, the change-log
//! position read before anything else, and a connection taken only within the reach. Its
//! methods are the lookups every MCP method makes through what is kept (`server::cache`),
//! each kept at that position and checked against the visibility.

use std::cell::OnceCell;
use std::sync::Arc;
use std::time::Instant;

use rusqlite::Connection;

use super::{Reach, Stop};
use crate::config::ServeConfig;
use crate::handlers::templates::Templates;
use crate::handlers::{prompts, resources, search, templates};
use crate::model::{StoredPrompt, StoredResource};
use crate::protocol::{
    Failure, GetPromptParams, PromptOutcome, ReadResult, RequestId, Revision, ShapedPage, Shaper,
};
use crate::server::cache::{ListKind, Timed};
use crate::server::state::{Library, Served, Shared};
use crate::store::search as store_search;
use crate::store::{Snapshot, Store, read};
use crate::visibility::Visibility;

/// The largest resource read under `Reach::Point`, in bytes: reading and shaping it takes
/// tens of microseconds.
const MAX_POINT_BYTES: u64 = 64 * 1024;

pub(super) struct Context<'a> {
    pub(super) shared: &'a Shared,
    pub(super) library: &'a Library,
    /// The library's store and what is kept of it, or the caller's channel's.
    pub(super) served: Served<'a>,
    pub(super) seen: &'a Visibility,
    pub(super) shaper: Shaper<'a>,
    pub(super) id: &'a RequestId,
    pub(super) revision: Revision,
    /// The change-log position what is read is kept under.
    pub(super) position: i64,
    /// How far the request may reach: what `conn` and `point_conn` may take.
    reach: Reach,
    /// The store read from.
    store: &'a Store,
    /// A pooled connection, taken on first use.
    conn: OnceCell<Snapshot>,
}

impl<'a> Context<'a> {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        shared: &'a Shared,
        library: &'a Library,
        served: Served<'a>,
        seen: &'a Visibility,
        id: &'a RequestId,
        revision: Revision,
        position: i64,
        reach: Reach,
    ) -> Context<'a> {
        Context {
            shared,
            library,
            served,
            seen,
            shaper: shared.shaper_for(revision, seen),
            id,
            revision,
            position,
            reach,
            store: served.store,
            conn: OnceCell::new(),
        }
    }

    pub(super) fn config(&self) -> &'a ServeConfig {
        &self.shared.config
    }

    /// A connection, or `Stop::NeedsStore` but under `Reach::Store`.
    pub(super) fn conn(&self) -> Result<&Connection, Stop> {
        if let Some(conn) = self.conn.get() {
            return Ok(conn);
        }
        if self.reach != Reach::Store {
            return Err(Stop::NeedsStore);
        }
        let conn = self.store.snapshot().map_err(Failure::from)?;
        Ok(self.conn.get_or_init(|| conn))
    }

    /// A connection for one item read by its key: the request's under `Reach::Store`, an
    /// idle one under `Reach::Point` (`Stop::NeedsStore` when none is idle), none under
    /// `Reach::Kept`.
    fn point_conn(&self) -> Result<&Connection, Stop> {
        if self.reach != Reach::Point {
            return self.conn();
        }
        if let Some(conn) = self.conn.get() {
            return Ok(conn);
        }
        let conn = self.store.idle_snapshot().ok_or(Stop::NeedsStore)?;
        Ok(self.conn.get_or_init(|| conn))
    }

    /// A page of a list: kept until the library changes, read and shaped otherwise; a
    /// limited caller's page is its own, never kept.
    pub(super) fn page(
        &self,
        kind: ListKind,
        cursor: Option<&str>,
    ) -> Result<Arc<ShapedPage>, Stop> {
        let shaped = || Ok::<_, Stop>(self.shaped_page(self.conn()?, kind, cursor)?);
        if self.seen.is_limited() {
            return Ok(Arc::new(shaped()?));
        }
        let key = (kind, self.revision, cursor);
        self.served.cache.page(self.position, key, shaped)
    }

    /// One page of a list, read and shaped.
    fn shaped_page(
        &self,
        conn: &Connection,
        kind: ListKind,
        cursor: Option<&str>,
    ) -> Result<ShapedPage, Failure> {
        let (config, seen, shaper) = (self.config(), self.seen, &self.shaper);
        Ok(match kind {
            ListKind::Prompts => shaper.prompts_page(&prompts::list(conn, config, cursor, seen)?),
            ListKind::Resources => {
                shaper.resources_page(&resources::list(conn, config, cursor, seen)?)
            }
            ListKind::Templates => {
                shaper.templates_page(&templates::list(conn, config, cursor, seen)?)
            }
        })
    }

    /// A resource stored under exactly `uri` (kept when small) that the caller may read: of
    /// its collections, or named by one of their prompts; otherwise as if there were none.
    pub(super) fn resource(&self, uri: &str) -> Result<Option<Arc<ReadResult>>, Stop> {
        let found = self.served.cache.resource(self.position, uri, || {
            // A point read is of a small item only: a large one would hold up the thread
            // (and could not be cancelled there).
            let max_bytes = match self.reach {
                Reach::Point => MAX_POINT_BYTES,
                Reach::Kept | Reach::Store => u64::MAX,
            };
            match resources::stored_up_to(self.point_conn()?, uri, max_bytes)? {
                None => Ok(None),
                Some(Ok(read)) => Ok(Some(read)),
                Some(Err(resources::TooLarge)) => Err(Stop::NeedsStore),
            }
        })?;
        let seen = self.seen;
        match (found, seen.collections()) {
            (Some(found), Some(within))
                if !seen.shows(found.resource.info.origin.collection.as_deref()) =>
            {
                let named = store_search::named_by_prompt_in(self.conn()?, uri, within)?;
                Ok(named.then_some(found))
            }
            (found, _) => Ok(found),
        }
    }

    /// The library's parsed templates, all of them.
    pub(super) fn templates(&self) -> Result<Arc<Templates>, Stop> {
        self.served.cache.templates(self.position, || {
            Ok::<_, Stop>(Templates::load(self.conn()?)?)
        })
    }

    /// The stored prompt `name`, when the caller sees it.
    pub(super) fn prompt(&self, name: &str) -> Result<Option<Arc<StoredPrompt>>, Stop> {
        let found = self.served.cache.prompt(self.position, name, || {
            Ok::<_, Stop>(read::prompt(self.conn()?, name).map_err(Failure::from)?)
        })?;
        Ok(found.filter(|stored| self.seen.shows(stored.prompt.origin.collection.as_deref())))
    }

    /// What `uri` reads as: a stored resource, the built-in search's hits, a prompt's file
    /// or a template's match (`handlers::resources::read`).
    pub(super) fn read(&self, uri: &str) -> Result<Arc<ReadResult>, Stop> {
        let seen = self.seen;
        // A limited caller's hits are its own, never kept.
        let search = |query: &str| {
            if seen.is_limited() {
                return Ok(search::read(self.conn()?, uri, query, seen.collections())?);
            }
            self.served.cache.search(self.position, uri, || {
                Ok::<_, Stop>(search::read(self.conn()?, uri, query, None)?)
            })
        };
        resources::read(
            uri,
            &|uri| self.resource(uri),
            search,
            |name| self.prompt(name),
            || self.templates(),
        )
    }

    /// A prompt filled (or, when the client can answer a form, asked for what it lacks);
    /// how long the fill took is kept, for `bounded_from_memory`.
    pub(super) fn fill(
        &self,
        params: &GetPromptParams,
        can_elicit: bool,
    ) -> Result<PromptOutcome, Stop> {
        let Some(stored) = self.prompt(&params.name)? else {
            return Err(prompts::unknown(self.conn()?, &params.name, self.seen).into());
        };
        let caller = prompts::Caller {
            can_elicit,
            now: self.shaper.now,
        };
        let started = Instant::now();
        let outcome = prompts::get(
            self.config(),
            &self.library.secret,
            params,
            &stored,
            &|uri| self.resource(uri),
            caller,
            &self.shared.retained,
        );
        self.took(&outcome, started, || Timed::Fill(params.name.clone()));
        outcome
    }

    /// Keeps how long `work` took since `started`, unless it stopped for the store.
    pub(super) fn took<T>(
        &self,
        outcome: &Result<T, Stop>,
        started: Instant,
        work: impl FnOnce() -> Timed,
    ) {
        if !matches!(outcome, Err(Stop::NeedsStore)) {
            let took = started.elapsed();
            self.served.cache.took(self.position, work(), took);
        }
    }

    /// A skill file's SHA-256, kept by its content.
    pub(super) fn sha256(
        &self,
        conn: &Connection,
        file: &StoredResource,
    ) -> Result<[u8; 32], Failure> {
        let cache = self.served.cache;
        cache.sha256(&file.blob_hash, || {
            crate::handlers::skills::sha256_of(conn, file)
        })
    }
}
