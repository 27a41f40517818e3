//! What this process remembers between requests, only what the protocol makes
//! per-process: the revision a legacy client's `initialize` negotiated, the URIs it
//! subscribed to, and the open modern `subscriptions/listen` streams. Subscription changes
//! are answered here, in order, and change notifications are sent from here, under the same
//! lock, so a stream's acknowledgement always precedes its first notification.

use std::collections::BTreeSet;
use std::sync::{Mutex, MutexGuard, PoisonError};

use super::state::Shared;
use super::watch::Changes;
use crate::protocol::{
    Changed, ListenParams, RequestId, Revision, acknowledged, notification, stream_notification,
};

#[derive(Default)]
pub(super) struct Session {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// The revision `initialize` negotiated; None until a legacy client opens.
    legacy: Option<Revision>,
    /// URIs a legacy client named with `resources/subscribe`.
    legacy_uris: BTreeSet<String>,
    /// Open modern `subscriptions/listen` streams.
    listeners: Vec<Listener>,
}

/// One open `subscriptions/listen` stream: what it asked for, under the listen request's id.
struct Listener {
    id: RequestId,
    prompts: bool,
    resources: bool,
    uris: BTreeSet<String>,
}

impl Session {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The revision the legacy client negotiated, if one has opened.
    pub(super) fn legacy(&self) -> Option<Revision> {
        self.lock().legacy
    }

    /// A legacy client opened with `initialize`, negotiating `revision`.
    pub(super) fn opened(&self, revision: Revision) {
        self.lock().legacy = Some(revision);
    }

    /// Opens a stream for the listen request `id`, acknowledged under the lock so that no
    /// notification can slip in before it.
    pub(super) fn listen(&self, shared: &Shared, id: &RequestId, params: &ListenParams) {
        let filter = &params.notifications;
        let listener = Listener {
            id: id.clone(),
            prompts: filter.prompts_list_changed,
            resources: filter.resources_list_changed,
            uris: filter.resource_subscriptions.iter().cloned().collect(),
        };
        let mut state = self.lock();
        shared.output.send(acknowledged(
            &listener.id,
            listener.prompts,
            listener.resources,
            &listener.uris,
        ));
        state.listeners.push(listener);
    }

    /// `resources/subscribe` (true) or `resources/unsubscribe` of a legacy client, answered.
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
            state.legacy_uris.insert(uri.to_string());
        } else {
            state.legacy_uris.remove(uri);
        }
        shared.output.send(shared.shaper(revision).empty(id));
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
            shared.output.send(line);
        }
    }

    /// Tells every subscriber what a batch of commits changed, each only what it asked for.
    pub(super) fn notify(&self, shared: &Shared, changes: &Changes) {
        let send = |line: Vec<u8>| shared.output.send(line);
        let state = self.lock();
        for listener in &state.listeners {
            if listener.prompts && changes.prompts {
                send(stream_notification(Changed::Prompts, &listener.id));
            }
            if listener.resources && changes.resources {
                send(stream_notification(Changed::Resources, &listener.id));
            }
            for uri in changes.uris.intersection(&listener.uris) {
                send(stream_notification(Changed::Resource(uri), &listener.id));
            }
        }
        if state.legacy.is_some() {
            if changes.prompts {
                send(notification(Changed::Prompts));
            }
            if changes.resources {
                send(notification(Changed::Resources));
            }
            for uri in changes.uris.intersection(&state.legacy_uris) {
                send(notification(Changed::Resource(uri)));
            }
        }
    }
}
