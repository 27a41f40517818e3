//! The library folder format (docs/format.md): turns one file of a collection into a prompt,
//! a resource or a completion table. The embedded seed and `promptshelf import` both read
//! files through here, so they cannot drift apart. `dialect` reads the prompt files of Claude
//! Code and VS Code, `links` points relative links between files at their URIs, and `emit`
//! is the way back, from an item to the text of its file.

mod dialect;
pub mod emit;
mod links;

use percent_encoding::{AsciiSet, CONTROLS, utf8_percent_encode};
use pulldown_cmark::{Event, HeadingLevel, Parser, Tag, TagEnd};
use serde::Deserialize;

pub use links::{link_targets, resolve_links};

use crate::model::{
    Annotations, ArgumentType, CompletionValue, Content, Icon, MessageTemplate, Origin, Prompt,
    PromptArgument, Resource, ResourceInfo, ResourceTemplate, Role,
};

/// The URI scheme of imported resources unless another is given.
pub const DEFAULT_SCHEME: &str = "shelf";

/// Where a file's items go: the collection's name and the scheme of its URIs.
#[derive(Debug, Clone)]
pub struct Collection {
    pub name: String,
    pub scheme: String,
}

impl Collection {
    /// `<scheme>://<collection>/<relative path>`, each segment percent-encoded as RFC 3986
    /// requires, so the URI names the file without leaking where the folder lives.
    pub fn resource_uri(&self, relative_path: &str) -> String {
        let path: Vec<String> = relative_path
            .split('/')
            .map(|segment| utf8_percent_encode(segment, PATH_SEGMENT).to_string())
            .collect();
        format!(
            "{}://{}/{}",
            self.scheme,
            utf8_percent_encode(&self.name, PATH_SEGMENT),
            path.join("/")
        )
    }

    /// The template every collection gets; its `path` completes from the stored URIs.
    pub fn template(&self) -> ResourceTemplate {
        ResourceTemplate {
            uri_template: format!(
                "{}://{}/{{+path}}",
                self.scheme,
                utf8_percent_encode(&self.name, PATH_SEGMENT)
            ),
            name: self.name.clone(),
            title: Some(format!("Documents in {}", self.name)),
            description: Some(format!(
                "Any document of the {} collection, by its path in the folder",
                self.name
            )),
            mime_type: None,
            icons: Vec::new(),
            completions: Vec::new(),
            collection: Some(self.name.clone()),
        }
    }
}

/// Everything but RFC 3986 `pchar` (unreserved, sub-delims, ':' and '@') is encoded.
const PATH_SEGMENT: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'/')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'[')
    .add(b'\\')
    .add(b']')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}');

/// What one file of a collection holds.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    Prompt(Prompt),
    Resource(Resource),
    Values {
        table: String,
        values: Vec<CompletionValue>,
    },
}

/// A file that cannot be read as the format says: where, and what to change.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{path}{}: {message}", line.map(|line| format!(":{line}")).unwrap_or_default())]
pub struct FileError {
    pub path: String,
    pub line: Option<u64>,
    pub message: String,
}

impl FileError {
    fn new(path: &str, line: Option<u64>, message: impl Into<String>) -> FileError {
        FileError {
            path: path.to_string(),
            line,
            message: message.into(),
        }
    }
}

/// What the folder a file was found in says about it, beyond its path in the collection.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Folder {
    /// Nothing beyond the path.
    #[default]
    Plain,
    /// The collection folder is itself a Claude Code commands folder (`~/.claude/commands`),
    /// so its markdown files are commands even though their paths do not say so.
    Commands,
}

impl Folder {
    /// The folder a collection is read from, known by its name.
    pub fn of(folder_name: &str) -> Folder {
        if folder_name == COMMANDS_FOLDER {
            Folder::Commands
        } else {
            Folder::Plain
        }
    }
}

/// Markdown files under a folder of this name are Claude Code commands.
const COMMANDS_FOLDER: &str = "commands";

