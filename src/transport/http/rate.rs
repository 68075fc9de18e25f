//! The per-client rate limit: a token bucket per client address, so one busy or hostile peer
//! gets 429 while the others are served.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::Instant;

/// More clients than this and the full buckets (clients idle long enough to be back at their
/// burst) are forgotten, so the table cannot grow without bound.
const MAX_CLIENTS: usize = 10_000;

/// Token buckets by client address.
pub(crate) struct RateLimit {
    per_second: f64,
    burst: f64,
    buckets: Mutex<HashMap<IpAddr, (f64, Instant)>>,
}

impl RateLimit {
    /// `per_minute` requests a minute on average, `burst` at once; `per_minute` 0 turns the
    /// limit off.
    pub(crate) fn new(per_minute: u32, burst: u32) -> Self {
        RateLimit {
            per_second: f64::from(per_minute) / 60.0,
            burst: f64::from(burst.max(1)),
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Whether a request from `client` at `now` may go ahead (taking a token when it may).
    pub(crate) fn allow(&self, client: IpAddr, now: Instant) -> bool {
        if self.per_second <= 0.0 {
            return true;
        }
        let mut buckets = match self.buckets.lock() {
            Ok(b) => b,
            Err(poisoned) => poisoned.into_inner(),
        };
        if buckets.len() >= MAX_CLIENTS {
            let (rate, burst) = (self.per_second, self.burst);
            buckets.retain(|_, (tokens, at)| {
                *tokens + now.saturating_duration_since(*at).as_secs_f64() * rate < burst
            });
        }
        let (tokens, at) = buckets.entry(client).or_insert((self.burst, now));
        *tokens = (*tokens + now.saturating_duration_since(*at).as_secs_f64() * self.per_second)
            .min(self.burst);
        *at = now;
        if *tokens >= 1.0 {
            *tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn burst_then_refill_per_client() {
        let r = RateLimit::new(60, 3);
        let t = Instant::now();
        let a: IpAddr = "127.0.0.1".parse().unwrap();
        let b: IpAddr = "127.0.0.2".parse().unwrap();
        assert!((0..3).all(|_| r.allow(a, t)));
        assert!(!r.allow(a, t));
        assert!(r.allow(b, t), "another client has its own bucket");
        assert!(!r.allow(a, t + Duration::from_millis(500)));
        assert!(r.allow(a, t + Duration::from_millis(1600)));
    }

    #[test]
    fn zero_is_off() {
        let r = RateLimit::new(0, 0);
        let a: IpAddr = "::1".parse().unwrap();
        assert!((0..10_000).all(|_| r.allow(a, Instant::now())));
    }
}
