//! Serving a Litestream replica: a file that `litestream restore -f` keeps current by writing
//! the primary's pages into it in place (docs/deploy.md). Two things about such a file
//! differ from a database that SQLite processes share, and this module handles the first:
//!
//! - Its header still says WAL (the snapshot Litestream restored was the primary's, and
//!   Litestream rewrites the header to rollback mode only when a change carries page 1).
//!   SQLite holds a shared lock on a WAL database for as long as a connection is open, and
//!   Litestream waits for an exclusive one before each change, so a server that opened the
//!   replica as WAL would stop it from ever applying anything. `prepare` rewrites the
//!   header's two journal-mode bytes to rollback mode before the server opens the file, under
//!   the same locks Litestream takes, as Litestream itself does when it applies page 1.
//! - A change that does not carry page 1 leaves the header's change counter as it was, so
//!   neither SQLite's page cache nor `PRAGMA data_version` can tell that the file changed.
//!   The store therefore reads a replica in one read transaction per request, begun on an
//!   emptied page cache (`Store::snapshot`), and the watcher reads the change log at every
//!   poll rather than when `data_version` moves (`server::watch`).

use std::fs::OpenOptions;
use std::io;
use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;
use std::path::Path;

use super::{StoreError, place};

/// SQLite's lock bytes (see its os_unix.c): the pending byte, and after the reserved byte
/// the range readers take shared locks in. Litestream locks both to apply a change.
const PENDING_BYTE: i64 = 0x4000_0000;
const SHARED_FIRST: i64 = PENDING_BYTE + 2;
const SHARED_SIZE: i64 = 510;

/// Where the header keeps the file format's write and read versions: 1 for a rollback
/// journal, 2 for WAL.
const FORMAT_VERSIONS: u64 = 18;

/// Makes the replica at `path` readable without holding Litestream off: rewrites a WAL header
/// to rollback mode (the file's pages are the same in both). Returns whether it rewrote it.
/// Refuses a file with a `-wal` that holds commits (not a Litestream replica, or one that a
/// process wrote as a database of its own), since those commits would be lost to readers.
pub(super) fn prepare(path: &Path) -> Result<bool, StoreError> {
    let shown = path.display();
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(|err| {
            StoreError::Open(format!(
                "cannot open the replica {shown} ({err}); start `litestream restore -f -o {shown} \
             REPLICA_URL` first, and give this user write access to the file (Litestream \
             writes it, and serve --replica sets its journal mode once)"
            ))
        })?;
    let wal = place::sidecar(path, "-wal");
    if std::fs::metadata(&wal).is_ok_and(|meta| meta.len() > 0) {
        return Err(StoreError::Open(format!(
            "{shown} is not a Litestream replica as it is: {} holds commits of its own; serve \
             the primary without --replica, or restore the replica again",
            wal.display()
        )));
    }
    let lock = Locked::exclusive(&file)
        .map_err(|err| StoreError::Open(format!("cannot lock the replica {shown}: {err}")))?;
    let mut versions = [0u8; 2];
    file.read_exact_at(&mut versions, FORMAT_VERSIONS)
        .map_err(|err| StoreError::Open(format!("cannot read the replica {shown}: {err}")))?;
    let rewritten = match versions {
        [1, 1] => false,
        [2, 2] => {
            file.write_all_at(&[1, 1], FORMAT_VERSIONS)
                .and_then(|()| file.sync_data())
                .map_err(|err| {
                    StoreError::Open(format!(
                        "cannot set the replica {shown} to rollback mode: {err}"
                    ))
                })?;
            true
        }
        other => {
            return Err(StoreError::NotADatabase {
                path: shown.to_string(),
                reason: format!("its header's format versions are {other:?}"),
            });
        }
    };
    drop(lock);
    Ok(rewritten)
}

/// Litestream's exclusive lock on a file, released when dropped. POSIX locks belong to the
/// process and go when any of its descriptors of the file closes, so this is taken before
/// any SQLite connection to the file exists, and released before one opens.
struct Locked<'a> {
    file: &'a std::fs::File,
}

impl<'a> Locked<'a> {
    fn exclusive(file: &'a std::fs::File) -> io::Result<Locked<'a>> {
        set_lock(file, libc::F_WRLCK, PENDING_BYTE, 1)?;
        if let Err(err) = set_lock(file, libc::F_WRLCK, SHARED_FIRST, SHARED_SIZE) {
            let _ = set_lock(file, libc::F_UNLCK, PENDING_BYTE, 1);
            return Err(err);
        }
        Ok(Locked { file })
    }
}

impl Drop for Locked<'_> {
    fn drop(&mut self) {
        let _ = set_lock(self.file, libc::F_UNLCK, SHARED_FIRST, SHARED_SIZE);
        let _ = set_lock(self.file, libc::F_UNLCK, PENDING_BYTE, 1);
    }
}

/// One `fcntl` record lock, waiting for it (`F_SETLKW`), as SQLite and Litestream do.
fn set_lock(file: &std::fs::File, kind: libc::c_int, start: i64, len: i64) -> io::Result<()> {
    // SAFETY: an all-zero `flock` is a valid value of the plain C struct.
    let mut lock: libc::flock = unsafe { std::mem::zeroed() };
    lock.l_type = kind as libc::c_short;
    lock.l_whence = libc::SEEK_SET as libc::c_short;
    lock.l_start = start as libc::off_t;
    lock.l_len = len as libc::off_t;
    loop {
        // SAFETY: the descriptor is open for the call, and `lock` is a valid `flock`.
        if unsafe { libc::fcntl(file.as_raw_fd(), libc::F_SETLKW, &lock) } == 0 {
            return Ok(());
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}