/// Hidden folders that other tools keep prompt files in, each with the one subfolder of it
/// that is read: Claude Code's `.claude/commands/` and VS Code's `.github/prompts/`.
const TOOL_FOLDERS: [(&str, &str); 2] = [(".claude", COMMANDS_FOLDER), (".github", "prompts")];

/// Whether the format skips the file at `relative_path`: anything hidden (a segment starting
/// with `.`), except inside the prompt folders of `TOOL_FOLDERS`.
pub fn is_skipped(relative_path: &str) -> bool {
    hidden(relative_path, false)
}

/// Whether the folder at `relative_path` holds nothing the format reads; `.claude` and
/// `.github` themselves are entered to reach the prompt folders inside them.
pub fn skips_folder(relative_path: &str) -> bool {
    hidden(relative_path, true)
}

fn hidden(relative_path: &str, is_folder: bool) -> bool {
    let segments: Vec<&str> = relative_path.split('/').collect();
    for (at, segment) in segments.iter().enumerate() {
        if !segment.starts_with('.') {
            continue;
        }
        let Some((_, inside)) = TOOL_FOLDERS.iter().find(|(name, _)| name == segment) else {
            return true;
        };
        match segments.get(at + 1) {
            Some(next) if next == inside => {}
            None if is_folder => {}
            _ => return true,
        }
    }
    false
}

/// Whether a markdown file at `relative_path` is read as a Claude Code command: it is not a
/// `*.prompt.md` and sits under a `commands` folder (unless its front matter says `kind`).
pub fn is_command_path(relative_path: &str, folder: Folder) -> bool {
    let file_name = relative_path.rsplit('/').next().unwrap_or(relative_path);
    let in_commands = folder == Folder::Commands
        || relative_path
            .split('/')
            .rev()
            .skip(1)
            .any(|segment| segment == COMMANDS_FOLDER);
    in_commands && has_extension(file_name, &["md"]) && !file_name.ends_with(".prompt.md")
}

/// Reads the file at `relative_path` (forward slashes, relative to the collection folder).
/// Returns None for files the format skips (hidden ones).
pub fn parse_file(
    collection: &Collection,
    relative_path: &str,
    bytes: &[u8],
) -> Result<Option<Item>, FileError> {
    parse_file_in(collection, relative_path, Folder::Plain, bytes)
}

