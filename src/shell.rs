//! Shell completion: the scripts `promptshelf completions SHELL` prints, and the names and
//! URIs they offer, read from the library while the user presses Tab.
//!
//! clap_complete's dynamic completion does the work: the script calls the binary back with
//! `PROMPTSHELF_COMPLETE=<shell>` set (`VARIABLE`), and `main` answers from the command
//! line's own definition, so completions never drift from the flags. Names come
//! from the database the command would use (`PROMPTSHELF_DB`, else the default one), opened
//! read-only; a missing or unreadable database offers no names rather than an error in the
//! middle of a command line.

use std::ffi::OsStr;
use std::io::Write;

use clap_complete::CompletionCandidate;
use clap_complete::env::{Bash, EnvCompleter, Fish, Powershell, Zsh};

use crate::store::{self, Store};

/// The environment variable the scripts set when they ask for completions.
pub const VARIABLE: &str = "PROMPTSHELF_COMPLETE";

/// How many names one Tab offers at most: a shell lists them all, and a library of half a
/// million resources should not print half a million lines.
const MAX_CANDIDATES: usize = 1_000;

/// The shells `completions` writes a script for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Shell {
    Bash,
    Zsh,
    Fish,
    Powershell,
}

/// Writes the script that registers completion of the command `promptshelf` for `shell`,
/// calling back `binary` (a full path) for candidates.
pub(crate) fn write_script(shell: Shell, binary: &str, out: &mut dyn Write) -> std::io::Result<()> {
    let completer: &dyn EnvCompleter = match shell {
        Shell::Bash => &Bash,
        Shell::Zsh => &Zsh,
        Shell::Fish => &Fish,
        Shell::Powershell => &Powershell,
    };
    completer.write_registration(VARIABLE, "promptshelf", "promptshelf", binary, out)
}

/// Prompt names starting with what is typed.
pub(crate) fn prompt_names(typed: &OsStr) -> Vec<CompletionCandidate> {
    starting_with(typed, store::read::prompt_names)
}

/// Resource URIs starting with what is typed (a range of the URI index).
pub(crate) fn resource_uris(typed: &OsStr) -> Vec<CompletionCandidate> {
    let typed = typed.to_string_lossy();
    from_library(|conn| store::read::resource_uris_with_prefix(conn, &typed))
}

/// Completion table names starting with what is typed.
pub(crate) fn table_names(typed: &OsStr) -> Vec<CompletionCandidate> {
    starting_with(typed, |conn| {
        Ok(store::read::tables(conn)?
            .into_iter()
            .map(|table| table.name)
            .collect())
    })
}

/// Collection names starting with what is typed.
pub(crate) fn collection_names(typed: &OsStr) -> Vec<CompletionCandidate> {
    starting_with(typed, |conn| {
        Ok(store::read::collections(conn)?
            .into_iter()
            .map(|collection| collection.name)
            .collect())
    })
}

/// Label names (release channels) starting with what is typed.
pub(crate) fn label_names(typed: &OsStr) -> Vec<CompletionCandidate> {
    starting_with(typed, |conn| {
        Ok(store::labels::names(conn)?
            .into_iter()
            .map(|(label, _)| label)
            .collect())
    })
}

/// The names `read` gives that start with what is typed.
fn starting_with(
    typed: &OsStr,
    read: impl FnOnce(&rusqlite::Connection) -> store::Result<Vec<String>>,
) -> Vec<CompletionCandidate> {
    let typed = typed.to_string_lossy();
    from_library(|conn| {
        let mut names = read(conn)?;
        names.retain(|name| name.starts_with(typed.as_ref()));
        Ok(names)
    })
}

/// Names read from the library, or none when it cannot be read.
fn from_library(
    read: impl FnOnce(&rusqlite::Connection) -> store::Result<Vec<String>>,
) -> Vec<CompletionCandidate> {
    let Some(path) = std::env::var_os("PROMPTSHELF_DB")
        .map(std::path::PathBuf::from)
        .or_else(store::default_database)
    else {
        return Vec::new();
    };
    let names = Store::open_served(&path)
        .and_then(|store| read(&*store.conn()?))
        .unwrap_or_default();
    names
        .into_iter()
        .take(MAX_CANDIDATES)
        .map(CompletionCandidate::new)
        .collect()
}
