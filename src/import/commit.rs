//! The commit an imported folder's git working tree is at, recorded with every item the
//! import writes (the provenance a server gives with it). Read with gitoxide's repository
//! discovery and reference store, not by running `git`: HEAD followed to the commit it names.

use std::path::Path;

use gix_ref::file::ReferenceExt;

/// The commit (lower-case hex) that HEAD names in the git working tree holding `folder`;
/// None when `folder` is in none, HEAD names no commit yet (a repository without one), or
/// the repository cannot be read, which is logged: the items are imported all the same,
/// without a commit.
pub(super) fn head_commit(folder: &Path) -> Option<String> {
    let (path, _trust) = gix_discover::upwards(folder).ok()?;
    let (git_dir, work_tree) = path.into_repository_and_work_tree_directories();
    // A bare repository has no files to import from.
    work_tree?;
    match read_head(&git_dir) {
        Ok(commit) => commit,
        Err(err) => {
            tracing::warn!(
                "the commit of the git repository at {} is not recorded: {err}",
                git_dir.display()
            );
            None
        }
    }
}

fn read_head(git_dir: &Path) -> Result<Option<String>, Box<dyn std::error::Error>> {
    // A linked worktree keeps its HEAD in its own folder and the branches in the common one.
    let common = std::fs::read_to_string(git_dir.join("commondir")).ok();
    let store = match common {
        Some(common) => gix_ref::file::Store::for_linked_worktree(
            git_dir.to_path_buf(),
            git_dir.join(common.trim_end_matches(['\n', '\r'])),
            Default::default(),
        ),
        None => gix_ref::file::Store::at(git_dir.to_path_buf(), Default::default()),
    };
    let Some(mut head) = store.try_find("HEAD")? else {
        return Ok(None);
    };
    // A branch without a commit yet (a new repository) is no commit.
    if let Some(branch) = head.target.try_name()
        && store.try_find(branch)?.is_none()
    {
        return Ok(None);
    }
    let packed = store.cached_packed_buffer()?;
    let packed = packed.as_deref().map(|snapshot| &**snapshot);
    let id = head.follow_to_object_packed(&store, packed)?;
    Ok(Some(id.to_string()))
}
