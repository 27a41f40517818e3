//! `promptshelf label`: release channels' labels (`store::labels`) put on versions of items,
//! taken off, promoted from one label to another, listed, and undone; and the labels on an
//! item's versions, as `prompt show` and `resource show` print them.

use std::collections::BTreeMap;
use std::io::Write;

use anyhow::{Result, bail};
use rusqlite::Connection;
use serde::Serialize;

use super::common::{self, Table};
use super::history::kind_of;
use crate::cli::{KindArg, LabelCommand, LabelItems};
use crate::model::Kind;
use crate::store::Store;
use crate::store::labels::{self, LabelWrite, Move, Selection};

pub(super) fn run(store: &Store, command: LabelCommand) -> Result<()> {
    match command {
        LabelCommand::Set {
            label,
            items,
            version,
            kind,
        } => {
            let selection = selection(store, items, kind)?;
            if let (Some(version), Selection::Items(named)) = (version, &selection)
                && named.len() != 1
            {
                bail!(
                    "--version {version} names a version of one item, and {} were given; \
                     label one item at a time with --version, or leave it out to label each \
                     item's newest version",
                    named.len()
                );
            }
            let moves = store.write(|tx| labels::set(tx, &label, &selection, version))?;
            print_moves(&moves, &format!("{label} was on those versions already"))
        }
        LabelCommand::Rm { label, items, kind } => {
            let selection = selection(store, items, kind)?;
            let moves = store.write(|tx| labels::remove(tx, &label, &selection))?;
            print_moves(&moves, &format!("none of them has the label {label}"))
        }
        LabelCommand::Promote {
            from,
            to,
            collection,
        } => {
            let moves = store.write(|tx| labels::promote(tx, &from, &to, collection.as_deref()))?;
            print_moves(&moves, &format!("{to} names what {from} names already"))
        }
        LabelCommand::List { label, json } => list(&*store.conn()?, label.as_deref(), json),
        LabelCommand::History(flags) => history(&*store.conn()?, flags.json),
        LabelCommand::Undo => {
            let Some((undone, what, moves)) = store.write(labels::undo)? else {
                bail!(
                    "there is nothing to undo: every label write `label history` keeps is \
                     undone already"
                );
            };
            common::say(&format!(
                "undid label write #{undone} ({})",
                common::one_line(&what)
            ))?;
            print_moves(&moves, "")
        }
    }
}

/// The labels on an item's versions, by label, as `prompt show` and `resource show` give them.
pub(super) fn of_item(conn: &Connection, kind: Kind, key: &str) -> Result<BTreeMap<String, i64>> {
    Ok(labels::of_item(conn, kind, key)?.into_iter().collect())
}

/// `production v12, staging v15`: the labels on an item, as a line of `show`.
pub(super) fn fact(on: &BTreeMap<String, i64>) -> String {
    let each: Vec<String> = on
        .iter()
        .map(|(label, version)| format!("{label} v{version}"))
        .collect();
    each.join(", ")
}

/// An item's `show --json` object with the labels on its versions (left out when none).
#[derive(Serialize)]
pub(super) struct Labelled<T> {
    #[serde(flatten)]
    pub item: T,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, i64>,
}

/// The items the command line names, each resolved to its kind as `history ITEM` resolves
/// it; a collection or the whole library as they are.
fn selection(store: &Store, items: LabelItems, kind: Option<KindArg>) -> Result<Selection> {
    if items.all {
        return Ok(Selection::All);
    }
    if let Some(collection) = items.collection {
        return Ok(Selection::Collection(collection));
    }
    let conn = store.conn()?;
    let named = items
        .items
        .into_iter()
        .map(|key| Ok((kind_of(&conn, &key, kind)?, key)))
        .collect::<Result<_>>()?;
    Ok(Selection::Items(named))
}

/// `-` for no version, else `v12`.
fn version(version: Option<i64>) -> String {
    version.map_or_else(|| "-".to_string(), |version| format!("v{version}"))
}

/// `production: prompt greet v12 -> v15`.
fn move_line(step: &Move) -> String {
    format!(
        "{}: {} {} {} -> {}",
        step.label,
        step.kind.as_str(),
        common::one_line(&step.key),
        version(step.before),
        version(step.after)
    )
}

