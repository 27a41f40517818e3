//! The stdio MCP server. The calling thread reads stdin and dispatches each line; a request
//! runs as its own task on tokio's blocking pool (SQLite work never sits on an async worker,
//! and a slow request never holds up a fast one), unless it can be answered from memory in
//! bounded time, which the reader does itself; one writer thread puts answers on stdout,
//! coalescing writes (but for an answer the client waits for alone, which the thread that
//! made it writes: see `transport`); a watcher thread notices other processes' commits.
//!
//! Dispatching on the reader thread, rather than handing each line to an async task first,
//! saves a thread hop per request (measured: see docs/benchmarks.md).
//!
//! `dispatch` owns the per-process state (the legacy session, the subscriptions, the
//! requests that may still be cancelled); `watch` reports changes to it.

mod cache;
mod dispatch;
mod rate_limit;
mod transport;
mod watch;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};

use anyhow::{Context, Result};

use crate::complete::CompletionIndexes;
use crate::config::ServeConfig;
use crate::handlers::{self, Failure};
use crate::protocol::{self, Envelope, Method, Revision, RpcError, ShapedPage, Shaper, code};
use crate::store::{self, Store};
use cache::{Cache, ListKind};
use dispatch::{Dispatcher, Session};

/// Requests running at once; the reader waits (and so the client's writes do) beyond it,
/// which bounds memory whatever the client sends.
const MAX_IN_FLIGHT: usize = 256;
/// Answers waiting for the writer (or being written), in number and in bytes; a client
/// that stops reading stdout stops us too, with this much memory held at most. The bytes
/// bound is for large resources: 64 answers of 100 KiB would be 6 MiB (measured with
/// `cargo bench --bench large`: 1 MiB keeps a 1 GB library under 25 MB).
const MAX_QUEUED_ANSWERS: usize = 4096;
const MAX_QUEUED_BYTES: usize = 1024 * 1024;
/// The longest request line a `prompts/get` may have to be answered on the reader thread,
/// and the longest its prompt's last fill may have taken (see `answer_from_memory`): far
/// more than a real prompt with real arguments needs. A fill that takes longer sends its
/// prompt back to the pool until a fill there is quick again, so a slow template holds up
/// the next line at most once in a while, never request after request.
const MAX_INLINE_LINE: usize = 16 * 1024;
const MAX_INLINE_FILL: std::time::Duration = std::time::Duration::from_micros(200);
/// Threads tokio may start for request tasks.
const MAX_TASK_THREADS: usize = 4;

/// Everything a request task needs, shared by all of them.
struct Shared {
    store: Store,
    config: ServeConfig,
    /// The database's secret, for signing `requestState`.
    secret: Vec<u8>,
    /// Where answers go: the writer thread.
    output: Arc<transport::Output>,
    /// Requests still running, by id: set to true when the client cancels one.
    running: Mutex<HashMap<String, Arc<AtomicBool>, foldhash::fast::RandomState>>,
    in_flight: InFlight,
    /// The change log's last position as the watcher last saw it. Kept answers and indexes
    /// are checked against it rather than against the database: an atomic load instead of
    /// a query per request, at the price of serving what was kept for up to one poll
    /// interval after another process commits (the moment the host is told, too).
    position: AtomicI64,
    /// Pages and prompts kept until the library changes.
    cache: Cache,
    /// Completion tables' indexes, built on first use (a cache of the store, by version).
    indexes: CompletionIndexes,
}

impl Shared {
    fn position(&self) -> i64 {
        self.position.load(Ordering::Acquire)
    }
}

/// Counts running request tasks, so the reader can wait for room and, at the end, for all.
#[derive(Default)]
struct InFlight {
    count: Mutex<usize>,
    changed: Condvar,
}

impl InFlight {
    fn begin(&self) {
        let mut count = self.count.lock().unwrap_or_else(PoisonError::into_inner);
        while *count >= MAX_IN_FLIGHT {
            count = self
                .changed
                .wait(count)
                .unwrap_or_else(PoisonError::into_inner);
        }
        *count += 1;
    }

