//! The plan: the parsed files compared with the store, what to write and what to remove.

use std::collections::{HashMap, HashSet};

use rusqlite::Connection;

use crate::library::{FileError, Item};
use crate::model::{CompletionValue, ContentHash};
use crate::store::{self, ItemState};

use super::read::Parsed;
use super::source::Source;
use super::{Action, Change, Kind, Naming, Options, Skipped, names};

/// A parsed file to write; `modified_at` becomes its lastModified if its hash changed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Write {
    pub(super) index: usize,
    pub(super) modified_at: i64,
}

#[derive(Debug, Default)]
pub(super) struct Plan {
    pub(super) writes: Vec<Write>,
    pub(super) removals: Vec<(Kind, String)>,
    pub(super) add_template: bool,
    /// The hand-added templates (`ByHand::templates`, by index) to write.
    pub(super) templates: Vec<usize>,
    /// The collection's row is missing or names another folder: an import that changes no
    /// item still writes it, once.
    pub(super) record: bool,
    /// The prefix of the collection's prompt names to record (`--prefix`), or (Some(None))
    /// to forget (`--no-prefix`), when that changes it.
    pub(super) prefix: Option<Option<String>>,
    pub(super) changes: Vec<Change>,
    pub(super) unchanged: usize,
    /// The collection's items whose files are gone, left in place (see `Report`).
    pub(super) without_file: usize,
    pub(super) conflicts: Vec<FileError>,
    /// Files whose item was detached from the collection (`prompt add --detach`, ...).
    pub(super) detached: Vec<Skipped>,
}

impl Plan {
    pub(super) fn is_empty(&self) -> bool {
        self.writes.is_empty()
            && self.removals.is_empty()
            && !self.add_template
            && self.templates.is_empty()
            && !self.record
            && self.prefix.is_none()
    }
}

/// Compares the parsed files with the store. Reads only.
pub(super) fn plan(
    conn: &Connection,
    source: &Source,
    parsed: &[Parsed],
    options: &Options,
    protected: &[String],
) -> store::Result<Plan> {
    let collection = &source.collection;
    let prompts = by_key(store::read::prompt_states(conn)?);
    let resources = by_key(store::read::resource_states(conn)?);
    let mut plan = Plan {
        // Items added by hand are no collection's: there is nothing to record.
        record: source.by_hand.is_none()
            && store::read::collection(conn, &collection.name)?
                .is_none_or(|row| row.source.as_deref() != source.recorded().to_str()),
        ..Plan::default()
    };
    if source.by_hand.is_none() {
        let recorded = store::prefix::of(conn, &collection.name)?;
        plan.prefix = match &source.naming {
            Naming::PrefixAll(prefix) if recorded.as_ref() != Some(prefix) => {
                Some(Some(prefix.clone()))
            }
            Naming::Refuse if recorded.is_some() => Some(None),
            _ => None,
        };
    }
    let detached: HashSet<(Kind, String)> = store::detached::of_collection(conn, &collection.name)?
        .into_iter()
        .collect();
    for (index, file) in parsed.iter().enumerate() {
        let (kind, key) = file.kind_and_key();
        if detached.contains(&(kind, key.to_string())) {
            let command = match kind {
                Kind::Prompt => "prompt",
                _ => "resource",
            };
            plan.detached.push(Skipped {
                path: file.path.clone(),
                reason: format!(
                    "{command} {key} was detached from the collection, so its file is left \
                     alone; `promptshelf {command} rm {key}` gives it back to the collection"
                ),
            });
            continue;
        }
        let change = |action| Change {
            action,
            kind,
            key: key.to_string(),
            path: Some(file.path.clone()),
        };
        let stored = match kind {
            Kind::Prompt => prompts.get(key),
            Kind::Resource => resources.get(key),
            _ => None,
        };
        if let Item::Values { table, values } = &file.item {
            match store::read::table_values(conn, table)? {
                None => plan.changes.push(change(Action::Add)),
                Some(stored) if same_values(&stored, values) => {
                    plan.unchanged += 1;
                    continue;
                }
                Some(_) => plan.changes.push(change(Action::Update)),
            }
            plan.writes.push(Write {
                index,
                modified_at: file.modified_ms,
            });
            continue;
        }
        let Some(stored) = stored else {
            plan.changes.push(change(Action::Add));
            plan.writes.push(Write {
                index,
                modified_at: file.modified_ms,
            });
            continue;
        };
        if let Some(other) = &stored.origin.collection
            && *other != collection.name
        {
            plan.conflicts.push(taken(
                source,
                file,
                (kind, key),
                other,
                &stored.origin.path,
                &source.naming,
            ));
            continue;
        }
        let origin = match &file.item {
            Item::Prompt(prompt) => &prompt.origin,
            Item::Resource(resource) => &resource.info.origin,
            Item::Values { .. } => continue,
        };
        if Some(stored.content_hash) == file.hash {
            plan.unchanged += 1;
            if !stored.origin.same_file(origin) {
                // Same content from another file: only its origin is recorded.
                plan.writes.push(Write {
                    index,
                    modified_at: stored.last_modified,
                });
            }
            continue;
        }
        plan.changes.push(change(Action::Update));
        // lastModified moves forward even when the file claims an older time.
        plan.writes.push(Write {
            index,
            modified_at: file.modified_ms.max(stored.last_modified + 1),
        });
    }
    // The collection's items no file of this import gives any more: removed when pruning
    // (all of them, or those of the files `prune_files` names), otherwise counted, so the
    // summary can say that `--prune` would remove them.
    let imported: HashSet<(Kind, &str)> = parsed.iter().map(|file| file.kind_and_key()).collect();
    for (kind, states) in [(Kind::Prompt, &prompts), (Kind::Resource, &resources)] {
        let mut gone: Vec<&ItemState> = states
            .values()
            .filter(|state| {
                state.origin.collection.as_deref() == Some(collection.name.as_str())
                    && !imported.contains(&(kind, state.key.as_str()))
                    && !is_protected(state.origin.path.as_deref(), protected)
            })
            .collect();
        gone.sort_by(|a, b| a.key.cmp(&b.key));
        for state in gone {
            let pruned = options.prune
                || options.prune_files.as_ref().is_some_and(|files| {
                    state
                        .origin
                        .path
                        .as_ref()
                        .is_some_and(|path| files.contains(path))
                });
            if !pruned {
                plan.without_file += 1;
                continue;
            }
            plan.removals.push((kind, state.key.clone()));
            plan.changes.push(Change {
                action: Action::Remove,
                kind,
                key: state.key.clone(),
                path: state.origin.path.clone(),
            });
        }
    }
    let templates: HashMap<String, ContentHash> =
        store::read::templates(conn, store::read::Window::ALL)?
            .into_iter()
            .map(|stored| (stored.template.uri_template, stored.content_hash))
            .collect();
    if let Some(by_hand) = &source.by_hand {
        for (index, local) in by_hand.templates.iter().enumerate() {
            let action = match templates.get(&local.uri_template) {
                None => Action::Add,
                Some(hash) if *hash == store::hash_template(&local.template()) => continue,
                Some(_) => Action::Update,
            };
            plan.templates.push(index);
            plan.changes.push(Change {
                action,
                kind: Kind::Template,
                key: local.uri_template.clone(),
                path: None,
            });
        }
    }
    let template = collection.template();
    // The template is added when missing and otherwise left alone: someone may have given
    // it completions or a better title with `template add`.
    let exists = templates.contains_key(&template.uri_template);
    if !exists && source.by_hand.is_none() {
        plan.add_template = true;
        plan.changes.push(Change {
            action: Action::Add,
            kind: Kind::Template,
            key: template.uri_template,
            path: None,
        });
    }
    Ok(plan)
}

