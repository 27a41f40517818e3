//! MCP over Streamable HTTP (`serve --http`): one endpoint, `/mcp`, for both eras. A
//! transport like stdio's and nothing more: requests are parsed by `protocol`, routed by
//! `server::route` and answered by `server::answer`, the same handlers, shapes and limits.
//! Modern (2026-07-28) requests are stateless; a legacy session's state travels in its
//! signed id (`session_id`), so any instance on the same database serves any request.
//!
//! - `exchange`: one HTTP request to its response, in the order it is let in, and the
//!   endpoint's GET and DELETE.
//! - `admission`: who may ask: `Host` and `Origin`, then the credential (none, bearer
//!   tokens, OAuth) and what its caller sees.
//! - `message`: the transport's rules for a POSTed message: body, batch, headers, legacy
//!   session, routing and answer.
//! - `responses`: every response's body and headers.
//! - `callers`: who is asking, and each caller's request and completion rates.
//! - `metrics`: `GET /metrics`, what this instance has served, for Prometheus.
//! - `oauth`: `--auth oauth`'s protected resource metadata and challenges.
//! - `host`: which `Host` names are served (DNS rebinding).
//! - `origin`: which `Origin`s are served.
//! - `places`: each caller's share of the requests taken at once.
//! - `session_id`: legacy session ids that carry their own signed state.
//! - `streams`: the open event streams, what each is told, and shutdown's closing results.
//! - `sse`: the event-stream body.
//! - `cancel`: legacy requests in flight, for `notifications/cancelled`.
//! - `tls`: HTTPS (`--tls-cert`, `--tls-key`) with rustls.
//!
//! This file runs it: the runtime, the listener, the watcher, connections and their
//! timeouts, and shutdown on SIGTERM or SIGINT (stop accepting, finish what is in flight,
//! close every stream with its final result, exit 0).
//!
//! hyper (HTTP/1.1, with `hyper-util`'s tokio glue and graceful shutdown) rather than a web
//! framework such as axum: there is one endpoint and three methods, so a router buys
//! nothing, and what happens to a request starts in one function (`exchange::respond`).

mod admission;
mod callers;
mod cancel;
mod exchange;
mod host;
mod message;
mod metrics;
mod oauth;
mod origin;
mod places;
mod responses;
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
use crate::config::{Auth, CacheScope, HttpConfig, ServeConfig};
use crate::oauth::{Verdict, Verifier};
use crate::store::Store;
use crate::store::tokens::{Presented, Table};
use callers::{Callers, Rate};
use cancel::Cancels;
use host::Hosts;
pub(crate) use host::name_of as host_name_of;
use metrics::Metrics;
use origin::Origins;
use places::Places;
use streams::Streams;

/// Requests answered at once; more wait (with their bodies read) for one to end. Each
/// caller also holds at most its share of places from before its body is read (`places`).
const MAX_IN_FLIGHT: usize = 256;
/// Threads for the connections' async work; the database is read on the blocking pool.
const WORKER_THREADS: usize = 2;
/// How often the credentials of open streams are checked again: a removed or expired
/// token's streams end within this, plus the time the check takes.
const CREDENTIAL_CHECK: Duration = Duration::from_secs(5);
/// How long shutdown waits for requests in flight and for clients to read their streams'
/// last events before it gives up on them.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);

/// What every HTTP request shares.
struct Server {
    shared: Arc<Shared>,
    streams: Arc<Streams>,
    cancels: Arc<Cancels>,
    origins: Origins,
    /// The `Host` names served.
    hosts: Hosts,
    /// Each caller's request and completion rates.
    callers: Callers,
    in_flight: tokio::sync::Semaphore,
    /// Each caller's places, from before its body is read until it is answered.
    places: Places,
    /// How long a body has to arrive whole once its headers have.
    body_timeout: Duration,
    /// Shutting down: new requests are refused (503).
    closing: AtomicBool,
    /// How callers are authenticated (`admission::authenticate`).
    auth: Auth,
    /// What `/metrics` tells.
    metrics: Metrics,
    /// With `--auth token`, the library's tokens (empty otherwise).
    tokens: Arc<Tokens>,
    /// With `--auth oauth`, what checks access tokens (its key set read at start).
    oauth: Option<Arc<Verifier>>,
}

impl Server {
    /// Whether a bearer credential still lets its holder in, checked as a request's is:
    /// among the kept tokens, else in the database (a token made since they were read); a
    /// lookup that fails (the database gone for a moment) ends nothing. Blocks: call it off
    /// the async workers.
    fn lets_in(&self, credential: &str) -> bool {
        match &self.oauth {
            Some(verifier) => matches!(verifier.check(credential), Verdict::Granted { .. }),
            None => match self.tokens.find(credential, crate::store::now_ms()) {
                Presented::Valid(_) => true,
                Presented::Expired(_) => false,
                Presented::Unknown => !matches!(
                    self.shared.token(credential),
                    Ok(Presented::Expired(_) | Presented::Unknown)
                ),
            },
        }
    }

