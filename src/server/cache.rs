//! What the server keeps between requests until the library changes: shaped list pages,
//! parsed prompts, the library's parsed templates, and small resources with the JSON shaped
//! from them; and, by content and so across changes, the SHA-256 of what the Skills
//! extension lists. Hosts list and fill prompts often and the library changes rarely, and reading
//! and shaping costs far more than checking whether anything changed: every entry is tagged
//! with the change-log position it was read at, and is current while that is still the
//! position the watcher last saw.
//!
//! The cache never reads the database itself: a caller that misses hands it the loader,
//! so the same lookup serves whoever may or may not read the store.

use std::sync::Arc;
use std::time::Duration;

use crate::handlers::templates::Templates;
use crate::memo::{ANY_POSITION, Doorkeeper, Memo};
use crate::model::StoredPrompt;
use crate::protocol::{CompletionRef, ReadResult, Revision, ShapedPage};

/// Which list a page belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum ListKind {
    Prompts,
    Resources,
    Templates,
}

/// The JSON of kept list pages, in bytes: pages past it are forgotten at once (a client
/// walking a list of half a million items in every revision would otherwise keep it all).
const MAX_KEPT_PAGE_BYTES: usize = 4 * 1024 * 1024;
/// The text of kept prompts (their templates, descriptions and argument declarations), in
/// bytes: a few thousand ordinary prompts.
const MAX_KEPT_PROMPT_BYTES: usize = 4 * 1024 * 1024;
/// Timings kept, in bytes as `Timed::bytes` counts them (about a hundred bytes each): a fill
/// per prompt and a ranking per completable argument or variable of a large library, some
/// ten thousand of them.
const MAX_TIMING_BYTES: usize = 1024 * 1024;
/// Resources are kept only when this small, and only this many bytes of them in all, so a
/// large library cannot grow the server's memory. Each is charged its body (its content as
/// JSON, `Body`, the one copy kept) and `KEPT_RESOURCE_RECORD_BYTES` for the rest: a 2 KB
/// document about 3.9 KB, what it takes, so 4 MiB keeps a working set of a thousand such
/// documents that a host reads in turn. Reads spread over half a million documents would
/// find nothing kept whatever the size, so a document is kept only from its second read
/// (`Cache::reread`): under them the map stays nearly empty, and the server within its
/// 25 MB (docs/benchmarks.md, "One copy of a kept document", "Packed contents").
const MAX_KEPT_RESOURCE: usize = 64 * 1024;
const MAX_KEPT_RESOURCE_BYTES: usize = 4 * 1024 * 1024;
/// What a kept resource takes besides its body, measured (3.6-3.9 KB a 2 KB document, of
/// which 2.4 KB is the body): its record (`StoredResource` and its strings), its contents'
/// `_meta` per revision, the map's entry and what the allocator rounds up.
const KEPT_RESOURCE_RECORD_BYTES: usize = 1536;
/// The library's templates with their matchers, parsed: kept while they take at most this,
/// as `Templates::bytes` counts them (6-9 KiB a template, most of it the compiled matcher:
/// some five hundred templates); a library with more parses them again for each read or
/// completion that needs them.
const MAX_KEPT_TEMPLATE_BYTES: usize = 4 * 1024 * 1024;
/// SHA-256 digests kept, in bytes: each entry is charged `DIGEST_ENTRY_BYTES` (its two
/// 32-byte digests, position, shared pointer and map slot), so the budget holds 32,768 of
/// them, the files of a few hundred skills.
const MAX_DIGEST_BYTES: usize = 4 * 1024 * 1024;
const DIGEST_ENTRY_BYTES: usize = 128;
type PageKey = (ListKind, Revision, Option<String>);

pub(super) struct Cache {
    pages: Memo<PageKey, ShapedPage>,
    /// By name.
    prompts: Memo<String, StoredPrompt>,
    /// Small resources as reads serve them and prompts embed and link them, by URI.
    resources: Memo<String, ReadResult>,
    /// The URIs read recently: a resource is kept from its second read, so that reads
    /// spread over a large library keep nothing (see `Doorkeeper`).
    reread: Doorkeeper,
    /// The library's templates, parsed; one entry.
    templates: Memo<(), Templates>,
    /// How long each prompt's last fill and each argument's last ranking took: what decides
    /// whether the next one may run on the reader thread.
    timings: Memo<Timed, Duration>,
    /// The SHA-256 of content, by its blake3 hash (a resource's `blob_hash`).
    digests: Memo<[u8; 32], [u8; 32]>,
}

