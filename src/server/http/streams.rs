//! The event streams this instance has open: modern `subscriptions/listen` streams and
//! legacy sessions' GET streams, at most `--max-streams` of them together and
//! `--max-streams-per-token` of one caller's (`callers::Who`), and the URIs
//! legacy sessions subscribed to here. The watcher's changes go to every stream, each only
//! what it asked for (`session::Interest`, `session::legacy_lines`, as on stdio); a stream
//! opens with its acknowledgement queued under the same lock as notifications, so the
//! acknowledgement always comes first. On shutdown every listen stream gets its closing
//! result, then every stream ends; so does every stream whose credential stops letting its
//! holder in (`revoke`, checked every few seconds by `http::mod`).
//!
//! A legacy session's subscriptions cannot live in its id (they change after the id is
//! given), so they are held by the instance that answered `resources/subscribe`, and
//! notified on that session's GET stream if it is open on the same instance.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use hyper::body::Bytes;
use tokio::sync::mpsc;

use super::callers::Who;
use super::session_id::LegacySession;
use super::sse::{self, Events};
use crate::config::ServeConfig;
use crate::protocol::{RequestId, Revision};
use crate::server::session::{Interest, legacy_lines};
use crate::server::state::Shared;
use crate::server::watch::Changes;
use crate::visibility::Visibility;

/// Events one stream may have waiting; a client that reads slower than this loses its
/// stream (it can open another) rather than make the server hold more.
const QUEUED_EVENTS: usize = 256;

/// Legacy sessions ended with DELETE that this instance remembers until their ids expire
/// (each a nonce and an expiry, tens of bytes). Beyond it, an ended session's id is taken
/// again until it expires, as it always is by the other instances.
const MAX_ENDED: usize = 65_536;

pub(super) struct Streams {
    state: Mutex<State>,
    /// `--max-streams`.
    max: usize,
    /// `--max-streams-per-token`.
    max_per_caller: usize,
}

#[derive(Default)]
struct State {
    next: u64,
    open: HashMap<u64, Open>,
    /// Legacy sessions' GET streams, by session nonce.
    legacy_streams: HashMap<String, u64>,
    /// Streams open per caller; a caller with none has no entry, so at most one entry per
    /// open stream.
    per_caller: HashMap<Who, usize>,
    /// What legacy sessions subscribed to here, by session nonce.
    subscriptions: HashMap<String, Subscribed>,
    /// Legacy sessions ended here with DELETE, by nonce, with their ids' expiry (Unix
    /// seconds), so that their ids are answered 404 from then on (`ended`).
    ended: HashMap<String, u64>,
    closing: bool,
}

struct Open {
    kind: Kind,
    queue: mpsc::Sender<Bytes>,
    owner: Who,
    /// The bearer credential the stream was opened with (None under `--auth none`), checked
    /// again every few seconds while the stream is open (`revoke`).
    credential: Option<Arc<str>>,
}

enum Kind {
    Listen {
        id: RequestId,
        interest: Interest,
    },
    /// A legacy session's GET stream, told what its caller (the token that opened it) sees.
    Legacy {
        nonce: String,
        seen: Visibility,
    },
}

struct Subscribed {
    /// The session's expiry (Unix seconds): then its subscriptions are dropped.
    expires: u64,
    uris: BTreeSet<String>,
}

/// Why a stream is not opened.
#[derive(Debug)]
pub(super) enum Refused {
    TooMany,
    /// The caller has `--max-streams-per-token` open already.
    TooManyForCaller(Who),
    /// The session already has its GET stream open here.
    Busy,
    /// The server is shutting down.
    Closing,
}

/// Gives a stream's place back when its body is dropped (ended, or the client left).
pub(super) struct Guard {
    streams: Arc<Streams>,
    key: u64,
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.streams.lock().remove(self.key);
    }
}

pub(super) type Stream = Events<Guard>;

impl State {
    fn remove(&mut self, key: u64) {
        let Some(Open { kind, owner, .. }) = self.open.remove(&key) else {
            return;
        };
        if let Kind::Legacy { nonce, .. } = kind {
            self.legacy_streams.remove(&nonce);
        }
        if let Some(count) = self.per_caller.get_mut(&owner) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                self.per_caller.remove(&owner);
            }
        }
    }
}