    fn end(&self) {
        let mut count = self.count.lock().unwrap_or_else(PoisonError::into_inner);
        let was = *count;
        *count = count.saturating_sub(1);
        // Only two moments can have a waiter: the reader waiting for room, and the end of
        // input waiting for none. Waking on every end would be a system call per request.
        if was == MAX_IN_FLIGHT || *count == 0 {
            self.changed.notify_all();
        }
    }

    fn wait_idle(&self) {
        let mut count = self.count.lock().unwrap_or_else(PoisonError::into_inner);
        while *count > 0 {
            count = self
                .changed
                .wait(count)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }
}

/// Serves MCP on stdin/stdout until stdin closes.
pub fn serve(store: Store, config: ServeConfig) -> Result<()> {
    let (secret, start) = {
        let conn = store.conn()?;
        (
            store::read::secret(&conn)?,
            store::read::change_position(&conn)?,
        )
    };
    // Only the blocking pool is used: a current-thread runtime starts no async workers.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .max_blocking_threads(MAX_TASK_THREADS)
        .thread_name("request")
        .build()
        .context("cannot start the async runtime")?;
    let output = Arc::new(transport::Output::new(
        MAX_QUEUED_ANSWERS,
        MAX_QUEUED_BYTES,
        transport::DirectPipe::stdout(),
    ));
    let writer = {
        let output = Arc::clone(&output);
        std::thread::Builder::new()
            .name("stdout".into())
            .spawn(move || transport::write_lines(&output, transport::stdout()))
            .context("cannot start the writer thread")?
    };
    let poll_interval = config.poll_interval;
    let shared = Arc::new(Shared {
        store,
        config,
        secret,
        output,
        running: Mutex::default(),
        in_flight: InFlight::default(),
        position: AtomicI64::new(start),
        cache: Cache::default(),
        indexes: CompletionIndexes::new(),
    });
    let session = Arc::new(Mutex::new(Session::default()));
    {
        let path = shared.store.path().to_path_buf();
        let shared = Arc::clone(&shared);
        let session = Arc::clone(&session);
        watch::spawn(&path, poll_interval, start, move |position, changes| {
            // Moved before anyone is told, so a host re-listing on a notification is never
            // answered from what was kept.
            shared.position.store(position, Ordering::Release);
            if !changes.is_empty() {
                dispatch::notify(&shared, &session, changes);
            }
        })
        .context("cannot watch the database for changes")?;
    }
    let mut dispatcher = Dispatcher::new(Arc::clone(&shared), session, runtime.handle().clone());
    let max_line = shared.config.max_line;
    transport::read_lines(
        std::io::stdin().lock(),
        max_line,
        |input, more_buffered| {
            shared.output.note_input(more_buffered);
            dispatcher.handle(input)
        },
        || shared.output.reader_waits(),
    );
    // stdin closed: finish what was asked, close the streams, then stop.
    dispatcher.finish();
    shared.output.send(transport::END.to_vec());
    let _ = writer.join();
    // Every task has finished; idle pool threads need not be waited for.
    runtime.shutdown_background();
    Ok(())
}

/// Runs one request to its answer line (on the pool).
fn answer(shared: &Shared, envelope: &Envelope, revision: Revision) -> Vec<u8> {
    let shaper = shaper(shared, revision);
    guarded(envelope, revision, || run(shared, envelope, &shaper))
}

/// A request answered on the calling thread, the reader's, when everything it needs is
/// kept and it is certain to be quick, which costs less than handing it to the pool and
/// back. None: the pool answers it.
///
/// A `prompts/get` qualifies when its line is at most `MAX_INLINE_LINE`, its prompt and
/// every resource it embeds are kept, and its last fill at this position took at most
/// `MAX_INLINE_FILL` (a slow fill there keeps the prompt on the pool until it is fast
/// again). A `completion/complete` of a kept prompt's argument qualifies when its table's
/// index is kept and small, or when it completes from a short enum.
fn answer_from_memory(
    shared: &Shared,
    envelope: &Envelope,
    revision: Revision,
    line_len: usize,
) -> Option<Vec<u8>> {
    let handled = matches!(envelope.method, Method::GetPrompt(_) | Method::Complete(_));
    if !handled || line_len > MAX_INLINE_LINE {
        return None;
    }
    let position = shared.position();
    let shaper = shaper(shared, revision);
    match &envelope.method {
        Method::GetPrompt(params) => {
            let stored = shared
                .cache
                .quick_prompt(position, &params.name, MAX_INLINE_FILL)?;
            // Set when an embed is not kept: the answer is then left to the pool.
            let not_kept = std::cell::Cell::new(false);
            let resolve = |uri: &str| match shared.cache.kept_resource(position, uri) {
                Some(kept) => Ok(Some(kept)),
                None => {
                    not_kept.set(true);
                    Err(Failure::Internal("not kept".into()))
                }
            };
            guarded_unless_declined(envelope, revision, || {
                let line = fill(
                    shared, envelope, &shaper, params, &stored, &resolve, position,
                );
                (!not_kept.get()).then_some(line)
            })
        }
        Method::Complete(params) => {
            let protocol::CompletionRef::Prompt { name } = &params.reference else {
                return None;
            };
            let stored = shared.cache.kept_prompt(position, name)?;
            guarded_unless_declined(envelope, revision, || {
                let kept = handlers::completion::complete_kept(params, &stored, |table| {
                    shared.indexes.kept(table, position)
                });
                kept.map(|completion| Ok(shaper.completion(&envelope.id, &completion)))
            })
        }
        _ => None,
    }
}

fn shaper(shared: &Shared, revision: Revision) -> Shaper<'_> {
    Shaper {
        revision,
        config: &shared.config,
        now: store::now_ms(),
    }
}

