//! The stdio MCP server: a reader thread feeds lines to the dispatcher on tokio, each request
//! runs as its own blocking task (SQLite work stays off the async workers, and a slow request
//! never holds up a fast one), and one writer thread puts answers on stdout.
//!
//! `dispatch` owns the only per-process state (the legacy session, the subscriptions, the
//! requests that may still be cancelled); `watch` tells it when another process changed the
//! library, so it can notify subscribers.

mod dispatch;
mod transport;
mod watch;

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result};

use crate::config::ServeConfig;
use crate::handlers::{self, Failure};
use crate::protocol::{self, Envelope, Method, Revision, RpcError, Shaper, code};
use crate::store::{self, Store};
use dispatch::Dispatcher;
use transport::Input;
use watch::Changes;

/// Everything a request task needs, shared by all of them.
struct Shared {
    store: Store,
    config: ServeConfig,
    /// The database's secret, for signing `requestState`.
    secret: Vec<u8>,
    /// Where answers go: the writer thread.
    output: std::sync::mpsc::Sender<Vec<u8>>,
    /// Requests still running, by id: set to true when the client cancels one.
    running: Mutex<HashMap<String, Arc<AtomicBool>>>,
}

/// Serves MCP on stdin/stdout until stdin closes.
pub fn serve(store: Store, config: ServeConfig) -> Result<()> {
    let secret = store::read::secret(&*store.conn()?)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(16)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let (output, queue) = std::sync::mpsc::channel::<Vec<u8>>();
    let writer = std::thread::Builder::new()
        .name("stdout".into())
        .spawn(move || transport::write_lines(queue, std::io::stdout().lock()))
        .context("cannot start the writer thread")?;
    let (lines, mut incoming) = tokio::sync::mpsc::channel::<Input>(1024);
    let max_line = config.max_line;
    std::thread::Builder::new()
        .name("stdin".into())
        .spawn(move || transport::read_lines(std::io::stdin().lock(), max_line, lines))
        .context("cannot start the reader thread")?;
    let (changes, mut changed) = tokio::sync::mpsc::channel::<Changes>(16);
    watch::spawn(store.path(), config.poll_interval, changes)
        .context("cannot watch the database for changes")?;
    let shared = Arc::new(Shared {
        store,
        config,
        secret,
        output,
        running: Mutex::new(HashMap::new()),
    });
    runtime.block_on(async {
        let mut dispatcher = Dispatcher::new(Arc::clone(&shared));
        loop {
            tokio::select! {
                input = incoming.recv() => match input {
                    Some(input) => dispatcher.handle(input),
                    None => break,
                },
                Some(batch) = changed.recv() => dispatcher.notify(&batch),
            }
        }
        // stdin closed: finish what was asked, close the streams, then stop.
        dispatcher.finish().await;
    });
    drop(shared);
    runtime.shutdown_background();
    let _ = writer.join();
    Ok(())
}

/// Runs one request to its answer line; never panics the process (a panic in a handler
/// becomes -32603).
fn answer(shared: &Shared, envelope: &Envelope, revision: Revision) -> Vec<u8> {
    let shaper = Shaper {
        revision,
        config: &shared.config,
        now: store::now_ms(),
    };
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        run(shared, envelope, &shaper)
    }));
    match outcome {
        Ok(Ok(line)) => line,
        Ok(Err(failure)) => protocol::error_line(&envelope.id, &to_rpc(failure, revision)),
        Err(_) => protocol::error_line(
            &envelope.id,
            &RpcError::internal("internal error while answering this request; it has been logged"),
        ),
    }
}

fn run(shared: &Shared, envelope: &Envelope, shaper: &Shaper) -> Result<Vec<u8>, Failure> {
    let conn = shared.store.conn().map_err(Failure::from)?;
    let config = &shared.config;
    let id = &envelope.id;
    Ok(match &envelope.method {
        Method::Discover => shaper.discover(id, &handlers::discover::discover(&conn)?),
        Method::Initialize { .. } => shaper.initialize(id, &handlers::discover::discover(&conn)?),
        Method::Ping => shaper.empty(id),
        Method::ListPrompts { cursor } => shaper.prompts(
            id,
            &handlers::prompts::list(&conn, config, cursor.as_deref())?,
        ),
        Method::GetPrompt(params) => {
            let caller = handlers::prompts::Caller {
                can_elicit: envelope.era.can_elicit_forms(),
                now: shaper.now,
            };
            let outcome = handlers::prompts::get(&conn, config, &shared.secret, params, caller)?;
            shaper.prompt_outcome(id, &outcome)
        }
        Method::ListResources { cursor } => shaper.resources(
            id,
            &handlers::resources::list(&conn, config, cursor.as_deref())?,
        ),
        Method::ListTemplates { cursor } => shaper.templates(
            id,
            &handlers::templates::list(&conn, config, cursor.as_deref())?,
        ),
        Method::ReadResource { uri } => shaper.read(id, &handlers::resources::read(&conn, uri)?),
        Method::Complete(params) => {
            shaper.completion(id, &handlers::completion::complete(&conn, params)?)
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
