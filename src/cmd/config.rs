//! `promptshelf config HOST [--write] [--scope user|project] [--via uvx|npx]`: the entry that
//! registers this server with an MCP host (this binary's path, or the package runner's
//! command, and the database's absolute path filled in), printed as a snippet of the host's
//! file or merged into that file (`hosts`).

use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow, bail};
use clap::ValueEnum;

use super::common;
use crate::cli::ConfigArgs;
use crate::hosts::{self, Change, Launch, Target};

pub(super) fn run(db: &Path, args: ConfigArgs) -> Result<()> {
    let db = absolute_db(db)?;
    let launch = match args.via {
        Some(via) => Launch::via(via, &db, args.host),
        None => {
            let command = std::env::current_exe()
                .and_then(|exe| exe.canonicalize())
                .map_err(|err| anyhow!("cannot find the path of this promptshelf binary: {err}"))?;
            Launch::new(&command, &db, args.host)
        }
    };
    let target = hosts::target(args.host, args.scope, &launch)?;
    let host = hosts::display_name(args.host);
    if args.json {
        let name = args
            .host
            .to_possible_value()
            .map(|value| value.get_name().to_string())
            .unwrap_or_default();
        bail!(
            "config has no --json: it prints the entry as {host}'s file holds it ({}) on \
             stdout, and where it goes on stderr; run `promptshelf config {name}`, or add \
             --write to merge it into {}",
            target.format.describe(),
            target.file.display()
        );
    }
    if args.write {
        write(&target)?;
    } else {
        let snippet = hosts::snippet(&target)
            .map_err(|err| anyhow!("cannot write the {host} entry: {err}"))?;
        eprintln!(
            "Paste this into {} ({}), beside any servers already there, or run this command \
             again with --write to merge it in:",
            target.file.display(),
            target.format.describe()
        );
        print!("{snippet}");
    }
    if let Some(note) = target.note {
        eprintln!("note: {note}");
    }
    note_database(&db);
    Ok(())
}

/// Merges the entry into the host's file, saying what changed; a file that cannot take it is
/// left as it was.
fn write(target: &Target) -> Result<()> {
    let file = &target.file;
    let old = match std::fs::read(file) {
        Ok(bytes) => Some(bytes),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
        Err(err) => bail!("cannot read {}: {err}", file.display()),
    };
    let text = match &old {
        Some(bytes) => std::str::from_utf8(bytes).map_err(|err| {
            anyhow!(
                "{} is not UTF-8 text ({err}); it is left as it was: fix or move it, then run \
                 again",
                file.display()
            )
        })?,
        None => "",
    };
    let (merged, change) = hosts::merge(target, text).map_err(|err| {
        anyhow!(
            "cannot add {} to {}: {err}; the file is left as it was: fix it (or move it away) \
             and run again",
            target.place.describe(),
            file.display()
        )
    })?;
    let place = target.place.describe();
    if change == Change::Unchanged {
        return common::say(&format!(
            "unchanged: {} already has {place} with these settings; nothing written",
            file.display()
        ));
    }
    let written = hosts::write(file, old.as_deref(), &merged)?;
    let shown = written.file.display();
    common::say(&match (change, &old) {
        (_, None) => format!("created {shown} with {place}"),
        (Change::Replaced, _) => {
            format!("replaced {place} in {shown} (the entry already there was different)")
        }
        _ => format!("added {place} to {shown}"),
    })?;
    if let Some(backup) = &written.backup {
        common::say(&format!("backup of the old file: {}", backup.display()))?;
    }
    Ok(())
}

/// A word on stderr when the database the entry names is not there yet.
fn note_database(db: &Path) {
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
