//! `export DIR --format F` for the hosts' own files: every prompt written as the host's
//! command, prompt file or skill under DIR, the project's root (docs/format.md, "Exporting
//! for a host"). This file holds what every format shares: which folder each one writes, the
//! refusal of a DIR that is already a host's folder, the prompt read as pieces, what a format
//! cannot say (reported as warnings that name the prompt), and each file read back.
//! One module per format writes its files: `claude`, `vscode`, `cursor`, `gemini`, `skills`.

mod claude;
mod cursor;
mod gemini;
mod skills;
mod vscode;

use std::collections::BTreeMap;
use std::path::{Component, Path};

use anyhow::{Result, bail};

use super::body::{self, Piece};
use super::{Report, write_file};
use crate::library::{self, Collection, Folder, Item};
use crate::model::{ArgumentType, Content, Prompt, PromptArgument, StoredPrompt, StoredResource};
use crate::store;

/// The file formats `export --format` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub(crate) enum Format {
    /// Our own folder format (docs/format.md), which can say everything the library holds
    #[default]
    Promptshelf,
    /// Claude Code commands: .claude/commands/NAME.md
    ClaudeCommands,
    /// VS Code prompt files: .github/prompts/NAME.prompt.md
    VscodePrompts,
    /// Cursor commands: .cursor/commands/NAME.md
    CursorCommands,
    /// Gemini CLI commands: .gemini/commands/NAME.toml
    GeminiCommands,
    /// Agent Skills: .agents/skills/NAME/SKILL.md with the resources it uses in references/
    Skills,
}

impl Format {
    /// The folder under the project root that the host reads.
    pub(crate) fn folder(self) -> &'static str {
        match self {
            Format::Promptshelf => "",
            Format::ClaudeCommands => ".claude/commands",
            Format::VscodePrompts => ".github/prompts",
            Format::CursorCommands => ".cursor/commands",
            Format::GeminiCommands => ".gemini/commands",
            Format::Skills => ".agents/skills",
        }
    }

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Format::Promptshelf => "promptshelf",
            Format::ClaudeCommands => "claude-commands",
            Format::VscodePrompts => "vscode-prompts",
            Format::CursorCommands => "cursor-commands",
            Format::GeminiCommands => "gemini-commands",
            Format::Skills => "skills",
        }
    }
}

/// A prompt as a format module sees it.
pub(super) struct Source<'a> {
    /// The prompt, without the argument the host fills itself (`appended`).
    pub prompt: &'a Prompt,
    pub pieces: Vec<Piece>,
    /// The argument that receives the text typed after the command at the prompt's end, as
    /// an import of a command without a placeholder for it makes it: every host adds that
    /// text itself, so it is left out of the pieces and of `prompt`.
    pub appended: Option<&'a PromptArgument>,
    /// The resources the prompt embeds or links, by URI, as far as the library has them.
    pub resources: BTreeMap<String, (StoredResource, Content)>,
    /// For `--format skills`, when the prompt was imported from a skill folder: every file
    /// of that skill (`skill://NAME/...`, its `SKILL.md` among them), in URI order.
    pub skill: Vec<(StoredResource, Content)>,
}

/// One file to write, relative to DIR.
pub(super) struct File {
    pub path: String,
    pub bytes: Vec<u8>,
}

/// What one prompt became: its files, the prompt's own first.
pub(super) struct Written {
    pub files: Vec<File>,
    /// The file that holds the prompt itself (read back to check it).
    pub prompt_file: String,
}

/// The hosts' own folders: a DIR that is one of them, or one of their prompt and skill
/// folders (`.claude/commands`), is a host's folder given where the project root was meant.
const HOST_FOLDERS: [&str; 5] = [".claude", ".github", ".cursor", ".gemini", ".agents"];
const HOST_SUBFOLDERS: [&str; 3] = ["commands", "prompts", "skills"];

