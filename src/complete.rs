//! Ranking completion candidates against what a person has typed so far.
//!
//! Classes, best first: exact; prefix (case-sensitive before case-insensitive); prefix of a
//! word inside the value (after `-`, `_`, `/`, `.`, space or a lower-to-upper case change);
//! substring; in-order subsequence. Inside a class: higher weight, then shorter, then
//! alphabetical. An empty query matches everything, best weight first.
//!
//! `rank` ranks a short list (an enum's values, the values a template variable takes in the
//! stored URIs); completion tables go through `index`, which gives the same answers without
//! looking at every value, and which the library stores beside each table in `index`'s
//! encoding (`store::write::store_index`); the serving process keeps one index per table
//! (`handlers::completion::indexes`). Nothing here reads the store.

mod index;

pub(crate) use index::IndexBuilder;
pub use index::TooLarge;
pub use index::{TableIndex, Undecodable};

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::collections::HashMap;

/// The most values one answer carries (the specification's cap).
pub const MAX_VALUES: usize = 100;

/// How well a value matches; lower is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum MatchClass {
    Exact,
    Prefix,
    PrefixIgnoringCase,
    WordPrefix,
    Substring,
    Subsequence,
}

/// `text` lower-cased one character at a time. Unlike `str::to_lowercase` this ignores the
/// surrounding text (Greek final sigma), so the folded form of a prefix, suffix or substring
/// of a value is a prefix, suffix or substring of the value's folded form: that is what lets
/// the index compare byte ranges of one folded copy, and what makes every match class imply
/// that the folded query is a subsequence of the folded value.
pub(crate) fn fold(text: &str) -> String {
    text.chars().flat_map(char::to_lowercase).collect()
}

/// Whether `fold(text)` starts with `folded`, without building `fold(text)`.
pub(crate) fn folded_starts_with(text: &str, folded: &str) -> bool {
    let mut wanted = folded.chars();
    for c in text.chars().flat_map(char::to_lowercase) {
        match wanted.next() {
            None => return true,
            Some(w) if w == c => {}
            Some(_) => return false,
        }
    }
    wanted.next().is_none()
}

/// Whether a word inside `value` (not its start) begins with `query_folded`.
pub(crate) fn is_word_prefix(value: &str, query_folded: &str) -> bool {
    word_starts(value).any(|at| folded_starts_with(&value[at..], query_folded))
}

/// Whether the characters of `needle` appear in `haystack` in order (both folded).
pub(crate) fn is_subsequence(haystack: &str, needle: &str) -> bool {
    if needle.is_ascii() {
        // An ASCII byte is never part of a multi-byte character, so bytes suffice (and the
        // index's scans run this for every candidate).
        let needle = needle.as_bytes();
        let mut found = 0;
        for &byte in haystack.as_bytes() {
            if needle.get(found) == Some(&byte) {
                found += 1;
            }
        }
        return found == needle.len();
    }
    let mut wanted = needle.chars().peekable();
    for c in haystack.chars() {
        if wanted.peek() == Some(&c) {
            wanted.next();
        }
    }
    wanted.peek().is_none()
}

/// The class of `value` for `query` (`query_folded` is `fold(query)`), or None.
pub(crate) fn classify(value: &str, query: &str, query_folded: &str) -> Option<MatchClass> {
    if query.is_empty() || value == query {
        return Some(MatchClass::Exact);
    }
    if value.starts_with(query) {
        return Some(MatchClass::Prefix);
    }
    let value_folded = fold(value);
    if value_folded.starts_with(query_folded) {
        return Some(MatchClass::PrefixIgnoringCase);
    }
    if value_folded.contains(query_folded) {
        // A word start is inside the value, so a word prefix is also a substring.
        return Some(if is_word_prefix(value, query_folded) {
            MatchClass::WordPrefix
        } else {
            MatchClass::Substring
        });
    }
    is_subsequence(&value_folded, query_folded).then_some(MatchClass::Subsequence)
}

/// Byte offsets where a word inside `value` starts (not 0: that is a plain prefix).
pub(crate) fn word_starts(value: &str) -> impl Iterator<Item = usize> + '_ {
    let mut previous: Option<char> = None;
    value.char_indices().filter_map(move |(at, c)| {
        let starts = match previous {
            Some('-' | '_' | '/' | '.' | ' ') => !matches!(c, '-' | '_' | '/' | '.' | ' '),
            Some(p) => p.is_lowercase() && c.is_uppercase(),
            None => false,
        };
        previous = Some(c);
        starts.then_some(at)
    })
}

/// One match, ordered best first.
#[derive(Debug)]
struct Ranked<'a> {
    class: MatchClass,
    weight: f64,
    value: &'a str,
}

impl Ord for Ranked<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.class
            .cmp(&other.class)
            .then_with(|| other.weight.total_cmp(&self.weight))
            .then_with(|| self.value.len().cmp(&other.value.len()))
            .then_with(|| self.value.cmp(other.value))
    }
}

impl PartialOrd for Ranked<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Ranked<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Ranked<'_> {}

/// Completion values back to back in one buffer: the hundred short strings of an answer
/// are two allocations rather than a hundred.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Values {
    text: String,
    /// Where each value ends in `text`.
    ends: Vec<usize>,
}

