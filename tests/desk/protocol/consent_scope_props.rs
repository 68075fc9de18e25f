//! The consent in force for one thread, read from only the statements that bear on it
//! (`Store::consent_for_thread`), is what the whole ledger says of that thread: for generated
//! conversations over three threads whose grants share, transfer and revoke consent ids, with
//! REVOKEs signed by a trusted key or not, at clocks before and after them.

use crosstalk::protocol::consent::{State, Statement};
use crosstalk::protocol::signature::{SigFormat, sign_envelope};
use crosstalk::protocol::{Intent, MetaBlock, Options, extract, render};
use crosstalk::store::{KeySource, Store};
use ed25519_dalek::SigningKey;
use jiff::Timestamp;
use proptest::prelude::*;

const THREADS: [&str; 3] = [
    "01K0000000000000000000000A",
    "01K0000000000000000000000B",
    "01K0000000000000000000000C",
];

/// One generated envelope: a grant (`meta: privacy`) or a REVOKE (`meta: revocation`).
#[derive(Debug, Clone)]
struct Gen {
    thread: usize,
    minute: u64,
    revoke: bool,
    signed: bool,
    entries: Vec<(&'static str, String)>,
}

fn consent_id() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("c-1".to_string()),
        Just("c-2".to_string()),
        Just("  c-3 ".to_string()),
        Just("c-1-and-more".to_string()),
    ]
}

fn grant() -> impl Strategy<Value = Gen> {
    (
        0..THREADS.len(),
        0u64..600,
        prop_oneof![
            Just("explicit_yes"),
            Just("implicit"),
            Just("explicit_no"),
            Just("transferred_with_approval"),
            Just("maybe"),
        ],
        proptest::option::of(consent_id()),
        proptest::option::of(consent_id()),
        proptest::option::of(0u64..900),
    )
        .prop_map(|(thread, minute, consent, id, original, expires)| {
            let mut entries = vec![("Consent", consent.to_string())];
            entries.extend(id.map(|id| ("Consent-ID", id)));
            entries.extend(original.map(|o| ("Original-Consent-ID", o)));
            entries.extend(expires.map(|m| ("Expires", at(m))));
            Gen {
                thread,
                minute,
                revoke: false,
                signed: false,
                entries,
            }
        })
}

fn revoke() -> impl Strategy<Value = Gen> {
    (
        0..THREADS.len(),
        0u64..600,
        any::<bool>(),
        proptest::option::of(consent_id()),
        prop_oneof![
            Just(None),
            Just(Some("immediate".to_string())),
            (0u64..900).prop_map(|m| Some(at(m))),
        ],
    )
        .prop_map(|(thread, minute, signed, id, effective)| {
            let mut entries = vec![("Type", "consent".to_string())];
            entries.extend(id.map(|id| ("Consent-ID", id)));
            entries.extend(effective.map(|e| ("Effective", e)));
            Gen {
                thread,
                minute,
                revoke: true,
                signed,
                entries,
            }
        })
}

/// A time on the day of the generated conversations, `minute` minutes after midnight.
fn at(minute: u64) -> String {
    format!("2025-10-09T{:02}:{:02}Z", minute / 60 % 24, minute % 60)
}

/// The envelope `g` is, the `n`th of its conversation; a signed REVOKE signed with `key`.
fn envelope(g: &Gen, n: usize, key: &SigningKey) -> String {
    let ms = Timestamp::from_second(1_759_968_000 + g.minute as i64 * 60)
        .unwrap()
        .as_millisecond() as u64;
    let message = ulid::Ulid::from_parts(ms, n as u128 + 1).to_string();
    let (intent, namespace) = if g.revoke {
        ("REVOKE", "revocation")
    } else if g.entries.iter().any(|(k, _)| *k == "Original-Consent-ID") {
        ("HANDOFF", "privacy")
    } else {
        ("REQUEST", "privacy")
    };
    let meta: String = (g.entries.iter())
        .map(|(k, v)| format!("{k}: {v}\n"))
        .collect();
    let text = format!(
        "[[CLAUDE→CHATGPT v1]]\nuser: kalle\nsession: 2025-10-09T16Z a7f3d1\n\
         thread: {}\nmessage: {message}\ncontext: consent\nintent: {intent}\n\n\
         meta: {namespace}\n{meta}\nbody: |\n  text\nsig: none\n[[END]]\n",
        THREADS[g.thread]
    );
    if !g.signed {
        return text;
    }
    let mut env = extract(&text, &Options::default()).envelopes[0]
        .envelope
        .clone();
    sign_envelope(&mut env, key, SigFormat::Ed25519, "kalle@desk");
    render(&env)
}

