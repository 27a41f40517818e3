//! The serving process's completion indexes: one per completion table, read from the library
//! by the first completion that needs it (where the write that changed the table stored it;
//! built from the table's values otherwise), never at start-up, so a large library starts as
//! fast as a small one, and taken again when the table's version in the database moves.
//! Together they take at most a set number of bytes (`serve --max-index-bytes`): keeping a
//! new one forgets those used longest ago until it fits, and a table whose index alone would
//! not fit is refused, so the memory they take is bounded by the setting, not by the library.
//!
//! `CompletionIndexes` belongs to the server's shared state and is passed to the completion
//! handler as an argument, not kept inside `Store`: the CLI shares `Store` and never
//! completes, a `Store` is a pool of connections to the file while the indexes are the
//! serving process's memory, and an argument keeps the handler's inputs in its signature.
//!
//! An index found current at the watcher's position is used without a query. When the
//! position has moved, a request reads the table's `(id, version)`; the same pair means the
//! kept index holds, otherwise it is taken again in the same read transaction (so it is
//! never tagged with a version it does not hold): the index the write stored for exactly
//! that version (`store::read::stored_index`), or one built from the rows
//! (`store::read::build_index`) when there is none or it does not decode. One take runs at
//! a time (`building`): requests for a table being indexed wait for it rather than start
//! their own, and other tables and methods are not held up.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use rusqlite::Connection;

use crate::complete::{TableIndex, TooLarge, Undecodable};
use crate::store::{self, StoreError, read};

/// The kept indexes, and the lock that lets one build run at a time.
pub(crate) struct CompletionIndexes {
    /// The most the kept indexes take together (`TableIndex::heap_bytes`).
    max_bytes: usize,
    kept: Mutex<Kept>,
    /// Held through a build. One table is indexed at a time, so the kept indexes and the
    /// one being built take at most twice `max_bytes` (and what the build needs meanwhile);
    /// and requests for a table being indexed wait for that build instead of starting their
    /// own. Requests whose index is kept do not take it.
    building: Mutex<()>,
}

/// Indexes by table name, each tagged with the table id and version it was built from. A
/// changed table is noticed by one indexed `SELECT`, made only when the library's change-log
/// position has moved since the index was last found current.
#[derive(Default)]
struct Kept {
    tables: HashMap<String, Built>,
    /// What the indexes in `tables` take together.
    bytes: usize,
    /// Counts the uses of every index, to tell which was used longest ago.
    uses: u64,
}

struct Built {
    id: i64,
    version: i64,
    /// The change-log position at which the table was last seen at this version.
    checked_at: i64,
    index: Arc<TableIndex>,
    /// `index.heap_bytes()`, counted once.
    bytes: usize,
    /// `Kept::uses` when the index was last used.
    used: u64,
}

impl CompletionIndexes {
    /// Indexes that take at most `max_bytes` together.
    pub(crate) fn new(max_bytes: usize) -> CompletionIndexes {
        CompletionIndexes {
            max_bytes,
            kept: Mutex::default(),
            building: Mutex::new(()),
        }
    }

