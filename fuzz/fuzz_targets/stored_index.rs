//! A completion table's stored index, as a server reads it from the library: any bytes
//! through `TableIndex::decode`, which must refuse what does not hold together rather than
//! hand out an index that panics; an index that decodes answers a query from the input (and
//! a few fixed ones), with and without a context, within `MAX_VALUES`, and encodes back to
//! bytes that decode again.
//!
//! Input: the query, NUL, then the stored bytes (`TableIndex::encode`'s layout; the
//! committed seeds are real indexes written by `values import`).

#![no_main]

use std::collections::HashMap;

use libfuzzer_sys::fuzz_target;
use promptshelf::complete::{MAX_VALUES, TableIndex};
use promptshelf_fuzz::Fields;

/// What one decode may take: far more than any seed, little enough for libFuzzer's memory
/// limit.
const MAX_BYTES: usize = 1 << 26;

fuzz_target!(|data: &[u8]| {
    let mut fields = Fields::new(data);
    let query = fields.text();
    let Ok(index) = TableIndex::decode(fields.rest(), MAX_BYTES) else {
        return;
    };
    let contexts = [
        HashMap::new(),
        HashMap::from([("language".to_string(), "rust".to_string())]),
    ];
    for context in &contexts {
        for query in [query.as_str(), "", "a", "ru", "py-"] {
            let answer = index.complete(query, context);
            assert!(
                answer.values.len() <= MAX_VALUES,
                "{} values",
                answer.values.len()
            );
        }
    }
    if let Err(err) = TableIndex::decode(&index.encode()[..], MAX_BYTES) {
        panic!("an index's own bytes do not decode: {err}");
    }
});
