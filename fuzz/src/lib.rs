//! What the fuzz targets share: the seed library in a real SQLite file, created once per
//! process, and the settings they serve it with.

use std::path::PathBuf;
use std::sync::OnceLock;

use promptshelf::config::{Mirror, Mirrors, ServeConfig};
use promptshelf::store::{Access, Store};

/// The folder holding this process's database, removed when the process exits.
static FOLDER: OnceLock<PathBuf> = OnceLock::new();

/// The seed library, as `serve` creates it for a missing file: in a temporary folder, read
/// only. Created on first use; every later call hands out the same store.
pub fn seed_store() -> &'static Store {
    static STORE: OnceLock<Store> = OnceLock::new();
    STORE.get_or_init(|| {
        let folder = tempfile::Builder::new()
            .prefix("promptshelf-fuzz-")
            .tempdir()
            .expect("a temporary folder")
            .keep();
        let path = folder.join("library.db");
        FOLDER.get_or_init(|| folder);
        // Statics are never dropped: the folder goes when the process exits normally
        // (libFuzzer calls `exit` at the end of a bounded run).
        // SAFETY: `remove_folder` is an `extern "C"` function without arguments that
        // touches only the static above.
        unsafe { libc::atexit(remove_folder) };
        Store::open(&path, Access::ReadOnly, promptshelf::seed::load).expect("the seed store")
    })
}

extern "C" fn remove_folder() {
    if let Some(folder) = FOLDER.get() {
        let _ = std::fs::remove_dir_all(folder);
    }
}

/// The settings the targets serve with: the defaults, with pages of three items so that
/// the seed's lists have several pages (and cursors to follow), lines of at most 4 KiB
/// so that a long line is skipped as it would be at the real limit, and every tool mirror
/// on so that `tools/call` is fuzzed too.
pub fn config() -> ServeConfig {
    ServeConfig {
        page_size: 3,
        max_line: 4096,
        mirrors: Mirrors::of([Mirror::Prompts, Mirror::Resources, Mirror::Search]),
        ..ServeConfig::default()
    }
}

/// Checks that `output` is answer lines: each one JSON object of JSON-RPC 2.0, ending in a
/// newline. Numbers are checked for their syntax only: a request id is echoed as it was
/// sent, whatever its size.
pub fn check_answers(output: &[u8]) {
    /// The one member looked at; the rest is scanned as JSON and ignored.
    #[derive(serde::Deserialize)]
    struct Answer<'a> {
        #[serde(borrow)]
        jsonrpc: Option<std::borrow::Cow<'a, str>>,
    }
    if output.is_empty() {
        return;
    }
    assert!(output.ends_with(b"\n"), "the last answer has no newline");
    for line in output[..output.len() - 1].split(|byte| *byte == b'\n') {
        let shown = || String::from_utf8_lossy(line).into_owned();
        let answer: Answer = serde_json::from_slice(line)
            .unwrap_or_else(|err| panic!("an answer is not a JSON object ({err}): {}", shown()));
        assert_eq!(
            answer.jsonrpc.as_deref(),
            Some("2.0"),
            "an answer without \"jsonrpc\": \"2.0\": {}",
            shown()
        );
    }
}

/// The fields of an input that holds several: the bytes between NULs, in order, then
/// empty ones for those missing. Plain bytes rather than a derived `Arbitrary` type, so
/// that a seed can be written by hand from the repository's own files and messages.
pub struct Fields<'a> {
    rest: Option<&'a [u8]>,
}

impl<'a> Fields<'a> {
    pub fn new(data: &'a [u8]) -> Fields<'a> {
        Fields { rest: Some(data) }
    }

    /// The next field's bytes.
    pub fn bytes(&mut self) -> &'a [u8] {
        let Some(rest) = self.rest else {
            return &[];
        };
        match rest.iter().position(|byte| *byte == 0) {
            Some(at) => {
                self.rest = Some(&rest[at + 1..]);
                &rest[..at]
            }
            None => {
                self.rest = None;
                rest
            }
        }
    }

    /// The next field as text (invalid UTF-8 replaced).
    pub fn text(&mut self) -> String {
        String::from_utf8_lossy(self.bytes()).into_owned()
    }

    /// Everything after the fields read so far, NULs and all.
    pub fn rest(&mut self) -> &'a [u8] {
        self.rest.take().unwrap_or(&[])
    }

    /// The fields not read yet, as text.
    pub fn remaining(&mut self) -> Vec<String> {
        let mut texts = Vec::new();
        while self.rest.is_some() {
            texts.push(self.text());
        }
        texts
    }
}