/// `parse_file` for a file of a folder that says more than the path (see `Folder`).
pub fn parse_file_in(
    collection: &Collection,
    relative_path: &str,
    folder: Folder,
    bytes: &[u8],
) -> Result<Option<Item>, FileError> {
    let file_name = relative_path.rsplit('/').next().unwrap_or(relative_path);
    if is_skipped(relative_path) {
        return Ok(None);
    }
    let origin = Origin {
        collection: Some(collection.name.clone()),
        path: Some(relative_path.to_string()),
    };
    if let Some(table_file) = relative_path.strip_prefix("_values/") {
        return parse_values(relative_path, table_file, bytes).map(Some);
    }
    let is_markdown = has_extension(file_name, &["md", "markdown"]);
    let is_plain_text = has_extension(file_name, &["txt"]);
    if is_markdown || is_plain_text {
        let text = std::str::from_utf8(bytes)
            .map_err(|err| FileError::new(relative_path, None, format!("not UTF-8 text: {err}")))?;
        let (front, body, body_line) = split_front_matter(text);
        if front.is_none() && opens_yaml_front_matter(text) {
            return Err(FileError::new(
                relative_path,
                Some(1),
                "front matter opened on line 1 is never closed; add a line `---` after its last key (a file that starts with a horizontal rule can start with a blank line instead)",
            ));
        }
        let declared_prompt = file_name.ends_with(".prompt.md");
        let default_name = file_name
            .strip_suffix(".prompt.md")
            .or_else(|| file_name.strip_suffix(".md"))
            .unwrap_or(file_name);
        let source = || dialect::Source {
            path: relative_path,
            default_name,
            body_line,
            origin: origin.clone(),
        };
        // A command file whose front matter names a `kind` is written in our format (that
        // is how `export` keeps a prompt at a command's path).
        if is_command_path(relative_path, folder) && !names_kind(front) {
            return dialect::claude_command(front, body, source())
                .map(|prompt| Some(Item::Prompt(prompt)));
        }
        if declared_prompt && dialect::is_vscode_prompt(front, body) {
            return dialect::vscode_prompt(front, body, source())
                .map(|prompt| Some(Item::Prompt(prompt)));
        }
        // Only `kind` decides which keys are allowed, so it is read on its own first.
        let kind = match front {
            Some(yaml) if !declared_prompt => parse_yaml::<KindFront>(relative_path, yaml)?.kind,
            _ => None,
        };
        if declared_prompt || kind.as_deref() == Some("prompt") {
            let front: PromptFront = match front {
                Some(yaml) => parse_yaml(relative_path, yaml)?,
                None => PromptFront::default(),
            };
            return prompt_from(front, default_name, body, body_line, relative_path, origin)
                .map(|prompt| Some(Item::Prompt(prompt)));
        }
        if let Some(kind) = kind.as_deref().filter(|kind| *kind != "resource") {
            return Err(FileError::new(
                relative_path,
                Some(2),
                format!("unknown kind '{kind}'; use 'prompt' or 'resource'"),
            ));
        }
        let resource_front: ResourceFront = match front {
            Some(yaml) => parse_yaml(relative_path, yaml)?,
            None => ResourceFront::default(),
        };
        let (heading, paragraph) = if is_markdown {
            heading_and_paragraph(body)
        } else {
            (None, None)
        };
        let info = resource_info(
            collection,
            relative_path,
            file_name,
            resource_front,
            heading,
            paragraph,
            origin,
        )?;
        return Ok(Some(Item::Resource(Resource {
            info,
            content: Content::Text(body.to_string()),
        })));
    }
    let guessed = mime_guess::from_path(file_name).first_or_octet_stream();
    let mime_type = guessed.essence_str().to_string();
    let content = match std::str::from_utf8(bytes) {
        Ok(text) if is_textual(&guessed) => Content::Text(text.to_string()),
        _ => Content::Binary(bytes.to_vec()),
    };
    let info = resource_info(
        collection,
        relative_path,
        file_name,
        ResourceFront {
            mime_type: Some(mime_type),
            ..ResourceFront::default()
        },
        None,
        None,
        origin,
    )?;
    Ok(Some(Item::Resource(Resource { info, content })))
}

/// Whether front matter sets `kind`; YAML that does not parse does not.
fn names_kind(front: Option<&str>) -> bool {
    front.is_some_and(|yaml| {
        serde_saphyr::from_str::<KindFront>(yaml).is_ok_and(|front| front.kind.is_some())
    })
}

fn has_extension(file_name: &str, extensions: &[&str]) -> bool {
    file_name
        .rsplit_once('.')
        .is_some_and(|(_, ext)| extensions.iter().any(|e| ext.eq_ignore_ascii_case(e)))
}

/// Text served as `text`: every `text/*` type and the structured-text application types.
pub fn is_textual(mime: &mime_guess::Mime) -> bool {
    mime.type_() == mime_guess::mime::TEXT
        || matches!(
            mime.subtype().as_str(),
            "json" | "xml" | "yaml" | "x-yaml" | "toml" | "javascript" | "sql" | "x-sh"
        )
        || mime
            .suffix()
            .is_some_and(|suffix| suffix == "json" || suffix == "xml")
}

/// Splits YAML front matter that starts at byte 0 (after a BOM) from the body. Returns the
/// YAML, the body, and the 1-based line the YAML starts on (for error positions).
pub(crate) fn split_front_matter(text: &str) -> (Option<&str>, &str, u64) {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return (None, text, 1);
    };
    let mut offset = 0;
    for (index, line) in rest.split_inclusive('\n').enumerate() {
        let trimmed = line.trim_end_matches(['\r', '\n']);
        if trimmed == "---" || trimmed == "..." {
            let body = &rest[offset + line.len()..];
            return (Some(&rest[..offset]), body, index as u64 + 3);
        }
        offset += line.len();
    }
    (None, text, 1)
}

