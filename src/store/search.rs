//! Full-text search over the library: what a person types turned into an FTS5 query that
//! cannot be a syntax error, the ranked hits (a ranking bounded for a query of words most
//! items hold, see `search`), and the index's terms for completing a query.
//! The index itself is schema.sql's `search` table, kept by triggers. It keeps no term
//! positions, so a phrase is looked for as its words and each match shown is checked for
//! the phrase against the item's own text (`Phrases`, with `store::words`).

use std::collections::HashSet;

use rusqlite::{Connection, OptionalExtension};
use serde::Serialize;

use super::Result;
use super::words::Words;

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
///
/// Every ranking runs on the expression's words (`Phrases::words`); where it holds a phrase
/// of several words, the matches are checked in the ranking's order until `query.limit`
/// hold it, so a phrase costs a check per match read, not per match in the library. A
/// query of broad parts only is thus looked for among the `CANDIDATES` newest items that
/// hold its words, and ranked first where they stand in the name, title or description: a
/// phrase of common words that few items hold side by side may find fewer of those items
/// than hold it, the newest first.
pub fn search(conn: &Connection, query: &Query) -> Result<Vec<Hit>> {
    super::channel::fill_search(conn)?;
    let phrases = Phrases::of(conn, query.expression)?;
    let mut narrow = Vec::new();
    let mut broad = false;
    for part in &phrases.parts {
        if matches_at_least(conn, part, BROAD)? {
            broad = true;
        } else {
            narrow.push(part.as_str());
        }
    }
    let words = phrases.words();
    let rowids = if !broad {
        ranked(conn, query, &phrases, &words, None)?
    } else if !narrow.is_empty() {
        ranked(conn, query, &phrases, &all_of(&narrow), Some(&words))?
    } else {
        by_where_it_matches(conn, query, &phrases)?
    };
    hits(conn, query, &words, &rowids)
}

/// How many items match `expression` (one `match_expression` made), phrases checked: what a
/// search finds before it keeps the best. Reads every match once.
pub fn count(conn: &Connection, expression: &str) -> Result<usize> {
    super::channel::fill_search(conn)?;
    let phrases = Phrases::of(conn, expression)?;
    let mut stmt = conn.prepare_cached("SELECT rowid FROM search WHERE search MATCH ?1")?;
    let matches = stmt
        .query_map([phrases.words()], |row| row.get(0))?
        .collect::<rusqlite::Result<Vec<i64>>>()?;
    let mut count = 0;
    for rowid in matches {
        if phrases.holds(conn, rowid)? {
            count += 1;
        }
    }
    Ok(count)
}

/// A query as the index can answer it. The index keeps which columns hold a term, not where
/// (schema.sql, `detail = column`), and FTS5 refuses a phrase of more than one word from it:
/// such a phrase is asked for as its words, all of which an item must hold, and each item
/// found is checked for the phrase in its own text (`holds`), its words found by FTS5's own
/// tokenizer (`store::words`), so a phrase matches exactly where FTS5 would have matched it.
struct Phrases<'conn> {
    /// The expression's parts (`parts`), each phrase of several words written as an AND of
    /// them, the last one keeping the phrase's `*`.
    parts: Vec<String>,
    /// Each phrase of several words: its words, and whether the last is a prefix.
    phrases: Vec<(Vec<String>, bool)>,
    /// The tokenizer, once a part needed it.
    words: Option<Words<'conn>>,
}

impl<'conn> Phrases<'conn> {
    /// `expression`'s parts as the index answers them. A part of ASCII letters and digits is
    /// one word for the tokenizer; any other is split into words by the tokenizer itself.
    fn of(conn: &'conn Connection, expression: &str) -> Result<Self> {
        let mut phrases = Phrases {
            parts: Vec::new(),
            phrases: Vec::new(),
            words: None,
        };
        for part in parts(expression) {
            let star = part.ends_with('*');
            let inner = part
                .trim_end_matches('*')
                .strip_prefix('"')
                .and_then(|text| text.strip_suffix('"'))
                .filter(|inner| !inner.chars().all(|c| c.is_ascii_alphanumeric()));
            let Some(inner) = inner else {
                phrases.parts.push(part.to_string());
                continue;
            };
            let words = match &phrases.words {
                Some(words) => words,
                None => phrases.words.insert(Words::new(conn)?),
            };
            let words = words.of(inner, true)?;
            if words.len() < 2 {
                phrases.parts.push(part.to_string());
                continue;
            }
            let last = words.len() - 1;
            let quoted: Vec<String> = words
                .iter()
                .enumerate()
                .map(|(at, word)| quoted(word, star && at == last))
                .collect();
            phrases.parts.push(format!("({})", all_of(&quoted)));
            phrases.phrases.push((words, star));
        }
        Ok(phrases)
    }

