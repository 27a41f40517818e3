//! The dispatcher and the handlers: the input is what a client writes on stdin (any bytes,
//! cut into lines as the server cuts them), answered by `server::serve_lines` against the
//! seed library in a real SQLite file, created once per process. Every request goes through
//! the real answer path (the reader's share, the pool, the cache, the handlers, the shapes);
//! each answer must be one JSON-RPC line.

#![no_main]

use libfuzzer_sys::fuzz_target;
use promptshelf_fuzz::{check_answers, config, seed_store};

fuzz_target!(|input: &[u8]| {
    let mut output = Vec::new();
    promptshelf::server::serve_lines(seed_store().clone(), config(), input, &mut output)
        .expect("serving ends when the input does");
    check_answers(&output);
});