/// Whether `text` opens front matter (`---` on its first line) with a line that reads as a
/// YAML key: then a missing closing `---` is a mistake to report, not a horizontal rule
/// followed by text.
pub(crate) fn opens_yaml_front_matter(text: &str) -> bool {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return false;
    };
    let first = rest.lines().next().unwrap_or("").trim_end();
    let key_length = first
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .unwrap_or(first.len());
    key_length > 0
        && first.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && first[key_length..]
            .strip_prefix(':')
            .is_some_and(|after| after.is_empty() || after.starts_with(' '))
}

pub(crate) fn parse_yaml<T: serde::de::DeserializeOwned + Default>(
    path: &str,
    yaml: &str,
) -> Result<T, FileError> {
    if yaml.trim().is_empty() {
        return Ok(T::default());
    }
    serde_saphyr::from_str(yaml).map_err(|err| {
        // Front matter starts on line 2 of the file.
        let location = err.location();
        let line = location.map(|location| location.line() + 1);
        let message = err.to_string();
        let first_line = message.lines().next().unwrap_or("invalid YAML");
        let mut text = format!("front matter: {}", without_yaml_position(first_line));
        if let Some(location) = location {
            text.push_str(&format!(" (column {})", location.column()));
        }
        FileError::new(path, line, text)
    })
}

/// serde-saphyr starts its messages with "error: line L column C: ", counted from the start
/// of the YAML rather than of the file; the file's line is reported separately.
fn without_yaml_position(message: &str) -> &str {
    let rest = message.strip_prefix("error: ").unwrap_or(message);
    let Some((position, text)) = rest.split_once(": ") else {
        return rest;
    };
    let is_position = position
        .strip_prefix("line ")
        .and_then(|position| position.split_once(" column "))
        .is_some_and(|(line, column)| {
            [line, column]
                .iter()
                .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        });
    if is_position { text } else { rest }
}

/// The one key read before the others; unknown keys are checked by the full parse after.
#[derive(Debug, Default, Deserialize)]
struct KindFront {
    kind: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ResourceFront {
    #[serde(rename = "kind")]
    _kind: Option<String>,
    name: Option<String>,
    title: Option<String>,
    description: Option<String>,
    #[serde(rename = "mimeType")]
    mime_type: Option<String>,
    #[serde(default)]
    audience: Vec<String>,
    priority: Option<f64>,
    #[serde(default)]
    icons: Vec<Icon>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct PromptFront {
    #[serde(rename = "kind")]
    _kind: Option<String>,
    name: Option<String>,
    title: Option<String>,
    description: Option<String>,
    #[serde(default)]
    icons: Vec<Icon>,
    #[serde(default)]
    arguments: Vec<ArgumentFront>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ArgumentFront {
    name: String,
    title: Option<String>,
    description: Option<String>,
    #[serde(default)]
    required: bool,
    #[serde(rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    values: Vec<Scalar>,
    completion: Option<String>,
    default: Option<Scalar>,
    pattern: Option<String>,
    max_length: Option<u64>,
    min: Option<f64>,
    max: Option<f64>,
}

/// A YAML scalar taken as the string MCP will send (`default: 5` means "5").
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Scalar {
    Bool(bool),
    Integer(i64),
    Float(f64),
    Text(String),
}

impl Scalar {
    fn into_string(self) -> String {
        match self {
            Scalar::Bool(value) => value.to_string(),
            Scalar::Integer(value) => value.to_string(),
            Scalar::Float(value) => value.to_string(),
            Scalar::Text(value) => value,
        }
    }
}

fn prompt_from(
    front: PromptFront,
    default_name: &str,
    body: &str,
    body_line: u64,
    path: &str,
    origin: Origin,
) -> Result<Prompt, FileError> {
    let (heading, paragraph) = heading_and_paragraph(body);
    let mut arguments: Vec<PromptArgument> = Vec::with_capacity(front.arguments.len());
    for arg in front.arguments {
        let argument = argument_from(arg).map_err(|message| FileError::new(path, None, message))?;
        if arguments.iter().any(|seen| seen.name == argument.name) {
            return Err(FileError::new(
                path,
                None,
                format!(
                    "argument '{}' is declared twice; give each argument its own name",
                    argument.name
                ),
            ));
        }
        arguments.push(argument);
    }
    let prompt = Prompt {
        name: front.name.unwrap_or_else(|| default_name.to_string()),
        title: front.title.or(heading),
        description: front.description.or(paragraph),
        icons: front.icons,
        arguments,
        messages: split_roles(body),
        origin,
    };
    if prompt.messages.is_empty() {
        return Err(FileError::new(
            path,
            Some(body_line),
            "the prompt has no body; write the prompt text after the front matter",
        ));
    }
    validate_name(&prompt.name).map_err(|message| FileError::new(path, Some(2), message))?;
    Ok(prompt)
}

/// A prompt name is what a host shows and sends back: keep it to one plain token.
pub fn validate_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "prompt name '{name}' must be letters, digits, '-', '_', '.' or '/' (e.g. code-review)"
        ))
    }
}

