//! What the admin commands share: buffered stdout, aligned tables, JSON, readable sizes and
//! times, reading input files, the "unknown name" error, the line that says what a write
//! did, writing and removing a prompt or resource by hand (with the refusal for an item of a
//! collection), and what renaming an item shares (its report, the file name a URI suggests).

use std::io::{BufWriter, StdoutLock, Write};
use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow};
use serde::Serialize;

use crate::library::{self, Collection, Item};
use crate::model::{Kind, Meta, Origin, Provenance};
use crate::store::{self, Store};

/// Stdout, locked once and buffered: listings write many short lines.
pub(super) fn stdout() -> BufWriter<StdoutLock<'static>> {
    BufWriter::new(std::io::stdout().lock())
}

/// Prints `value` as pretty JSON and a newline.
pub(super) fn print_json<T: Serialize>(value: &T) -> Result<()> {
    // Serialized first so that a write error reaches main as an io::Error (a closed pipe is
    // recognised there), not wrapped inside serde_json's error.
    let mut text = serde_json::to_vec_pretty(value)?;
    text.push(b'\n');
    let mut out = stdout();
    out.write_all(&text)?;
    out.flush()?;
    Ok(())
}

/// Prints one line to stdout (a command's confirmation, e.g. "added prompt x").
pub(super) fn say(line: &str) -> Result<()> {
    let mut out = stdout();
    writeln!(out, "{line}")?;
    out.flush()?;
    Ok(())
}

/// What `--json` prints for a prompt, resource or template written or removed.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ItemReport<'a> {
    /// `added`, `updated`, `unchanged` or `removed`.
    pub action: &'static str,
    /// `prompt`, `resource` or `template`.
    pub kind: &'static str,
    /// The prompt's name, the resource's URI or the URI template.
    pub key: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
}

impl<'a> ItemReport<'a> {
    pub(super) fn new(action: &'static str, kind: &'static str, key: &'a str) -> ItemReport<'a> {
        ItemReport {
            action,
            kind,
            key,
            mime_type: None,
            size: None,
        }
    }
}

/// A write's outcome as `ItemReport::action` says it.
pub(super) fn action(outcome: crate::store::Outcome) -> &'static str {
    match outcome {
        crate::store::Outcome::Added => "added",
        crate::store::Outcome::Updated => "updated",
        crate::store::Outcome::Unchanged => "unchanged",
    }
}

/// The line that says what a write did to one item (`kind`: "prompt", `key`: its name):
/// `added prompt NAME`, `updated resource URI (DETAILS)`, `template URI is unchanged`;
/// `details` (when it was written) and `note` (always) are added to it as they are.
pub(super) fn outcome_line(
    outcome: crate::store::Outcome,
    kind: &str,
    key: &str,
    details: &str,
    note: &str,
) -> String {
    let key = one_line(key);
    match outcome {
        crate::store::Outcome::Added => format!("added {kind} {key}{details}{note}"),
        crate::store::Outcome::Updated => format!("updated {kind} {key}{details}{note}"),
        crate::store::Outcome::Unchanged => format!("{kind} {key} is unchanged{note}"),
    }
}

/// A resource's MIME type and size, as the line that says it was written gives them.
pub(super) fn resource_details(resource: &crate::model::Resource) -> String {
    format!(
        " ({}, {})",
        resource.info.mime_type,
        human_size(resource.content.as_bytes().len() as u64)
    )
}

/// Prints a command's outcome: `line` for people, or `value` as JSON with `--json`.
pub(super) fn report<T: Serialize>(json: bool, line: &str, value: &T) -> Result<()> {
    if json { print_json(value) } else { say(line) }
}