    /// The expression the index is asked: every part's words.
    fn words(&self) -> String {
        all_of(&self.parts)
    }

    /// Whether the item `rowid` (a match of `words`) holds every phrase of the expression:
    /// each in one of its indexed columns, its words one after the other, as
    /// `search_source` shows the item's text to the index. True when there is none.
    fn holds(&self, conn: &Connection, rowid: i64) -> Result<bool> {
        let Some(words) = self.words.as_ref().filter(|_| !self.phrases.is_empty()) else {
            return Ok(true);
        };
        let columns: Option<[Option<String>; 4]> = conn
            .prepare_cached(
                "SELECT name, title, description, body FROM search_source WHERE key = ?1",
            )?
            .query_row([rowid], |row| {
                Ok([row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?])
            })
            .optional()?;
        let Some(columns) = columns else {
            return Ok(false);
        };
        let mut held = vec![false; self.phrases.len()];
        for text in columns.iter().flatten() {
            let mut reading: Vec<Reading> = self.phrases.iter().map(Reading::new).collect();
            words.each(text, false, |word| {
                for (at, reading) in reading.iter_mut().enumerate() {
                    held[at] |= reading.next(word);
                }
                !held.iter().all(|&held| held)
            })?;
        }
        Ok(held.iter().all(|&held| held))
    }
}

/// A phrase looked for in a column's words, read one at a time: which of its first words
/// the words read so far end with.
struct Reading<'a> {
    phrase: &'a [String],
    prefix: bool,
    /// `ends_with[k]`: the words read so far end with the phrase's first k + 1 words.
    ends_with: Vec<bool>,
}