fn argument_from(arg: ArgumentFront) -> Result<PromptArgument, String> {
    let valid_identifier = arg
        .name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && arg
            .name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !valid_identifier {
        return Err(format!(
            "argument name '{}' must start with a letter and hold only letters, digits and '_' (e.g. file_path)",
            arg.name
        ));
    }
    let kind = match arg.kind.as_deref() {
        None => ArgumentType::String,
        Some(name) => ArgumentType::parse(name).ok_or_else(|| {
            format!(
                "argument '{}' has unknown type '{name}'; use one of: {}",
                arg.name,
                ArgumentType::ALL.map(|kind| kind.as_str()).join(", ")
            )
        })?,
    };
    let values: Vec<String> = arg.values.into_iter().map(Scalar::into_string).collect();
    if kind == ArgumentType::Enum && values.is_empty() {
        return Err(format!(
            "enum argument '{}' lists no values; add `values: [a, b]`",
            arg.name
        ));
    }
    if let Some(pattern) = &arg.pattern
        && pattern.is_empty()
    {
        return Err(format!("argument '{}' has an empty pattern", arg.name));
    }
    Ok(PromptArgument {
        name: arg.name,
        title: arg.title,
        description: arg.description,
        required: arg.required,
        kind,
        default: arg.default.map(Scalar::into_string),
        values,
        pattern: arg.pattern,
        max_length: arg.max_length,
        min: arg.min,
        max: arg.max,
        completion: arg.completion,
    })
}

/// A line holding only this switches the role of the text after it.
pub(crate) fn role_marker(line: &str) -> Option<Role> {
    let inner = line
        .trim()
        .strip_prefix("<!--")?
        .strip_suffix("-->")?
        .trim();
    Role::parse(inner)
}

/// Splits a body at its role markers; runs that are only white space are dropped.
pub fn split_roles(body: &str) -> Vec<MessageTemplate> {
    let mut messages = Vec::new();
    let mut role = Role::User;
    let mut current = String::new();
    let flush = |role: Role, text: &mut String, messages: &mut Vec<MessageTemplate>| {
        let trimmed = text.trim_matches(['\n', '\r']);
        if !trimmed.trim().is_empty() {
            messages.push(MessageTemplate {
                role,
                body: trimmed.to_string(),
            });
        }
        text.clear();
    };
    for line in body.split_inclusive('\n') {
        match role_marker(line) {
            Some(next) => {
                flush(role, &mut current, &mut messages);
                role = next;
            }
            None => current.push_str(line),
        }
    }
    flush(role, &mut current, &mut messages);
    messages
}