/// Work whose last duration decides where the next of its kind runs.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) enum Timed {
    /// Filling the prompt of this name.
    Fill(String),
    /// Ranking the suggestions for one argument of a prompt or variable of a template.
    Ranking(CompletionRef, String),
}

impl Timed {
    /// About what keeping its timing costs: its names, and the entry around them.
    fn bytes(&self) -> usize {
        let names = match self {
            Timed::Fill(prompt) => prompt.len(),
            Timed::Ranking(CompletionRef::Prompt { name }, argument) => name.len() + argument.len(),
            Timed::Ranking(CompletionRef::Resource { uri }, variable) => uri.len() + variable.len(),
        };
        96 + names
    }
}

impl Default for Cache {
    fn default() -> Cache {
        Cache {
            // A prompt's name and a resource's URI, their keys, are counted in their values.
            pages: Memo::sized(MAX_KEPT_PAGE_BYTES, |(_, _, cursor), page| {
                page.size() + cursor.as_ref().map_or(0, String::len)
            }),
            prompts: Memo::sized(MAX_KEPT_PROMPT_BYTES, |_, stored| prompt_bytes(stored)),
            resources: Memo::sized(MAX_KEPT_RESOURCE_BYTES, |_, read| {
                let size = read.body.json().len();
                // Over the per-resource limit: counted as over the whole budget, so never kept.
                if size > MAX_KEPT_RESOURCE {
                    usize::MAX
                } else {
                    size + KEPT_RESOURCE_RECORD_BYTES
                }
            }),
            reread: Doorkeeper::default(),
            templates: Memo::sized(MAX_KEPT_TEMPLATE_BYTES, |(), templates| templates.bytes()),
            timings: Memo::sized(MAX_TIMING_BYTES, |work, _| work.bytes()),
            digests: Memo::sized(MAX_DIGEST_BYTES, |_, _| DIGEST_ENTRY_BYTES),
        }
    }
}

/// About what keeping `stored` costs: its text, and a little for each piece of it.
fn prompt_bytes(stored: &StoredPrompt) -> usize {
    let text = |text: &Option<String>| text.as_ref().map_or(0, String::len);
    let prompt = &stored.prompt;
    let arguments: usize = prompt
        .arguments
        .iter()
        .map(|argument| {
            64 + argument.name.len()
                + text(&argument.title)
                + text(&argument.description)
                + text(&argument.default)
                + text(&argument.pattern)
                + argument.values.iter().map(|v| v.len() + 24).sum::<usize>()
        })
        .sum();
    let messages: usize = prompt.messages.iter().map(|m| 32 + m.body.len()).sum();
    256 + prompt.name.len() + text(&prompt.title) + text(&prompt.description) + arguments + messages
}

impl Cache {
    /// The page for `(kind, revision, cursor)` as of `position`: the kept one, or a fresh one
    /// from `shape`. Failures (a stale cursor, say) are not kept.
    pub(super) fn page<E>(
        &self,
        position: i64,
        (kind, revision, cursor): (ListKind, Revision, Option<&str>),
        shape: impl FnOnce() -> Result<ShapedPage, E>,
    ) -> Result<Arc<ShapedPage>, E> {
        let key = (kind, revision, cursor.map(str::to_string));
        if let Some(kept) = self.pages.get(&key, position) {
            return Ok(kept);
        }
        let page = Arc::new(shape()?);
        self.pages.keep(key, position, &page);
        Ok(page)
    }

    /// The stored prompt `name` as of `position`, from `load` unless kept; None when there
    /// is none (not kept, so a prompt added later is found at once).
    pub(super) fn prompt<E>(
        &self,
        position: i64,
        name: &str,
        load: impl FnOnce() -> Result<Option<StoredPrompt>, E>,
    ) -> Result<Option<Arc<StoredPrompt>>, E> {
        if let Some(kept) = self.prompts.get(name, position) {
            return Ok(Some(kept));
        }
        let Some(prompt) = load()? else {
            return Ok(None);
        };
        let prompt = Arc::new(prompt);
        self.prompts.keep(name.to_string(), position, &prompt);
        Ok(Some(prompt))
    }

