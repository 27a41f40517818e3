//! Each host's file per scope, its format, the key the entry goes under and the entry's
//! fields, as the host's own documentation gives them (docs/cli.md cites each).

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use super::paths::{app_config, codex_home, home, xdg_config};
use super::{Entry, Field, Format, Host, Json, NAME, Place, Scope, Shape, Target};

/// How the host starts this server: the binary and its arguments.
pub(crate) struct Launch {
    pub command: String,
    pub args: Vec<String>,
}

/// A package runner that fetches the published package and runs its `promptshelf`, for a
/// host on a machine where promptshelf was not built (docs/packaging.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Via {
    /// `uvx promptshelf`: the PyPI package, through uv
    Uvx,
    /// `npx -y promptshelf`: the npm package
    Npx,
}

impl Launch {
    /// `COMMAND --db DB serve`: this binary by its path.
    pub(crate) fn new(command: &Path, db: &Path, host: Host) -> Launch {
        Launch {
            command: command.display().to_string(),
            args: serve_args(db, host),
        }
    }

    /// `uvx promptshelf --db DB serve` or `npx -y promptshelf --db DB serve`. `-y` keeps npx
    /// from asking to install the package, which a host's pipe could not answer.
    pub(crate) fn via(via: Via, db: &Path, host: Host) -> Launch {
        let (command, package): (&str, &[&str]) = match via {
            Via::Uvx => ("uvx", &[NAME]),
            Via::Npx => ("npx", &["-y", NAME]),
        };
        let mut args: Vec<String> = package.iter().map(|arg| arg.to_string()).collect();
        args.extend(serve_args(db, host));
        Launch {
            command: command.to_string(),
            args,
        }
    }
}

/// `--db DB serve`, with `--tools prompts,resources` for hosts that show no prompts but call
/// tools.
fn serve_args(db: &Path, host: Host) -> Vec<String> {
    let mut args = vec![
        "--db".to_string(),
        db.display().to_string(),
        "serve".to_string(),
    ];
    if tools_only(host) {
        args.extend(["--tools".to_string(), "prompts,resources".to_string()]);
    }
    args
}

/// Hosts that show no MCP prompts, so the library reaches them only as tools.
fn tools_only(host: Host) -> bool {
    matches!(host, Host::Windsurf | Host::Codex)
}

/// `{command, args}`, the Claude Desktop shape most hosts copied.
fn command_args(launch: &Launch) -> Vec<(&'static str, Field)> {
    vec![
        ("command", Field::Text(launch.command.clone())),
        ("args", Field::Texts(launch.args.clone())),
    ]
}

