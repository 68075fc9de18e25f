//! Properties of the consent ledger over generated statements: an unverified REVOKE never
//! changes a record, a verified one only ever withdraws and is never dropped without a word,
//! the order statements arrive in does not matter, only a value that reads as a grant grants,
//! the latest statement wins whatever it says, and hostile META never panics.

use crosstalk::protocol::consent::{Record, State, Statement, ledger};
use crosstalk::protocol::{Intent, MetaBlock};
use jiff::Timestamp;
use proptest::prelude::*;

#[derive(Debug, Clone)]
struct Gen {
    thread: usize,
    minute: i64,
    /// Minutes between its id's time and when it was stored.
    delay: i64,
    revoke: bool,
    verified: bool,
    entries: Vec<(String, String)>,
}

fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("explicit_yes".to_string()),
        Just("explicit_no".to_string()),
        Just("explicit_no (refused)".to_string()),
        Just("Explicit-No 2025-10-09t03:00z".to_string()),
        Just("implicit".to_string()),
        Just("opt-in_2025-10-09T02:00Z".to_string()),
        Just("transferred_with_approval".to_string()),
        Just("no".to_string()),
        Just("denied".to_string()),
        Just("explicit_yes (verbal)".to_string()),
        Just("immediate".to_string()),
        Just("IMMEDIATE".to_string()),
        (0i64..600).prop_map(|m| format!("explicit_yes_2025-10-09T{:02}:{:02}Z", m / 60, m % 60)),
        (0i64..600).prop_map(|m| format!("2025-10-09T{:02}:{:02}Z", m / 60, m % 60)),
        Just("c-1".to_string()),
        Just("c-2".to_string()),
        Just("consent".to_string()),
        ".{0,12}",
    ]
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("Consent".to_string()),
        Just("Consent-ID".to_string()),
        Just("Original-Consent-ID".to_string()),
        Just("Expires".to_string()),
        Just("Effective".to_string()),
        Just("Type".to_string()),
        "[A-Za-z-]{0,8}",
    ]
}

fn statement() -> impl Strategy<Value = Gen> {
    (
        0usize..3,
        0i64..600,
        0i64..300,
        any::<bool>(),
        any::<bool>(),
        prop::collection::vec((key(), value()), 0..5),
    )
        .prop_map(|(thread, minute, delay, revoke, verified, entries)| Gen {
            thread,
            minute,
            delay,
            revoke,
            verified,
            entries,
        })
}

const THREADS: [&str; 3] = ["T0", "T1", "T2"];

fn metas(g: &[Gen]) -> Vec<Vec<MetaBlock>> {
    g.iter()
        .map(|s| {
            vec![MetaBlock {
                namespace: if s.revoke { "revocation" } else { "privacy" }.into(),
                entries: s.entries.clone(),
            }]
        })
        .collect()
}

fn statements<'a>(
    g: &'a [Gen],
    metas: &'a [Vec<MetaBlock>],
    ids: &'a [String],
    revoke: &'a Intent,
    keep: impl Fn(&Gen) -> bool,
) -> Vec<Statement<'a>> {
    let base: Timestamp = "2025-10-09T00:00Z".parse().unwrap();
    g.iter()
        .enumerate()
        .filter(|(_, s)| keep(s))
        .map(|(i, s)| Statement {
            thread: THREADS[s.thread],
            message: &ids[i],
            time: base + jiff::SignedDuration::from_mins(s.minute),
            received: base + jiff::SignedDuration::from_mins(s.minute + s.delay),
            intent: s.revoke.then_some(revoke),
            meta: &metas[i],
            verified: s.verified,
        })
        .collect()
}

