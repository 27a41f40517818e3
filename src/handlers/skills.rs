//! `skills/list` and `skills/get` of the Skills extension (SEP-2640). A skill is a stored
//! resource `skill://PATH/SKILL.md` (an imported skill folder's `SKILL.md`, see
//! `library::skill_document`) whose front matter names it after the last segment of PATH
//! and describes it; its files are the stored resources under `skill://PATH/`, each with
//! the SHA-256 and the size of the bytes `resources/read` serves. A caller limited to some
//! collections is told only of their skills, and of the files of them it can read. The
//! extension's optional `resources/directory/read` lists a folder under `skill://`: its
//! files and the folders holding more.

use rusqlite::Connection;

use super::paging;
use crate::config::ServeConfig;
use crate::library::skill_front_matter;
use crate::model::StoredResource;
use crate::protocol::{DirectoryChild, Failure, Page, SkillEntry, SkillFile};
use crate::store::read::{self, Listed, Window};
use crate::store::{self, StoreError};
use crate::visibility::Visibility;

/// How the SHA-256 of a stored file is found: the server keeps them by content, so each
/// content is hashed once, whatever asks for it.
pub(crate) type Sha256<'a> = &'a dyn Fn(&Connection, &StoredResource) -> Result<[u8; 32], Failure>;

/// Every skill's URI starts with this and ends with `SKILL_FILE`.
const SCHEME: &str = "skill://";
const SKILL_FILE: &str = "/SKILL.md";

/// The draft's limits on one skill: a host must load a skill within them and need not load
/// a larger one, so a larger one is not served as a skill.
const MAX_FILES: usize = 512;
const MAX_BYTES: u64 = 16 * 1024 * 1024;

/// A page of the skills `seen` shows, ordered by URI; its cursor goes on after the last
/// skill's URI. A stored `SKILL.md` that is no skill the extension can serve (its front
/// matter does not name it after its folder, say) is left out, and said in the debug log
/// (an import refuses such a skill, so only one added by hand can be one).
pub(crate) fn list(
    conn: &Connection,
    config: &ServeConfig,
    cursor: Option<&str>,
    seen: &Visibility,
    sha256: Sha256,
) -> Result<Page<SkillEntry>, Failure> {
    // The page and every skill's files are read from one snapshot.
    let _tx = store::read_transaction(conn).map_err(StoreError::from)?;
    let within = seen.collections();
    let mut documents = paging::list(
        conn,
        Listed::Resources,
        cursor,
        config.page_size,
        |tx, window| read::resources_framed_within(tx, window, SCHEME, SKILL_FILE, within),
        |document| &document.info.uri,
    )?;
    if seen.is_limited() {
        paging::dated_by_items(&mut documents, |document| document.last_modified);
    }
    let mut skills = Vec::with_capacity(documents.items.len());
    for document in &documents.items {
        match entry(conn, document, within, sha256)? {
            Ok(skill) => skills.push(skill),
            Err(why) => tracing::debug!(uri = %document.info.uri, "not listed as a skill: {why}"),
        }
    }
    Ok(Page {
        items: skills,
        next_cursor: documents.next_cursor,
        last_modified: documents.last_modified,
    })
}

/// The skill whose `SKILL.md` is `uri`, if `seen` shows it; otherwise invalid params, as the
/// draft has it for a URI that names no skill.
pub(crate) fn get(
    conn: &Connection,
    uri: &str,
    seen: &Visibility,
    sha256: Sha256,
) -> Result<SkillEntry, Failure> {
    let unknown = |why: &str| {
        Failure::InvalidParams(format!(
            "no skill '{uri}': {why}; skills/list shows the skills there are"
        ))
    };
    if skill_path(uri).is_none() {
        return Err(unknown("a skill's URI is skill://PATH/SKILL.md"));
    }
    let _tx = store::read_transaction(conn).map_err(StoreError::from)?;
    let document = read::resource(conn, uri)?
        .filter(|document| seen.shows(document.info.origin.collection.as_deref()))
        .ok_or_else(|| unknown("the library holds no such file"))?;
    entry(conn, &document, seen.collections(), sha256)?.map_err(|why| unknown(&why))
}

