//! An in-memory index over one completion table: the same answers as `rank` over the
//! table's values, without looking at every value for the classes that matter most.
//!
//! Rows are laid out group by group (group 0 holds the values without a context, then one
//! group per context `argument=value`), and inside a group best first by the within-class
//! order (higher weight, shorter, alphabetical), so a row's id is its rank in its group.
//! Per row: the folded value (see `fold`) in one byte arena, the original spelling in a
//! second arena only when it differs, and the characters it holds, as one bit per row in
//! a bitmap per character (`Columns`).
//! Per group: the rows sorted by folded value (and by original value when some differ); and,
//! for large groups, how many rows hold each character and each ordered pair of characters.
//!
//! Per row also the pairs of adjacent characters it holds, hashed onto 64 bits, as a second
//! set of bitmaps (`pairs`): a row can hold the query as a substring only if it holds every
//! adjacent pair of the query.
//! A query takes exact and prefix matches from the sorted orders (binary search for the
//! range, then its best ranks: selected from a short range, found by walking the group in
//! rank order for a long one, so a million rows are never sorted), scans the group for
//! word-prefix and substring matches only when those give fewer than `MAX_VALUES` (behind
//! the prefilter of rows holding every character and every adjacent pair of the query),
//! then for subsequence matches only while the answer still has room (behind the
//! characters alone), and counts `total` (every class implies a subsequence match) from the
//! character counts for one- and two-character queries, else when that last scan went to
//! the end.
//!
//! Memory for a million values: about 39 MiB when values are about 17 bytes and all lower
//! case (arena 17, row starts 4, character bitmaps 8, pair bitmaps 8, sorted order 4), about
//! 50 MiB for 12-byte values of mixed case (the originals and their order on top); a build
//! briefly needs about twice that.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::ops::Range;

use memchr::memmem;

mod encoded;

pub use encoded::Undecodable;

use super::{MAX_VALUES, MatchClass, Ranking, Values, fold, is_subsequence, is_word_prefix};

/// Characters with a mask bit of their own (a-z, 0-9 and the word separators); every other
/// character shares one of the remaining bits with others.
const EXACT_SYMBOLS: usize = 41;
const SHARED_SYMBOLS: u32 = 64 - EXACT_SYMBOLS as u32;

/// Groups smaller than this are counted by scanning: a scan of a thousand rows costs a few
/// microseconds, and the counts (7 KB) would outweigh small groups.
const COUNTED_GROUP: usize = 1024;

/// How many rows a walk in rank order may look at, per row with the prefix, before it gives
/// way to selecting from the sorted range (see `best_with_prefix`).
const WALK_PER_MATCH: usize = 8;

/// How many rows of a group, per row with the prefix, a bitmap of the group may cost before
/// selecting from the sorted range is cheaper (a bit to clear and read against a compare
/// and a move; see `best_with_prefix`).
const BITMAP_PER_MATCH: usize = 64;

/// The mask bit of a folded character, and whether the bit is the character's alone.
fn symbol(c: char) -> (u32, bool) {
    match c {
        'a'..='z' => (c as u32 - 'a' as u32, true),
        '0'..='9' => (26 + c as u32 - '0' as u32, true),
        '-' => (36, true),
        '_' => (37, true),
        '.' => (38, true),
        '/' => (39, true),
        ' ' => (40, true),
        _ => (EXACT_SYMBOLS as u32 + c as u32 % SHARED_SYMBOLS, false),
    }
}

/// Every character of `folded` has its bit set: a value whose mask lacks one of the query's
/// bits cannot match it.
fn mask_of(folded: &str) -> u64 {
    folded.chars().fold(0, |mask, c| mask | 1 << symbol(c).0)
}

/// Every pair of adjacent characters of `folded` has its bit set (several pairs share a
/// bit): a value whose pair mask lacks one of the query's bits does not hold the query as a
/// substring.
fn pair_mask_of(folded: &str) -> u64 {
    let mut mask = 0;
    let mut chars = folded.chars();
    let Some(mut before) = chars.next() else {
        return 0;
    };
    for c in chars {
        // Fibonacci hashing of the two code points: the top 6 bits of the product.
        let pair = (u64::from(before) << 32 | u64::from(c)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        mask |= 1 << (pair >> 58);
        before = c;
    }
    mask
}

/// Why a table was not indexed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TooLarge {
    /// More than the index's 32-bit positions can hold.
    #[error(
        "completion table is too large to index (over 4 GiB of values or 4 billion rows); split it"
    )]
    Positions,
    /// The index would take more memory than its builder may give it (`IndexBuilder::within`).
    #[error("its index would take more than {0} bytes of memory")]
    Memory(usize),
}

/// Bytes a finished index holds for each row at least, whatever its values: its start in
/// the folded arena and its place in the folded order (4 bytes each), and its bit in each
/// of the 64 character bitmaps and the 64 pair bitmaps (8 bytes each). With the values'
/// text (in the folded arena, or in the originals' where the folded form differs) and its
/// contexts, a lower bound of `TableIndex::heap_bytes` that a builder can check as rows come
/// in.
const ROW_BYTES_AT_LEAST: usize = 24;

/// What one context `argument=value` is charged: its text and its entry in the map.
fn context_bytes(argument: &str, value: &str) -> usize {
    argument.len() + value.len() + 64
}

/// One row as it is read from the store; its value is `text[start..]` up to the next row's
/// start (rows are pushed in order, so no end is kept: 16 bytes a row while building).
struct Pending {
    start: u32,
    group: u32,
    weight: f64,
}

/// Collects a table's rows (in any order) and builds its `TableIndex`.
pub(crate) struct IndexBuilder {
    text: String,
    rows: Vec<Pending>,
    /// Context `(argument, value)` -> group; group 0 is "no context".
    contexts: HashMap<(String, String), u32>,
    /// What `contexts` is charged, as `TableIndex::heap_bytes` charges the index's.
    context_bytes: usize,
    /// The most the finished index may take (`TableIndex::heap_bytes`). A row is refused as
    /// soon as the index is sure to pass it (`ROW_BYTES_AT_LEAST`), so what a builder
    /// holds stays under the limit however large the table; a finished index over it is
    /// refused too.
    max_bytes: usize,
}

impl IndexBuilder {
    /// A builder of an index that takes at most `max_bytes`.
    pub(crate) fn within(max_bytes: usize) -> IndexBuilder {
        IndexBuilder {
            text: String::new(),
            rows: Vec::new(),
            contexts: HashMap::new(),
            context_bytes: 0,
            max_bytes,
        }
    }