/// A line per label moved and a count, or, when none moved, `unmoved` (if anything).
fn print_moves(moves: &[Move], unmoved: &str) -> Result<()> {
    let mut out = common::stdout();
    for step in moves {
        writeln!(out, "{}", move_line(step))?;
    }
    if moves.is_empty() {
        let why = if unmoved.is_empty() {
            String::new()
        } else {
            format!(": {unmoved}")
        };
        writeln!(out, "nothing moved{why}")?;
    } else {
        writeln!(
            out,
            "{}",
            common::count(moves.len() as u64, "label moved", "labels moved")
        )?;
    }
    out.flush()?;
    Ok(())
}

fn list(conn: &Connection, label: Option<&str>, json: bool) -> Result<()> {
    let Some(label) = label else {
        let names = labels::names(conn)?;
        if json {
            let shown: Vec<NameJson> = names
                .iter()
                .map(|(label, items)| NameJson {
                    label,
                    items: *items,
                })
                .collect();
            return common::print_json(&shown);
        }
        let mut table = Table::new(&["LABEL", "ITEMS"]);
        for (label, items) in names {
            table.row(vec![label, items.to_string()]);
        }
        return table.print("no labels (put one on with `promptshelf label set LABEL ITEM`)");
    };
    labels::check_name(label)?;
    let on = labels::list(conn, Some(label))?;
    if json {
        let shown: Vec<OnJson> = on
            .iter()
            .map(|labelled| OnJson {
                kind: labelled.kind.as_str(),
                key: &labelled.key,
                version: labelled.version,
            })
            .collect();
        return common::print_json(&shown);
    }
    let mut table = Table::new(&["KIND", "KEY", "VERSION"]);
    for labelled in on {
        table.row(vec![
            labelled.kind.as_str().to_string(),
            labelled.key,
            labelled.version.to_string(),
        ]);
    }
    table.print(&format!(
        "no item has the label {label} (`promptshelf label list` shows the labels there are)"
    ))
}

fn history(conn: &Connection, json: bool) -> Result<()> {
    let writes = labels::writes(conn)?;
    if json {
        let shown: Vec<WriteJson> = writes.iter().map(WriteJson::of).collect();
        return common::print_json(&shown);
    }
    if writes.is_empty() {
        eprintln!("no label writes kept (`promptshelf label set LABEL ITEM` makes one)");
        return Ok(());
    }
    let mut out = common::stdout();
    for write in &writes {
        let mark = match (write.undone, write.reverts) {
            (_, Some(reverted)) => format!("  (undo of #{reverted})"),
            (true, None) => "  (undone)".to_string(),
            (false, None) => String::new(),
        };
        writeln!(
            out,
            "#{}  {}  {}{mark}",
            write.id,
            common::timestamp(write.at),
            common::one_line(&write.what)
        )?;
        for step in &write.moves {
            writeln!(out, "    {}", move_line(step))?;
        }
    }
    out.flush()?;
    Ok(())
}

#[derive(Serialize)]
struct NameJson<'a> {
    label: &'a str,
    items: i64,
}

/// An item a label is on (`label list LABEL`).
#[derive(Serialize)]
struct OnJson<'a> {
    kind: &'static str,
    key: &'a str,
    version: i64,
}

/// One move of a label (`label history`): the versions it named before and after, null for
/// none.
#[derive(Serialize)]
struct MoveJson<'a> {
    label: &'a str,
    kind: &'static str,
    key: &'a str,
    before: Option<i64>,
    after: Option<i64>,
}

#[derive(Serialize)]
struct WriteJson<'a> {
    id: i64,
    /// Unix milliseconds.
    at: i64,
    what: &'a str,
    undone: bool,
    /// For an undo, the write it reverted.
    reverts: Option<i64>,
    moves: Vec<MoveJson<'a>>,
}

impl WriteJson<'_> {
    fn of(write: &LabelWrite) -> WriteJson<'_> {
        WriteJson {
            id: write.id,
            at: write.at,
            what: &write.what,
            undone: write.undone,
            reverts: write.reverts,
            moves: write.moves.iter().map(MoveJson::of).collect(),
        }
    }
}

impl MoveJson<'_> {
    fn of(step: &Move) -> MoveJson<'_> {
        MoveJson {
            label: &step.label,
            kind: step.kind.as_str(),
            key: &step.key,
            before: step.before,
            after: step.after,
        }
    }
}
