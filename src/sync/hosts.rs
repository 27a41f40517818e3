//! Which folders `sync` writes for each host, at each scope, and in which format: the hosts'
//! own prompt and skill folders, as docs/cli.md ("`sync`") lists them, each from the host's
//! documentation.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use crate::export::{Format, Which};
use crate::hosts::{Host, Scope, display_name, paths};

/// One folder a host reads, and what `sync` writes there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Folder {
    pub path: PathBuf,
    pub format: Format,
    pub which: Which,
}

/// The folders `host` reads at `scope`; `project` is the project's root.
pub fn folders(host: Host, scope: Scope, project: &Path) -> Result<Vec<Folder>> {
    let home = || paths::home();
    let at = |project_folder: &str, user: PathBuf| match scope {
        Scope::Project => project.join(project_folder),
        Scope::User => user,
    };
    let commands = |format: Format, project_folder: &str, user: PathBuf| Folder {
        path: at(project_folder, user),
        format,
        which: Which::NotSkills,
    };
    let skills = |which: Which, project_folder: &str, user: PathBuf| Folder {
        path: at(project_folder, user),
        format: Format::Skills,
        which,
    };
    Ok(match host {
        Host::ClaudeCode => vec![
            commands(
                Format::ClaudeCommands,
                ".claude/commands",
                home()?.join(".claude/commands"),
            ),
            skills(
                Which::Skills,
                ".claude/skills",
                home()?.join(".claude/skills"),
            ),
        ],
        Host::Vscode => vec![
            // VS Code's user prompt files live in its profile folder.
            commands(
                Format::VscodePrompts,
                ".github/prompts",
                paths::app_config()?.join("Code/User/prompts"),
            ),
            skills(
                Which::Skills,
                ".github/skills",
                home()?.join(".copilot/skills"),
            ),
        ],
        Host::CopilotCli => vec![skills(
            Which::All,
            ".github/skills",
            home()?.join(".copilot/skills"),
        )],
        Host::Cursor => vec![
            commands(
                Format::CursorCommands,
                ".cursor/commands",
                home()?.join(".cursor/commands"),
            ),
            skills(
                Which::Skills,
                ".cursor/skills",
                home()?.join(".cursor/skills"),
            ),
        ],
        Host::Gemini => vec![
            commands(
                Format::GeminiCommands,
                ".gemini/commands",
                home()?.join(".gemini/commands"),
            ),
            skills(
                Which::Skills,
                ".gemini/skills",
                home()?.join(".gemini/skills"),
            ),
        ],
        Host::Codex => vec![skills(
            Which::All,
            ".agents/skills",
            home()?.join(".agents/skills"),
        )],
        Host::ClaudeDesktop | Host::Zed | Host::Windsurf | Host::Continue | Host::Goose => bail!(
            "{} reads no prompt or skill files of its own that sync could write; `promptshelf \
             config {}` registers the server with it instead (the hosts sync writes for: \
             claude-code, vscode, copilot-cli, cursor, gemini, codex)",
            display_name(host),
            host.as_str()
        ),
    })
}

#[cfg(test)]
mod tests {
    use clap::ValueEnum;

    use super::*;
    use crate::hosts::profile::profile;

    #[test]
    fn sync_writes_for_exactly_the_hosts_the_profiles_say_read_folders() {
        for &host in Host::value_variants() {
            let writes = folders(host, Scope::Project, Path::new("project")).is_ok();
            assert_eq!(writes, profile(host).folders, "{host:?}");
        }
    }
}