    /// Adds one row; `context` None means the value is always offered.
    pub(crate) fn push(
        &mut self,
        value: &str,
        weight: f64,
        context: Option<(&str, &str)>,
    ) -> Result<(), TooLarge> {
        let group = match context {
            None => 0,
            Some((name, wanted)) => {
                let next =
                    u32::try_from(self.contexts.len() + 1).map_err(|_| TooLarge::Positions)?;
                let key = (name.to_string(), wanted.to_string());
                match self.contexts.entry(key) {
                    Entry::Occupied(known) => *known.get(),
                    Entry::Vacant(new) => {
                        self.context_bytes += context_bytes(name, wanted);
                        *new.insert(next)
                    }
                }
            }
        };
        let start = u32::try_from(self.text.len()).map_err(|_| TooLarge::Positions)?;
        self.text.push_str(value);
        // Where this value ends (the next row's start) must fit too.
        if u32::try_from(self.text.len()).is_err() {
            return Err(TooLarge::Positions);
        }
        self.rows.push(Pending {
            start,
            group,
            weight,
        });
        let at_least = self.text.len() + ROW_BYTES_AT_LEAST * self.rows.len() + self.context_bytes;
        if at_least > self.max_bytes {
            return Err(TooLarge::Memory(self.max_bytes));
        }
        Ok(())
    }

    pub(crate) fn finish(self) -> Result<TableIndex, TooLarge> {
        let IndexBuilder {
            text,
            rows: pending,
            contexts,
            max_bytes,
            ..
        } = self;
        let count = u32::try_from(pending.len()).map_err(|_| TooLarge::Positions)?;
        let value = |at: u32| {
            let end = pending
                .get(at as usize + 1)
                .map_or(text.len(), |next| next.start as usize);
            &text[pending[at as usize].start as usize..end]
        };
        // The rows in alphabetical order of their values. The store reads them in this
        // order (its key starts with the value), which the sort confirms in one pass; the
        // rank order, the shared values and the sorted orders below all follow from it
        // without comparing texts again.
        let mut alphabetical: Vec<u32> = (0..count).collect();
        sort_by_text(&mut alphabetical, |at| value(at).as_bytes());
        let mut place = vec![0u32; pending.len()];
        for (position, &at) in (0u32..).zip(&alphabetical) {
            place[at as usize] = position;
        }
        // Best first inside a class: higher weight, then shorter, then alphabetical.
        let mut keys: Vec<RankKey> = (0..count)
            .map(|at| RankKey::of(at, &pending[at as usize], value(at), place[at as usize]))
            .collect();
        keys.sort_unstable_by(|a, b| a.group.cmp(&b.group).then_with(|| a.better(b)));
        let order: Vec<u32> = keys.iter().map(|key| key.row).collect();

        let group_count = contexts.len() + 1;
        // Across groups (when several are active) rows compare by their rank in the table.
        let ranks = if group_count > 1 {
            let mut by_rank: Vec<(RankKey, u32)> = keys.into_iter().zip(0u32..).collect();
            by_rank.sort_unstable_by(|(a, _), (b, _)| a.better(b));
            let mut ranks = vec![0u32; by_rank.len()];
            for (rank, (_, row)) in (0u32..).zip(&by_rank) {
                ranks[*row as usize] = rank;
            }
            ranks
        } else {
            drop(keys);
            Vec::new()
        };
        // The groups lie one after another in rank order: group g is bounds[g]..bounds[g + 1].
        let mut bounds = vec![0u32; group_count + 1];
        for row in &pending {
            bounds[row.group as usize + 1] += 1;
        }
        for group in 0..group_count {
            bounds[group + 1] += bounds[group];
        }
        // Each row's id in the index, its position in rank order (in `place`'s memory).
        let mut position = place;
        for (row, &at) in (0u32..).zip(&order) {
            position[at as usize] = row;
        }
        // A value in several groups is one run of equal values in alphabetical order.
        let mut shared = Vec::new();
        if group_count > 1 {
            for run in alphabetical.chunk_by(|&a, &b| value(a) == value(b)) {
                if run.len() > 1 {
                    shared.extend(run.iter().map(|&at| position[at as usize]));
                }
            }
            shared.sort_unstable();
        }
        // Each group's rows in alphabetical order, at the group's own positions: the
        // alphabetical order dealt out to the groups.
        let mut by_original = vec![0u32; position.len()];
        let mut next = bounds[..group_count].to_vec();
        for &at in &alphabetical {
            let slot = &mut next[pending[at as usize].group as usize];
            by_original[*slot as usize] = position[at as usize];
            *slot += 1;
        }
        drop(alphabetical);
        drop(position);

        let mut folded = String::with_capacity(text.len());
        let mut starts = Vec::with_capacity(order.len() + 1);
        let mut columns = Columns::new(order.len());
        let mut pairs = Columns::new(order.len());
        let mut originals = Originals {
            text: String::new(),
            starts: Vec::with_capacity(order.len() + 1),
        };
        starts.push(0);
        originals.starts.push(0);
        for &at in &order {
            let original = value(at);
            let before = folded.len();
            if original.is_ascii() {
                // What `fold` gives for ASCII, a byte at a time rather than a char at a time.
                folded.push_str(original);
                folded[before..].make_ascii_lowercase();
            } else {
                folded.extend(original.chars().flat_map(char::to_lowercase));
            }
            let this = &folded[before..];
            columns.set(starts.len() - 1, mask_of(this));
            pairs.set(starts.len() - 1, pair_mask_of(this));
            if this != original {
                originals.text.push_str(original);
            }
            starts.push(u32::try_from(folded.len()).map_err(|_| TooLarge::Positions)?);
            originals
                .starts
                .push(u32::try_from(originals.text.len()).map_err(|_| TooLarge::Positions)?);
        }
        drop(order);
        drop(pending);
        drop(text);
        // Growth by doubling may have left up to half of these unused.
        folded.shrink_to_fit();
        originals.text.shrink_to_fit();

        let mut index = TableIndex {
            folded,
            starts,
            originals: (!originals.text.is_empty()).then_some(originals),
            columns,
            pairs,
            ranks,
            by_folded: Vec::new(),
            by_original: None,
            groups: Vec::with_capacity(group_count),
            contexts: contexts
                .into_iter()
                .map(|(key, group)| (key, group as usize))
                .collect(),
            shared,
        };
        for group in 0..group_count {
            index.groups.push(Group {
                rows: bounds[group] as usize..bounds[group + 1] as usize,
                counts: None,
            });
        }
        // When every value is its own folded form, the alphabetical order is the folded one.
        if index.originals.is_some() {
            index.by_folded = index.sorted_by_folded();
            index.by_original = Some(by_original);
        } else {
            index.by_folded = by_original;
        }
        for group in 0..group_count {
            if index.groups[group].rows.len() >= COUNTED_GROUP {
                index.groups[group].counts = Some(index.count_symbols(group));
            }
        }
        if index.heap_bytes() > max_bytes {
            return Err(TooLarge::Memory(max_bytes));
        }
        Ok(index)
    }
}

/// A row as the index's rank order sorts it: its group, its weight as an integer that
/// orders as `f64::total_cmp` does, its length and its place in alphabetical order, so that
/// the sort compares integers only. Sorting a million rows by comparing rows read through
/// their indexes took most of the build of a table's index (callgrind, 100,000 values: 398 M
/// of 845 M instructions in the sort, most of them fetching the rows compared), and breaking
/// ties on the text itself still cost 2.3 G of 6.7 G on a million values
/// (docs/benchmarks.md, `completion`).
struct RankKey {
    group: u32,
    len: u32,
    weight: i64,
    /// The row's place in the alphabetical order of the table's values.
    place: u32,
    row: u32,
}

