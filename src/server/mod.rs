//! The stdio MCP server: a reader thread feeds lines to the dispatcher on tokio, each request
//! runs as its own blocking task (SQLite work stays off the async workers, and a slow request
//! never holds up a fast one), and one writer thread puts answers on stdout.
//!
//! The dispatcher owns the only per-process state: the legacy revision `initialize`
//! negotiated, the requests that may still be cancelled, and the completion rate limit
//! (checked here, before a task is spawned, so a flood is refused at once). The completion
//! indexes in `Shared` are a cache of the database, not state.

mod rate_limit;
mod transport;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use anyhow::{Context, Result};
use serde_json::Value;
use tokio::task::JoinSet;

use crate::complete::CompletionIndexes;
use crate::config::ServeConfig;
use crate::handlers::{self, Failure};
use crate::protocol::{
    self, Envelope, Era, Incoming, Method, Revision, RpcError, Shaper, code, parse_line,
};
use crate::store::{self, Store};
use rate_limit::TokenBucket;
use transport::Input;

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
    /// Completion tables' indexes, built on first use (a cache of the store, by version).
    indexes: CompletionIndexes,
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
    let shared = Arc::new(Shared {
        store,
        config,
        secret,
        output,
        running: Mutex::new(HashMap::new()),
        indexes: CompletionIndexes::new(),
    });
    runtime.block_on(async {
        let mut dispatcher = Dispatcher {
            completions: TokenBucket::new(
                shared.config.completion_rate,
                shared.config.completion_burst,
                std::time::Instant::now(),
            ),
            shared: Arc::clone(&shared),
            legacy: None,
            tasks: JoinSet::new(),
        };
        while let Some(input) = incoming.recv().await {
            dispatcher.handle(input);
            while dispatcher.tasks.try_join_next().is_some() {}
        }
        // stdin closed: finish what was asked, then stop.
        while dispatcher.tasks.join_next().await.is_some() {}
    });
    drop(shared);
    runtime.shutdown_background();
    let _ = writer.join();
    Ok(())
}

struct Dispatcher {
    shared: Arc<Shared>,
    /// The revision `initialize` negotiated; None until a legacy client opens.
    legacy: Option<Revision>,
    tasks: JoinSet<()>,
    /// The completion rate limit; None when there is none.
    completions: Option<TokenBucket>,
}

impl Dispatcher {
    fn send(&self, bytes: Vec<u8>) {
        let _ = self.shared.output.send(bytes);
    }

    fn reject(&self, id: &Value, error: RpcError) {
        self.send(protocol::error_line(id, &error));
    }

    fn handle(&mut self, input: Input) {
        let line = match input {
            Input::Line(line) => line,
            Input::TooLong { limit } => {
                return self.reject(
                    &Value::Null,
                    RpcError::new(
                        code::INVALID_REQUEST,
                        format!("the message is longer than {limit} bytes and was skipped; send smaller messages or raise serve --max-line"),
                    ),
                );
            }
        };
        if line.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        match parse_line(&line) {
            Incoming::Invalid { id, error } => self.reject(&id, error),
            Incoming::Response => {}
            Incoming::Notification { method, params } => self.notification(&method, &params),
            Incoming::Request(envelope) => self.request(envelope),
        }
    }

    fn notification(&mut self, method: &str, params: &Value) {
        if method == "notifications/cancelled"
            && let Some(id) = params.get("requestId")
        {
            let running = self
                .shared
                .running
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if let Some(flag) = running.get(&id_key(id)) {
                flag.store(true, Ordering::Relaxed);
            }
        }
        // Every other notification (initialized, progress, ...) needs nothing from us.
    }

    fn request(&mut self, envelope: Envelope) {
        let revision = match (&envelope.era, &envelope.method) {
            (_, Method::Initialize { version }) => {
                let revision = Revision::parse(version)
                    .filter(|revision| !revision.is_modern())
                    .unwrap_or(Revision::LEGACY[0]);
                self.legacy = Some(revision);
                revision
            }
            (Era::Modern { .. }, _) => Revision::MODERN,
            // A discovery probe without `_meta` is still answered, in the modern shape.
            (Era::Legacy, Method::Discover) => Revision::MODERN,
            (Era::Legacy, _) => match self.legacy {
                Some(revision) => revision,
                None => {
                    return self.reject(
                        &envelope.id,
                        RpcError::new(
                            code::INVALID_REQUEST,
                            format!(
                                "no session: send initialize first (protocol versions {}), or put protocolVersion {} and clientCapabilities in params._meta",
                                protocol::legacy_names(),
                                Revision::MODERN.as_str()
                            ),
                        )
                        .with_data(serde_json::json!({
                            "supported": std::iter::once(Revision::MODERN).chain(Revision::LEGACY).map(Revision::as_str).collect::<Vec<_>>()
                        })),
                    );
                }
            },
        };
        if let Some(error) = not_served(&envelope, revision) {
            return self.reject(&envelope.id, error);
        }
        if let (Method::Complete(_), Some(bucket)) = (&envelope.method, &mut self.completions)
            && let Err(wait) = bucket.take(std::time::Instant::now())
        {
            let config = &self.shared.config;
            let error =
                RpcError::rate_limited(config.completion_rate, config.completion_burst, wait);
            return self.reject(&envelope.id, error);
        }
        let cancelled = Arc::new(AtomicBool::new(false));
        let key = id_key(&envelope.id);
        self.shared
            .running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key.clone(), Arc::clone(&cancelled));
        let shared = Arc::clone(&self.shared);
        self.tasks.spawn_blocking(move || {
            let answer = answer(&shared, &envelope, revision);
            shared
                .running
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(&key);
            if !cancelled.load(Ordering::Relaxed) {
                let _ = shared.output.send(answer);
            }
        });
    }
}

/// A cancellation names a request by its id, which may be a number or a string.
fn id_key(id: &Value) -> String {
    id.to_string()
}

/// Methods that exist but not in this era, and methods that do not exist.
fn not_served(envelope: &Envelope, revision: Revision) -> Option<RpcError> {
    let modern = revision.is_modern();
    let name = match &envelope.method {
        Method::Ping if modern => "ping",
        Method::Subscribe { .. } | Method::Unsubscribe { .. } | Method::Listen(_) => {
            "subscriptions"
        }
        Method::Unknown(name) => name.as_str(),
        _ => return None,
    };
    Some(RpcError::new(
        code::METHOD_NOT_FOUND,
        format!(
            "method '{name}' is not served by promptshelf in protocol {}; it serves prompts/list, prompts/get, resources/list, resources/read, resources/templates/list and completion/complete",
            revision.as_str()
        ),
    ))
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
        Method::Complete(params) => shaper.completion(
            id,
            &handlers::completion::complete(&conn, &shared.indexes, params)?,
        ),
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
