//! The library's plain data: prompts, resources, templates and completion tables, as the
//! store keeps them and every other part passes them around. No I/O here. Items serialize
//! (serde) as the history keeps their versions (`store::history`).

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

/// The most characters of a description that a list a host shows holds.
pub(crate) const LISTED_DESCRIPTION: usize = 300;

/// A description as a list shows it: whole up to `LISTED_DESCRIPTION` characters, else cut
/// at a word with an ellipsis. A host shows a prompt list as a menu, where an agent file's
/// thousand-character description would bury every other entry; the whole text stays with
/// the item (`prompts/get`, `prompt show`).
pub(crate) fn listed_description(text: &str) -> Cow<'_, str> {
    if text.chars().count() <= LISTED_DESCRIPTION {
        return Cow::Borrowed(text);
    }
    let cut: String = text.chars().take(LISTED_DESCRIPTION).collect();
    let at_word = cut
        .rfind(char::is_whitespace)
        .filter(|&at| at > LISTED_DESCRIPTION / 2)
        .unwrap_or(cut.len());
    Cow::Owned(format!("{}…", cut[..at_word].trim_end()))
}

/// A blake3 digest of an item's canonical form; equal hashes mean nothing changed.
pub(crate) type ContentHash = [u8; 32];

/// Front matter keys of an item's file that the format does not read (a host's own, such as
/// Claude Code's `allowed-tools` or VS Code's `applyTo`), kept with their values as the file
/// gave them so that an export can write them back.
pub(crate) type Meta = std::collections::BTreeMap<String, serde_json::Value>;

/// The kinds of item the library holds, each under its own key (a prompt's name, a resource's
/// URI, a template's URI template, a completion table's name): what the history versions,
/// what a collection's items are detached as, and what an import changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Kind {
    Prompt,
    Resource,
    Template,
    Values,
}

impl Kind {
    pub(crate) const ALL: [Kind; 4] = [Kind::Prompt, Kind::Resource, Kind::Template, Kind::Values];

    /// The name schema.sql and the CLI use.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Kind::Prompt => "prompt",
            Kind::Resource => "resource",
            Kind::Template => "template",
            Kind::Values => "values",
        }
    }

    /// The kind `as_str` names `name`, if any.
    pub(crate) fn named(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|kind| kind.as_str() == name)
    }
}

/// An MCP icon (`src` is a URL or a `data:` URI).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Icon {
    pub src: String,
    #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sizes: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<String>,
}

/// What an argument's string value must look like; checked on `prompts/get`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ArgumentType {
    #[default]
    String,
    Enum,
    Integer,
    Number,
    Boolean,
    Date,
    Uri,
}

impl ArgumentType {
    pub(crate) const ALL: [ArgumentType; 7] = [
        ArgumentType::String,
        ArgumentType::Enum,
        ArgumentType::Integer,
        ArgumentType::Number,
        ArgumentType::Boolean,
        ArgumentType::Date,
        ArgumentType::Uri,
    ];

    /// The name used in schema.sql, front matter and the CLI.
    pub(crate) fn as_str(&self) -> &'static str {
        match self {
            ArgumentType::String => "string",
            ArgumentType::Enum => "enum",
            ArgumentType::Integer => "integer",
            ArgumentType::Number => "number",
            ArgumentType::Boolean => "boolean",
            ArgumentType::Date => "date",
            ArgumentType::Uri => "uri",
        }
    }

    pub(crate) fn parse(name: &str) -> Option<ArgumentType> {
        Self::ALL.into_iter().find(|kind| kind.as_str() == name)
    }
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PromptArgument {
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub required: bool,
    pub kind: ArgumentType,
    /// Used when the client leaves the argument out.
    pub default: Option<String>,
    /// The allowed values of an `enum` argument, in the author's order.
    pub values: Vec<String>,
    pub pattern: Option<String>,
    pub max_length: Option<u64>,
    pub min: Option<f64>,
    pub max: Option<f64>,
    /// The completion table that suggests values, by name.
    pub completion: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
}

impl Role {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }

    pub(crate) fn parse(name: &str) -> Option<Role> {
        match name {
            "user" => Some(Role::User),
            "assistant" => Some(Role::Assistant),
            _ => None,
        }
    }
}

/// One run of a prompt body in one role: a minijinja template.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessageTemplate {
    pub role: Role,
    pub body: String,
}

/// Where an item came from when it was imported from a folder.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Origin {
    pub collection: Option<String>,
    /// The file, relative to the collection's folder.
    pub path: Option<String>,
    /// The commit (hex) the folder's git working tree was at when the import that wrote
    /// this version of the item ran; None outside git. Versions kept before there was one
    /// have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
}

impl Origin {
    /// Whether both name the same collection and file, whatever commit each was read at.
    pub(crate) fn same_file(&self, other: &Origin) -> bool {
        self.collection == other.collection && self.path == other.path
    }
}