impl RankKey {
    fn of(row: u32, pending: &Pending, value: &str, place: u32) -> RankKey {
        let bits = pending.weight.to_bits() as i64;
        RankKey {
            group: pending.group,
            // The bit pattern of `total_cmp`: negative values' other bits flipped.
            weight: bits ^ (((bits >> 63) as u64) >> 1) as i64,
            len: u32::try_from(value.len()).unwrap_or(u32::MAX),
            place,
            row,
        }
    }

    /// Higher weight, then shorter, then alphabetical.
    fn better(&self, other: &RankKey) -> std::cmp::Ordering {
        other
            .weight
            .cmp(&self.weight)
            .then_with(|| self.len.cmp(&other.len))
            .then_with(|| self.place.cmp(&other.place))
    }
}

/// The first eight bytes of `text`, big-endian and zero-padded: two texts' heads compare as
/// their first eight bytes do, and equal heads leave the rest to compare.
fn head_of(text: &[u8]) -> u64 {
    let mut head = [0u8; 8];
    let len = text.len().min(8);
    head[..len].copy_from_slice(&text[..len]);
    u64::from_be_bytes(head)
}

/// Sorts `rows` by their text, comparing the first eight bytes of each (kept beside the row)
/// before reading the whole text: a million rows' texts are otherwise fetched at random for
/// every comparison.
fn sort_by_text<'t>(rows: &mut [u32], text: impl Fn(u32) -> &'t [u8]) {
    let mut keyed: Vec<(u64, u32)> = rows.iter().map(|&row| (head_of(text(row)), row)).collect();
    keyed.sort_unstable_by(|(head_a, a), (head_b, b)| {
        head_a.cmp(head_b).then_with(|| text(*a).cmp(text(*b)))
    });
    for (slot, (_, row)) in rows.iter_mut().zip(keyed) {
        *slot = row;
    }
}

/// Original spellings of the rows whose folded form differs; row `r` is
/// `text[starts[r]..starts[r + 1]]`, empty when it is the same as the folded form.
struct Originals {
    text: String,
    starts: Vec<u32>,
}

/// The rows with one context (or none), `rows` in the table's row ids.
struct Group {
    rows: Range<usize>,
    /// For large groups: how many of the rows (leaving out shared ones) match each one- and
    /// two-character query made of characters with their own mask bit.
    counts: Option<Box<SymbolCounts>>,
}

struct SymbolCounts {
    /// Rows holding the character.
    single: [u32; EXACT_SYMBOLS],
    /// `pair[x * EXACT_SYMBOLS + y]`: rows holding `x` and, after it, `y`.
    pair: Vec<u32>,
}

impl SymbolCounts {
    /// The count for a one- or two-character query, if the counts can tell.
    fn get(&self, query: &str) -> Option<u64> {
        let mut chars = query.chars().map(symbol);
        let first = match chars.next()? {
            (bit, true) => bit as usize,
            _ => return None,
        };
        match chars.next() {
            None => Some(u64::from(self.single[first])),
            Some((second, true)) if chars.next().is_none() => Some(u64::from(
                self.pair[first * EXACT_SYMBOLS + second as usize],
            )),
            _ => None,
        }
    }
}

/// The index of one table at one version. Built by `IndexBuilder`; queried by `complete`.
pub struct TableIndex {
    /// Folded values back to back: row `r` is `folded[starts[r]..starts[r + 1]]`.
    folded: String,
    starts: Vec<u32>,
    originals: Option<Originals>,
    columns: Columns,
    /// The pairs of adjacent characters each row holds (`pair_mask_of`), for the substring
    /// classes: 8 bytes a row, which let a five-character fuzzy query over a million values
    /// look at a few hundred rows instead of every row holding its characters
    /// (docs/benchmarks.md, `completion`).
    pairs: Columns,
    /// Each row's rank in the whole table; empty when there is only one group.
    ranks: Vec<u32>,
    /// Each group's rows sorted by folded value, at the group's own positions (the same
    /// positions as its row ids).
    by_folded: Vec<u32>,
    /// The same by original value; None when every original is its folded form (then
    /// `by_folded` is that order too).
    by_original: Option<Vec<u32>>,
    groups: Vec<Group>,
    contexts: HashMap<(String, String), usize>,
    /// Rows whose value also appears in another group, ascending. They are counted apart,
    /// so that a value offered twice is counted once.
    shared: Vec<u32>,
}

/// Walks a group's shared rows (ascending) alongside a scan of the group in row order.
struct SharedCursor<'a> {
    rows: &'a [u32],
    next: usize,
}

impl SharedCursor<'_> {
    /// Whether `row` is shared; rows must be asked about in ascending order.
    fn holds(&mut self, row: usize) -> bool {
        while self
            .rows
            .get(self.next)
            .is_some_and(|&s| (s as usize) < row)
        {
            self.next += 1;
        }
        self.rows.get(self.next) == Some(&(row as u32))
    }
}

/// What one group gives a query.
struct Found {
    /// Best first, at most `MAX_VALUES`.
    picks: Vec<Pick>,
    /// How many of the group's rows that no other group shares match, when known.
    unshared: Option<u64>,
    /// Whether rows match beyond `picks`.
    more: bool,
}

/// What a scan of one group gives: its lower-class picks, the count of its unshared
/// matching rows if it saw them all, and whether matches were left out.
struct Scan {
    picks: Vec<Pick>,
    unshared: Option<u64>,
    more: bool,
}

/// Which rows hold each mask bit's characters: one bitmap over all rows per bit, row `r` at
/// bit `r % 64` of word `r / 64`. A query reads only the bitmaps of its own characters, 64
/// rows a word: a fuzzy query of five characters over a million values reads 625 KB, where
/// a 64-bit mask per row made it read 8 MB and test every row (13.1 M instructions for
/// `abr12` then; docs/benchmarks.md, `completion`). The same memory as a mask per row.
struct Columns {
    /// Words per bitmap: the rows, rounded up to a multiple of 64.
    words: usize,
    /// The 64 bitmaps back to back.
    bits: Vec<u64>,
}

impl Columns {
    fn new(rows: usize) -> Columns {
        let words = rows.div_ceil(64);
        Columns {
            words,
            bits: vec![0; 64 * words],
        }
    }

    /// Marks `row` as holding the characters of `mask`.
    fn set(&mut self, row: usize, mask: u64) {
        for bit in bits(mask) {
            self.bits[bit * self.words + row / 64] |= 1 << (row % 64);
        }
    }

    /// The bitmap of one mask bit.
    fn column(&self, bit: usize) -> &[u64] {
        &self.bits[bit * self.words..(bit + 1) * self.words]
    }

    /// Whether `row` holds every character of `wanted`.
    fn holds(&self, row: usize, wanted: u64) -> bool {
        bits(wanted).all(|bit| self.column(bit)[row / 64] >> (row % 64) & 1 == 1)
    }
}

