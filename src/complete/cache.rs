//! The serving process's completion indexes: one per completion table, built by the first
//! completion that needs it (never at start-up, so a large library starts as fast as a small
//! one) and rebuilt when the table's version in the database moves.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use rusqlite::Connection;

use super::{IndexBuilder, TableIndex};
use crate::store::{self, StoreError, read};

/// Indexes by table name, each tagged with the table id and version it was built from. A
/// changed table is noticed by one indexed `SELECT`, made only when the library's change-log
/// position has moved since the index was last found current.
#[derive(Default)]
pub struct CompletionIndexes {
    tables: Mutex<HashMap<String, Arc<Slot>>>,
}

/// One table's index. Its own lock, so requests for a table being indexed wait for that one
/// build instead of starting their own, while other tables stay available.
type Slot = Mutex<Option<Built>>;

struct Built {
    id: i64,
    version: i64,
    /// The change-log position at which the table was last seen at this version.
    checked_at: i64,
    index: Arc<TableIndex>,
}

impl CompletionIndexes {
    pub fn new() -> CompletionIndexes {
        CompletionIndexes::default()
    }

    /// The index of `table` as the database holds it at change-log position `position`
    /// (taken by the caller before it read anything), or None when there is no such table.
    /// `conn` is asked for only when the kept index is not known to be current at
    /// `position`, so a caller without a connection at hand learns that it needs one.
    pub fn get<'c, E: From<StoreError>>(
        &self,
        conn: impl FnOnce() -> Result<&'c Connection, E>,
        table: &str,
        position: i64,
    ) -> Result<Option<Arc<TableIndex>>, E> {
        let slot = self.tables().get(table).map(Arc::clone);
        if let Some(slot) = &slot
            && let Some(built) = &*slot.lock().unwrap_or_else(PoisonError::into_inner)
            && built.checked_at == position
        {
            return Ok(Some(Arc::clone(&built.index)));
        }
        let conn = conn()?;
        Ok(self.current(conn, slot, table, position)?)
    }

    /// The index of `table` checked against the database (and rebuilt if its version
    /// moved); `slot` is the table's slot if it has one.
    fn current(
        &self,
        conn: &Connection,
        slot: Option<Arc<Slot>>,
        table: &str,
        position: i64,
    ) -> Result<Option<Arc<TableIndex>>, StoreError> {
        let Some(current) = read::table_version(conn, table)? else {
            // Removed: let its index go.
            self.tables().remove(table);
            return Ok(None);
        };
        let slot =
            slot.unwrap_or_else(|| Arc::clone(self.tables().entry(table.to_string()).or_default()));
        let mut slot = slot.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(built) = &mut *slot
            && (built.id, built.version) == current
        {
            built.checked_at = position;
            return Ok(Some(Arc::clone(&built.index)));
        }
        let started = Instant::now();
        // The version and the values in one read transaction: the index is exactly the
        // version it is tagged with, even while a writer commits.
        let tx = store::read_transaction(conn)?;
        let Some((id, version)) = read::table_version(conn, table)? else {
            *slot = None;
            return Ok(None);
        };
        let mut builder = IndexBuilder::new();
        read::each_table_value(conn, id, |value, weight, context| {
            builder
                .push(value, weight, context)
                .map_err(|err| StoreError::Invalid(format!("{table}: {err}")))
        })?;
        drop(tx);
        let index = Arc::new(
            builder
                .finish()
                .map_err(|err| StoreError::Invalid(format!("{table}: {err}")))?,
        );
        tracing::info!(
            "indexed completion table {table} (version {version}): {} values, {:.1} MiB, {} ms",
            index.rows(),
            index.heap_bytes() as f64 / (1024.0 * 1024.0),
            started.elapsed().as_millis()
        );
        *slot = Some(Built {
            id,
            version,
            checked_at: position,
            index: Arc::clone(&index),
        });
        Ok(Some(index))
    }

    fn tables(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Slot>>> {
        self.tables.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
