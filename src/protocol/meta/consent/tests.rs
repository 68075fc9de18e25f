use super::*;

fn t(s: &str) -> Timestamp {
    parse_time(s).unwrap()
}

fn block(ns: &str, entries: &[(&str, &str)]) -> MetaBlock {
    MetaBlock {
        namespace: ns.into(),
        entries: entries
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    }
}

fn st<'a>(
    thread: &'a str,
    message: &'a str,
    time: &str,
    intent: Option<&'a Intent>,
    meta: &'a [MetaBlock],
    verified: bool,
) -> Statement<'a> {
    Statement {
        thread,
        message,
        time: t(time),
        received: t(time),
        intent,
        meta,
        verified,
    }
}

/// A statement received at `received`, later than its id's `time`.
fn late<'a>(s: Statement<'a>, received: &str) -> Statement<'a> {
    Statement {
        received: t(received),
        ..s
    }
}

fn privacy(consent: &str, id: &str) -> [MetaBlock; 1] {
    [block(
        "privacy",
        &[("Consent", consent), ("Consent-ID", id)],
    )]
}

#[test]
fn a_grant_expires_and_the_spec_example_reads_whole() {
    let meta = [block(
        "privacy",
        &[
            ("PII", "redacted"),
            ("Consent", "explicit_yes_2025-10-09T16:00Z"),
            ("Scope", "medical"),
            ("Expires", "2025-10-10T16:00Z"),
            ("Jurisdiction", "HIPAA"),
            ("Consent-ID", "patient-842-consent-2025-10-09"),
        ],
    )];
    let s = [st("T", "M1", "2025-10-09T17:00Z", None, &meta, false)];
    let before = ledger(s.clone(), t("2025-10-10T12:00Z"));
    let r = &before.records[0];
    assert_eq!(r.state, State::Granted);
    assert_eq!(r.since, t("2025-10-09T16:00Z"));
    assert_eq!(r.kind, "explicit_yes");
    assert_eq!(r.scope.as_deref(), Some("medical"));
    assert_eq!(r.jurisdiction.as_deref(), Some("HIPAA"));
    assert_eq!(
        r.consent_id.as_deref(),
        Some("patient-842-consent-2025-10-09")
    );
    assert_eq!(before.for_thread("T"), Some(r));
    let after = ledger(s, t("2025-10-10T16:00Z"));
    assert_eq!(after.records[0].state, State::Expired);
}

#[test]
fn only_a_verified_revoke_withdraws_and_it_follows_a_transfer() {
    let grant = [block(
        "privacy",
        &[("Consent", "explicit_yes"), ("Consent-ID", "c-1")],
    )];
    let handoff = [block(
        "privacy",
        &[
            ("Consent", "transferred_with_approval"),
            ("Consent-ID", "c-2"),
            ("Original-Consent-ID", "c-1"),
        ],
    )];
    let revoke = [block(
        "revocation",
        &[("Type", "consent"), ("Consent-ID", "c-1")],
    )];
    let r = Intent::Revoke;
    let base = |verified| {
        vec![
            st("A", "M1", "2025-10-09T10:00Z", None, &grant, false),
            st("B", "M2", "2025-10-09T11:00Z", None, &handoff, false),
            st("A", "M3", "2025-10-09T12:00Z", Some(&r), &revoke, verified),
        ]
    };
    let now = t("2025-10-09T13:00Z");
    let unverified = ledger(base(false), now);
    assert!(unverified.records.iter().all(|r| r.state == State::Granted));
    assert_eq!(unverified.unverified.len(), 1);
    assert_eq!(unverified.unverified[0].consent_id.as_deref(), Some("c-1"));
    let verified = ledger(base(true), now);
    assert!(verified.unverified.is_empty());
    assert!(verified.records.iter().all(|r| r.state == State::Revoked));
    assert_eq!(
        verified.records[1].revoked,
        Some((t("2025-10-09T12:00Z"), "M3".into()))
    );
    assert_eq!(verified.for_thread("B").unwrap().state, State::Revoked);
}