/// Runs `work` to an answer line; never panics the process (a panic in a handler becomes
/// -32603).
fn guarded(
    envelope: &Envelope,
    revision: Revision,
    work: impl FnOnce() -> Result<Vec<u8>, Failure>,
) -> Vec<u8> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)) {
        Ok(outcome) => outcome_line(envelope, revision, outcome),
        Err(_) => panic_line(envelope),
    }
}

/// `guarded` for work that may decline (None: the pool answers instead); a declined
/// request costs no error line.
fn guarded_unless_declined(
    envelope: &Envelope,
    revision: Revision,
    work: impl FnOnce() -> Option<Result<Vec<u8>, Failure>>,
) -> Option<Vec<u8>> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)) {
        Ok(outcome) => outcome.map(|outcome| outcome_line(envelope, revision, outcome)),
        Err(_) => Some(panic_line(envelope)),
    }
}

fn outcome_line(
    envelope: &Envelope,
    revision: Revision,
    outcome: Result<Vec<u8>, Failure>,
) -> Vec<u8> {
    outcome.unwrap_or_else(|failure| protocol::error_line(&envelope.id, &to_rpc(failure, revision)))
}

fn panic_line(envelope: &Envelope) -> Vec<u8> {
    protocol::error_line(
        &envelope.id,
        &RpcError::internal("internal error while answering this request; it has been logged"),
    )
}

/// Fills a stored prompt and shapes the answer, noting how long the fill took.
fn fill(
    shared: &Shared,
    envelope: &Envelope,
    shaper: &Shaper,
    params: &protocol::GetPromptParams,
    stored: &crate::model::StoredPrompt,
    resolve: handlers::prompts::Resolve,
    position: i64,
) -> Result<Vec<u8>, Failure> {
    let caller = handlers::prompts::Caller {
        can_elicit: envelope.era.can_elicit_forms(),
        now: shaper.now,
    };
    let started = std::time::Instant::now();
    let outcome = handlers::prompts::get(
        &shared.config,
        &shared.secret,
        params,
        stored,
        resolve,
        caller,
    );
    shared
        .cache
        .filled(position, &params.name, started.elapsed());
    Ok(shaper.prompt_outcome(&envelope.id, &outcome?))
}

