//! The server's own requests to a legacy client: the `elicitation/create` forms that ask
//! for a `prompts/get`'s missing arguments, kept here until the client answers, the request
//! they serve is cancelled, `--elicitation-timeout` passes or input ends. No thread waits
//! for an answer: each waiting form holds the continuation of its `prompts/get` (which
//! keeps the request's place in `server::tasks`), run when its outcome is known. One timer
//! thread, started with the first form, ends the forms whose time is up.
//!
//! Our ids come from `protocol::outbound_id` (prefixed strings, never a client's integer);
//! a response is looked up here only, by our id, and a client's cancellation here only by
//! the id of the client's request a form serves, so the two sides' ids never meet.

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use super::stdio::Output;
use crate::protocol::{Elicited, Reply, RequestId, cancellation, outbound_id};

/// Forms waiting at once; a `prompts/get` beyond that is answered as if the client could
/// not be asked. Each waiting form holds its request's place among those in flight, so
/// without this bound a client that never answers could fill them all, and the reader
/// would wait for room instead of reading the answers.
const MAX_WAITING: usize = 64;

/// What a `prompts/get` does once its form has an outcome: `Some(content)` when the client
/// accepted, None when the form brought nothing (declined, cancelled, an error, no answer).
pub(super) type Resume = Box<dyn FnOnce(Option<Map<String, Value>>) + Send>;

pub(super) struct Outbound {
    output: Arc<Output>,
    timeout: Duration,
    waiting: Mutex<Waiting>,
    /// Wakes the timer: a form was added, or input ended.
    changed: Condvar,
}

#[derive(Default)]
struct Waiting {
    /// By our request id's key.
    forms: HashMap<String, Form>,
    /// The number the next id gets.
    next: u64,
    timer_started: bool,
    /// Input ended: nothing more is asked, and the timer stops.
    closed: bool,
}

struct Form {
    id: RequestId,
    /// The key of the client's request the form serves.
    asked_for: String,
    deadline: Instant,
    resume: Resume,
}

impl Outbound {
    pub(super) fn new(output: Arc<Output>, timeout: Duration) -> Outbound {
        Outbound {
            output,
            timeout,
            waiting: Mutex::default(),
            changed: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Waiting> {
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sends the form `request_line` writes under a new id of ours, for the client's
    /// request `asked_for`, and keeps `resume` until its outcome is known. Resumes at once,
    /// with nothing, when input has ended or `MAX_WAITING` forms are waiting.
    pub(super) fn ask(
        self: &Arc<Self>,
        asked_for: &str,
        request_line: impl FnOnce(&RequestId) -> Vec<u8>,
        resume: Resume,
    ) {
        let mut waiting = self.lock();
        if waiting.closed || waiting.forms.len() >= MAX_WAITING {
            drop(waiting);
            tracing::warn!(
                "prompts/get {asked_for}: not asking for its missing arguments, {MAX_WAITING} forms already wait for the client's answer"
            );
            return resume(None);
        }
        let id = outbound_id(waiting.next);
        waiting.next += 1;
        let line = request_line(&id);
        let form = Form {
            id: id.clone(),
            asked_for: asked_for.to_string(),
            deadline: Instant::now() + self.timeout,
            resume,
        };
        waiting.forms.insert(id.key(), form);
        if !std::mem::replace(&mut waiting.timer_started, true) {
            let outbound = Arc::clone(self);
            let started = std::thread::Builder::new()
                .name("elicitation".into())
                .spawn(move || outbound.keep_time());
            if let Err(err) = started {
                // Forms then wait until they are answered, cancelled or input ends.
                tracing::error!("cannot start the elicitation timer: {err}");
            }
        }
        drop(waiting);
        self.changed.notify_all();
        // Sent once the form is kept, so that its answer always finds it.
        self.output.send(line);
    }

    /// A response from the client: the form it answers resumes its request. A response to
    /// no form of ours (late, or made up) is only logged.
    pub(super) fn answered(&self, reply: Reply) {
        let Some(form) = self.lock().forms.remove(&reply.id.key()) else {
            tracing::debug!(
                "a response with id {} answers no request of ours",
                reply.id.as_str()
            );
            return;
        };
        let content = match reply.elicited {
            Elicited::Accepted(content) => Some(content),
            Elicited::Declined | Elicited::Cancelled => None,
            Elicited::Failed(words) => {
                tracing::warn!("elicitation {}: {words}", form.id.as_str());
                None
            }
        };
        (form.resume)(content);
    }

    /// The client cancelled its request `asked_for`: its forms are withdrawn (the client is
    /// told) and dropped, and the request is answered nothing.
    pub(super) fn withdraw(&self, asked_for: &str) {
        let withdrawn = self.take(|form| form.asked_for == asked_for);
        for form in withdrawn {
            let line = cancellation(&form.id, "the request it asked for was cancelled");
            self.output.send(line);
        }
    }

    /// Input ended: every waiting form is withdrawn and its request answered without it,
    /// and the timer stops.
    pub(super) fn close(&self) {
        let forms = {
            let mut waiting = self.lock();
            waiting.closed = true;
            std::mem::take(&mut waiting.forms)
        };
        self.changed.notify_all();
        self.end(forms.into_values(), "the client's input ended");
    }

    /// Removes the forms `which` picks.
    fn take(&self, which: impl Fn(&Form) -> bool) -> Vec<Form> {
        let mut waiting = self.lock();
        let keys: Vec<String> = waiting
            .forms
            .iter()
            .filter(|(_, form)| which(form))
            .map(|(key, _)| key.clone())
            .collect();
        keys.iter()
            .filter_map(|key| waiting.forms.remove(key))
            .collect()
    }

    /// Withdraws `forms` from the client and resumes their requests without them.
    fn end(&self, forms: impl IntoIterator<Item = Form>, why: &str) {
        for form in forms {
            self.output.send(cancellation(&form.id, why));
            (form.resume)(None);
        }
    }

    /// The timer: ends each form when its deadline passes, until input ends.
    fn keep_time(&self) {
        let mut waiting = self.lock();
        while !waiting.closed {
            let now = Instant::now();
            if waiting.forms.values().any(|form| form.deadline <= now) {
                drop(waiting);
                let expired = self.take(|form| form.deadline <= now);
                self.end(expired, "no answer within serve --elicitation-timeout");
                waiting = self.lock();
                continue;
            }
            let next = waiting.forms.values().map(|form| form.deadline).min();
            waiting = match next {
                Some(deadline) => {
                    self.changed
                        .wait_timeout(waiting, deadline - now)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0
                }
                None => self
                    .changed
                    .wait(waiting)
                    .unwrap_or_else(PoisonError::into_inner),
            };
        }
    }
}
