//! Opening a file the walk found, so that what is read is a file of the folder at the moment
//! it is opened: between the walk and the read, a file (or a folder on its path) may have been
//! replaced by a symlink leading elsewhere.
//!
//! The path is examined without following a last symlink (`symlink_metadata`); a symlink
//! found there is resolved and must stay inside the folder, as in the walk. The file is then
//! opened with `O_NOFOLLOW` (a symlink swapped into the last component fails the open, and
//! the file is examined again) and `O_NONBLOCK` (a FIFO swapped in cannot hold the import
//! up). After opening,
//! the opened file must be the one examined (same device and inode: a symlink swapped in
//! between leads to another file), and its real path, as the kernel gives it for the open
//! descriptor (`/proc/self/fd/N` on Linux; elsewhere the path canonicalized again and checked
//! to be the same file), must lie under the folder. A hard link is an ordinary file of the
//! folder: whoever links a file into the folder shares it on purpose, so it is read.

use std::fs::{File, Metadata};
use std::io;
use std::path::{Path, PathBuf};

/// Why a file was not opened.
#[derive(Debug)]
pub(super) enum Refused {
    /// Not a file of the folder (now): skipped with this reason, never read.
    Skip(String),
    /// It could not be opened.
    Failed(io::Error),
}

/// How often a file replaced while being opened is examined again (an editor saving by
/// rename replaces files too) before it is skipped.
const ATTEMPTS: usize = 3;

/// Opens `path`, a file the walk found under `root` (canonical), for reading.
pub(super) fn open_inside(root: &Path, path: &Path) -> Result<File, Refused> {
    for _ in 0..ATTEMPTS {
        let (target, before) = examine(root, path)?;
        let file = match open_no_follow(&target) {
            Ok(file) => file,
            // A symlink swapped in after the look: look again.
            Err(err) if is_link_refused(&err) => continue,
            Err(err) => return Err(Refused::Failed(err)),
        };
        let opened = file.metadata().map_err(Refused::Failed)?;
        if !same_file(&before, &opened) {
            // Replaced between the look and the open: look again.
            continue;
        }
        if !opened.is_file() {
            return Err(Refused::Skip("not a regular file".into()));
        }
        if !opened_inside(root, &target, &file, &opened) {
            return Err(Refused::Skip(OUTSIDE.into()));
        }
        return Ok(file);
    }
    Err(Refused::Skip(
        "it kept being replaced while it was opened".into(),
    ))
}

pub(super) const OUTSIDE: &str = "a symlink leading outside the folder";

/// Opens `path` for reading without following a symlink in its last component, and without
/// waiting on a FIFO or device that was swapped in (Unix); elsewhere a plain open, the checks
/// after it doing the rest.
fn open_no_follow(path: &Path) -> io::Result<File> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(path)
    }
    #[cfg(not(unix))]
    File::open(path)
}

/// Whether opening failed because the last component was a symlink (`O_NOFOLLOW`).
fn is_link_refused(err: &io::Error) -> bool {
    #[cfg(unix)]
    {
        err.raw_os_error() == Some(libc::ELOOP)
    }
    #[cfg(not(unix))]
    {
        let _ = err;
        false
    }
}

/// The path to open and what is there, without following a last symlink; a symlink is
/// resolved and must lead inside the folder.
fn examine(root: &Path, path: &Path) -> Result<(PathBuf, Metadata), Refused> {
    let here = std::fs::symlink_metadata(path).map_err(Refused::Failed)?;
    if !here.file_type().is_symlink() {
        return Ok((path.to_path_buf(), here));
    }
    let target = match std::fs::canonicalize(path) {
        Ok(target) => target,
        Err(err) => return Err(Refused::Skip(link_problem(path, &err))),
    };
    if !target.starts_with(root) {
        return Err(Refused::Skip(OUTSIDE.into()));
    }
    let there = std::fs::symlink_metadata(&target).map_err(Refused::Failed)?;
    Ok((target, there))
}

/// Why the symlink at `path` cannot be followed, `err` being what following it said.
pub(super) fn link_problem(path: &Path, err: &io::Error) -> String {
    if err.kind() == io::ErrorKind::NotFound {
        return "a symlink to nothing".into();
    }
    // Follow the chain by hand: a loop comes back to a link already seen.
    let mut seen = vec![path.to_path_buf()];
    let mut current = path.to_path_buf();
    for _ in 0..64 {
        let Ok(next) = std::fs::read_link(&current) else {
            break;
        };
        let next = match current.parent() {
            Some(parent) => parent.join(next),
            None => next,
        };
        if seen.contains(&next) {
            return "a symlink loop".into();
        }
        seen.push(next.clone());
        current = next;
    }
    if seen.len() > 40 {
        return "a symlink loop".into();
    }
    format!(
        "a symlink that cannot be followed ({})",
        super::plain_error(err)
    )
}

#[cfg(unix)]
fn same_file(a: &Metadata, b: &Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(not(unix))]
fn same_file(a: &Metadata, b: &Metadata) -> bool {
    a.len() == b.len() && a.modified().ok() == b.modified().ok()
}

/// Whether the open file lies under `root`.
fn opened_inside(root: &Path, target: &Path, file: &File, opened: &Metadata) -> bool {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::io::AsRawFd;
        if let Ok(real) = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())) {
            return real.starts_with(root);
        }
    }
    let _ = file;
    resolved_inside(root, target, opened)
}