/// A description taken from a paragraph is for lists a host shows: a long paragraph (a
/// whole document with no blank line, say) is cut at a word, with an ellipsis.
fn summary(paragraph: &str) -> String {
    const LONGEST: usize = 300;
    if paragraph.chars().count() <= LONGEST {
        return paragraph.to_string();
    }
    let cut: String = paragraph.chars().take(LONGEST).collect();
    let at_word = cut
        .rfind(char::is_whitespace)
        .filter(|&at| at > LONGEST / 2)
        .unwrap_or(cut.len());
    format!("{}…", cut[..at_word].trim_end())
}

/// The body's first heading and first paragraph, as plain text.
pub(crate) fn heading_and_paragraph(body: &str) -> (Option<String>, Option<String>) {
    let mut heading: Option<String> = None;
    let mut paragraph: Option<String> = None;
    let mut current: Option<String> = None;
    for event in Parser::new(body) {
        match event {
            Event::Start(Tag::Heading { .. }) | Event::Start(Tag::Paragraph) => {
                current = Some(String::new())
            }
            Event::Text(text) | Event::Code(text) => {
                if let Some(buffer) = current.as_mut() {
                    buffer.push_str(&text);
                }
            }
            Event::SoftBreak | Event::HardBreak => {
                if let Some(buffer) = current.as_mut() {
                    buffer.push(' ');
                }
            }
            Event::End(TagEnd::Heading(level)) => {
                let text = current.take().unwrap_or_default();
                if heading.is_none() && level <= HeadingLevel::H6 && !text.trim().is_empty() {
                    heading = Some(text.trim().to_string());
                }
            }
            Event::End(TagEnd::Paragraph) => {
                let text = current.take().unwrap_or_default();
                if paragraph.is_none() && !text.trim().is_empty() {
                    paragraph = Some(summary(text.trim()));
                }
            }
            _ => {}
        }
        if heading.is_some() && paragraph.is_some() {
            break;
        }
    }
    (heading, paragraph)
}

fn resource_info(
    collection: &Collection,
    relative_path: &str,
    file_name: &str,
    front: ResourceFront,
    heading: Option<String>,
    paragraph: Option<String>,
    origin: Origin,
) -> Result<ResourceInfo, FileError> {
    let mut audience = Vec::with_capacity(front.audience.len());
    for name in &front.audience {
        audience.push(Role::parse(name).ok_or_else(|| {
            FileError::new(
                relative_path,
                None,
                format!("audience '{name}' is not 'user' or 'assistant'"),
            )
        })?);
    }
    if let Some(priority) = front.priority
        && !(0.0..=1.0).contains(&priority)
    {
        return Err(FileError::new(
            relative_path,
            None,
            format!("priority {priority} is outside 0.0 to 1.0"),
        ));
    }
    let mime_type = front.mime_type.unwrap_or_else(|| {
        mime_guess::from_path(file_name)
            .first_or_octet_stream()
            .essence_str()
            .to_string()
    });
    Ok(ResourceInfo {
        uri: collection.resource_uri(relative_path),
        name: front.name.unwrap_or_else(|| file_name.to_string()),
        title: front.title.or(heading),
        description: front.description.or(paragraph),
        mime_type,
        annotations: Annotations {
            audience,
            priority: front.priority,
        },
        icons: front.icons,
        origin,
    })
}

/// `_values/<table>.txt` (one value a line) or `_values/<table>.csv` (`value,weight,context`).
fn parse_values(path: &str, table_file: &str, bytes: &[u8]) -> Result<Item, FileError> {
    let (table, is_csv) = if let Some(table) = table_file.strip_suffix(".csv") {
        (table, true)
    } else if let Some(table) = table_file.strip_suffix(".txt") {
        (table, false)
    } else {
        return Err(FileError::new(
            path,
            None,
            "a completion table must be _values/<table>.csv or _values/<table>.txt",
        ));
    };
    if table.is_empty() || table.contains('/') {
        return Err(FileError::new(
            path,
            None,
            "a completion table file sits directly in _values/ and has a name",
        ));
    }
    let values = if is_csv {
        parse_values_csv(path, bytes)?
    } else {
        parse_values_lines(path, bytes)?
    };
    Ok(Item::Values {
        table: table.to_string(),
        values,
    })
}

