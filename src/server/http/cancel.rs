//! Legacy requests in flight over HTTP, by session and request id, so that a
//! `notifications/cancelled` (which legacy revisions send instead of closing the
//! connection) stops its request: the POST waiting for it is answered without a message.
//! Modern requests need none of this: closing the connection is their cancellation.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::oneshot;

#[derive(Default)]
pub(super) struct Cancels {
    waiting: Mutex<HashMap<(String, String), oneshot::Sender<()>>>,
}

/// A request's registration, removed when dropped (answered, or cancelled).
pub(super) struct Registered {
    cancels: Arc<Cancels>,
    key: (String, String),
    pub(super) cancelled: oneshot::Receiver<()>,
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.cancels.lock().remove(&self.key);
    }
}

impl Cancels {
    fn lock(&self) -> MutexGuard<'_, HashMap<(String, String), oneshot::Sender<()>>> {
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers the request `request` (its `RequestId::key`) of the session `nonce`. A
    /// second request with the same id in the same session takes the first's place: the
    /// id is the client's to keep unique.
    pub(super) fn register(self: &Arc<Self>, nonce: &str, request: String) -> Registered {
        let (cancel, cancelled) = oneshot::channel();
        let key = (nonce.to_string(), request);
        self.lock().insert(key.clone(), cancel);
        Registered {
            cancels: Arc::clone(self),
            key,
            cancelled,
        }
    }

    /// The session `nonce` cancelled its request `request`, if it is still in flight here.
    pub(super) fn cancel(&self, nonce: &str, request: String) {
        if let Some(cancel) = self.lock().remove(&(nonce.to_string(), request)) {
            let _ = cancel.send(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cancellation_reaches_its_request_only() {
        let cancels = Arc::new(Cancels::default());
        let mut first = cancels.register("session-a", "1".into());
        let mut other_session = cancels.register("session-b", "1".into());
        cancels.cancel("session-a", "1".into());
        assert_eq!(first.cancelled.try_recv(), Ok(()));
        assert!(other_session.cancelled.try_recv().is_err());
        drop(other_session);
        assert!(cancels.lock().is_empty(), "answered requests are forgotten");
        // A cancellation for a request no longer in flight changes nothing.
        cancels.cancel("session-b", "1".into());
    }
}