/// Without /proc: the path resolved now must be under the folder and still be the open file.
fn resolved_inside(root: &Path, target: &Path, opened: &Metadata) -> bool {
    match std::fs::canonicalize(target) {
        Ok(real) => {
            real.starts_with(root)
                && std::fs::metadata(&real).is_ok_and(|now| same_file(&now, opened))
        }
        Err(_) => false,
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::io::Read;
    use std::os::unix::fs::symlink;

    fn read(file: File) -> String {
        let mut text = String::new();
        let mut file = file;
        file.read_to_string(&mut text).expect("read");
        text
    }

    fn skip_reason(result: Result<File, Refused>) -> String {
        match result {
            Err(Refused::Skip(reason)) => reason,
            Err(Refused::Failed(err)) => panic!("failed instead of refusing: {err}"),
            Ok(file) => panic!("opened it and would read {:?}", read(file)),
        }
    }

    #[test]
    fn a_file_swapped_for_a_link_out_of_the_folder_is_refused() {
        let temp = tempfile::tempdir().expect("temporary folder");
        let base = temp.path().canonicalize().expect("canonical");
        let root = base.join("lib");
        std::fs::create_dir_all(root.join("sub")).expect("folder");
        std::fs::write(base.join("secret.md"), "secret").expect("write");
        let file = root.join("sub/a.md");
        std::fs::write(&file, "mine").expect("write");
        assert_eq!(read(open_inside(&root, &file).expect("open")), "mine");
        // The walk found a regular file; it is now a link out of the folder.
        std::fs::remove_file(&file).expect("remove");
        symlink(base.join("secret.md"), &file).expect("link");
        assert_eq!(skip_reason(open_inside(&root, &file)), OUTSIDE);
        // A relative link out is refused the same way.
        std::fs::remove_file(&file).expect("remove");
        symlink("../../secret.md", &file).expect("link");
        assert_eq!(skip_reason(open_inside(&root, &file)), OUTSIDE);
    }

    /// A folder `lib` holding `sub/a.md` ("mine"), and beside it `elsewhere/a.md`
    /// ("secret"): the temporary folder (kept alive), its canonical path, `lib`, the file.
    fn folder_with_a_secret_beside_it() -> (tempfile::TempDir, PathBuf, PathBuf, PathBuf) {
        let temp = tempfile::tempdir().expect("temporary folder");
        let base = temp.path().canonicalize().expect("canonical");
        let root = base.join("lib");
        std::fs::create_dir_all(root.join("sub")).expect("folder");
        std::fs::create_dir_all(base.join("elsewhere")).expect("folder");
        std::fs::write(base.join("elsewhere/a.md"), "secret").expect("write");
        let file = root.join("sub/a.md");
        std::fs::write(&file, "mine").expect("write");
        (temp, base, root, file)
    }

    #[test]
    fn a_folder_on_the_path_swapped_for_a_link_out_of_the_folder_is_refused() {
        let (_temp, base, root, file) = folder_with_a_secret_beside_it();
        std::fs::remove_dir_all(root.join("sub")).expect("remove");
        symlink(base.join("elsewhere"), root.join("sub")).expect("link");
        assert_eq!(skip_reason(open_inside(&root, &file)), OUTSIDE);
    }

    #[test]
    fn without_proc_the_path_resolved_again_must_be_the_open_file_inside_the_folder() {
        let (_temp, base, root, file) = folder_with_a_secret_beside_it();
        let opened = File::open(&file).expect("open").metadata().expect("stat");
        assert!(resolved_inside(&root, &file, &opened));
        // A folder on the path now leads out of the folder.
        std::fs::rename(root.join("sub"), base.join("old")).expect("rename");
        symlink(base.join("elsewhere"), root.join("sub")).expect("link");
        let outside = File::open(&file).expect("open").metadata().expect("stat");
        assert!(!resolved_inside(&root, &file, &outside));
        // The path leads to another file than the one opened.
        assert!(!resolved_inside(&base, &file, &opened));
    }

    #[test]
    fn links_inside_the_folder_and_hard_links_are_read() {
        let temp = tempfile::tempdir().expect("temporary folder");
        let base = temp.path().canonicalize().expect("canonical");
        let root = base.join("lib");
        std::fs::create_dir_all(root.join("sub")).expect("folder");
        std::fs::write(root.join("sub/a.md"), "mine").expect("write");
        symlink(root.join("sub/a.md"), root.join("alias.md")).expect("link");
        symlink(root.join("sub"), root.join("folder")).expect("link");
        assert_eq!(
            read(open_inside(&root, &root.join("alias.md")).expect("open")),
            "mine"
        );
        assert_eq!(
            read(open_inside(&root, &root.join("folder/a.md")).expect("open")),
            "mine"
        );
        std::fs::write(base.join("shared.md"), "shared").expect("write");
        std::fs::hard_link(base.join("shared.md"), root.join("shared.md")).expect("hard link");
        assert_eq!(
            read(open_inside(&root, &root.join("shared.md")).expect("open")),
            "shared"
        );
    }

    #[test]
    fn broken_links_and_loops_are_refused_with_their_reason() {
        let temp = tempfile::tempdir().expect("temporary folder");
        let root = temp.path().canonicalize().expect("canonical");
        symlink(root.join("gone.md"), root.join("dangling.md")).expect("link");
        symlink(root.join("b.md"), root.join("a.md")).expect("link");
        symlink(root.join("a.md"), root.join("b.md")).expect("link");
        assert_eq!(
            skip_reason(open_inside(&root, &root.join("dangling.md"))),
            "a symlink to nothing"
        );
        assert_eq!(
            skip_reason(open_inside(&root, &root.join("a.md"))),
            "a symlink loop"
        );
    }
}
