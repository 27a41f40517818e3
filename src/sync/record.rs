//! The record `sync` keeps in each folder it writes (`.promptshelf-sync.json`): every file it
//! wrote there and the digest of what it wrote, so that a later run can tell its own stale
//! file (replaced) from a hand edit (kept) and from a file it never wrote (never touched).

use std::collections::BTreeMap;
use std::path::{Component, Path};

use anyhow::{Context, Result, anyhow, bail};
use serde::{Deserialize, Serialize};

/// The record's file name, in the folder it describes.
pub(crate) const FILE: &str = ".promptshelf-sync.json";

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct Record {
    /// Says what the file is to a person who finds it.
    #[serde(default)]
    pub written_by: String,
    /// Each file's path under the folder, and `blake3:<hex>` of what sync wrote there.
    pub files: BTreeMap<String, String>,
}

/// The digest a record keeps of a file's bytes.
pub(super) fn digest(bytes: &[u8]) -> String {
    format!("blake3:{}", blake3::hash(bytes).to_hex())
}

impl Record {
    /// The record in `folder`; an empty one when there is none.
    pub(super) fn read(folder: &Path) -> Result<Record> {
        let path = folder.join(FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Record::default());
            }
            Err(err) => return Err(anyhow!("cannot read {}: {err}", path.display())),
        };
        let record: Record = serde_json::from_str(&text).with_context(|| {
            format!(
                "{} is not a record sync can read; move it away to start the folder afresh \
                 (sync then writes only files that are not there)",
                path.display()
            )
        })?;
        // Sync removes recorded files: only paths inside the folder may be recorded.
        if let Some(outside) = record.files.keys().find(|file| {
            !Path::new(file)
                .components()
                .all(|part| matches!(part, Component::Normal(_)))
        }) {
            bail!(
                "{} records {outside:?}, which is not a path inside its folder; move the \
                 record away to start the folder afresh",
                path.display()
            );
        }
        Ok(record)
    }

    /// Writes the record into `folder`, or removes it when it records no file.
    pub(super) fn write(&self, folder: &Path) -> Result<()> {
        let path = folder.join(FILE);
        if self.files.is_empty() {
            return match std::fs::remove_file(&path) {
                Err(err) if err.kind() != std::io::ErrorKind::NotFound => {
                    Err(anyhow!("cannot remove {}: {err}", path.display()))
                }
                _ => Ok(()),
            };
        }
        let record = Record {
            written_by: "promptshelf sync: the files it wrote here; do not edit".to_string(),
            files: self.files.clone(),
        };
        let mut bytes = serde_json::to_vec_pretty(&record)?;
        bytes.push(b'\n');
        // A run that changed nothing leaves the folder as it was, the record included.
        if std::fs::read(&path).is_ok_and(|there| there == bytes) {
            return Ok(());
        }
        crate::export::write_whole(&path, &bytes, crate::store::now_ms())
    }
}
