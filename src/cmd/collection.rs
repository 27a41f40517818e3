//! `promptshelf collection`: the imported collections listed (what each holds, where it was
//! imported from and when, or that it is the built-in seed) and removed.

use anyhow::Result;
use serde::Serialize;

use super::common::{self, Table};
use crate::cli::CollectionCommand;
use crate::seed::SEED_COLLECTION;
use crate::store::{self, Store};

/// What the SOURCE column says of the seed's collection, which has no folder.
const SEED_SOURCE: &str = "(built-in seed)";

pub(super) fn run(store: &Store, command: CollectionCommand) -> Result<()> {
    match command {
        CollectionCommand::List(flags) => list(store, flags.json),
        CollectionCommand::Rm { name, json } => remove(store, &name, json),
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CollectionView<'a> {
    name: &'a str,
    /// The folder it was last imported from; None when not known (and for the seed).
    source: Option<&'a str>,
    /// Whether it is the built-in seed library, loaded when the database was made.
    seed: bool,
    prompts: u64,
    resources: u64,
    templates: u64,
    /// When an import last wrote it, Unix milliseconds and RFC 3339; None when not known.
    imported_at_ms: Option<i64>,
    imported_at: Option<String>,
}

fn list(store: &Store, json: bool) -> Result<()> {
    let collections = store::read::collections(&*store.conn()?)?;
    if json {
        let views: Vec<CollectionView> = collections
            .iter()
            .map(|collection| CollectionView {
                name: &collection.name,
                source: collection.source.source.as_deref(),
                seed: is_seed(collection),
                prompts: collection.prompts,
                resources: collection.resources,
                templates: collection.templates,
                imported_at_ms: collection.source.imported_at,
                imported_at: collection.source.imported_at.map(common::timestamp),
            })
            .collect();
        return common::print_json(&views);
    }
    // The folder last: a long path is what a terminal's width cuts, not the counts.
    let mut table = Table::new(&[
        "NAME",
        "PROMPTS",
        "RESOURCES",
        "TEMPLATES",
        "LAST IMPORT",
        "SOURCE",
    ]);
    for collection in &collections {
        table.row(vec![
            collection.name.clone(),
            collection.prompts.to_string(),
            collection.resources.to_string(),
            collection.templates.to_string(),
            collection
                .source
                .imported_at
                .map_or_else(|| "-".to_string(), readable_time),
            match &collection.source.source {
                Some(source) => source.clone(),
                None if is_seed(collection) => SEED_SOURCE.to_string(),
                None => "-".to_string(),
            },
        ]);
    }
    table.print("no collections (import a folder with `promptshelf import DIR`)")
}

/// Whether the collection is the seed's: of its name, and imported from no folder (a folder
/// imported under that name is a collection like any other).
fn is_seed(collection: &store::read::CollectionSummary) -> bool {
    collection.name == SEED_COLLECTION && collection.source.source.is_none()
}

/// Unix milliseconds as `2026-12-01 21:46:17 UTC`: to the second, for people.
fn readable_time(ms: i64) -> String {
    jiff::Timestamp::from_millisecond(ms)
        .map(|at| at.strftime("%Y-%m-%d %H:%M:%S UTC").to_string())
        .unwrap_or_else(|_| ms.to_string())
}

#[derive(Serialize)]
struct RemovedJson<'a> {
    action: &'static str,
    kind: &'static str,
    key: &'a str,
    prompts: u64,
    resources: u64,
    templates: u64,
}

fn remove(store: &Store, name: &str, json: bool) -> Result<()> {
    let removed = store.write(|tx| store::write::remove_collection(tx, name))?;
    if !removed.found() {
        let known: Vec<String> = store::read::collections(&*store.conn()?)?
            .into_iter()
            .map(|collection| collection.name)
            .collect();
        return Err(common::unknown(
            "collection",
            "collections",
            name,
            &known,
            "collection list",
        ));
    }
    let line = format!(
        "removed collection {}: {}, {}, {} (its folder is left as it is)",
        common::one_line(name),
        common::count(removed.prompts, "prompt", "prompts"),
        common::count(removed.resources, "resource", "resources"),
        common::count(removed.templates, "template", "templates"),
    );
    common::report(
        json,
        &line,
        &RemovedJson {
            action: "removed",
            kind: "collection",
            key: name,
            prompts: removed.prompts,
            resources: removed.resources,
            templates: removed.templates,
        },
    )
}
