//! `prompt edit` and `resource edit`: an item opened in the user's editor (`$VISUAL`, else
//! `$EDITOR`, run through `sh -c` so that `EDITOR="code --wait"` works) and stored again.
//!
//! An item added by hand is written to a temporary file in the folder format
//! (`library::emit`, under a name with the item's extension, so the editor highlights it)
//! and read back as `prompt add` and `resource add` read a file. A file that does not read
//! is opened again with the error on top in comment lines, which are removed before it is
//! read again, as `git commit` does; an emptied file or an editor that fails ends the edit
//! without a write. An item of a collection is edited in its own file (the folder its
//! collection was last imported from, joined with the item's origin), and the collection is
//! then imported again through `import`, exactly as `import DIR --collection NAME` would;
//! that file is the author's, so an error goes to stderr instead and the file is reopened
//! as the author left it. An item of the built-in seed has no file: it is edited as one
//! added by hand and stored detached from the seed (as `prompt add --detach` would), so that
//! the edit is the user's own from then on.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, anyhow};

use super::common;
use crate::import::{self, Action, Kind};
use crate::library::{self, FileError, Folder, Item, emit};
use crate::model::{Content, ContentHash, Origin, Prompt, Resource, StoredPrompt, StoredResource};
use crate::seed::SEED_COLLECTION;
use crate::store::{self, Outcome, Store};

/// How the comment lines put above an error start; only leading lines that start so are
/// removed, and only once the file has been given them.
const COMMENT: &str = "# promptshelf:";

pub(super) fn prompt(store: &Store, name: &str) -> Result<()> {
    let stored = common::stored_prompt(store, name)?;
    let editor = Editor::from_env()?;
    match place(store, &stored.prompt.origin)? {
        Place::ByHand { detach } => prompt_by_hand(store, &editor, stored, detach),
        Place::Collection => {
            in_collection(store, &editor, Kind::Prompt, name, &stored.prompt.origin)
        }
    }
}

pub(super) fn resource(store: &Store, uri: &str) -> Result<()> {
    let found = store::read::resource_content(&*store.conn()?, uri)?;
    let Some((stored, content)) = found else {
        return Err(common::unknown_resource(&*store.conn()?, uri)?);
    };
    let what = format!("resource {}", common::one_line(uri));
    let Content::Text(text) = content else {
        return Err(anyhow!(
            "{what} is binary ({}, {}), which no text editor can open; change the file and \
             store it again with `promptshelf resource add FILE --uri {}`{}",
            stored.info.mime_type,
            common::human_size(stored.size),
            common::one_line(uri),
            if stored.info.origin.collection.is_some() {
                ", or import its collection's folder again"
            } else {
                ""
            }
        ));
    };
    let editor = Editor::from_env()?;
    match place(store, &stored.info.origin)? {
        Place::ByHand { detach } => resource_by_hand(store, &editor, stored, text, detach),
        Place::Collection => {
            in_collection(store, &editor, Kind::Resource, uri, &stored.info.origin)
        }
    }
}

/// Where an item is edited.
enum Place {
    /// In a temporary file, and stored as an item added by hand; `detach`: detached from the
    /// built-in seed, which has no folder to edit it in.
    ByHand { detach: bool },
    /// In the file of its collection, which is then imported again (`in_collection`).
    Collection,
}

/// Where the item that came from `origin` is edited.
fn place(store: &Store, origin: &Origin) -> Result<Place> {
    Ok(match origin.collection.as_deref() {
        None => Place::ByHand { detach: false },
        Some(SEED_COLLECTION) if common::collection_source(store, SEED_COLLECTION)?.is_none() => {
            Place::ByHand { detach: true }
        }
        Some(_) => Place::Collection,
    })
}

/// What an edit of a seed item adds to the line saying it was stored.
fn detached_note(detach: bool) -> &'static str {
    if detach {
        ", detached from the built-in seed (`promptshelf history` and `undo` go back)"
    } else {
        ""
    }
}

/// The command that edits a file, and the variable it came from (for messages).
struct Editor {
    command: String,
    variable: &'static str,
}

impl Editor {
    fn from_env() -> Result<Editor> {
        for variable in ["VISUAL", "EDITOR"] {
            if let Ok(command) = std::env::var(variable)
                && !command.trim().is_empty()
            {
                return Ok(Editor { command, variable });
            }
        }
        Err(anyhow!(
            "no editor to open the file in: set VISUAL or EDITOR to one, e.g. `export \
             EDITOR=nano` (an editor that opens a window must wait until the file is closed: \
             `export EDITOR=\"code --wait\"`)"
        ))
    }