fn stdio(mut fields: Vec<(&'static str, Field)>) -> Vec<(&'static str, Field)> {
    fields.insert(0, ("type", Field::Text("stdio".to_string())));
    fields
}

const MCP_SERVERS: Place = Place {
    key: "mcpServers",
    shape: Shape::Map,
};

pub(crate) fn target(host: Host, scope: Scope, launch: &Launch) -> Result<Target> {
    let project =
        |relative: &str| -> Result<PathBuf> { Ok(std::env::current_dir()?.join(relative)) };
    let json = Format::Json(Json::Strict);
    let jsonc = Format::Json(Json::CommentsAndTrailingCommas);
    let mut target = Target {
        file: PathBuf::new(),
        format: json,
        place: MCP_SERVERS,
        entry: Entry {
            fields: command_args(launch),
        },
        preamble: Vec::new(),
        note: None,
    };
    match (host, scope) {
        (Host::ClaudeDesktop, Scope::User) => {
            target.file = app_config()?.join("Claude/claude_desktop_config.json");
            target.note = Some("restart Claude Desktop to start the server");
        }
        (Host::ClaudeCode, scope) => {
            target.file = match scope {
                Scope::User => home()?.join(".claude.json"),
                Scope::Project => project(".mcp.json")?,
            };
            target.entry.fields = stdio(command_args(launch));
            if scope == Scope::Project {
                target.note = Some(
                    "Claude Code asks once before it starts a server from .mcp.json; \
                     approve it in `claude` (or see `claude mcp list`)",
                );
            }
        }
        (Host::Vscode, scope) => {
            target.file = match scope {
                Scope::User => app_config()?.join("Code/User/mcp.json"),
                Scope::Project => project(".vscode/mcp.json")?,
            };
            target.format = jsonc;
            target.place.key = "servers";
            target.entry.fields = stdio(command_args(launch));
        }
        (Host::Cursor, scope) => {
            target.file = match scope {
                Scope::User => home()?.join(".cursor/mcp.json"),
                Scope::Project => project(".cursor/mcp.json")?,
            };
        }
        (Host::Zed, scope) => {
            target.file = match scope {
                Scope::User if cfg!(windows) => app_config()?.join("Zed/settings.json"),
                Scope::User => xdg_config()?.join("zed/settings.json"),
                Scope::Project => project(".zed/settings.json")?,
            };
            target.format = jsonc;
            target.place.key = "context_servers";
        }
        (Host::Windsurf, Scope::User) => {
            target.file = home()?.join(".codeium/windsurf/mcp_config.json");
        }
        (Host::Codex, scope) => {
            target.file = match scope {
                Scope::User => codex_home()?.join("config.toml"),
                Scope::Project => project(".codex/config.toml")?,
            };
            target.format = Format::Toml;
            target.place.key = "mcp_servers";
            if scope == Scope::Project {
                target.note = Some(
                    "Codex reads .codex/config.toml only in a project it trusts \
                     (trust_level = \"trusted\" for it in ~/.codex/config.toml)",
                );
            }
        }
        (Host::Gemini, scope) => {
            target.file = match scope {
                Scope::User => home()?.join(".gemini/settings.json"),
                Scope::Project => project(".gemini/settings.json")?,
            };
            target.format = Format::Json(Json::Comments);
            target.note = Some(
                "Gemini CLI starts servers only in a folder it trusts (`/permissions` in \
                 gemini, or GEMINI_CLI_TRUST_WORKSPACE=true)",
            );
        }
        (Host::Continue, scope) => {
            target.format = Format::Yaml;
            target.place.shape = Shape::ListByName;
            let mut fields = vec![("name", Field::Text(NAME.to_string()))];
            fields.extend(stdio(command_args(launch)));
            target.entry.fields = fields;
            target.file = match scope {
                Scope::User => home()?.join(".continue/config.yaml"),
                Scope::Project => project(".continue/mcpServers/promptshelf.yaml")?,
            };
            // Continue's parser refuses a file without a name and a version, its own
            // config.yaml included: a new file starts with them (the user file with the
            // name and version Continue gives the one it makes itself).
            let (name, version) = match scope {
                Scope::Project => (NAME, "0.0.1"),
                Scope::User => ("Local Assistant", "1.0.0"),
            };
            target.preamble = vec![
                ("name", Field::Text(name.to_string())),
                ("version", Field::Text(version.to_string())),
                ("schema", Field::Text("v1".to_string())),
            ];
        }
        (Host::Goose, Scope::User) => {
            target.file = if cfg!(windows) {
                app_config()?.join("Block/goose/config/config.yaml")
            } else {
                xdg_config()?.join("goose/config.yaml")
            };
            target.format = Format::Yaml;
            target.place.key = "extensions";
            target.entry.fields = vec![
                ("name", Field::Text(NAME.to_string())),
                ("type", Field::Text("stdio".to_string())),
                ("cmd", Field::Text(launch.command.clone())),
                ("args", Field::Texts(launch.args.clone())),
                ("enabled", Field::Flag(true)),
                ("envs", Field::EmptyMap),
                ("timeout", Field::Number(300)),
                (
                    "description",
                    Field::Text("Prompts and reference documents from promptshelf".to_string()),
                ),
            ];
        }
        // Its MCP configuration file is still changing from release to release, and it
        // shows no MCP prompts: its own skills folders reach it.
        (Host::CopilotCli, _) => bail!(
            "config does not write GitHub Copilot CLI's MCP configuration (its file is still \
             changing), and Copilot CLI shows no MCP prompts: `promptshelf sync copilot-cli` \
             writes the library as skills it reads"
        ),
        (Host::ClaudeDesktop | Host::Windsurf | Host::Goose, Scope::Project) => {
            bail!(
                "{} has no project configuration file; use --scope user",
                display_name(host)
            )
        }
    }
    Ok(target)
}

/// The host's name as its makers write it.
pub(crate) fn display_name(host: Host) -> &'static str {
    match host {
        Host::ClaudeDesktop => "Claude Desktop",
        Host::ClaudeCode => "Claude Code",
        Host::Vscode => "VS Code",
        Host::CopilotCli => "GitHub Copilot CLI",
        Host::Cursor => "Cursor",
        Host::Zed => "Zed",
        Host::Windsurf => "Windsurf",
        Host::Codex => "Codex",
        Host::Gemini => "Gemini CLI",
        Host::Continue => "Continue",
        Host::Goose => "Goose",
    }
}
