//! The library folder format (docs/format.md): turns one file of a collection into a prompt,
//! a resource or a completion table. The embedded seed and `promptshelf import` both read
//! files through here, so they cannot drift apart. This file holds the entry points
//! (`parse_file`, `parse_file_in`), decides what a file is, names nested commands that share
//! a name, and places a problem at its line of a file (`Place`); each submodule reads or writes
//! one part of the format:
//!
//! - `paths`: collections and their URIs, which paths are skipped, which files are commands
//! - `front_matter`: YAML front matter found at the start of a file and parsed
//! - `kept`: the front matter keys a file's reader leaves, kept with its item
//! - `prompt_file`: our own prompt files (front matter keys, typed arguments) into prompts
//! - `roles`: role markers, which split a body into messages
//! - `summary`: a markdown body's first heading and paragraph, the fallback title and
//!   description (for a prompt, plain words only)
//! - `resource_file`: documents and other files into resources
//! - `media`: whether a file's bytes are text or binary, and its MIME type
//! - `value_table`: `_values/` files into completion tables
//! - `dialect`: the prompt files of Claude Code, VS Code, Cursor and Gemini CLI, Agent
//!   Skills' `SKILL.md`, and CSV lists of prompts (`prompt_list`), into prompts
//! - `links`: relative links between files pointed at their URIs, and the ones that point
//!   at no file
//! - `emit`: the way back, from an item to the text of its file
//! - `yaml`: YAML scalars, lists and numbers written so they read back the same

mod dialect;
pub(crate) mod emit;
mod front_matter;
pub(crate) mod hidden;
mod kept;
mod links;
pub(crate) mod manifest;
mod media;
mod paths;
mod prompt_file;
mod resource_file;
pub(crate) mod roles;
mod summary;
mod value_table;
pub(crate) mod yaml;

use serde::Deserialize;

pub(crate) use dialect::{
    CLAUDE_ALL_ARGUMENTS, CLAUDE_ALL_ARGUMENTS_DESCRIPTION, CLAUDE_HOST_KEYS,
    MAX_SKILL_DESCRIPTION, SKILL_FRONT_MATTER_KEYS, SKILL_HOST_KEYS, VSCODE_HOST_KEYS,
    claude_substitutes, is_appended_lead, prompt_list, skill_front_matter, validate_skill_name,
    vscode_fills, vscode_variable,
};
pub use links::{link_targets, resolve_links};
pub(crate) use links::{missing_links, relative_links};
pub(crate) use media::served_as;
pub use paths::{Collection, DEFAULT_SCHEME, Folder};
pub(crate) use paths::{
    PLUGIN_MANIFEST_FOLDER, command_folder, gemini_command_name, is_command_path,
    is_cursor_command, is_gemini_commands_path, is_skipped, skill_file, skips_folder,
};
pub(crate) use prompt_file::validate_name;
pub(crate) use resource_file::{METADATA_SUFFIX, apply_metadata, described_by};
pub(crate) use value_table::{parse_context, parse_values_csv, parse_values_lines};

use front_matter::{opens_yaml_front_matter, parse_yaml, split_front_matter};
use paths::has_extension;
use prompt_file::prompt_from;
use resource_file::{other_resource, text_resource};
use value_table::parse_values;

use crate::model::{CompletionValue, Origin, Prompt, Resource};

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
#[error(
    "{path}{}{}: {message}",
    line.map(|line| format!(":{line}")).unwrap_or_default(),
    column.map(|column| format!(":{column}")).unwrap_or_default()
)]
pub struct FileError {
    pub path: String,
    pub line: Option<u64>,
    /// The column (from 1, in characters) of a problem found at a character of the line.
    pub column: Option<u64>,
    pub message: String,
}

impl FileError {
    pub(crate) fn new(path: &str, line: Option<u64>, message: impl Into<String>) -> FileError {
        FileError {
            path: path.to_string(),
            line,
            column: None,
            message: message.into(),
        }
    }
}