/// A page of the direct children of the directory `uri` (`skill://PATH`, no trailing `/`)
/// that `seen` shows: its files and its folders, by URI. Each child is one search of the
/// URI index, a folder skipped over whole, so a page costs its size whatever the folder
/// holds. A URI under which nothing is stored (a file's, say) is no directory: invalid
/// params, as the draft has it.
pub(crate) fn read_directory(
    conn: &Connection,
    config: &ServeConfig,
    uri: &str,
    cursor: Option<&str>,
    seen: &Visibility,
) -> Result<Page<DirectoryChild>, Failure> {
    let not_a_directory = |why: &str| {
        Failure::InvalidParams(format!(
            "'{uri}' is no directory: {why}; a skill's folder is skill://PATH, without the \
             trailing /, as skills/list gives its SKILL.md's URI"
        ))
    };
    if uri.strip_prefix(SCHEME).is_none_or(str::is_empty) || uri.ends_with('/') {
        return Err(not_a_directory("a directory's URI is skill://PATH"));
    }
    let _tx = store::read_transaction(conn).map_err(StoreError::from)?;
    let within = seen.collections();
    let prefix = format!("{uri}/");
    // Every URI under the folder is below this one: `0` follows `/`.
    let below = format!("{uri}0");
    let mut page = paging::list(
        conn,
        Listed::Resources,
        cursor,
        config.page_size,
        |tx, window| {
            let mut children = Vec::new();
            let mut after = window.after.to_string();
            // A page that goes on after a folder goes on after everything in it.
            let mut from = match after.strip_suffix('/') {
                Some(folder) => format!("{folder}0"),
                None => prefix.clone(),
            };
            while window.limit.is_none_or(|limit| children.len() < limit) {
                let Some(found) = read::first_resource_within(tx, &after, &from, &below, within)?
                else {
                    break;
                };
                let rest = &found.info.uri[prefix.len()..];
                match rest.split_once('/') {
                    None => {
                        after = found.info.uri.clone();
                        children.push(DirectoryChild::File(Box::new(found)));
                    }
                    Some((name, _)) => {
                        let folder = format!("{prefix}{name}");
                        from = format!("{folder}0");
                        children.push(DirectoryChild::Directory {
                            key: format!("{folder}/"),
                            uri: folder,
                            name: name.to_string(),
                        });
                    }
                }
            }
            Ok(children)
        },
        DirectoryChild::key,
    )?;
    if cursor.is_none() && page.items.is_empty() {
        return Err(not_a_directory("the library holds nothing under it"));
    }
    if seen.is_limited() {
        paging::dated_by_items(&mut page, |child| match child {
            DirectoryChild::File(file) => file.last_modified,
            DirectoryChild::Directory { .. } => 0,
        });
    }
    Ok(page)
}

/// `skill://PATH/SKILL.md`'s PATH, when it has one.
fn skill_path(uri: &str) -> Option<&str> {
    uri.strip_prefix(SCHEME)?
        .strip_suffix(SKILL_FILE)
        .filter(|path| !path.is_empty())
}

/// The entry of the skill whose `SKILL.md` is `document`, with its files of the collections
/// `within`; or why it is no skill the extension serves.
fn entry(
    conn: &Connection,
    document: &StoredResource,
    within: Option<&[String]>,
    sha256: Sha256,
) -> Result<Result<SkillEntry, String>, Failure> {
    let uri = &document.info.uri;
    let Some(path) = skill_path(uri) else {
        return Ok(Err("a skill's URI is skill://PATH/SKILL.md".into()));
    };
    let name = path.rsplit('/').next().unwrap_or(path);
    let Some(bytes) = read::blob(conn, &document.blob_hash)? else {
        return Err(Failure::Internal(format!(
            "the content of {uri} is missing from the database"
        )));
    };
    let Ok(text) = std::str::from_utf8(&bytes) else {
        return Ok(Err("its SKILL.md is not UTF-8 text".into()));
    };
    let frontmatter = match skill_front_matter(text, name) {
        Ok(frontmatter) => frontmatter,
        Err(why) => return Ok(Err(why)),
    };
    let folder = format!("{SCHEME}{path}/");
    let files = read::resources_framed_within(conn, Window::ALL, &folder, "", within)?;
    let bytes: u64 = files.iter().map(|file| file.size).sum();
    if files.len() > MAX_FILES || bytes > MAX_BYTES {
        return Ok(Err(format!(
            "it has {} files of {bytes} bytes, over the {MAX_FILES} files and {MAX_BYTES} bytes \
             a host must accept of a skill",
            files.len()
        )));
    }
    let mut resources = Vec::with_capacity(files.len());
    for file in &files {
        resources.push(SkillFile {
            uri: file.info.uri.clone(),
            sha256: sha256(conn, file)?,
            size: file.size,
        });
    }
    Ok(Ok(SkillEntry {
        uri: uri.clone(),
        frontmatter,
        resources,
        last_modified: files
            .iter()
            .map(|file| file.last_modified)
            .max()
            .unwrap_or(0),
    }))
}

/// The SHA-256 of a stored file's bytes, read from the database: what the server keeps.
pub(crate) fn sha256_of(conn: &Connection, file: &StoredResource) -> Result<[u8; 32], Failure> {
    use sha2::Digest;
    let bytes = read::blob(conn, &file.blob_hash)?.ok_or_else(|| {
        Failure::Internal(format!(
            "the content of {} is missing from the database",
            file.info.uri
        ))
    })?;
    Ok(sha2::Sha256::digest(&bytes).into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_skill_uri_names_its_path() {
        assert_eq!(skill_path("skill://lint/SKILL.md"), Some("lint"));
        assert_eq!(
            skill_path("skill://acme/billing/refunds/SKILL.md"),
            Some("acme/billing/refunds")
        );
        assert_eq!(skill_path("skill:///SKILL.md"), None);
        assert_eq!(skill_path("skill://lint/README.md"), None);
        assert_eq!(skill_path("shelf://lint/SKILL.md"), None);
    }
}
