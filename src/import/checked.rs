//! Checking the parsed files as `validate` does, before anything is planned: what is refused
//! and what only warned about.

use std::collections::HashSet;

use crate::library::{self, FileError, Item};
use crate::model::{Content, StoredPrompt};
use crate::store::{self, Store, StoreError};
use crate::validate::{self, Files, Finding};

use super::read::{Parsed, reread, workers};
use super::source::Source;
use super::{Brought, Report, walk};

/// The import as `validate` sees it: the store, and the files being imported.
struct Incoming<'a> {
    pub(super) store: &'a Store,
    pub(super) collection: &'a str,
    pub(super) files: Files,
    /// The URIs of the import's resources.
    pub(super) resources: HashSet<String>,
    /// The store's tables and the import's.
    pub(super) tables: HashSet<String>,
}

impl validate::Library for Incoming<'_> {
    fn has_resource(&self, uri: &str) -> store::Result<bool> {
        if self.resources.contains(uri) {
            return Ok(true);
        }
        Ok(store::read::resource(&*self.store.conn()?, uri)?.is_some())
    }

    fn has_table(&self, name: &str) -> bool {
        self.tables.contains(name)
    }

    fn files(&self, collection: &str) -> Option<&Files> {
        (collection == self.collection).then_some(&self.files)
    }
}

/// The parsed files that pass `validate`; each one that does not is a failure for every
/// finding, at its line of the file where it can be found. Documents go first, so that a
/// prompt embedding a document that failed fails too rather than import broken. Both passes
/// are spread over the cores: a document's links are parsed again.
pub(super) fn validated(
    source: &Source,
    found: &[walk::Found],
    parsed: Vec<Parsed>,
    store: &Store,
    brought: &Brought,
    report: &mut Report,
) -> store::Result<Vec<Parsed>> {
    let mut tables: HashSet<String> = store::read::tables(&*store.conn()?)?
        .into_iter()
        .map(|table| table.name)
        .collect();
    // Every part of the import brings its own (this one's among them).
    tables.extend(brought.tables.iter().cloned());
    let resources = brought.resources.clone();
    let mut incoming = Incoming {
        store,
        collection: &source.collection.name,
        files: Files::new(found.iter().map(|file| file.relative.as_str())),
        resources,
        tables,
    };
    let mut findings: Vec<Vec<Finding>> = in_parallel(&parsed, |file| match &file.item {
        Item::Resource(resource) => match &resource.content {
            Content::Text(text) => Ok(validate::document(text, &resource.info.origin, &incoming)),
            Content::Binary(_) => Ok(Vec::new()),
        },
        _ => Ok(Vec::new()),
    })?;
    for (file, findings) in parsed.iter().zip(&findings) {
        if let Item::Resource(resource) = &file.item
            && findings
                .iter()
                .any(|finding| refuses(source, file, finding))
        {
            incoming.resources.remove(&resource.info.uri);
        }
    }
    let prompts = in_parallel(&parsed, |file| match (&file.item, file.hash) {
        (Item::Prompt(prompt), Some(content_hash)) => {
            let stored = StoredPrompt {
                prompt: prompt.clone(),
                content_hash,
                last_modified: file.modified_ms,
                version: None,
            };
            validate::prompt(&stored, &incoming)
        }
        _ => Ok(Vec::new()),
    })?;
    for (findings, more) in findings.iter_mut().zip(prompts) {
        findings.extend(more);
    }
    let mut kept = Vec::with_capacity(parsed.len());
    for (file, findings) in parsed.into_iter().zip(findings) {
        if findings.is_empty() {
            kept.push(file);
            continue;
        }
        // Read again only to place the findings: most imports have none. A prompt list's
        // row is placed at its line.
        let text = file
            .line
            .is_none()
            .then(|| reread(source, &file.path))
            .flatten();
        let is_prompt = matches!(file.item, Item::Prompt(_));
        let refused = findings
            .iter()
            .any(|finding| refuses(source, &file, finding));
        for finding in findings.iter() {
            let mut problem = FileError {
                path: file.path.clone(),
                line: file.line.or_else(|| {
                    let place = finding.place.as_ref()?;
                    library::line_in_file(text.as_deref()?, is_prompt, place)
                }),
                column: None,
                message: finding.message.clone(),
            };
            if refuses(source, &file, finding) {
                report.failures.push(problem);
            } else {
                problem.message.push_str(" (kept as the text it is)");
                report.warnings.push(problem);
            }
        }
        if !refused {
            kept.push(file);
        }
    }
    Ok(kept)
}

/// Whether `finding` refuses `file`: anything but a relative link to no file in a host's
/// own file, which the file keeps as the text it is (often an example for the model), with
/// a warning, unless `--strict`.
pub(super) fn refuses(source: &Source, file: &Parsed, finding: &Finding) -> bool {
    !(file.host_file && finding.missing_link && !source.strict)
}

/// `check` of every file, spread over the cores; results keep the files' order.
fn in_parallel(
    parsed: &[Parsed],
    check: impl Fn(&Parsed) -> store::Result<Vec<Finding>> + Sync,
) -> store::Result<Vec<Vec<Finding>>> {
    let chunk = parsed.len().div_ceil(workers()).max(1);
    let check = &check;
    let parts: Vec<store::Result<Vec<Vec<Finding>>>> = std::thread::scope(|scope| {
        let handles: Vec<_> = parsed
            .chunks(chunk)
            .map(|part| scope.spawn(move || part.iter().map(check).collect()))
            .collect();
        handles
            .into_iter()
            .map(|handle| {
                handle.join().unwrap_or_else(|_| {
                    Err(StoreError::Invalid(
                        "validating a file failed unexpectedly".into(),
                    ))
                })
            })
            .collect()
    });
    let mut all = Vec::with_capacity(parsed.len());
    for part in parts {
        all.extend(part?);
    }
    Ok(all)
}