/// The rows of a run that hold every character of a query (every bit of `wanted`), in
/// order: the AND of the query's bitmaps, a word of 64 rows at a time.
struct Holding<'a> {
    /// The bitmaps of the wanted bits.
    columns: Vec<&'a [u64]>,
    rows: Range<usize>,
    /// The word of rows in `bits`, and its rows not yet given.
    word: usize,
    bits: u64,
}

impl<'a> Holding<'a> {
    /// The rows holding every bit of `wanted` in each of its (columns, bits) sets.
    fn new(rows: Range<usize>, wanted: &[(&'a Columns, u64)]) -> Holding<'a> {
        let mut holding = Holding {
            columns: wanted
                .iter()
                .flat_map(|&(columns, mask)| bits(mask).map(|bit| columns.column(bit)))
                .collect(),
            word: rows.start / 64,
            rows,
            bits: 0,
        };
        holding.bits = holding.word_bits(holding.word);
        holding
    }

    /// The rows of word `word` that are in the run and hold every wanted bit.
    fn word_bits(&self, word: usize) -> u64 {
        let mut bits = self.columns.iter().fold(!0u64, |bits, column| {
            bits & column.get(word).copied().unwrap_or(0)
        });
        let first = word * 64;
        if first < self.rows.start {
            bits &= !0 << (self.rows.start - first);
        }
        if let Some(past) = self.rows.end.checked_sub(first).filter(|&past| past < 64) {
            bits &= (1 << past) - 1;
        }
        bits
    }
}

impl Iterator for Holding<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        while self.bits == 0 {
            self.word += 1;
            if self.word * 64 >= self.rows.end {
                return None;
            }
            self.bits = self.word_bits(self.word);
        }
        let bit = self.bits.trailing_zeros() as usize;
        self.bits &= self.bits - 1;
        Some(self.word * 64 + bit)
    }
}

/// A row picked for an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Pick {
    class: MatchClass,
    rank: u32,
    row: u32,
}

/// A query, prepared once.
struct Query<'q> {
    raw: &'q str,
    folded: String,
    mask: u64,
    /// `pair_mask_of(folded)`.
    pairs: u64,
    /// Whether the folded query is ASCII.
    ascii: bool,
}

impl Query<'_> {
    fn new(raw: &str) -> Query<'_> {
        let folded = fold(raw);
        Query {
            raw,
            mask: mask_of(&folded),
            pairs: pair_mask_of(&folded),
            ascii: folded.is_ascii(),
            folded,
        }
    }

    /// Whether the folded query is a subsequence of `folded`, the hot check of every scan.
    /// For an ASCII query, one search per query byte: a byte-at-a-time loop would wait on
    /// the previous byte's comparison before it could load the next wanted byte.
    fn is_subsequence_of(&self, folded: &[u8]) -> bool {
        if !self.ascii {
            // A row's bytes are always whole characters; this check is only for the type.
            return std::str::from_utf8(folded)
                .is_ok_and(|folded| is_subsequence(folded, &self.folded));
        }
        let mut rest = folded;
        for byte in self.folded.as_bytes() {
            match rest.iter().position(|b| b == byte) {
                Some(at) => rest = &rest[at + 1..],
                None => return false,
            }
        }
        true
    }
}

impl TableIndex {
    /// How many rows the index holds (a value with several contexts counts each time).
    pub(crate) fn rows(&self) -> usize {
        self.starts.len() - 1
    }

    /// The best `MAX_VALUES` values for `query` among those offered in `context` (values
    /// without a context, and those whose context argument has the wanted value): the same
    /// values as `rank` over those values. How many match in all is given when the index
    /// knows it without a pass over every row: for any query on a group of fewer than
    /// `COUNTED_GROUP` rows, for one- and two-character queries (from the character
    /// counts), and whenever the pass that ranks went to the end anyway. A longer query on
    /// a large table is answered without it (`has_more` still says whether more match):
    /// that count was most of the cost of such a query, and the specification makes
    /// `total` optional.
    pub fn complete(&self, query: &str, context: &HashMap<String, String>) -> Ranking {
        let active = self.active_groups(context);
        let query = Query::new(query);
        let mut picks = Vec::with_capacity(MAX_VALUES * active.len());
        let mut total = Some(0);
        let mut more = false;
        for &group in &active {
            let found = self.search(group, &query);
            if picks.is_empty() {
                picks = found.picks;
            } else {
                picks.extend(found.picks);
            }
            total = total
                .zip(found.unshared)
                .map(|(sum, unshared)| sum + unshared);
            more |= found.more;
        }
        let total = total.map(|sum| sum + self.count_shared(&active, &query));
        if active.len() > 1 {
            // Each group's best are in `picks`; merged, a value offered by several groups
            // stays once, at its best rank.
            picks.sort_unstable();
            let mut seen = HashSet::new();
            picks.retain(|pick| seen.insert(self.original(pick.row)));
        }
        more |= picks.len() > MAX_VALUES;
        picks.truncate(MAX_VALUES);
        // Sized for values of about 16 bytes, which identifiers and names mostly are.
        let mut values = Values::with_capacity(picks.len(), 16 * picks.len());
        for pick in &picks {
            values.push(self.original(pick.row));
        }
        Ranking {
            values,
            total,
            has_more: more,
        }
    }

    /// Group 0 and the groups of the context's `argument=value` pairs, ascending.
    fn active_groups(&self, context: &HashMap<String, String>) -> Vec<usize> {
        let mut active = vec![0];
        for (name, value) in context {
            if let Some(&group) = self.contexts.get(&(name.clone(), value.clone())) {
                active.push(group);
            }
        }
        active.sort_unstable();
        active.dedup();
        active
    }

    /// The index's heap memory in bytes: what it is charged against the kept indexes'
    /// limit (`handlers::completion::indexes`), and what the log line that reports it says.
    pub(crate) fn heap_bytes(&self) -> usize {
        let originals = self
            .originals
            .as_ref()
            .map_or(0, |o| o.text.capacity() + 4 * o.starts.capacity());
        let counts = self
            .groups
            .iter()
            .filter_map(|group| group.counts.as_ref())
            .map(|counts| std::mem::size_of_val(&counts.single) + 4 * counts.pair.capacity())
            .sum::<usize>();
        let contexts: usize = self
            .contexts
            .keys()
            .map(|(name, value)| context_bytes(name, value))
            .sum();
        self.folded.capacity()
            + 4 * self.starts.capacity()
            + originals
            + 8 * self.columns.bits.capacity()
            + 8 * self.pairs.bits.capacity()
            + 4 * self.ranks.capacity()
            + 4 * self.by_folded.capacity()
            + self
                .by_original
                .as_ref()
                .map_or(0, |rows| 4 * rows.capacity())
            + std::mem::size_of::<Group>() * self.groups.capacity()
            + counts
            + contexts
            + 4 * self.shared.capacity()
    }

    fn folded(&self, row: usize) -> &str {
        &self.folded[self.starts[row] as usize..self.starts[row + 1] as usize]
    }

