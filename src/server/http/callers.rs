//! Who is asking, and the rate limits each caller has to itself: a bearer token by its name,
//! or under `--auth none` the whole process as one caller. Each caller has a bucket for
//! every request to the endpoint (`--rate-per-token`, `--rate-burst`; off by default) and
//! one for `completion/complete` (`--completion-rate`, `--completion-burst`, as on stdio,
//! where the process is the one caller), so one host's flood is refused while the others
//! are served.
//!
//! Memory stays bounded whatever the number of callers: at most `MAX_CALLERS` are held. A
//! caller whose buckets have filled up again is at rest, and forgetting it changes nothing
//! (it would start again with full buckets); when the table is full those go first, then
//! the one seen longest ago, which merely gets its bursts back early.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::server::rate_limit::TokenBucket;

/// Callers held at once; a token (or an identity another kind of authentication gives)
/// beyond that pushes out the one at rest or seen longest ago.
const MAX_CALLERS: usize = 4_096;

/// Who a request comes from, as far as limits go.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) enum Who {
    /// `--auth none`: everyone who connects, as one caller.
    Process,
    /// A bearer token, by its name (`promptshelf token add NAME`).
    Token(Arc<str>),
    /// An OAuth access token's subject (its `sub` claim; `--auth oauth`).
    Subject(Arc<str>),
}

impl Who {
    /// What a legacy session id is bound to (`session_id`): who opened it, one string
    /// per caller and never two callers' the same.
    pub(super) fn binding(&self) -> String {
        match self {
            Who::Process => "process".to_string(),
            Who::Token(name) => format!("token:{name}"),
            Who::Subject(subject) => format!("subject:{subject}"),
        }
    }
}

impl fmt::Display for Who {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Who::Process => f.write_str("this server's callers (--auth none: one caller)"),
            Who::Token(name) => write!(f, "the token '{name}'"),
            Who::Subject(subject) => write!(f, "the access tokens of '{subject}'"),
        }
    }
}

/// A rate: so many per second, bursts of so many (0 per second: no limit).
#[derive(Debug, Clone, Copy)]
pub(super) struct Rate {
    pub(super) per_second: u32,
    pub(super) burst: u32,
}

pub(super) struct Callers {
    held: Mutex<HashMap<Who, Buckets>>,
    requests: Rate,
    completions: Rate,
}

struct Buckets {
    requests: Option<TokenBucket>,
    completions: Option<TokenBucket>,
    last_seen: Instant,
}

impl Buckets {
    fn at_rest(&self, now: Instant) -> bool {
        [&self.requests, &self.completions]
            .into_iter()
            .flatten()
            .all(|bucket| bucket.is_full(now))
    }
}

impl Callers {
    pub(super) fn new(requests: Rate, completions: Rate) -> Callers {
        Callers {
            held: Mutex::default(),
            requests,
            completions,
        }
    }

    pub(super) fn requests(&self) -> Rate {
        self.requests
    }

    /// Runs `f` with `who`'s buckets (made full the first time), at `now`.
    fn with<R>(&self, who: &Who, now: Instant, f: impl FnOnce(&mut Buckets) -> R) -> R {
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        if !held.contains_key(who) && held.len() >= MAX_CALLERS {
            make_room(&mut held, now);
        }
        let bucket = |rate: Rate| TokenBucket::new(rate.per_second, rate.burst, now);
        let buckets = held.entry(who.clone()).or_insert_with(|| Buckets {
            requests: bucket(self.requests),
            completions: bucket(self.completions),
            last_seen: now,
        });
        buckets.last_seen = now;
        f(buckets)
    }

    /// Takes one of `who`'s requests at `now`, or says how long until one is available.
    pub(super) fn request(&self, who: &Who, now: Instant) -> Result<(), Duration> {
        if self.requests.per_second == 0 {
            return Ok(());
        }
        let taken = self.with(who, now, |buckets| match &mut buckets.requests {
            Some(bucket) => bucket.take(now),
            None => Ok(()),
        });
        if let Err(wait) = taken {
            tracing::debug!("{who} is over its request rate (retry in {wait:?})");
        }
        taken
    }

    /// Runs `f` with `who`'s completion bucket (None: no completion limit).
    pub(super) fn completions<R>(
        &self,
        who: &Who,
        now: Instant,
        f: impl FnOnce(Option<&mut TokenBucket>) -> R,
    ) -> R {
        if self.completions.per_second == 0 {
            return f(None);
        }
        self.with(who, now, |buckets| f(buckets.completions.as_mut()))
    }

    #[cfg(test)]
    fn held(&self) -> usize {
        self.held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

/// Room for one more caller: those at rest go; if none is, the one seen longest ago.
fn make_room(held: &mut HashMap<Who, Buckets>, now: Instant) {
    held.retain(|_, buckets| !buckets.at_rest(now));
    if held.len() < MAX_CALLERS {
        return;
    }
    let oldest = held
        .iter()
        .min_by_key(|(_, buckets)| buckets.last_seen)
        .map(|(who, _)| who.clone());
    if let Some(oldest) = oldest {
        held.remove(&oldest);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(name: &str) -> Who {
        Who::Token(name.into())
    }

    const OFF: Rate = Rate {
        per_second: 0,
        burst: 1,
    };

    #[test]
    fn each_caller_has_its_own_buckets() {
        let callers = Callers::new(
            Rate {
                per_second: 1,
                burst: 2,
            },
            OFF,
        );
        let now = Instant::now();
        for _ in 0..2 {
            assert!(callers.request(&token("a"), now).is_ok());
        }
        let wait = callers
            .request(&token("a"), now)
            .expect_err("a's burst is spent");
        assert!(
            wait > Duration::ZERO && wait <= Duration::from_secs(1),
            "{wait:?}"
        );
        assert!(callers.request(&token("b"), now).is_ok());
        assert!(callers.request(&Who::Process, now).is_ok());
        // No completion limit: nothing held for it, the bucket is None.
        assert!(callers.completions(&token("c"), now, |bucket| bucket.is_none()));
    }

    #[test]
    fn callers_held_stay_bounded() {
        let callers = Callers::new(
            Rate {
                per_second: 1,
                burst: 1,
            },
            OFF,
        );
        let now = Instant::now();
        // Every caller spends its burst, so none is at rest: the oldest ones make room.
        for n in 0..MAX_CALLERS + 10 {
            assert!(callers.request(&token(&n.to_string()), now).is_ok());
        }
        assert_eq!(callers.held(), MAX_CALLERS);
        // Later, all have refilled: at rest, they are dropped to make room.
        let later = now + Duration::from_secs(5);
        assert!(callers.request(&token("new"), later).is_ok());
        assert_eq!(callers.held(), 1);
    }
}
