//! Waiting out a peer that asks to be sent again later: a 429 (or a 503 that says when) is
//! posted again after the time its `Retry-After` asks (RFC 9110 §10.2.3), within a total wait
//! the operator allows, so that a busy or rate-limiting peer does not make `send` fail.
//!
//! The decision ([`next`]) is pure, over the answer, the tries so far and a clock; the loop
//! around it ([`post`]) sleeps on the thread it is called from: `crosstalk send`'s own, or
//! the app's post thread (the draw loop never waits on it).

use std::time::{Duration, SystemTime};

use super::client::{self, PostError, Response};

/// The least time between two tries: a `Retry-After: 0` (or a date past) is waited out
/// this long, so a peer that keeps asking for no wait is not posted to in a tight loop.
pub(crate) const MIN_WAIT: Duration = Duration::from_secs(1);

/// The first wait after a 429 that does not say when (doubled each time after).
const FIRST_BACKOFF: Duration = Duration::from_secs(1);

/// How long a delivery waits out a peer that asks to be sent again, unless `[send]
/// retry_for` says otherwise.
pub(crate) const DEFAULT_RETRY_FOR: Duration = Duration::from_secs(30);

/// How long `send` may wait in all for a peer that asks it to wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    /// The total of the waits; zero: the first answer stands.
    pub wait_at_most: Duration,
}

impl Policy {
    /// No waiting: the first answer is the answer.
    pub const NONE: Policy = Policy {
        wait_at_most: Duration::ZERO,
    };
}

/// A wait before the next try.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wait {
    /// The status that asked for it (429 or 503).
    pub status: u16,
    /// How long the peer asked for (`None`: it did not say, and this is a backoff).
    pub asked: Option<Duration>,
    /// How long is waited.
    pub wait: Duration,
    /// The try that follows (the second is 2).
    pub next_try: u32,
    /// What is left of the policy's total after this wait.
    pub left: Duration,
}

/// Why the last answer stands although the peer asked to be sent again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GaveUp {
    /// The peer asked for a wait longer than the policy's whole total: given up at once.
    TooLong {
        /// The wait asked for.
        asked: Duration,
        /// When that is: the time to send again (`None` past what a clock holds).
        until: Option<SystemTime>,
    },
    /// The total was waited (all but less than the next wait) and the peer still asks.
    Spent {
        /// The waits' total.
        waited: Duration,
        /// The wait the peer asked for last, when it said.
        asked: Option<Duration>,
        /// When that is.
        until: Option<SystemTime>,
    },
}

/// What to do with an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// It is the answer.
    Done,
    /// Wait, then post again.
    Wait(Wait),
    /// It is the answer, though the peer asked to be sent again.
    GiveUp(GaveUp),
}

/// The last answer, and what it took.
#[derive(Debug, Clone)]
pub struct Retried {
    /// The peer's last answer.
    pub response: Response,
    /// How many times it was posted.
    pub tries: u32,
    /// How long was waited between them.
    pub waited: Duration,
    /// Set when the last answer still asks to be sent again.
    pub gave_up: Option<GaveUp>,
}

/// How long a `Retry-After` value asks to wait, read at `now`: delta-seconds, or an
/// HTTP-date in any of the three forms RFC 9110 §5.6.7 has recipients accept (a date past
/// asks for no wait). `None` for anything else, which is then as good as no header.
pub(crate) fn retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        // Digits past what a u64 holds still ask for a very long wait.
        return Some(Duration::from_secs(value.parse().unwrap_or(u64::MAX)));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// What to do after `response`, the answer to try number `tries`, with `waited` waited
/// so far under `policy`, at `now`.
///
/// Waited out: a 429, and a 503 with a `Retry-After` (a peer that is busy or restarting and
/// says for how long). A wait asked for that is longer than the policy's whole total gives
/// up at once, saying when the peer asked to be sent again; one longer than what is left of
/// it gives up too, the total spent. A 429 that does not say when is tried again after 1 s,
/// then 2 s, 4 s… while the total allows.
pub fn next(
    policy: &Policy,
    response: &Response,
    tries: u32,
    waited: Duration,
    now: SystemTime,
) -> Next {
    let asked = (response.retry_after.as_deref()).and_then(|v| retry_after(v, now));
    match (response.status, asked) {
        (429, _) | (503, Some(_)) => {}
        _ => return Next::Done,
    }
    let left = policy.wait_at_most.saturating_sub(waited);
    let until = asked.and_then(|asked| now.checked_add(asked));
    let wait = match asked {
        Some(asked) if asked > policy.wait_at_most => {
            return Next::GiveUp(GaveUp::TooLong { asked, until });
        }
        Some(asked) => asked.max(MIN_WAIT),
        None => {
            let doubling = FIRST_BACKOFF.saturating_mul(1 << tries.saturating_sub(1).min(16));
            doubling.min(left)
        }
    };
    if wait > left || wait < MIN_WAIT {
        return Next::GiveUp(GaveUp::Spent {
            waited,
            asked,
            until,
        });
    }
    Next::Wait(Wait {
        status: response.status,
        asked,
        wait,
        next_try: tries.saturating_add(1),
        left: left - wait,
    })
}