proptest! {
    #[test]
    fn unverified_revokes_change_nothing_and_verified_ones_only_withdraw(
        g in prop::collection::vec(statement(), 0..12),
        now_minute in 0i64..900,
    ) {
        let now: Timestamp = "2025-10-09T00:00Z".parse::<Timestamp>().unwrap()
            + jiff::SignedDuration::from_mins(now_minute);
        let metas = metas(&g);
        let ids: Vec<String> = (0..g.len()).map(|i| format!("M{i}")).collect();
        let revoke = Intent::Revoke;
        let all = ledger(statements(&g, &metas, &ids, &revoke, |_| true), now);
        let no_unverified = ledger(
            statements(&g, &metas, &ids, &revoke, |s| !s.revoke || s.verified),
            now,
        );
        prop_assert_eq!(&all.records, &no_unverified.records);
        prop_assert_eq!(&all.untaken, &no_unverified.untaken);
        let no_revokes = ledger(statements(&g, &metas, &ids, &revoke, |s| !s.revoke), now);
        prop_assert_eq!(all.records.len(), no_revokes.records.len());
        for (with, without) in all.records.iter().zip(&no_revokes.records) {
            if with.state != without.state {
                prop_assert_eq!(with.state, State::Revoked);
            }
        }
        // The order statements arrive in does not matter.
        let mut reversed = statements(&g, &metas, &ids, &revoke, |_| true);
        reversed.reverse();
        let reversed = ledger(reversed, now);
        let mut a = all.records.clone();
        let mut b = reversed.records.clone();
        a.sort_by(|x, y| (&x.consent_id, &x.threads).cmp(&(&y.consent_id, &y.threads)));
        b.sort_by(|x, y| (&x.consent_id, &x.threads).cmp(&(&y.consent_id, &y.threads)));
        prop_assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(&b) {
            prop_assert_eq!(x.state, y.state);
            prop_assert_eq!(x.since, y.since);
        }
        // Personal data is allowed only under an explicit grant in force.
        for r in &all.records {
            prop_assert_eq!(r.allows_pii(), r.state == State::Granted && r.explicit);
            if r.kind == "implicit" {
                prop_assert!(!r.allows_pii());
            }
        }
    }

    /// A verified REVOKE is never dropped without a word: with the grants alone it withdraws
    /// a consent or is listed as not taken, and it is listed among all the statements exactly
    /// when it is listed alone (whether it takes depends on the grants and itself only).
    #[test]
    fn a_verified_revoke_withdraws_or_says_why_not(
        g in prop::collection::vec(statement(), 0..12),
        now_minute in 0i64..900,
    ) {
        let now: Timestamp = "2025-10-09T00:00Z".parse::<Timestamp>().unwrap()
            + jiff::SignedDuration::from_mins(now_minute);
        let metas = metas(&g);
        let ids: Vec<String> = (0..g.len()).map(|i| format!("M{i}")).collect();
        let revoke = Intent::Revoke;
        let all = ledger(statements(&g, &metas, &ids, &revoke, |_| true), now);
        for (i, r) in g.iter().enumerate() {
            if !(r.revoke && r.verified) {
                continue;
            }
            let alone = ledger(
                statements(&g, &metas, &ids, &revoke, |s| !s.revoke || std::ptr::eq(s, r)),
                now,
            );
            let listed = |l: &[crosstalk::protocol::consent::Untaken]| {
                l.iter().any(|u| u.message == ids[i])
            };
            prop_assert_eq!(listed(&all.untaken), listed(&alone.untaken));
            let took = alone
                .records
                .iter()
                .any(|c| c.revoked.as_ref().is_some_and(|(_, by)| *by == ids[i]));
            prop_assert!(!(took && listed(&alone.untaken)));
            if withdraws_consent(&r.entries) {
                prop_assert!(took || listed(&alone.untaken), "{:?}", alone);
            } else {
                prop_assert!(!took && !listed(&alone.untaken));
            }
        }
    }

    /// Only a value that reads as a grant grants: a grant kind in some spelling, then nothing
    /// or a time. Checked against a reading of the value written here, apart from the one in
    /// the protocol module.
    #[test]
    fn only_a_grant_grants(v in consent_value()) {
        let r = alone(&v);
        if r.state == State::Granted {
            prop_assert!(reads_as_grant(&v), "{v:?} granted");
        }
        if reads_as_grant(&v) {
            prop_assert_eq!(r.state, State::Granted, "{:?}", v);
        }
        if refuses(&v) {
            prop_assert_eq!(r.state, State::Denied, "{:?}", v);
        }
        if r.state == State::NotUnderstood {
            prop_assert!(!reads_as_grant(&v) && !refuses(&v));
            prop_assert_eq!(r.kind.as_str(), v.trim());
        }
    }

    /// The latest statement about a consent wins, whatever either says.
    #[test]
    fn the_latest_statement_wins(a in consent_value(), b in consent_value(), gap in -90i64..90) {
        let now: Timestamp = "2026-01-01T00:00Z".parse().unwrap();
        let base: Timestamp = "2025-10-09T12:00Z".parse().unwrap();
        let metas = [privacy(&a), privacy(&b)];
        let at = |i: usize, minutes: i64| Statement {
            thread: "T",
            message: ["M1", "M2"][i],
            time: base + jiff::SignedDuration::from_mins(minutes),
            received: base,
            intent: None,
            meta: &metas[i],
            verified: false,
        };
        let both = ledger([at(0, 0), at(1, gap)], now);
        let first = ledger([at(0, 0)], now);
        let second = ledger([at(1, gap)], now);
        let (x, y) = (&first.records[0], &second.records[0]);
        let winner = if (y.since, &y.message) > (x.since, &x.message) { y } else { x };
        prop_assert_eq!(&both.records, &vec![winner.clone()]);
    }
}

