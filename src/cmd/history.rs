//! `promptshelf history`, `diff`, `rollback` and `undo`: the versions the store keeps of every
//! item (`store::history`), shown, compared as text, and written back.

use std::io::Write;

use anyhow::{Result, bail};
use serde::Serialize;

use super::common::{self, Table};
use crate::cli::{DiffArgs, HistoryArgs, KindArg, RollbackArgs};
use crate::library::emit;
use crate::model::{Content, Kind};
use crate::store::history::{self, Item, Version};
use crate::store::{Store, hex, revert};

pub(super) fn history(store: &Store, args: HistoryArgs) -> Result<()> {
    let conn = store.conn()?;
    let kind = kind_of(&conn, &args.key, args.kind)?;
    let versions = history::versions(&conn, kind, &args.key)?;
    if args.json {
        let shown: Vec<VersionJson> = versions.iter().map(VersionJson::of).collect();
        return common::print_json(&shown);
    }
    let mut table = Table::new(&["VERSION", "WHEN", "CHANGE", "BY"]);
    for version in &versions {
        table.row(vec![
            version.id.to_string(),
            common::timestamp(version.at),
            version.change.as_str().to_string(),
            version.what.clone(),
        ]);
    }
    table.print("no versions kept")
}

pub(super) fn diff(store: &Store, args: DiffArgs) -> Result<()> {
    let conn = store.conn()?;
    let kind = kind_of(&conn, &args.key, args.kind)?;
    let versions = history::versions(&conn, kind, &args.key)?;
    let known = |id: i64| -> Result<&Version> {
        versions
            .iter()
            .find(|version| version.id == id)
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "{} {} has no version {id}; `promptshelf history {}` lists its versions",
                    kind.as_str(),
                    args.key,
                    args.key
                )
            })
    };
    // Newest first: NEW is the newest unless given, OLD the one before NEW.
    let new = match args.new {
        Some(id) => known(id)?,
        None => versions
            .first()
            .ok_or_else(|| anyhow::anyhow!("{} keeps no versions", args.key))?,
    };
    let old = match args.old {
        Some(id) => Some(known(id)?),
        None => versions.iter().find(|version| version.id < new.id),
    };
    let text = |version: Option<&Version>| -> Result<String> {
        let Some(version) = version else {
            return Ok(String::new());
        };
        Ok(match history::item(&conn, version.id)? {
            Some((_, Some(item))) => text_of(&item),
            _ => String::new(),
        })
    };
    let (old_text, new_text) = (text(old)?, text(Some(new))?);
    let label = |version: Option<&Version>| match version {
        Some(version) => format!("{} (version {})", args.key, version.id),
        None => format!("{} (nothing)", args.key),
    };
    let diff = similar::TextDiff::from_lines(&old_text, &new_text)
        .unified_diff()
        .header(&label(old), &label(Some(new)))
        .to_string();
    let mut out = common::stdout();
    out.write_all(diff.as_bytes())?;
    out.flush()?;
    Ok(())
}

pub(super) fn rollback(store: &Store, args: RollbackArgs) -> Result<()> {
    let kind = {
        let conn = store.conn()?;
        let kind = kind_of(&conn, &args.key, args.kind)?;
        if !history::versions(&conn, kind, &args.key)?
            .iter()
            .any(|version| version.id == args.to)
        {
            bail!(
                "{} {} has no version {}; `promptshelf history {}` lists its versions",
                kind.as_str(),
                args.key,
                args.to,
                args.key
            );
        }
        kind
    };
    let version = store.write(|tx| revert::roll_back(tx, args.to))?;
    let line = format!(
        "rolled {} {} back to version {} (of {})",
        kind.as_str(),
        args.key,
        version.id,
        common::timestamp(version.at)
    );
    common::report(
        args.json,
        &line,
        &RolledBack {
            kind: kind.as_str(),
            key: &args.key,
            to: version.id,
        },
    )
}