    /// `folded(row)` as bytes: what comparisons and searches need, without the character
    /// boundary checks of slicing a `str`.
    fn folded_bytes(&self, row: usize) -> &[u8] {
        &self.folded.as_bytes()[self.starts[row] as usize..self.starts[row + 1] as usize]
    }

    fn original_bytes(&self, row: u32) -> &[u8] {
        let row = row as usize;
        match &self.originals {
            Some(originals) if originals.starts[row] != originals.starts[row + 1] => &originals
                .text
                .as_bytes()[originals.starts[row] as usize..originals.starts[row + 1] as usize],
            _ => self.folded_bytes(row),
        }
    }

    fn original(&self, row: u32) -> &str {
        let row = row as usize;
        match &self.originals {
            Some(originals) if originals.starts[row] != originals.starts[row + 1] => {
                &originals.text[originals.starts[row] as usize..originals.starts[row + 1] as usize]
            }
            _ => self.folded(row),
        }
    }

    fn rank(&self, row: u32) -> u32 {
        self.ranks.get(row as usize).copied().unwrap_or(row)
    }

    fn pick(&self, class: MatchClass, row: u32) -> Pick {
        Pick {
            class,
            rank: self.rank(row),
            row,
        }
    }

    fn group_shared(&self, group: &Group) -> &[u32] {
        let from = self
            .shared
            .partition_point(|&row| (row as usize) < group.rows.start);
        let to = self
            .shared
            .partition_point(|&row| (row as usize) < group.rows.end);
        &self.shared[from..to]
    }

    /// One group's best picks for `query`, how many of its unshared rows match (when known)
    /// and whether more rows match than are picked.
    fn search(&self, group: usize, query: &Query) -> Found {
        let Some(group) = self.groups.get(group) else {
            return Found {
                picks: Vec::new(),
                unshared: Some(0),
                more: false,
            };
        };
        if query.raw.is_empty() {
            let top = group
                .rows
                .clone()
                .take(MAX_VALUES)
                .map(|row| self.pick(MatchClass::Exact, row as u32))
                .collect();
            return Found {
                picks: top,
                unshared: Some((group.rows.len() - self.group_shared(group).len()) as u64),
                more: group.rows.len() > MAX_VALUES,
            };
        }
        let mut picks = Vec::with_capacity(MAX_VALUES + 1);
        // Exact and case-sensitive prefix: the original order (one more, for the exact row).
        let by_original = self.by_original.as_ref().unwrap_or(&self.by_folded);
        let original = |row| self.original_bytes(row);
        let (best, exact, _) = self.best_with_prefix(
            by_original,
            group,
            query.raw.as_bytes(),
            original,
            MAX_VALUES + 1,
        );
        if let Some(row) = exact {
            picks.push(self.pick(MatchClass::Exact, row));
        }
        for row in best.into_iter().filter(|&row| Some(row) != exact) {
            if picks.len() == MAX_VALUES {
                break;
            }
            picks.push(self.pick(MatchClass::Prefix, row));
        }
        // Case-insensitive prefix: the folded order, leaving out what is already picked
        // (fewer than MAX_VALUES rows, or this is not reached), so MAX_VALUES rows suffice.
        // Its range holds every prefix match, the case-sensitive ones too.
        let folded = |row: u32| self.folded_bytes(row as usize);
        let prefixed = if picks.len() < MAX_VALUES {
            let (best, _, prefixed) = self.best_with_prefix(
                &self.by_folded,
                group,
                query.folded.as_bytes(),
                folded,
                MAX_VALUES,
            );
            for row in best {
                if picks.len() == MAX_VALUES {
                    break;
                }
                if !self.original_bytes(row).starts_with(query.raw.as_bytes()) {
                    picks.push(self.pick(MatchClass::PrefixIgnoringCase, row));
                }
            }
            prefixed
        } else {
            self.prefix_range(&self.by_folded, group, query.folded.as_bytes(), folded)
                .len()
        };
        let counted = group.counts.as_ref().and_then(|c| c.get(&query.folded));
        let prefix_more = prefixed > picks.len();
        let need = MAX_VALUES - picks.len();
        if need == 0 && prefix_more && group.counts.is_some() {
            return Found {
                picks,
                unshared: counted,
                more: true,
            };
        }
        let scan = self.scan(group, query, need, prefix_more);
        picks.extend(scan.picks);
        Found {
            picks,
            unshared: counted.or(scan.unshared),
            more: scan.more,
        }
    }

    /// The best `need` word-prefix, substring and subsequence matches of a group (prefix
    /// matches are picked from the sorted orders), each class in rank order, in two passes
    /// in rank order. The first looks at the rows that can hold the query as a substring
    /// (every character and every adjacent pair of it), for the two substring classes; the
    /// second at the rows holding every character, for the subsequence class, and only
    /// while the answer has room or whether more match is not yet known. Each stops once
    /// nothing later can be picked and more matches than are picked are known
    /// (`prefix_more`: prefix matches were left out), except that the second counts to the
    /// end on a group too small for character counts. How many rows match is known when the
    /// second went to the end.
    fn scan(&self, group: &Group, query: &Query, need: usize, prefix_more: bool) -> Scan {
        let count_all = group.counts.is_none();
        let finder = memmem::Finder::new(query.folded.as_bytes());
        let is_prefix = |folded: &[u8]| folded.starts_with(query.folded.as_bytes());
        // Matches that are not prefix matches, found so far: more are known to match than
        // an answer holds once this passes `need`.
        let mut lower = 0usize;
        let known_more = |lower: usize| prefix_more || lower > need;

        let mut word = Vec::new();
        let mut substring = Vec::new();
        let mut filled = false;
        let holding_substring = Holding::new(
            group.rows.clone(),
            &[(&self.columns, query.mask), (&self.pairs, query.pairs)],
        );
        for row in holding_substring {
            if word.len() >= need && known_more(lower) {
                filled = true;
                break;
            }
            let folded = self.folded_bytes(row);
            if is_prefix(folded) || finder.find(folded).is_none() {
                continue;
            }
            lower += 1;
            let row = row as u32;
            if is_word_prefix(self.original(row), &query.folded) {
                word.push(self.pick(MatchClass::WordPrefix, row));
            } else if substring.len() < need {
                substring.push(self.pick(MatchClass::Substring, row));
            }
        }

        let mut subsequence = Vec::new();
        let mut matched = 0u64;
        let mut counted_all = false;
        if !filled || count_all {
            let mut shared = SharedCursor {
                rows: self.group_shared(group),
                next: 0,
            };
            let better = word.len() + substring.len();
            let mut holding = Holding::new(group.rows.clone(), &[(&self.columns, query.mask)]);
            counted_all = loop {
                if !count_all && better + subsequence.len() >= need && known_more(lower) {
                    break false;
                }
                let Some(row) = holding.next() else {
                    break true;
                };
                // Every class implies a subsequence match, and this check is the cheapest.
                let folded = self.folded_bytes(row);
                if !query.is_subsequence_of(folded) {
                    continue;
                }
                if !shared.holds(row) {
                    matched += 1;
                }
                // Prefix and substring matches were picked before.
                if is_prefix(folded) || finder.find(folded).is_some() {
                    continue;
                }
                lower += 1;
                if subsequence.len() < need {
                    subsequence.push(self.pick(MatchClass::Subsequence, row as u32));
                }
            };
        }
        word.extend(substring);
        word.extend(subsequence);
        word.truncate(need);
        Scan {
            picks: word,
            unshared: counted_all.then_some(matched),
            more: known_more(lower),
        }
    }