fn by_key(states: Vec<ItemState>) -> HashMap<String, ItemState> {
    states
        .into_iter()
        .map(|state| (state.key.clone(), state))
        .collect()
}

/// A failure for a file whose prompt name (or resource URI) belongs to another collection,
/// at the line the name comes from.
pub(super) fn taken(
    source: &Source,
    file: &Parsed,
    (kind, key): (Kind, &str),
    other: &str,
    path: &Option<String>,
    naming: &Naming,
) -> FileError {
    let from = path
        .as_deref()
        .map(|path| format!(" ({path})"))
        .unwrap_or_default();
    let (line, fix) = match kind {
        Kind::Prompt => {
            let name = names::name_source(source, file);
            let prefix = match naming {
                Naming::Refuse => format!(
                    "import without --no-prefix to name it {}-{key}",
                    source.collection.name
                ),
                _ => "import the folder with another --prefix WORD".to_string(),
            };
            let fix = format!(
                "{prefix}; or {}; or remove the other with `promptshelf prompt rm {key}`",
                name.fix
            );
            (Some(name.line), fix)
        }
        _ => (
            file.line,
            format!("remove the other with `promptshelf resource rm {key}`"),
        ),
    };
    FileError {
        path: file.path.clone(),
        line,
        column: None,
        message: format!(
            "{} '{key}' belongs to the collection '{other}'{from}; {fix}",
            kind.as_str()
        ),
    }
}

/// Whether an item from `path` belongs to a file or folder that failed.
fn is_protected(path: Option<&str>, protected: &[String]) -> bool {
    let Some(path) = path else { return false };
    protected.iter().any(|failed| {
        path == failed
            || failed.is_empty()
            || path
                .strip_prefix(failed.as_str())
                .is_some_and(|rest| rest.starts_with('/'))
    })
}

/// Whether a table holds exactly `values` (the store keeps one row per value and context,
/// the last weight given winning, in value order).
fn same_values(stored: &[CompletionValue], values: &[CompletionValue]) -> bool {
    let key = |value: &CompletionValue| {
        let (name, context) = value.context.clone().unwrap_or_default();
        (value.value.clone(), name, context)
    };
    let mut wanted: HashMap<(String, String, String), f64> = HashMap::new();
    for value in values {
        wanted.insert(key(value), value.weight);
    }
    wanted.len() == stored.len()
        && stored
            .iter()
            .all(|value| wanted.get(&key(value)) == Some(&value.weight))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protection_covers_failed_folders() {
        let failed = vec!["a/b".to_string()];
        assert!(is_protected(Some("a/b"), &failed));
        assert!(is_protected(Some("a/b/c.md"), &failed));
        assert!(!is_protected(Some("a/bc.md"), &failed));
        assert!(!is_protected(None, &failed));
    }

    #[test]
    fn values_compare_as_the_store_keeps_them() {
        let value = |value: &str, weight: f64| CompletionValue {
            value: value.into(),
            weight,
            context: None,
        };
        assert!(same_values(
            &[value("a", 2.0), value("b", 0.0)],
            &[value("b", 0.0), value("a", 1.0), value("a", 2.0)]
        ));
        assert!(!same_values(&[value("a", 1.0)], &[value("a", 2.0)]));
    }
}
