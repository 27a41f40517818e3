//! What the server keeps between requests until the library changes: shaped list pages,
//! shaped reads of small resources, parsed prompts, and the small resources prompts embed
//! (and how long each prompt took to fill, which decides where the next fill runs).
//! Hosts list and fill prompts often and the library changes rarely, and reading and
//! shaping costs far more than checking whether anything changed: every entry is tagged
//! with the change-log position it was read at, and is current while that is still the
//! position the watcher last saw.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rusqlite::Connection;

use crate::handlers::{Failure, ReadResult};
use crate::model::StoredPrompt;
use crate::protocol::{Revision, ShapedPage};
use crate::store::read;

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

/// Prompts kept at most (a prompt is small; this bounds a library of many thousands).
const MAX_PROMPTS: usize = 4096;
/// Reads are kept only for resources this small, and only this many bytes of them in all,
/// so a large library cannot grow the server's memory.
const MAX_KEPT_READ: usize = 64 * 1024;
const MAX_KEPT_READS_BYTES: usize = 4 * 1024 * 1024;

type Key = (ListKind, Revision, Option<String>);

/// Entries each tagged with the change-log position they were read at. (Keys are names and
/// URIs of the library, looked up on every request: a fast hash, seeded per process.)
type Tagged<K, V> = Mutex<HashMap<K, (i64, Arc<V>), foldhash::fast::RandomState>>;

#[derive(Default)]
pub(super) struct Cache {
    pages: Tagged<Key, ShapedPage>,
    /// By name; None (not stored) is not kept, so a new prompt is found at once.
    prompts: Tagged<String, StoredPrompt>,
    /// `resources/read` results by URI, one map per revision (so a lookup borrows the
    /// request's URI), with their total size.
    reads: [Tagged<String, ShapedPage>; Revision::COUNT],
    read_bytes: Mutex<usize>,
    /// Small resources as prompts embed and link them, by URI, with their total size.
    resources: Tagged<String, ReadResult>,
    resource_bytes: Mutex<usize>,
    /// How long each prompt's last `prompts/get` took to fill, by name, with the position
    /// it was filled at: what decides whether the next one may run on the reader thread.
    fill_times: Mutex<HashMap<String, (i64, Duration), foldhash::fast::RandomState>>,
}

/// Keeps `value` under `uri` at `position` when it is at most `MAX_KEPT_READ` bytes, with
/// `bytes` counting what `entries` (and any maps sharing the count) hold; when keeping it
/// would pass `MAX_KEPT_READS_BYTES`, `entries` is emptied first.
fn keep_within_budget<V>(
    entries: &Tagged<String, V>,
    bytes: &Mutex<usize>,
    uri: &str,
    position: i64,
    value: &Arc<V>,
    size_of: impl Fn(&V) -> usize,
) {
    let size = size_of(value);
    if size > MAX_KEPT_READ {
        return;
    }
    let mut entries = lock(entries);
    let mut bytes = bytes.lock().unwrap_or_else(PoisonError::into_inner);
    if *bytes + size > MAX_KEPT_READS_BYTES {
        let dropped: usize = entries.values().map(|(_, kept)| size_of(kept)).sum();
        entries.clear();
        *bytes = bytes.saturating_sub(dropped);
    }
    *bytes += size;
    if let Some((_, old)) = entries.insert(uri.to_string(), (position, Arc::clone(value))) {
        *bytes = bytes.saturating_sub(size_of(&old));
    }
}