/// The hidden text of the file at `path` (see `hidden`), each at its line and column:
/// invisible characters and, in markdown, HTML a markdown view does not show; and lookalike
/// letters in `path` itself, which names its item. Nothing for a file that is not UTF-8.
pub(crate) fn hidden_in(path: &str, bytes: &[u8]) -> Vec<FileError> {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Vec::new();
    };
    let markdown = has_extension(path, &["md", "markdown", "mdc"]);
    let name = hidden::lookalike(path).map(|found| FileError::new(path, None, found.message()));
    name.into_iter()
        .chain(
            hidden::scan(text, markdown)
                .into_iter()
                .map(|found| FileError {
                    path: path.to_string(),
                    line: Some(found.line),
                    column: Some(found.column),
                    message: found.message(),
                }),
        )
        .collect()
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

/// `parse_file` for a file of a folder that says more than the path (see `Folder`). Read
/// strictly, as an author's file: a key our own format does not know is an error.
pub fn parse_file_in(
    collection: &Collection,
    relative_path: &str,
    folder: Folder,
    bytes: &[u8],
) -> Result<Option<Item>, FileError> {
    Ok(read_file(collection, relative_path, folder, bytes, true)?.map(|read| read.item))
}

/// `parse_file_in` as an import reads the file: a key no reader of it takes is kept with its
/// item, not refused (what `export` reads its files back with).
pub(crate) fn parse_file_kept(
    collection: &Collection,
    relative_path: &str,
    folder: Folder,
    bytes: &[u8],
) -> Result<Option<Item>, FileError> {
    Ok(read_file(collection, relative_path, folder, bytes, false)?.map(|read| read.item))
}

/// A file read by `read_file`.
pub(crate) struct FileRead {
    pub item: Item,
    /// What was kept or read leniently to read it.
    pub warnings: Vec<FileError>,
    /// A host's own file (a command, a VS Code prompt file, a skill's), whose relative links
    /// to no file are often examples for the model rather than links of the library.
    pub host_file: bool,
}

/// `parse_file_in`, and the warnings of what was kept to read the file: a front matter key
/// no reader of it takes is kept with its item (`kept`), with a warning, unless `strict`
/// and the file is in our own format, where it is the error.
pub(crate) fn read_file(
    collection: &Collection,
    relative_path: &str,
    folder: Folder,
    bytes: &[u8],
    strict: bool,
) -> Result<Option<FileRead>, FileError> {
    let mut warnings = Vec::new();
    let mut host_file = false;
    let found = (collection, relative_path, folder, bytes);
    let item = read_item(found, strict, &mut warnings, &mut host_file)?;
    Ok(item.map(|item| FileRead {
        item,
        warnings,
        host_file,
    }))
}

