//! `promptshelf config HOST`: prints the JSON that registers this server with an MCP host,
//! with this binary's path and the database's absolute path filled in.

use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow};
use serde::Serialize;

use super::common;
use crate::cli::Host;

/// Claude Desktop and Cursor: `{"mcpServers": {"promptshelf": {...}}}`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct McpServers {
    mcp_servers: Servers,
}

/// VS Code (`.vscode/mcp.json`): `{"servers": {"promptshelf": {"type": "stdio", ...}}}`.
#[derive(Serialize)]
struct VsCodeServers {
    servers: Servers,
}

#[derive(Serialize)]
#[serde(untagged)]
enum Config {
    Mcp(McpServers),
    VsCode(VsCodeServers),
}

#[derive(Serialize)]
struct Servers {
    #[serde(rename = "promptshelf")]
    server: Server,
}

#[derive(Serialize)]
struct Server {
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    kind: Option<&'static str>,
    command: String,
    args: Vec<String>,
}

pub fn run(db: &Path, host: Host) -> Result<()> {
    let command = std::env::current_exe()
        .and_then(|exe| exe.canonicalize())
        .map_err(|err| anyhow!("cannot find the path of this promptshelf binary: {err}"))?;
    let db = absolute_db(db)?;
    let server = |kind| Server {
        kind,
        command: command.display().to_string(),
        args: vec![
            "--db".to_string(),
            db.display().to_string(),
            "serve".to_string(),
        ],
    };
    let (file, config) = match host {
        Host::ClaudeDesktop => (
            "~/Library/Application Support/Claude/claude_desktop_config.json on macOS, \
             %APPDATA%\\Claude\\claude_desktop_config.json on Windows",
            Config::Mcp(McpServers {
                mcp_servers: Servers {
                    server: server(None),
                },
            }),
        ),
        Host::Cursor => (
            "~/.cursor/mcp.json (or .cursor/mcp.json in a project)",
            Config::Mcp(McpServers {
                mcp_servers: Servers {
                    server: server(None),
                },
            }),
        ),
        Host::Vscode => (
            ".vscode/mcp.json in your workspace",
            Config::VsCode(VsCodeServers {
                servers: Servers {
                    server: server(Some("stdio")),
                },
            }),
        ),
    };
    eprintln!("Paste this into {file}, beside any servers already there:");
    let folder = db.parent().filter(|folder| folder.is_dir());
    match folder {
        None => eprintln!(
            "note: the folder of {} does not exist; create it before the host starts the server",
            db.display()
        ),
        Some(_) if !db.exists() => eprintln!(
            "note: {} does not exist yet; the server creates it with the seed library when the \
             host first starts it",
            db.display()
        ),
        Some(_) => {}
    }
    common::print_json(&config)
}

/// The database's absolute path without creating it: a host starts the server from a folder
/// of its own choosing, so a relative path would point somewhere else.
fn absolute_db(db: &Path) -> Result<PathBuf> {
    if let Ok(path) = db.canonicalize() {
        return Ok(path);
    }
    let absolute = std::path::absolute(db)
        .map_err(|err| anyhow!("cannot make {} an absolute path: {err}", db.display()))?;
    // Resolve symlinks in the folder when it exists, so the path is the one the file will have.
    match (absolute.parent(), absolute.file_name()) {
        (Some(folder), Some(name)) => match folder.canonicalize() {
            Ok(folder) => Ok(folder.join(name)),
            Err(_) => Ok(absolute),
        },
        _ => Ok(absolute),
    }
}
