//! The one path from a typed request to its answer line. Every request the server answers
//! with a result comes through `answer`: the reader thread asks it with `Reach::Kept`
//! (what is kept in memory, in bounded time: `bounded_from_memory`), a pool task with
//! `Reach::Store`. Whatever the reach, the same code runs; the one difference is that
//! under `Reach::Kept` taking a connection (`Reads::conn`) stops the request with
//! `Answer::NeedsStore`, and the caller hands it to the pool. A legacy `prompts/get` that
//! lacks arguments its client can be asked for comes back `Answer::Ask` with the form; the
//! caller sends it (`server::outbound`) and answers again with what the client returned.
//!
//! Every answer is made for one `Visibility`, and every handler it calls keeps to it. What is
//! kept between requests is of the whole library: items (a prompt, a resource, the parsed
//! templates) are taken from it and then checked against the visibility; answers that are
//! themselves filtered (list pages, search hits) are kept and taken only for a caller that
//! sees everything, and made afresh for any other.

use std::cell::OnceCell;
use std::time::{Duration, Instant};

use rusqlite::Connection;

use super::cache::{ListKind, Timed};
use super::state::Shared;
use crate::handlers::completion::{self, Target};
use crate::handlers::discover::discover;
use crate::handlers::templates::Templates;
use crate::handlers::tools::{self, Call};
use crate::handlers::{prompts, resources, search, skills, templates};
use crate::protocol::{
    CompletionRef, Envelope, Failure, GetPromptParams, InputRequest, Method, PromptOutcome,
    Revision, RpcError, ShapedPage, ToolAnswer, error_line,
};
use crate::store::search as store_search;
use crate::store::{Snapshot, Store, StoreError, read};
use crate::visibility::Visibility;

/// How far a request may reach for its answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Reach {
    /// Only what is kept, for a request answered in bounded time from it (a list page, a
    /// resource, a quick prompt's fill or ranking): the reader thread does it itself rather
    /// than hand the request to a task and back.
    Kept,
    /// The database too: a pool task.
    Store,
}

/// What answering came to.
pub(super) enum Answer {
    /// The line to send: a result or an error.
    Line(Vec<u8>),
    /// The answer needs the database, which this reach does not allow.
    NeedsStore,
    /// A legacy client is to be asked for the missing arguments with this form.
    Ask(InputRequest),
}

/// Why a request's answer stopped short of a result.
enum Stop {
    Failed(Failure),
    NeedsStore,
    Ask(InputRequest),
}

impl From<Failure> for Stop {
    fn from(failure: Failure) -> Stop {
        Stop::Failed(failure)
    }
}

impl From<StoreError> for Stop {
    fn from(err: StoreError) -> Stop {
        Stop::Failed(err.into())
    }
}

/// Answers `envelope` in `revision` within `reach`, for a caller `seen` shows what it shows
/// (stdio: everything); `forms`: a legacy client that lacks arguments may be asked for them
/// with our own `elicitation/create`. Never panics the process: a panic while answering is
/// answered -32603 (and logged by the panic hook).
pub(super) fn answer(
    shared: &Shared,
    seen: &Visibility,
    envelope: &Envelope,
    revision: Revision,
    reach: Reach,
    forms: bool,
) -> Answer {
    let run = || run(shared, seen, envelope, revision, reach, forms);
    let rpc_error = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)) {
        Ok(Ok(line)) => return Answer::Line(line),
        Ok(Err(Stop::NeedsStore)) => return Answer::NeedsStore,
        Ok(Err(Stop::Ask(request))) => return Answer::Ask(request),
        Ok(Err(Stop::Failed(failure))) => failure.into_rpc(revision),
        Err(_) => RpcError::panicked(),
    };
    Answer::Line(error_line(&envelope.id, &rpc_error))
}

/// A pooled connection, taken on first use and only within the reach.
struct Reads<'a> {
    store: Option<&'a Store>,
    conn: OnceCell<Snapshot>,
}

