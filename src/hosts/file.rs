//! Writing a host's file: a backup of the old file beside it, then the new text written to a
//! temporary file in the same folder and renamed over the old one, so the file is at every
//! moment either the old one or the new one, never half of either.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// What `write` did.
pub(crate) struct Written {
    /// The file written (a symlink's target: the link is kept).
    pub file: PathBuf,
    /// Where the old file was copied, when there was one.
    pub backup: Option<PathBuf>,
}

/// Writes `text` to `path`, creating its folder. When the file exists (`old` holds its bytes),
/// they are first written to `<file>.bak`, replacing an older backup.
pub(crate) fn write(path: &Path, old: Option<&[u8]>, text: &str) -> Result<Written> {
    // Hosts' files are often symlinks into a dotfiles repository: write where the link points.
    let file = match old {
        Some(_) => fs::canonicalize(path)
            .with_context(|| format!("cannot resolve the path {}", path.display()))?,
        None => path.to_path_buf(),
    };
    let folder = file
        .parent()
        .filter(|folder| !folder.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    fs::create_dir_all(folder)
        .with_context(|| format!("cannot create the folder {}", folder.display()))?;
    // The new file, and the backup, get the old file's permissions (~/.claude.json is 0600).
    let permissions = fs::metadata(&file)
        .ok()
        .map(|metadata| metadata.permissions());
    let backup = match old {
        Some(old) => {
            let mut name = file.file_name().unwrap_or_default().to_os_string();
            name.push(".bak");
            let backup = file.with_file_name(name);
            replace(folder, &backup, old, permissions.clone())
                .with_context(|| format!("cannot write the backup {}", backup.display()))?;
            Some(backup)
        }
        None => None,
    };
    replace(folder, &file, text.as_bytes(), permissions)
        .with_context(|| format!("cannot write {}", file.display()))?;
    Ok(Written { file, backup })
}

/// `bytes` into `path` through a synced temporary file in `folder` renamed over it.
fn replace(
    folder: &Path,
    path: &Path,
    bytes: &[u8],
    permissions: Option<fs::Permissions>,
) -> Result<()> {
    let mut temporary = tempfile::Builder::new()
        .prefix(".promptshelf-")
        .tempfile_in(folder)?;
    temporary.write_all(bytes)?;
    if let Some(permissions) = permissions {
        temporary.as_file().set_permissions(permissions)?;
    }
    temporary.as_file().sync_all()?;
    temporary.persist(path).map_err(|err| err.error)?;
    Ok(())
}
