//! Each caller's share of the requests this instance takes at once. A POST holds one of its
//! caller's places from before its body is read until it is answered, so one caller (a
//! token; an OAuth subject) that opens many requests and sends their bodies slowly, or
//! never, holds at most its share (`--max-in-flight-per-token`, 64 by default) and the
//! other callers' requests go on being read and answered. The places answering at once are
//! bounded for everyone together too (`MAX_IN_FLIGHT`, taken once a body is whole), and a
//! body must arrive within `--body-timeout`, so a place is never held for long by a body.
//!
//! Under `--auth none` every client is one caller, the process, whose share is all of
//! `MAX_IN_FLIGHT`: there is nobody else for it to be fair to.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use super::callers::Who;

/// The places each caller holds now; a caller holding none has no entry, so the map holds
/// at most one entry per request in progress.
pub(super) struct Places {
    held: Mutex<HashMap<Who, usize>>,
    /// A token's or a subject's share.
    share: usize,
    /// The process's share under `--auth none`.
    whole: usize,
}

/// One place, given back when dropped (the request answered, refused or its connection gone).
pub(super) struct Place<'a> {
    places: &'a Places,
    who: Who,
}

impl Places {
    pub(super) fn new(share: usize, whole: usize) -> Places {
        Places {
            held: Mutex::default(),
            share,
            whole,
        }
    }

    /// How many places `who` may hold at once.
    pub(super) fn share_of(&self, who: &Who) -> usize {
        match who {
            Who::Process => self.whole,
            Who::Token(_) | Who::Subject(_) => self.share,
        }
    }

    /// One of `who`'s places, or None when it holds its whole share.
    pub(super) fn take(&self, who: &Who) -> Option<Place<'_>> {
        let share = self.share_of(who);
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        let count = held.entry(who.clone()).or_default();
        if *count >= share {
            return None;
        }
        *count += 1;
        Some(Place {
            places: self,
            who: who.clone(),
        })
    }
}

impl Drop for Place<'_> {
    fn drop(&mut self) {
        let mut held = self
            .places
            .held
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(count) = held.get_mut(&self.who) {
            *count -= 1;
            if *count == 0 {
                held.remove(&self.who);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_caller_holds_at_most_its_share_and_others_are_not_held_up() {
        let places = Places::new(2, 5);
        let a = Who::Token("a".into());
        let first = places.take(&a).expect("a's first place");
        let _second = places.take(&a).expect("a's second place");
        assert!(places.take(&a).is_none(), "a's share is two");
        assert!(places.take(&Who::Token("b".into())).is_some());
        drop(first);
        assert!(
            places.take(&a).is_some(),
            "a place given back is taken again"
        );
        let process: Vec<_> = (0..5).filter_map(|_| places.take(&Who::Process)).collect();
        assert_eq!(process.len(), 5);
        assert!(places.take(&Who::Process).is_none());
        drop(process);
        assert_eq!(
            places.held.lock().unwrap().get(&Who::Process),
            None,
            "a caller holding no place has no entry"
        );
    }
}