impl<'a> Reading<'a> {
    fn new((phrase, prefix): &'a (Vec<String>, bool)) -> Reading<'a> {
        Reading {
            phrase,
            prefix: *prefix,
            ends_with: vec![false; phrase.len()],
        }
    }

    /// Reads the next word; whether the whole phrase now stands one word after the other,
    /// its last word only starting `word` when it is a prefix (FTS5's `"a b"*`).
    fn next(&mut self, word: &[u8]) -> bool {
        let last = self.phrase.len() - 1;
        for k in (0..self.phrase.len()).rev() {
            let wanted = self.phrase[k].as_bytes();
            let is = if self.prefix && k == last {
                word.starts_with(wanted)
            } else {
                word == wanted
            };
            self.ends_with[k] = is && (k == 0 || self.ends_with[k - 1]);
        }
        self.ends_with[last]
    }
}

/// An FTS5 expression that every one of `parts` matches. FTS5 reads parts side by side as
/// AND only when each is a string, not a group in parentheses, so the AND is written.
fn all_of(parts: &[impl AsRef<str>]) -> String {
    let parts: Vec<&str> = parts.iter().map(AsRef::as_ref).collect();
    parts.join(" AND ")
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
/// also match `filter` when there is one and hold the query's `phrases`. `ORDER BY rank` lets
/// FTS5 rank the matches itself (`rank MATCH` gives it the weights). The filter's matches are
/// read first, into a set: they are no more than `ranking`'s, and a `rowid IN` of them in
/// the same statement took ten times as long as the two apart when measured.
fn ranked(
    conn: &Connection,
    query: &Query,
    phrases: &Phrases,
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
    // With a filter or phrases, as many of the ranking's matches as it takes (-1: no limit).
    let ranked_limit = if allowed.is_some() || !phrases.phrases.is_empty() {
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
            && phrases.holds(conn, rowid)?
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
fn by_where_it_matches(conn: &Connection, query: &Query, phrases: &Phrases) -> Result<Vec<i64>> {
    let words = phrases.words();
    let head = format!("{HEAD_COLUMNS} : ({words})");
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
        let newest = newest_matches(conn, query, &words, kind, within.as_deref())?;
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
            let mut taken = 0;
            for &rowid in &newest {
                if taken == query.limit {
                    break;
                }
                if in_head.contains(&rowid) == head_first && phrases.holds(conn, rowid)? {
                    found.push((head_first, rowid));
                    taken += 1;
                }
            }
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
    words: &str,
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
        words,
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

/// The hits of `rowids`, in that order, each with its snippet of the query's `words` (a
/// phrase's words marked each): one lookup of its row, so a snippet is made for the hits
/// shown alone.
fn hits(conn: &Connection, query: &Query, words: &str, rowids: &[i64]) -> Result<Vec<Hit>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT kind, coalesce(uri, name), title, snippet(search, -1, ?3, ?4, '…', {SNIPPET_WORDS})
         FROM search WHERE search MATCH ?1 AND rowid = ?2"
    ))?;
    let mut hits = Vec::with_capacity(rowids.len());
    for &rowid in rowids {
        let params = rusqlite::params![words, rowid, query.marks.0, query.marks.1];
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
/// its arguments is not named, and grants nothing either. The index keeps no positions, so
/// the search is for the URI's words in any order; the check for the URI is what counts.
pub(crate) fn named_by_prompt_in(conn: &Connection, uri: &str, within: &[String]) -> Result<bool> {
    super::channel::fill_search(conn)?;
    let words = Words::new(conn)?.of(uri, true)?;
    // FTS5 finds no word in punctuation: a URI without one is named by no phrase.
    if words.is_empty() {
        return Ok(false);
    }
    let words: Vec<String> = words.iter().map(|word| quoted(word, false)).collect();
    let phrase = format!("body : ({})", all_of(&words));
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

    /// A library of the seed and these texts, each a resource `shelf://t/{n}`.
    fn library_of(texts: &[&str]) -> (tempfile::TempDir, super::super::Store) {
        use crate::model::{Annotations, Content, Origin, Resource, ResourceInfo};
        let folder = tempfile::tempdir().expect("a temporary folder");
        let store = super::super::Store::open(
            &folder.path().join("library.db"),
            super::super::Access::ReadWrite,
            crate::seed::load,
        )
        .expect("a library");
        store
            .write(|tx| {
                for (n, text) in texts.iter().enumerate() {
                    let resource = Resource {
                        info: ResourceInfo {
                            meta: Default::default(),
                            uri: format!("shelf://t/{n}"),
                            name: format!("t-{n}"),
                            title: None,
                            description: None,
                            mime_type: "text/plain".into(),
                            annotations: Annotations::default(),
                            icons: Vec::new(),
                            origin: Origin::default(),
                        },
                        content: Content::Text(text.to_string()),
                    };
                    super::super::write::put_resource(tx, &resource, 1)?;
                }
                Ok(())
            })
            .expect("write the texts");
        (folder, store)
    }

    /// The URIs of the resources `text` finds, in order.
    fn found(conn: &Connection, text: &str) -> Vec<String> {
        let expression = match_expression(text).expect("words");
        let query = Query {
            expression: &expression,
            kind: Some(Kind::Resource),
            collection: None,
            within: None,
            limit: 20,
            marks: ("[", "]"),
        };
        search(conn, &query)
            .expect("a search")
            .into_iter()
            .map(|hit| hit.key)
            .collect()
    }

    #[test]
    fn a_phrase_is_found_where_its_words_stand_in_its_order_only() {
        let (_folder, store) = library_of(&[
            "open the pull request for review",
            "review the request, then pull",
            "a request to pull nothing",
            // Devanagari: the tokenizer splits the word at its vowel signs, so even a word
            // typed alone is a phrase of several words to the index.
            "हिन्दी भाषा",
            // The same letters, in another order.
            "न ह दी",
        ]);
        let conn = store.conn().expect("a connection");
        assert_eq!(found(&conn, "\"pull request\""), ["shelf://t/0"]);
        assert_eq!(found(&conn, "\"request pull\""), Vec::<String>::new());
        assert_eq!(found(&conn, "pull request").len(), 3);
        assert_eq!(found(&conn, "\"the pull req\"*"), Vec::<String>::new());
        assert_eq!(found(&conn, "\"open the\" revi*"), ["shelf://t/0"]);
        assert_eq!(found(&conn, "हिन्दी"), ["shelf://t/3"]);
        assert_eq!(
            count(&conn, &match_expression("\"pull request\"").expect("words")).expect("count"),
            1
        );
        assert_eq!(
            count(&conn, &match_expression("pull request").expect("words")).expect("count"),
            3
        );
    }

    #[test]
    fn no_typed_text_fails_a_search_of_an_index_without_positions() {
        let (_folder, store) = library_of(&["some text", "and more near or not", "हिन्दी"]);
        let conn = store.conn().expect("a connection");
        let typed = "(\\PC|[\"*():^+-]| (AND|OR|NOT|NEAR) |हिन्दी){0,40}";
        proptest::test_runner::TestRunner::default()
            .run(&typed, |text| {
                if let Ok(expression) = match_expression(&text) {
                    let query = Query {
                        expression: &expression,
                        kind: None,
                        collection: None,
                        within: None,
                        limit: 5,
                        marks: ("[", "]"),
                    };
                    let searched = search(&conn, &query);
                    prop_assert!(searched.is_ok(), "{text:?} -> {expression:?}: {searched:?}");
                }
                Ok(())
            })
            .expect("every search answers");
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
