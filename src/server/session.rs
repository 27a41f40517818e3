//! What this process remembers between requests on stdio, only what the protocol makes
//! per-process: the revision a legacy client's `initialize` negotiated (and whether its
//! client takes forms, and the extensions it declared), the URIs it
//! subscribed to, and the open modern `subscriptions/listen` streams. Subscription changes
//! are answered here, in order, and change notifications are sent from here, under the same
//! lock, so a stream's acknowledgement always precedes its first notification.
//!
//! What a subscriber asked for and which notifications a batch of changes gives it
//! (`Interest`, `legacy_lines`) is the same on every transport: HTTP's streams use it too.
//! Each subscriber holds the `Visibility` it was opened with, and is told only of changes to
//! what that shows (`watch::Changes::seen_by`); stdio's see everything.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::state::Shared;
use super::stdio::Output;
use super::watch::Changes;
use crate::config::ServeConfig;
use crate::handlers::search;
use crate::protocol::{
    Changed, Failure, ListenParams, Lists, Negotiated, RequestId, Revision, acknowledged,
    error_line, notification, stream_notification,
};
use crate::visibility::Visibility;

pub(super) struct Session {
    state: Mutex<State>,
    /// Where acknowledgements, answers and notifications go: stdout's writer.
    output: Arc<Output>,
}

#[derive(Default)]
struct State {
    /// What `initialize` negotiated; None until a legacy client opens.
    legacy: Option<Negotiated>,
    /// The legacy client declared form elicitation in its `initialize`.
    legacy_forms: bool,
    /// URIs a legacy client named with `resources/subscribe`.
    legacy_uris: BTreeSet<String>,
    /// What the legacy client sees; set by its `initialize`.
    legacy_seen: Option<Visibility>,
    /// Open modern `subscriptions/listen` streams.
    listeners: Vec<Listener>,
}

/// One open `subscriptions/listen` stream: what it asked for, under the listen request's id.
struct Listener {
    id: RequestId,
    interest: Interest,
}

/// What a `subscriptions/listen` stream asked for and is sent: the lists whose changes it
/// hears of, and the resource URIs whose updates it does.
pub(super) struct Interest {
    lists: Lists,
    uris: BTreeSet<String>,
    /// What the stream's caller sees: it hears only of changes to that.
    seen: Visibility,
}

impl Interest {
    /// What `params` asks for, as far as this server honours it; refused (the sentence
    /// saying why) when it names more URIs than `--max-stream-uris`.
    pub(super) fn of(
        config: &ServeConfig,
        params: &ListenParams,
        seen: Visibility,
    ) -> Result<Interest, String> {
        let filter = &params.notifications;
        let named = &filter.resource_subscriptions;
        // Counted as distinct URIs, looked at only when the list is long.
        if named.len() > config.max_stream_uris {
            let distinct = named
                .iter()
                .map(String::as_str)
                .collect::<BTreeSet<_>>()
                .len();
            if distinct > config.max_stream_uris {
                return Err(format!(
                    "subscriptions/listen names {distinct} resource URIs, over the limit of {} for one stream (serve --max-stream-uris); subscribe to fewer, or split them over several streams",
                    config.max_stream_uris
                ));
            }
        }
        Ok(Interest {
            lists: Lists {
                prompts: filter.prompts_list_changed,
                resources: filter.resources_list_changed,
                tools: filter.tools_list_changed && config.mirrors.follow_prompts(),
            },
            uris: named.iter().cloned().collect(),
            seen,
        })
    }

    /// The stream's first message: what it will be sent.
    pub(super) fn acknowledgement(&self, id: &RequestId) -> Vec<u8> {
        acknowledged(id, self.lists, &self.uris)
    }

    /// The notifications `changes` gives the stream of the listen request `id`, each
    /// tagged with it.
    pub(super) fn lines(
        &self,
        config: &ServeConfig,
        id: &RequestId,
        changes: &Changes,
    ) -> Vec<Vec<u8>> {
        let changes = changes.seen_by(&self.seen);
        let changes = changes.as_ref();
        let mut lines = Vec::new();
        if self.lists.prompts && changes.prompts {
            lines.push(stream_notification(Changed::Prompts, id));
        }
        if self.lists.resources && changes.resources {
            lines.push(stream_notification(Changed::Resources, id));
        }
        if self.lists.tools && tools_changed(config, changes) {
            lines.push(stream_notification(Changed::Tools, id));
        }
        for uri in touched(changes, &self.uris) {
            lines.push(stream_notification(Changed::Resource(uri), id));
        }
        lines
    }
}

/// The legacy notifications `changes` gives a session that sees what `seen` shows,
/// subscribed to `uris`: every list that changed, and the subscribed resources it touched.
pub(super) fn legacy_lines(
    config: &ServeConfig,
    uris: &BTreeSet<String>,
    seen: &Visibility,
    changes: &Changes,
) -> Vec<Vec<u8>> {
    let changes = changes.seen_by(seen);
    let changes = changes.as_ref();
    let mut lines = Vec::new();
    if changes.prompts {
        lines.push(notification(Changed::Prompts));
    }
    if changes.resources {
        lines.push(notification(Changed::Resources));
    }
    if tools_changed(config, changes) {
        lines.push(notification(Changed::Tools));
    }
    for uri in touched(changes, uris) {
        lines.push(notification(Changed::Resource(uri)));
    }
    lines
}

