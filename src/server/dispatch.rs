//! The dispatcher: takes each input line in order on the reader thread, parses it, answers
//! in order what must be (errors, subscription changes, a kept page or resource, which
//! costs less than a hand-off), and hands every other request to the pool.

use std::sync::Arc;

use super::answer::{Answer, Reach, answer};
use super::rate_limit::TokenBucket;
use super::session::Session;
use super::state::Shared;
use super::tasks::Tasks;
use super::transport::Input;
use crate::protocol::{
    Envelope, Incoming, Method, Notification, RequestId, Revision, RpcError, error_line, id_of,
    parse_line, revision_of,
};

pub(super) struct Dispatcher {
    shared: Arc<Shared>,
    session: Arc<Session>,
    tasks: Arc<Tasks>,
    /// Where request tasks run.
    runtime: tokio::runtime::Handle,
    /// The completion rate limit, checked before a task is spawned so a flood is refused at
    /// once; None when there is none.
    completions: Option<TokenBucket>,
}

impl Dispatcher {
    pub(super) fn new(
        shared: Arc<Shared>,
        session: Arc<Session>,
        runtime: tokio::runtime::Handle,
    ) -> Dispatcher {
        let completions = TokenBucket::new(
            shared.config.completion_rate,
            shared.config.completion_burst,
            std::time::Instant::now(),
        );
        Dispatcher {
            shared,
            session,
            tasks: Arc::default(),
            runtime,
            completions,
        }
    }

    fn reject(&self, id: &RequestId, error: &RpcError) {
        self.shared.output.send(error_line(id, error));
    }

    /// Handles one input line. A panic here is answered -32603 like a handler's, so the
    /// client is not left waiting, and the reader goes on with the next line.
    pub(super) fn handle(&mut self, input: Input) {
        let line = match input {
            Input::Line(line) => line,
            Input::TooLong { limit } => {
                return self.reject(&RequestId::null(), &RpcError::too_long(limit));
            }
        };
        if line.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        let handled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.message(parse_line(line));
        }));
        if handled.is_err() {
            self.reject(&id_of(line), &RpcError::panicked());
        }
    }

    fn message(&mut self, incoming: Incoming) {
        match incoming {
            Incoming::Invalid { id, error } => self.reject(&id, &error),
            Incoming::Response | Incoming::Notification(Notification::Other) => {}
            Incoming::Notification(Notification::Cancelled { request_id }) => {
                self.tasks.cancel(&request_id.key());
                self.session.cancel(&request_id);
            }
            Incoming::Request(envelope) => self.request(envelope),
        }
    }

    /// stdin closed: answer what was asked, then close every open stream.
    pub(super) fn finish(&mut self) {
        self.tasks.wait_idle();
        self.session.close_streams(&self.shared);
    }

    fn request(&mut self, envelope: Envelope) {
        let legacy = self.session.legacy();
        let revision = match revision_of(&envelope, legacy, &self.shared.config.mirrors) {
            Ok(revision) => revision,
            Err(error) => return self.reject(&envelope.id, &error),
        };
        match &envelope.method {
            Method::Initialize { .. } => self.session.opened(revision),
            Method::Listen(params) => {
                return self.session.listen(&self.shared, &envelope.id, params);
            }
            Method::Subscribe { uri } | Method::Unsubscribe { uri } => {
                let subscribed = matches!(envelope.method, Method::Subscribe { .. });
                return self.session.subscribe(
                    &self.shared,
                    &envelope.id,
                    revision,
                    uri,
                    subscribed,
                );
            }
            Method::Complete(_) => {
                if let Some(bucket) = &mut self.completions
                    && let Err(wait) = bucket.take(std::time::Instant::now())
                {
                    let config = &self.shared.config;
                    let error = RpcError::rate_limited(
                        config.completion_rate,
                        config.completion_burst,
                        wait,
                    );
                    return self.reject(&envelope.id, &error);
                }
            }
            _ => {}
        }
        self.answer(envelope, revision);
    }

    /// Sends what is kept from here; anything that needs the database goes to a task.
    fn answer(&mut self, envelope: Envelope, revision: Revision) {
        if let Answer::Line(line) = answer(&self.shared, &envelope, revision, Reach::Kept) {
            return self.shared.output.send_from_reader(line);
        }
        let shared = Arc::clone(&self.shared);
        let key = envelope.id.key();
        self.tasks.spawn(&self.runtime, key, move |cancelled| {
            let line = match answer(&shared, &envelope, revision, Reach::Store) {
                Answer::Line(line) => line,
                // The store's reach covers every request; were it not so, the client
                // must still get an answer.
                Answer::NeedsStore => error_line(
                    &envelope.id,
                    &RpcError::internal("no answer could be made for this request"),
                ),
            };
            if !cancelled() {
                shared.output.send(line);
            }
        });
    }
}