/// Rows printed as columns aligned on their widest cell, under an upper-case header.
pub(super) struct Table {
    header: Vec<&'static str>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub(super) fn new(header: &[&'static str]) -> Table {
        Table {
            header: header.to_vec(),
            rows: Vec::new(),
        }
    }

    pub(super) fn row(&mut self, cells: Vec<String>) {
        self.rows
            .push(cells.iter().map(|cell| one_line(cell)).collect());
    }

    pub(super) fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Writes the table; with `width`, each line is cut to that many characters, ending in
    /// `…`, so that a long last column (a title, a description) does not wrap.
    pub(super) fn write(&self, out: &mut impl Write, width: Option<usize>) -> std::io::Result<()> {
        let mut widths: Vec<usize> = self.header.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (at, cell) in row.iter().enumerate() {
                if let Some(width) = widths.get_mut(at) {
                    *width = (*width).max(cell.chars().count());
                }
            }
        }
        let header: Vec<String> = self.header.iter().map(|h| h.to_string()).collect();
        for row in std::iter::once(&header).chain(&self.rows) {
            let mut line = String::new();
            for (at, cell) in row.iter().enumerate() {
                if at > 0 {
                    line.push_str("  ");
                }
                line.push_str(cell);
                let last = at + 1 == row.len();
                if !last {
                    let width = widths.get(at).copied().unwrap_or(0);
                    let pad = width.saturating_sub(cell.chars().count());
                    line.extend(std::iter::repeat_n(' ', pad));
                }
            }
            let line = line.trim_end();
            match width {
                Some(width) if line.chars().count() > width => {
                    let kept: String = line.chars().take(width.saturating_sub(1)).collect();
                    writeln!(out, "{kept}…")?;
                }
                _ => writeln!(out, "{line}")?,
            }
        }
        Ok(())
    }

    /// Prints the table to stdout, or `empty` to stderr when it has no rows (so a script
    /// reading stdout sees nothing rather than a lone header).
    pub(super) fn print(&self, empty: &str) -> Result<()> {
        if self.is_empty() {
            eprintln!("{empty}");
            return Ok(());
        }
        let mut out = stdout();
        self.write(&mut out, terminal_width())?;
        out.flush()?;
        Ok(())
    }
}

/// The width of the terminal stdout is, to cut table lines to; None when stdout is not a
/// terminal, so that piped output keeps every character.
pub(super) fn terminal_width() -> Option<usize> {
    terminal_size::terminal_size().map(|(width, _)| usize::from(width.0))
}

/// Names and titles come from files; a newline or an escape sequence in one must not break
/// the columns or drive the terminal.
pub(super) fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// `1 prompt`, `2 prompts`: a count with the word that fits it.
pub(super) fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `1023 B`, `1.5 KiB`, `12.0 MiB`.
pub(super) fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut size = bytes as f64 / 1024.0;
    let mut unit = 0;
    while size >= 1024.0 && unit + 1 < UNITS.len() {
        size /= 1024.0;
        unit += 1;
    }
    format!("{size:.1} {}", UNITS[unit])
}

/// Unix milliseconds as RFC 3339 UTC (the form MCP's `lastModified` takes).
pub(super) fn timestamp(ms: i64) -> String {
    jiff::Timestamp::from_millisecond(ms)
        .map(|at| at.to_string())
        .unwrap_or_else(|_| ms.to_string())
}

/// The whole file, or an error that names it and says why it cannot be read.
pub(super) fn read_file(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|err| {
        anyhow!(
            "cannot read {}: {}",
            path.display(),
            crate::import::plain_error(&err)
        )
    })
}

/// Whether a file argument is `-`, standard input.
pub(super) fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// How messages name a file argument.
pub(super) fn shown(path: &Path) -> String {
    if is_stdin(path) {
        "standard input".to_string()
    } else {
        path.display().to_string()
    }
}

/// A file argument's bytes: the file, or standard input for `-`.
pub(super) fn read_input(path: &Path) -> Result<Vec<u8>> {
    if !is_stdin(path) {
        return read_file(path);
    }
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut std::io::stdin().lock(), &mut bytes).map_err(|err| {
        anyhow!(
            "cannot read standard input: {}",
            crate::import::plain_error(&err)
        )
    })?;
    Ok(bytes)
}