#[test]
fn the_latest_statement_wins_and_a_denial_is_not_a_grant() {
    let yes = [block(
        "privacy",
        &[("Consent", "explicit_yes_2025-10-09T10:00Z")],
    )];
    let no = [block(
        "privacy",
        &[("Consent", "explicit_no_2025-10-09T11:00Z")],
    )];
    let now = t("2025-10-09T12:00Z");
    let l = ledger(
        [
            st("T", "M2", "2025-10-09T11:00Z", None, &no, false),
            st("T", "M1", "2025-10-09T10:00Z", None, &yes, false),
        ],
        now,
    );
    assert_eq!(l.records.len(), 1);
    assert_eq!(l.records[0].state, State::Denied);
    assert!(!l.records[0].allows_pii());
    assert_eq!(l.records[0].message, "M2");
    // A revocation of something other than consent is not read here.
    let keys = [block("revocation", &[("Type", "key"), ("Key-ID", "k")])];
    let r = Intent::Revoke;
    let l = ledger(
        [
            st("T", "M1", "2025-10-09T10:00Z", None, &yes, false),
            st("T", "M3", "2025-10-09T11:30Z", Some(&r), &keys, true),
        ],
        now,
    );
    assert_eq!(l.records[0].state, State::Granted);
    assert!(l.unverified.is_empty());
}

#[test]
fn every_spelling_of_a_grant_grants_and_of_a_refusal_refuses() {
    let now = t("2025-10-10T00:00Z");
    for (value, kind, state, since) in [
        (
            "explicit_yes",
            "explicit_yes",
            State::Granted,
            "2025-10-09T12:00Z",
        ),
        (
            "Explicit-Yes 2025-10-09t16:00z",
            "explicit_yes",
            State::Granted,
            "2025-10-09T16:00Z",
        ),
        (
            "opt-in_2025-10-09T16:00Z",
            "opt-in",
            State::Granted,
            "2025-10-09T16:00Z",
        ),
        ("IMPLICIT", "implicit", State::Granted, "2025-10-09T12:00Z"),
        (
            "explicit_no",
            "explicit_no",
            State::Denied,
            "2025-10-09T12:00Z",
        ),
        (
            "explicit-no",
            "explicit_no",
            State::Denied,
            "2025-10-09T12:00Z",
        ),
        (
            "explicit_no (patient refused)",
            "explicit_no",
            State::Denied,
            "2025-10-09T12:00Z",
        ),
        (
            "explicit_no 2025-10-09t16:00z",
            "explicit_no",
            State::Denied,
            "2025-10-09T16:00Z",
        ),
    ] {
        let meta = privacy(value, "c-1");
        let l = ledger(
            [late(
                st("T", "M1", "2025-10-09T12:00Z", None, &meta, false),
                "2025-10-09T23:00Z",
            )],
            now,
        );
        let r = &l.records[0];
        assert_eq!((r.kind.as_str(), r.state), (kind, state), "{value}");
        assert_eq!(r.since, t(since), "{value}");
    }
}

#[test]
fn a_value_not_understood_is_no_consent_and_still_the_latest_statement() {
    let now = t("2025-10-10T00:00Z");
    let yes = privacy("explicit_yes", "c-1");
    for value in [
        "no",
        "none",
        "denied",
        "withdrawn",
        "pending",
        "",
        "explicit_yes (verbal)",
    ] {
        let odd = privacy(value, "c-1");
        let l = ledger(
            [
                st("T", "M1", "2025-10-09T10:00Z", None, &yes, false),
                st("T", "M2", "2025-10-09T11:00Z", None, &odd, false),
            ],
            now,
        );
        let r = &l.records[0];
        assert_eq!(r.state, State::NotUnderstood, "{value:?}");
        assert_eq!(r.kind, value, "the value as written: {value:?}");
        assert!(!r.allows_pii() && !r.explicit, "{value:?}");
        assert_eq!(l.for_thread("T"), Some(r));
        // A grant after it is in force again.
        let l = ledger(
            [
                st("T", "M1", "2025-10-09T10:00Z", None, &odd, false),
                st("T", "M2", "2025-10-09T11:00Z", None, &yes, false),
            ],
            now,
        );
        assert!(l.records[0].allows_pii(), "{value:?}");
    }
}

