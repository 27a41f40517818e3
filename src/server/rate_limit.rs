//! A token bucket: how the server limits `completion/complete` requests per caller (the
//! process on stdio; each token over HTTP), as the MCP specification asks of completion,
//! and over HTTP each caller's requests. A request over the limit is refused at once, never
//! queued, so a flood costs the server one error line per request.

use std::time::{Duration, Instant};

/// `burst` tokens at most, refilled at `per_second`; each request takes one.
#[derive(Debug)]
pub(super) struct TokenBucket {
    per_second: f64,
    burst: f64,
    tokens: f64,
    last: Instant,
}

impl TokenBucket {
    /// A full bucket; None when `per_second` is 0 (no limit).
    pub(super) fn new(per_second: u32, burst: u32, now: Instant) -> Option<TokenBucket> {
        (per_second > 0).then(|| TokenBucket {
            per_second: f64::from(per_second),
            // A burst below one token would refuse everything.
            burst: f64::from(burst.max(1)),
            tokens: f64::from(burst.max(1)),
            last: now,
        })
    }

    /// Whether the bucket has refilled to its burst by `now`: then it is as good as a new
    /// one, and a caller's bucket may be forgotten (`server::http::callers`).
    pub(super) fn is_full(&self, now: Instant) -> bool {
        let elapsed = now.saturating_duration_since(self.last).as_secs_f64();
        self.tokens + elapsed * self.per_second >= self.burst
    }

    /// Takes a token, or says how long until one is available.
    pub(super) fn take(&mut self, now: Instant) -> Result<(), Duration> {
        // `now` before `last` (instants from different threads) counts as no time passed.
        let elapsed = now.saturating_duration_since(self.last).as_secs_f64();
        self.last = self.last.max(now);
        self.tokens = (self.tokens + elapsed * self.per_second).min(self.burst);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64(
                (1.0 - self.tokens) / self.per_second,
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_then_the_rate() {
        let start = Instant::now();
        let mut bucket = TokenBucket::new(10, 3, start).expect("a limit");
        for _ in 0..3 {
            assert_eq!(bucket.take(start), Ok(()));
        }
        let wait = bucket.take(start).expect_err("the burst is spent");
        assert!(wait > Duration::from_millis(99) && wait <= Duration::from_millis(100));
        // A tenth of a second later, one more token.
        let later = start + Duration::from_millis(100);
        assert_eq!(bucket.take(later), Ok(()));
        assert!(bucket.take(later).is_err());
        // Refilling stops at the burst.
        let much_later = later + Duration::from_secs(60);
        for _ in 0..3 {
            assert_eq!(bucket.take(much_later), Ok(()));
        }
        assert!(bucket.take(much_later).is_err());
        assert!(!bucket.is_full(much_later));
        assert!(bucket.is_full(much_later + Duration::from_millis(300)));
    }

    #[test]
    fn zero_means_no_limit() {
        assert!(TokenBucket::new(0, 10, Instant::now()).is_none());
    }
}