    /// How many distinct values among the active groups' shared rows match.
    fn count_shared(&self, active: &[usize], query: &Query) -> u64 {
        let mut seen = HashSet::new();
        for group in active.iter().filter_map(|&group| self.groups.get(group)) {
            for &row in self.group_shared(group) {
                let matches = query.raw.is_empty()
                    || (self.columns.holds(row as usize, query.mask)
                        && query.is_subsequence_of(self.folded_bytes(row as usize)));
                if matches {
                    seen.insert(self.original(row));
                }
            }
        }
        seen.len() as u64
    }

    /// Every group's rows sorted by folded value, each group at its own positions.
    fn sorted_by_folded(&self) -> Vec<u32> {
        let mut rows: Vec<u32> = (0..self.rows() as u32).collect();
        for group in &self.groups {
            sort_by_text(&mut rows[group.rows.clone()], |row| {
                self.folded_bytes(row as usize)
            });
        }
        rows
    }

    /// The rows of `group` whose `key` starts with `prefix`, in `sorted` order (the group's
    /// rows sorted by `key`).
    fn prefix_range<'a, 's>(
        &'a self,
        sorted: &'s [u32],
        group: &Group,
        prefix: &[u8],
        key: impl Fn(u32) -> &'a [u8],
    ) -> &'s [u32] {
        let Some(sorted) = sorted.get(group.rows.clone()) else {
            return &[];
        };
        let start = sorted.partition_point(|&row| key(row) < prefix);
        let len = sorted[start..].partition_point(|&row| key(row).starts_with(prefix));
        &sorted[start..start + len]
    }

    /// The `count` best-ranked rows of `group` whose `key` starts with `prefix`, best first,
    /// the row whose key is `prefix` itself, and how many rows have the prefix. `sorted` is
    /// the group's rows sorted by `key`.
    ///
    /// A short range is copied and the best selected from it, or, when the group is at most
    /// `BITMAP_PER_MATCH` times the range, marked in a bitmap of the group read in rank
    /// order (no comparisons at all). A long one is found faster by walking the group in
    /// rank order and keeping rows with the prefix: about `count * group / range` steps when
    /// the range's ranks are spread out. If its ranks bunch at the bottom, the walk gives up
    /// after `WALK_PER_MATCH` steps per row of the range and selects instead, so a query
    /// never costs more than a few passes over the range.
    fn best_with_prefix<'a>(
        &'a self,
        sorted: &[u32],
        group: &Group,
        prefix: &[u8],
        key: impl Fn(u32) -> &'a [u8],
        count: usize,
    ) -> (Vec<u32>, Option<u32>, usize) {
        let range = self.prefix_range(sorted, group, prefix, &key);
        let len = range.len();
        // The smallest key with the prefix is the prefix itself, if any row has it.
        let exact = range.first().filter(|&&row| key(row) == prefix).copied();
        let walk = (len as u64).pow(2) >= (group.rows.len() as u64) * (count as u64);
        if len > count && walk {
            let mut best = Vec::with_capacity(count);
            for row in group.rows.clone().take(len * WALK_PER_MATCH) {
                let row = row as u32;
                if key(row).starts_with(prefix) {
                    best.push(row);
                    if best.len() == count {
                        return (best, exact, len);
                    }
                }
            }
        }
        if len > count && group.rows.len() <= len * BITMAP_PER_MATCH {
            return (best_by_bitmap(range, group.rows.clone(), count), exact, len);
        }
        let mut best = range.to_vec();
        if best.len() > count {
            best.select_nth_unstable(count);
            best.truncate(count);
        }
        best.sort_unstable();
        (best, exact, len)
    }

    fn count_symbols(&self, group: usize) -> Box<SymbolCounts> {
        let mut counts = Box::new(SymbolCounts {
            single: [0; EXACT_SYMBOLS],
            pair: vec![0; EXACT_SYMBOLS * EXACT_SYMBOLS],
        });
        let Some(group) = self.groups.get(group) else {
            return counts;
        };
        let shared = self.group_shared(group);
        // For each character, the characters found after its first occurrence.
        let mut after = [0u64; EXACT_SYMBOLS];
        for row in group.rows.clone() {
            if shared.binary_search(&(row as u32)).is_ok() {
                continue;
            }
            let mut later = 0u64;
            let mut present = 0u64;
            for c in self.folded(row).chars().rev() {
                if let (bit, true) = symbol(c) {
                    after[bit as usize] = later;
                    present |= 1 << bit;
                    later |= 1 << bit;
                }
            }
            for first in bits(present) {
                counts.single[first] += 1;
                for second in bits(after[first]) {
                    counts.pair[first * EXACT_SYMBOLS + second] += 1;
                }
            }
        }
        counts
    }
}

/// The `count` lowest of `rows` (row ids inside `group`), lowest first: each marked in a
/// bitmap of the group, which is then read in order.
fn best_by_bitmap(rows: &[u32], group: Range<usize>, count: usize) -> Vec<u32> {
    let mut marked = vec![0u64; group.len().div_ceil(64)];
    for &row in rows {
        let at = (row as usize).wrapping_sub(group.start);
        if let Some(word) = marked.get_mut(at / 64) {
            *word |= 1 << (at % 64);
        }
    }
    let mut best = Vec::with_capacity(count);
    for (word_at, &word) in marked.iter().enumerate() {
        for bit in bits(word) {
            if best.len() == count {
                return best;
            }
            best.push((group.start + word_at * 64 + bit) as u32);
        }
    }
    best
}