    /// Opens `file` and waits; an editor that fails (exits non-zero, is killed) is an error
    /// saying so, which ends the edit.
    fn open(&self, file: &Path) -> Result<()> {
        // As git does: the variable is shell words, the file one argument after them.
        let status = Command::new("sh")
            .arg("-c")
            .arg(format!("{} \"$@\"", self.command))
            .arg(&self.command)
            .arg(file)
            .status()
            .map_err(|err| anyhow!("cannot run sh to start the editor: {err}"))?;
        if status.success() {
            return Ok(());
        }
        let how = match status.code() {
            Some(code) => format!("exited with status {code}"),
            None => "was stopped by a signal".to_string(),
        };
        Err(anyhow!(
            "the editor (`{}`, from {}) {how}",
            self.command.trim(),
            self.variable
        ))
    }
}

/// An item added by hand, in a temporary file of its own folder: removed when dropped
/// unless `keep` is called, which is how an edit that could not be stored is never lost.
struct Draft {
    dir: Option<tempfile::TempDir>,
    path: PathBuf,
    /// The file's name, which also says how it is read (`review.prompt.md`, `notes.md`).
    name: String,
}

impl Draft {
    fn new(name: &str, text: &[u8]) -> Result<Draft> {
        let dir = tempfile::Builder::new()
            .prefix("promptshelf-edit-")
            .tempdir()
            .map_err(|err| anyhow!("cannot make a temporary folder to edit in: {err}"))?;
        let path = dir.path().join(name);
        std::fs::write(&path, text)
            .map_err(|err| anyhow!("cannot write {}: {err}", path.display()))?;
        Ok(Draft {
            dir: Some(dir),
            path,
            name: name.to_string(),
        })
    }

    /// Leaves the file where it is, and returns where that is.
    fn keep(&mut self) -> String {
        if let Some(dir) = self.dir.take() {
            let _ = dir.keep();
        }
        self.path.display().to_string()
    }

    fn read(&self) -> Result<Vec<u8>> {
        common::read_file(&self.path)
    }
}

/// What editing a draft gave.
enum Edited<T> {
    /// The file came back as it was written: nothing to store.
    Unchanged,
    /// The file reads as this.
    Read(T),
}

/// Opens `draft` in the editor until it reads (`read`), comes back as it was, or the edit
/// ends: the file emptied, the editor failed, or the file returned as it was reopened with
/// an error. An edit that ends with changes in the file keeps the file, and says where.
fn edit_draft<T>(
    editor: &Editor,
    draft: &mut Draft,
    original: &[u8],
    read: impl Fn(&[u8]) -> Result<T, FileError>,
) -> Result<Edited<T>> {
    // What the file held when the editor last opened it, and whether that held an error.
    let mut opened = original.to_vec();
    let mut with_error = false;
    loop {
        let edited = editor.open(&draft.path).and_then(|()| draft.read());
        let bytes = match edited {
            Ok(bytes) => bytes,
            Err(err) => {
                let kept = changed(&draft.read().unwrap_or_default(), original, with_error)
                    .then(|| draft.keep());
                return Err(abandoned(err, kept));
            }
        };
        let text = if with_error {
            without_comments(&bytes)
        } else {
            &bytes[..]
        };
        if with_error && bytes == opened {
            let kept = draft.keep();
            return Err(anyhow!(
                "{} still has the error above, so nothing was written; your edit is kept in \
                 {kept}",
                draft.name
            ));
        }
        if text.iter().all(u8::is_ascii_whitespace) {
            return Err(anyhow!(
                "the file is empty, so the edit is abandoned; nothing was written"
            ));
        }
        if text == original {
            return Ok(Edited::Unchanged);
        }
        match read(text) {
            Ok(value) => return Ok(Edited::Read(value)),
            Err(err) => {
                let reopened = with_comments(&err, &draft.name, text);
                std::fs::write(&draft.path, &reopened)
                    .map_err(|io| anyhow!("cannot write {}: {io}", draft.path.display()))?;
                eprintln!(
                    "promptshelf: {}; opening it again (save it unchanged to stop, empty it to \
                     abandon the edit)",
                    shown_error(&err, &draft.name, 0)
                );
                opened = reopened;
                with_error = true;
            }
        }
    }
}