impl Reads<'_> {
    fn conn(&self) -> Result<&Connection, Stop> {
        if let Some(conn) = self.conn.get() {
            return Ok(conn);
        }
        let store = self.store.ok_or(Stop::NeedsStore)?;
        let conn = store.snapshot().map_err(Failure::from)?;
        Ok(self.conn.get_or_init(|| conn))
    }
}

/// Reads and shapes one page of a list (from a connection and a cursor).
type ShapePage<'a> = &'a dyn Fn(&Connection, Option<&str>) -> Result<ShapedPage, Failure>;

/// The longest request line a `prompts/get` or `completion/complete` may have to be
/// answered on the reader thread, and the longest the last fill of its prompt or ranking
/// for its argument may have taken: far more than a real prompt with real arguments, or a
/// ranking over a table of tens of thousands of values, needs. Work that takes longer goes
/// to the pool until it is quick there again, so a slow template or a huge table holds up
/// the next line at most once in a while, never request after request.
const MAX_KEPT_LINE: usize = 16 * 1024;
const MAX_KEPT_WORK: Duration = Duration::from_micros(200);

/// Whether `envelope` can be answered from memory in bounded time, the condition of
/// `Reach::Kept`: a lookup always; a prompt's fill or an argument's ranking when the line
/// is small and the last such work at this position was quick. Anything else can take as
/// long as the library makes it.
fn bounded_from_memory(shared: &Shared, envelope: &Envelope, position: i64) -> bool {
    let work = match &envelope.method {
        Method::ListPrompts { .. }
        | Method::ListResources { .. }
        | Method::ListTemplates { .. }
        | Method::ReadResource { .. } => return true,
        Method::GetPrompt(params) => Timed::Fill(params.name.clone()),
        Method::Complete(params) => {
            Timed::Ranking(params.reference.clone(), params.argument.name.clone())
        }
        _ => return false,
    };
    envelope.size <= MAX_KEPT_LINE && shared.cache.quick(position, &work, MAX_KEPT_WORK)
}