/// The last component of `file`, as text; a file on the command line must have one.
pub(super) fn file_name(file: &Path) -> Result<String> {
    let name = file
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    if name.trim_start_matches('.').is_empty() {
        return Err(anyhow!("{} does not name a file", file.display()));
    }
    Ok(name)
}

/// The collection a file added by hand is read as; its URIs are `shelf://local/<file name>`.
pub(super) fn local_collection() -> Collection {
    Collection {
        name: "local".to_string(),
        scheme: library::DEFAULT_SCHEME.to_string(),
    }
}

/// What the folder holding `file` says about it: a file in a `commands/` folder is a Claude
/// Code command, as it would be on import.
pub(super) fn folder_of(file: &Path) -> library::Folder {
    file.parent()
        .and_then(|parent| parent.file_name())
        .and_then(|parent| parent.to_str())
        .map(library::Folder::of)
        .unwrap_or_default()
}

/// Reads one file the way `import` reads a file of a collection, as if it sat alone at the
/// top of the collection `local` in a folder like `folder`. Errors name the file as the user
/// gave it.
pub(super) fn parse_local_file(file: &Path, bytes: &[u8], folder: library::Folder) -> Result<Item> {
    // The format skips hidden files when importing a folder; one named on the command line
    // is meant to be read.
    let name = file_name(file)?;
    parse_named(
        &file.display().to_string(),
        name.trim_start_matches('.'),
        bytes,
        folder,
    )
}

/// Warns of the hidden text in a file added or edited by hand (`library::hidden_in`, the
/// file read as `name`), as `import` warns of a file of a folder, naming it `shown`.
pub(super) fn warn_hidden(shown: &str, name: &str, bytes: &[u8]) {
    for found in library::hidden_in(name, bytes) {
        warn(&library::FileError {
            path: shown.to_string(),
            ..found
        });
    }
}

/// Warns of lookalike letters in a name or URI given by hand (`what`, say `--name`); a URI
/// is read percent-decoded, as a host shows it.
pub(super) fn warn_lookalike(what: &str, name: &str) {
    let decoded = percent_encoding::percent_decode_str(name).decode_utf8_lossy();
    if let Some(found) = library::hidden::lookalike(&decoded) {
        warn(&library::FileError::new(what, None, found.message()));
    }
}

/// A warning on standard error, as `import` prints its own.
pub(super) fn warn(problem: &library::FileError) {
    eprintln!("warning: {}", one_line(&problem.to_string()));
}

/// Reads `bytes` as the file `name` of the format would be read; errors name `shown`.
pub(super) fn parse_named(
    shown: &str,
    name: &str,
    bytes: &[u8],
    folder: library::Folder,
) -> Result<Item> {
    let item = library::parse_file_in(&local_collection(), name, folder, bytes).map_err(|err| {
        anyhow!(library::FileError {
            path: shown.to_string(),
            ..err
        })
    })?;
    item.ok_or_else(|| anyhow!("{shown} is not a file promptshelf can read"))
}

/// Where an item came from, for `show`.
pub(super) fn origin(origin: &Origin) -> String {
    match (&origin.collection, &origin.path) {
        (Some(collection), Some(path)) => format!("{path} in collection {collection}"),
        (Some(collection), None) => format!("collection {collection}"),
        (None, Some(path)) => path.clone(),
        (None, None) => "added by hand".to_string(),
    }
}

/// What `prompt show` and `resource show` say of where an item comes from beyond its file
/// and hash: its version in the history and the commit its folder was at (left out when it
/// has none).
pub(super) fn provenance_facts(provenance: &Provenance) -> [(&'static str, String); 2] {
    [
        (
            "version",
            provenance
                .version
                .map(|version| version.to_string())
                .unwrap_or_default(),
        ),
        (
            "commit",
            provenance.origin.commit.clone().unwrap_or_default(),
        ),
    ]
}

/// What a rename found in its transaction.
pub(super) enum Moved {
    Done,
    /// No item has the old key.
    Missing,
    /// The item belongs to a collection: its name comes from its file.
    Imported(Origin),
    /// The new key is another item's.
    Taken,
}

/// What `prompt mv` and `resource mv` print with `--json`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct MoveReport<'a> {
    /// Always `renamed`.
    action: &'static str,
    /// `prompt` or `resource`.
    kind: &'static str,
    /// The new name or URI.
    key: &'a str,
    /// The old one.
    from: &'a str,
    /// For a resource: the items whose text still holds the old URI.
    #[serde(skip_serializing_if = "Option::is_none")]
    referred_by: Option<Vec<Reference<'a>>>,
}

