//! Where the database file lies, as far as opening it is concerned: whether this process may
//! write the file and its folder (SQLite keeps the `-wal` and `-shm` beside the file, so a
//! WAL database in a read-only folder can be read only in particular ways), how a read-only
//! connection should open it, and which file the path names (its identity, to notice the
//! path being renamed over or deleted under a running server).

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::StoreError;

/// Which file a path names: device and inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileId {
    dev: u64,
    ino: u64,
}

impl FileId {
    /// The file `path` names now, or the error that says it names none.
    pub(crate) fn of(path: &Path) -> io::Result<FileId> {
        let meta = std::fs::metadata(path)?;
        Ok(FileId {
            dev: meta.dev(),
            ino: meta.ino(),
        })
    }
}

/// How read-only connections open the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reading {
    /// As SQLite usually does: with the WAL index in `-shm`, seeing other processes' commits.
    Shared,
    /// `immutable=1`: the file alone, no locks, no `-wal` or `-shm`. For a folder that cannot
    /// be written where the `-wal` holds nothing; SQLite then assumes the file never changes.
    Immutable,
}

/// The folder and the file's writability, looked at once per open (two `access` calls).
pub(super) struct Place {
    pub(super) file: PathBuf,
    pub(super) folder: PathBuf,
    pub(super) exists: bool,
    /// Why the folder cannot be written, if it cannot.
    folder_denied: Option<io::Error>,
    /// Why the file cannot be written, if it exists and cannot.
    file_denied: Option<io::Error>,
}

impl Place {
    pub(super) fn of(file: &Path, folder: &Path) -> Place {
        let exists = file.exists();
        Place {
            file: file.to_path_buf(),
            folder: folder.to_path_buf(),
            exists,
            folder_denied: writable(folder).err(),
            file_denied: if exists { writable(file).err() } else { None },
        }
    }

    /// Whether this process can write the database here: the file, and the folder for the
    /// `-wal` and `-shm` (and for creating the file).
    pub(super) fn writable(&self) -> bool {
        self.folder_denied.is_none() && self.file_denied.is_none()
    }

    pub(super) fn folder_writable(&self) -> bool {
        self.folder_denied.is_none()
    }

    /// The error for `doing` (e.g. "change", "create the library in") the database here, when
    /// it cannot be written: one sentence naming the read-only folder or file and the way out.
    pub(super) fn refusal(&self, doing: &str) -> Option<StoreError> {
        let file = self.file.display();
        if let Some(err) = &self.folder_denied {
            return Some(StoreError::ReadOnly(format!(
                "cannot {doing} {file}: its folder {} is read-only ({}); copy the library to a \
                 writable folder and pass --db there, or make the folder writable (commands \
                 that only read, and serve, work as it is)",
                self.folder.display(),
                why(err)
            )));
        }
        self.file_denied.as_ref().map(|err| {
            StoreError::ReadOnly(format!(
                "cannot {doing} {file}: the file is read-only ({}); make it writable (chmod u+w \
                 {file}) or copy it to a writable folder and pass --db there (commands that \
                 only read, and serve, work as it is)",
                why(err)
            ))
        })
    }

    /// How a read-only connection can read the file. In a folder that cannot be written,
    /// SQLite (3.22 and later) reads a WAL database read-only when its `-wal` and `-shm`
    /// both exist; otherwise it would have to create them, and the file is read `immutable`,
    /// which is right only when no `-wal` holds commits the file does not.
    pub(super) fn reading(&self) -> Result<Reading, StoreError> {
        if self.folder_writable() {
            return Ok(Reading::Shared);
        }
        let wal = sidecar(&self.file, "-wal");
        let shm = sidecar(&self.file, "-shm");
        let wal_len = std::fs::metadata(&wal).map(|meta| meta.len()).ok();
        match wal_len {
            Some(_) if shm.exists() => Ok(Reading::Shared),
            Some(len) if len > 0 => Err(StoreError::ReadOnly(format!(
                "cannot read {}: {} holds commits not yet in the file, and SQLite needs {} \
                 beside it to read them, which it cannot create because the folder {} is \
                 read-only ({}); open the library once where its folder is writable (e.g. \
                 `promptshelf --db FILE stats` on a copy of the file with its -wal) so the \
                 commits move into the file",
                self.file.display(),
                wal.display(),
                shm.display(),
                self.folder.display(),
                self.folder_denied.as_ref().map_or("", why)
            ))),
            _ => Ok(Reading::Immutable),
        }
    }

    /// Why the library is read without watching, for the server's one line about it.
    pub(super) fn folder_reason(&self) -> String {
        format!(
            "its folder {} is read-only ({})",
            self.folder.display(),
            self.folder_denied.as_ref().map_or("", why)
        )
    }
}

/// `file` with `suffix` appended to its name: SQLite's `-wal`, `-shm`.
pub(super) fn sidecar(file: &Path, suffix: &str) -> PathBuf {
    let mut name = file.as_os_str().to_os_string();
    name.push(suffix);
    PathBuf::from(name)
}

fn writable(path: &Path) -> io::Result<()> {
    let text = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL byte in the path"))?;
    // SAFETY: `text` is a valid NUL-terminated string for the duration of the call.
    if unsafe { libc::access(text.as_ptr(), libc::W_OK) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

fn why(err: &io::Error) -> &'static str {
    match err.raw_os_error() {
        Some(libc::EROFS) => "a read-only mount",
        Some(libc::EACCES) | Some(libc::EPERM) => "no write permission for this user",
        _ => "not writable",
    }
}

/// The SQLite URI that opens `file` immutable. Every byte but unreserved ones and `/` is
/// percent-encoded, so a `?`, `#` or `%` in a name stays part of the name.
pub(super) fn immutable_uri(file: &Path) -> String {
    let mut uri = String::from("file:");
    for &byte in file.as_os_str().as_bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            uri.push(byte as char);
        } else {
            uri.push_str(&format!("%{byte:02X}"));
        }
    }
    uri.push_str("?immutable=1");
    uri
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_immutable_uri_keeps_odd_names_whole() {
        assert_eq!(
            immutable_uri(Path::new("/a b/x?y#z%.db")),
            "file:/a%20b/x%3Fy%23z%25.db?immutable=1"
        );
        assert_eq!(
            immutable_uri(Path::new("rel/lib.db")),
            "file:rel/lib.db?immutable=1"
        );
    }
}