fn run(shared: &Shared, envelope: &Envelope, shaper: &Shaper) -> Result<Vec<u8>, Failure> {
    // Taken before anything is read: what is read is then at least as new as the position
    // it is kept under.
    let position = shared.position();
    let conn = shared.store.conn().map_err(Failure::from)?;
    let config = &shared.config;
    let id = &envelope.id;
    // A page of a list: kept until the library changes, shaped by `shape` otherwise.
    let list = |kind: ListKind,
                cursor: &Option<String>,
                shape: &dyn Fn(Option<&str>) -> Result<ShapedPage, Failure>|
     -> Result<Vec<u8>, Failure> {
        let cursor = cursor.as_deref();
        let page = shared
            .cache
            .page(position, kind, shaper.revision, cursor, || shape(cursor))?;
        Ok(shaper.page_line(id, page))
    };
    Ok(match &envelope.method {
        Method::Discover => shaper.discover(id, &handlers::discover::discover(&conn)?),
        Method::Initialize { .. } => shaper.initialize(id, &handlers::discover::discover(&conn)?),
        Method::Ping => shaper.empty(id),
        Method::ListPrompts { cursor } => list(ListKind::Prompts, cursor, &|cursor| {
            Ok(shaper.prompts_page(&handlers::prompts::list(&conn, config, cursor)?))
        })?,
        Method::GetPrompt(params) => {
            let Some(stored) = shared.cache.prompt(&conn, position, &params.name)? else {
                return Err(handlers::prompts::unknown(&conn, &params.name));
            };
            let resolve = |uri: &str| shared.cache.resource(&conn, position, uri);
            fill(
                shared, envelope, shaper, params, &stored, &resolve, position,
            )?
        }
        Method::ListResources { cursor } => list(ListKind::Resources, cursor, &|cursor| {
            Ok(shaper.resources_page(&handlers::resources::list(&conn, config, cursor)?))
        })?,
        Method::ListTemplates { cursor } => list(ListKind::Templates, cursor, &|cursor| {
            Ok(shaper.templates_page(&handlers::templates::list(&conn, config, cursor)?))
        })?,
        Method::ReadResource { uri } => {
            let page = shared.cache.read(position, shaper.revision, uri, || {
                Ok(shaper.read_page(&handlers::resources::read(&conn, uri)?))
            })?;
            shaper.page_line(id, page)
        }
        Method::Complete(params) => {
            let prompt = match &params.reference {
                protocol::CompletionRef::Prompt { name } => {
                    shared.cache.prompt(&conn, position, name)?
                }
                protocol::CompletionRef::Resource { .. } => None,
            };
            let completion = handlers::completion::complete(
                &conn,
                &shared.indexes,
                position,
                params,
                prompt.as_deref(),
            )?;
            shaper.completion(id, &completion)
        }
        Method::Subscribe { .. }
        | Method::Unsubscribe { .. }
        | Method::Listen(_)
        | Method::Unknown(_) => {
            return Err(Failure::Internal(
                "method dispatched without a handler".into(),
            ));
        }
    })
}

/// The error code for a failure in the revision in use.
fn to_rpc(failure: Failure, revision: Revision) -> RpcError {
    match failure {
        Failure::InvalidParams(message) => RpcError::invalid_params(message),
        Failure::ResourceNotFound { uri, message } => {
            let code = if revision.is_modern() {
                code::INVALID_PARAMS
            } else {
                code::RESOURCE_NOT_FOUND
            };
            RpcError::new(code, message).with_data(serde_json::json!({ "uri": uri }))
        }
        Failure::Internal(message) => RpcError::internal(message),
    }
}
