//! The default library, compiled into the binary from seed/ and loaded into every new
//! database through the same file reader and writers that `import` uses.

use rusqlite::Transaction;

use crate::library::{Collection, DEFAULT_SCHEME, Item, link_targets, parse_file, resolve_links};
use crate::store::{self, StoreError};

include!(concat!(env!("OUT_DIR"), "/seed_files.rs"));

/// The collection the seed is loaded as; its URIs are `shelf://library/...`.
pub(crate) const SEED_COLLECTION: &str = "library";

/// Writes the whole seed library inside `tx` (the transaction that creates the database).
pub fn load(tx: &Transaction) -> store::Result<()> {
    let collection = Collection {
        name: SEED_COLLECTION.to_string(),
        scheme: DEFAULT_SCHEME.to_string(),
    };
    let now = store::now_ms();
    let mut items = Vec::with_capacity(SEED_FILES.len());
    for (path, bytes) in SEED_FILES {
        let item = parse_file(&collection, path, bytes)
            .map_err(|err| StoreError::Invalid(format!("embedded seed: {err}")))?;
        if let Some(item) = item {
            items.push((*path, item));
        }
    }
    // Links between seed files resolve as they would on `import`.
    let targets = link_targets(items.iter().map(|(path, item)| (*path, item)));
    for (path, item) in &mut items {
        resolve_links(item, path, &targets);
    }
    for (_, item) in items {
        match item {
            Item::Prompt(prompt) => {
                store::write::put_prompt(tx, &prompt, now)?;
            }
            Item::Resource(resource) => {
                store::write::put_resource(tx, &resource, now)?;
            }
            Item::Values { table, values } => {
                store::write::put_values(tx, &table, None, &values, store::ValuesMode::Replace)?;
            }
        }
    }
    store::write::put_template(tx, &collection.template(), now)?;
    // Its record has no folder: `collection list` names it the built-in seed. Undoing the
    // seed's write removes the record with the items, as for an import.
    store::write::record_collection(tx, SEED_COLLECTION, None, now)?;
    store::history::created_collection(tx, SEED_COLLECTION)?;
    Ok(())
}