fn lock<K, V>(
    entries: &Tagged<K, V>,
) -> std::sync::MutexGuard<'_, HashMap<K, (i64, Arc<V>), foldhash::fast::RandomState>> {
    entries.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Cache {
    /// The page for `key` as of now: the kept one if nothing changed since it was shaped,
    /// else a fresh one from `shape`. Failures (a stale cursor, say) are not kept.
    pub(super) fn page(
        &self,
        position: i64,
        kind: ListKind,
        revision: Revision,
        cursor: Option<&str>,
        shape: impl FnOnce() -> Result<ShapedPage, Failure>,
    ) -> Result<Arc<ShapedPage>, Failure> {
        let key = (kind, revision, cursor.map(str::to_string));
        if let Some((at, page)) = lock(&self.pages).get(&key)
            && *at == position
        {
            return Ok(Arc::clone(page));
        }
        let page = Arc::new(shape()?);
        let mut pages = lock(&self.pages);
        if pages.len() >= MAX_PAGES {
            pages.clear();
        }
        pages.insert(key, (position, Arc::clone(&page)));
        Ok(page)
    }

    /// The kept answer to a list or read request with the change-log position it was shaped
    /// at, if there is one: the dispatcher sends it without starting a task when the
    /// position is still the current one. Any other method has none.
    pub(super) fn kept(
        &self,
        revision: Revision,
        method: &crate::protocol::Method,
    ) -> Option<(i64, Arc<ShapedPage>)> {
        use crate::protocol::Method;
        let (kind, cursor) = match method {
            Method::ListPrompts { cursor } => (ListKind::Prompts, cursor),
            Method::ListResources { cursor } => (ListKind::Resources, cursor),
            Method::ListTemplates { cursor } => (ListKind::Templates, cursor),
            Method::ReadResource { uri } => {
                let reads = lock(&self.reads[revision.index()]);
                let (at, page) = reads.get(uri.as_str())?;
                return Some((*at, Arc::clone(page)));
            }
            _ => return None,
        };
        let pages = lock(&self.pages);
        let (at, page) = pages.get(&(kind, revision, cursor.clone()))?;
        Some((*at, Arc::clone(page)))
    }

    /// The shaped `resources/read` result for `uri` as of now, from `shape` unless kept.
    /// Failures (no such resource) are not kept.
    pub(super) fn read(
        &self,
        position: i64,
        revision: Revision,
        uri: &str,
        shape: impl FnOnce() -> Result<ShapedPage, Failure>,
    ) -> Result<Arc<ShapedPage>, Failure> {
        let reads = &self.reads[revision.index()];
        if let Some((at, page)) = lock(reads).get(uri)
            && *at == position
        {
            return Ok(Arc::clone(page));
        }
        let page = Arc::new(shape()?);
        keep_within_budget(
            reads,
            &self.read_bytes,
            uri,
            position,
            &page,
            ShapedPage::size,
        );
        Ok(page)
    }

    /// The resource `uri` with its content as of `position` (the change log's position,
    /// read by the caller before anything else of the request), or None when there is none.
    pub(super) fn resource(
        &self,
        conn: &Connection,
        position: i64,
        uri: &str,
    ) -> Result<Option<Arc<ReadResult>>, Failure> {
        if let Some(kept) = self.kept_resource(position, uri) {
            return Ok(Some(kept));
        }
        let Some(found) = crate::handlers::prompts::resolve_from(conn, uri)? else {
            return Ok(None);
        };
        keep_within_budget(
            &self.resources,
            &self.resource_bytes,
            uri,
            position,
            &found,
            |read: &ReadResult| read.content.as_bytes().len(),
        );
        Ok(Some(found))
    }

    /// The resource `uri` if it is kept as of `position`; never reads the database.
    pub(super) fn kept_resource(&self, position: i64, uri: &str) -> Option<Arc<ReadResult>> {
        let resources = lock(&self.resources);
        let (at, kept) = resources.get(uri)?;
        (*at == position).then(|| Arc::clone(kept))
    }

    /// The prompt `name` if it is kept as of `position` and its last fill there took at
    /// most `quick`; never reads the database.
    pub(super) fn quick_prompt(
        &self,
        position: i64,
        name: &str,
        quick: Duration,
    ) -> Option<Arc<StoredPrompt>> {
        let timed = self
            .fill_times
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(name)
            .is_some_and(|(at, took)| *at == position && *took <= quick);
        if !timed {
            return None;
        }
        self.kept_prompt(position, name)
    }

    /// The prompt `name` if it is kept as of `position`; never reads the database.
    pub(super) fn kept_prompt(&self, position: i64, name: &str) -> Option<Arc<StoredPrompt>> {
        let prompts = lock(&self.prompts);
        let (at, prompt) = prompts.get(name)?;
        (*at == position).then(|| Arc::clone(prompt))
    }

    /// Notes how long filling the prompt `name` took at `position`.
    pub(super) fn filled(&self, position: i64, name: &str, took: Duration) {
        let mut times = self
            .fill_times
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if times.len() >= MAX_PROMPTS && !times.contains_key(name) {
            times.clear();
        }
        match times.get_mut(name) {
            Some(entry) => *entry = (position, took),
            None => {
                times.insert(name.to_string(), (position, took));
            }
        }
    }

    /// The stored prompt `name` as of `position`, or None when there is none.
    pub(super) fn prompt(
        &self,
        conn: &Connection,
        position: i64,
        name: &str,
    ) -> Result<Option<Arc<StoredPrompt>>, Failure> {
        if let Some(kept) = self.kept_prompt(position, name) {
            return Ok(Some(kept));
        }
        let Some(prompt) = read::prompt(conn, name)? else {
            return Ok(None);
        };
        let prompt = Arc::new(prompt);
        let mut prompts = lock(&self.prompts);
        if prompts.len() >= MAX_PROMPTS {
            prompts.clear();
        }
        prompts.insert(name.to_string(), (position, Arc::clone(&prompt)));
        Ok(Some(prompt))
    }
}
