//! The one path from a typed request to its answer line. Every request the server answers
//! with a result comes through `answer`: the reader thread asks it with `Reach::Kept`
//! (what is kept in memory, in bounded time), a pool task with `Reach::Store`. A request
//! that needs more than its reach allows is answered `Answer::NeedsStore`, and the caller
//! hands it to the pool.

use std::cell::OnceCell;
use std::sync::Arc;

use rusqlite::Connection;

use super::cache::ListKind;
use super::state::Shared;
use crate::handlers::completion::{self, Target};
use crate::handlers::templates::Templates;
use crate::handlers::{discover, prompts, resources, templates};
use crate::protocol::{
    CompletionRef, Envelope, Failure, Method, ReadResult, Revision, RpcError, ShapedPage,
    error_line,
};
use crate::store::{Manager, Store};

/// How far a request may reach for its answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Reach {
    /// Only a kept list page or resource: a lookup and a copy, which the reader thread
    /// does itself rather than hand the request to a task and back.
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
}

/// Why a request's answer stopped short of a result.
enum Stop {
    Failed(Failure),
    NeedsStore,
}

impl From<Failure> for Stop {
    fn from(failure: Failure) -> Stop {
        Stop::Failed(failure)
    }
}

/// Answers `envelope` in `revision` within `reach`. Never panics the process: a panic
/// while answering is answered -32603 (and logged by the panic hook).
pub(super) fn answer(
    shared: &Shared,
    envelope: &Envelope,
    revision: Revision,
    reach: Reach,
) -> Answer {
    let run = || run(shared, envelope, revision, reach);
    let rpc_error = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)) {
        Ok(Ok(line)) => return Answer::Line(line),
        Ok(Err(Stop::NeedsStore)) => return Answer::NeedsStore,
        Ok(Err(Stop::Failed(failure))) => failure.into_rpc(revision),
        Err(_) => RpcError::panicked(),
    };
    Answer::Line(error_line(&envelope.id, &rpc_error))
}

/// A pooled connection, taken on first use and only within the reach.
struct Reads<'a> {
    store: Option<&'a Store>,
    conn: OnceCell<r2d2::PooledConnection<Manager>>,
}

impl Reads<'_> {
    fn conn(&self) -> Result<&Connection, Stop> {
        if let Some(conn) = self.conn.get() {
            return Ok(conn);
        }
        let store = self.store.ok_or(Stop::NeedsStore)?;
        let conn = store.conn().map_err(Failure::from)?;
        Ok(self.conn.get_or_init(|| conn))
    }
}

/// Reads and shapes one page of a list (from a connection and a cursor).
type ShapePage<'a> = &'a dyn Fn(&Connection, Option<&str>) -> Result<ShapedPage, Failure>;

fn run(
    shared: &Shared,
    envelope: &Envelope,
    revision: Revision,
    reach: Reach,
) -> Result<Vec<u8>, Stop> {
    let method = &envelope.method;
    // Only lookups are bounded in time from memory alone: a prompt's fill or a ranking can
    // take as long as its template or table makes it.
    let is_lookup = matches!(
        method,
        Method::ListPrompts { .. }
            | Method::ListResources { .. }
            | Method::ListTemplates { .. }
            | Method::ReadResource { .. }
    );
    if reach == Reach::Kept && !is_lookup {
        return Err(Stop::NeedsStore);
    }
    // Taken before anything is read: what is read is then at least as new as the position
    // it is kept under.
    let position = shared.position();
    let reads = Reads {
        store: (reach == Reach::Store).then_some(&shared.store),
        conn: OnceCell::new(),
    };
    let shaper = shared.shaper(revision);
    let config = &shared.config;
    let cache = &shared.cache;
    let id = &envelope.id;
    // A page of a list: kept until the library changes, shaped by `shape` otherwise.
    let list =
        |kind: ListKind, cursor: &Option<String>, shape: ShapePage| -> Result<Vec<u8>, Stop> {
            let cursor = cursor.as_deref();
            let page = cache.page(position, (kind, revision, cursor), || {
                Ok::<_, Stop>(shape(reads.conn()?, cursor)?)
            })?;
            Ok(shaper.page_line(id, &page))
        };
    // A resource stored under exactly `uri`, kept when small.
    let resource = |conn: &Connection, uri: &str| -> Result<Option<Arc<ReadResult>>, Failure> {
        cache.resource(position, uri, || resources::stored(conn, uri))
    };
    let templates = |conn: &Connection| -> Result<Arc<Templates>, Failure> {
        cache.templates(position, || Templates::load(conn))
    };
    Ok(match method {
        Method::Discover => shaper.discover(id, &discover::discover(reads.conn()?)?),
        Method::Initialize { .. } => shaper.initialize(id, &discover::discover(reads.conn()?)?),
        Method::Ping => shaper.empty(id),
        Method::ListPrompts { cursor } => list(ListKind::Prompts, cursor, &|conn, cursor| {
            Ok(shaper.prompts_page(&prompts::list(conn, config, cursor)?))
        })?,
        Method::ListResources { cursor } => list(ListKind::Resources, cursor, &|conn, cursor| {
            Ok(shaper.resources_page(&resources::list(conn, config, cursor)?))
        })?,
        Method::ListTemplates { cursor } => list(ListKind::Templates, cursor, &|conn, cursor| {
            Ok(shaper.templates_page(&templates::list(conn, config, cursor)?))
        })?,
        Method::ReadResource { uri } => {
            let kept = cache.resource(position, uri, || {
                Ok::<_, Stop>(resources::stored(reads.conn()?, uri)?)
            })?;
            let read = match kept {
                Some(read) => read,
                // Not stored under this spelling: perhaps through a template.
                None => {
                    let conn = reads.conn()?;
                    resources::read(uri, &*templates(conn)?, &|uri| resource(conn, uri))?
                }
            };
            shaper.read_line(id, &read)
        }
        Method::GetPrompt(params) => {
            let conn = reads.conn()?;
            let found = cache.prompt(position, &params.name, || {
                crate::store::read::prompt(conn, &params.name).map_err(Failure::from)
            })?;
            let stored = found.ok_or_else(|| prompts::unknown(conn, &params.name))?;
            let caller = prompts::Caller {
                can_elicit: envelope.era.can_elicit_forms(),
                now: shaper.now,
            };
            let resolve = |uri: &str| resource(conn, uri);
            let outcome = prompts::get(config, &shared.secret, params, &stored, &resolve, caller)?;
            shaper.prompt_outcome(id, &outcome)
        }
        Method::Complete(params) => {
            let conn = reads.conn()?;
            let (prompt, kept_templates);
            let target = match &params.reference {
                CompletionRef::Prompt { name } => {
                    prompt = cache.prompt(position, name, || {
                        crate::store::read::prompt(conn, name).map_err(Failure::from)
                    })?;
                    Target::Prompt(prompt.as_deref())
                }
                CompletionRef::Resource { .. } => {
                    kept_templates = templates(conn)?;
                    Target::Templates(&kept_templates)
                }
            };
            let found = completion::complete(conn, &shared.indexes, position, params, target)?;
            shaper.completion(id, &found)
        }
        // Answered in order by the session, or refused by `protocol::revision_of`.
        Method::Subscribe { .. }
        | Method::Unsubscribe { .. }
        | Method::Listen(_)
        | Method::Unknown(_) => {
            return Err(Stop::Failed(Failure::Internal(format!(
                "{method:?} reached the answer path, which has nothing to answer it with"
            ))));
        }
    })
}