    /// The index of `table` as the database holds it at change-log position `position`
    /// (taken by the caller before it read anything), or None when there is no such table.
    /// `conn` is asked for only when the kept index is not known to be current at
    /// `position`, so a caller without a connection at hand learns that it needs one.
    pub(crate) fn get<'c, E: From<StoreError>>(
        &self,
        conn: impl FnOnce() -> Result<&'c Connection, E>,
        table: &str,
        position: i64,
    ) -> Result<Option<Arc<TableIndex>>, E> {
        if let Some(index) = self.kept().current_at(table, position) {
            return Ok(Some(index));
        }
        let conn = conn()?;
        Ok(self.current(conn, table, position)?)
    }

    /// The index of `table` checked against the database, and built if none is kept at the
    /// table's version.
    fn current(
        &self,
        conn: &Connection,
        table: &str,
        position: i64,
    ) -> Result<Option<Arc<TableIndex>>, StoreError> {
        let Some(version) = read::table_version(conn, table)? else {
            // Removed: let its index go.
            self.kept().forget(table);
            return Ok(None);
        };
        if let Some(index) = self.kept().confirm(table, version, position) {
            return Ok(Some(index));
        }
        let _building = self.building.lock().unwrap_or_else(PoisonError::into_inner);
        // Another request may have built it while this one waited.
        if let Some(index) = self.kept().confirm(table, version, position) {
            return Ok(Some(index));
        }
        let started = Instant::now();
        // The version and the values in one read transaction: the index is exactly the
        // version it is tagged with, even while a writer commits.
        let tx = store::read_transaction(conn)?;
        let Some((id, version)) = read::table_version(conn, table)? else {
            self.kept().forget(table);
            return Ok(None);
        };
        // The index the write stored, or else one built here from the values (a table too
        // large to store, or a stored index that does not decode).
        let (index, how) = match self.read_stored(conn, table, id, version)? {
            Some(index) => (index, "read the stored index of"),
            None => {
                let built = read::build_index(conn, id, self.max_bytes)?;
                let index = built.map_err(|err| StoreError::Invalid(refusal(table, &err)))?;
                (index, "indexed")
            }
        };
        drop(tx);
        let index = Arc::new(index);
        let bytes = index.heap_bytes();
        tracing::info!(
            "{how} completion table {table} (version {version}): {} values, {bytes} bytes \
             ({:.1} MiB), {} ms",
            index.rows(),
            bytes as f64 / (1024.0 * 1024.0),
            started.elapsed().as_millis()
        );
        self.kept().keep(
            table,
            Built {
                id,
                version,
                checked_at: position,
                index: Arc::clone(&index),
                bytes,
                used: 0,
            },
            self.max_bytes,
        );
        Ok(Some(index))
    }

    /// The index the library stores for table `id` at `version`, if it decodes. The indexes
    /// used longest ago are forgotten first to make room for it (its stored size is about
    /// its size in memory), so that the kept indexes and the one being read take about the
    /// limit together at most. One larger than the limit is refused as a build over it is;
    /// one that does not decode for another reason is logged, left for the next write of
    /// the table to replace, and the caller builds the index.
    fn read_stored(
        &self,
        conn: &Connection,
        table: &str,
        id: i64,
        version: i64,
    ) -> Result<Option<TableIndex>, StoreError> {
        let Some(blob) = read::stored_index(conn, id, version)? else {
            return Ok(None);
        };
        let incoming = blob.len();
        if incoming <= self.max_bytes {
            self.kept().make_room(table, incoming, self.max_bytes);
        }
        // Read a piece at a time: the bytes are never held beside the index they make.
        let input = std::io::BufReader::with_capacity(64 * 1024, blob);
        match TableIndex::decode(input, self.max_bytes) {
            Ok(index) => Ok(Some(index)),
            // Built from the rows, it would be as large: refused as a build is.
            Err(Undecodable::TooLarge(err)) => Err(StoreError::Invalid(refusal(table, &err))),
            Err(err) => {
                tracing::info!("not using the stored index of completion table {table}: {err}");
                Ok(None)
            }
        }
    }

    fn kept(&self) -> MutexGuard<'_, Kept> {
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The sentence a completion on a table that cannot be indexed is refused with.
fn refusal(table: &str, err: &TooLarge) -> String {
    match err {
        TooLarge::Positions => format!("{table}: {err}"),
        TooLarge::Memory(_) => format!(
            "completion table {table} cannot be indexed: {err}, the most this server keeps \
             for completion indexes; start it with a larger --max-index-bytes, or split the \
             table"
        ),
    }
}

impl Kept {
    /// The index of `table` if it was found current at `position`.
    fn current_at(&mut self, table: &str, position: i64) -> Option<Arc<TableIndex>> {
        self.uses += 1;
        let built = self.tables.get_mut(table)?;
        if built.checked_at != position {
            return None;
        }
        built.used = self.uses;
        Some(Arc::clone(&built.index))
    }

    /// The index of `table` if it is of `version` (id and version), now known current at
    /// `position`.
    fn confirm(
        &mut self,
        table: &str,
        version: (i64, i64),
        position: i64,
    ) -> Option<Arc<TableIndex>> {
        self.uses += 1;
        let built = self.tables.get_mut(table)?;
        if (built.id, built.version) != version {
            return None;
        }
        built.checked_at = position;
        built.used = self.uses;
        Some(Arc::clone(&built.index))
    }

    /// Keeps `built` as `table`'s index, then forgets the others used longest ago until all
    /// take at most `max_bytes` (`built` takes no more than that alone: its builder saw to
    /// it). An index forgotten while a request uses it lives until that request ends.
    fn keep(&mut self, table: &str, mut built: Built, max_bytes: usize) {
        self.uses += 1;
        built.used = self.uses;
        self.bytes += built.bytes;
        if let Some(old) = self.tables.insert(table.to_string(), built) {
            self.bytes -= old.bytes;
        }
        self.forget_oldest(Some(table), 0, max_bytes);
    }

    /// Forgets `table`'s index (about to be replaced), then the others used longest ago,
    /// until `incoming` more bytes fit within `max_bytes`, or nothing is left to forget.
    fn make_room(&mut self, table: &str, incoming: usize, max_bytes: usize) {
        self.forget(table);
        self.forget_oldest(None, incoming, max_bytes);
    }

