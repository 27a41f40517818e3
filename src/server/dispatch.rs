//! The dispatcher: takes each input line in order on the reader thread, answers what must
//! be answered in order (errors, `initialize`, subscription changes) and starts every other
//! request as a task on tokio's blocking pool. The per-process state (the legacy session and
//! the subscriptions) sits in a `Session` it shares with the change watcher.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde_json::{Value, json};

use super::rate_limit::TokenBucket;
use super::transport::Input;
use super::watch::Changes;
use super::{Shared, answer, answer_from_memory, shaper};
use crate::protocol::{
    self, Envelope, Era, Incoming, Method, Revision, RpcError, code, parse_line,
};

/// What this process remembers between requests: only what the protocol makes per-process.
#[derive(Default)]
pub(super) struct Session {
    /// The revision `initialize` negotiated; None until a legacy client opens.
    legacy: Option<Revision>,
    /// URIs a legacy client named with `resources/subscribe`.
    legacy_uris: BTreeSet<String>,
    /// Open modern `subscriptions/listen` streams.
    listeners: Vec<Listener>,
}

/// One open `subscriptions/listen` stream: what it asked for, under the listen request's id.
struct Listener {
    id: Value,
    prompts: bool,
    resources: bool,
    uris: BTreeSet<String>,
}

pub(super) struct Dispatcher {
    shared: Arc<Shared>,
    session: Arc<Mutex<Session>>,
    /// Where request tasks run.
    runtime: tokio::runtime::Handle,
    /// The completion rate limit, checked before a task is spawned so a flood is refused at
    /// once; None when there is none.
    completions: Option<TokenBucket>,
}

fn send(shared: &Shared, bytes: Vec<u8>) {
    shared.output.send(bytes);
}

/// Tells every subscriber what a batch of commits changed, each only what it asked for.
pub(super) fn notify(shared: &Shared, session: &Mutex<Session>, changes: &Changes) {
    const PROMPTS: &str = "notifications/prompts/list_changed";
    const RESOURCES: &str = "notifications/resources/list_changed";
    const UPDATED: &str = "notifications/resources/updated";
    let session = session.lock().unwrap_or_else(PoisonError::into_inner);
    for listener in &session.listeners {
        if listener.prompts && changes.prompts {
            send(
                shared,
                protocol::stream_notification(PROMPTS, &listener.id, None),
            );
        }
        if listener.resources && changes.resources {
            send(
                shared,
                protocol::stream_notification(RESOURCES, &listener.id, None),
            );
        }
        for uri in changes.uris.intersection(&listener.uris) {
            send(
                shared,
                protocol::stream_notification(UPDATED, &listener.id, Some(uri)),
            );
        }
    }
    if session.legacy.is_some() {
        if changes.prompts {
            send(shared, protocol::notification(PROMPTS, None));
        }
        if changes.resources {
            send(shared, protocol::notification(RESOURCES, None));
        }
        for uri in changes.uris.intersection(&session.legacy_uris) {
            send(shared, protocol::notification(UPDATED, Some(uri)));
        }
    }
}