/// Whether the draft holds more than what was written into it.
fn changed(bytes: &[u8], original: &[u8], with_error: bool) -> bool {
    let text = if with_error {
        without_comments(bytes)
    } else {
        bytes
    };
    text != original && !text.iter().all(u8::is_ascii_whitespace)
}

/// An edit ended by `err`, with where the draft was kept when it was.
fn abandoned(err: anyhow::Error, kept: Option<String>) -> anyhow::Error {
    match kept {
        Some(path) => anyhow!(
            "{err:#}, so the edit is abandoned and nothing was written; your edit is kept in \
             {path}"
        ),
        None => anyhow!("{err:#}, so the edit is abandoned and nothing was written"),
    }
}

/// How many comment lines `with_comments` puts on top.
const COMMENT_LINES: u64 = 3;

/// `text` under comment lines that say what is wrong; the error's line is counted in the
/// file as the editor shows it, comments included.
fn with_comments(err: &FileError, name: &str, text: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "{COMMENT} not stored: {}\n\
         {COMMENT} fix it and save to try again; empty the file to abandon the edit.\n\
         {COMMENT} these lines are removed before the file is read.\n",
        shown_error(err, name, COMMENT_LINES)
    )
    .into_bytes();
    out.extend_from_slice(text);
    out
}

/// An error on one line, `name:line: message`, its line moved down by `offset`.
fn shown_error(err: &FileError, name: &str, offset: u64) -> String {
    common::one_line(
        &FileError {
            path: name.to_string(),
            line: err.line.map(|line| line + offset),
            column: err.column,
            message: err.message.clone(),
        }
        .to_string(),
    )
}

/// `bytes` without the comment lines at their start.
fn without_comments(mut bytes: &[u8]) -> &[u8] {
    while bytes.starts_with(COMMENT.as_bytes()) {
        bytes = match bytes.iter().position(|&b| b == b'\n') {
            Some(end) => &bytes[end + 1..],
            None => &[],
        };
    }
    bytes
}

/// A file name for an item's key: one segment, not hidden.
fn file_stem(key: &str) -> String {
    let stem = key.replace(['/', '\\'], "-");
    let stem = stem.trim_start_matches('.');
    if stem.is_empty() {
        "item".to_string()
    } else {
        stem.to_string()
    }
}

/// A draft read as an import reads a file, with the front matter keys kept that the format
/// does not read (a restored library's, say): they were in the draft, and stay with the item.
fn read_draft(file_name: &str, bytes: &[u8]) -> Result<Option<Item>, FileError> {
    library::parse_file_kept(&common::local_collection(), file_name, Folder::Plain, bytes)
}

/// A problem with the whole file, not one line of it.
fn whole(name: &str, message: String) -> FileError {
    FileError {
        path: name.to_string(),
        line: None,
        column: None,
        message,
    }
}

/// Edits a prompt in a temporary file; `detach` stores it detached from the seed it came
/// from.
fn prompt_by_hand(
    store: &Store,
    editor: &Editor,
    stored: StoredPrompt,
    detach: bool,
) -> Result<()> {
    let name = stored.prompt.name.clone();
    let file_name = format!("{}.prompt.md", file_stem(&name));
    let original = emit::prompt_file(&stored.prompt, &file_name);
    let mut draft = Draft::new(&file_name, original.as_bytes())?;
    let read = |bytes: &[u8]| -> Result<(Prompt, Vec<u8>), FileError> {
        let item = read_draft(&file_name, bytes)?;
        let Some(Item::Prompt(mut prompt)) = item else {
            return Err(whole(&file_name, "it is not a prompt file".into()));
        };
        if prompt.name != name {
            return Err(whole(
                &file_name,
                format!(
                    "the name is now '{}', and an edit keeps the name; change it back to \
                     '{name}', and rename the prompt with `promptshelf prompt mv {name} {}`",
                    prompt.name, prompt.name
                ),
            ));
        }
        // Added by hand, and checked as `prompt add` checks a file: what would fail a host
        // that asks for the prompt (a template that does not parse, a variable that is no
        // argument, a link or embed to nothing) is an error to fix before it is stored.
        prompt.origin = Origin::default();
        match super::prompt_check::problems(store, &prompt, &file_name, bytes) {
            Ok(problems) => match problems.into_iter().next() {
                Some(first) => Err(first),
                None => Ok((prompt, bytes.to_vec())),
            },
            Err(err) => Err(whole(&file_name, format!("{err:#}"))),
        }
    };
    let by_hand = ByHand {
        kind: Kind::Prompt,
        key: &name,
        content_hash: stored.content_hash,
        collection: stored.prompt.origin.collection.as_deref(),
        detach,
    };
    let bytes = original.as_bytes();
    let Some(prompt) = edited_item(editor, &mut draft, bytes, &file_name, &by_hand.what(), read)?
    else {
        return Ok(());
    };
    let command = format!("promptshelf prompt add {}", draft.path.display());
    by_hand.store(store, &mut draft, &command, "", |tx| {
        store::write::put_prompt(tx, &prompt, store::now_ms())
    })
}