    /// Forgets the indexes used longest ago, but `except`'s, until `incoming` more bytes
    /// fit within `max_bytes`, or nothing else is left to forget.
    fn forget_oldest(&mut self, except: Option<&str>, incoming: usize, max_bytes: usize) {
        while self.bytes.saturating_add(incoming) > max_bytes {
            let Some(oldest) = self
                .tables
                .iter()
                .filter(|(name, _)| Some(name.as_str()) != except)
                .min_by_key(|(_, built)| built.used)
                .map(|(name, _)| name.clone())
            else {
                break;
            };
            tracing::info!("forgot the index of completion table {oldest} to make room");
            self.forget(&oldest);
        }
    }

    fn forget(&mut self, table: &str) {
        if let Some(built) = self.tables.remove(table) {
            self.bytes -= built.bytes;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::complete::IndexBuilder;

    /// An index of `count` values `{prefix}-{n}`, and what it takes.
    fn index_of(prefix: &str, count: usize) -> (Arc<TableIndex>, usize) {
        let mut builder = IndexBuilder::within(usize::MAX);
        for n in 0..count {
            builder
                .push(&format!("{prefix}-{n}"), 0.0, None)
                .expect("a small table fits");
        }
        let index = builder.finish().expect("a small table is indexed");
        let bytes = index.heap_bytes();
        (Arc::new(index), bytes)
    }

    fn built(index: &Arc<TableIndex>, bytes: usize) -> Built {
        Built {
            id: 1,
            version: 1,
            checked_at: 7,
            index: Arc::clone(index),
            bytes,
            used: 0,
        }
    }

    #[test]
    fn keeping_an_index_forgets_those_used_longest_ago_until_all_fit() {
        let (small, bytes) = index_of("a", 2000);
        let max_bytes = 3 * bytes;
        let mut kept = Kept::default();
        for table in ["one", "two", "three"] {
            kept.keep(table, built(&small, bytes), max_bytes);
        }
        assert_eq!(kept.bytes, 3 * bytes);
        // "one" is used again, so "two" is now the one used longest ago.
        assert!(kept.current_at("one", 7).is_some());
        kept.keep("four", built(&small, bytes), max_bytes);
        let mut names: Vec<&str> = kept.tables.keys().map(String::as_str).collect();
        names.sort_unstable();
        assert_eq!(names, ["four", "one", "three"]);
        assert_eq!(kept.bytes, 3 * bytes);
        // One as large as the limit leaves room for nothing else.
        let (large, large_bytes) = index_of("b", 6000);
        kept.keep("large", built(&large, large_bytes), large_bytes);
        assert_eq!(kept.tables.keys().collect::<Vec<_>>(), ["large"]);
        assert_eq!(kept.bytes, large_bytes);
    }

    #[test]
    fn room_is_made_for_an_index_before_it_is_read() {
        let (small, bytes) = index_of("a", 2000);
        let max_bytes = 3 * bytes;
        let mut kept = Kept::default();
        for table in ["one", "two", "three"] {
            kept.keep(table, built(&small, bytes), max_bytes);
        }
        assert!(kept.current_at("one", 7).is_some());
        // Room for one more of the same size: "two", used longest ago, goes first.
        kept.make_room("four", bytes, max_bytes);
        let mut names: Vec<&str> = kept.tables.keys().map(String::as_str).collect();
        names.sort_unstable();
        assert_eq!(names, ["one", "three"]);
        // A table's own older index goes before any other.
        kept.make_room("one", bytes, max_bytes);
        assert_eq!(kept.tables.keys().collect::<Vec<_>>(), ["three"]);
        assert_eq!(kept.bytes, bytes);
        // Room for as much as the limit forgets everything.
        kept.make_room("five", max_bytes, max_bytes);
        assert!(kept.tables.is_empty());
        assert_eq!(kept.bytes, 0);
    }

    #[test]
    fn a_rebuilt_index_replaces_its_old_one_in_the_count() {
        let (index, bytes) = index_of("a", 500);
        let mut kept = Kept::default();
        kept.keep("one", built(&index, bytes), usize::MAX);
        kept.keep("one", built(&index, bytes), usize::MAX);
        assert_eq!(kept.bytes, bytes);
        kept.forget("one");
        assert_eq!(kept.bytes, 0);
        assert!(kept.current_at("one", 7).is_none());
    }

    #[test]
    fn an_index_is_current_only_at_the_position_it_was_found_current() {
        let (index, bytes) = index_of("a", 10);
        let mut kept = Kept::default();
        kept.keep("one", built(&index, bytes), usize::MAX);
        assert!(kept.current_at("one", 8).is_none());
        // Found at the same version at position 8: current there from now on.
        assert!(kept.confirm("one", (1, 1), 8).is_some());
        assert!(kept.current_at("one", 8).is_some());
        // A new version is not the kept index.
        assert!(kept.confirm("one", (1, 2), 9).is_none());
    }
}
