//! What `import` would refuse in a prompt added or edited by hand (`prompt add`, `prompt
//! edit`), found through `validate` against the stored library, each at its line of the file.

use anyhow::Result;
use rusqlite::Connection;

use crate::library::{self, FileError};
use crate::model::{Prompt, StoredPrompt};
use crate::store::{self, Store};
use crate::validate;

/// The library as `validate` sees a prompt added by hand: what is stored. It has no folder,
/// so its relative links are not checked; and its completion tables may be added after it,
/// as a template's may (`template add`): a missing one is a note (`common::note_missing_tables`).
struct Stored<'a> {
    conn: &'a Connection,
}

impl validate::Library for Stored<'_> {
    fn has_resource(&self, uri: &str) -> store::Result<bool> {
        Ok(store::read::resource(self.conn, uri)?.is_some())
    }

    fn has_table(&self, _: &str) -> bool {
        true
    }

    fn files(&self, _: &str) -> Option<&validate::Files> {
        None
    }
}

/// What `import` would refuse in the prompt read from `bytes` (the file `shown`), each at its
/// line of the file where it can be found: the same checks, through `validate`.
pub(super) fn problems(
    store: &Store,
    prompt: &Prompt,
    shown: &str,
    bytes: &[u8],
) -> Result<Vec<FileError>> {
    let conn = store.conn()?;
    let library = Stored { conn: &conn };
    let stored = StoredPrompt {
        prompt: prompt.clone(),
        content_hash: store::hash_prompt(prompt),
        last_modified: store::now_ms(),
        version: None,
    };
    let findings = validate::prompt(&stored, &library)?;
    let text = String::from_utf8_lossy(bytes);
    Ok(findings
        .into_iter()
        .map(|finding| FileError {
            path: shown.to_string(),
            line: finding
                .place
                .as_ref()
                .and_then(|place| library::line_in_file(&text, true, place)),
            column: None,
            message: finding.message,
        })
        .collect())
}
