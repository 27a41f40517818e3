//! The manifest a whole-library export writes at the top of its folder
//! (`promptshelf-library.json`, docs/format.md "A whole library"): which subfolder is which
//! collection under which URI scheme, read as which kind of folder (a folder of skills
//! whatever it is called), and which files are the items added by hand, with the URI each
//! resource had, and the resource templates added by hand, which have no file of their own.
//! `import DIR` of such a folder restores every part of it.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::Folder;
use crate::model::{Icon, ResourceTemplate};

/// The manifest's file name, at the top of the export's folder.
pub(crate) const FILE: &str = "promptshelf-library.json";

/// What the manifest's `format` says, so that another file of that name is not taken for one.
const FORMAT: &str = "promptshelf-library";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Manifest {
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
pub(crate) struct CollectionEntry {
    pub name: String,
    /// The subfolder, relative to the manifest's folder.
    pub folder: String,
    /// The scheme of its resources' URIs (`import --scheme`).
    pub scheme: String,
    /// How its folder is read. Manifests written before it was kept have none: the folder's
    /// name decides, as for any imported folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<Layout>,
    /// The prefix its prompt names were given (`import --prefix`), given again by a restore.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix: Option<String>,
}

/// How a collection's folder is read (`library::Folder`), whatever the folder is called.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Layout {
    /// Every file by its path (`.claude/skills/NAME/` and the like are still skills).
    Plain,
    /// A folder of skill folders: `NAME/SKILL.md` is a skill, its files `skill://NAME/PATH`.
    Skills,
    /// A Claude Code commands folder: its markdown files are commands.
    Commands,
    /// A Claude Code plugin: `skills/NAME/SKILL.md` is a skill (its `.claude-plugin/`, a
    /// hidden folder, is not exported).
    Plugin,
}

impl From<Folder> for Layout {
    fn from(folder: Folder) -> Layout {
        match folder {
            Folder::Plain => Layout::Plain,
            Folder::Skills => Layout::Skills,
            Folder::Commands => Layout::Commands,
            Folder::Plugin => Layout::Plugin,
        }
    }
}

impl From<Layout> for Folder {
    fn from(layout: Layout) -> Folder {
        match layout {
            Layout::Plain => Folder::Plain,
            Layout::Skills => Folder::Skills,
            Layout::Commands => Folder::Commands,
            Layout::Plugin => Folder::Plugin,
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Local {
    /// The subfolder, relative to the manifest's folder.
    pub folder: String,
    /// Each resource's file (relative to `folder`) and URI.
    pub resources: Vec<LocalResource>,
    /// The resource templates added by hand (`template add`), whole: a template has no file.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub templates: Vec<LocalTemplate>,
}

/// A resource template added by hand, as `template add` stored it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct LocalTemplate {
    pub uri_template: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub icons: Vec<Icon>,
    /// Variable -> the completion table it completes from.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub completions: BTreeMap<String, String>,
    /// Its lastModified, Unix milliseconds, which the restored template keeps.
    pub last_modified: i64,
}

impl LocalTemplate {
    pub(crate) fn of(template: &ResourceTemplate, last_modified: i64) -> LocalTemplate {
        LocalTemplate {
            uri_template: template.uri_template.clone(),
            name: template.name.clone(),
            title: template.title.clone(),
            description: template.description.clone(),
            mime_type: template.mime_type.clone(),
            icons: template.icons.clone(),
            completions: template.completions.iter().cloned().collect(),
            last_modified,
        }
    }

    /// The template as stored: of no collection, its completions in variable order (as the
    /// store reads them back, so the content hash is the one exported).
    pub(crate) fn template(&self) -> ResourceTemplate {
        ResourceTemplate {
            uri_template: self.uri_template.clone(),
            name: self.name.clone(),
            title: self.title.clone(),
            description: self.description.clone(),
            mime_type: self.mime_type.clone(),
            icons: self.icons.clone(),
            completions: self
                .completions
                .iter()
                .map(|(variable, table)| (variable.clone(), table.clone()))
                .collect(),
            collection: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LocalResource {
    pub file: String,
    pub uri: String,
}

impl Manifest {
    pub(crate) fn new(collections: Vec<CollectionEntry>, local: Option<Local>) -> Manifest {
        Manifest {
            format: FORMAT.to_string(),
            version: 1,
            collections,
            local,
        }
    }

    /// The manifest as written: pretty JSON with a final newline, so an unchanged library
    /// writes the same bytes.
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text.into_bytes()
    }

    /// The manifest of the folder `dir`, if it has one, and the bytes it was read from (which
    /// `import --verify` checks); an error says what is wrong with one that does not read.
    pub(crate) fn read(dir: &Path) -> Result<Option<(Manifest, Vec<u8>)>, String> {
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
        for template in manifest.local.iter().flat_map(|local| &local.templates) {
            let variables = crate::uri_template::UriTemplate::parse(&template.uri_template)
                .map_err(|err| {
                    format!(
                        "{}: {err}; fix it under `templates`, or export the library again",
                        path.display()
                    )
                })?
                .variables()
                .to_vec();
            if let Some(variable) = template
                .completions
                .keys()
                .find(|variable| !variables.contains(variable))
            {
                return Err(format!(
                    "{}: the template '{}' completes '{variable}', which is none of its \
                     variables ({}); fix its `completions`, or export the library again",
                    path.display(),
                    template.uri_template,
                    variables.join(", ")
                ));
            }
            if template.name.trim().is_empty() {
                return Err(format!(
                    "{}: the template '{}' has an empty name; give it one, or export the \
                     library again",
                    path.display(),
                    template.uri_template
                ));
            }
        }
        Ok(Some((manifest, bytes)))
    }
}