#[test]
fn implicit_consent_is_granted_but_not_enough_for_personal_data() {
    let now = t("2025-10-10T00:00Z");
    let transfer = |from: &str| {
        [block(
            "privacy",
            &[
                ("Consent", "transferred_with_approval"),
                ("Consent-ID", "c-2"),
                ("Original-Consent-ID", from),
            ],
        )]
    };
    let check = |original: Option<&str>, from: &str| {
        let first = privacy(original.unwrap_or("explicit_yes"), "c-1");
        let second = transfer(from);
        let mut s = vec![st("B", "M2", "2025-10-09T11:00Z", None, &second, false)];
        if original.is_some() {
            s.push(st("A", "M1", "2025-10-09T10:00Z", None, &first, false));
        }
        let l = ledger(s, now);
        let r = l
            .records
            .iter()
            .find(|r| r.consent_id.as_deref() == Some("c-2"));
        let r = r.unwrap().clone();
        assert_eq!(r.state, State::Granted);
        r.allows_pii()
    };
    assert!(check(Some("explicit_yes"), "c-1"));
    assert!(check(Some("opt-in_2025-10-09"), "c-1"));
    assert!(
        !check(Some("implicit"), "c-1"),
        "implicit does not become explicit by transfer"
    );
    assert!(!check(Some("no"), "c-1"));
    assert!(
        check(None, "c-1"),
        "an original not stored here: the transfer's word is taken"
    );
    assert!(
        !check(Some("explicit_yes"), "c-2"),
        "a transfer from itself"
    );

    let meta = privacy("implicit", "c-1");
    let l = ledger(
        [st("T", "M1", "2025-10-09T10:00Z", None, &meta, false)],
        now,
    );
    assert_eq!(
        (l.records[0].state, l.records[0].kind.as_str()),
        (State::Granted, "implicit")
    );
    assert!(!l.records[0].explicit && !l.records[0].allows_pii());
}

#[test]
fn an_immediate_revoke_takes_effect_when_received() {
    // The spec's example ids are from 2024; the grant is from 2025.
    let grant = privacy("explicit_yes_2025-10-09T16:00Z", "p-842");
    let revoke = |effective: &str| {
        [block(
            "revocation",
            &[
                ("Type", "consent"),
                ("Consent-ID", "p-842"),
                ("Effective", effective),
            ],
        )]
    };
    let r = Intent::Revoke;
    let now = t("2025-10-11T00:00Z");
    for effective in [
        "immediate",
        "IMMEDIATE",
        " Immediate ",
        "as soon as possible",
    ] {
        let meta = revoke(effective);
        let l = ledger(
            [
                st("T", "G", "2024-09-01T00:00Z", None, &grant, false),
                late(
                    st("T", "R", "2024-09-01T00:01Z", Some(&r), &meta, true),
                    "2025-10-10T08:00Z",
                ),
            ],
            now,
        );
        let rec = &l.records[0];
        assert_eq!(rec.state, State::Revoked, "{effective}");
        assert_eq!(rec.revoked, Some((t("2025-10-10T08:00Z"), "R".into())));
        assert!(l.untaken.is_empty(), "{effective}: {:?}", l.untaken);
    }
}