/// The positions of the set bits of `mask`.
fn bits(mut mask: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (mask != 0).then(|| {
            let bit = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            bit
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::complete::rank;

    /// A small deterministic generator (splitmix64), so failures reproduce.
    struct Random(u64);

    impl Random {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }

        fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
            items[self.below(items.len())]
        }
    }

    /// Pieces values are made of: separators, case changes and non-ASCII folding included.
    const PIECES: [&str; 16] = [
        "ka", "Ru", "st", "py", "-", "_", ".", "/", " ", "Go", "é", "ÉT", "Σa", "x1", "9", "on",
    ];

    fn random_value(random: &mut Random) -> String {
        (0..1 + random.below(5))
            .map(|_| random.pick(&PIECES))
            .collect()
    }

    type Row = (String, f64, Option<(String, String)>);

    fn build(rows: &[Row]) -> TableIndex {
        build_within(rows, usize::MAX).expect("an index without a limit")
    }

    fn build_within(rows: &[Row], max_bytes: usize) -> Result<TableIndex, TooLarge> {
        let mut builder = IndexBuilder::within(max_bytes);
        for (value, weight, context) in rows {
            let context = context.as_ref().map(|(n, v)| (n.as_str(), v.as_str()));
            builder.push(value, *weight, context)?;
        }
        builder.finish()
    }

    /// What `rank` answers over the rows offered in `context`.
    fn expected(rows: &[Row], query: &str, context: &HashMap<String, String>) -> Ranking {
        let offered = rows.iter().filter(|(_, _, wanted)| match wanted {
            None => true,
            Some((name, value)) => context.get(name) == Some(value),
        });
        rank(offered.map(|(v, w, _)| (v.as_str(), *w)), query)
    }

    /// Whether the index's answer is `rank`'s: the same values and `has_more`, and the same
    /// total unless the index left it out, which it may only do when more match than fill
    /// an answer.
    fn agrees(index: &TableIndex, rows: &[Row], query: &str, context: &HashMap<String, String>) {
        let answer = index.complete(query, context);
        let wanted = expected(rows, query, context);
        let what = format!("{} rows, query {query:?}, context {context:?}", rows.len());
        assert_eq!(answer.values, wanted.values, "{what}");
        assert_eq!(answer.has_more, wanted.has_more, "{what}");
        match answer.total {
            Some(_) => assert_eq!(answer.total, wanted.total, "{what}"),
            None => assert!(wanted.has_more, "{what}: no total, yet all values given"),
        }
    }

    fn random_rows(random: &mut Random, count: usize, contexts: usize) -> Vec<Row> {
        let mut rows: Vec<Row> = Vec::new();
        let mut seen = HashSet::new();
        while rows.len() < count {
            let value = random_value(random);
            let context = match random.below(contexts + 1) {
                0 => None,
                n => Some(("language".to_string(), format!("l{n}"))),
            };
            // The store holds a value once per context.
            if seen.insert((value.clone(), context.clone())) {
                // Negative weights too: the index sorts weights by their bits.
                let weight = random.below(5) as f64 - 2.0;
                rows.push((value, weight, context));
            }
        }
        rows
    }

    fn queries(random: &mut Random) -> Vec<String> {
        let mut queries: Vec<String> = ["", "k", "ka", "K", "s", "st", "é", "É", "σ", "x19", "-"]
            .iter()
            .map(|q| q.to_string())
            .collect();
        for _ in 0..20 {
            let value = random_value(random);
            let chars: Vec<char> = value.chars().collect();
            let from = random.below(chars.len());
            let to = from + 1 + random.below(chars.len() - from);
            queries.push(chars[from..to].iter().collect());
        }
        // Fuzzy queries: characters of a value (or of two) in order, some left out, so that
        // some match only as subsequences.
        for _ in 0..20 {
            let value = random_value(random) + &random_value(random);
            let mut query: String = value.chars().filter(|_| random.below(2) == 0).collect();
            if query.is_empty() {
                query = value.chars().take(1).collect();
            }
            queries.push(query);
        }
        queries
    }

    #[test]
    fn answers_like_rank_on_random_tables() {
        let mut random = Random(7);
        for (count, contexts) in [(40, 0), (300, 2), (2500, 0), (4000, 2)] {
            let rows = random_rows(&mut random, count, contexts);
            let index = build(&rows);
            assert_eq!(index.rows(), count);
            let mut situations = vec![HashMap::new()];
            for n in 1..=contexts {
                situations.push(HashMap::from([("language".to_string(), format!("l{n}"))]));
            }
            // Several context arguments at once, one unknown.
            situations.push(HashMap::from([
                ("language".to_string(), "l1".to_string()),
                ("framework".to_string(), "l2".to_string()),
            ]));
            for query in queries(&mut random) {
                for context in &situations {
                    agrees(&index, &rows, &query, context);
                }
            }
        }
    }

    /// Tables whose values are all their own folded form (the index then keeps no second
    /// spelling, and its alphabetical order is its folded order), pushed in the store's
    /// order (sorted by value) and shuffled.
    #[test]
    fn answers_like_rank_on_tables_without_capitals_in_any_order() {
        let mut random = Random(13);
        for (count, contexts) in [(300, 2), (3000, 0), (3000, 3)] {
            let mut rows: Vec<Row> = random_rows(&mut random, count, contexts)
                .into_iter()
                .map(|(value, weight, context)| (fold(&value), weight, context))
                .collect();
            let mut seen = HashSet::new();
            rows.retain(|(value, _, context)| seen.insert((value.clone(), context.clone())));
            rows.sort_by(|a, b| (&a.0, &a.2).cmp(&(&b.0, &b.2)));
            let mut shuffled = rows.clone();
            for at in (1..shuffled.len()).rev() {
                shuffled.swap(at, random.below(at + 1));
            }
            let mut situations = vec![HashMap::new()];
            for n in 1..=contexts {
                situations.push(HashMap::from([("language".to_string(), format!("l{n}"))]));
            }
            for pushed in [&rows, &shuffled] {
                let index = build(pushed);
                assert!(index.originals.is_none(), "every value is its folded form");
                for query in queries(&mut random) {
                    for context in &situations {
                        agrees(&index, &rows, &query, context);
                    }
                }
            }
        }
    }

    #[test]
    fn a_value_in_several_active_groups_counts_once_at_its_best_weight() {
        let row = |value: &str, weight: f64, context: Option<&str>| -> Row {
            (
                value.to_string(),
                weight,
                context.map(|c| ("language".to_string(), c.to_string())),
            )
        };
        let mut rows = vec![
            row("pytest", 1.0, None),
            row("pytest", 9.0, Some("python")),
            row("pyright", 5.0, Some("python")),
        ];
        rows.extend((0..200).map(|i| row(&format!("py{i:03}"), 3.0, None)));
        let index = build(&rows);
        let python = HashMap::from([("language".to_string(), "python".to_string())]);
        let answer = index.complete("py", &python);
        let values: Vec<&str> = answer.values.iter().collect();
        assert_eq!(values[..2], ["pytest", "pyright"]);
        assert_eq!(answer.total, Some(202));
        // Without the context, pytest has only its own weight and ranks after the rest.
        let answer = index.complete("py", &HashMap::new());
        let values: Vec<&str> = answer.values.iter().collect();
        assert_eq!(values[0], "py000");
        assert!(!values.contains(&"pytest"));
        assert_eq!(answer.total, Some(201));
    }

    #[test]
    fn counts_answer_short_queries_on_large_groups() {
        let mut random = Random(11);
        let rows = random_rows(&mut random, 5000, 0);
        let index = build(&rows);
        let counts = index.groups[0].counts.as_ref().expect("a counted group");
        for query in ["k", "ka", "aa", "9", "-x", "s ", "x1"] {
            let scanned = rows
                .iter()
                .filter(|(v, _, _)| is_subsequence(&fold(v), query))
                .count() as u64;
            assert_eq!(counts.get(query), Some(scanned), "{query:?}");
        }
        // Characters without a bit of their own, and longer queries, are scanned.
        assert_eq!(counts.get("é"), None);
        assert_eq!(counts.get("kas"), None);
    }

    #[test]
    fn long_queries_on_large_groups_leave_out_the_total_only_when_more_match() {
        // 3,000 rows, so the group has character counts; none of them count three letters.
        let rows: Vec<Row> = (0..3000)
            .map(|i| {
                (
                    format!("{}-item-{i}", ["alpha", "beta", "gamma"][i % 3]),
                    1.0,
                    None,
                )
            })
            .collect();
        let index = build(&rows);
        let context = HashMap::new();
        // A thousand prefix matches: the answer is full before any pass over the rows.
        let many = index.complete("alp", &context);
        assert_eq!(
            (many.values.len(), many.total, many.has_more),
            (100, None, true)
        );
        // Three thousand word-prefix matches ("item"): the pass stops once the answer is
        // full and one more match is seen.
        let words = index.complete("ite", &context);
        assert_eq!(
            (words.values.len(), words.total, words.has_more),
            (100, None, true)
        );
        // Few matches: the pass goes to the end, so the total is known.
        let few = index.complete("a-item-299", &context);
        assert_eq!(few.total, Some(few.values.len() as u64));
        assert!(!few.has_more && !few.values.is_empty());
        // And one- or two-letter queries are counted.
        assert_eq!(index.complete("it", &context).total, Some(3000));
        for query in ["alp", "ite", "a-item-299", "it", "m-i"] {
            agrees(&index, &rows, query, &context);
        }
    }

    #[test]
    fn long_prefix_ranges_at_the_worst_ranks_are_still_complete() {
        // 1,000 rows with the prefix, all ranked below 8,000 others: the walk in rank order
        // gives up and the range is selected from instead.
        let mut rows: Vec<Row> = (0..8000).map(|i| (format!("a{i}"), 1.0, None)).collect();
        rows.extend((0..1000).map(|i| (format!("z{i}"), 0.0, None)));
        let index = build(&rows);
        for query in ["z", "Z", "a", "z9"] {
            agrees(&index, &rows, query, &HashMap::new());
        }
    }

    /// What a builder checks as rows come in is a lower bound of what the index takes,
    /// whether the values have other spellings or not, with or without contexts.
    #[test]
    fn rows_take_at_least_their_text_and_fixed_bytes_each() {
        let mut random = Random(29);
        for (count, contexts) in [(1, 0), (64, 0), (65, 2), (2000, 0), (2000, 3)] {
            let mixed = random_rows(&mut random, count, contexts);
            let folded: Vec<Row> = mixed
                .iter()
                .map(|(value, weight, context)| (fold(value), *weight, context.clone()))
                .collect();
            for rows in [&mixed, &folded] {
                let text: usize = rows.iter().map(|(value, _, _)| value.len()).sum();
                let contexts: HashSet<&(String, String)> = rows
                    .iter()
                    .filter_map(|(_, _, context)| context.as_ref())
                    .collect();
                let context_text: usize = contexts
                    .iter()
                    .map(|(argument, value)| context_bytes(argument, value))
                    .sum();
                let at_least = text + ROW_BYTES_AT_LEAST * rows.len() + context_text;
                let taken = build(rows).heap_bytes();
                assert!(
                    taken >= at_least,
                    "{count} rows: the index takes {taken} bytes, fewer than the {at_least} a builder counts"
                );
            }
        }
    }

    #[test]
    fn a_table_over_the_limit_is_refused_and_one_within_it_is_built() {
        let mut random = Random(31);
        let rows = random_rows(&mut random, 3000, 2);
        let taken = build(&rows).heap_bytes();
        // Exactly enough is enough.
        let index = build_within(&rows, taken).expect("an index within its limit");
        assert_eq!(index.heap_bytes(), taken);
        // One byte less is refused: by the finished index's size, or (far below it) while
        // the rows come in.
        for limit in [taken - 1, taken / 4, 0] {
            assert_eq!(
                build_within(&rows, limit).err(),
                Some(TooLarge::Memory(limit)),
                "a limit of {limit} bytes for an index of {taken}"
            );
        }
    }

    #[test]
    fn an_encoded_index_decodes_to_one_that_answers_the_same() {
        let mut random = Random(37);
        for (count, contexts) in [(0, 0), (1, 0), (40, 0), (300, 2), (2500, 0), (4000, 3)] {
            let rows = random_rows(&mut random, count, contexts);
            let index = build(&rows);
            let bytes = index.encode();
            let decoded = TableIndex::decode(&bytes[..], usize::MAX).expect("decodes");
            assert_eq!(decoded.rows(), count);
            assert_eq!(
                decoded.encode(),
                bytes,
                "{count} rows encode alike after a decode"
            );
            let mut situations = vec![HashMap::new()];
            for n in 1..=contexts {
                situations.push(HashMap::from([("language".to_string(), format!("l{n}"))]));
            }
            for query in queries(&mut random) {
                for context in &situations {
                    agrees(&decoded, &rows, &query, context);
                }
            }
            // A decode is held to its limit as a build is.
            let taken = decoded.heap_bytes();
            assert!(TableIndex::decode(&bytes[..], taken).is_ok());
            assert!(matches!(
                TableIndex::decode(&bytes[..], taken - 1),
                Err(Undecodable::TooLarge(TooLarge::Memory(_)))
            ));
        }
    }

    /// Stored bytes come from a file anyone could have changed: cut short, bytes changed,
    /// they are refused with a reason, or decode to an index that answers without panicking.
    #[test]
    fn damaged_bytes_are_refused_or_answer_without_panicking() {
        let mut random = Random(41);
        let rows = random_rows(&mut random, 150, 2);
        let bytes = build(&rows).encode();
        let context = HashMap::from([("language".to_string(), "l1".to_string())]);
        for len in 0..bytes.len() {
            assert!(
                TableIndex::decode(&bytes[..len], usize::MAX).is_err(),
                "{len} of {} bytes decoded",
                bytes.len()
            );
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(matches!(
            TableIndex::decode(&longer[..], usize::MAX),
            Err(Undecodable::Damaged("bytes after its end"))
        ));
        let mut decoded = 0;
        for at in 0..bytes.len() {
            for flip in [0x01u8, 0x80] {
                let mut damaged = bytes.clone();
                damaged[at] ^= flip;
                if let Ok(index) = TableIndex::decode(&damaged[..], 1 << 24) {
                    decoded += 1;
                    for query in ["", "k", "ka", "st", "é", "x19", "kRu"] {
                        index.complete(query, &HashMap::new());
                        index.complete(query, &context);
                    }
                }
            }
        }
        // Changed bitmaps, counts and weights' order still decode: some of them did.
        assert!(decoded > 0);
        let mut foreign = bytes.clone();
        foreign[7] = 2;
        assert!(matches!(
            TableIndex::decode(&foreign[..], usize::MAX),
            Err(Undecodable::Foreign)
        ));
    }

    #[test]
    fn an_empty_table_answers_nothing() {
        let index = build(&[]);
        let nothing = Ranking {
            total: Some(0),
            ..Ranking::default()
        };
        assert_eq!(index.complete("", &HashMap::new()), nothing);
        assert_eq!(index.complete("a", &HashMap::new()), nothing);
    }
}