impl Dispatcher {
    pub(super) fn new(
        shared: Arc<Shared>,
        session: Arc<Mutex<Session>>,
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
            runtime,
            completions,
        }
    }

    fn session(&self) -> MutexGuard<'_, Session> {
        self.session.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn reject(&self, id: &Value, error: RpcError) {
        send(&self.shared, protocol::error_line(id, &error));
    }

    pub(super) fn handle(&mut self, input: Input) {
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
        match parse_line(line) {
            Incoming::Invalid { id, error } => self.reject(&id, error),
            Incoming::Response => {}
            Incoming::Notification { method, params } => self.notification(&method, &params),
            Incoming::Request(envelope) => self.request(envelope, line.len()),
        }
    }

    /// stdin closed: answer what was asked, then close every open stream.
    pub(super) fn finish(&mut self) {
        self.shared.in_flight.wait_idle();
        let listeners = std::mem::take(&mut self.session().listeners);
        for listener in listeners {
            send(
                &self.shared,
                shaper(&self.shared, Revision::MODERN).listen_closed(&listener.id),
            );
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
            drop(running);
            // A cancelled stream just stops: nothing more is sent for it.
            self.session()
                .listeners
                .retain(|listener| listener.id != *id);
        }
        // Every other notification (initialized, progress, ...) needs nothing from us.
    }

    fn request(&mut self, envelope: Envelope, line_len: usize) {
        let revision = match (&envelope.era, &envelope.method) {
            (_, Method::Initialize { version }) => {
                let revision = Revision::parse(version)
                    .filter(|revision| !revision.is_modern())
                    .unwrap_or(Revision::LEGACY[0]);
                self.session().legacy = Some(revision);
                revision
            }
            (Era::Modern { .. }, _) => Revision::MODERN,
            // A discovery probe without `_meta` is still answered, in the modern shape.
            (Era::Legacy, Method::Discover) => Revision::MODERN,
            (Era::Legacy, _) => match self.session().legacy {
                Some(revision) => revision,
                None => return self.reject(&envelope.id, no_session()),
            },
        };
        if let Some(error) = not_served(&envelope, revision) {
            return self.reject(&envelope.id, error);
        }
        if self.subscription_request(&envelope, revision) {
            return;
        }
        if let (Method::Complete(_), Some(bucket)) = (&envelope.method, &mut self.completions)
            && let Err(wait) = bucket.take(std::time::Instant::now())
        {
            let config = &self.shared.config;
            let error =
                RpcError::rate_limited(config.completion_rate, config.completion_burst, wait);
            return self.reject(&envelope.id, error);
        }
        if let Some(line) = self.kept_answer(&envelope, revision) {
            return self.shared.output.send_from_reader(line);
        }
        if let Some(line) = answer_from_memory(&self.shared, &envelope, revision, line_len) {
            return self.shared.output.send_from_reader(line);
        }
        let cancelled = Arc::new(AtomicBool::new(false));
        let key = id_key(&envelope.id);
        self.shared
            .running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key.clone(), Arc::clone(&cancelled));
        self.shared.in_flight.begin();
        let shared = Arc::clone(&self.shared);
        self.runtime.spawn_blocking(move || {
            let answer = answer(&shared, &envelope, revision);
            shared
                .running
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(&key);
            if !cancelled.load(Ordering::Relaxed) {
                send(&shared, answer);
            }
            shared.in_flight.end();
        });
    }

    /// A list page or small read already shaped and still current is sent from here: it
    /// costs a lookup and a copy, less than handing it to a task and back. Anything that
    /// needs work goes to a task.
    fn kept_answer(&mut self, envelope: &Envelope, revision: Revision) -> Option<Vec<u8>> {
        let (at, page) = self.shared.cache.kept(revision, &envelope.method)?;
        (at == self.shared.position())
            .then(|| shaper(&self.shared, revision).page_line(&envelope.id, page))
    }

    /// Requests that change this process's subscriptions are answered here, in order, so an
    /// acknowledgement always precedes the first notification of its stream.
    fn subscription_request(&mut self, envelope: &Envelope, revision: Revision) -> bool {
        match &envelope.method {
            Method::Listen(params) => {
                let filter = &params.notifications;
                let listener = Listener {
                    id: envelope.id.clone(),
                    prompts: filter.prompts_list_changed,
                    resources: filter.resources_list_changed,
                    uris: filter.resource_subscriptions.iter().cloned().collect(),
                };
                // Acknowledged under the lock, so no notification can slip in before it.
                let mut session = self.session();
                send(
                    &self.shared,
                    protocol::acknowledged(
                        &listener.id,
                        listener.prompts,
                        listener.resources,
                        &listener.uris,
                    ),
                );
                session.listeners.push(listener);
            }
            Method::Subscribe { uri } => {
                self.session().legacy_uris.insert(uri.clone());
                send(
                    &self.shared,
                    shaper(&self.shared, revision).empty(&envelope.id),
                );
            }
            Method::Unsubscribe { uri } => {
                self.session().legacy_uris.remove(uri);
                send(
                    &self.shared,
                    shaper(&self.shared, revision).empty(&envelope.id),
                );
            }
            _ => return false,
        }
        true
    }
}

/// A cancellation names a request by its id, which may be a number or a string.
fn id_key(id: &Value) -> String {
    id.to_string()
}

fn no_session() -> RpcError {
    let supported: Vec<&str> = std::iter::once(Revision::MODERN)
        .chain(Revision::LEGACY)
        .map(Revision::as_str)
        .collect();
    RpcError::new(
        code::INVALID_REQUEST,
        format!(
            "no session: send initialize first (protocol versions {}), or put protocolVersion {} and clientCapabilities in params._meta",
            protocol::legacy_names(),
            Revision::MODERN.as_str()
        ),
    )
    .with_data(json!({ "supported": supported }))
}

/// Methods that exist but not in this era, and methods that do not exist.
fn not_served(envelope: &Envelope, revision: Revision) -> Option<RpcError> {
    let modern = revision.is_modern();
    let name = match &envelope.method {
        Method::Ping if modern => "ping",
        Method::Subscribe { .. } if modern => "resources/subscribe",
        Method::Unsubscribe { .. } if modern => "resources/unsubscribe",
        Method::Listen(_) if !modern => "subscriptions/listen",
        Method::Unknown(name) => name.as_str(),
        _ => return None,
    };
    let subscribe = if modern {
        "subscriptions/listen"
    } else {
        "resources/subscribe"
    };
    Some(RpcError::new(
        code::METHOD_NOT_FOUND,
        format!(
            "method '{name}' is not served by promptshelf in protocol {}; it serves prompts/list, prompts/get, resources/list, resources/read, resources/templates/list, completion/complete and {subscribe}",
            revision.as_str()
        ),
    ))
}