    /// The resource stored under `uri` with its content as of `position`, from `load`
    /// unless kept; None when there is none. It is kept from its second read on.
    pub(super) fn resource<E>(
        &self,
        position: i64,
        uri: &str,
        load: impl FnOnce() -> Result<Option<Arc<ReadResult>>, E>,
    ) -> Result<Option<Arc<ReadResult>>, E> {
        if let Some(kept) = self.resources.get(uri, position) {
            return Ok(Some(kept));
        }
        let Some(read) = load()? else {
            return Ok(None);
        };
        if self.reread.admits(uri) {
            self.resources.keep(uri.to_string(), position, &read);
        }
        Ok(Some(read))
    }

    /// The answer to a read of the built-in search template's `uri` as of `position`, from
    /// `search` unless kept: it changes only with the library, so it is kept as a small
    /// resource is, under its URI.
    pub(super) fn search<E>(
        &self,
        position: i64,
        uri: &str,
        search: impl FnOnce() -> Result<Arc<ReadResult>, E>,
    ) -> Result<Arc<ReadResult>, E> {
        if let Some(kept) = self.resources.get(uri, position) {
            return Ok(kept);
        }
        let read = search()?;
        self.resources.keep(uri.to_string(), position, &read);
        Ok(read)
    }

    /// The library's templates as of `position`, from `load` unless kept.
    pub(super) fn templates<E>(
        &self,
        position: i64,
        load: impl FnOnce() -> Result<Templates, E>,
    ) -> Result<Arc<Templates>, E> {
        if let Some(kept) = self.templates.get(&(), position) {
            return Ok(kept);
        }
        let templates = Arc::new(load()?);
        self.templates.keep((), position, &templates);
        Ok(templates)
    }

    /// The SHA-256 of the content whose blake3 hash is `blob_hash`, from `load` unless kept.
    pub(super) fn sha256<E>(
        &self,
        blob_hash: &[u8; 32],
        load: impl FnOnce() -> Result<[u8; 32], E>,
    ) -> Result<[u8; 32], E> {
        if let Some(kept) = self.digests.get(blob_hash, ANY_POSITION) {
            return Ok(*kept);
        }
        let digest = Arc::new(load()?);
        self.digests.keep(*blob_hash, ANY_POSITION, &digest);
        Ok(*digest)
    }

    /// Notes that `work` done at `position` took `took`.
    pub(super) fn took(&self, position: i64, work: Timed, took: Duration) {
        self.timings.keep(work, position, &Arc::new(took));
    }

    /// Whether `work` was last done at `position` within `limit`.
    pub(super) fn quick(&self, position: i64, work: &Timed, limit: Duration) -> bool {
        self.timings
            .get(work, position)
            .is_some_and(|took| *took <= limit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Annotations, Content, Origin, ResourceInfo, StoredResource};

    fn document(i: usize) -> Arc<ReadResult> {
        let uri = format!("shelf://pages/p{i}.md");
        let info = ResourceInfo {
            uri: uri.clone(),
            name: format!("p{i}"),
            title: None,
            description: None,
            mime_type: "text/markdown".into(),
            annotations: Annotations::default(),
            icons: Vec::new(),
            origin: Origin::default(),
            meta: Default::default(),
        };
        let resource = StoredResource {
            info,
            is_text: true,
            size: 2000,
            blob_hash: [0; 32],
            content_hash: [0; 32],
            last_modified: 0,
            version: None,
        };
        Arc::new(ReadResult::new(resource, Content::Text("x".repeat(2000))))
    }

    /// The working set the budget is sized for: a thousand 2 KB documents read in turns are
    /// kept from their second turn and all still kept on the third (none is loaded again),
    /// and twice as many are not.
    #[test]
    fn a_thousand_documents_of_2_kb_stay_kept_and_two_thousand_do_not() {
        // How many documents each of three turns loads.
        let loads_in_turns = |documents: usize| {
            let cache = Cache::default();
            let mut loads = [0; 3];
            for turn in &mut loads {
                for i in 0..documents {
                    let uri = format!("shelf://pages/p{i}.md");
                    cache
                        .resource(1, &uri, || {
                            *turn += 1;
                            Ok::<_, ()>(Some(document(i)))
                        })
                        .expect("the load does not fail");
                }
            }
            loads
        };
        // The first turn is kept only where a URI shares the doorkeeper's bit with one seen
        // before it (see `Doorkeeper`), the second is kept whole.
        let [first, second, third] = loads_in_turns(1000);
        assert_eq!(first, 1000);
        assert!(second > 900, "{second} loaded again on the second turn");
        assert_eq!(third, 0, "the third turn finds all kept");
        assert!(loads_in_turns(2000)[2] > 1000, "2,000 are past the budget");
    }
}
