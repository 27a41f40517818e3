//! Which folders `sync` writes for a host at a scope, as the host table
//! (`hosts::profile`) names them.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use crate::export::{Format, Which};
use crate::hosts::profile::{UserFolder, profile};
use crate::hosts::{Host, Scope, display_name, paths};

/// One folder a host reads, and what `sync` writes there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Folder {
    pub path: PathBuf,
    pub format: Format,
    pub which: Which,
}

/// The folders `host` reads at `scope`; `project` is the project's root.
pub(crate) fn folders(host: Host, scope: Scope, project: &Path) -> Result<Vec<Folder>> {
    let line = profile(host);
    if !line.reads_folders() {
        bail!(
            "{} reads no prompt or skill files of its own that sync could write; `promptshelf \
             config {}` registers the server with it instead (the hosts sync writes for: \
             claude-code, vscode, copilot-cli, cursor, gemini, codex)",
            display_name(host),
            host.as_str()
        );
    }
    let at = |project_folder: &str, user: UserFolder| -> Result<PathBuf> {
        Ok(match (scope, user) {
            (Scope::Project, _) => project.join(project_folder),
            (Scope::User, UserFolder::Home(folder)) => paths::home()?.join(folder),
            (Scope::User, UserFolder::AppConfig(folder)) => paths::app_config()?.join(folder),
        })
    };
    let mut found = Vec::new();
    if let Some(commands) = line.commands {
        found.push(Folder {
            path: at(commands.format.folder(), commands.user)?,
            format: commands.format,
            which: Which::NotSkills,
        });
    }
    if let Some(skills) = line.skills {
        found.push(Folder {
            path: at(skills.project, skills.user)?,
            format: Format::Skills,
            which: if skills.every_prompt {
                Which::All
            } else {
                Which::Skills
            },
        });
    }
    Ok(found)
}
