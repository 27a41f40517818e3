//! The MCP server, on stdio or over Streamable HTTP (`http`). On stdio, the calling thread
//! reads stdin and dispatches each line in order (`dispatch`); a request is answered
//! through one path (`answer`): on the reader when what it needs is kept and the answer is
//! a lookup (`answer::kept`), otherwise as its own task on tokio's blocking pool
//! (`answer::stored`: SQLite work never sits on an async worker, and a slow request never
//! holds up a fast one, `tasks`). One writer thread puts answers on stdout, coalescing
//! writes (`stdio`); a watcher thread notices other processes' commits (`watch`) and the
//! `session` tells subscribers; `outbound` keeps the forms the server asks a legacy client
//! to fill until their answers come. `serve_lines` runs the same loop over any input and
//! output, without the watcher.
//!
//! Modules depend on one another in one direction: `stdio`, `cache`, `rate_limit`,
//! `watch`, `tasks` and `guard` (the one panic guard) stand alone; `outbound` uses `stdio`;
//! `state` holds what requests share (with `cache` and `watch`); `answer`, `route` and
//! `session` use it; `dispatch` (stdio) uses all of them; `http` uses `answer`, `guard`,
//! `route`, `state`, `rate_limit`, `watch` and, of `session`, only `Interest` and
//! `legacy_lines` (what a subscriber is told); this file wires stdio up. `limited` holds
//! the unit tests of what a caller limited to some collections is answered and told.
//!
//! At start nothing is read wholesale, so a 1 GB library starts as fast as the seed: the
//! connection that checked the schema version reads the start's own state on this thread
//! (`Store::first_read`) and becomes the pool's first (`store::Store`),
//! other connections are opened when a request first needs one, completion indexes when a
//! completion first needs one (`handlers::completion::indexes`), and the watcher opens its
//! own connection after its first interval.

mod answer;
mod cache;
mod dispatch;
mod guard;
mod http;
#[cfg(test)]
mod limited;
mod outbound;
mod rate_limit;
mod route;
mod session;
mod state;
mod stdio;
mod tasks;
mod watch;

use std::io::{BufRead, Write};
use std::sync::Arc;

use anyhow::{Context, Result};

use crate::config::ServeConfig;
use crate::store::Store;
use dispatch::Dispatcher;
pub(crate) use http::host_name_of;
pub(crate) use http::serve as serve_http;
use session::Session;
use state::{Library, Shared};

/// Answers waiting for the writer (or being written), in number and in bytes; a client
/// that stops reading stdout stops us too, with this much memory held at most. The bytes
/// bound is for large resources: 64 answers of 100 KiB would be 6 MiB (measured with
/// `cargo bench --bench large`: 1 MiB keeps a 1 GB library under 25 MB).
const MAX_QUEUED_ANSWERS: usize = 4096;
const MAX_QUEUED_BYTES: usize = 1024 * 1024;
/// Threads tokio may start for request tasks.
const MAX_TASK_THREADS: usize = 4;

/// What the watcher reports to: the shared state (position first, so a host told of a
/// change is never answered from what was kept before it) and the subscribers.
struct Served {
    shared: Arc<Shared>,
    session: Arc<Session>,
    path: std::path::PathBuf,
}

impl watch::Watched for Served {
    fn moved(&self, position: i64, changes: &watch::Changes) {
        self.shared.moved(position, changes);
        if !changes.is_empty() {
            self.session.notify(&self.shared, changes);
        }
    }

    fn replaced(&self) -> std::result::Result<watch::Reopened, String> {
        self.shared.replace(&self.path)
    }
}

/// Malloc arenas the serving process may use at most. glibc gives each thread that
/// allocates an arena of its own, up to eight per core, and an arena keeps what its thread
/// freed for that thread: the request threads, the writer and the watcher each held their
/// own high-water mark. Serving reads spread over a 1 GB library peaked at 26 MB with the
/// default and at 23 MB with two (docs/benchmarks.md, `large`; budget under 25 MB).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MALLOC_ARENAS: libc::c_int = 2;

