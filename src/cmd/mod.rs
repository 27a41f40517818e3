//! Carries out a parsed command line: opens the store, then one module per command group.

mod check;
mod common;
mod config;
mod export;
mod import;
mod prompt;
mod resource;
mod search;
mod serve;
mod stats;
mod template;
mod values;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::cli::{Cli, Command, PromptCommand, ResourceCommand, TemplateCommand, ValuesCommand};
use crate::store::{Access, Store};

pub fn run(cli: Cli) -> Result<()> {
    let db = match cli.db {
        Some(path) => path,
        None => default_db()?,
    };
    let access = if reads_only(&cli.command) {
        Access::Read
    } else {
        Access::ReadWrite
    };
    let open = |db: &Path| -> Result<Store> { Ok(Store::open(db, access, crate::seed::load)?) };
    match cli.command {
        Command::Serve(args) => serve::run(&db, args),
        Command::Config { host } => config::run(&db, host),
        Command::Prompt(command) => prompt::run(&open(&db)?, command),
        Command::Resource(command) => resource::run(&open(&db)?, command),
        Command::Template(command) => template::run(&open(&db)?, command),
        Command::Values(command) => values::run(&open(&db)?, command),
        Command::Search(args) => search::run(&open(&db)?, args),
        Command::Stats(flags) => stats::run(&open(&db)?, flags),
        Command::Import(args) => import::run(&open(&db)?, args),
        Command::Export(args) => export::run(&open(&db)?, args),
        Command::Check(flags) => check::run(&open(&db)?, flags),
    }
}

/// Whether `command` only reads the library, so that it works on a read-only mount or file
/// too (a writing one is refused there at once, naming the read-only folder or file).
fn reads_only(command: &Command) -> bool {
    match command {
        Command::Prompt(command) => matches!(
            command,
            PromptCommand::List(_) | PromptCommand::Show { .. } | PromptCommand::Render { .. }
        ),
        Command::Resource(command) => matches!(
            command,
            ResourceCommand::List(_) | ResourceCommand::Show { .. } | ResourceCommand::Cat { .. }
        ),
        Command::Template(command) => matches!(command, TemplateCommand::List(_)),
        Command::Values(command) => matches!(command, ValuesCommand::List { .. }),
        Command::Import(args) => args.dry_run,
        Command::Export(_) | Command::Check(_) | Command::Search(_) | Command::Stats(_) => true,
        Command::Serve(_) | Command::Config { .. } => false,
    }
}

/// Opens (or creates, from the seed) the database for the admin commands.
pub fn open(db: &Path) -> Result<Store> {
    Ok(Store::open(db, Access::ReadWrite, crate::seed::load)?)
}

/// `library.db` in the user's data directory (created if missing), when `--db` is not given.
fn default_db() -> Result<PathBuf> {
    let dirs = directories::ProjectDirs::from("", "", "promptshelf").context(
        "no home directory to keep the library in; pass --db PATH or set PROMPTSHELF_DB",
    )?;
    let dir = dirs.data_dir();
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create {}; pass --db PATH", dir.display()))?;
    Ok(dir.join("library.db"))
}