fn read_item(
    (collection, relative_path, folder, bytes): (&Collection, &str, Folder, &[u8]),
    strict: bool,
    warnings: &mut Vec<FileError>,
    host_file: &mut bool,
) -> Result<Option<Item>, FileError> {
    let file_name = relative_path.rsplit('/').next().unwrap_or(relative_path);
    if is_skipped(relative_path) {
        return Ok(None);
    }
    let origin = Origin {
        collection: Some(collection.name.clone()),
        path: Some(relative_path.to_string()),
        commit: None,
    };
    if let Some(table_file) = relative_path.strip_prefix("_values/") {
        return parse_values(relative_path, table_file, bytes).map(Some);
    }
    let skill = skill_file(relative_path, folder);
    if let Some((skill_name, inside)) = skill.filter(|(_, inside)| *inside != SKILL_FILE) {
        // The files of a skill are served as they are, at the URIs the skills extension of
        // MCP gives them: `skill://NAME/PATH`.
        let mut resource = other_resource(collection, relative_path, file_name, bytes, origin)?;
        resource.info.uri = skill_uri(skill_name, inside);
        *host_file = true;
        return Ok(Some(Item::Resource(resource)));
    }
    // Under `.gemini/commands/` every `.toml` is a Gemini CLI command; elsewhere (an
    // extension's `commands/`, `~/.gemini/commands` imported itself) one is when it has a
    // command's shape, and any other `.toml` is a document.
    if has_extension(file_name, &["toml"])
        && (is_gemini_commands_path(relative_path) || dialect::is_gemini_command(bytes))
    {
        let text = std::str::from_utf8(bytes)
            .map_err(|err| FileError::new(relative_path, None, format!("not UTF-8 text: {err}")))?;
        let source = dialect::Source {
            path: relative_path,
            default_name: gemini_command_name(relative_path),
            body_line: 1,
            origin,
            command_folder: None,
        };
        *host_file = true;
        let mut prompt = dialect::gemini_command(text, source)?;
        let (meta, kept) = kept::keep_toml(relative_path, text, &dialect::GEMINI_KEYS)?;
        prompt.meta = meta;
        warnings.extend(kept);
        warnings.extend(dialect::gemini_warning(text, relative_path));
        return Ok(Some(Item::Prompt(prompt)));
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
        // A document's front matter that is not YAML, which Claude Code reads line by line
        // (its agents' `description: Use it when: ...`), is read so too unless `strict`.
        let relined = (!strict
            && !declared_prompt
            && skill.is_none()
            && !is_cursor_command(relative_path)
            && !is_command_path(relative_path, folder))
        .then(|| front.and_then(|yaml| kept::relined(relative_path, yaml)))
        .flatten()
        .map(|(yaml, warning)| {
            warnings.push(warning);
            yaml
        });
        let written = front;
        let front = relined.as_deref().or(written);
        // The front matter keys the file's reader leaves, kept with its item.
        let mut keep = |keys: &kept::Keys| {
            let (meta, notes) = kept::keep(relative_path, written, keys, strict)?;
            warnings.extend(notes);
            Ok::<_, FileError>(meta)
        };
        let source = || dialect::Source {
            path: relative_path,
            default_name,
            body_line,
            origin: origin.clone(),
            command_folder: command_folder(relative_path, folder),
        };
        // A `SKILL.md` whose front matter names a `kind` is ours, as `export` writes one.
        if let Some((skill_name, _)) = skill.filter(|_| !names_kind(front)) {
            *host_file = true;
            let (mut prompt, _) = dialect::skill(front, body, skill_name, source())?;
            prompt.meta = keep(&dialect::SKILL_KEYS)?;
            warnings.extend(dialect::claude_warning(body, body_line, relative_path));
            return Ok(Some(Item::Prompt(prompt)));
        }
        if is_cursor_command(relative_path) && !names_kind(front) {
            *host_file = true;
            return dialect::cursor_command(body, source())
                .map(|prompt| Some(Item::Prompt(prompt)));
        }
        // A command file whose front matter names a `kind` is written in our format (that
        // is how `export` keeps a prompt at a command's path).
        if is_command_path(relative_path, folder) && !names_kind(front) {
            *host_file = true;
            let mut prompt = dialect::claude_command(front, body, source())?;
            prompt.meta = keep(&dialect::CLAUDE_KEYS)?;
            warnings.extend(dialect::claude_warning(body, body_line, relative_path));
            return Ok(Some(Item::Prompt(prompt)));
        }
        if declared_prompt && dialect::is_vscode_prompt(front, body) {
            *host_file = true;
            let mut prompt = dialect::vscode_prompt(front, body, source())?;
            prompt.meta = keep(&dialect::VSCODE_KEYS)?;
            return Ok(Some(Item::Prompt(prompt)));
        }
        // Only `kind` decides which keys are allowed, so it is read on its own first.
        let kind = match front {
            Some(yaml) if !declared_prompt => parse_yaml::<KindFront>(relative_path, yaml)?.kind,
            _ => None,
        };
        if declared_prompt || kind.as_deref() == Some("prompt") {
            let mut prompt =
                prompt_from(front, default_name, body, body_line, relative_path, origin)?;
            prompt.meta = keep(&prompt_file::PROMPT_KEYS)?;
            return Ok(Some(Item::Prompt(prompt)));
        }
        if let Some(kind) = kind.as_deref().filter(|kind| *kind != "resource") {
            return Err(FileError::new(
                relative_path,
                Some(2),
                format!("unknown kind '{kind}'; use 'prompt' or 'resource'"),
            ));
        }
        let mut resource = text_resource(
            collection,
            relative_path,
            file_name,
            front,
            body,
            is_markdown,
            origin,
        )?;
        resource.info.meta = keep(&resource_file::RESOURCE_KEYS)?;
        return Ok(Some(Item::Resource(resource)));
    }
    other_resource(collection, relative_path, file_name, bytes, origin)
        .map(|resource| Some(Item::Resource(resource)))
}

