//! Full-text search over the library: what a person types turned into an FTS5 query that
//! cannot be a syntax error, the ranked hits (a ranking bounded for a query of words most
//! items hold, see `search`), and the index's terms for completing a query.
//! The index itself is schema.sql's `search` table, kept by triggers.

use std::collections::HashSet;

use rusqlite::{Connection, OptionalExtension};
use serde::Serialize;

use super::Result;

/// bm25's weight for each indexed column, in the table's order (name, title, description,
/// body): a word in an item's name or title counts ten times one in its body, one in its
/// description five times.
const WEIGHTS: &str = "bm25(10.0, 10.0, 5.0, 1.0)";

/// How many words a snippet holds at most.
const SNIPPET_WORDS: i64 = 12;

/// What a search looks for, and among what.
#[derive(Debug, Clone)]
pub struct Query<'a> {
    /// The FTS5 expression (`match_expression`).
    pub expression: &'a str,
    pub kind: Option<Kind>,
    pub collection: Option<&'a str>,
    /// Only items of these collections (what a caller limited to them sees); None: any.
    pub within: Option<&'a [String]>,
    pub limit: usize,
    /// What a snippet puts around each matched word.
    pub marks: (&'a str, &'a str),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Prompt,
    Resource,
}

impl Kind {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Kind::Prompt => "prompt",
            Kind::Resource => "resource",
        }
    }
}

/// One item found, best first.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Hit {
    pub kind: Kind,
    /// The prompt's name, or the resource's URI.
    pub key: String,
    pub title: Option<String>,
    /// The passage around the matched words, each between the query's marks.
    pub snippet: String,
}

/// Why search text cannot be searched for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the search text holds no word to look for (only spaces and punctuation); give at least one word or number, e.g. `review`"
)]
pub struct NoWords;

/// `text` as an FTS5 expression that matches the items holding every word of it. The
/// syntax is small and none of it can fail: a word is a run of letters and digits, matched
/// as written (quoted, so FTS5's operators `AND`, `OR`, `NOT` and `NEAR` are plain words),
/// and everything else separates words (`-`, `^`, `:`, parentheses...), except that a word
/// followed by `*` matches every word it starts, and text between two double quotes is a
/// phrase, its words in that order. A double quote without a partner separates words.
pub fn match_expression(text: &str) -> Result<String, NoWords> {
    let mut parts: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut phrase_end = 0;
    for (at, c) in text.char_indices() {
        if at < phrase_end {
            continue;
        }
        if c.is_alphanumeric() {
            word.push(c);
            continue;
        }
        if !word.is_empty() {
            parts.push(quoted(&word, c == '*'));
            word.clear();
        }
        if c == '"'
            && let Some(length) = text[at + 1..].find('"')
        {
            let phrase = &text[at + 1..at + 1 + length];
            // FTS5 finds no word in punctuation, and a phrase without one matches nothing.
            if phrase.chars().any(char::is_alphanumeric) {
                parts.push(quoted(phrase, false));
            }
            phrase_end = at + length + 2;
        }
    }
    if !word.is_empty() {
        parts.push(quoted(&word, false));
    }
    if parts.is_empty() {
        return Err(NoWords);
    }
    Ok(parts.join(" "))
}

/// `text` as one FTS5 string, a prefix query when `prefix`. It holds no double quote (a
/// word is letters and digits, a phrase ends at one), so it needs no escape.
fn quoted(text: &str, prefix: bool) -> String {
    let star = if prefix { "*" } else { "" };
    format!("\"{text}\"{star}")
}

/// A part of a query (a word, a prefix or a phrase) that this many items of the library hold
/// or more is broad. FTS5's bm25 reads every match of every part once over the whole library
/// (for its inverse document frequency) and then each match of the query (its term positions
/// and column sizes), about 5 µs a match: a part in 1,000 items costs a few milliseconds, one
/// in all 100,000 half a second (docs/benchmarks.md, "search").
const BROAD: i64 = 1_000;

