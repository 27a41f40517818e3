//! The dispatcher: takes each input line in order on the reader thread, parses it, answers
//! in order what must be (errors, subscription changes, a kept page or resource, which
//! costs less than a hand-off), and hands every other request to the pool. A client's
//! response goes to the form of ours it answers (`outbound`).
//!
//! Dispatching on the thread that read the line, rather than handing every line to an
//! async task first, saves a thread hop per request; answering what is kept here saves two
//! more (to the pool and back), which on a core shared by host and server are context
//! switches the client waits for (docs/benchmarks.md).

use std::sync::Arc;

use super::answer::{self, Reach};
use super::guard::guarded;
use super::outbound::Outbound;
use super::rate_limit::TokenBucket;
use super::route::{Route, route};
use super::session::Session;
use super::state::Shared;
use super::stdio::{Input, Output};
use super::tasks::{Slot, Tasks};
use crate::protocol::{
    Envelope, Incoming, Method, Negotiated, Notification, RequestId, Revision, RpcError,
    elicitation_request, error_line, id_of, parse_line,
};

pub(super) struct Dispatcher {
    shared: Arc<Shared>,
    /// stdout's writer.
    output: Arc<Output>,
    session: Arc<Session>,
    tasks: Arc<Tasks>,
    /// Where request tasks run, and what they need to ask the client for arguments.
    pool: Pool,
    /// The completion rate limit, checked before a task is spawned so a flood is refused at
    /// once; None when there is none.
    completions: Option<TokenBucket>,
    /// How far the line being handled may reach on this thread: a point read while no
    /// other line waits in the input (a host asking one thing at a time is answered
    /// soonest), only what is kept while lines wait (the pool's threads then read them side
    /// by side: docs/benchmarks.md, "A read not kept").
    reach: Reach,
}

impl Dispatcher {
    pub(super) fn new(
        shared: Arc<Shared>,
        output: Arc<Output>,
        session: Arc<Session>,
        runtime: tokio::runtime::Handle,
    ) -> Dispatcher {
        let completions = TokenBucket::new(
            shared.config.completion_rate,
            shared.config.completion_burst,
            std::time::Instant::now(),
        );
        let outbound = Arc::new(Outbound::new(
            Arc::clone(&output),
            shared.config.elicitation_timeout,
        ));
        Dispatcher {
            pool: Pool {
                shared: Arc::clone(&shared),
                output: Arc::clone(&output),
                outbound,
                runtime,
            },
            shared,
            output,
            session,
            tasks: Arc::default(),
            completions,
            reach: Reach::Point,
        }
    }

    fn reject(&self, id: &RequestId, error: &RpcError) {
        self.output.send(error_line(id, error));
    }

    /// Handles one input line, `more_buffered` when more input waits after it. A panic here
    /// is answered -32603 (`guard`), so the client is not left waiting, and the reader goes
    /// on with the next line.
    pub(super) fn handle(&mut self, input: Input, more_buffered: bool) {
        self.reach = if more_buffered {
            Reach::Kept
        } else {
            Reach::Point
        };
        let line = match input {
            Input::Line(line) => line,
            Input::TooLong { limit } => {
                return self.reject(&RequestId::null(), &RpcError::too_long(limit));
            }
        };
        if line.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        if let Err(panicked) = guarded(|| id_of(line), || self.message(parse_line(line))) {
            self.output.send(panicked);
        }
    }

    fn message(&mut self, incoming: Incoming) {
        match incoming {
            Incoming::Invalid { id, error } => self.reject(&id, &error),
            Incoming::Response(reply) => self.pool.outbound.answered(reply),
            Incoming::Notification(Notification::Other) => {}
            Incoming::Notification(Notification::Cancelled { request_id }) => {
                let key = request_id.key();
                self.tasks.cancel(&key);
                self.pool.outbound.withdraw(&key);
                self.session.cancel(&request_id);
            }
            Incoming::Request(envelope) => self.request(envelope),
        }
    }

    /// stdin closed: answer what was asked (without the answers to forms still waiting),
    /// then close every open stream.
    pub(super) fn finish(&mut self) {
        self.pool.outbound.close();
        self.tasks.wait_idle();
        self.session.close_streams(&self.shared);
    }

    fn request(&mut self, envelope: Envelope) {
        let legacy = self.session.legacy();
        let (revision, route) =
            match route(&self.shared, &envelope, legacy, self.completions.as_mut()) {
                Ok(routed) => routed,
                Err(error) => return self.reject(&envelope.id, &error),
            };
        match route {
            Route::Initialize {
                elicits_forms,
                extensions,
            } => {
                let negotiated = Negotiated {
                    revision,
                    extensions,
                };
                self.session
                    .opened(negotiated, elicits_forms, self.shared.whole().clone())
            }
            Route::Listen(params) => {
                return self.session.listen(
                    &self.shared,
                    &envelope.id,
                    params,
                    self.shared.whole().clone(),
                );
            }
            Route::Subscribe { uri, subscribed } => {
                return self.session.subscribe(
                    &self.shared,
                    &envelope.id,
                    revision,
                    uri,
                    subscribed,
                );
            }
            Route::Answer => {}
        }
        self.answer(envelope, revision);
    }

    /// Sends what is kept from here; anything that needs the database (or a form's
    /// answer) goes to a task.
    fn answer(&mut self, envelope: Envelope, revision: Revision) {
        // Only a prompts/get asks for input: other requests do not take the session's lock.
        let forms =
            matches!(envelope.method, Method::GetPrompt(_)) && self.session.takes_forms(revision);
        let seen = self.shared.whole();
        if let Some(line) = answer::kept(&self.shared, seen, &envelope, revision, self.reach, forms)
        {
            return self.output.send_from_reader(line);
        }
        let pool = self.pool.clone();
        let key = envelope.id.key();
        self.tasks.spawn(&self.pool.runtime, key, move |slot| {
            pool.answer(envelope, revision, forms, slot);
        });
    }
}

/// What a request answered on the pool needs.
#[derive(Clone)]
struct Pool {
    shared: Arc<Shared>,
    output: Arc<Output>,
    outbound: Arc<Outbound>,
    runtime: tokio::runtime::Handle,
}

impl Pool {
    /// Answers `envelope` with the store's reach. A form to ask is sent, and this goes on
    /// once it has an outcome: the accepted values as the answers to the form, or nothing,
    /// and no more forms (the handler then says what is missing, as without one).
    fn answer(self, mut envelope: Envelope, revision: Revision, forms: bool, slot: Slot) {
        let seen = self.shared.whole();
        let line = match answer::stored(&self.shared, seen, &envelope, revision, forms) {
            Ok(line) => line,
            Err(request) => {
                let asked_for = slot.key().to_string();
                let outbound = Arc::clone(&self.outbound);
                let form = |id: &RequestId| elicitation_request(id, revision, &request);
                let key = request.key.clone();
                let resume = Box::new(move |accepted| {
                    if let (Some(content), Method::GetPrompt(params)) =
                        (accepted, &mut envelope.method)
                    {
                        params.answer_form(&key, content);
                    }
                    let runtime = self.runtime.clone();
                    runtime.spawn_blocking(move || self.answer(envelope, revision, false, slot));
                });
                return outbound.ask(&asked_for, form, resume);
            }
        };
        if !slot.cancelled() {
            self.output.send_answer(line);
        }
    }
}