/// Says that `prompt mv` or `resource mv` renamed `old` (a `kind`) to `new`; `--json` prints
/// a `MoveReport`, with the items that still refer to `old` for a resource.
pub(super) fn report_renamed(
    json: bool,
    kind: &'static str,
    old: &str,
    new: &str,
    referred_by: Option<Vec<Reference<'_>>>,
) -> Result<()> {
    let line = format!("renamed {kind} {} to {}", one_line(old), one_line(new));
    let report_json = MoveReport {
        action: "renamed",
        kind,
        key: new,
        from: old,
        referred_by,
    };
    report(json, &line, &report_json)
}

#[derive(Serialize)]
pub(super) struct Reference<'a> {
    pub kind: &'static str,
    pub key: &'a str,
}

/// The file of a collection's item from `path` (its origin), given where the collection
/// was last imported from (`collection_source`): the path in that folder, or the source itself
/// when that is a file (a CSV list of prompts, every prompt's file).
pub(super) fn item_file(source: &Path, path: &str) -> PathBuf {
    if source.is_file() {
        source.to_path_buf()
    } else {
        source.join(path)
    }
}

/// The folder (or CSV list of prompts) a collection was last imported from, when it is known.
pub(super) fn collection_source(store: &Store, collection: &str) -> Result<Option<PathBuf>> {
    Ok(store::read::collection(&*store.conn()?, collection)?
        .and_then(|row| row.source)
        .map(PathBuf::from))
}

/// Refuses to rename an item of a collection: its name or URI comes from its file, so the
/// way is to change the file (`change`, said of `file`) and import the folder again.
pub(super) fn imported_item(
    store: &Store,
    what: &str,
    origin: &Origin,
    change: impl FnOnce(&str) -> String,
) -> Result<anyhow::Error> {
    let collection = origin.collection.as_deref().unwrap_or_default();
    let path = origin.path.as_deref().unwrap_or("its file");
    let shown = one_line(collection);
    Ok(match collection_source(store, collection)? {
        Some(folder) => {
            let file = item_file(&folder, path);
            anyhow!(
                "{what} belongs to the collection '{shown}', which names it after its file: {}, \
                 then run `promptshelf import {} --collection {shown} --prune` (--prune removes \
                 the old one)",
                change(&file.display().to_string()),
                folder.display()
            )
        }
        None => anyhow!(
            "{what} belongs to the collection '{shown}', which names it after its file: {} in \
             the folder it was imported from (not recorded; for a built-in collection, export \
             it first with `promptshelf export DIR --collection {shown}`), then import that \
             folder again with `promptshelf import DIR --collection {shown} --prune`",
            change(path)
        ),
    })
}

/// Where a collection's item comes from, for a refusal to change it by hand: the collection
/// and the item's file (in the folder it was last imported from, when that is known), and
/// that folder, for the command that imports it again.
pub(super) fn owner(store: &Store, origin: &Origin) -> Result<(String, String)> {
    let collection = origin.collection.as_deref().unwrap_or_default();
    let path = origin.path.as_deref().unwrap_or("its file");
    let shown = one_line(collection);
    Ok(match collection_source(store, collection)? {
        Some(folder) => (
            format!(
                "belongs to the collection '{shown}' (its file {})",
                item_file(&folder, path).display()
            ),
            format!(
                "promptshelf import {} --collection {shown}",
                folder.display()
            ),
        ),
        None => (
            format!("belongs to the collection '{shown}' (its file {path})"),
            format!("promptshelf import DIR --collection {shown}"),
        ),
    })
}