/// Whether a file of this name may start with front matter (markdown and plain text files);
/// any other file is its content alone.
pub(crate) fn has_front_matter(file_name: &str) -> bool {
    has_extension(file_name, &["md", "markdown", "txt"])
}

/// A skill's `SKILL.md` (at `relative_path`, with these `bytes`) as the resource the Skills
/// extension of MCP reads beside the prompt `parse_file_in` makes of it:
/// `skill://NAME/SKILL.md`, `text/markdown`, the file as it is, named after the skill,
/// titled as its prompt is and described by its front matter's description, whole, so that
/// a list shows the skill rather than a file called `SKILL.md`. None for any other file, and for a `SKILL.md` written
/// in our format (its front matter names a `kind`).
pub(crate) fn skill_document(
    collection: &Collection,
    relative_path: &str,
    folder: Folder,
    bytes: &[u8],
) -> Option<Result<Resource, FileError>> {
    let (skill_name, front, body, body_line) = match skill_text(relative_path, folder, bytes)? {
        Ok(found) => found,
        Err(err) => return Some(Err(err)),
    };
    let origin = Origin {
        collection: Some(collection.name.clone()),
        path: Some(relative_path.to_string()),
        commit: None,
    };
    let source = dialect::Source {
        path: relative_path,
        default_name: skill_name,
        body_line,
        origin: origin.clone(),
        command_folder: None,
    };
    Some(
        dialect::skill(front, body, skill_name, source).and_then(|(prompt, description)| {
            let mut resource =
                other_resource(collection, relative_path, SKILL_FILE, bytes, origin)?;
            resource.info.uri = skill_uri(skill_name, SKILL_FILE);
            resource.info.name = prompt.name;
            resource.info.title = prompt.title;
            resource.info.description = Some(description);
            resource.info.mime_type = "text/markdown".to_string();
            Ok(resource)
        }),
    )
}

/// What an import says of a skill's `SKILL.md` that it imports all the same: a description
/// longer than Agent Skills allows, which the hosts load. None for any other file.
pub(crate) fn skill_warning(
    relative_path: &str,
    folder: Folder,
    bytes: &[u8],
) -> Option<FileError> {
    let (_, front, _, _) = skill_text(relative_path, folder, bytes)?.ok()?;
    dialect::description_warning(front, relative_path)
}

/// A `SKILL.md` as text: the skill's name, the front matter, the body and the body's first
/// line.
type SkillText<'a> = (&'a str, Option<&'a str>, &'a str, u64);

/// A skill's `SKILL.md` read as text; None for any other file and for a `SKILL.md` in our
/// format.
fn skill_text<'a>(
    relative_path: &'a str,
    folder: Folder,
    bytes: &'a [u8],
) -> Option<Result<SkillText<'a>, FileError>> {
    let (skill_name, inside) = skill_file(relative_path, folder)?;
    if inside != SKILL_FILE {
        return None;
    }
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(err) => {
            let message = format!("not UTF-8 text: {err}");
            return Some(Err(FileError::new(relative_path, None, message)));
        }
    };
    let (front, body, body_line) = split_front_matter(text);
    if names_kind(front) {
        return None;
    }
    Some(Ok((skill_name, front, body, body_line)))
}

