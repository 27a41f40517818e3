//! MCP over Streamable HTTP (`serve --http`): one endpoint, `/mcp`, for both eras. A
//! transport like stdio's and nothing more: requests are parsed by `protocol`, routed by
//! `server::route` and answered by `server::answer`, the same handlers, shapes and limits.
//! Modern (2026-07-28) requests are stateless; a legacy session's state travels in its
//! signed id (`session_id`), so any instance on the same database serves any request.
//!
//! - `callers`: who is asking, and each caller's request and completion rates.
//! - `exchange`: one HTTP request to its response (methods, admission, body, headers,
//!   sessions, routing).
//! - `metrics`: `GET /metrics`, what this instance has served, for Prometheus.
//! - `oauth`: `--auth oauth`'s protected resource metadata and challenges.
//! - `origin`: which `Origin`s are served.
//! - `session_id`: legacy session ids that carry their own signed state.
//! - `streams`: the open event streams, what each is told, and shutdown's closing results.
//! - `sse`: the event-stream body.
//! - `cancel`: legacy requests in flight, for `notifications/cancelled`.
//! - `tls`: HTTPS (`--tls-cert`, `--tls-key`) with rustls.
//!
//! This file runs it: the runtime, the listener, the watcher, connections and their
//! timeouts, and shutdown on SIGTERM or SIGINT (stop accepting, finish what is in flight,
//! close every stream with its final result, exit 0).

mod callers;
mod cancel;
mod exchange;
mod metrics;
mod oauth;
mod origin;
mod session_id;
mod sse;
mod streams;
mod tls;

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context, Result};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;

use super::state::{Library, Shared};
use super::watch;
use crate::config::{Auth, HttpConfig, ServeConfig};
use crate::oauth::Verifier;
use crate::store::Store;
use callers::{Callers, Rate};
use cancel::Cancels;
use metrics::Metrics;
use origin::Origins;
use streams::Streams;

/// Requests answered at once; more wait (before their bodies are read) for one to end.
const MAX_IN_FLIGHT: usize = 256;
/// Threads for the connections' async work; the database is read on the blocking pool.
const WORKER_THREADS: usize = 2;
/// How long shutdown waits for requests in flight and for clients to read their streams'
/// last events before it gives up on them.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);

/// What every HTTP request shares.
struct Server {
    shared: Arc<Shared>,
    streams: Arc<Streams>,
    cancels: Arc<Cancels>,
    origins: Origins,
    /// Each caller's request and completion rates.
    callers: Callers,
    in_flight: tokio::sync::Semaphore,
    /// Shutting down: new requests are refused (503).
    closing: AtomicBool,
    /// How callers are authenticated (`exchange::authenticate`).
    auth: Auth,
    /// What `/metrics` tells.
    metrics: Metrics,
    /// With `--auth oauth`, what checks access tokens (its key set read at start).
    oauth: Option<Arc<Verifier>>,
}

impl Server {
    /// The database's secret, which signs session ids; None when the served file was
    /// replaced by one that could not be opened.
    fn secret(&self) -> Option<Vec<u8>> {
        let library = self.shared.library();
        library.as_ref().map(|library| library.secret.clone())
    }
}

/// What the watcher reports to: the position first, then the streams.
struct Watched {
    shared: Arc<Shared>,
    streams: Arc<Streams>,
    path: std::path::PathBuf,
}

impl watch::Watched for Watched {
    fn moved(&self, position: i64, changes: &watch::Changes) {
        self.shared.moved_to(position);
        if !changes.is_empty() {
            self.streams.notify(&self.shared.config, changes);
        }
    }

    fn replaced(&self) -> std::result::Result<watch::Reopened, String> {
        self.shared.replace(&self.path)
    }
}