/// The origin of the prompt or resource `key` when a collection owns it.
pub(super) fn owned(
    conn: &rusqlite::Connection,
    kind: Kind,
    key: &str,
) -> store::Result<Option<Origin>> {
    let origin = match kind {
        Kind::Prompt => store::read::prompt(conn, key)?.map(|stored| stored.prompt.origin),
        _ => store::read::resource(conn, key)?.map(|stored| stored.info.origin),
    };
    Ok(origin.filter(|origin| origin.collection.is_some()))
}

/// What `prompt add` or `resource add` may write over, found in the writing transaction.
pub(super) enum Replacing {
    /// A hand-added item or none: the write goes ahead.
    Free,
    /// A collection's item, detached (`--detach`) from that collection.
    Detached(String),
}

impl Replacing {
    /// What the line saying the item was written adds: the collection it was detached from.
    pub(super) fn note(&self) -> String {
        match self {
            Replacing::Free => String::new(),
            Replacing::Detached(collection) => {
                format!(", detached from the collection {}", one_line(collection))
            }
        }
    }
}

/// Writes a prompt or resource added by hand (`put`) in one transaction with the check that
/// it replaces no collection's item, unless `detach`. A collection's item is refused with the
/// error `refused` makes of what owns it and the command that imports it again (`owner`).
pub(super) fn put_by_hand(
    store: &Store,
    kind: Kind,
    key: &str,
    detach: bool,
    put: impl FnOnce(&rusqlite::Transaction) -> store::Result<store::Outcome>,
    refused: impl FnOnce(String, String) -> anyhow::Error,
) -> Result<(store::Outcome, Replacing)> {
    let written = store.write(|tx| {
        Ok(match replacing(tx, kind, key, detach)? {
            Ok(replacing) => Ok((put(tx)?, replacing)),
            Err(origin) => Err(origin),
        })
    })?;
    match written {
        Ok(written) => Ok(written),
        Err(origin) => {
            let (owner, import) = owner(store, &origin)?;
            Err(refused(owner, import))
        }
    }
}

/// Refuses to replace a collection's item unless `detach`, in which case it is marked as
/// detached from it, in the same transaction as the write that replaces it.
pub(super) fn replacing(
    tx: &rusqlite::Transaction,
    kind: Kind,
    key: &str,
    detach: bool,
) -> store::Result<Result<Replacing, Origin>> {
    let Some(origin) = owned(tx, kind, key)? else {
        return Ok(Ok(Replacing::Free));
    };
    if !detach {
        return Ok(Err(origin));
    }
    let collection = origin.collection.unwrap_or_default();
    store::detached::mark(tx, kind, key, &collection)?;
    Ok(Ok(Replacing::Detached(collection)))
}

/// What `prompt rm` or `resource rm` did in its transaction.
enum Removal {
    /// Whether an item was removed, and the collection a detached one came from (whose
    /// imports take the item from its file again).
    Done {
        removed: bool,
        returned: Option<String>,
    },
    /// A collection's item, without `--detach`.
    Refused(Origin),
}

/// `prompt rm` and `resource rm`: removes the prompt or resource `key` and says so.
pub(super) fn remove_item(
    store: &Store,
    kind: Kind,
    key: &str,
    detach: bool,
    json: bool,
) -> Result<()> {
    let removal = store.write(|tx| removal(tx, kind, key, detach))?;
    let shown = one_line(key);
    let (removed, returned) = match removal {
        Removal::Done { removed, returned } => (removed, returned),
        Removal::Refused(origin) => {
            let (owner, import) = owner(store, &origin)?;
            // A prompt's name is quoted, as everywhere; a URI stands alone.
            let named = match kind {
                Kind::Prompt => format!("prompt '{shown}'"),
                _ => format!("resource {shown}"),
            };
            return Err(anyhow!(
                "{named} {owner}; delete that file and run `{import} --prune`, or pass \
                 --detach to remove it here and keep imports of the collection from bringing \
                 it back"
            ));
        }
    };
    if !removed && returned.is_none() {
        let conn = store.conn()?;
        return Err(match kind {
            Kind::Prompt => unknown_prompt(&conn, key)?,
            _ => unknown_resource(&conn, key)?,
        });
    }
    let what = format!("{} {shown}", kind.as_str());
    let mut line = if removed {
        format!("removed {what}")
    } else {
        format!("{what} is no longer detached")
    };
    if let Some(collection) = returned {
        line.push_str(&format!(
            "; the next import of the collection {} takes it from its file again",
            one_line(&collection)
        ));
    }
    report(json, &line, &ItemReport::new("removed", kind.as_str(), key))
}

