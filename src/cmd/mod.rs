//! Carries out a parsed command line: opens the store, then one module per command group.

mod backup;
mod check;
mod collection;
mod common;
mod completions;
mod config;
mod edit;
mod export;
mod history;
mod import;
mod init;
mod label;
mod prompt;
mod prompt_check;
mod resource;
mod search;
mod serve;
mod stats;
mod sync;
mod template;
mod token;
mod values;

use std::path::PathBuf;

use anyhow::{Context, Result};

use crate::cli::{
    Cli, CollectionCommand, Command, LabelCommand, PromptCommand, ResourceCommand, TemplateCommand,
    TokenCommand, ValuesCommand,
};
use crate::store::{self, Access, Store, StoreError};

pub fn run(cli: Cli) -> Result<()> {
    let Cli { db, keep, command } = cli;
    // What this process's writes are recorded as.
    let history = store::history::Settings::new(command_line(), keep);
    // Every command but `completions` works on a library.
    let db = || db.clone().map_or_else(default_db, Ok);
    let access = if reads_only(&command) {
        Access::Read
    } else {
        Access::ReadWrite
    };
    let library = || -> Result<Library> {
        Ok(Library {
            db: db()?,
            access,
            history: history.clone(),
        })
    };
    let checking = matches!(command, Command::Check(_));
    let outcome = match command {
        Command::Completions { shell } => completions::run(shell),
        Command::Serve(args) => serve::run(&db()?, *args),
        Command::Init { empty } => init::run(&db()?, empty),
        Command::Config(args) => config::run(&db()?, args),
        Command::Prompt(command) => library()?.run(|store| prompt::run(store, command)),
        Command::Resource(command) => library()?.run(|store| resource::run(store, command)),
        Command::Collection(command) => library()?.run(|store| collection::run(store, command)),
        Command::Template(command) => library()?.run(|store| template::run(store, command)),
        Command::Values(command) => library()?.run(|store| values::run(store, command)),
        Command::Search(args) => library()?.run(|store| search::run(store, args)),
        Command::Stats(flags) => library()?.run(|store| stats::run(store, flags)),
        Command::Backup { file } => library()?.run(|store| backup::run(store, &file)),
        Command::Token(command) => library()?.run(|store| token::run(store, command)),
        Command::Label(command) => library()?.run(|store| label::run(store, command)),
        Command::Import(args) => library()?.run(|store| import::run(store, args)),
        Command::Export(args) => library()?.run(|store| export::run(store, args)),
        // From a team server, no library of one's own is opened (or made).
        Command::Sync(args) if args.from.is_some() => sync::run_from(args),
        Command::Sync(args) => library()?.run(|store| sync::run(store, args)),
        Command::Check(flags) => library()?.run(|store| check::run(store, flags)),
        Command::History(args) => library()?.run(|store| history::history(store, args)),
        Command::Diff(args) => library()?.run(|store| history::diff(store, args)),
        Command::Rollback(args) => library()?.run(|store| history::rollback(store, args)),
        Command::Undo(flags) => library()?.run(|store| history::undo(store, flags.json)),
    };
    outcome.map_err(|err| {
        let err = match err.downcast_ref::<StoreError>() {
            // SQLite's failures name no file; the person may have several libraries.
            Some(StoreError::Sqlite(_)) => match db() {
                Ok(path) => err.context(path.display().to_string()),
                Err(_) => err,
            },
            _ => err,
        };
        if checking && !err.is::<check::ProblemsFound>() {
            CouldNotRun(err).into()
        } else {
            err
        }
    })
}

/// This process's command line as the history records what wrote (`promptshelf import ./team`),
/// without `--db` and its path, which say where, not what; an argument with spaces quoted.
fn command_line() -> String {
    let mut words = vec!["promptshelf".to_string()];
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--db" {
            args.next();
            continue;
        }
        if arg.starts_with("--db=") {
            continue;
        }
        words.push(if arg.contains(char::is_whitespace) || arg.is_empty() {
            format!("'{arg}'")
        } else {
            arg
        });
    }
    words.join(" ")
}

/// A command that could not do its work at all, as opposed to one that did it and found
/// something wrong: exit status 2 (`exit_code`). Only `check` makes the difference, as `grep`
/// and `diff` do; clap's usage errors exit 2 as well.
#[derive(Debug, thiserror::Error)]
#[error("{0:#}")]
pub(crate) struct CouldNotRun(anyhow::Error);

/// The exit status for a command's error: 2 when it could not run (`CouldNotRun`), else 1.
pub fn exit_code(err: &anyhow::Error) -> u8 {
    if err.is::<CouldNotRun>() { 2 } else { 1 }
}

/// The library a command works on, how it may open it and what its writes are recorded as.
struct Library {
    db: PathBuf,
    access: Access,
    history: store::history::Settings,
}

impl Library {
    /// Opens the library (creating it from the seed if missing), runs `command` on it, and
    /// closes it (`Store::close`), so that no `-wal` or `-shm` file is left behind.
    fn run(self, command: impl FnOnce(&Store) -> Result<()>) -> Result<()> {
        let store = Store::open(&self.db, self.access, crate::seed::load)?.recording(self.history);
        let outcome = command(&store);
        store.close();
        outcome
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
        Command::Collection(command) => matches!(command, CollectionCommand::List(_)),
        Command::Template(command) => matches!(command, TemplateCommand::List(_)),
        Command::Values(command) => matches!(command, ValuesCommand::List { .. }),
        Command::Token(command) => matches!(command, TokenCommand::List(_)),
        Command::Label(command) => matches!(
            command,
            LabelCommand::List { .. } | LabelCommand::History(_)
        ),
        Command::Import(args) => args.dry_run,
        Command::Export(_)
        | Command::Sync(_)
        | Command::Check(_)
        | Command::Search(_)
        | Command::Stats(_)
        | Command::Backup { .. }
        | Command::History(_)
        | Command::Diff(_) => true,
        Command::Rollback(_) | Command::Undo(_) => false,
        Command::Serve(_)
        | Command::Config(_)
        | Command::Init { .. }
        | Command::Completions { .. } => false,
    }
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