    /// The database's secret, which signs session ids; None when the served file was
    /// replaced by one that could not be opened.
    fn secret(&self) -> Option<Vec<u8>> {
        let library = self.shared.library();
        library.as_ref().map(|library| library.secret.clone())
    }
}

/// The library's bearer tokens as this process keeps them (`--auth token`), loaded at
/// start and again whenever another process commits (`Watched::committed`), so a request's
/// token is checked in memory: a removed token is refused once the watcher has seen its
/// removal (within `--poll-ms`), a new one is looked up in the database until then.
#[derive(Default)]
struct Tokens(std::sync::RwLock<Table>);

impl Tokens {
    /// What `token` grants at `now` as last loaded.
    fn find(&self, token: &str, now: i64) -> Presented {
        self.0
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .find(token, now)
    }

    /// Loads the tokens the database at `conn` holds; a failed read keeps those loaded
    /// before (and the database is asked for a token they lack).
    fn load(&self, conn: &rusqlite::Connection) {
        match Table::load(conn) {
            Ok(table) => {
                *self
                    .0
                    .write()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = table
            }
            Err(err) => tracing::warn!("reading the bearer tokens: {err}"),
        }
    }
}

/// What the watcher reports to: the tokens, then the position, then the streams.
struct Watched {
    shared: Arc<Shared>,
    streams: Arc<Streams>,
    /// Loaded again at every commit, with `--auth token`.
    tokens: Option<Arc<Tokens>>,
    path: std::path::PathBuf,
}

impl watch::Watched for Watched {
    fn committed(&self, conn: &rusqlite::Connection) {
        if let Some(tokens) = &self.tokens {
            tokens.load(conn);
        }
    }

    fn moved(&self, position: i64, changes: &watch::Changes) {
        self.shared.moved(position, changes);
        if !changes.is_empty() {
            self.streams.notify(&self.shared.config, changes);
        }
    }

    fn replaced(&self) -> std::result::Result<watch::Reopened, String> {
        self.shared.replace(&self.path)
    }
}

/// Serves MCP over Streamable HTTP at `http.addr` until SIGTERM or SIGINT.
pub(crate) fn serve(store: Store, config: ServeConfig, http: HttpConfig) -> Result<()> {
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
    let tokens = Arc::new(Tokens::default());
    if http.auth == Auth::Token {
        tokens.load(&*library.store.conn()?);
    }
    // With callers told apart by their credentials, what a request is answered depends on
    // who sends it (a token limited to some collections is refused what another reads), so
    // no shared cache may hand one caller's answer to another: every answer is private.
    let config = match http.auth {
        Auth::None => config,
        Auth::Token | Auth::OAuth(_) => ServeConfig {
            cache_scope: CacheScope::Private,
            ..config
        },
    };
    let shared = Arc::new(Shared::new(library, config, start));
    let watched = Watched {
        shared: Arc::clone(&shared),
        streams: Arc::clone(&streams),
        tokens: (http.auth == Auth::Token).then(|| Arc::clone(&tokens)),
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
        hosts: Hosts::new(&http.allow_hosts),
        callers,
        in_flight: tokio::sync::Semaphore::new(MAX_IN_FLIGHT),
        places: Places::new(http.max_in_flight_per_caller, MAX_IN_FLIGHT),
        body_timeout: http.body_timeout,
        closing: AtomicBool::new(false),
        auth: http.auth,
        metrics: Metrics::default(),
        tokens,
        oauth,
    });
    if server.auth != Auth::None {
        tokio::spawn(check_credentials(Arc::clone(&server)));
    }
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

/// Every `CREDENTIAL_CHECK`, checks the credential of every open stream (on the blocking
/// pool: a token is looked up in the database) and ends the streams of each one that no
/// longer lets its holder in, a listen stream with its closing result. A request with such
/// a credential is refused at once; a stream, opened before, would otherwise go on being
/// told of changes.
async fn check_credentials(server: Arc<Server>) {
    let mut ticks = tokio::time::interval(CREDENTIAL_CHECK);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        let credentials = server.streams.credentials();
        if credentials.is_empty() {
            continue;
        }
        let checking = Arc::clone(&server);
        let refused = tokio::task::spawn_blocking(move || {
            credentials
                .into_iter()
                .filter(|credential| !checking.lets_in(credential))
                .collect::<Vec<_>>()
        })
        .await
        .unwrap_or_default();
        for credential in refused {
            let ended = server.streams.revoke(&server.shared, &credential);
            for _ in 0..ended {
                server.metrics.guarded(metrics::Guard::StreamCredential);
            }
            tracing::info!("ended {ended} event stream(s) whose token was removed or has expired");
        }
    }
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