/// A prompt or resource edited by hand: which one, and the version the draft was made of.
struct ByHand<'a> {
    kind: Kind,
    key: &'a str,
    content_hash: ContentHash,
    collection: Option<&'a str>,
    /// Whether it is stored detached from the seed it came from.
    detach: bool,
}

impl ByHand<'_> {
    /// "prompt NAME", for messages.
    fn what(&self) -> String {
        format!("{} {}", self.kind.as_str(), common::one_line(self.key))
    }

    /// Stores the edit with `put` and says so (`details` after the key), in one transaction
    /// with the checks that the item is still the version that was edited and may be
    /// replaced (`common::replacing`): another command may have changed it while the editor
    /// was open, and an edit made of the old version is not stored over that. When it is not
    /// stored, the draft is kept and the error says so, with `command`, which stores it.
    fn store(
        &self,
        store: &Store,
        draft: &mut Draft,
        command: &str,
        details: &str,
        put: impl FnOnce(&rusqlite::Transaction) -> store::Result<Outcome>,
    ) -> Result<()> {
        let written = store.write(|tx| {
            let current = match self.kind {
                Kind::Prompt => store::read::prompt(tx, self.key)?
                    .map(|current| (current.content_hash, current.prompt.origin.collection)),
                _ => store::read::resource(tx, self.key)?
                    .map(|current| (current.content_hash, current.info.origin.collection)),
            };
            let same = current.is_some_and(|(hash, collection)| {
                hash == self.content_hash && collection.as_deref() == self.collection
            });
            if !same || common::replacing(tx, self.kind, self.key, self.detach)?.is_err() {
                return Ok(None);
            }
            put(tx).map(Some)
        });
        let outcome = kept_unless_written(written, draft, &self.what(), command)?;
        let note = detached_note(self.detach);
        common::say(&common::outcome_line(
            outcome,
            self.kind.as_str(),
            self.key,
            details,
            note,
        ))
    }
}

/// The outcome of storing an edit of `what` ("prompt NAME"); when it could not be stored,
/// the draft is kept and the error says where it is and the command that stores it.
fn kept_unless_written(
    written: store::Result<Option<Outcome>>,
    draft: &mut Draft,
    what: &str,
    command: &str,
) -> Result<Outcome> {
    match written {
        Ok(Some(outcome)) => Ok(outcome),
        Ok(None) => {
            let kept = draft.keep();
            Err(anyhow!(
                "{what} changed while it was being edited, so the edit was not stored over it; \
                 your edit is kept in {kept}: compare the two, then store it with `{command}`"
            ))
        }
        Err(err) => {
            let kept = draft.keep();
            Err(anyhow!(
                "{err}; the edit was not stored, and is kept in {kept} (store it with \
                 `{command}`)"
            ))
        }
    }
}