pub(super) fn undo(store: &Store, json: bool) -> Result<()> {
    let Some(undone) = store.write(revert::undo)? else {
        bail!("there is nothing to undo: every write the history keeps is undone already");
    };
    let items: Vec<ItemJson> = undone
        .items
        .iter()
        .map(|(kind, key)| ItemJson {
            kind: kind.as_str(),
            key,
        })
        .collect();
    let mut line = format!(
        "undid write {} of {} ({}): {} back as {}",
        undone.write_id,
        common::timestamp(undone.at),
        undone.what,
        common::count(items.len() as u64, "item", "items"),
        if items.len() == 1 {
            "it was"
        } else {
            "they were"
        }
    );
    if !undone.collections.is_empty() {
        let names: Vec<String> = undone
            .collections
            .iter()
            .map(|name| common::one_line(name))
            .collect();
        line.push_str(&format!(
            "; it made the {} {}, removed too",
            if names.len() == 1 {
                "collection"
            } else {
                "collections"
            },
            names.join(", ")
        ));
    }
    common::report(
        json,
        &line,
        &UndoJson {
            write: undone.write_id,
            what: &undone.what,
            items,
            collections: &undone.collections,
        },
    )
}

/// The kind of item `key` names in the history: the one given, or the only one there is.
pub(super) fn kind_of(
    conn: &rusqlite::Connection,
    key: &str,
    given: Option<KindArg>,
) -> Result<Kind> {
    let kinds = history::kinds_of(conn, key)?;
    // A key the history does not keep is most often a typo of one it does.
    let near = |kind: Option<Kind>| -> Result<Option<String>> {
        Ok(crate::suggest::did_you_mean(
            key,
            &history::keys(conn, kind)?,
        ))
    };
    if let Some(given) = given {
        let kind = given.kind();
        if !kinds.contains(&kind) {
            let kind = kind.as_str();
            if let Some(suggestion) = near(Some(given.kind()))? {
                bail!("the history keeps no {kind} {key}; {suggestion}");
            }
            bail!(
                "the history keeps no {kind} {key}; `promptshelf {kind} list` shows what there is"
            );
        }
        return Ok(kind);
    }
    match kinds.as_slice() {
        [kind] => Ok(*kind),
        [] => {
            if let Some(suggestion) = near(None)? {
                bail!("the history keeps nothing named {key}; {suggestion}");
            }
            bail!(
                "the history keeps nothing named {key}; give a prompt name, a resource URI, a \
                 URI template or a completion table (`promptshelf prompt list` shows the prompts)"
            )
        }
        several => {
            let names: Vec<&str> = several.iter().map(|kind| kind.as_str()).collect();
            bail!(
                "{key} names a {}; say which with --kind",
                names.join(" and a ")
            )
        }
    }
}

/// An item's version as text to compare: a prompt as its file, a resource as its text (or a
/// line about its bytes), a template or table as its lines.
fn text_of(item: &Item) -> String {
    match item {
        Item::Prompt(prompt) => emit::prompt_file(prompt, &format!("{}.prompt.md", prompt.name)),
        Item::Resource(resource) => match &resource.content {
            Content::Text(text) => text.clone(),
            Content::Binary(bytes) => format!(
                "{} bytes of {}, blake3 {}\n",
                bytes.len(),
                resource.info.mime_type,
                hex(blake3::hash(bytes).as_bytes())
            ),
        },
        Item::Template(template) => serde_json::to_string_pretty(template)
            .map(|text| text + "\n")
            .unwrap_or_default(),
        Item::Values(table) => String::from_utf8_lossy(&emit::values_file(&table.values).1).into(),
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct VersionJson {
    version: i64,
    kind: &'static str,
    key: String,
    change: &'static str,
    /// Unix milliseconds.
    at: i64,
    by: String,
    write: i64,
    content_hash: Option<String>,
}

impl VersionJson {
    fn of(version: &Version) -> VersionJson {
        VersionJson {
            version: version.id,
            kind: version.kind.as_str(),
            key: version.key.clone(),
            change: version.change.as_str(),
            at: version.at,
            by: version.what.clone(),
            write: version.write_id,
            content_hash: version
                .content_hash
                .as_deref()
                .and_then(|hash| <[u8; 32]>::try_from(hash).ok())
                .map(|hash| hex(&hash)),
        }
    }
}

#[derive(Serialize)]
struct RolledBack<'a> {
    kind: &'static str,
    key: &'a str,
    to: i64,
}

#[derive(Serialize)]
struct ItemJson<'a> {
    kind: &'static str,
    key: &'a str,
}

#[derive(Serialize)]
struct UndoJson<'a> {
    write: i64,
    what: &'a str,
    items: Vec<ItemJson<'a>>,
    /// The collections the write made, whose records went with their items.
    collections: &'a [String],
}