/// Refuses a DIR that is already a host's folder, which would put `.claude/commands` inside
/// `.claude/commands`. A project that merely is named `prompts` is not refused.
fn check_dir(dir: &Path, format: Format) -> Result<()> {
    let parts: Vec<String> = dir
        .components()
        .filter_map(|part| match part {
            Component::Normal(name) => Some(name.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    let host_at = match parts.as_slice() {
        [.., host, sub]
            if HOST_FOLDERS.contains(&host.as_str()) && HOST_SUBFOLDERS.contains(&sub.as_str()) =>
        {
            Some(2)
        }
        [.., host] if HOST_FOLDERS.contains(&host.as_str()) => Some(1),
        _ => None,
    };
    let Some(depth) = host_at else {
        return Ok(());
    };
    let mut root = dir.to_path_buf();
    for _ in 0..depth {
        root.pop();
    }
    let root = if root.as_os_str().is_empty() {
        ".".to_string()
    } else {
        root.display().to_string()
    };
    bail!(
        "{} is a host's folder; `export DIR --format {}` takes the project's root and writes \
         DIR/{}/ itself (run `promptshelf export {root} --format {}`)",
        dir.display(),
        format.as_str(),
        format.folder(),
        format.as_str(),
    );
}

/// Writes every prompt of `prompts` as `format` under `dir`. Every file is made and read back
/// before the first is written, so a prompt that cannot be exported writes nothing.
pub(super) fn run(
    conn: &rusqlite::Connection,
    prompts: &[&StoredPrompt],
    dir: &Path,
    format: Format,
    report: &mut Report,
) -> Result<()> {
    check_dir(dir, format)?;
    for made in files(conn, prompts, format, report)? {
        for file in &made.files {
            write_file(dir, &file.path, &file.bytes, made.modified_ms, report)?;
        }
    }
    Ok(())
}

/// What one prompt made in a format.
pub(super) struct Made {
    /// Its files, their paths under the project root.
    pub files: Vec<File>,
    /// The prompt's lastModified, the files' mtime.
    pub modified_ms: i64,
    /// What the format cannot say of it, as `report.warnings` has it too.
    pub warning: Option<String>,
}

/// The files of every prompt of `prompts` as `format`, each prompt read back; what the
/// format cannot say and the prompts left out in `report.warnings`, and `report.prompts`
/// counted.
pub(super) fn files(
    conn: &rusqlite::Connection,
    prompts: &[&StoredPrompt],
    format: Format,
    report: &mut Report,
) -> Result<Vec<Made>> {
    let mut planned: Vec<Made> = Vec::new();
    let mut taken: BTreeMap<String, String> = BTreeMap::new();
    for stored in prompts {
        let prompt = &stored.prompt;
        let (mut pieces, roles) = body::prompt_pieces(prompt);
        let appended = host_appended(prompt, &mut pieces);
        let without = appended.map(|argument| Prompt {
            arguments: prompt
                .arguments
                .iter()
                .filter(|a| a.name != argument.name)
                .cloned()
                .collect(),
            ..prompt.clone()
        });
        let mut resources = BTreeMap::new();
        for piece in &pieces {
            if let Piece::Embed(uri) | Piece::Link(uri) = piece
                && let Some(found) = store::read::resource_content(conn, uri)?
            {
                resources.insert(uri.clone(), found);
            }
        }
        let skill = match format {
            Format::Skills => skill_files(conn, stored)?,
            _ => Vec::new(),
        };
        let source = Source {
            prompt: without.as_ref().unwrap_or(prompt),
            pieces,
            appended,
            resources,
            skill,
        };
        let mut lost = Lost::default();
        if roles {
            lost.say("its messages' roles (the host sends the whole text as one user message)");
        }
        let code: Vec<&str> = source
            .pieces
            .iter()
            .filter_map(|piece| match piece {
                Piece::Code(code) => Some(code.as_str()),
                _ => None,
            })
            .collect();
        if !code.is_empty() {
            lost.say(&format!(
                "template code the host cannot run, written as it is: {}",
                shorten(&code.join(" "))
            ));
        }
        let written = match format {
            // Written by `export::run` itself, which never calls this with it.
            Format::Promptshelf => None,
            Format::ClaudeCommands => claude::file(&source, &mut lost),
            Format::VscodePrompts => vscode::file(&source, &mut lost),
            Format::CursorCommands => cursor::file(&source, &mut lost),
            Format::GeminiCommands => gemini::file(&source, &mut lost),
            Format::Skills => skills::files(&source, &mut lost),
        };
        let Some(written) = written else {
            // The format said last why it could not write the prompt.
            report.warnings.push(format!(
                "prompt {}: left out: {}",
                prompt.name,
                lost.items
                    .last()
                    .map(String::as_str)
                    .unwrap_or("no file for it")
            ));
            continue;
        };
        if let Some(other) = taken.get(&written.prompt_file) {
            report.warnings.push(format!(
                "prompt {}: {} is already written for prompt {other}; left out",
                prompt.name, written.prompt_file
            ));
            continue;
        }
        taken.insert(written.prompt_file.clone(), prompt.name.clone());
        read_back(prompt, &written, &mut lost);
        let warning = (!lost.items.is_empty()).then(|| {
            format!(
                "prompt {}: {} cannot say {}",
                prompt.name,
                format.as_str(),
                lost.items.join("; ")
            )
        });
        report.warnings.extend(warning.clone());
        report.prompts += 1;
        planned.push(Made {
            files: written.files,
            modified_ms: stored.last_modified,
            warning,
        });
    }
    Ok(planned)
}

/// The argument of `prompt` that receives the text typed after the command at its end
/// (`body::appended`), taken off `pieces`; None when there is none, or when the argument is
/// also used before it, where the host's own appending would not give it.
fn host_appended<'p>(prompt: &'p Prompt, pieces: &mut Vec<Piece>) -> Option<&'p PromptArgument> {
    let (name, at) = body::appended(pieces)?;
    let argument = prompt.arguments.iter().find(|a| a.name == name)?;
    if pieces[..at]
        .iter()
        .any(|piece| matches!(piece, Piece::Var(used) if *used == argument.name))
    {
        return None;
    }
    pieces.truncate(at);
    Some(argument)
}

/// Whether `stored` was imported from a skill folder: `skill://NAME/SKILL.md` is a resource
/// and comes from the prompt's own file (`library::skill_document`).
pub(super) fn is_skill(conn: &rusqlite::Connection, stored: &StoredPrompt) -> Result<bool> {
    let document = library::skill_uri(&stored.prompt.name, "SKILL.md");
    Ok(store::read::resource(conn, &document)?
        .is_some_and(|document| document.info.origin == stored.prompt.origin))
}

/// The files of the skill folder `stored` was imported from: the resources under
/// `skill://NAME/` when `skill://NAME/SKILL.md` is one and comes from the prompt's own file
/// (`library::skill_document`); none for any other prompt.
fn skill_files(
    conn: &rusqlite::Connection,
    stored: &StoredPrompt,
) -> Result<Vec<(StoredResource, Content)>> {
    if !is_skill(conn, stored)? {
        return Ok(Vec::new());
    }
    let folder = library::skill_uri(&stored.prompt.name, "");
    let mut files = Vec::new();
    for uri in store::read::resource_uris_with_prefix(conn, &folder)? {
        if let Some(found) = store::read::resource_content(conn, &uri)? {
            files.push(found);
        }
    }
    Ok(files)
}

/// The prompt file read back as an import would read it, to say what comes back different.
fn read_back(prompt: &Prompt, written: &Written, lost: &mut Lost) {
    let Some(file) = written
        .files
        .iter()
        .find(|file| file.path == written.prompt_file)
    else {
        return;
    };
    let collection = Collection {
        name: "export".to_string(),
        scheme: library::DEFAULT_SCHEME.to_string(),
    };
    match library::parse_file_kept(&collection, &file.path, Folder::Plain, &file.bytes) {
        Ok(Some(Item::Prompt(read))) => {
            if read.name != prompt.name {
                lost.say(&format!("its name (it imports as '{}')", read.name));
            }
            // A title or description the file has no place for may still come back from
            // the body's first heading or paragraph; only one that does not is lost.
            for (what, had, back) in [
                ("title", &prompt.title, &read.title),
                ("description", &prompt.description, &read.description),
            ] {
                if had.is_some() && back != had {
                    lost.say(&format!("its {what}"));
                }
            }
            let names = |prompt: &Prompt| -> Vec<String> {
                prompt.arguments.iter().map(|a| a.name.clone()).collect()
            };
            // The text after the command that the file's host adds at its end comes back as
            // an argument of the import; only one the prompt had counts.
            let mut back = names(&read);
            if let Some((implicit, _)) = body::appended(&body::prompt_pieces(&read).0)
                && !names(prompt).iter().any(|name| name == implicit)
            {
                back.retain(|name| name != implicit);
            }
            if back != names(prompt) && !lost.arguments_in_text {
                lost.say(&format!(
                    "its argument names (it imports with [{}])",
                    names(&read).join(", ")
                ));
            }
            if !lost.arguments_in_text {
                for argument in &prompt.arguments {
                    let back = read.arguments.iter().find(|a| a.name == argument.name);
                    let had = argument.description.as_ref().or(argument.title.as_ref());
                    if let Some(back) = back
                        && had.is_some()
                        && back.description.as_ref() != had
                    {
                        lost.say(&format!("argument {}'s description", argument.name));
                    }
                }
            }
        }
        Ok(_) => lost.say(&format!(
            "itself: {} does not import as a prompt",
            file.path
        )),
        Err(err) => lost.say(&format!("itself: {err}")),
    }
}

/// What a format could not say about one prompt, in words for a warning.
#[derive(Default)]
pub(super) struct Lost {
    pub items: Vec<String>,
    /// The arguments are written into the text, so they import back as none.
    arguments_in_text: bool,
}

impl Lost {
    /// The format writes the arguments into the text (`why` says how) rather than as
    /// placeholders the host fills in.
    pub(super) fn arguments_in_text(&mut self, why: &str) {
        self.arguments_in_text = true;
        self.say(&format!("its arguments as fields ({why})"));
    }

    pub(super) fn say(&mut self, what: &str) {
        if !self.items.iter().any(|item| item == what) {
            self.items.push(what.to_string());
        }
    }

    /// The argument details beyond a name and description that a format without typed
    /// arguments drops. Whether a description comes back is for the read back to say where
    /// the arguments are placeholders; where they are written into the text, the closing list
    /// of `arguments_note` keeps it.
    pub(super) fn argument_details(&mut self, prompt: &Prompt) {
        for argument in &prompt.arguments {
            let mut details = Vec::new();
            if argument.kind != ArgumentType::String {
                details.push(format!("type {}", argument.kind.as_str()));
            }
            if argument.default.is_some() {
                details.push("default".to_string());
            }
            if !argument.values.is_empty() {
                details.push("values".to_string());
            }
            if argument.pattern.is_some() || argument.max_length.is_some() {
                details.push("pattern or length".to_string());
            }
            if argument.min.is_some() || argument.max.is_some() {
                details.push("bounds".to_string());
            }
            if argument.completion.is_some() {
                details.push("completion".to_string());
            }
            if !details.is_empty() {
                self.say(&format!(
                    "argument {}'s {}",
                    argument.name,
                    details.join(", ")
                ));
            }
        }
    }
}

/// At most 80 characters of `text`, for a warning.
fn shorten(text: &str) -> String {
    let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= 80 {
        return one_line;
    }
    let cut: String = one_line.chars().take(77).collect();
    format!("{cut}...")
}

/// The body of a command format: `literal` writes text, `var` an argument (given the
/// character after it), embedded text put in its place, and a markdown link to the URI for a
/// link or an embed the file cannot hold. `literal` is given each run of text between two
/// arguments whole, so that what it escapes is read as the host will read it, not piece by
/// piece (`$` at the end of one piece and `1` at the start of the next are `$1` to a host).
pub(super) fn command_text(
    source: &Source,
    lost: &mut Lost,
    mut literal: impl FnMut(&str) -> String,
    mut var: impl FnMut(&str, Option<char>) -> String,
) -> String {
    let mut out = String::new();
    let mut run = String::new();
    for (at, piece) in source.pieces.iter().enumerate() {
        match piece {
            Piece::Text(text) | Piece::Code(text) => run.push_str(text),
            Piece::Var(name) => {
                out.push_str(&literal(&std::mem::take(&mut run)));
                // What follows decides how some hosts can write the placeholder.
                let next = match source.pieces.get(at + 1) {
                    Some(Piece::Text(text)) => text.chars().next(),
                    _ => None,
                };
                out.push_str(&var(name, next))
            }
            Piece::Embed(uri) => match source.resources.get(uri) {
                Some((_, Content::Text(text))) => run.push_str(text),
                _ => {
                    lost.say(&format!(
                        "the embedded resource {uri} (not text, or not in the library): \
                         written as a link"
                    ));
                    run.push_str(&format!("[{uri}]({uri})"));
                }
            },
            Piece::Link(uri) => {
                lost.say(&format!(
                    "the link to {uri} as a resource: written as a markdown link the host \
                     cannot read without the MCP server"
                ));
                let label = source
                    .resources
                    .get(uri)
                    .map(|(stored, _)| {
                        stored
                            .info
                            .title
                            .clone()
                            .unwrap_or(stored.info.name.clone())
                    })
                    .unwrap_or_else(|| uri.clone());
                run.push_str(&format!("[{label}]({uri})"));
            }
        }
    }
    out.push_str(&literal(&run));
    out
}

/// The front matter lines of the keys a prompt kept from its file (`Prompt::meta`) that
/// the host knows (`host`), as they were: a command's `allowed-tools` comes back with it.
pub(super) fn kept_front(prompt: &Prompt, host: &[&str]) -> String {
    prompt
        .meta
        .iter()
        .filter(|(key, _)| host.contains(&key.as_str()))
        .map(|(key, value)| library::yaml::kept_field(key, value))
        .collect()
}

/// A file name from a prompt name: `/` (which most hosts do not nest) becomes `-`, and
/// anything a file name cannot hold becomes `_`.
pub(super) fn flat_file_name(name: &str) -> String {
    super::safe_segment(&name.replace('/', "-"))
}

/// A closing paragraph that names the arguments, for formats that pass the text after the
/// command as it is.
pub(super) fn arguments_note(prompt: &Prompt) -> String {
    if prompt.arguments.is_empty() {
        return String::new();
    }
    let mut note = String::from("\n\nArguments, in the text after the command:\n");
    for argument in &prompt.arguments {
        note.push_str(&format!("\n- <{}>", argument.name));
        if let Some(description) = argument.description.as_ref().or(argument.title.as_ref()) {
            note.push_str(&format!(": {}", description.replace('\n', " ")));
        }
        if !argument.required {
            note.push_str(" (optional)");
        }
    }
    note.push('\n');
    note
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_folder_given_as_dir_is_refused_with_the_root_to_give() {
        let err = check_dir(Path::new("proj/.claude/commands"), Format::ClaudeCommands)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("promptshelf export proj --format claude-commands"),
            "{err}"
        );
        let err = check_dir(Path::new(".agents/skills"), Format::Skills)
            .unwrap_err()
            .to_string();
        assert!(err.contains("export . --format skills"), "{err}");
        assert!(check_dir(Path::new("proj"), Format::Skills).is_ok());
        assert!(check_dir(Path::new("work/prompts"), Format::VscodePrompts).is_ok());
        let err = check_dir(Path::new("/p/.github"), Format::VscodePrompts)
            .unwrap_err()
            .to_string();
        assert!(err.contains("export /p --format vscode-prompts"), "{err}");
        assert!(check_dir(Path::new("."), Format::Skills).is_ok());
    }
}