#[test]
fn a_verified_revoke_that_withdraws_nothing_says_why() {
    let grant = privacy("explicit_yes_2025-10-09T16:00Z", "c-1");
    let revoke = |id: &str, effective: &str| {
        [block(
            "revocation",
            &[
                ("Type", "consent"),
                ("Consent-ID", id),
                ("Effective", effective),
            ],
        )]
    };
    let r = Intent::Revoke;
    let now = t("2025-10-11T00:00Z");
    let one = |meta: &[MetaBlock]| {
        let s = [
            st("T", "G", "2025-10-09T16:00Z", None, &grant, false),
            st("T", "R", "2025-10-10T00:00Z", Some(&r), meta, true),
        ];
        let l = ledger(s, now);
        assert_eq!(l.untaken.len(), 1, "{:?}", l.untaken);
        assert_eq!(l.records[0].state, State::Granted);
        l.untaken[0].clone()
    };
    let before = one(&revoke("c-1", "2024-09-01T00:00Z"));
    assert_eq!(before.effective, t("2024-09-01T00:00Z"));
    let in_force = (String::from("G"), t("2025-10-09T16:00Z"));
    assert_eq!(
        before.why,
        Why::BeforeStatement {
            message: in_force.0.clone(),
            since: in_force.1
        }
    );
    assert!(before.needs_attention());
    assert_eq!(before.consent_id.as_deref(), Some("c-1"));
    // Received before the grant in force: the consent was given again after it.
    let early = revoke("c-1", "2024-09-01T00:00Z");
    let l = ledger(
        [
            late(
                st("T", "G", "2025-10-09T16:00Z", None, &grant, false),
                "2025-10-10T12:00Z",
            ),
            late(
                st("T", "R", "2025-10-10T00:00Z", Some(&r), &early, true),
                "2025-10-10T11:00Z",
            ),
        ],
        now,
    );
    let (message, since) = in_force;
    assert_eq!(l.untaken[0].why, Why::Restated { message, since });
    assert!(!l.untaken[0].needs_attention());
    assert_eq!(one(&revoke("c-1", "2030-01-01")).why, Why::NotYet);
    assert_eq!(one(&revoke("c-9", "2025-10-10")).why, Why::NoGrant);
    // Taken: not listed.
    let taken = revoke("c-1", "2025-10-10");
    let l = ledger(
        [
            st("T", "G", "2025-10-09T16:00Z", None, &grant, false),
            st("T", "R", "2025-10-10T00:00Z", Some(&r), &taken, true),
            st("T", "R2", "2025-10-10T01:00Z", Some(&r), &taken, true),
        ],
        now,
    );
    assert_eq!(l.records[0].state, State::Revoked);
    assert!(
        l.untaken.is_empty(),
        "a second withdrawal of the same is no news"
    );
}

/// The time a statement gives is the sender's word: it takes effect no later than it was
/// received, so a grant dated ahead cannot outlast a REVOKE received after it. Two `Consent`
/// entries that disagree are not understood.
#[test]
fn a_grant_dated_ahead_counts_from_its_receipt_and_disagreeing_entries_say_nothing() {
    let now = t("2025-10-11T00:00Z");
    let ahead = privacy("explicit_yes_2099-01-01T00:00Z", "c-1");
    let revoke = [block(
        "revocation",
        &[
            ("Type", "consent"),
            ("Consent-ID", "c-1"),
            ("Effective", "immediate"),
        ],
    )];
    let l = ledger(
        [
            st("T", "M1", "2025-10-09T12:00Z", None, &ahead, false),
            late(
                st(
                    "T",
                    "M2",
                    "2025-10-09T13:00Z",
                    Some(&Intent::Revoke),
                    &revoke,
                    true,
                ),
                "2025-10-10T00:00Z",
            ),
        ],
        now,
    );
    assert_eq!(l.records[0].state, State::Revoked, "{l:?}");
    let both = [block(
        "privacy",
        &[
            ("Consent", "explicit_yes"),
            ("Consent", "explicit_no"),
            ("Consent-ID", "c-2"),
        ],
    )];
    let l = ledger(
        [st("T", "M3", "2025-10-09T12:00Z", None, &both, false)],
        now,
    );
    assert_eq!(l.records[0].state, State::NotUnderstood, "{l:?}");
}
