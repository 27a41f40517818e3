//! Which folders `sync` writes for each host, at each scope, and in which format: the hosts'
//! own prompt and skill folders, as docs/cli.md ("`sync`") lists them, each from the host's
//! documentation.

use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::export::{Format, Which};
use crate::hosts::{Scope, paths};

/// The hosts `sync` writes for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum)]
pub enum Host {
    /// Claude Code: commands in .claude/commands, skills in .claude/skills
    ClaudeCode,
    /// VS Code (GitHub Copilot): prompt files in .github/prompts, skills in .github/skills
    Vscode,
    /// GitHub Copilot CLI, which shows no MCP prompts: every prompt as a skill in .github/skills
    CopilotCli,
    /// Cursor: commands in .cursor/commands, skills in .cursor/skills
    Cursor,
    /// Gemini CLI: commands in .gemini/commands, skills in .gemini/skills
    Gemini,
    /// Codex, which shows no MCP prompts and no longer reads prompt files: every prompt as a
    /// skill in .agents/skills
    Codex,
}

impl Host {
    pub fn as_str(self) -> &'static str {
        match self {
            Host::ClaudeCode => "claude-code",
            Host::Vscode => "vscode",
            Host::CopilotCli => "copilot-cli",
            Host::Cursor => "cursor",
            Host::Gemini => "gemini",
            Host::Codex => "codex",
        }
    }
}

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
    })
}
