//! The stdio MCP server. The calling thread reads stdin and dispatches each line in order
//! (`dispatch`); a request is answered through one path (`answer`): on the reader when what
//! it needs is kept and the answer is a lookup, otherwise as its own task on tokio's
//! blocking pool (SQLite work never sits on an async worker, and a slow request never
//! holds up a fast one, `tasks`). One writer thread puts answers on stdout, coalescing
//! writes (`transport`); a watcher thread notices other processes' commits (`watch`) and
//! the `session` tells subscribers.
//!
//! Modules depend on one another in one direction: `transport`, `cache`, `rate_limit`,
//! `watch` and `tasks` stand alone; `state` holds what requests share; `answer` and
//! `session` use it; `dispatch` uses all of them; this file wires them up.

mod answer;
mod cache;
mod dispatch;
mod rate_limit;
mod session;
mod state;
mod tasks;
mod transport;
mod watch;

use std::sync::Arc;

use anyhow::{Context, Result};

use crate::config::ServeConfig;
use crate::store::{self, Store};
use dispatch::Dispatcher;
use session::Session;
use state::Shared;

/// Answers waiting for the writer (or being written), in number and in bytes; a client
/// that stops reading stdout stops us too, with this much memory held at most. The bytes
/// bound is for large resources: 64 answers of 100 KiB would be 6 MiB (measured with
/// `cargo bench --bench large`: 1 MiB keeps a 1 GB library under 25 MB).
const MAX_QUEUED_ANSWERS: usize = 4096;
const MAX_QUEUED_BYTES: usize = 1024 * 1024;
/// Threads tokio may start for request tasks.
const MAX_TASK_THREADS: usize = 4;

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
        transport::stdout_file(),
    ));
    let writer = {
        let output = Arc::clone(&output);
        std::thread::Builder::new()
            .name("stdout".into())
            .spawn(move || transport::write_lines(&output, transport::stdout()))
            .context("cannot start the writer thread")?
    };
    let poll_interval = config.poll_interval;
    let path = store.path().to_path_buf();
    let shared = Arc::new(Shared::new(store, config, secret, output, start));
    let session = Arc::new(Session::default());
    {
        let shared = Arc::clone(&shared);
        let session = Arc::clone(&session);
        watch::spawn(&path, poll_interval, start, move |position, changes| {
            shared.moved_to(position);
            if !changes.is_empty() {
                session.notify(&shared, changes);
            }
        })
        .context("cannot watch the database for changes")?;
    }
    let mut dispatcher = Dispatcher::new(Arc::clone(&shared), session, runtime.handle().clone());
    transport::read_lines(
        std::io::stdin().lock(),
        shared.config.max_line,
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