/// One value per line; blank lines and `#` comments are skipped.
pub fn parse_values_lines(path: &str, bytes: &[u8]) -> Result<Vec<CompletionValue>, FileError> {
    let text = std::str::from_utf8(bytes)
        .map_err(|err| FileError::new(path, None, format!("not UTF-8 text: {err}")))?;
    // Editors on Windows often start a UTF-8 file with a byte order mark.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    Ok(text
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(|line| CompletionValue {
            value: line.to_string(),
            weight: 0.0,
            context: None,
        })
        .collect())
}

/// CSV with a `value,weight,context` header (weight and context columns optional).
pub fn parse_values_csv(path: &str, bytes: &[u8]) -> Result<Vec<CompletionValue>, FileError> {
    let mut reader = csv::ReaderBuilder::new()
        .comment(Some(b'#'))
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(bytes);
    let headers = reader
        .headers()
        .map_err(|err| FileError::new(path, Some(1), err.to_string()))?
        .clone();
    let column = |name: &str| headers.iter().position(|header| header == name);
    let Some(value_at) = column("value") else {
        return Err(FileError::new(
            path,
            Some(1),
            "the first line must be the header `value,weight,context`",
        ));
    };
    let weight_at = column("weight");
    let context_at = column("context");
    let mut values = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|err| {
            let line = err.position().map(|position| position.line());
            FileError::new(path, line, err.to_string())
        })?;
        let line = record.position().map(|position| position.line());
        let value = record.get(value_at).unwrap_or_default();
        if value.is_empty() {
            continue;
        }
        let weight = match weight_at
            .and_then(|at| record.get(at))
            .filter(|w| !w.is_empty())
        {
            None => 0.0,
            Some(text) => text
                .parse::<f64>()
                .ok()
                .filter(|w| w.is_finite())
                .ok_or_else(|| {
                    FileError::new(path, line, format!("weight '{text}' is not a number"))
                })?,
        };
        let context = match context_at
            .and_then(|at| record.get(at))
            .filter(|c| !c.is_empty())
        {
            None => None,
            Some(text) => Some(parse_context(text).ok_or_else(|| {
                FileError::new(
                    path,
                    line,
                    format!("context '{text}' must be argument=value (e.g. language=python)"),
                )
            })?),
        };
        values.push(CompletionValue {
            value: value.to_string(),
            weight,
            context,
        });
    }
    Ok(values)
}

