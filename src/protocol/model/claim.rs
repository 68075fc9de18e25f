//! The time an envelope claims for itself, beside the time the desk saw it arrive.
//!
//! A model writes an envelope's ids and `session:` itself: it copies the spec's example ids,
//! invents a ULID of last year, or stamps a session with the hour it believes it is. None of
//! that is evidence of when the message was written, so the desk acts only on what it
//! observed (when it stored a received envelope, when it sent one it composed) and shows a
//! claim beside that time only where the two disagree. Pure: the caller says when the
//! envelope arrived and whether its id was written by its sender.

use jiff::{SignedDuration, Timestamp};

/// Where a claimed time is read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClaimSource {
    /// The timestamp of a ULID message id its sender wrote.
    MessageId,
    /// The time at the start of `session:` (`2025-10-09T16Z abc123`): when the sender says
    /// the conversation began.
    Session,
}

/// A time an envelope claims, to the precision it is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Claim {
    /// The earliest instant the claim stands for.
    pub at: Timestamp,
    /// How long after `at` the claim still holds: a session written to the hour claims the
    /// whole hour, a ULID its millisecond.
    pub span: SignedDuration,
    /// Where it was read.
    pub source: ClaimSource,
}

/// How far a claim may be from the time the desk saw before it is worth showing: clocks
/// differ, and a copy takes a while to be carried.
pub(crate) const TOLERANCE: SignedDuration = SignedDuration::from_secs(60);

/// The time at the start of a `session:` value (`2025-10-09T16Z abc123`,
/// `2025-10-08T14:23Z a7f3d1`, or a full RFC 3339 time), with the span its precision covers.
pub(crate) fn session_time(session: &str) -> Option<(Timestamp, SignedDuration)> {
    let first = session.split_whitespace().next()?;
    let at = crate::protocol::validate::parse_time(first)?;
    let body = first.trim_end_matches('Z');
    let time = body.split_once('T').map_or("", |(_, t)| t);
    let span = match time.matches(':').count() {
        _ if time.is_empty() => SignedDuration::from_hours(24),
        0 => SignedDuration::from_hours(1),
        1 => SignedDuration::from_mins(1),
        _ => SignedDuration::from_secs(1),
    };
    Some((at, span))
}

/// What an envelope claims: the time of its message id when its sender wrote one (`id_time`,
/// a plausible ULID's), else the start of its session.
pub fn claim(id_time: Option<Timestamp>, session: Option<&str>) -> Option<Claim> {
    if let Some(at) = id_time {
        return Some(Claim {
            at,
            span: SignedDuration::from_millis(1),
            source: ClaimSource::MessageId,
        });
    }
    let (at, span) = session_time(session?)?;
    Some(Claim {
        at,
        span,
        source: ClaimSource::Session,
    })
}

/// Whether `claim` disagrees with the time the desk saw, `seen`, by more than [`TOLERANCE`]
/// beyond the claim's precision. A session claims when its conversation began, so only a
/// session said to begin after the message arrived disagrees; a message id claims the
/// message's own time, so any distance counts.
pub fn differs(seen: Timestamp, claim: &Claim) -> bool {
    let latest = claim.at.checked_add(claim.span).unwrap_or(claim.at);
    let after = seen.duration_since(latest) > TOLERANCE;
    let before = claim.at.duration_since(seen) > TOLERANCE;
    match claim.source {
        ClaimSource::MessageId => after || before,
        ClaimSource::Session => before,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    #[test]
    fn a_session_claims_its_hour_or_minute() {
        let (at, span) = session_time("2025-10-09T16Z abc123").unwrap();
        assert_eq!(
            (at, span),
            (t("2025-10-09T16:00:00Z"), SignedDuration::from_hours(1))
        );
        let (at, span) = session_time("2025-10-08T14:23Z a7f3d1").unwrap();
        assert_eq!(
            (at, span),
            (t("2025-10-08T14:23:00Z"), SignedDuration::from_mins(1))
        );
        assert_eq!(session_time("abc123"), None);
        assert_eq!(session_time(""), None);
    }

    #[test]
    fn an_id_disagrees_either_way_a_session_only_when_it_begins_later() {
        let seen = t("2026-12-01T21:49:00Z");
        let id = |s: &str| claim(Some(t(s)), None).unwrap();
        assert!(!differs(seen, &id("2026-12-01T21:48:30Z")));
        assert!(differs(seen, &id("2026-12-01T21:40:00Z")));
        assert!(differs(seen, &id("2026-12-01T22:00:00Z")));
        let session = |s: &str| claim(None, Some(s)).unwrap();
        // A session that began earlier says nothing against the message.
        assert!(!differs(seen, &session("2026-12-01T16Z abc")));
        assert!(!differs(seen, &session("2026-12-01T21Z abc")));
        assert!(differs(seen, &session("2026-12-01T23Z abc")));
        assert!(differs(seen, &session("2027-01-01T00:00Z abc")));
        // The id wins over the session.
        let both = claim(Some(t("2026-12-01T21:40:00Z")), Some("2026-12-01T21Z x")).unwrap();
        assert_eq!(both.source, ClaimSource::MessageId);
        assert_eq!(claim(None, Some("no time here")), None);
    }
}