impl Values {
    /// Room for `count` values of `bytes` in all.
    pub(crate) fn with_capacity(count: usize, bytes: usize) -> Values {
        Values {
            text: String::with_capacity(bytes),
            ends: Vec::with_capacity(count),
        }
    }

    pub(crate) fn push(&mut self, value: &str) {
        self.text.push_str(value);
        self.ends.push(self.text.len());
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Every value back to back.
    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    pub(crate) fn iter(&self) -> impl ExactSizeIterator<Item = &str> {
        self.ends.iter().enumerate().map(|(index, &end)| {
            let start = index.checked_sub(1).map_or(0, |before| self.ends[before]);
            &self.text[start..end]
        })
    }
}

impl<'a> FromIterator<&'a str> for Values {
    fn from_iter<I: IntoIterator<Item = &'a str>>(values: I) -> Values {
        let mut list = Values::default();
        for value in values {
            list.push(value);
        }
        list
    }
}

/// A ranked answer: the best values, best first; how many values match in all, when that
/// is known (a list is always counted; see `TableIndex::complete` for tables); and whether
/// more match than are given.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Ranking {
    pub values: Values,
    pub total: Option<u64>,
    pub has_more: bool,
}

/// The best `MAX_VALUES` matches of `query` among `candidates` (value, weight), and how many
/// distinct values matched in all. A value listed twice counts once, at its best weight.
pub(crate) fn rank<'a>(
    candidates: impl IntoIterator<Item = (&'a str, f64)>,
    query: &str,
) -> Ranking {
    let query_folded = fold(query);
    // Merge repeats first, so a repeat's better weight counts even when its first listing
    // would have been ranked out.
    let mut weights: HashMap<&'a str, f64> = HashMap::new();
    for (value, weight) in candidates {
        weights
            .entry(value)
            .and_modify(|best| *best = best.max(weight))
            .or_insert(weight);
    }
    let mut best: BinaryHeap<Ranked<'a>> = BinaryHeap::with_capacity(MAX_VALUES + 1);
    let mut total = 0u64;
    for (value, weight) in weights {
        let Some(class) = classify(value, query, &query_folded) else {
            continue;
        };
        total += 1;
        best.push(Ranked {
            class,
            weight,
            value,
        });
        if best.len() > MAX_VALUES {
            best.pop();
        }
    }
    let values: Values = best
        .into_sorted_vec()
        .into_iter()
        .map(|r| r.value)
        .collect();
    Ranking {
        has_more: total > values.len() as u64,
        values,
        total: Some(total),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_rank_in_order() {
        let candidates = [
            ("xrustx", 0.0),
            ("r-u-s-t", 0.0),
            ("my-rust", 0.0),
            ("Rustic", 0.0),
            ("rustacean", 0.0),
            ("rust", 0.0),
        ];
        let Ranking { values, total, .. } = rank(candidates, "rust");
        assert_eq!(
            values.iter().collect::<Vec<_>>(),
            [
                "rust",
                "rustacean",
                "Rustic",
                "my-rust",
                "xrustx",
                "r-u-s-t"
            ]
        );
        assert_eq!(total, Some(6));
    }

    #[test]
    fn values_come_back_as_they_went_in() {
        let values: Values = ["", "a", "", "bc"].into_iter().collect();
        assert_eq!(values.len(), 4);
        assert_eq!(values.iter().collect::<Vec<_>>(), ["", "a", "", "bc"]);
        assert!(Values::default().is_empty());
    }

    #[test]
    fn ties_break_by_weight_then_length_then_name() {
        let Ranking { values, .. } = rank([("pb", 0.0), ("pa", 0.0), ("pzz", 5.0), ("p", 0.0)], "");
        assert_eq!(values.iter().collect::<Vec<_>>(), ["pzz", "p", "pa", "pb"]);
    }

    #[test]
    fn a_repeat_counts_once_at_its_best_weight() {
        let mut candidates: Vec<(String, f64)> =
            (0..150).map(|i| (format!("v{i:03}"), 10.0)).collect();
        // Listed first with the lowest weight, then again with the highest.
        candidates.insert(0, ("v999".to_string(), 0.0));
        candidates.push(("v999".to_string(), 99.0));
        let ranking = rank(candidates.iter().map(|(v, w)| (v.as_str(), *w)), "v");
        let values: Vec<&str> = ranking.values.iter().collect();
        assert_eq!(values[0], "v999");
        assert_eq!(values.len(), MAX_VALUES);
        assert_eq!((ranking.total, ranking.has_more), (Some(151), true));
    }

    #[test]
    fn folding_ignores_context() {
        // `to_lowercase` would end the first word with a final sigma.
        assert_eq!(fold("ΟΔΟΣ ΟΔΟΣ"), "οδοσ οδοσ");
        assert!(folded_starts_with("ΟΔΟΣ", "οδο"));
        assert!(!folded_starts_with("ΟΔ", "οδο"));
        assert!(is_subsequence("οδοσ", "οσ") && !is_subsequence("οδοσ", "σο"));
    }

    #[test]
    fn camel_case_starts_a_word() {
        assert_eq!(
            classify("getUserName", "user", "user"),
            Some(MatchClass::WordPrefix)
        );
    }
}