/// The removal of a prompt or resource, in its transaction. A collection's is removed only
/// with `detach` (its file would bring it back otherwise), and then marked as detached;
/// removing a detached item, or the key of one removed with `--detach`, gives the key back to
/// its collection.
fn removal(
    tx: &rusqlite::Transaction,
    kind: Kind,
    key: &str,
    detach: bool,
) -> store::Result<Removal> {
    let remove = match kind {
        Kind::Prompt => store::write::remove_prompt,
        _ => store::write::remove_resource,
    };
    if let Some(origin) = owned(tx, kind, key)? {
        if !detach {
            return Ok(Removal::Refused(origin));
        }
        let collection = origin.collection.unwrap_or_default();
        store::detached::mark(tx, kind, key, &collection)?;
        return Ok(Removal::Done {
            removed: remove(tx, key)?,
            returned: None,
        });
    }
    // `--detach` again keeps the item away from its collection; without it, the key goes back.
    let returned = store::detached::from(tx, kind, key)?.filter(|_| !detach);
    if returned.is_some() {
        store::detached::clear(tx, kind, key)?;
    }
    Ok(Removal::Done {
        removed: remove(tx, key)?,
        returned,
    })
}

/// The front matter keys an item kept from its file (`Meta`), each `key: value` (the value
/// as JSON) under a heading; nothing when it kept none.
pub(super) fn write_kept(out: &mut impl Write, meta: &Meta) -> std::io::Result<()> {
    if meta.is_empty() {
        return Ok(());
    }
    writeln!(out, "\nfront matter kept from its file:")?;
    for (key, value) in meta {
        writeln!(out, "  {key}: {value}")?;
    }
    Ok(())
}

/// `label: value` lines with the values aligned; empty values are left out.
pub(super) fn write_facts(out: &mut impl Write, facts: &[(&str, String)]) -> std::io::Result<()> {
    let width = facts
        .iter()
        .map(|(label, _)| label.len())
        .max()
        .unwrap_or(0)
        + 1;
    for (label, value) in facts.iter().filter(|(_, value)| !value.is_empty()) {
        writeln!(out, "{:<width$} {}", format!("{label}:"), one_line(value))?;
    }
    Ok(())
}

/// "unknown prompt 'x'; did you mean 'y'? (see `promptshelf prompt list`)", or when no
/// known name is near it a few of them (`suggest::advice`).
pub(super) fn unknown(
    kind: &str,
    plural: &str,
    asked: &str,
    known: &[String],
    list: &str,
) -> anyhow::Error {
    anyhow!(
        "unknown {kind} '{}'; {} (see `promptshelf {list}`)",
        one_line(asked),
        crate::suggest::advice(asked, known, plural)
    )
}

/// `unknown` for a prompt name the library does not have.
pub(super) fn unknown_prompt(conn: &rusqlite::Connection, name: &str) -> Result<anyhow::Error> {
    let known = store::read::prompt_names(conn)?;
    Ok(unknown("prompt", "prompts", name, &known, "prompt list"))
}

/// `unknown` for a resource URI the library does not have.
pub(super) fn unknown_resource(conn: &rusqlite::Connection, uri: &str) -> Result<anyhow::Error> {
    let known: Vec<String> = store::read::resources(conn, store::read::Window::ALL)?
        .into_iter()
        .map(|stored| stored.info.uri)
        .collect();
    Ok(unknown(
        "resource",
        "resources",
        uri,
        &known,
        "resource list",
    ))
}