/// Bounds the process's allocator before any thread starts (see `MALLOC_ARENAS`); for
/// `serve`, on stdio and over HTTP alike.
pub(crate) fn bound_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt with M_ARENA_MAX takes an int and may be called at any time; called
    // before the server starts its threads, so every arena made later obeys it.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, MALLOC_ARENAS);
    }
}

/// Serves MCP on stdin/stdout until stdin closes.
pub(crate) fn serve(store: Store, config: ServeConfig) -> Result<()> {
    let real = RealStdio {
        direct: stdio::stdout_file(),
        watch: true,
    };
    run(
        store,
        config,
        std::io::stdin().lock(),
        stdio::stdout(),
        real,
    )
}

/// Answers every line of `input` into `output` as `serve` answers stdin on stdout, through
/// the same dispatcher, answer path and writer, and returns once `input` has ended and every
/// answer is written. Nothing watches the database meanwhile: what other processes commit
/// is neither notified nor noticed by what is kept. For driving the server in-process,
/// without stdio (the fuzz targets).
pub fn serve_lines(
    store: Store,
    config: ServeConfig,
    input: impl BufRead,
    output: impl Write + Send,
) -> Result<()> {
    let real = RealStdio {
        direct: None,
        watch: false,
    };
    run(store, config, input, output, real)
}

/// What `serve` has that `serve_lines` goes without.
struct RealStdio {
    /// stdout, for the answers the reader writes itself.
    direct: Option<std::fs::File>,
    /// Whether the watcher thread runs.
    watch: bool,
}

fn run(
    store: Store,
    config: ServeConfig,
    input: impl BufRead,
    output: impl Write + Send,
    real: RealStdio,
) -> Result<()> {
    let target = watch::Target::of(&store);
    let path = store.path().to_path_buf();
    let (library, start) = Library::of(store, config.max_index_bytes)?;
    // Only the blocking pool is used: a current-thread runtime starts no async workers.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .max_blocking_threads(MAX_TASK_THREADS)
        .thread_name("request")
        .build()
        .context("cannot start the async runtime")?;
    let output_queue = Arc::new(stdio::Output::new(
        MAX_QUEUED_ANSWERS,
        MAX_QUEUED_BYTES,
        real.direct,
    ));
    let poll_interval = config.poll_interval;
    let shared = Arc::new(Shared::new(library, config, start));
    let session = Arc::new(Session::new(Arc::clone(&output_queue)));
    if real.watch {
        let watched = Served {
            shared: Arc::clone(&shared),
            session: Arc::clone(&session),
            path: path.clone(),
        };
        target
            .watch(poll_interval, start, watched)
            .context("cannot watch the database for changes")?;
    }
    std::thread::scope(|scope| {
        let writer = std::thread::Builder::new()
            .name("stdout".into())
            .spawn_scoped(scope, || stdio::write_lines(&output_queue, output))
            .context("cannot start the writer thread")?;
        // Both of the reader's callbacks use it, one at a time.
        let dispatcher = std::cell::RefCell::new(Dispatcher::new(
            Arc::clone(&shared),
            Arc::clone(&output_queue),
            session,
            runtime.handle().clone(),
        ));
        stdio::read_lines(
            input,
            shared.config.max_line,
            |input, more_buffered| {
                output_queue.note_input(more_buffered);
                dispatcher.borrow_mut().handle(input, more_buffered)
            },
            || {
                // What was read for the pool goes before the reader may wait for input.
                dispatcher.borrow_mut().hand_over();
                output_queue.reader_waits()
            },
        );
        // Input closed: finish what was asked, close the streams, then stop.
        dispatcher.into_inner().finish();
        output_queue.send(stdio::END.to_vec());
        let _ = writer.join();
        Ok::<_, anyhow::Error>(())
    })?;
    // Every task has finished; idle pool threads need not be waited for.
    runtime.shutdown_background();
    Ok(())
}
