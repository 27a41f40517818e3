//! Requests running on tokio's blocking pool, a batch to a task: at most `MAX_IN_FLIGHT`
//! at once and one batch more (the reader waits for room beyond that, which bounds memory
//! whatever the client sends), each findable by its id so that a cancellation can stop
//! its answer from being sent. A request holds its place (`Slot`) until it is answered,
//! also on another task or while it waits for the client to answer a form of ours
//! (`server::outbound`) without a thread.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

/// Requests running at once.
const MAX_IN_FLIGHT: usize = 256;

#[derive(Default)]
pub(super) struct Tasks {
    /// Requests still running, by `protocol::RequestId::key`: set to true when the client
    /// cancels one.
    running: Mutex<HashMap<String, Arc<AtomicBool>, foldhash::fast::RandomState>>,
    count: Mutex<usize>,
    changed: Condvar,
}

impl Tasks {
    fn count(&self) -> MutexGuard<'_, usize> {
        self.count.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn running(
        &self,
    ) -> MutexGuard<'_, HashMap<String, Arc<AtomicBool>, foldhash::fast::RandomState>> {
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `work` on the pool for the requests `keys`, once there is room; `work` gets
    /// each request's place, in order, which says whether the request was cancelled
    /// meanwhile (to know if its answer is still wanted) and frees it when dropped.
    pub(super) fn spawn(
        self: &Arc<Self>,
        runtime: &tokio::runtime::Handle,
        keys: Vec<String>,
        work: impl FnOnce(Vec<Slot>) + Send + 'static,
    ) {
        let mut slots = Vec::with_capacity(keys.len());
        {
            let mut running = self.running();
            for key in keys {
                let cancelled = Arc::new(AtomicBool::new(false));
                running.insert(key.clone(), Arc::clone(&cancelled));
                slots.push(Slot {
                    tasks: Arc::clone(self),
                    key,
                    cancelled,
                });
            }
        }
        {
            let mut count = self.count();
            while *count >= MAX_IN_FLIGHT {
                count = self
                    .changed
                    .wait(count)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            *count += slots.len();
        }
        runtime.spawn_blocking(move || work(slots));
    }

    fn finished(&self) {
        let mut count = self.count();
        let was = *count;
        *count = count.saturating_sub(1);
        // Only two moments can have a waiter: the reader waiting for room, and the end of
        // input waiting for none. Waking on every end would be a system call per request.
        if was == MAX_IN_FLIGHT || *count == 0 {
            self.changed.notify_all();
        }
    }

    /// The client cancelled the request `key`: its answer, if it is still running, is not
    /// sent.
    pub(super) fn cancel(&self, key: &str) {
        if let Some(flag) = self.running().get(key) {
            flag.store(true, Ordering::Relaxed);
        }
    }

    /// Waits until every request has finished (been answered, or dropped cancelled).
    pub(super) fn wait_idle(&self) {
        let mut count = self.count();
        while *count > 0 {
            count = self
                .changed
                .wait(count)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }
}

/// A request's place among those in flight, from its spawn until it is dropped.
pub(super) struct Slot {
    tasks: Arc<Tasks>,
    key: String,
    cancelled: Arc<AtomicBool>,
}

impl Slot {
    /// The request's `protocol::RequestId::key`.
    pub(super) fn key(&self) -> &str {
        &self.key
    }

    /// Whether the client cancelled the request: its answer is no longer wanted.
    pub(super) fn cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Relaxed)
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.tasks.running().remove(&self.key);
        self.tasks.finished();
    }
}
