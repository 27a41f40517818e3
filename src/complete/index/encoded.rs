//! A `TableIndex` as bytes: what the library stores beside a completion table (written by
//! the command that changed its values, in the same transaction), so that a server loads a
//! table's index instead of building it. Building a million values' index takes about a
//! second; reading it back takes tens of milliseconds (docs/benchmarks.md, `large`).
//!
//! The layout is the index's own arrays, little-endian, each behind its element count, in
//! field order, after a magic number that names the layout's version. Decoding reads from any
//! `Read` (an SQLite blob handle, a piece at a time, so the bytes are never held twice),
//! refuses arrays that would take more than the caller allows before reading them, and
//! checks everything the queries index with (offsets, row ids, group bounds), so that a
//! damaged or foreign blob is refused with a reason rather than answered from or panicked
//! on.

use std::collections::HashMap;
use std::io::{self, Read};

use super::{
    Columns, EXACT_SYMBOLS, Group, Originals, SymbolCounts, TableIndex, TooLarge, context_bytes,
};

/// The first eight bytes of every encoded index: "psix", then the layout's version. A
/// change to `TableIndex`'s arrays changes the version, and indexes of another version are
/// refused (then built again by the server, and stored anew by the next write).
const MAGIC: [u8; 8] = *b"psix\0\0\0\x01";

/// Bytes read from the input at a time while decoding an array.
const CHUNK: usize = 64 * 1024;