/// `argument=value`.
pub fn parse_context(text: &str) -> Option<(String, String)> {
    let (name, value) = text.split_once('=')?;
    let (name, value) = (name.trim(), value.trim());
    (!name.is_empty() && !value.is_empty()).then(|| (name.to_string(), value.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collection() -> Collection {
        Collection {
            name: "docs".into(),
            scheme: DEFAULT_SCHEME.into(),
        }
    }

    #[test]
    fn uris_encode_what_rfc3986_forbids() {
        assert_eq!(
            collection().resource_uri("a b/c#d.md"),
            "shelf://docs/a%20b/c%23d.md"
        );
    }

    #[test]
    fn only_yaml_after_an_opening_line_is_taken_for_front_matter() {
        assert!(opens_yaml_front_matter("---\nname: x\nbody\n"));
        assert!(opens_yaml_front_matter(
            "\u{feff}---\r\ndescription:\n  text\n"
        ));
        assert!(!opens_yaml_front_matter("---\nSome text after a rule.\n"));
        assert!(!opens_yaml_front_matter("---\n\nname: x\n"));
        assert!(!opens_yaml_front_matter("---\nhttp://example.com\n"));
        assert!(!opens_yaml_front_matter("text\n---\nname: x\n"));
    }

    #[test]
    fn unclosed_front_matter_is_an_error_that_says_how_to_close_it() {
        let err = parse_file(&collection(), "guide.md", b"---\ntitle: Guide\n\n# Guide\n")
            .expect_err("an unclosed front matter is refused");
        assert_eq!((err.path.as_str(), err.line), ("guide.md", Some(1)));
        assert!(err.message.contains("never closed"), "{}", err.message);
        let err = parse_file(&collection(), "p.prompt.md", b"---\nname: p\nHello\n")
            .expect_err("also for a prompt");
        assert_eq!(err.line, Some(1));
        // A horizontal rule at the start is a rule.
        let item = parse_file(&collection(), "rule.md", b"---\nText after a rule.\n")
            .expect("a rule then text is a document");
        assert!(item.is_some());
    }

    #[test]
    fn front_matter_only_at_the_start() {
        let (front, body, line) = split_front_matter("---\nname: x\n---\nbody\n");
        assert_eq!(front, Some("name: x\n"));
        assert_eq!(body, "body\n");
        assert_eq!(line, 4);
        let (front, _, _) = split_front_matter("text\n---\nname: x\n---\n");
        assert_eq!(front, None);
    }

    #[test]
    fn a_long_first_paragraph_becomes_a_short_description() {
        let body = format!("# Title\n\n{}\n", "word ".repeat(500));
        let (_, description) = heading_and_paragraph(&body);
        let description = description.unwrap_or_default();
        assert!(description.chars().count() <= 301, "{}", description.len());
        assert!(description.ends_with("word…"), "{description}");
    }

    #[test]
    fn role_markers_split_messages() {
        let messages = split_roles("hello\n<!-- assistant -->\nhi\n<!-- user -->\nmore\n");
        let roles: Vec<_> = messages.iter().map(|m| (m.role, m.body.as_str())).collect();
        assert_eq!(
            roles,
            [
                (Role::User, "hello"),
                (Role::Assistant, "hi"),
                (Role::User, "more")
            ]
        );
    }

    #[test]
    fn hidden_paths_are_skipped_but_the_tools_prompt_folders() {
        assert!(is_skipped(".git/config"));
        assert!(is_skipped("notes/.DS_Store"));
        assert!(is_skipped(".claude/settings.json"));
        assert!(is_skipped(".github/workflows/ci.yml"));
        assert!(is_skipped(".claude/commands/.draft.md"));
        assert!(!is_skipped(".claude/commands/fix.md"));
        assert!(!is_skipped("app/.github/prompts/new.prompt.md"));
        assert!(!skips_folder(".claude"));
        assert!(skips_folder(".git"));
        assert!(is_command_path("commands/fix.md", Folder::Plain));
        assert!(is_command_path("fix.md", Folder::Commands));
        assert!(!is_command_path("fix.md", Folder::Plain));
        assert!(!is_command_path("commands/fix.prompt.md", Folder::Plain));
        assert!(!is_command_path("commands/notes.txt", Folder::Plain));
        assert!(!is_command_path("commands.md", Folder::Plain));
    }

    #[test]
    fn kind_prompt_allows_prompt_keys() {
        let item = parse_file(
            &collection(),
            "review.md",
            b"---\nkind: prompt\narguments:\n  - name: code\n---\nReview {{ code }}\n",
        )
        .unwrap();
        let Some(Item::Prompt(prompt)) = item else {
            panic!("not a prompt: {item:?}");
        };
        assert_eq!(prompt.name, "review");
        assert_eq!(prompt.arguments[0].name, "code");
    }

    #[test]
    fn values_skip_a_byte_order_mark() {
        let values = parse_values_lines("v.txt", "\u{feff}rust\ngo\n".as_bytes()).unwrap();
        assert_eq!(values[0].value, "rust");
        let values =
            parse_values_csv("v.csv", "\u{feff}value,weight\nrust,3\n".as_bytes()).unwrap();
        assert_eq!(values[0].value, "rust");
    }

    #[test]
    fn broken_yaml_names_the_line() {
        let err = parse_file(
            &collection(),
            "p.prompt.md",
            b"---\nname: x\narguments: [\n---\nbody",
        )
        .unwrap_err();
        assert_eq!(err.path, "p.prompt.md");
        assert_eq!(err.line, Some(3), "{err}");
        assert!(!err.message.contains("line 2"), "{err}");
    }
}