/// How many matches of each kind a query of broad parts only is ranked among: the newest
/// (the highest ids), as an index walk from the end of FTS5's row order finds them.
const CANDIDATES: i64 = 1_000;

/// The columns a match ranks highest in: the name, title and description say what an item
/// is, the body only mentions things.
const HEAD_COLUMNS: &str = "{name title description}";

/// The items that match `query`, best first, with snippets made for them alone.
///
/// A query whose parts are all narrow (each in fewer than `BROAD` items) is ranked by bm25
/// over the weighted columns (`WEIGHTS`), ties in the index's order. A query with broad
/// parts is ranked by its narrow parts alone, the broad ones only filtering: a broad part's
/// inverse document frequency is small, and ranking by it would read all its matches. A
/// query of broad parts only is ranked among its `CANDIDATES` newest prompts and newest
/// resources, by where it matches: the items it matches in their name, title or description
/// first, then the others; within each, prompts first, then newest first.
pub fn search(conn: &Connection, query: &Query) -> Result<Vec<Hit>> {
    super::channel::fill_search(conn)?;
    let mut narrow = Vec::new();
    let mut broad = false;
    for part in parts(query.expression) {
        if matches_at_least(conn, part, BROAD)? {
            broad = true;
        } else {
            narrow.push(part);
        }
    }
    let rowids = if !broad {
        ranked(conn, query, query.expression, None)?
    } else if !narrow.is_empty() {
        ranked(conn, query, &narrow.join(" "), Some(query.expression))?
    } else {
        by_where_it_matches(conn, query)?
    };
    hits(conn, query, &rowids)
}

/// The parts of an expression `match_expression` made: its quoted strings, each with the
/// `*` after it. None holds a double quote, so each ends at the next one. Anything else (an
/// expression written by hand) is one part.
fn parts(expression: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut rest = expression.trim_start();
    while let Some(inner) = rest.strip_prefix('"') {
        let Some(close) = inner.find('"') else {
            return vec![expression];
        };
        let mut end = close + 2;
        if rest[end..].starts_with('*') {
            end += 1;
        }
        parts.push(&rest[..end]);
        rest = rest[end..].trim_start();
    }
    if !rest.is_empty() || parts.is_empty() {
        return vec![expression];
    }
    parts
}

/// Whether at least `count` items of the library match `expression`: a walk from the end of
/// the index's row order that stops at the `count`th, so a broad part costs what `count`
/// matches do, not what all of them do.
fn matches_at_least(conn: &Connection, expression: &str, count: i64) -> Result<bool> {
    let mut stmt = conn.prepare_cached(
        "SELECT 1 FROM search WHERE search MATCH ?1 ORDER BY rowid DESC LIMIT 1 OFFSET ?2",
    )?;
    Ok(stmt.exists(rusqlite::params![expression, count - 1])?)
}

/// The rowids of the best `query.limit` matches of `ranking` by bm25, among the items that
/// also match `filter` when there is one. `ORDER BY rank` lets FTS5 rank the matches itself
/// (`rank MATCH` gives it the weights). The filter's matches are read first, into a set:
/// they are no more than `ranking`'s, and a `rowid IN` of them in the same statement took
/// ten times as long as the two apart when measured.
fn ranked(
    conn: &Connection,
    query: &Query,
    ranking: &str,
    filter: Option<&str>,
) -> Result<Vec<i64>> {
    let allowed = match filter {
        Some(filter) => {
            let mut stmt = conn.prepare_cached("SELECT rowid FROM search WHERE search MATCH ?1")?;
            Some(
                stmt.query_map([filter], |row| row.get(0))?
                    .collect::<rusqlite::Result<HashSet<i64>>>()?,
            )
        }
        None => None,
    };
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT rowid FROM search
         WHERE search MATCH ?1 AND rank MATCH '{WEIGHTS}' AND {FILTERS}
         ORDER BY rank LIMIT ?4"
    ))?;
    let within = query.within.map(names_json).transpose()?;
    // With a filter, as many of the ranking's matches as it takes (-1: no limit).
    let ranked_limit = if allowed.is_some() {
        -1
    } else {
        limit(query.limit)
    };
    let params = rusqlite::params![
        ranking,
        query.kind.map(Kind::as_str),
        query.collection,
        ranked_limit,
        None::<&str>,
        within
    ];
    let mut rowids = Vec::new();
    let mut rows = stmt.query(params)?;
    while rowids.len() < query.limit
        && let Some(row) = rows.next()?
    {
        let rowid: i64 = row.get(0)?;
        if allowed
            .as_ref()
            .is_none_or(|allowed| allowed.contains(&rowid))
        {
            rowids.push(rowid);
        }
    }
    Ok(rowids)
}

