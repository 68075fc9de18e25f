//! Properties of the consent ledger over generated statements: an unverified REVOKE never
//! changes a record, a verified one only ever withdraws, the order statements arrive in does
//! not matter, and hostile META never panics.

use crosstalk::protocol::consent::{State, Statement, ledger};
use crosstalk::protocol::{Intent, MetaBlock};
use jiff::Timestamp;
use proptest::prelude::*;

#[derive(Debug, Clone)]
struct Gen {
    thread: usize,
    minute: i64,
    revoke: bool,
    verified: bool,
    entries: Vec<(String, String)>,
}

fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("explicit_yes".to_string()),
        Just("explicit_no".to_string()),
        Just("implicit".to_string()),
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
        any::<bool>(),
        any::<bool>(),
        prop::collection::vec((key(), value()), 0..5),
    )
        .prop_map(|(thread, minute, revoke, verified, entries)| Gen {
            thread,
            minute,
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
    }
}