/// Why stored bytes are not an index this build can use.
#[derive(Debug, thiserror::Error)]
pub enum Undecodable {
    #[error("cannot read it: {0}")]
    Read(#[from] io::Error),
    #[error("it is not an index of this version of promptshelf")]
    Foreign,
    #[error("it is damaged: {0}")]
    Damaged(&'static str),
    #[error(transparent)]
    TooLarge(#[from] TooLarge),
}

impl TableIndex {
    /// The index as bytes, for `decode`.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Encoder(Vec::with_capacity(self.heap_bytes() + 1024));
        out.0.extend_from_slice(&MAGIC);
        out.bytes(self.folded.as_bytes());
        out.u32s(&self.starts);
        let (original_text, original_starts) = match &self.originals {
            Some(originals) => (originals.text.as_bytes(), &originals.starts[..]),
            None => (&[][..], &[][..]),
        };
        out.bytes(original_text);
        out.u32s(original_starts);
        out.u64s(&self.columns.bits);
        out.u64s(&self.pairs.bits);
        out.u32s(&self.ranks);
        out.u32s(&self.by_folded);
        out.u32s(self.by_original.as_deref().unwrap_or_default());
        out.count(self.groups.len());
        for group in &self.groups {
            out.count(group.rows.start);
            out.count(group.rows.end);
            match &group.counts {
                Some(counts) => {
                    out.u32s(&counts.single);
                    out.u32s(&counts.pair);
                }
                None => {
                    out.u32s(&[]);
                    out.u32s(&[]);
                }
            }
        }
        // In group order, so that the same index always encodes to the same bytes.
        let mut contexts: Vec<(&(String, String), &usize)> = self.contexts.iter().collect();
        contexts.sort_unstable_by_key(|(_, group)| **group);
        out.count(contexts.len());
        for ((name, value), group) in contexts {
            out.bytes(name.as_bytes());
            out.bytes(value.as_bytes());
            out.count(*group);
        }
        out.u32s(&self.shared);
        out.0
    }

    /// The index `encode` wrote into `input`, if it takes at most `max_bytes`
    /// (`heap_bytes`) and holds together; nothing larger is allocated on its behalf.
    pub fn decode(input: impl Read, max_bytes: usize) -> Result<TableIndex, Undecodable> {
        let mut input = Decoder {
            input,
            left: max_bytes,
            max_bytes,
        };
        let mut magic = [0u8; 8];
        input.input.read_exact(&mut magic)?;
        if magic != MAGIC {
            return Err(Undecodable::Foreign);
        }
        let folded = input.text()?;
        let starts = input.u32s()?;
        let original_text = input.text()?;
        let original_starts = input.u32s()?;
        let columns = input.u64s()?;
        let pairs = input.u64s()?;
        let ranks = input.u32s()?;
        let by_folded = input.u32s()?;
        let by_original = input.u32s()?;
        let group_count = input.count(std::mem::size_of::<Group>())?;
        let mut groups = Vec::with_capacity(group_count);
        for _ in 0..group_count {
            let start = input.count(0)?;
            let end = input.count(0)?;
            let single = input.u32s()?;
            let pair = input.u32s()?;
            let counts = match (single.len(), pair.len()) {
                (0, 0) => None,
                (EXACT_SYMBOLS, pairs) if pairs == EXACT_SYMBOLS * EXACT_SYMBOLS => {
                    let mut counts = Box::new(SymbolCounts {
                        single: [0; EXACT_SYMBOLS],
                        pair,
                    });
                    counts.single.copy_from_slice(&single);
                    Some(counts)
                }
                _ => return Err(Undecodable::Damaged("a group's counts")),
            };
            groups.push(Group {
                rows: start..end,
                counts,
            });
        }
        let context_count = input.count(0)?;
        let mut contexts = HashMap::new();
        for _ in 0..context_count {
            let name = input.text()?;
            let value = input.text()?;
            let group = input.count(0)?;
            // Its text is charged already.
            input.charge(context_bytes(&name, &value) - name.len() - value.len())?;
            contexts.insert((name, value), group);
        }
        let shared = input.u32s()?;
        if input.input.read(&mut [0u8; 1])? != 0 {
            return Err(Undecodable::Damaged("bytes after its end"));
        }

        let rows = starts
            .len()
            .checked_sub(1)
            .ok_or(Undecodable::Damaged("no rows"))?;
        let words = rows.div_ceil(64);
        let index = TableIndex {
            folded,
            starts,
            originals: (!original_text.is_empty()).then_some(Originals {
                text: original_text,
                starts: original_starts,
            }),
            columns: Columns {
                words,
                bits: columns,
            },
            pairs: Columns { words, bits: pairs },
            ranks,
            by_folded,
            by_original: (!by_original.is_empty()).then_some(by_original),
            groups,
            contexts,
            shared,
        };
        index.check(rows)?;
        if index.heap_bytes() > max_bytes {
            return Err(TooLarge::Memory(max_bytes).into());
        }
        Ok(index)
    }

    /// Whether a decoded index of `rows` rows holds together, as far as a query reads it:
    /// every offset within its text and on a character boundary, every row id below `rows`
    /// and inside its group, the groups covering the rows in order, each context naming a
    /// group.
    fn check(&self, rows: usize) -> Result<(), Undecodable> {
        let damaged = |what| Err(Undecodable::Damaged(what));
        if !offsets_fit(&self.starts, &self.folded) {
            return damaged("the values' offsets");
        }
        if let Some(originals) = &self.originals
            && (originals.starts.len() != rows + 1
                || !offsets_fit(&originals.starts, &originals.text))
        {
            return damaged("the original spellings' offsets");
        }
        let bitmap_words = 64 * rows.div_ceil(64);
        if self.columns.bits.len() != bitmap_words || self.pairs.bits.len() != bitmap_words {
            return damaged("the bitmaps' size");
        }
        let expected_ranks = if self.groups.len() > 1 { rows } else { 0 };
        if self.ranks.len() != expected_ranks || self.ranks.iter().any(|&r| r as usize >= rows) {
            return damaged("the ranks");
        }
        if self.by_original.is_some() != self.originals.is_some() {
            return damaged("the original spellings' order");
        }
        let mut next = 0;
        for group in &self.groups {
            if group.rows.start != next || group.rows.end < group.rows.start {
                return damaged("the groups' bounds");
            }
            next = group.rows.end;
        }
        if self.groups.is_empty() || next != rows {
            return damaged("the groups' bounds");
        }
        for sorted in std::iter::once(&self.by_folded).chain(&self.by_original) {
            if sorted.len() != rows {
                return damaged("a sorted order's size");
            }
            for group in &self.groups {
                let inside = group.rows.clone();
                if sorted[inside.clone()]
                    .iter()
                    .any(|&row| !inside.contains(&(row as usize)))
                {
                    return damaged("a sorted order's rows");
                }
            }
        }
        if self.contexts.len() + 1 != self.groups.len()
            || self
                .contexts
                .values()
                .any(|&group| group == 0 || group >= self.groups.len())
        {
            return damaged("the contexts");
        }
        if self.shared.windows(2).any(|pair| pair[0] >= pair[1])
            || self.shared.last().is_some_and(|&row| row as usize >= rows)
        {
            return damaged("the shared rows");
        }
        Ok(())
    }
}

/// Whether `starts` runs from 0 to the end of `text`, never backwards, each on a character
/// boundary.
fn offsets_fit(starts: &[u32], text: &str) -> bool {
    starts.first() == Some(&0)
        && starts.last().map(|&end| end as usize) == Some(text.len())
        && starts.windows(2).all(|pair| pair[0] <= pair[1])
        && starts.iter().all(|&at| text.is_char_boundary(at as usize))
}

/// An empty vector with room for `count` values. On Linux its memory is marked for
/// transparent huge pages: a million values' index is 39 MiB, and taking it in 4 KiB
/// pages, a page fault each, was a third of the time reading it took
/// (docs/benchmarks.md, "Huge pages for a stored index").
fn with_capacity_on_huge_pages<T>(count: usize) -> Vec<T> {
    let values: Vec<T> = Vec::with_capacity(count);
    #[cfg(target_os = "linux")]
    advise_huge_pages(values.as_ptr().cast(), count * std::mem::size_of::<T>());
    values
}

/// Asks the kernel to back the whole 2 MiB pages inside `bytes` from `start` with huge
/// pages. Only a hint: where transparent huge pages are off, nothing changes.
#[cfg(target_os = "linux")]
fn advise_huge_pages(start: *const u8, bytes: usize) {
    const HUGE_PAGE: usize = 2 << 20;
    let first = (start as usize).next_multiple_of(HUGE_PAGE);
    let end = (start as usize).saturating_add(bytes) / HUGE_PAGE * HUGE_PAGE;
    if end > first {
        // SAFETY: the range lies inside an allocation this vector owns, and the advice
        // changes how the kernel backs its pages, never what they hold.
        unsafe { libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE) };
    }
}

struct Encoder(Vec<u8>);

impl Encoder {
    fn count(&mut self, count: usize) {
        self.0.extend_from_slice(&(count as u64).to_le_bytes());
    }