/// What every ranking keeps to: the kind, the collection, the collections a caller sees
/// (parameters 2, 3 and 6).
const FILTERS: &str = "(?2 IS NULL OR kind = ?2) AND (?3 IS NULL OR collection = ?3)
           AND (?6 IS NULL OR collection IN (SELECT value FROM json_each(?6)))";

/// The rowids of the best `query.limit` matches of a query of broad parts only, ranked by
/// where they match among the newest `CANDIDATES` of each kind (see `search`): two walks of
/// the index over each kind's candidates, one for the matches and one for those in the
/// name, title or description.
fn by_where_it_matches(conn: &Connection, query: &Query) -> Result<Vec<i64>> {
    let head = format!("{HEAD_COLUMNS} : ({})", query.expression);
    let within = query.within.map(names_json).transpose()?;
    let mut in_range = conn.prepare_cached(
        "SELECT rowid FROM search WHERE search MATCH ?1 AND rowid BETWEEN ?2 AND ?3",
    )?;
    // Where it matches, then prompts before resources: pushed in that order, sorted stably.
    let mut found: Vec<(bool, i64)> = Vec::new();
    for kind in [Kind::Prompt, Kind::Resource] {
        if query.kind.is_some_and(|wanted| wanted != kind) {
            continue;
        }
        let newest = newest_matches(conn, query, kind, within.as_deref())?;
        let (Some(&first), Some(&last)) = (newest.first(), newest.last()) else {
            continue;
        };
        let in_head = in_range
            .query_map(
                rusqlite::params![head, first.min(last), first.max(last)],
                |row| row.get(0),
            )?
            .collect::<rusqlite::Result<HashSet<i64>>>()?;
        for head_first in [true, false] {
            found.extend(
                newest
                    .iter()
                    .filter(|rowid| in_head.contains(rowid) == head_first)
                    .take(query.limit)
                    .map(|&rowid| (head_first, rowid)),
            );
        }
    }
    found.sort_by_key(|&(in_head, _)| !in_head);
    Ok(found
        .into_iter()
        .take(query.limit)
        .map(|(_, rowid)| rowid)
        .collect())
}

/// The newest `CANDIDATES` matches of `query` of `kind`, newest first. A prompt's rowid is
/// minus its id, so the newest prompts are the lowest rowids and the newest resources the
/// highest: a walk from that end of FTS5's row order, which stops at the last candidate.
fn newest_matches(
    conn: &Connection,
    query: &Query,
    kind: Kind,
    within: Option<&str>,
) -> Result<Vec<i64>> {
    let (range, order) = match kind {
        Kind::Prompt => ("rowid < 0", "rowid"),
        Kind::Resource => ("rowid > 0", "rowid DESC"),
    };
    // The range keeps to one kind (`?2` NULL), without reading each match's `kind`.
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT rowid FROM search
         WHERE search MATCH ?1 AND {range} AND {FILTERS}
         ORDER BY {order} LIMIT ?4"
    ))?;
    let params = rusqlite::params![
        query.expression,
        None::<&str>,
        query.collection,
        CANDIDATES,
        None::<&str>,
        within
    ];
    Ok(stmt
        .query_map(params, |row| row.get(0))?
        .collect::<rusqlite::Result<_>>()?)
}