/// Edits a text resource in a temporary file; `detach` stores it detached from the seed it
/// came from.
fn resource_by_hand(
    store: &Store,
    editor: &Editor,
    stored: StoredResource,
    text: String,
    detach: bool,
) -> Result<()> {
    let uri = stored.info.uri.clone();
    let file_name = file_stem(&super::common::last_segment(&uri));
    // Markdown and text files carry the metadata in front matter; any other file is its
    // content alone, and the metadata stays as stored.
    let front_matter = library::has_front_matter(&file_name);
    // A URI without an extension gets its MIME type's, only so that the editor highlights
    // the content: how the file is read is decided above.
    let file_name = match mime_guess::get_mime_extensions_str(&stored.info.mime_type) {
        Some([extension, ..]) if !file_name.contains('.') => format!("{file_name}.{extension}"),
        _ => file_name,
    };
    let resource = Resource {
        info: stored.info.clone(),
        content: Content::Text(text),
    };
    let original = if front_matter {
        emit::resource_file(&resource, &file_name, Folder::Plain)
    } else {
        resource.content.as_bytes().to_vec()
    };
    let mut draft = Draft::new(&file_name, &original)?;
    let read = |bytes: &[u8]| -> Result<(Resource, Vec<u8>), FileError> {
        let Ok(text) = std::str::from_utf8(bytes) else {
            return Err(whole(
                &file_name,
                "it is not UTF-8 text any more, which a text resource must be".into(),
            ));
        };
        if !front_matter {
            let mut info = stored.info.clone();
            info.origin = Origin::default();
            let resource = Resource {
                info,
                content: Content::Text(text.to_string()),
            };
            return Ok((resource, bytes.to_vec()));
        }
        let item = read_draft(&file_name, bytes)?;
        let mut edited = match item {
            Some(Item::Resource(edited)) => edited,
            Some(Item::Prompt(_)) => {
                return Err(whole(
                    &file_name,
                    "it reads as a prompt now (`kind: prompt`); remove that, or add it as a \
                     prompt with `promptshelf prompt add FILE`"
                        .into(),
                ));
            }
            _ => return Err(whole(&file_name, "it is not a resource file".into())),
        };
        edited.info.uri = uri.clone();
        edited.info.origin = Origin::default();
        Ok((edited, bytes.to_vec()))
    };
    let by_hand = ByHand {
        kind: Kind::Resource,
        key: &uri,
        content_hash: stored.content_hash,
        collection: stored.info.origin.collection.as_deref(),
        detach,
    };
    let Some(resource) = edited_item(
        editor,
        &mut draft,
        &original,
        &file_name,
        &by_hand.what(),
        read,
    )?
    else {
        return Ok(());
    };
    let command = format!(
        "promptshelf resource add {} --uri {uri}",
        draft.path.display()
    );
    let details = common::resource_details(&resource);
    by_hand.store(store, &mut draft, &command, &details, |tx| {
        store::write::put_resource(tx, &resource, store::now_ms())
    })
}

/// The edited item `read` from the draft, with any hidden text in it warned about; `None`
/// when the file came back as it was, which is said (`what`: "prompt NAME") and writes nothing.
fn edited_item<T>(
    editor: &Editor,
    draft: &mut Draft,
    original: &[u8],
    file_name: &str,
    what: &str,
    read: impl Fn(&[u8]) -> Result<(T, Vec<u8>), FileError>,
) -> Result<Option<T>> {
    match edit_draft(editor, draft, original, read)? {
        Edited::Unchanged => {
            common::say(&format!("{what}: no change, nothing written"))?;
            Ok(None)
        }
        Edited::Read((item, bytes)) => {
            common::warn_hidden(file_name, file_name, &bytes);
            Ok(Some(item))
        }
    }
}