fn privacy(consent: &str) -> Vec<MetaBlock> {
    vec![MetaBlock {
        namespace: "privacy".into(),
        entries: vec![
            ("Consent".into(), consent.into()),
            ("Consent-ID".into(), "c-1".into()),
        ],
    }]
}

/// The record of `Consent: v` stated alone.
fn alone(v: &str) -> Record {
    let meta = privacy(v);
    let now: Timestamp = "2026-01-01T00:00Z".parse().unwrap();
    let l = ledger(
        [Statement {
            thread: "T",
            message: "M1",
            time: "2025-10-09T12:00Z".parse().unwrap(),
            received: "2025-10-09T12:00Z".parse().unwrap(),
            intent: None,
            meta: &meta,
            verified: false,
        }],
        now,
    );
    l.records[0].clone()
}

/// Consent values: the kinds in mixed spellings, with times, remarks and noise after them,
/// and arbitrary text.
fn consent_value() -> impl Strategy<Value = String> {
    let kind = prop_oneof![
        Just("explicit_yes"),
        Just("explicit_no"),
        Just("implicit"),
        Just("opt-in"),
        Just("transferred_with_approval"),
        Just("explicit"),
        Just("no"),
        Just("yes"),
    ];
    let sep = prop_oneof![Just("_"), Just("-"), Just(" ")];
    let tail = prop_oneof![
        Just(String::new()),
        (0i64..600).prop_map(|m| format!("_2025-10-09T{:02}:{:02}Z", m / 60, m % 60)),
        (0i64..600).prop_map(|m| format!(" 2025-10-09t{:02}:{:02}z", m / 60, m % 60)),
        Just("_2025-13-45".to_string()),
        Just(" (patient refused)".to_string()),
        Just("_soon".to_string()),
        Just("ly".to_string()),
        "[ _(,a-z0-9:-]{0,10}",
    ];
    prop_oneof![
        4 => (kind, sep, any::<bool>(), tail).prop_map(|(k, sep, upper, tail)| {
            let k = k.replace(['_', '-'], sep);
            let k = if upper { k.to_uppercase() } else { k };
            format!("{k}{tail}")
        }),
        1 => ".{0,20}",
    ]
}