/// The hits of `rowids`, in that order, each with its snippet of `query`'s whole
/// expression: one lookup of its row, so a snippet is made for the hits shown alone.
fn hits(conn: &Connection, query: &Query, rowids: &[i64]) -> Result<Vec<Hit>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT kind, coalesce(uri, name), title, snippet(search, -1, ?3, ?4, '…', {SNIPPET_WORDS})
         FROM search WHERE search MATCH ?1 AND rowid = ?2"
    ))?;
    let mut hits = Vec::with_capacity(rowids.len());
    for &rowid in rowids {
        let params = rusqlite::params![query.expression, rowid, query.marks.0, query.marks.1];
        let hit = stmt
            .query_row(params, |row| {
                let kind: String = row.get(0)?;
                Ok(Hit {
                    kind: if kind == "prompt" {
                        Kind::Prompt
                    } else {
                        Kind::Resource
                    },
                    key: row.get(1)?,
                    title: row.get(2)?,
                    snippet: one_passage(&row.get::<_, Option<String>>(3)?.unwrap_or_default()),
                })
            })
            .optional()?;
        // Each rowid was a match of the same expression in the same read transaction.
        hits.extend(hit);
    }
    Ok(hits)
}

fn limit(limit: usize) -> i64 {
    i64::try_from(limit).unwrap_or(i64::MAX)
}

