//! A new database made whole or not at all. It is built (schema.sql, the secret, its first
//! contents) in a temporary file beside the final path, in one transaction, switched to WAL
//! mode, closed and synced, and only then put at the path. A process killed at any moment of
//! creation (a server restarted by its service manager after a crash on first start) leaves
//! no database at the path, or a whole one; never an empty file that later opens refuse.
//!
//! The temporary file is `.NAME.creating-PID-NANOS` in the same folder (so the move is a
//! rename within one file system). One left by a killed process is removed by the next
//! creation, once no live process has that PID.

use std::io;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags, Transaction, TransactionBehavior};

use super::{Result, StoreError, configure, opening, schema};

/// What is at the final path when the database is created.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Found {
    /// Nothing: the new file is linked in, and if another process created one meanwhile,
    /// that one is kept.
    Nothing,
    /// An empty file (an SQLite file without tables, or no bytes at all), left by a
    /// creation that did not finish: the new file replaces it.
    EmptyFile,
}

/// Creates the database at `path` in `folder` from schema.sql and `fill`, whole.
pub(super) fn whole(
    path: &Path,
    folder: &Path,
    found: Found,
    fill: impl FnOnce(&Transaction) -> Result<()>,
) -> Result<()> {
    let name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|| "library.db".into());
    remove_leftovers(folder, &name);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.subsec_nanos());
    let temporary =
        Temporary(folder.join(format!(".{name}.creating-{}-{nanos}", std::process::id())));
    build(&temporary.0, path, fill)?;
    let moved = match found {
        Found::Nothing => match std::fs::hard_link(&temporary.0, path) {
            // Another process created the database meanwhile: its file is the one served.
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => Ok(()),
            linked => linked,
        },
        Found::EmptyFile => {
            // What SQLite kept beside the empty file holds no commit (the file has no
            // tables), and must not be read as the new file's.
            for suffix in ["-wal", "-shm", "-journal"] {
                let _ = std::fs::remove_file(beside(path, suffix));
            }
            std::fs::rename(&temporary.0, path)
        }
    };
    moved.map_err(|err| {
        StoreError::Open(format!(
            "cannot put the new library at {}: {err}",
            path.display()
        ))
    })?;
    // The folder's entry is on disk too, so a crash after this leaves the database there.
    if let Ok(dir) = std::fs::File::open(folder) {
        let _ = dir.sync_all();
    }
    Ok(())
}

/// Builds the database at `temporary`, all of it in the main file, and closes it. `path` is
/// the final path, for messages.
fn build(
    temporary: &Path,
    path: &Path,
    fill: impl FnOnce(&Transaction) -> Result<()>,
) -> Result<()> {
    let mut conn = Connection::open_with_flags(
        temporary,
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|err| opening(path, err))?;
    configure(&conn).map_err(|err| opening(path, err))?;
    // Written with a rollback journal, which for pages that did not exist holds next to
    // nothing: in WAL mode every page would be written twice (the `-wal`, then the file), and
    // a library made on a nearly full disk would need twice its size free.
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    schema::create(&tx, path, fill)?;
    tx.commit()?;
    // Served in WAL mode, as every library is: the header says so from now on, and the
    // `-wal` it makes holds nothing and is gone once the connection closes.
    conn.pragma_update(None, "journal_mode", "WAL")
        .map_err(|err| opening(path, err))?;
    conn.close().map_err(|(_, err)| opening(path, err))?;
    std::fs::File::open(temporary)
        .and_then(|file| file.sync_all())
        .map_err(|err| StoreError::Open(format!("cannot sync the new library: {err}")))?;
    Ok(())
}

/// `path` with `suffix` after its file name (SQLite's `-wal`, `-shm`, `-journal`).
fn beside(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(suffix);
    PathBuf::from(name)
}

/// The temporary file and what SQLite kept beside it, removed when creation ends, however
/// it ends (after a move, only the name is removed; the linked file stays at the path).
struct Temporary(PathBuf);

impl Drop for Temporary {
    fn drop(&mut self) {
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let _ = std::fs::remove_file(beside(&self.0, suffix));
        }
    }
}

/// Removes the temporary files of creations of `name` whose process is gone.
fn remove_leftovers(folder: &Path, name: &str) {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return;
    };
    let prefix = format!(".{name}.creating-");
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(rest) = file_name
            .to_str()
            .and_then(|file| file.strip_prefix(&prefix))
        else {
            continue;
        };
        let pid = rest
            .split('-')
            .next()
            .and_then(|pid| pid.parse::<i32>().ok());
        if pid.is_some_and(|pid| !alive(pid)) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Whether a process with this PID runs (signal 0 checks without sending anything).
fn alive(pid: i32) -> bool {
    // SAFETY: kill with signal 0 sends nothing; it only reports whether the process exists.
    let sent = unsafe { libc::kill(pid, 0) };
    sent == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}
