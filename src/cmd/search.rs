//! `promptshelf search`: the library's prompts and resources that hold the given words, best
//! first, as numbered hits with a snippet or as JSON.

use std::io::Write;

use anyhow::Result;

use super::common;
use crate::cli::{SearchArgs, SearchKind};
use crate::store::Store;
use crate::store::search::{self, Hit, Kind, Query};

/// What a snippet puts around each matched word: markdown's bold, readable as it is in a
/// terminal and in JSON alike.
pub(super) const MARKS: (&str, &str) = ("**", "**");

pub(super) fn run(store: &Store, args: SearchArgs) -> Result<()> {
    let text = args.text.join(" ");
    let expression = search::match_expression(&text)?;
    let conn = store.conn()?;
    if let Some(collection) = &args.collection {
        let known = search::collections(&conn)?;
        if !known.contains(collection) {
            return Err(common::unknown(
                "collection",
                "collections",
                collection,
                &known,
                "collection list",
            ));
        }
    }
    let query = Query {
        expression: &expression,
        kind: args.kind.map(|kind| match kind {
            SearchKind::Prompt => Kind::Prompt,
            SearchKind::Resource => Kind::Resource,
        }),
        collection: args.collection.as_deref(),
        within: None,
        limit: args.limit as usize,
        marks: MARKS,
    };
    let hits = search::search(&conn, &query)?;
    if args.json {
        return common::print_json(&hits);
    }
    if hits.is_empty() {
        eprintln!(
            "nothing in the library matches '{}' (every word must be there; try fewer words, or `word*` for words it starts)",
            common::one_line(&text)
        );
        return Ok(());
    }
    let mut out = common::stdout();
    write_hits(&mut out, &hits)?;
    out.flush()?;
    Ok(())
}

/// `1. prompt code-review: Review code`, then the snippet indented on the next line.
fn write_hits(out: &mut impl Write, hits: &[Hit]) -> std::io::Result<()> {
    for (at, hit) in hits.iter().enumerate() {
        let title = hit
            .title
            .as_deref()
            .map(|title| format!(": {}", common::one_line(title)))
            .unwrap_or_default();
        writeln!(
            out,
            "{}. {} {}{title}",
            at + 1,
            hit.kind.as_str(),
            common::one_line(&hit.key)
        )?;
        if !hit.snippet.is_empty() {
            writeln!(out, "   {}", common::one_line(&hit.snippet).trim())?;
        }
    }
    Ok(())
}