/// A snippet on one line: its runs of white space (line breaks of the body) as one space.
fn one_passage(snippet: &str) -> String {
    snippet.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn names_json(names: &[String]) -> Result<String> {
    serde_json::to_string(names)
        .map_err(|err| super::StoreError::Invalid(format!("collection names as JSON: {err}")))
}

/// Whether a prompt of the collections `within` names `uri` in its message templates as an
/// embed or link does: between double or single quotes (`{{ embed("URI") }}`,
/// `{{ link('URI') }}`), or as a markdown link's target (`[text](URI)`, `<URI>`). What a
/// caller limited to those collections may read beyond them. One search of the full-text
/// index (the URI's words as a phrase in a prompt's body, `search`'s `body` being its
/// message templates in order), each candidate then checked for the URI itself, so a
/// prompt that only mentions the same words grants nothing; a URI a template computes from
/// its arguments is not named, and grants nothing either.
pub(crate) fn named_by_prompt_in(conn: &Connection, uri: &str, within: &[String]) -> Result<bool> {
    super::channel::fill_search(conn)?;
    // FTS5 finds no word in punctuation: a URI without one is named by no phrase.
    if !uri.chars().any(char::is_alphanumeric) {
        return Ok(false);
    }
    // Within an FTS5 string a double quote is written twice.
    let phrase = format!("body : \"{}\"", uri.replace('"', "\"\""));
    let mut stmt = conn.prepare_cached(
        "SELECT EXISTS (SELECT 1 FROM search
         WHERE search MATCH ?1 AND kind = 'prompt'
           AND collection IN (SELECT value FROM json_each(?2))
           AND (instr(body, '\"' || ?3 || '\"') OR instr(body, '''' || ?3 || '''')
                OR instr(body, '(' || ?3 || ')') OR instr(body, '<' || ?3 || '>')))",
    )?;
    Ok(
        stmt.query_row(rusqlite::params![phrase, names_json(within)?, uri], |row| {
            row.get(0)
        })?,
    )
}

/// Every collection the library's prompts and resources belong to, sorted.
pub(crate) fn collections(conn: &Connection) -> Result<Vec<String>> {
    let mut stmt = conn.prepare_cached(
        "SELECT collection FROM prompts WHERE collection IS NOT NULL
         UNION SELECT collection FROM resources WHERE collection IS NOT NULL
         ORDER BY 1",
    )?;
    Ok(stmt
        .query_map([], |row| row.get(0))?
        .collect::<rusqlite::Result<_>>()?)
}

/// The index's terms that start with `prefix` (already folded to lower case, as the index
/// keeps them), at most `limit` of them in term order, each with how many items hold it.
/// A range of the vocabulary's own order, so a prefix costs what its terms do.
pub(crate) fn terms_with_prefix(
    conn: &Connection,
    prefix: &str,
    limit: usize,
) -> Result<Vec<(String, i64)>> {
    super::channel::fill_search(conn)?;
    let mut stmt = conn.prepare_cached(
        "SELECT term, doc FROM search_terms WHERE term >= ?1 ORDER BY term LIMIT ?2",
    )?;
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let mut terms = Vec::new();
    let mut rows = stmt.query(rusqlite::params![prefix, limit])?;
    while let Some(row) = rows.next()? {
        let term: String = row.get(0)?;
        if !term.starts_with(prefix) {
            break;
        }
        terms.push((term, row.get(1)?));
    }
    Ok(terms)
}

/// When the library last changed (any write or removal: the change log's last row), in
/// Unix milliseconds; 0 for a library never changed.
pub(crate) fn last_change(conn: &Connection) -> Result<i64> {
    Ok(conn.query_row(
        "SELECT coalesce((SELECT at FROM change_log ORDER BY seq DESC LIMIT 1), 0)",
        [],
        |row| row.get(0),
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Whatever is typed, the expression is one FTS5 accepts, or there was no word.
        #[test]
        fn no_text_is_an_fts5_syntax_error(text in "(\\PC|[\"*():^+-]| (AND|OR|NOT|NEAR) ){0,40}") {
            let conn = Connection::open_in_memory().expect("a database");
            conn.execute_batch(
                "CREATE VIRTUAL TABLE t USING fts5(a, b, tokenize = 'unicode61 remove_diacritics 2');
                 INSERT INTO t VALUES ('some text', 'and more near or not');",
            )
            .expect("a table");
            match match_expression(&text) {
                Err(NoWords) => prop_assert!(!text.chars().any(char::is_alphanumeric)),
                Ok(expression) => {
                    let found = conn.query_row(
                        "SELECT count(*) FROM t WHERE t MATCH ?1",
                        [&expression],
                        |row| row.get::<_, i64>(0),
                    );
                    prop_assert!(found.is_ok(), "{text:?} -> {expression:?}: {found:?}");
                }
            }
        }
    }

    #[test]
    fn an_expression_splits_into_its_words_prefixes_and_phrases() {
        let expression = match_expression("code rev* \"pull request\" a*b").expect("words");
        assert_eq!(
            parts(&expression),
            [
                "\"code\"",
                "\"rev\"*",
                "\"pull request\"",
                "\"a\"*",
                "\"b\""
            ]
        );
        // What `match_expression` did not make is one part.
        assert_eq!(parts("code OR review"), ["code OR review"]);
        assert_eq!(parts("\"open"), ["\"open"]);
        assert_eq!(parts("\"a\" b"), ["\"a\" b"]);
    }

    proptest! {
        /// Whatever is typed, its expression's parts put together again are the expression.
        #[test]
        fn the_parts_make_the_expression(text in "(\\PC|[\"*():^+-]){0,40}") {
            if let Ok(expression) = match_expression(&text) {
                prop_assert_eq!(parts(&expression).join(" "), expression);
            }
        }
    }

    #[test]
    fn words_are_quoted_and_operators_are_plain_text() {
        assert_eq!(
            match_expression("code review").as_deref(),
            Ok("\"code\" \"review\"")
        );
        assert_eq!(
            match_expression("a NEAR(b) OR -c").as_deref(),
            Ok("\"a\" \"NEAR\" \"b\" \"OR\" \"c\"")
        );
        assert_eq!(match_expression("a*b").as_deref(), Ok("\"a\"* \"b\""));
        assert_eq!(match_expression("rev*").as_deref(), Ok("\"rev\"*"));
        assert_eq!(
            match_expression("say \"code review\" now").as_deref(),
            Ok("\"say\" \"code review\" \"now\"")
        );
        // A double quote without a partner separates words.
        assert_eq!(match_expression("\"open").as_deref(), Ok("\"open\""));
        assert_eq!(match_expression("it\"s").as_deref(), Ok("\"it\" \"s\""));
        assert_eq!(match_expression("( ) * - \"\" \"-\""), Err(NoWords));
        assert_eq!(match_expression("   "), Err(NoWords));
    }
}