/// Edits the file an item of a collection was imported from, then imports the collection
/// again; a file the import refuses is opened again until it imports, comes back unchanged,
/// or the editor fails.
fn in_collection(
    store: &Store,
    editor: &Editor,
    kind: Kind,
    key: &str,
    origin: &Origin,
) -> Result<()> {
    let what = format!("{} {}", kind.as_str(), common::one_line(key));
    let collection = origin.collection.as_deref().unwrap_or_default();
    let shown = common::one_line(collection);
    let Some(path) = origin.path.as_deref() else {
        return Err(anyhow!(
            "{what} belongs to the collection '{shown}', but which file it came from is not \
             recorded; import the collection's folder again with `promptshelf import DIR \
             --collection {shown}`, then edit it"
        ));
    };
    let Some(folder) = common::collection_source(store, collection)? else {
        return Err(anyhow!(
            "{what} comes from {path} of the collection '{shown}', whose folder is not \
             recorded (it was imported before folders were, or is built in); import the \
             folder again with `promptshelf import DIR --collection {shown}` (for a built-in \
             one, export it first: `promptshelf export DIR --collection {shown}`), then edit it"
        ));
    };
    let again = format!(
        "promptshelf import {} --collection {shown}",
        folder.display()
    );
    // The origin is a path inside the folder; anything else is not the collection's file.
    let inside = !path.is_empty()
        && !Path::new(path).is_absolute()
        && path
            .split('/')
            .all(|segment| segment != ".." && segment != ".");
    let file = common::item_file(&folder, path);
    if !inside || !file.is_file() {
        let gone = if folder.is_dir() || file == folder {
            format!("{} is not there any more", file.display())
        } else {
            format!("its folder {} is not there any more", folder.display())
        };
        return Err(anyhow!(
            "{what} comes from {path} of the collection '{shown}', but {gone}; if the folder \
             moved, import it from where it is now with `promptshelf import DIR --collection \
             {shown}`, then edit it"
        ));
    }
    let scheme = store::read::collection_scheme(&*store.conn()?, collection)?
        .unwrap_or_else(|| library::DEFAULT_SCHEME.to_string());
    let options = import::Options {
        collection: Some(collection.to_string()),
        scheme,
        ..import::Options::default()
    };
    let mut before = common::read_file(&file)?;
    let mut failed = false;
    loop {
        editor.open(&file).map_err(|err| {
            anyhow!(
                "{err:#}, so nothing was imported; whatever the editor saved in {} is \
                 imported by `{again}`",
                file.display()
            )
        })?;
        let bytes = common::read_file(&file)?;
        if bytes == before {
            if failed {
                return Err(anyhow!(
                    "{} still has the error above, so nothing was imported: the library \
                     keeps the previous version of {what}",
                    file.display()
                ));
            }
            return common::say(&format!("{what}: no change, nothing imported"));
        }
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Err(anyhow!(
                "{} is empty now, so nothing was imported: the library keeps the previous \
                 version of {what}; put its text back, or remove the file and run `{again} \
                 --prune`",
                file.display()
            ));
        }
        let report = import::run(store, &folder, &options, &import::Silent).with_context(|| {
            format!(
                "{} is saved as edited, but the collection '{shown}' could not be imported \
                     again (import it with `{again}`)",
                file.display()
            )
        })?;
        if report.failures.is_empty() {
            super::import::print(&folder, &report, &options, true)?;
            note_renamed(&report, kind, key, path, &file);
            return Ok(());
        }
        for failure in &report.failures {
            let shown = FileError {
                path: import::shown_path(&folder, &failure.path),
                ..failure.clone()
            };
            eprintln!("{}", common::one_line(&shown.to_string()));
        }
        if !report.failures.iter().any(|failure| failure.path == path) {
            return Err(anyhow!(
                "other files of the collection '{shown}' failed (above), so nothing was \
                 imported and the library keeps the previous version of {what}; fix them, then \
                 run `{again}`"
            ));
        }
        eprintln!(
            "promptshelf: {} did not import; opening it again (save it unchanged to stop)",
            file.display()
        );
        before = bytes;
        failed = true;
    }
}

/// An edit that changed the item's name (a prompt's `name:`) added an item under the new
/// name; the old one stays until the folder is imported with `--prune`, which is said.
fn note_renamed(report: &import::Report, kind: Kind, key: &str, path: &str, file: &Path) {
    let renamed = report.changes.iter().find(|change| {
        change.action == Action::Add
            && change.kind == kind
            && change.key != key
            && change.path.as_deref() == Some(path)
    });
    if let Some(change) = renamed {
        eprintln!(
            "note: {} now gives {} {}; {} {} is still in the library (import the folder with \
             --prune to remove it)",
            file.display(),
            kind.as_str(),
            common::one_line(&change.key),
            kind.as_str(),
            common::one_line(key)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_comments_put_on_top_are_what_is_removed() {
        let err = FileError {
            path: "ignored".into(),
            line: Some(2),
            column: None,
            message: "front matter: unclosed bracket".into(),
        };
        let text = b"---\ntitle: [\n---\n# promptshelf: a body line\n";
        let reopened = with_comments(&err, "greet.prompt.md", text);
        let shown = String::from_utf8(reopened.clone()).unwrap();
        assert!(
            shown.starts_with(
                "# promptshelf: not stored: greet.prompt.md:5: front matter: unclosed bracket\n"
            ),
            "{shown}"
        );
        assert_eq!(shown.lines().count(), COMMENT_LINES as usize + 4);
        // Only the leading comment lines go; a body line that looks like one stays.
        assert_eq!(without_comments(&reopened), text);
        assert_eq!(without_comments(b"# promptshelf: only"), b"");
    }

    #[test]
    fn file_names_are_one_visible_segment() {
        assert_eq!(file_stem("team/review"), "team-review");
        assert_eq!(file_stem(".hidden"), "hidden");
        assert_eq!(file_stem("..."), "item");
    }
}
