//! Where a file sits: the collection it belongs to and the URIs of its resources, which paths
//! and folders the format skips, and which markdown files are Claude Code commands.

use percent_encoding::{AsciiSet, CONTROLS, utf8_percent_encode};

use crate::model::ResourceTemplate;

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

/// What the folder a file was found in says about it, beyond its path in the collection.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Folder {
    /// Nothing beyond the path.
    #[default]
    Plain,
    /// The collection folder is itself a Claude Code commands folder (`~/.claude/commands`),
    /// so its markdown files are commands even though their paths do not say so.
    Commands,
    /// The collection folder is a folder of skill folders (`~/.claude/skills`), so
    /// `NAME/SKILL.md` is a skill even though the path does not say so.
    Skills,
}

impl Folder {
    /// The folder a collection is read from, known by its name.
    pub fn of(folder_name: &str) -> Folder {
        if folder_name == COMMANDS_FOLDER {
            Folder::Commands
        } else if folder_name == SKILLS_FOLDER {
            Folder::Skills
        } else {
            Folder::Plain
        }
    }
}

/// Markdown files under a folder of this name are Claude Code commands.
const COMMANDS_FOLDER: &str = "commands";

/// Skill folders (`NAME/SKILL.md`) are kept in a folder of this name.
const SKILLS_FOLDER: &str = "skills";

/// Hidden folders that hosts keep prompt files and skills in, each with the subfolders of it
/// that are read: Claude Code's `.claude/commands/` and `.claude/skills/`, VS Code's
/// `.github/prompts/` and `.github/skills/`, Cursor's `.cursor/commands/`, Gemini CLI's
/// `.gemini/commands/` and `.gemini/skills/`, and the shared `.agents/skills/`.
const TOOL_FOLDERS: [(&str, &[&str]); 5] = [
    (".claude", &[COMMANDS_FOLDER, SKILLS_FOLDER]),
    (".github", &["prompts", SKILLS_FOLDER]),
    (".cursor", &[COMMANDS_FOLDER]),
    (".gemini", &[COMMANDS_FOLDER, SKILLS_FOLDER]),
    (".agents", &[SKILLS_FOLDER]),
];

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
            Some(next) if inside.contains(next) => {}
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

/// The folders between a command's `commands` folder and its file, joined by `/` (`git` for
/// `.claude/commands/git/commit.md`); None for a command directly in its `commands` folder
/// and for a file that is not a command.
pub fn command_folder(relative_path: &str, folder: Folder) -> Option<String> {
    if !is_command_path(relative_path, folder) {
        return None;
    }
    let segments: Vec<&str> = relative_path.split('/').collect();
    let folders = &segments[..segments.len() - 1];
    let inside = match folders
        .iter()
        .rposition(|segment| *segment == COMMANDS_FOLDER)
    {
        Some(at) => &folders[at + 1..],
        // The collection folder is the commands folder.
        None => folders,
    };
    (!inside.is_empty()).then(|| inside.join("/"))
}

/// A file of a skill folder: the skill's folder name and the file's path inside it
/// (`SKILL.md`, `references/x.md`), for a file under a hosts' skills folder
/// (`.claude/skills/NAME/...`, `.agents/skills/NAME/...`) or, when the collection folder is
/// itself a skills folder, under one of its folders.
pub fn skill_file(relative_path: &str, folder: Folder) -> Option<(&str, &str)> {
    let segments: Vec<&str> = relative_path.split('/').collect();
    let start = if folder == Folder::Skills {
        0
    } else {
        let at = segments.windows(2).rposition(|pair| {
            pair[1] == SKILLS_FOLDER
                && TOOL_FOLDERS
                    .iter()
                    .any(|(host, inside)| *host == pair[0] && inside.contains(&SKILLS_FOLDER))
        })?;
        at + 2
    };
    if segments.len() < start + 2 {
        return None;
    }
    let name = segments[start];
    let offset: usize = segments[..start + 1].iter().map(|s| s.len() + 1).sum();
    Some((name, &relative_path[offset..]))
}

/// The name of a Gemini CLI command: its path under `.gemini/commands/` without `.toml`
/// (`git/commit` for `.gemini/commands/git/commit.toml`, which Gemini CLI runs as
/// `/git:commit`); None for any other file.
pub fn gemini_command_name(relative_path: &str) -> Option<&str> {
    let at = relative_path
        .match_indices(".gemini/commands/")
        .filter(|(at, _)| *at == 0 || relative_path[..*at].ends_with('/'))
        .last()?
        .0;
    relative_path[at + ".gemini/commands/".len()..].strip_suffix(".toml")
}

/// Whether a markdown file is a Cursor command (under `.cursor/commands/`).
pub fn is_cursor_command(relative_path: &str) -> bool {
    let segments: Vec<&str> = relative_path.split('/').collect();
    segments.len() >= 3
        && segments[segments.len() - 3..segments.len() - 1] == [".cursor", COMMANDS_FOLDER]
        && has_extension(relative_path, &["md"])
}

pub(super) fn has_extension(file_name: &str, extensions: &[&str]) -> bool {
    file_name
        .rsplit_once('.')
        .is_some_and(|(_, ext)| extensions.iter().any(|e| ext.eq_ignore_ascii_case(e)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_encode_what_rfc3986_forbids() {
        let collection = Collection {
            name: "docs".into(),
            scheme: DEFAULT_SCHEME.into(),
        };
        assert_eq!(
            collection.resource_uri("a b/c#d.md"),
            "shelf://docs/a%20b/c%23d.md"
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
        assert_eq!(
            command_folder(".claude/commands/git/sub/commit.md", Folder::Plain).as_deref(),
            Some("git/sub")
        );
        assert_eq!(
            command_folder(".claude/commands/commit.md", Folder::Plain),
            None
        );
        assert_eq!(
            command_folder("git/commit.md", Folder::Commands).as_deref(),
            Some("git")
        );
        assert_eq!(command_folder("git/commit.md", Folder::Plain), None);
        assert!(!is_skipped(".agents/skills/x/SKILL.md"));
        assert!(!is_skipped(".gemini/commands/git/commit.toml"));
        assert!(is_skipped(".agents/other/x.md"));
        assert_eq!(
            skill_file("app/.claude/skills/fix/references/a.md", Folder::Plain),
            Some(("fix", "references/a.md"))
        );
        assert_eq!(
            skill_file("fix/SKILL.md", Folder::Skills),
            Some(("fix", "SKILL.md"))
        );
        assert_eq!(skill_file("README.md", Folder::Skills), None);
        assert_eq!(skill_file("skills/fix/SKILL.md", Folder::Plain), None);
        assert_eq!(
            gemini_command_name(".gemini/commands/git/commit.toml"),
            Some("git/commit")
        );
        assert!(is_cursor_command(".cursor/commands/fix.md"));
        assert!(!is_cursor_command("cursor/commands/fix.md"));
    }
}