    fn bytes(&mut self, bytes: &[u8]) {
        self.count(bytes.len());
        self.0.extend_from_slice(bytes);
    }

    fn u32s(&mut self, values: &[u32]) {
        self.count(values.len());
        self.0
            .extend(values.iter().flat_map(|value| value.to_le_bytes()));
    }

    fn u64s(&mut self, values: &[u64]) {
        self.count(values.len());
        self.0
            .extend(values.iter().flat_map(|value| value.to_le_bytes()));
    }
}

struct Decoder<R> {
    input: R,
    /// What the arrays decoded so far leave of `max_bytes`.
    left: usize,
    max_bytes: usize,
}

impl<R: Read> Decoder<R> {
    /// A count, charged `element_bytes` for each element it counts.
    fn count(&mut self, element_bytes: usize) -> Result<usize, Undecodable> {
        let mut bytes = [0u8; 8];
        self.input.read_exact(&mut bytes)?;
        let count = usize::try_from(u64::from_le_bytes(bytes))
            .map_err(|_| Undecodable::Damaged("a count"))?;
        self.charge(count.saturating_mul(element_bytes))?;
        Ok(count)
    }

    fn charge(&mut self, bytes: usize) -> Result<(), Undecodable> {
        self.left = self
            .left
            .checked_sub(bytes)
            .ok_or(TooLarge::Memory(self.max_bytes))?;
        Ok(())
    }

    fn text(&mut self) -> Result<String, Undecodable> {
        let bytes = self.numbers(|[byte]: [u8; 1]| byte)?;
        String::from_utf8(bytes).map_err(|_| Undecodable::Damaged("text that is not UTF-8"))
    }

    /// An array of `N`-byte little-endian numbers, read a chunk at a time into a vector of
    /// its final size, which nothing zeroes first.
    fn numbers<T, const N: usize>(
        &mut self,
        from: fn([u8; N]) -> T,
    ) -> Result<Vec<T>, Undecodable> {
        let count = self.count(N)?;
        let mut values = with_capacity_on_huge_pages(count);
        let mut chunk = vec![0u8; CHUNK.min(count * N)];
        let mut left = count * N;
        while left > 0 {
            let piece = &mut chunk[..CHUNK.min(left)];
            self.input.read_exact(piece)?;
            values.extend(
                piece
                    .chunks_exact(N)
                    .map(|bytes| from(bytes.try_into().unwrap_or([0; N]))),
            );
            left -= piece.len();
        }
        Ok(values)
    }

    fn u32s(&mut self) -> Result<Vec<u32>, Undecodable> {
        self.numbers(u32::from_le_bytes)
    }

    fn u64s(&mut self) -> Result<Vec<u64>, Undecodable> {
        self.numbers(u64::from_le_bytes)
    }
}
