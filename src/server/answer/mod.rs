//! The one path from a typed request to its answer line, taken the same way by both
//! transports: first `kept` on the thread that read the request (stdio's reader, an HTTP
//! async worker), which answers from what is kept in memory, in bounded time
//! (`bounded_from_memory`); when that is not enough, `stored` on the blocking pool, with
//! the database. Whatever the reach, the same code runs; the one difference is that under
//! `Reach::Kept` taking a connection (`Context::conn`) stops the request with
//! `Stop::NeedsStore`, and the caller hands it to the pool. A legacy `prompts/get` that
//! lacks arguments its client can be asked for comes back from `stored` with the form; the
//! caller sends it (`server::outbound`) and answers again with what the client returned.
//!
//! Every answer is made for one `Visibility`, and every handler it calls keeps to it. What is
//! kept between requests is of the whole library: items (a prompt, a resource, the parsed
//! templates) are taken from it and then checked against the visibility; answers that are
//! themselves filtered (list pages, search hits) are kept and taken only for a caller that
//! sees everything, and made afresh for any other.
//!
//! - `context`: what answering one request takes, and its lookups through what is kept.
//! - `methods`: one function per MCP method over that context; `dispatch` here picks it.

mod context;
mod methods;

use std::time::Duration;

use super::cache::Timed;
use super::guard::guarded;
use super::state::Shared;
use crate::protocol::{
    Envelope, Failure, InputRequest, Method, RequestId, Revision, RpcError, error_line,
};
use crate::store::StoreError;
use crate::visibility::Visibility;
use context::Context;

/// How far a request may reach for its answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Reach {
    /// Only what is kept, for a request answered in bounded time from it (a list page, a
    /// resource, a quick prompt's fill or ranking): the thread that read it does it itself
    /// rather than hand the request to the pool and back. HTTP's async workers.
    Kept,
    /// What is kept, and one item read by its key (a resource by its URI) on a connection
    /// idle in the pool, never waited for: stdio's reader, and a pool task answering a
    /// batch of stdio's requests (`server::dispatch`). A point read of a 2 KB document
    /// takes microseconds, handing the request to the pool and back took most of an
    /// uncached read's time (docs/benchmarks.md, "A read not kept").
    Point,
    /// The database too: a pool task.
    Store,
}