/// What follows kind `k` (written with `_` between its words) at the start of `v`: its
/// words in any case, joined by `_`, `-` or a space.
fn after_kind<'v>(v: &'v str, k: &str) -> Option<&'v str> {
    let v = v.trim();
    let head = v.get(..k.len())?;
    let same = head.bytes().zip(k.bytes()).all(|(a, b)| match b {
        b'_' => matches!(a, b'_' | b'-' | b' '),
        _ => a.eq_ignore_ascii_case(&b),
    });
    same.then(|| &v[k.len()..])
}

/// Whether `v` is a grant kind, alone or followed by `_` or spaces and a time.
fn reads_as_grant(v: &str) -> bool {
    [
        "explicit_yes",
        "opt_in",
        "implicit",
        "transferred_with_approval",
    ]
    .iter()
    .filter_map(|k| after_kind(v, k))
    .any(|rest| {
        let time = match rest.strip_prefix('_') {
            _ if rest.is_empty() => return true,
            Some(t) => t,
            None if rest.starts_with(char::is_whitespace) => rest,
            None => return false,
        };
        crosstalk::protocol::validate::parse_time(&time.trim().to_ascii_uppercase()).is_some()
    })
}

/// Whether `v` starts with `explicit_no` as a word.
fn refuses(v: &str) -> bool {
    after_kind(v, "explicit_no").is_some_and(|rest| !rest.starts_with(char::is_alphanumeric))
}

/// Whether a `meta: revocation` with these entries withdraws consent (`Type` absent or
/// `consent`).
fn withdraws_consent(entries: &[(String, String)]) -> bool {
    entries
        .iter()
        .find(|(k, _)| k == "Type")
        .is_none_or(|(_, v)| v.trim().eq_ignore_ascii_case("consent"))
}

/// An `Expires` value as models and hands write them: times of every form, impossible dates,
/// words, nothing, years out of range, and anything at all.
fn expires_value() -> impl Strategy<Value = String> {
    prop_oneof![
        (0i64..1440).prop_map(|m| format!("2026-12-01T{:02}:{:02}Z", m / 60, m % 60)),
        (0i64..1440).prop_map(|m| format!("2026-12-01T{:02}:{:02}:00+00:00", m / 60, m % 60)),
        (1i64..29).prop_map(|d| format!("2026-12-{d:02}")),
        (0i64..24).prop_map(|h| format!("2026-12-01T{h:02}Z")),
        Just("2025-13-45".to_string()),
        Just("2026-02-30T00:00Z".to_string()),
        Just("soon".to_string()),
        Just(String::new()),
        Just("  ".to_string()),
        Just("10000-01-01T00:00Z".to_string()),
        Just("+10000-01-01T00:00Z".to_string()),
        ".{0,24}",
    ]
}

proptest! {
    /// For any `Expires` value, an explicit grant is in force only when the value reads as an
    /// instant after the clock: a limit that cannot be read never becomes no limit.
    #[test]
    fn a_grant_is_in_force_only_when_its_expires_reads_as_a_later_instant(
        expires in expires_value(),
        clock in 0i64..1440,
    ) {
        let now: Timestamp = format!("2026-12-01T{:02}:{:02}:30Z", clock / 60, clock % 60)
            .parse()
            .unwrap();
        let meta = [MetaBlock {
            namespace: "privacy".into(),
            entries: vec![
                ("Consent".into(), "explicit_yes".into()),
                ("Expires".into(), expires.clone()),
            ],
        }];
        let at: Timestamp = "2026-12-01T00:00:00Z".parse().unwrap();
        let l = ledger(
            [Statement {
                thread: "t",
                message: "m",
                time: at,
                received: at,
                intent: Some(&Intent::Request),
                meta: &meta,
                verified: false,
            }],
            now,
        );
        let r = &l.records[0];
        let reads = crosstalk::protocol::validate::parse_time(&expires);
        let in_force = r.state == State::Granted && r.allows_pii();
        prop_assert_eq!(in_force, reads.is_some_and(|t| t > now), "{:?} → {:?}", expires, r.state);
        if reads.is_none() {
            prop_assert_eq!(r.state, State::NotUnderstood);
            prop_assert!(r.why_not_pii().contains("Expires"));
        }
    }
}
