//! The dispatcher: takes each input line in order on the reader thread, parses it, answers
//! in order what must be (errors, subscription changes, a kept page or resource, which
//! costs less than a hand-off), and hands every other request to the pool. A client's
//! response goes to the form of ours it answers (`outbound`).
//!
//! Dispatching on the thread that read the line, rather than handing every line to an
//! async task first, saves a thread hop per request; answering what is kept here saves two
//! more (to the pool and back), which on a core shared by host and server are context
//! switches the client waits for (docs/benchmarks.md).
//!
//! While lines stream in, the requests for the pool go to it in batches (`hand_over`): a
//! batch's task answers first what a point read can (a resource by its URI), sending those
//! answers together, and gives each request that needs more a task of its own, so a
//! batch costs one wake-up of a pool thread and one of the writer, and a slow request holds
//! up none of the quick ones read with it.

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
    /// Requests read for the pool and not yet handed to it: while lines stream in they go
    /// over `BATCH` to a task, so that a pool thread is woken, and wakes the writer, once
    /// per batch rather than once per request (docs/benchmarks.md, "Reads handed over in
    /// batches"). Handed over before the reader may wait for input (`hand_over`).
    waiting: Vec<Waiting>,
}

/// Requests handed to a pool task at most. Pipelined random reads of the 1 GB library
/// (300,000 from a file, 4 pool threads): 16 took 5.6-6.4 s of CPU, 8 took 6.5-6.8 s and 4
/// took 7.0-7.5 s; 32 was no better in the `large` bench, where a client keeps 64 requests
/// in flight.
const BATCH: usize = 16;

/// A request read for the pool.
struct Waiting {
    envelope: Envelope,
    revision: Revision,
    /// Whether the answer may ask the client for missing arguments with a form.
    forms: bool,
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
            waiting: Vec::new(),
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
            // The pool works on what waits while the reader answers this line.
            self.hand_over();
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
                self.waiting
                    .retain(|waiting| waiting.envelope.id.key() != key);
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
        self.hand_over();
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
        self.waiting.push(Waiting {
            envelope,
            revision,
            forms,
        });
        if self.waiting.len() >= BATCH {
            self.hand_over();
        }
    }

    /// Hands the requests read for the pool to a task. The reader calls this before it may
    /// wait for input, and before it answers a line with none behind it: a request is never
    /// left waiting for one that comes after it.
    pub(super) fn hand_over(&mut self) {
        if self.waiting.is_empty() {
            return;
        }
        let batch = std::mem::take(&mut self.waiting);
        let keys = batch
            .iter()
            .map(|waiting| waiting.envelope.id.key())
            .collect();
        let pool = self.pool.clone();
        self.tasks.spawn(&self.pool.runtime, keys, move |slots| {
            pool.answer_batch(batch, slots)
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
    /// Answers a batch. Each request a point read answers (`Reach::Point`: what is kept, or
    /// one small item read by its key) is answered first, and their lines are sent
    /// together; each of the others is then answered with the store's reach on a task of
    /// its own, the last on this one, so that no request waits for a slow one. A lone
    /// request goes straight to the store's reach.
    fn answer_batch(self, mut batch: Vec<Waiting>, mut slots: Vec<Slot>) {
        if batch.len() == 1
            && let (Some(waiting), Some(slot)) = (batch.pop(), slots.pop())
        {
            return self.answer_from_store(waiting, slot);
        }
        let requests = batch.into_iter().zip(slots);
        let mut lines = Vec::new();
        // Each keeps its place until its answer is queued, so that the end of input,
        // which waits for every place, never closes stdout before it.
        let mut places = Vec::new();
        let mut for_the_store = Vec::new();
        let seen = self.shared.whole();
        for (waiting, slot) in requests {
            let Waiting {
                envelope,
                revision,
                forms,
            } = &waiting;
            match answer::kept(
                &self.shared,
                seen,
                envelope,
                *revision,
                Reach::Point,
                *forms,
            ) {
                Some(line) if !slot.cancelled() => {
                    lines.push(line);
                    places.push(slot);
                }
                Some(_) => {}
                None => for_the_store.push((waiting, slot)),
            }
        }
        self.output.send_answers(lines);
        drop(places);
        let last = for_the_store.pop();
        for (waiting, slot) in for_the_store {
            let pool = self.clone();
            self.runtime
                .spawn_blocking(move || pool.answer_from_store(waiting, slot));
        }
        if let Some((waiting, slot)) = last {
            self.answer_from_store(waiting, slot);
        }
    }

    /// Answers a request with the store's reach and sends its line, unless the client
    /// cancelled it. A form to ask is sent, and the request goes on once it has an
    /// outcome: the accepted values as the answers to the form, or nothing, and no more
    /// forms (the handler then says what is missing, as without one).
    fn answer_from_store(self, waiting: Waiting, slot: Slot) {
        let Waiting {
            mut envelope,
            revision,
            forms,
        } = waiting;
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
                    let waiting = Waiting {
                        envelope,
                        revision,
                        forms: false,
                    };
                    runtime.spawn_blocking(move || self.answer_from_store(waiting, slot));
                });
                return outbound.ask(&asked_for, form, resume);
            }
        };
        if !slot.cancelled() {
            self.output.send_answers(vec![line]);
        }
    }
}