impl Streams {
    pub(super) fn new(max: usize, max_per_caller: usize) -> Arc<Streams> {
        Arc::new(Streams {
            state: Mutex::default(),
            max,
            max_per_caller,
        })
    }

    /// `--max-streams-per-token`.
    pub(super) fn max_per_caller(&self) -> usize {
        self.max_per_caller
    }

    /// Streams open now, for `/metrics`.
    pub(super) fn open_count(&self) -> usize {
        self.lock().open.len()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn open(
        self: &Arc<Self>,
        state: &mut State,
        kind: Kind,
        owner: &Who,
        credential: Option<Arc<str>>,
        first: Option<Bytes>,
    ) -> Result<Stream, Refused> {
        if state.closing {
            return Err(Refused::Closing);
        }
        if state.open.len() >= self.max {
            return Err(Refused::TooMany);
        }
        let owned = state.per_caller.get(owner).copied().unwrap_or(0);
        if owned >= self.max_per_caller {
            return Err(Refused::TooManyForCaller(owner.clone()));
        }
        let (queue, events) = mpsc::channel(QUEUED_EVENTS);
        if let Some(first) = first {
            // A new queue has room.
            let _ = queue.try_send(first);
        }
        let key = state.next;
        state.next += 1;
        if let Kind::Legacy { nonce, .. } = &kind {
            state.legacy_streams.insert(nonce.clone(), key);
        }
        *state.per_caller.entry(owner.clone()).or_default() += 1;
        state.open.insert(
            key,
            Open {
                kind,
                queue,
                owner: owner.clone(),
                credential,
            },
        );
        let guard = Guard {
            streams: Arc::clone(self),
            key,
        };
        Ok(Events::new(events, guard))
    }

    /// Opens the stream of the listen request `id` for `owner` (with `credential`), its
    /// acknowledgement first.
    pub(super) fn listen(
        self: &Arc<Self>,
        id: &RequestId,
        interest: Interest,
        owner: &Who,
        credential: Option<Arc<str>>,
    ) -> Result<Stream, Refused> {
        let acknowledgement = sse::event(&interest.acknowledgement(id));
        let kind = Kind::Listen {
            id: id.clone(),
            interest,
        };
        self.open(
            &mut self.lock(),
            kind,
            owner,
            credential,
            Some(acknowledgement),
        )
    }

    /// Opens the GET stream of the legacy session `nonce`, for `owner` (with `credential`),
    /// who sees what `seen` shows: one per session here.
    pub(super) fn legacy(
        self: &Arc<Self>,
        nonce: &str,
        seen: Visibility,
        owner: &Who,
        credential: Option<Arc<str>>,
    ) -> Result<Stream, Refused> {
        let mut state = self.lock();
        if state.legacy_streams.contains_key(nonce) {
            return Err(Refused::Busy);
        }
        let kind = Kind::Legacy {
            nonce: nonce.to_string(),
            seen,
        };
        self.open(&mut state, kind, owner, credential, None)
    }

    /// `resources/subscribe` (true) or `resources/unsubscribe` of `uri` for `session`, at
    /// `now` (Unix seconds); refused (the sentence saying why) beyond the limits.
    pub(super) fn subscribe(
        &self,
        config: &ServeConfig,
        session: &LegacySession,
        uri: &str,
        subscribed: bool,
        now: u64,
    ) -> Result<(), String> {
        let mut state = self.lock();
        if !subscribed {
            if let Some(held) = state.subscriptions.get_mut(&session.nonce) {
                held.uris.remove(uri);
            }
            return Ok(());
        }
        state.subscriptions.retain(|_, held| held.expires > now);
        if !state.subscriptions.contains_key(&session.nonce)
            && state.subscriptions.len() >= self.max
        {
            return Err(format!(
                "this server holds subscriptions for {} sessions, its limit (serve --max-streams); retry later",
                self.max
            ));
        }
        let held = state
            .subscriptions
            .entry(session.nonce.clone())
            .or_insert_with(|| Subscribed {
                expires: session.expires,
                uris: BTreeSet::new(),
            });
        let limit = config.max_subscriptions;
        if !held.uris.contains(uri) && held.uris.len() >= limit {
            return Err(format!(
                "this session already subscribes to {} resource URIs, the limit of {limit} (serve --max-subscriptions); unsubscribe from one with resources/unsubscribe first",
                held.uris.len()
            ));
        }
        held.uris.insert(uri.to_string());
        Ok(())
    }

    /// DELETE of the legacy session `nonce`: what this instance holds for it goes (its
    /// subscriptions; its GET stream ends).
    /// Ends what this instance holds for the legacy session `nonce` (whose id expires at
    /// `expires`, Unix seconds) and remembers that it ended, until then (at most
    /// `MAX_ENDED` sessions, the expired ones dropped first).
    pub(super) fn end_session(&self, nonce: &str, expires: u64, now: u64) {
        let mut state = self.lock();
        if state.ended.len() >= MAX_ENDED {
            state.ended.retain(|_, until| *until > now);
        }
        if state.ended.len() < MAX_ENDED {
            state.ended.insert(nonce.to_string(), expires);
        }
        state.subscriptions.remove(nonce);
        if let Some(key) = state.legacy_streams.get(nonce).copied() {
            state.remove(key);
        }
    }

    /// Whether the legacy session `nonce` was ended here with DELETE.
    pub(super) fn ended(&self, nonce: &str) -> bool {
        self.lock().ended.contains_key(nonce)
    }

    /// Tells every stream what a batch of commits changed, each only what it asked for.
    /// A stream whose client does not keep up is ended.
    pub(super) fn notify(&self, config: &ServeConfig, changes: &Changes) {
        let mut state = self.lock();
        let none = BTreeSet::new();
        let mut behind = Vec::new();
        for (key, open) in &state.open {
            let lines = match &open.kind {
                Kind::Listen { id, interest } => interest.lines(config, id, changes),
                Kind::Legacy { nonce, seen } => {
                    let uris = state
                        .subscriptions
                        .get(nonce)
                        .map_or(&none, |held| &held.uris);
                    legacy_lines(config, uris, seen, changes)
                }
            };
            for line in lines {
                if let Err(mpsc::error::TrySendError::Full(_)) =
                    open.queue.try_send(sse::event(&line))
                {
                    behind.push(*key);
                    break;
                }
            }
        }
        for key in behind {
            tracing::warn!(
                "an event stream's client fell {QUEUED_EVENTS} notifications behind; its stream is ended"
            );
            state.remove(key);
        }
    }

    /// The credentials open streams were opened with, each once.
    pub(super) fn credentials(&self) -> Vec<Arc<str>> {
        let state = self.lock();
        let held: BTreeSet<&Arc<str>> = state
            .open
            .values()
            .filter_map(|open| open.credential.as_ref())
            .collect();
        held.into_iter().cloned().collect()
    }

    /// Ends every stream opened with `credential`, which no longer lets its holder in (the
    /// token was removed or expired): a listen stream gets its closing result first, as at
    /// shutdown. Returns how many were ended.
    pub(super) fn revoke(&self, shared: &Shared, credential: &str) -> usize {
        let mut state = self.lock();
        let revoked: Vec<u64> = state
            .open
            .iter()
            .filter(|(_, open)| open.credential.as_deref() == Some(credential))
            .map(|(key, _)| *key)
            .collect();
        for key in &revoked {
            if let Some(Open {
                kind: Kind::Listen { id, .. },
                queue,
                ..
            }) = state.open.get(key)
            {
                let closed = shared.shaper(Revision::MODERN).listen_closed(id);
                let _ = queue.try_send(sse::event(&closed));
            }
            state.remove(*key);
        }
        revoked.len()
    }

    /// Shutdown: no stream opens any more; every listen stream gets its closing result,
    /// then every stream ends once its client has read what was queued.
    pub(super) fn close(&self, shared: &Shared) {
        let mut state = self.lock();
        state.closing = true;
        for open in state.open.values() {
            if let Kind::Listen { id, .. } = &open.kind {
                let closed = shared.shaper(Revision::MODERN).listen_closed(id);
                let _ = open.queue.try_send(sse::event(&closed));
            }
        }
        state.open.clear();
        state.legacy_streams.clear();
        state.per_caller.clear();
    }
}
