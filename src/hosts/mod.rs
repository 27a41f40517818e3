//! The MCP hosts `config` knows: which file each reads for a scope, under which key, in which
//! format, and the entry that starts this server there; and merging that entry into a file's
//! text so that nothing else in it changes (checked by parsing the result back).

mod file;
mod json;
pub(crate) mod paths;
pub(crate) mod profile;
mod table;
mod toml;
mod yaml;

use std::path::PathBuf;

use serde_json::{Map, Value};

pub(crate) use file::write;
pub(crate) use table::{Launch, Via, display_name, target};

/// The name the entry is registered under in every host.
pub(crate) const NAME: &str = "promptshelf";

/// The hosts `config`, `sync` and `check --host` know.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum)]
pub(crate) enum Host {
    ClaudeDesktop,
    ClaudeCode,
    Vscode,
    /// GitHub Copilot CLI
    CopilotCli,
    Cursor,
    Zed,
    Windsurf,
    Codex,
    Gemini,
    Continue,
    Goose,
}

impl Host {
    /// The name on the command line: `claude-code`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Host::ClaudeDesktop => "claude-desktop",
            Host::ClaudeCode => "claude-code",
            Host::Vscode => "vscode",
            Host::CopilotCli => "copilot-cli",
            Host::Cursor => "cursor",
            Host::Zed => "zed",
            Host::Windsurf => "windsurf",
            Host::Codex => "codex",
            Host::Gemini => "gemini",
            Host::Continue => "continue",
            Host::Goose => "goose",
        }
    }
}

/// Whose configuration: the user's (in the home folder) or the project's (under the current
/// folder).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub(crate) enum Scope {
    #[default]
    User,
    Project,
}

/// How a host's file is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    Json(Json),
    Toml,
    Yaml,
}

impl Format {
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Format::Json(Json::Strict) => "JSON",
            Format::Json(_) => "JSON with comments",
            Format::Toml => "TOML",
            Format::Yaml => "YAML",
        }
    }
}

/// What a host's JSON reader accepts beyond strict JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Json {
    Strict,
    /// `//` and `/* */` comments (Gemini CLI strips them before parsing).
    Comments,
    /// Comments and trailing commas (VS Code's and Zed's JSONC).
    CommentsAndTrailingCommas,
}

/// Where the entry goes inside the file: under a top-level key, either as the member `NAME`
/// of a mapping or as the item of a list whose `name` is `NAME`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Place {
    pub key: &'static str,
    pub shape: Shape,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    Map,
    ListByName,
}

impl Place {
    /// The entry's place as the messages name it: `mcpServers.promptshelf`.
    pub(crate) fn describe(&self) -> String {
        match self.shape {
            Shape::Map => format!("{}.{NAME}", self.key),
            Shape::ListByName => format!("the {} item named {NAME}", self.key),
        }
    }
}

/// One field of an entry, in a form every format can write.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Field {
    Text(String),
    Texts(Vec<String>),
    Flag(bool),
    Number(i64),
    EmptyMap,
}

/// A server entry: its fields in the order they are written.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Entry {
    pub fields: Vec<(&'static str, Field)>,
}

impl Entry {
    pub(crate) fn to_json(&self) -> Value {
        let fields = self.fields.iter().map(|(key, field)| {
            let value = match field {
                Field::Text(text) => Value::from(text.as_str()),
                Field::Texts(texts) => Value::from(texts.clone()),
                Field::Flag(flag) => Value::from(*flag),
                Field::Number(number) => Value::from(*number),
                Field::EmptyMap => Value::Object(Map::new()),
            };
            (key.to_string(), value)
        });
        Value::Object(fields.collect())
    }
}

/// Everything `config` needs about one host in one scope.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    pub file: PathBuf,
    pub format: Format,
    pub place: Place,
    pub entry: Entry,
    /// Keys a new file starts with before the entry's key (Continue's block files need them).
    pub preamble: Vec<(&'static str, Field)>,
    /// Said after the file is written or the snippet printed: what the host needs besides.
    pub note: Option<&'static str>,
}

/// What a merge did to the entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Change {
    Added,
    Replaced,
    Unchanged,
}

/// Why a file's text could not take the entry.
#[derive(Debug, thiserror::Error)]
pub(crate) enum MergeError {
    #[error("it is not valid {format}: {message} at line {line}, column {column}")]
    Syntax {
        format: &'static str,
        message: String,
        line: usize,
        column: usize,
    },
    #[error("{0}")]
    Shape(String),
    #[error("{0}")]
    Edit(String),
}