/// Posts `text` to `url` as [`client::post`] does, and again after each wait [`next`] asks
/// for under `policy`, telling `waiting` before each wait. No answer at any try is the
/// error; the last answer otherwise, with what it took.
pub fn post(
    url: &str,
    text: &str,
    token: Option<&str>,
    timeout: Duration,
    policy: &Policy,
    mut waiting: impl FnMut(&Wait),
) -> Result<Retried, PostError> {
    let mut tries = 0u32;
    let mut waited = Duration::ZERO;
    loop {
        tries += 1;
        let response = client::post(url, text, token, timeout)?;
        let gave_up = match next(policy, &response, tries, waited, SystemTime::now()) {
            Next::Done => None,
            Next::GiveUp(g) => Some(g),
            Next::Wait(w) => {
                waiting(&w);
                std::thread::sleep(w.wait);
                waited += w.wait;
                continue;
            }
        };
        return Ok(Retried {
            response,
            tries,
            waited,
            gave_up,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(status: u16, retry_after: Option<&str>) -> Response {
        Response {
            status,
            body: String::new(),
            retry_after: retry_after.map(str::to_string),
        }
    }

    const S: fn(u64) -> Duration = Duration::from_secs;

    #[test]
    fn retry_after_in_seconds_and_as_a_date() {
        let now = httpdate::parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT").unwrap();
        assert_eq!(retry_after("120", now), Some(S(120)));
        assert_eq!(retry_after(" 0 ", now), Some(S(0)));
        assert_eq!(
            retry_after("99999999999999999999999", now),
            Some(S(u64::MAX))
        );
        // The three date forms, 30 s on.
        for date in [
            "Sun, 06 Nov 1994 08:50:07 GMT",
            "Sunday, 06-Nov-94 08:50:07 GMT",
            "Sun Nov  6 08:50:07 1994",
        ] {
            assert_eq!(retry_after(date, now), Some(S(30)), "{date}");
        }
        assert_eq!(
            retry_after("Sun, 06 Nov 1994 08:00:00 GMT", now),
            Some(S(0))
        );
        for junk in ["", "-1", "1.5", "soon", "120 s"] {
            assert_eq!(retry_after(junk, now), None, "{junk:?}");
        }
    }

    #[test]
    fn a_429_is_waited_out_as_asked_within_the_total() {
        let p = Policy {
            wait_at_most: S(30),
        };
        let now = SystemTime::now();
        assert_eq!(next(&p, &answer(200, None), 1, S(0), now), Next::Done);
        assert_eq!(next(&p, &answer(400, Some("1")), 1, S(0), now), Next::Done);
        // A 503 is waited out only when it says for how long.
        assert_eq!(next(&p, &answer(503, None), 1, S(0), now), Next::Done);
        let Next::Wait(w) = next(&p, &answer(503, Some("2")), 1, S(0), now) else {
            panic!("a 503 with Retry-After is waited out");
        };
        assert_eq!((w.wait, w.next_try, w.left), (S(2), 2, S(28)));
        let Next::Wait(w) = next(&p, &answer(429, Some("5")), 3, S(20), now) else {
            panic!("5 s of 10 left");
        };
        assert_eq!((w.asked, w.wait, w.left), (Some(S(5)), S(5), S(5)));
        // No wait asked for is still a second.
        let Next::Wait(w) = next(&p, &answer(429, Some("0")), 1, S(0), now) else {
            panic!("0 s");
        };
        assert_eq!(w.wait, MIN_WAIT);
    }

    #[test]
    fn a_wait_past_the_total_gives_up_at_once_and_says_when() {
        let p = Policy {
            wait_at_most: S(30),
        };
        let now = SystemTime::now();
        assert_eq!(
            next(&p, &answer(429, Some("31")), 1, S(0), now),
            Next::GiveUp(GaveUp::TooLong {
                asked: S(31),
                until: Some(now + S(31)),
            })
        );
        // Within the total but past what is left of it: spent, and when is said too.
        assert_eq!(
            next(&p, &answer(429, Some("11")), 4, S(20), now),
            Next::GiveUp(GaveUp::Spent {
                waited: S(20),
                asked: Some(S(11)),
                until: Some(now + S(11)),
            })
        );
        // With nothing allowed, the first answer stands.
        assert!(matches!(
            next(&Policy::NONE, &answer(429, Some("1")), 1, S(0), now),
            Next::GiveUp(GaveUp::TooLong { .. })
        ));
        assert!(matches!(
            next(&Policy::NONE, &answer(429, None), 1, S(0), now),
            Next::GiveUp(GaveUp::Spent { asked: None, .. })
        ));
        // Less than a second left: spent.
        assert!(matches!(
            next(
                &p,
                &answer(429, Some("0")),
                9,
                Duration::from_millis(29_500),
                now
            ),
            Next::GiveUp(GaveUp::Spent { .. })
        ));
        // A peer that asks for ever.
        assert!(matches!(
            next(&p, &answer(429, Some("99999999999999999999")), 1, S(0), now),
            Next::GiveUp(GaveUp::TooLong { until: None, .. })
        ));
    }

    #[test]
    fn a_429_that_does_not_say_when_backs_off_doubling() {
        let p = Policy {
            wait_at_most: S(10),
        };
        let now = SystemTime::now();
        let (mut waited, mut waits) = (S(0), Vec::new());
        for tries in 1.. {
            match next(&p, &answer(429, Some("soon")), tries, waited, now) {
                Next::Wait(w) => {
                    waits.push(w.wait.as_secs());
                    waited += w.wait;
                }
                Next::GiveUp(GaveUp::Spent { waited: w, .. }) => {
                    assert_eq!(w, S(10));
                    break;
                }
                other => panic!("{other:?}"),
            }
        }
        // The last wait is what was left.
        assert_eq!(waits, [1, 2, 4, 3]);
    }
}