/// The stored prompt `name`, or the error that says it is unknown.
pub(super) fn stored_prompt(store: &Store, name: &str) -> Result<crate::model::StoredPrompt> {
    let conn = store.conn()?;
    match store::read::prompt(&conn, name)? {
        Some(stored) => Ok(stored),
        None => Err(unknown_prompt(&conn, name)?),
    }
}

/// The names of the library's completion tables.
pub(super) fn table_names(store: &Store) -> Result<Vec<String>> {
    Ok(store::read::tables(&*store.conn()?)?
        .into_iter()
        .map(|table| table.name)
        .collect())
}

/// A note on stderr for each table of `named` that is not among `known` (the library's):
/// `prompt add` and `template add` take a table that is filled later, but a typo of one that
/// is there is the likelier cause.
pub(super) fn note_missing_tables<'a>(
    named: impl IntoIterator<Item = &'a String>,
    known: &[String],
) {
    let mut noted = Vec::new();
    for table in named {
        if known.contains(table) || noted.contains(&table) {
            continue;
        }
        noted.push(table);
        let near = crate::suggest::did_you_mean(table, known)
            .map(|suggestion| format!(" ({suggestion})"))
            .unwrap_or_default();
        eprintln!(
            "note: completion table '{table}' does not exist yet{near}; fill it with \
             `promptshelf values add {table} VALUE...` or `promptshelf values import {table} FILE`"
        );
    }
}

/// The last segment of a URI's path, percent-decoded (`notes.md` of
/// `shelf://local/notes.md`), or `stdin` when it has none.
pub(super) fn last_segment(uri: &str) -> String {
    let path = uri.split(['?', '#']).next().unwrap_or_default();
    let segment = path.rsplit('/').next().unwrap_or_default();
    let decoded = percent_encoding::percent_decode_str(segment).decode_utf8_lossy();
    if decoded.is_empty() || decoded.contains(':') {
        "stdin".to_string()
    } else {
        decoded.into_owned()
    }
}

/// `import --verify` and `check --verify`: the folder `dir`'s signature and every one of its
/// files checked against its signed list (`signing`), by the public key file `key`; says so
/// on stderr.
pub(super) fn verify_folder(
    store: &Store,
    dir: &Path,
    key: &Path,
    max_file_size: u64,
) -> Result<crate::signing::Signed> {
    if !dir.is_dir() {
        return Err(anyhow!(
            "--verify checks a folder signed by `promptshelf export DIR --sign KEY`, and {} is \
             not a folder",
            dir.display()
        ));
    }
    let trusted = crate::signing::Trusted::read(key)?;
    let present = crate::import::files_of(dir, store.path(), max_file_size)?;
    let signed = crate::signing::verify(dir, &trusted, &present)?;
    eprintln!(
        "verified the signature of {} and its {} files",
        dir.display(),
        signed.count()
    );
    Ok(signed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_naturally() {
        assert_eq!(human_size(0), "0 B");
        assert_eq!(human_size(1023), "1023 B");
        assert_eq!(human_size(1536), "1.5 KiB");
        assert_eq!(human_size(5 * 1024 * 1024), "5.0 MiB");
    }

    #[test]
    fn columns_align_and_lines_have_no_trailing_space() {
        let mut table = Table::new(&["NAME", "TITLE"]);
        table.row(vec!["a".into(), "first\nline".into()]);
        table.row(vec!["longer".into(), String::new()]);
        let mut out = Vec::new();
        table.write(&mut out, None).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "NAME    TITLE\na       first line\nlonger\n"
        );
    }

    #[test]
    fn lines_are_cut_to_the_width_with_an_ellipsis() {
        let mut table = Table::new(&["NAME", "TITLE"]);
        table.row(vec![
            "a".into(),
            "a title much longer than the width".into(),
        ]);
        table.row(vec!["b".into(), "short".into()]);
        let mut out = Vec::new();
        table.write(&mut out, Some(16)).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "NAME  TITLE\na     a title m…\nb     short\n"
        );
    }
}