/// What a served item says of where it comes from (in `_meta` and by `prompt show`): its
/// collection, its version in the history (on a release channel, with the channel's label)
/// and its content hash, and when it was imported
/// its file (relative to the folder) and the commit the folder was at. Serialized as that
/// object, a field the item lacks left out rather than null (an item added by hand has no
/// collection, file or commit).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Provenance {
    pub origin: Origin,
    /// The number of the item's newest version in the history (`store::history`); None for
    /// an item written before the history was kept and not changed since.
    pub version: Option<i64>,
    pub content_hash: ContentHash,
    /// The release channel's label the item is served at (`store::labels`), when it is.
    pub label: Option<String>,
}

impl Serialize for Provenance {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let origin = &self.origin;
        let mut map = serializer.serialize_map(None)?;
        if let Some(collection) = &origin.collection {
            map.serialize_entry("collection", collection)?;
        }
        if let Some(version) = self.version {
            map.serialize_entry("version", &version)?;
        }
        if let Some(label) = &self.label {
            map.serialize_entry("label", label)?;
        }
        let hash = blake3::Hash::from_bytes(self.content_hash).to_hex();
        map.serialize_entry("contentHash", hash.as_str())?;
        if let Some(file) = &origin.path {
            map.serialize_entry("file", file)?;
        }
        if let Some(commit) = &origin.commit {
            map.serialize_entry("commit", commit)?;
        }
        map.end()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Prompt {
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub icons: Vec<Icon>,
    pub arguments: Vec<PromptArgument>,
    pub messages: Vec<MessageTemplate>,
    pub origin: Origin,
    #[serde(default, skip_serializing_if = "Meta::is_empty")]
    pub meta: Meta,
}

/// A prompt as stored: the prompt plus what the store derives from it.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredPrompt {
    pub prompt: Prompt,
    pub content_hash: ContentHash,
    /// Unix milliseconds; moves only when `content_hash` does.
    pub last_modified: i64,
    /// Its newest version's number (`Provenance::version`).
    pub version: Option<i64>,
}

impl StoredPrompt {
    pub(crate) fn provenance(&self) -> Provenance {
        Provenance {
            origin: self.prompt.origin.clone(),
            version: self.version,
            content_hash: self.content_hash,
            label: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Content {
    Text(String),
    Binary(Vec<u8>),
}

impl Content {
    pub(crate) fn as_bytes(&self) -> &[u8] {
        match self {
            Content::Text(text) => text.as_bytes(),
            Content::Binary(bytes) => bytes,
        }
    }

    pub(crate) fn is_text(&self) -> bool {
        matches!(self, Content::Text(_))
    }
}

/// MCP resource annotations the author sets; `lastModified` is the store's.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Annotations {
    pub audience: Vec<Role>,
    pub priority: Option<f64>,
}

impl Annotations {
    /// The audience as MCP spells it (`["user", "assistant"]`).
    pub(crate) fn audience_names(&self) -> Vec<&'static str> {
        self.audience.iter().map(|role| role.as_str()).collect()
    }
}

/// Everything about a resource but its content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResourceInfo {
    pub uri: String,
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub mime_type: String,
    pub annotations: Annotations,
    pub icons: Vec<Icon>,
    pub origin: Origin,
    #[serde(default, skip_serializing_if = "Meta::is_empty")]
    pub meta: Meta,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Resource {
    pub info: ResourceInfo,
    pub content: Content,
}

/// A resource's metadata as stored, without its content (what lists need).
#[derive(Debug, Clone, PartialEq)]
pub struct StoredResource {
    pub info: ResourceInfo,
    pub is_text: bool,
    pub size: u64,
    pub blob_hash: ContentHash,
    pub content_hash: ContentHash,
    pub last_modified: i64,
    /// Its newest version's number (`Provenance::version`).
    pub version: Option<i64>,
}

impl StoredResource {
    pub(crate) fn provenance(&self) -> Provenance {
        Provenance {
            origin: self.info.origin.clone(),
            version: self.version,
            content_hash: self.content_hash,
            label: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ResourceTemplate {
    pub uri_template: String,
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub mime_type: Option<String>,
    pub icons: Vec<Icon>,
    /// Variable name -> completion table; variables not named complete from stored URIs.
    pub completions: Vec<(String, String)>,
    pub collection: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct StoredTemplate {
    pub(crate) template: ResourceTemplate,
    pub content_hash: ContentHash,
    pub last_modified: i64,
    /// Its newest version's number (`Provenance::version`).
    pub version: Option<i64>,
}

impl StoredTemplate {
    /// A template has no file: it is its collection's, or added by hand.
    pub(crate) fn provenance(&self) -> Provenance {
        Provenance {
            origin: Origin {
                collection: self.template.collection.clone(),
                ..Origin::default()
            },
            version: self.version,
            content_hash: self.content_hash,
            label: None,
        }
    }
}

/// One suggestion in a completion table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompletionValue {
    pub value: String,
    pub weight: f64,
    /// `(argument, value)`: offered only when that argument has that value.
    pub context: Option<(String, String)>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct CompletionTable {
    pub name: String,
    pub description: Option<String>,
    pub values: Vec<CompletionValue>,
}

/// A completion table's summary, for listings.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TableSummary {
    pub name: String,
    pub description: Option<String>,
    pub values: u64,
}