/// The tool list changes with the prompts when `get_prompt` describes them.
fn tools_changed(config: &ServeConfig, changes: &Changes) -> bool {
    changes.prompts && config.mirrors.follow_prompts()
}

impl Session {
    pub(super) fn new(output: Arc<Output>) -> Session {
        Session {
            state: Mutex::default(),
            output,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// What the legacy client negotiated, if one has opened.
    pub(super) fn legacy(&self) -> Option<Negotiated> {
        self.lock().legacy
    }

    /// A legacy client that sees what `seen` shows opened with `initialize`, negotiating
    /// `negotiated`; `elicits_forms`: it declared form elicitation.
    pub(super) fn opened(&self, negotiated: Negotiated, elicits_forms: bool, seen: Visibility) {
        let mut state = self.lock();
        state.legacy = Some(negotiated);
        state.legacy_forms = elicits_forms;
        state.legacy_seen = Some(seen);
    }

    /// Whether a request answered in `revision` may send the legacy client an
    /// `elicitation/create` of ours: it declared forms, and its revision has the request.
    pub(super) fn takes_forms(&self, revision: Revision) -> bool {
        revision.has_elicitation_requests() && self.lock().legacy_forms
    }

    /// Opens a stream for the listen request `id` of a caller that sees what `seen` shows,
    /// acknowledged under the lock so that no notification can slip in before it. A stream
    /// over `--max-streams` or naming more URIs than `--max-stream-uris` is refused, and
    /// nothing is kept for it.
    pub(super) fn listen(
        &self,
        shared: &Shared,
        id: &RequestId,
        params: &ListenParams,
        seen: Visibility,
    ) {
        let config = &shared.config;
        let interest = match Interest::of(config, params, seen) {
            Ok(interest) => interest,
            Err(sentence) => return self.refuse(id, Revision::MODERN, sentence),
        };
        let mut state = self.lock();
        if state.listeners.len() >= config.max_streams {
            drop(state);
            return self.refuse(
                id,
                Revision::MODERN,
                format!(
                    "too many open streams: this server keeps at most {} subscriptions/listen streams open at once (serve --max-streams); close one with notifications/cancelled",
                    config.max_streams
                ),
            );
        }
        self.output.send(interest.acknowledgement(id));
        state.listeners.push(Listener {
            id: id.clone(),
            interest,
        });
    }

    /// `resources/subscribe` (true) or `resources/unsubscribe` of a legacy client, answered.
    /// A new URI beyond `--max-subscriptions` is refused, and not kept.
    pub(super) fn subscribe(
        &self,
        shared: &Shared,
        id: &RequestId,
        revision: Revision,
        uri: &str,
        subscribed: bool,
    ) {
        let mut state = self.lock();
        if subscribed {
            let limit = shared.config.max_subscriptions;
            if !state.legacy_uris.contains(uri) && state.legacy_uris.len() >= limit {
                let held = state.legacy_uris.len();
                drop(state);
                return self.refuse(
                    id,
                    revision,
                    format!(
                        "this session already subscribes to {held} resource URIs, the limit of {limit} (serve --max-subscriptions); unsubscribe from one with resources/unsubscribe first"
                    ),
                );
            }
            state.legacy_uris.insert(uri.to_string());
        } else {
            state.legacy_uris.remove(uri);
        }
        self.output.send(shared.shaper(revision).empty(id));
    }

    /// A cancelled stream just stops: nothing more is sent for it.
    pub(super) fn cancel(&self, id: &RequestId) {
        self.lock().listeners.retain(|listener| listener.id != *id);
    }

    /// stdin closed: every open stream gets its closing answer.
    pub(super) fn close_streams(&self, shared: &Shared) {
        let listeners = std::mem::take(&mut self.lock().listeners);
        for listener in listeners {
            let line = shared.shaper(Revision::MODERN).listen_closed(&listener.id);
            self.output.send(line);
        }
    }

    /// Tells every subscriber what a batch of commits changed, each only what it asked for.
    pub(super) fn notify(&self, shared: &Shared, changes: &Changes) {
        let config = &shared.config;
        let state = self.lock();
        for listener in &state.listeners {
            for line in listener.interest.lines(config, &listener.id, changes) {
                self.output.send(line);
            }
        }
        if let Some(seen) = &state.legacy_seen {
            for line in legacy_lines(config, &state.legacy_uris, seen, changes) {
                self.output.send(line);
            }
        }
    }

    /// Answers a subscription request with an invalid-params error; nothing is kept for it.
    fn refuse(&self, id: &RequestId, revision: Revision, message: String) {
        let error = Failure::InvalidParams(message).into_rpc(revision);
        self.output.send(error_line(id, &error));
    }
}

/// The URIs of `subscribed` that `changes` touched. A search's hits may change with any
/// prompt or resource, so a subscribed `shelf://search/...` URI is touched by every change
/// to either.
fn touched<'a>(
    changes: &'a Changes,
    subscribed: &'a BTreeSet<String>,
) -> Box<dyn Iterator<Item = &'a String> + 'a> {
    if changes.every_uri {
        return Box::new(subscribed.iter());
    }
    let searched = changes.prompts || !changes.uris.is_empty();
    if !searched {
        return Box::new(changes.uris.intersection(subscribed));
    }
    Box::new(
        subscribed
            .iter()
            .filter(|uri| changes.uris.contains(*uri) || search::query_of(uri).is_some()),
    )
}