/// The file of a skill folder that is the skill.
const SKILL_FILE: &str = "SKILL.md";
/// The scheme of a skill's files (the skills extension of MCP names them `skill://NAME/PATH`).
pub(crate) const SKILL_SCHEME: &str = "skill";

/// The URI of the file at `inside` (`references/forms.md`; "" for the skill's folder, with
/// its `/`) of the skill `skill`: `skill://NAME/PATH`, each segment percent-encoded.
pub(crate) fn skill_uri(skill: &str, inside: &str) -> String {
    Collection {
        name: skill.to_string(),
        scheme: SKILL_SCHEME.to_string(),
    }
    .resource_uri(inside)
}

/// The name a Claude Code command in a subfolder of its `commands` folder takes when another
/// prompt of the same import has its file's name: the folders and the name joined by `-`
/// (`git/commit.md` is `git-commit`). Returns (the file's name, that name); None for a file
/// that is not such a command.
pub(crate) fn nested_command_names(
    relative_path: &str,
    folder: Folder,
) -> Option<(String, String)> {
    let folders = command_folder(relative_path, folder)?;
    let file_name = relative_path.rsplit('/').next().unwrap_or(relative_path);
    let stem = file_name.strip_suffix(".md").unwrap_or(file_name);
    let name = prompt_file::sanitize_name(stem);
    let qualified = prompt_file::sanitize_name(&format!("{}-{stem}", folders.replace('/', "-")));
    Some((name, qualified))
}

/// Where in an item's file a problem with the item lies.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Place {
    /// A line (from 1) of a message template (from 0); a document's text is message 0.
    Message { message: usize, line: usize },
    /// The declaration of this argument in the front matter.
    Argument(String),
    /// The first line of the body that holds this text (a URI, say).
    Text(String),
}

/// The line of the file `text` (of a prompt, or else of a document) that `place` is on, when
/// it can be found.
pub(crate) fn line_in_file(text: &str, prompt: bool, place: &Place) -> Option<u64> {
    let (front, body, body_line) = split_front_matter(text);
    match place {
        Place::Message { message, line } => {
            let start = if prompt {
                roles::split_roles_at_lines(body).get(*message)?.1
            } else {
                0
            };
            Some(body_line + start + *line as u64 - 1)
        }
        Place::Argument(name) => front_matter::argument_line(front?, name),
        Place::Text(needle) => body
            .lines()
            .position(|line| line.contains(needle.as_str()))
            .map(|index| body_line + index as u64),
    }
}

/// Whether front matter sets `kind`; YAML that does not parse does not.
fn names_kind(front: Option<&str>) -> bool {
    front.is_some_and(|yaml| {
        serde_saphyr::from_str::<KindFront>(yaml).is_ok_and(|front| front.kind.is_some())
    })
}

/// The one key read before the others; unknown keys are checked by the full parse after.
#[derive(Debug, Default, Deserialize)]
struct KindFront {
    kind: Option<String>,
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
    fn places_are_found_at_their_lines_of_the_file() {
        let text =
            "---\narguments:\n  - name: who\n---\n\nHello\n<!-- assistant -->\n\nHi {{ x }}\n";
        let at = |place: Place| line_in_file(text, true, &place);
        assert_eq!(at(Place::Argument("who".into())), Some(3));
        assert_eq!(
            at(Place::Message {
                message: 0,
                line: 1
            }),
            Some(6)
        );
        assert_eq!(
            at(Place::Message {
                message: 1,
                line: 1
            }),
            Some(9)
        );
        assert_eq!(at(Place::Text("{{ x }}".into())), Some(9));
        assert_eq!(at(Place::Argument("nobody".into())), None);
        assert_eq!(
            line_in_file(
                "# Doc\n\n[x](y.md)\n",
                false,
                &Place::Message {
                    message: 0,
                    line: 3
                }
            ),
            Some(3)
        );
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
