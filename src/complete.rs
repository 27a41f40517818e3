//! Ranking completion candidates against what a person has typed so far.
//!
//! Classes, best first: exact; prefix (case-sensitive before case-insensitive); prefix of a
//! word inside the value (after `-`, `_`, `/`, `.`, space or a lower-to-upper case change);
//! substring; in-order subsequence. Inside a class: higher weight, then shorter, then
//! alphabetical. An empty query matches everything, best weight first.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::collections::HashSet;

/// The most values one answer carries (the specification's cap).
pub const MAX_VALUES: usize = 100;

/// How well a value matches; lower is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum MatchClass {
    Exact,
    Prefix,
    PrefixIgnoringCase,
    WordPrefix,
    Substring,
    Subsequence,
}

/// The class of `value` for `query` (`query_lower` is `query` lower-cased), or None.
pub fn classify(value: &str, query: &str, query_lower: &str) -> Option<MatchClass> {
    if query.is_empty() || value == query {
        return Some(MatchClass::Exact);
    }
    if value.starts_with(query) {
        return Some(MatchClass::Prefix);
    }
    let value_lower = value.to_lowercase();
    if value_lower.starts_with(query_lower) {
        return Some(MatchClass::PrefixIgnoringCase);
    }
    if word_starts(value).any(|at| value[at..].to_lowercase().starts_with(query_lower)) {
        return Some(MatchClass::WordPrefix);
    }
    if value_lower.contains(query_lower) {
        return Some(MatchClass::Substring);
    }
    let mut wanted = query_lower.chars().peekable();
    for c in value_lower.chars() {
        if wanted.peek() == Some(&c) {
            wanted.next();
        }
    }
    wanted.peek().is_none().then_some(MatchClass::Subsequence)
}

/// Byte offsets where a word inside `value` starts (not 0: that is a plain prefix).
fn word_starts(value: &str) -> impl Iterator<Item = usize> + '_ {
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

/// The best `MAX_VALUES` matches of `query` among `candidates` (value, weight), and how many
/// distinct values matched in all. A value listed twice counts once, at its best weight.
pub fn rank<'a>(
    candidates: impl IntoIterator<Item = (&'a str, f64)>,
    query: &str,
) -> (Vec<String>, u64) {
    let query_lower = query.to_lowercase();
    let mut seen: HashSet<&str> = HashSet::new();
    let mut best: BinaryHeap<Ranked<'a>> = BinaryHeap::with_capacity(MAX_VALUES + 1);
    let mut duplicates: Vec<Ranked<'a>> = Vec::new();
    let mut total = 0u64;
    for (value, weight) in candidates {
        let Some(class) = classify(value, query, &query_lower) else {
            continue;
        };
        let ranked = Ranked {
            class,
            weight,
            value,
        };
        if !seen.insert(value) {
            duplicates.push(ranked);
            continue;
        }
        total += 1;
        best.push(ranked);
        if best.len() > MAX_VALUES {
            best.pop();
        }
    }
    let mut values: Vec<Ranked<'a>> = best.into_vec();
    // A repeated value (one per context) keeps its best weight.
    for duplicate in duplicates {
        if let Some(kept) = values.iter_mut().find(|kept| kept.value == duplicate.value)
            && duplicate.weight > kept.weight
        {
            kept.weight = duplicate.weight;
        }
    }
    values.sort();
    (
        values.into_iter().map(|r| r.value.to_string()).collect(),
        total,
    )
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
        let (values, total) = rank(candidates, "rust");
        assert_eq!(
            values,
            [
                "rust",
                "rustacean",
                "Rustic",
                "my-rust",
                "xrustx",
                "r-u-s-t"
            ]
        );
        assert_eq!(total, 6);
    }

    #[test]
    fn ties_break_by_weight_then_length_then_name() {
        let (values, _) = rank([("pb", 0.0), ("pa", 0.0), ("pzz", 5.0), ("p", 0.0)], "");
        assert_eq!(values, ["pzz", "p", "pa", "pb"]);
    }

    #[test]
    fn camel_case_starts_a_word() {
        assert_eq!(
            classify("getUserName", "user", "user"),
            Some(MatchClass::WordPrefix)
        );
    }
}
