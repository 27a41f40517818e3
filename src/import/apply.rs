//! Applying a plan to the store, inside the import's transaction.

use crate::library::Item;
use crate::store::{self, StoreError, ValuesMode};

use super::plan::Plan;
use super::read::Parsed;
use super::source::Source;
use super::{Kind, Progress};

pub(super) fn apply(
    tx: &rusqlite::Transaction,
    source: &Source,
    parsed: &[Parsed],
    plan: &Plan,
    progress: &dyn Progress,
) -> store::Result<()> {
    progress.start("writing", (plan.writes.len() + plan.removals.len()) as u64);
    let mut prompts = Vec::new();
    let mut resources = Vec::new();
    for write in &plan.writes {
        let Some(file) = parsed.get(write.index) else {
            return Err(StoreError::Invalid("an import step lost its file".into()));
        };
        match &file.item {
            Item::Prompt(prompt) => prompts.push((prompt, write.modified_at)),
            Item::Resource(resource) => resources.push((resource, write.modified_at)),
            Item::Values { table, values } => {
                store::write::put_values(tx, table, None, values, ValuesMode::Replace)?;
                progress.advance(1);
            }
        }
    }
    // Many items to a call, so that new ones are inserted many to a statement
    // (`ROWS_PER_INSERT` says why).
    for batch in resources.chunks(store::write::ROWS_PER_INSERT) {
        store::write::put_resources(tx, batch)?;
        progress.advance(batch.len() as u64);
    }
    for batch in prompts.chunks(store::write::ROWS_PER_INSERT) {
        store::write::put_prompts(tx, batch)?;
        progress.advance(batch.len() as u64);
    }
    for (kind, key) in &plan.removals {
        match kind {
            Kind::Prompt => store::write::remove_prompt(tx, key)?,
            _ => store::write::remove_resource(tx, key)?,
        };
        progress.advance(1);
    }
    let collection = &source.collection;
    if plan.add_template {
        store::write::put_template(tx, &collection.template(), store::now_ms())?;
    }
    if let Some(by_hand) = &source.by_hand {
        for local in plan
            .templates
            .iter()
            .filter_map(|&at| by_hand.templates.get(at))
        {
            store::write::put_template(tx, &local.template(), local.last_modified)?;
        }
    }
    if let Some(prefix) = &plan.prefix {
        store::prefix::set(tx, &collection.name, prefix.as_deref())?;
    }
    // Every import that writes records where the collection comes from and when: what
    // `collection list` shows and `prompt edit` opens.
    if source.by_hand.is_none() {
        // A collection's first import makes its record: undoing that import removes it.
        if store::read::collection(tx, &collection.name)?.is_none() {
            store::history::created_collection(tx, &collection.name)?;
        }
        store::write::record_collection(
            tx,
            &collection.name,
            source.recorded().to_str(),
            store::now_ms(),
        )?;
    }
    Ok(())
}
