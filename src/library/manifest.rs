//! The manifest a whole-library export writes at the top of its folder
//! (`promptshelf-library.json`, docs/format.md "A whole library"): which subfolder is which
//! collection under which URI scheme, and which files are the items added by hand, with the
//! URI each resource had. `import DIR` of such a folder restores every part of it.

use std::path::Path;

use serde::{Deserialize, Serialize};

/// The manifest's file name, at the top of the export's folder.
pub const FILE: &str = "promptshelf-library.json";

/// What the manifest's `format` says, so that another file of that name is not taken for one.
const FORMAT: &str = "promptshelf-library";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// Always `promptshelf-library`.
    pub format: String,
    /// The manifest's own version: 1.
    pub version: u32,
    pub collections: Vec<CollectionEntry>,
    /// The items added by hand, when there are any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local: Option<Local>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CollectionEntry {
    pub name: String,
    /// The subfolder, relative to the manifest's folder.
    pub folder: String,
    /// The scheme of its resources' URIs (`import --scheme`).
    pub scheme: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Local {
    /// The subfolder, relative to the manifest's folder.
    pub folder: String,
    /// Each resource's file (relative to `folder`) and URI.
    pub resources: Vec<LocalResource>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LocalResource {
    pub file: String,
    pub uri: String,
}

impl Manifest {
    pub fn new(collections: Vec<CollectionEntry>, local: Option<Local>) -> Manifest {
        Manifest {
            format: FORMAT.to_string(),
            version: 1,
            collections,
            local,
        }
    }

    /// The manifest as written: pretty JSON with a final newline, so an unchanged library
    /// writes the same bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text.into_bytes()
    }

    /// The manifest of the folder `dir`, if it has one; an error says what is wrong with one
    /// that does not read.
    pub fn read(dir: &Path) -> Result<Option<Manifest>, String> {
        let path = dir.join(FILE);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(err) => return Err(format!("cannot read {}: {err}", path.display())),
        };
        let manifest: Manifest = serde_json::from_slice(&bytes).map_err(|err| {
            format!(
                "{}: {err}; it should be the manifest `promptshelf export DIR` writes (remove \
                 it to import the folder as one collection)",
                path.display()
            )
        })?;
        if manifest.format != FORMAT || manifest.version != 1 {
            return Err(format!(
                "{}: not a manifest this version reads (format '{}', version {}); export the \
                 library again with this version",
                path.display(),
                manifest.format,
                manifest.version
            ));
        }
        for folder in manifest
            .collections
            .iter()
            .map(|entry| &entry.folder)
            .chain(manifest.local.as_ref().map(|local| &local.folder))
        {
            let plain = !folder.is_empty()
                && !folder.contains(['/', '\\'])
                && folder != "."
                && folder != "..";
            if !plain {
                return Err(format!(
                    "{}: the folder '{folder}' is not a plain subfolder's name; each part of \
                     the export is a folder beside the manifest",
                    path.display()
                ));
            }
        }
        Ok(Some(manifest))
    }
}
