//! The folders hosts keep their settings in, from the environment, so that `HOME`,
//! `XDG_CONFIG_HOME`, `APPDATA` and `CODEX_HOME` point them elsewhere (tests do).

use std::path::PathBuf;

use anyhow::{Result, anyhow};

/// An environment variable holding an absolute path.
fn absolute_var(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .map(PathBuf::from)
        .filter(|path| path.is_absolute())
}

/// The home folder: `HOME` (`USERPROFILE` on Windows, as the hosts read it).
pub(crate) fn home() -> Result<PathBuf> {
    let var = if cfg!(windows) { "USERPROFILE" } else { "HOME" };
    absolute_var(var)
        .ok_or_else(|| anyhow!("{var} is not set to an absolute path; set it to your home folder"))
}

/// The XDG configuration folder: `XDG_CONFIG_HOME`, else `~/.config`.
pub(crate) fn xdg_config() -> Result<PathBuf> {
    match absolute_var("XDG_CONFIG_HOME") {
        Some(folder) => Ok(folder),
        None => Ok(home()?.join(".config")),
    }
}

/// Where desktop applications keep their settings: `%APPDATA%` on Windows,
/// `~/Library/Application Support` on macOS, the XDG configuration folder elsewhere.
pub(crate) fn app_config() -> Result<PathBuf> {
    if cfg!(windows) {
        absolute_var("APPDATA").ok_or_else(|| anyhow!("APPDATA is not set to an absolute path"))
    } else if cfg!(target_os = "macos") {
        Ok(home()?.join("Library/Application Support"))
    } else {
        xdg_config()
    }
}

/// Codex's folder: `CODEX_HOME`, else `~/.codex`.
pub(crate) fn codex_home() -> Result<PathBuf> {
    match absolute_var("CODEX_HOME") {
        Some(folder) => Ok(folder),
        None => Ok(home()?.join(".codex")),
    }
}
