//! Carries out a parsed command line: opens the store, then one module per command group.

mod check;
mod common;
mod completions;
mod config;
mod export;
mod import;
mod init;
mod prompt;
mod resource;
mod serve;
mod stats;
mod template;
mod values;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::cli::{Cli, Command, PromptCommand, ResourceCommand, TemplateCommand, ValuesCommand};
use crate::store::{self, Access, Store};

pub fn run(cli: Cli) -> Result<()> {
    let Cli { db, command } = cli;
    // Every command but `completions` works on a library.
    let db = || db.clone().map_or_else(default_db, Ok);
    let access = if reads_only(&command) {
        Access::Read
    } else {
        Access::ReadWrite
    };
    let open = || -> Result<Store> { Ok(Store::open(&db()?, access, crate::seed::load)?) };
    match command {
        Command::Completions { shell } => completions::run(shell),
        Command::Serve(args) => serve::run(&db()?, args),
        Command::Init { empty } => init::run(&db()?, empty),
        Command::Config(args) => config::run(&db()?, args),
        Command::Prompt(command) => prompt::run(&open()?, command),
        Command::Resource(command) => resource::run(&open()?, command),
        Command::Template(command) => template::run(&open()?, command),
        Command::Values(command) => values::run(&open()?, command),
        Command::Stats(flags) => stats::run(&open()?, flags),
        Command::Import(args) => import::run(&open()?, args),
        Command::Export(args) => export::run(&open()?, args),
        Command::Check(flags) => check::run(&open()?, flags),
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
        Command::Export(_) | Command::Check(_) | Command::Stats(_) => true,
        Command::Serve(_)
        | Command::Config(_)
        | Command::Init { .. }
        | Command::Completions { .. } => false,
    }
}

/// Opens (or creates, from the seed) the database for the admin commands.
pub fn open(db: &Path) -> Result<Store> {
    Ok(Store::open(db, Access::ReadWrite, crate::seed::load)?)
}

/// `store::default_database`, its folder created if missing, when `--db` is not given.
fn default_db() -> Result<PathBuf> {
    let path = store::default_database().context(
        "no home directory to keep the library in; pass --db PATH or set PROMPTSHELF_DB",
    )?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create {}; pass --db PATH", dir.display()))?;
    }
    Ok(path)
}