/// A store holding `gens`, with the signing key trusted before any of them arrived.
fn store(gens: &[Gen]) -> Store {
    let key = SigningKey::from_bytes(&[9; 32]);
    let mut store = Store::open_in_memory().unwrap();
    store
        .add_key("kalle@desk", &key.verifying_key(), KeySource::Manual)
        .unwrap();
    // The key must have been seen before the REVOKEs were received.
    std::thread::sleep(std::time::Duration::from_millis(2));
    let text: String = (gens.iter().enumerate())
        .map(|(n, g)| envelope(g, n, &key) + "\n")
        .collect();
    store
        .import_text("generated", &text, &Options::default())
        .unwrap();
    store
}

/// The clocks each conversation is judged at: during the day of its statements, and now.
fn clocks() -> [Timestamp; 3] {
    [
        at(300).parse().unwrap(),
        at(800).parse().unwrap(),
        Timestamp::now(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn one_threads_consent_is_what_the_whole_ledger_says_of_it(
        gens in proptest::collection::vec(prop_oneof![3 => grant(), 1 => revoke()], 1..10),
    ) {
        let store = store(&gens);
        for now in clocks() {
            let ledger = store.consent_ledger(now).unwrap();
            for thread in THREADS {
                let scoped = store.consent_for_thread(thread, now, []).unwrap();
                prop_assert_eq!(scoped.as_ref(), ledger.for_thread(thread), "{} at {}", thread, now);
            }
        }
    }

    /// With a statement not stored yet (the envelope being composed) counted in.
    #[test]
    fn with_an_envelope_being_composed(
        gens in proptest::collection::vec(prop_oneof![3 => grant(), 1 => revoke()], 0..8),
        own in grant(),
    ) {
        let store = store(&gens);
        let meta = vec![MetaBlock {
            namespace: "privacy".to_string(),
            entries: (own.entries.iter()).map(|(k, v)| (k.to_string(), v.clone())).collect(),
        }];
        let intent = Intent::Request;
        let written = Timestamp::now();
        let statement = || Statement {
            thread: THREADS[own.thread],
            message: "01K7ZZZZZZZZZZZZZZZZZZZZZZ",
            time: written,
            received: written,
            intent: Some(&intent),
            meta: &meta,
            verified: false,
        };
        for now in clocks() {
            let whole = store.consent_ledger_with(now, [statement()]).unwrap();
            let scoped = store.consent_for_thread(THREADS[own.thread], now, [statement()]).unwrap();
            prop_assert_eq!(scoped.as_ref(), whole.for_thread(THREADS[own.thread]));
        }
    }
}

/// A grant (or, with `revoke`, a REVOKE signed with the trusted key) in thread `thread`,
/// written `minute` minutes into the day, stating `entries`.
fn stated(thread: usize, minute: u64, revoke: bool, entries: &[(&'static str, String)]) -> Gen {
    Gen {
        thread,
        minute,
        revoke,
        signed: revoke,
        entries: entries.to_vec(),
    }
}

/// `(key, value)` entries from string slices.
fn entries(pairs: &[(&'static str, &str)]) -> Vec<(&'static str, String)> {
    (pairs.iter()).map(|(k, v)| (*k, v.to_string())).collect()
}

/// A grant in one thread, transferred in a second, revoked by a signed REVOKE in a third:
/// the second thread's consent is revoked, which only following the ids shows.
#[test]
fn a_transfer_is_revoked_with_its_original_from_another_thread() {
    let gens = [
        stated(
            0,
            60,
            false,
            &entries(&[("Consent", "explicit_yes"), ("Consent-ID", "c-1")]),
        ),
        stated(
            1,
            120,
            false,
            &entries(&[
                ("Consent", "transferred_with_approval"),
                ("Consent-ID", "c-2"),
                ("Original-Consent-ID", "c-1"),
            ]),
        ),
        stated(
            2,
            180,
            true,
            &entries(&[("Type", "consent"), ("Consent-ID", "c-1")]),
        ),
    ];
    let store = store(&gens);
    let now = Timestamp::now();
    let b = store
        .consent_for_thread(THREADS[1], now, [])
        .unwrap()
        .unwrap();
    assert_eq!(b.state, State::Revoked, "{b:?}");
    assert_eq!(b.consent_id.as_deref(), Some("c-2"));
    assert_eq!(
        Some(&b),
        store.consent_ledger(now).unwrap().for_thread(THREADS[1])
    );
    // Before the REVOKE: the transfer of an explicit consent allows personal data.
    let before: Timestamp = at(150).parse().unwrap();
    let b = store
        .consent_for_thread(THREADS[1], before, [])
        .unwrap()
        .unwrap();
    assert!(b.allows_pii(), "{b:?}");
    // The third thread granted nothing.
    assert_eq!(store.consent_for_thread(THREADS[2], now, []).unwrap(), None);
}

/// A chain of transfers longer than the rounds followed is read from the whole ledger, with
/// the same answer.
#[test]
fn a_long_chain_of_transfers_gives_the_same_answer() {
    let mut gens = vec![stated(
        1,
        10,
        false,
        &entries(&[("Consent", "explicit_no"), ("Consent-ID", "k0")]),
    )];
    for i in 1..10u64 {
        // The last transfer alone in the first thread: from there each round of following
        // ids finds one step more.
        let thread = if i == 9 { 0 } else { 1 + (i % 2) as usize };
        gens.push(stated(
            thread,
            10 + i,
            false,
            &[
                ("Consent", "transferred_with_approval".to_string()),
                ("Consent-ID", format!("k{i}")),
                ("Original-Consent-ID", format!("k{}", i - 1)),
            ],
        ));
    }
    let store = store(&gens);
    let now = Timestamp::now();
    let ledger = store.consent_ledger(now).unwrap();
    for thread in THREADS {
        let scoped = store.consent_for_thread(thread, now, []).unwrap();
        assert_eq!(scoped.as_ref(), ledger.for_thread(thread), "{thread}");
        // A transfer of a refusal is nobody's explicit consent.
        assert!(!scoped.expect("a consent").explicit);
    }
}

/// An envelope naming more consent ids than are looked for at once: the whole ledger is read,
/// with the same answer (the grant in force is the one in another thread).
#[test]
fn an_envelope_naming_many_ids_gives_the_same_answer() {
    let mut many = entries(&[
        ("Consent", "transferred_with_approval"),
        ("Original-Consent-ID", "c-7"),
    ]);
    many.extend((0..100).map(|i| ("Consent-ID", format!("x-{i}"))));
    let gens = [
        stated(
            1,
            10,
            false,
            &entries(&[("Consent", "implicit"), ("Consent-ID", "c-7")]),
        ),
        stated(0, 20, false, &many),
    ];
    let store = store(&gens);
    let now = Timestamp::now();
    let scoped = store.consent_for_thread(THREADS[0], now, []).unwrap();
    assert_eq!(
        scoped.as_ref(),
        store.consent_ledger(now).unwrap().for_thread(THREADS[0])
    );
    // Transferred from an implicit consent: not explicit.
    assert!(!scoped.expect("a consent").explicit);
}