fn run(
    shared: &Shared,
    seen: &Visibility,
    envelope: &Envelope,
    revision: Revision,
    reach: Reach,
    forms: bool,
) -> Result<Vec<u8>, Stop> {
    // Taken before anything is read: what is read is then at least as new as the position
    // it is kept under.
    let position = shared.position();
    if reach == Reach::Kept && !bounded_from_memory(shared, envelope, position) {
        return Err(Stop::NeedsStore);
    }
    // Held until the answer is made: a replacement of the served file waits for it.
    let library = shared.library();
    let Some(library) = library.as_ref() else {
        return Err(Stop::Failed(Failure::Internal(
            "the served database file was replaced by one that could not be opened; restart the server".into(),
        )));
    };
    let reads = Reads {
        store: (reach == Reach::Store).then_some(&library.store),
        conn: OnceCell::new(),
    };
    let shaper = shared.shaper_for(revision, seen);
    let config = &shared.config;
    let cache = &shared.cache;
    let id = &envelope.id;
    let limited = seen.is_limited();
    // A page of a list: kept until the library changes, shaped by `shape` otherwise; a
    // limited caller's page is its own, never kept.
    let page = |kind: ListKind, cursor: &Option<String>, shape: ShapePage| {
        let cursor = cursor.as_deref();
        if limited {
            return Ok(std::sync::Arc::new(shape(reads.conn()?, cursor)?));
        }
        cache.page(position, (kind, revision, cursor), || {
            Ok::<_, Stop>(shape(reads.conn()?, cursor)?)
        })
    };
    let list = |kind: ListKind, cursor: &Option<String>, shape: ShapePage| {
        Ok::<_, Stop>(shaper.page_line(id, &*page(kind, cursor, shape)?))
    };
    let prompts_page: ShapePage =
        &|conn, cursor| Ok(shaper.prompts_page(&prompts::list(conn, config, cursor, seen)?));
    let resources_page: ShapePage =
        &|conn, cursor| Ok(shaper.resources_page(&resources::list(conn, config, cursor, seen)?));
    // A resource stored under exactly `uri` (kept when small) that the caller may read: of
    // its collections, or named by one of their prompts; otherwise as if there were none.
    let resource = |uri: &str| {
        let found = cache.resource(position, uri, || {
            Ok::<_, Stop>(resources::stored(reads.conn()?, uri)?)
        })?;
        match (found, seen.collections()) {
            (Some(found), Some(within))
                if !seen.shows(found.resource.info.origin.collection.as_deref()) =>
            {
                let named = store_search::named_by_prompt_in(reads.conn()?, uri, within)?;
                Ok(named.then_some(found))
            }
            (found, _) => Ok(found),
        }
    };
    let templates = || cache.templates(position, || Ok::<_, Stop>(Templates::load(reads.conn()?)?));
    // The stored prompt `name`, when the caller sees it.
    let prompt = |name: &str| {
        let found = cache.prompt(position, name, || {
            Ok::<_, Stop>(read::prompt(reads.conn()?, name).map_err(Failure::from)?)
        })?;
        Ok::<_, Stop>(found.filter(|stored| seen.shows(stored.prompt.origin.collection.as_deref())))
    };
    let read = |uri: &str| {
        // A limited caller's hits are its own, never kept.
        let search = |query: &str| {
            if limited {
                return Ok(search::read(reads.conn()?, uri, query, seen.collections())?);
            }
            cache.search(position, uri, || {
                Ok::<_, Stop>(search::read(reads.conn()?, uri, query, None)?)
            })
        };
        resources::read(uri, &resource, search, prompt, templates)
    };
    // A prompt filled (or, when the client can answer a form, asked for what it lacks).
    let get_prompt = |params: &GetPromptParams, can_elicit: bool| {
        let Some(stored) = prompt(&params.name)? else {
            return Err(prompts::unknown(reads.conn()?, &params.name, seen).into());
        };
        let caller = prompts::Caller {
            can_elicit,
            now: shaper.now,
        };
        let started = Instant::now();
        let outcome = prompts::get(
            config,
            &library.secret,
            params,
            &stored,
            &resource,
            caller,
            &shared.retained,
        );
        if !matches!(outcome, Err(Stop::NeedsStore)) {
            let work = Timed::Fill(params.name.clone());
            cache.took(position, work, started.elapsed());
        }
        outcome
    };
    // A skill file's SHA-256, kept by its content.
    let sha256: skills::Sha256 =
        &|conn, file| cache.sha256(&file.blob_hash, || skills::sha256_of(conn, file));
    Ok(match &envelope.method {
        Method::Discover => {
            let discovery = discover(reads.conn()?, &config.mirrors, seen)?;
            shaper.discover(id, &discovery, envelope.era.extensions())
        }
        Method::Initialize { extensions, .. } => {
            let discovery = discover(reads.conn()?, &config.mirrors, seen)?;
            shaper.initialize(id, &discovery, *extensions)
        }
        Method::ListSkills { cursor } => {
            let page = skills::list(reads.conn()?, config, cursor.as_deref(), seen, sha256)?;
            shaper.skills_line(id, &page)
        }
        Method::GetSkill { uri } => {
            shaper.skill_line(id, &skills::get(reads.conn()?, uri, seen, sha256)?)
        }
        Method::ReadDirectory { uri, cursor } => {
            let page = skills::read_directory(reads.conn()?, config, uri, cursor.as_deref(), seen)?;
            shaper.directory_line(id, &page)
        }
        Method::Ping => shaper.empty(id),
        Method::ListPrompts { cursor } => list(ListKind::Prompts, cursor, prompts_page)?,
        Method::ListResources { cursor } => list(ListKind::Resources, cursor, resources_page)?,
        Method::ListTemplates { cursor } => list(ListKind::Templates, cursor, &|conn, cursor| {
            Ok(shaper.templates_page(&templates::list(conn, config, cursor, seen)?))
        })?,
        Method::ReadResource { uri } => shaper.read_line(id, &*read(uri)?),
        Method::GetPrompt(params) => {
            match get_prompt(params, envelope.era.can_elicit_forms() || forms)? {
                // A legacy client is asked with a request of ours, not within a result.
                PromptOutcome::InputRequired { requests, .. } if !revision.is_modern() => {
                    return Err(requests.into_iter().next().map_or_else(
                        || Failure::Internal("a form was asked for without one".into()).into(),
                        Stop::Ask,
                    ));
                }
                outcome => shaper.prompt_outcome(id, &outcome),
            }
        }
        Method::ListTools { cursor } => {
            let list = tools::list(reads.conn()?, &config.mirrors, cursor.as_deref(), seen)?;
            shaper.tools_line(id, &list)
        }
        // The request the call mirrors, answered as it is; a failure about the call's
        // input is the tool's error.
        Method::CallTool(params) => {
            let answered = match tools::call(&config.mirrors, params)? {
                Call::ListPrompts { cursor } => page(ListKind::Prompts, &cursor, prompts_page)
                    .map(|page| shaper.tool_line(id, &ToolAnswer::Page(&page))),
                Call::ListResources { cursor } => {
                    page(ListKind::Resources, &cursor, resources_page)
                        .map(|page| shaper.tool_line(id, &ToolAnswer::Page(&page)))
                }
                Call::ReadResource { uri } => {
                    read(&uri).map(|read| shaper.tool_line(id, &ToolAnswer::Read(&read)))
                }
                // Missing arguments are the tool's error: a tool call asks for no form.
                Call::GetPrompt(params) => {
                    get_prompt(&params, false).and_then(|outcome| match outcome {
                        PromptOutcome::Rendered { prompt, .. } => {
                            Ok(shaper.tool_line(id, &ToolAnswer::Prompt(&prompt)))
                        }
                        PromptOutcome::InputRequired { .. } => Err(Stop::Failed(
                            Failure::Internal("a tool call asked for a form".into()),
                        )),
                    })
                }
                Call::Refused(sentence) => {
                    Ok(shaper.tool_line(id, &ToolAnswer::Refused(&sentence)))
                }
            };
            match answered {
                Err(Stop::Failed(failure)) => {
                    let sentence = tools::refusal(failure)?;
                    shaper.tool_line(id, &ToolAnswer::Refused(&sentence))
                }
                other => other?,
            }
        }
        Method::Complete(params) => {
            let (found, kept_templates, seen_templates);
            let target = match &params.reference {
                CompletionRef::Prompt { name } => {
                    found = prompt(name)?;
                    Target::Prompt(found.as_deref())
                }
                CompletionRef::Resource { .. } => {
                    kept_templates = templates()?;
                    if limited {
                        seen_templates = kept_templates.seen_by(seen);
                        Target::Templates(&seen_templates)
                    } else {
                        Target::Templates(&kept_templates)
                    }
                }
            };
            let started = Instant::now();
            let completion = completion::complete(
                &|| reads.conn(),
                &library.indexes,
                position,
                params,
                target,
                seen,
            );
            if !matches!(completion, Err(Stop::NeedsStore)) {
                let work = Timed::Ranking(params.reference.clone(), params.argument.name.clone());
                cache.took(position, work, started.elapsed());
            }
            shaper.completion(id, &completion?)
        }
        // Answered in order by the session, or refused by `protocol::revision_of`.
        Method::Subscribe { .. }
        | Method::Unsubscribe { .. }
        | Method::Listen(_)
        | Method::Unknown(_) => {
            return Err(Stop::Failed(Failure::Internal(format!(
                "{:?} reached the answer path, which has nothing to answer it with",
                envelope.method
            ))));
        }
    })
}