/// Serves MCP over Streamable HTTP at `http.addr` until SIGTERM or SIGINT.
pub fn serve(store: Store, config: ServeConfig, http: HttpConfig) -> Result<()> {
    // Before the runtime starts: reading the key set may fetch it over the network.
    let oauth = match &http.auth {
        Auth::OAuth(settings) => Some(Arc::new(Verifier::new(settings)?)),
        Auth::Token | Auth::None => None,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(WORKER_THREADS)
        .max_blocking_threads(super::MAX_TASK_THREADS)
        .thread_name("http")
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let result = runtime.block_on(run(store, config, http, oauth));
    // Every request has been answered or given up on; idle pool threads need not be waited for.
    runtime.shutdown_background();
    result
}

async fn run(
    store: Store,
    config: ServeConfig,
    http: HttpConfig,
    oauth: Option<Arc<Verifier>>,
) -> Result<()> {
    // Bad certificate files are said before anything listens.
    let tls = match &http.tls {
        Some(files) => Some(tls::acceptor(&files.cert, &files.key)?),
        None => None,
    };
    let scheme = if tls.is_some() { "https" } else { "http" };
    let target = watch::Target::of(&store);
    let path = store.path().to_path_buf();
    let listener = TcpListener::bind(http.addr)
        .await
        .with_context(|| format!("cannot listen on {}", http.addr))?;
    let local = listener
        .local_addr()
        .context("cannot tell which address the listener is bound to")?;
    let (library, start) = Library::of(store, config.max_index_bytes)?;
    let callers = Callers::new(
        Rate {
            per_second: http.request_rate,
            burst: http.request_burst,
        },
        Rate {
            per_second: config.completion_rate,
            burst: config.completion_burst,
        },
    );
    let streams = Streams::new(config.max_streams, http.max_streams_per_caller);
    let shared = Arc::new(Shared::new(library, config, start));
    let watched = Watched {
        shared: Arc::clone(&shared),
        streams: Arc::clone(&streams),
        path: path.clone(),
    };
    target
        .watch(shared.config.poll_interval, start, watched)
        .context("cannot watch the database for changes")?;
    let server = Arc::new(Server {
        shared,
        streams,
        cancels: Arc::default(),
        origins: Origins::new(local, scheme, &http.allow_origins),
        callers,
        in_flight: tokio::sync::Semaphore::new(MAX_IN_FLIGHT),
        closing: AtomicBool::new(false),
        auth: http.auth,
        metrics: Metrics::default(),
        oauth,
    });
    let mut connections = http1::Builder::new();
    connections
        .timer(TokioTimer::new())
        .header_read_timeout(http.header_timeout);
    // Said on stderr whatever the log level: with port 0 this is how the port is known.
    eprintln!("promptshelf: listening on {scheme}://{local}/mcp");
    let graceful = GracefulShutdown::new();
    let stop = stopped();
    tokio::pin!(stop);
    loop {
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(err) => {
                    // Out of file descriptors, mostly: wait for some to close.
                    tracing::warn!("accepting a connection failed: {err}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            signal = &mut stop => {
                signal?;
                break;
            }
        };
        let server = Arc::clone(&server);
        let service = service_fn(move |request| {
            let server = Arc::clone(&server);
            async move { Ok::<_, Infallible>(exchange::respond(server, request).await) }
        });
        let Some(acceptor) = &tls else {
            let connection =
                graceful.watch(connections.serve_connection(TokioIo::new(stream), service));
            tokio::spawn(async move {
                if let Err(err) = connection.await {
                    tracing::debug!("connection: {err}");
                }
            });
            continue;
        };
        // The handshake runs in the connection's task, so a slow one holds up no other,
        // within the time a connection has for its headers.
        let handshake = acceptor.accept(stream);
        let watcher = graceful.watcher();
        let connections = connections.clone();
        let limit = http.header_timeout;
        tokio::spawn(async move {
            let stream = match tokio::time::timeout(limit, handshake).await {
                Ok(Ok(stream)) => stream,
                Ok(Err(err)) => {
                    tracing::debug!("TLS handshake: {err}");
                    return;
                }
                Err(_) => {
                    tracing::debug!("TLS handshake not done within {} s", limit.as_secs());
                    return;
                }
            };
            let connection =
                watcher.watch(connections.serve_connection(TokioIo::new(stream), service));
            if let Err(err) = connection.await {
                tracing::debug!("connection: {err}");
            }
        });
    }
    drop(listener);
    server.closing.store(true, Ordering::Release);
    server.streams.close(&server.shared);
    if tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!(
            "connections still open {} s after shutdown began were closed",
            SHUTDOWN_GRACE.as_secs()
        );
    }
    Ok(())
}

/// Resolves on SIGTERM or SIGINT (Ctrl-C).
async fn stopped() -> Result<()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut terminate = signal(SignalKind::terminate()).context("cannot listen for SIGTERM")?;
        tokio::select! {
            _ = terminate.recv() => {}
            interrupted = tokio::signal::ctrl_c() => interrupted.context("cannot listen for SIGINT")?,
        }
    }
    #[cfg(not(unix))]
    tokio::signal::ctrl_c()
        .await
        .context("cannot listen for Ctrl-C")?;
    Ok(())
}