/// Why a request's answer stopped short of a result.
enum Stop {
    Failed(Failure),
    /// The answer needs the database, which this reach does not allow.
    NeedsStore,
    /// A legacy client is to be asked for the missing arguments with this form.
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

/// Answers `envelope` in `revision` from what is kept (and, with `Reach::Point`, a point
/// read), for a caller `seen` shows what it shows: the line to send, or None when the
/// answer needs the store (or a form), and the caller hands the request to the blocking
/// pool for `stored`.
pub(super) fn kept(
    shared: &Shared,
    seen: &Visibility,
    envelope: &Envelope,
    revision: Revision,
    reach: Reach,
    forms: bool,
) -> Option<Vec<u8>> {
    answer(shared, seen, envelope, revision, reach, forms).ok()
}

/// Answers `envelope` with the database, on the blocking pool: the line to send, or, with
/// `forms` (a legacy client that lacks arguments may be asked for them with our own
/// `elicitation/create`), the form to ask.
pub(super) fn stored(
    shared: &Shared,
    seen: &Visibility,
    envelope: &Envelope,
    revision: Revision,
    forms: bool,
) -> Result<Vec<u8>, InputRequest> {
    match answer(shared, seen, envelope, revision, Reach::Store, forms) {
        Ok(line) => Ok(line),
        Err(Stop::Ask(request)) if forms => Err(request),
        // The store's reach covers every request, and only a form-taking caller is asked
        // for a form; were it not so, the client must still get an answer.
        Err(_) => Ok(unanswered(&envelope.id)),
    }
}

/// `stored` for a caller that is never asked for a form (HTTP's): always the line.
pub(super) fn stored_line(
    shared: &Shared,
    seen: &Visibility,
    envelope: &Envelope,
    revision: Revision,
) -> Vec<u8> {
    stored(shared, seen, envelope, revision, false).unwrap_or_else(|_| unanswered(&envelope.id))
}

fn unanswered(id: &RequestId) -> Vec<u8> {
    error_line(
        id,
        &RpcError::internal("no answer could be made for this request"),
    )
}

/// Answers `envelope` within `reach`: the line (a result or an error), or why there is none
/// yet (`Stop::NeedsStore`, `Stop::Ask`). Never panics the process (`guard`).
fn answer(
    shared: &Shared,
    seen: &Visibility,
    envelope: &Envelope,
    revision: Revision,
    reach: Reach,
    forms: bool,
) -> Result<Vec<u8>, Stop> {
    let answered = guarded(
        || envelope.id.clone(),
        || {
            // Taken before anything is read: what is read is then at least as new as the
            // position it is kept under.
            let position = shared.position();
            if reach != Reach::Store && !bounded_from_memory(shared, envelope, position) {
                return Err(Stop::NeedsStore);
            }
            // Held until the answer is made: a replacement of the served file waits for it.
            let library = shared.library();
            let Some(library) = library.as_ref() else {
                return Err(Stop::Failed(Failure::Internal(
                    "the served database file was replaced by one that could not be opened; restart the server".into(),
                )));
            };
            // A channel's store and what is kept of it, held until the answer is made.
            let channel = match seen.channel() {
                Some(name) => Some(library.channel(name)?),
                None => None,
            };
            let served = shared.served(library, channel.as_deref());
            let id = &envelope.id;
            let ctx = Context::new(shared, library, served, seen, id, revision, position, reach);
            dispatch(&ctx, envelope, forms)
        },
    );
    match answered {
        Ok(Err(Stop::Failed(failure))) => Ok(error_line(&envelope.id, &failure.into_rpc(revision))),
        Ok(answered) => answered,
        Err(panicked) => Ok(panicked),
    }
}

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

/// The dispatcher: the function of the request's method, over its context.
fn dispatch(ctx: &Context, envelope: &Envelope, forms: bool) -> Result<Vec<u8>, Stop> {
    let era = &envelope.era;
    match &envelope.method {
        Method::Discover => methods::discover(ctx, era.extensions()),
        Method::Initialize { extensions, .. } => methods::initialize(ctx, *extensions),
        Method::Ping => methods::ping(ctx),
        Method::ListSkills { cursor } => methods::skills_list(ctx, cursor.as_deref()),
        Method::GetSkill { uri } => methods::skills_get(ctx, uri),
        Method::ReadDirectory { uri, cursor } => {
            methods::directory_read(ctx, uri, cursor.as_deref())
        }
        Method::ListPrompts { cursor } => methods::prompts_list(ctx, cursor.as_deref()),
        Method::GetPrompt(params) => {
            methods::prompts_get(ctx, params, era.can_elicit_forms() || forms)
        }
        Method::ListResources { cursor } => methods::resources_list(ctx, cursor.as_deref()),
        Method::ListTemplates { cursor } => methods::templates_list(ctx, cursor.as_deref()),
        Method::ReadResource { uri } => methods::resources_read(ctx, uri),
        Method::ListTools { cursor } => methods::tools_list(ctx, cursor.as_deref()),
        Method::CallTool(params) => methods::tools_call(ctx, params),
        Method::Complete(params) => methods::completion_complete(ctx, params),
        // Answered in order by the session, or refused by `protocol::revision_of`.
        Method::Subscribe { .. }
        | Method::Unsubscribe { .. }
        | Method::Listen(_)
        | Method::Unknown(_) => Err(Stop::Failed(Failure::Internal(format!(
            "{:?} reached the answer path, which has nothing to answer it with",
            envelope.method
        )))),
    }
}
