//! Where a file sits: the collection it belongs to and the URIs of its resources, which paths
//! and folders the format skips, which files are commands (Claude Code, Cursor, Gemini CLI)
//! and which are the files of skills (a host's skills folder, a Claude Code plugin's).

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
    pub(crate) fn resource_uri(&self, relative_path: &str) -> String {
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
    pub(crate) fn template(&self) -> ResourceTemplate {
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
    /// The collection folder is a Claude Code plugin (it holds `.claude-plugin/`), so
    /// `skills/NAME/SKILL.md` is a skill.
    Plugin,
}

impl Folder {
    /// The folder a collection is read from, known by its name.
    pub(crate) fn of(folder_name: &str) -> Folder {
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

/// A Claude Code plugin marketplace keeps its plugins in a folder of this name.
const PLUGINS_FOLDER: &str = "plugins";

/// The folder that makes a folder a Claude Code plugin (it holds `plugin.json`).
pub(crate) const PLUGIN_MANIFEST_FOLDER: &str = ".claude-plugin";

/// A commands folder's read-me, which describes its commands and is never one.
const README: &str = "README.md";

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
pub(crate) fn is_skipped(relative_path: &str) -> bool {
    hidden(relative_path, false)
}

/// Whether the folder at `relative_path` holds nothing the format reads; `.claude` and
/// `.github` themselves are entered to reach the prompt folders inside them.
pub(crate) fn skips_folder(relative_path: &str) -> bool {
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
/// `*.prompt.md` nor a `README.md` and sits under a `commands` folder (unless its front
/// matter says `kind`).
pub(crate) fn is_command_path(relative_path: &str, folder: Folder) -> bool {
    let file_name = relative_path.rsplit('/').next().unwrap_or(relative_path);
    if file_name.eq_ignore_ascii_case(README) {
        return false;
    }
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
pub(crate) fn command_folder(relative_path: &str, folder: Folder) -> Option<String> {
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
/// (`SKILL.md`, `references/x.md`), for a file of a skill folder in a `skills` folder that
/// hosts read: a host's (`.claude/skills/NAME/...`, `.agents/skills/NAME/...`), a Claude Code
/// plugin's (`plugins/PLUGIN/skills/NAME/...` in a marketplace, `skills/NAME/...` when the
/// collection folder is the plugin), or the collection folder itself when it is a skills
/// folder.
pub(crate) fn skill_file(relative_path: &str, folder: Folder) -> Option<(&str, &str)> {
    let segments: Vec<&str> = relative_path.split('/').collect();
    let start = if folder == Folder::Skills {
        0
    } else {
        let read_by_a_host = |at: usize| {
            let parent = at.checked_sub(1).map(|before| segments[before]);
            let grandparent = at.checked_sub(2).map(|before| segments[before]);
            match parent {
                None => folder == Folder::Plugin,
                Some(parent) => {
                    grandparent == Some(PLUGINS_FOLDER)
                        || TOOL_FOLDERS.iter().any(|(host, inside)| {
                            *host == parent && inside.contains(&SKILLS_FOLDER)
                        })
                }
            }
        };
        let at = (0..segments.len())
            .rev()
            .find(|&at| segments[at] == SKILLS_FOLDER && read_by_a_host(at))?;
        at + 1
    };
    if segments.len() < start + 2 {
        return None;
    }
    let name = segments[start];
    let offset: usize = segments[..start + 1].iter().map(|s| s.len() + 1).sum();
    Some((name, &relative_path[offset..]))
}

/// The name of a Gemini CLI command file (`.toml`): its path under its `commands` folder
/// (`.gemini/commands/`, an extension's `commands/`, or the collection folder when that is a
/// `commands` folder), or else under the collection folder, without `.toml` (`git/commit`
/// for `.gemini/commands/git/commit.toml`, which Gemini CLI runs as `/git:commit`).
pub(crate) fn gemini_command_name(relative_path: &str) -> &str {
    let segments: Vec<&str> = relative_path.split('/').collect();
    let folders = &segments[..segments.len() - 1];
    let offset: usize = match folders.iter().rposition(|s| *s == COMMANDS_FOLDER) {
        Some(at) => segments[..at + 1].iter().map(|s| s.len() + 1).sum(),
        None => 0,
    };
    let inside = &relative_path[offset..];
    inside.strip_suffix(".toml").unwrap_or(inside)
}

/// Whether a `.toml` file is under `.gemini/commands/`, where every file is a Gemini CLI
/// command (elsewhere, one is a command when it has a command's shape).
pub(crate) fn is_gemini_commands_path(relative_path: &str) -> bool {
    relative_path
        .match_indices(".gemini/commands/")
        .any(|(at, _)| at == 0 || relative_path[..at].ends_with('/'))
}

/// Whether a markdown file is a Cursor command (under `.cursor/commands/`, not its
/// `README.md`).
pub(crate) fn is_cursor_command(relative_path: &str) -> bool {
    let segments: Vec<&str> = relative_path.split('/').collect();
    let file_name = segments.last().copied().unwrap_or_default();
    !file_name.eq_ignore_ascii_case(README)
        && segments.len() >= 3
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
            "git/commit"
        );
        assert_eq!(
            gemini_command_name("ext/commands/security/scan.toml"),
            "security/scan"
        );
        assert_eq!(gemini_command_name("git/commit.toml"), "git/commit");
        assert!(is_gemini_commands_path("app/.gemini/commands/a.toml"));
        assert!(!is_gemini_commands_path("ext/commands/a.toml"));
        assert!(!is_command_path("commands/README.md", Folder::Plain));
        assert!(!is_cursor_command(".cursor/commands/readme.md"));
        assert_eq!(
            skill_file("plugins/p/skills/fix/SKILL.md", Folder::Plain),
            Some(("fix", "SKILL.md"))
        );
        assert_eq!(
            skill_file("skills/fix/scripts/run.sh", Folder::Plugin),
            Some(("fix", "scripts/run.sh"))
        );
        assert_eq!(
            skill_file("plugins/skills/fix/SKILL.md", Folder::Plain),
            None
        );
        assert!(is_cursor_command(".cursor/commands/fix.md"));
        assert!(!is_cursor_command("cursor/commands/fix.md"));
    }
}