/// The text with the entry merged in, and what changed. The result is parsed back and must
/// equal the old file's contents with only the entry set; otherwise the merge is refused.
pub(crate) fn merge(target: &Target, text: &str) -> Result<(String, Change), MergeError> {
    let format = target.format;
    let before = parse(format, text)?;
    let entry = target.entry.to_json();
    let (expected, change) = with_entry(before.clone(), &target.place, &entry)?;
    if change == Change::Unchanged {
        return Ok((text.to_string(), change));
    }
    let preamble = if before.is_null() {
        target.preamble.as_slice()
    } else {
        &[]
    };
    let expected = with_preamble(expected, preamble);
    let merged = match format {
        Format::Json(_) => json::edit(text, &target.place, &target.entry, preamble),
        Format::Toml => toml::edit(text, &target.place, &target.entry, preamble),
        Format::Yaml => yaml::edit(text, &target.place, &before, &target.entry, preamble),
    }
    .map_err(MergeError::Edit)?;
    match parse(format, &merged) {
        Ok(after) if after == expected => Ok((merged, change)),
        _ => Err(MergeError::Edit(format!(
            "setting {} would have changed something else in the file",
            target.place.describe()
        ))),
    }
}

/// The snippet printed without `--write`: the entry merged into an empty file.
pub(crate) fn snippet(target: &Target) -> Result<String, MergeError> {
    merge(target, "").map(|(text, _)| text)
}

/// The file's contents as a JSON value; `Null` for an empty file.
fn parse(format: Format, text: &str) -> Result<Value, MergeError> {
    if text.trim().is_empty() {
        return Ok(Value::Null);
    }
    match format {
        Format::Json(dialect) => json::parse(text, dialect),
        Format::Toml => toml::parse(text),
        Format::Yaml => yaml::parse(text),
    }
}

/// `document` with `entry` at `place`, and whether that adds, replaces or keeps it.
fn with_entry(
    document: Value,
    place: &Place,
    entry: &Value,
) -> Result<(Value, Change), MergeError> {
    let mut root = match document {
        Value::Null => Map::new(),
        Value::Object(root) => root,
        other => {
            return Err(MergeError::Shape(format!(
                "the file holds {}, not a mapping of settings",
                kind(&other)
            )));
        }
    };
    let change;
    match (place.shape, root.get_mut(place.key)) {
        (_, None | Some(Value::Null)) => {
            let servers = match place.shape {
                Shape::Map => Value::Object(Map::from_iter([(NAME.to_string(), entry.clone())])),
                Shape::ListByName => Value::Array(vec![entry.clone()]),
            };
            root.insert(place.key.to_string(), servers);
            change = Change::Added;
        }
        (Shape::Map, Some(Value::Object(servers))) => {
            change = match servers.insert(NAME.to_string(), entry.clone()) {
                None => Change::Added,
                Some(old) if old == *entry => Change::Unchanged,
                Some(_) => Change::Replaced,
            };
        }
        (Shape::ListByName, Some(Value::Array(servers))) => {
            match servers.iter_mut().find(|server| is_named(server)) {
                Some(old) if *old == *entry => change = Change::Unchanged,
                Some(old) => {
                    *old = entry.clone();
                    change = Change::Replaced;
                }
                None => {
                    servers.push(entry.clone());
                    change = Change::Added;
                }
            }
        }
        (shape, Some(other)) => {
            let wanted = match shape {
                Shape::Map => "a mapping of server names to servers",
                Shape::ListByName => "a list of servers",
            };
            return Err(MergeError::Shape(format!(
                "its {} holds {}, not {wanted}",
                place.key,
                kind(other)
            )));
        }
    }
    Ok((Value::Object(root), change))
}

fn with_preamble(document: Value, preamble: &[(&'static str, Field)]) -> Value {
    if preamble.is_empty() {
        return document;
    }
    let mut root = Entry {
        fields: preamble.to_vec(),
    }
    .to_json();
    if let (Value::Object(root), Value::Object(rest)) = (&mut root, document) {
        root.extend(rest);
    }
    root
}

/// Whether a list item is the entry named `NAME`.
fn is_named(server: &Value) -> bool {
    server.get("name").and_then(Value::as_str) == Some(NAME)
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "nothing",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

/// The 1-based line and column of a byte offset into `text`.
fn line_and_column(text: &str, offset: usize) -> (usize, usize) {
    let mut end = offset.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let before = &text[..end];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    (line, column)
}
