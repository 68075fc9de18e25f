//! `crosstalk consent` on a database: grants read from `meta: privacy`, expiry against the
//! clock, values that are neither grant nor refusal (and `check`'s warning about them), and
//! REVOKEs: without a verified signature, or withdrawing nothing for another reason, listed as
//! not taken (exit 1); with `Effective: immediate`, in force from when it was received.

use crate::helpers::common;

use std::path::Path;

use common::Run;
use serde_json::Value;

fn run(db: &Path, args: &[&str], stdin: &str) -> Run {
    let mut all = vec!["--db", db.to_str().expect("utf-8 path")];
    all.extend_from_slice(args);
    common::run(&all, stdin)
}

fn env(message: &str, parent: Option<&str>, intent: &str, meta: &str) -> String {
    let parent = parent.map_or(String::new(), |p| format!("parent: {p}\n"));
    format!(
        "[[CLAUDE→CHATGPT v1]]\nuser: kalle\nsession: 2025-10-09T16Z a7f3d1\n\
         thread: 01K0000000000000000000000A\n{parent}message: {message}\ncontext: consent\n\
         intent: {intent}\n\n{meta}\nbody: |\n  text\nsig: none\n[[END]]\n"
    )
}

/// An envelope in the thread and with the ids of the spec's examples (ULIDs from 2024).
fn spec_env(message: &str, parent: Option<&str>, intent: &str, meta: &str) -> String {
    let parent = parent.map_or(String::new(), |p| format!("parent: {p}\n"));
    format!(
        "[[CLAUDE→BROTHER v1]]\nuser: kalle\nsession: 2025-10-09T16Z abc123\n\
         thread: 01J9J3D3M6A4M3WQX8G1ZQ0S7K\n{parent}message: {message}\ncontext: medical\n\
         intent: {intent}\n\n{meta}\nbody: |\n  text\nsig: none\n[[END]]\n"
    )
}

/// Generates a key for `kalle@desk` in the trust store and returns a signer of envelopes.
fn signer(db: &Path, key: &Path) -> impl Fn(&str) -> String + use<> {
    let r = run(
        db,
        &[
            "keys",
            "generate",
            "kalle@desk",
            "-o",
            key.to_str().unwrap(),
        ],
        "",
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let (db, key) = (db.to_path_buf(), key.to_path_buf());
    move |text| {
        let args = [
            "sign",
            "--key",
            key.to_str().unwrap(),
            "--pkid",
            "kalle@desk",
            "--format",
            "ed25519",
        ];
        let signed = run(&db, &args, text);
        assert_eq!(signed.code, 0, "{}", signed.stderr);
        signed.stdout
    }
}

#[test]
fn grants_expiry_and_an_unverified_revoke() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db");
    // A database named by hand must exist for `consent` to read it.
    assert_eq!(run(&db, &["consent"], "").code, 2);
    drop(crosstalk::store::Store::open(&db).unwrap());
    let r = run(&db, &["consent"], "");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("No envelope states consent"),
        "{}",
        r.stdout
    );

    let paste = [
        env(
            "01K0000000000000000000000A",
            None,
            "REQUEST",
            "meta: privacy\nPII: present\nConsent: explicit_yes_2025-10-09T16:00Z\nScope: medical\n\
             Expires: 2999-01-01T00:00Z\nJurisdiction: HIPAA\nConsent-ID: patient-842\n",
        ),
        env(
            "01K0000000000000000000000B",
            Some("01K0000000000000000000000A"),
            "RESPOND",
            "meta: privacy\nPII: none\nConsent: implicit\nExpires: 2025-10-10T16:00Z\n\
             Consent-ID: old-one\n",
        ),
        env(
            "01K0000000000000000000000C",
            Some("01K0000000000000000000000B"),
            "REVOKE",
            "meta: revocation\nType: consent\nConsent-ID: patient-842\nReason: withdrawn\n",
        ),
    ]
    .concat();
    let r = run(&db, &["import"], &paste);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);

    let r = run(&db, &["consent", "--json"], "");
    assert_eq!(r.code, 1, "an untaken REVOKE exits 1: {}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let consents = v["consents"].as_array().unwrap();
    let by_id = |id: &str| {
        consents
            .iter()
            .find(|c| c["consent_id"] == id)
            .unwrap_or_else(|| panic!("{id} in {v}"))
    };
    let p = by_id("patient-842");
    assert_eq!(p["state"], "granted", "the REVOKE is not verified: {p}");
    assert_eq!(p["since"], "2025-10-09T16:00:00Z");
    assert_eq!(p["scope"], "medical");
    assert_eq!(p["jurisdiction"], "HIPAA");
    assert_eq!(by_id("old-one")["state"], "expired");
    let unverified = v["unverified_revocations"].as_array().unwrap();
    assert_eq!(unverified.len(), 1, "{v}");
    assert_eq!(unverified[0]["consent_id"], "patient-842");
    assert_eq!(unverified[0]["message"], "01K0000000000000000000000C");

    let r = run(&db, &["consent"], "");
    assert_eq!(r.code, 1);
    assert!(r.stdout.contains("granted  patient-842"), "{}", r.stdout);
    assert!(r.stdout.contains("expired  old-one"), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("NOT TAKEN  REVOKE 01K0000000000000000000000C of patient-842"),
        "{}",
        r.stdout
    );
}

/// A REVOKE signed with a trusted key (made by `crosstalk keys generate`) withdraws the
/// consent it names, and a grant transferred from it goes too.
#[test]
fn a_verified_revoke_withdraws_the_consent_and_what_was_transferred_from_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db");
    let key = dir.path().join("k.pem");
    let r = run(
        &db,
        &[
            "keys",
            "generate",
            "kalle@desk",
            "-o",
            key.to_str().unwrap(),
        ],
        "",
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let grants = [
        env(
            "01K0000000000000000000000A",
            None,
            "REQUEST",
            "meta: privacy\nConsent: explicit_yes_2025-10-09T16:00Z\nConsent-ID: c-1\n",
        ),
        env(
            "01K0000000000000000000000B",
            Some("01K0000000000000000000000A"),
            "HANDOFF",
            "meta: privacy\nConsent: transferred_with_approval\nConsent-ID: c-2\n\
             Original-Consent-ID: c-1\n",
        ),
    ]
    .concat();
    assert_eq!(run(&db, &["import"], &grants).code, 0);
    let revoke = env(
        "01K0000000000000000000000C",
        Some("01K0000000000000000000000B"),
        "REVOKE",
        "meta: revocation\nType: consent\nConsent-ID: c-1\nReason: withdrawn\n\
         Effective: 2025-10-10T00:00Z\n",
    );
    let signed = run(
        &db,
        &[
            "sign",
            "--key",
            key.to_str().unwrap(),
            "--pkid",
            "kalle@desk",
            "--format",
            "ed25519",
        ],
        &revoke,
    );
    assert_eq!(signed.code, 0, "{}", signed.stderr);
    let r = run(&db, &["import"], &signed.stdout);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);

    let r = run(&db, &["consent", "--json"], "");
    assert_eq!(r.code, 0, "nothing untaken: {}", r.stdout);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let consents = v["consents"].as_array().unwrap();
    assert_eq!(consents.len(), 2, "{v}");
    for c in consents {
        assert_eq!(c["state"], "revoked", "{c}");
        assert_eq!(c["revoked_by"], "01K0000000000000000000000C", "{c}");
    }
    assert!(v["unverified_revocations"].as_array().unwrap().is_empty());
}

/// A signature that verifies is not enough to withdraw a consent: a `did:key` names its own
/// key, so anyone can make one. Such a REVOKE is listed as not taken, and import says so.
#[test]
fn a_revoke_signed_with_a_did_key_nobody_trusts_is_not_taken() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db");
    let other = dir.path().join("other.db");
    let key = dir.path().join("m.pem");
    let r = run(
        &other,
        &["keys", "generate", "mallory", "-o", key.to_str().unwrap()],
        "",
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let did = (r.stdout.lines())
        .find_map(|l| l.strip_prefix("did:key:"))
        .map(|rest| rest.trim().to_string())
        .expect("a did:key line");
    assert!(did.starts_with("did:key:z"), "{did}");
    let grant = env(
        "01K0000000000000000000000A",
        None,
        "REQUEST",
        "meta: privacy\nConsent: explicit_yes_2025-10-09T16:00Z\nConsent-ID: c-1\n",
    );
    assert_eq!(run(&db, &["import"], &grant).code, 0);
    let revoke = env(
        "01K0000000000000000000000C",
        Some("01K0000000000000000000000A"),
        "REVOKE",
        "meta: revocation\nType: consent\nConsent-ID: c-1\nEffective: 2025-10-10T00:00Z\n",
    );
    let signed = run(
        &other,
        &[
            "sign",
            "--key",
            key.to_str().unwrap(),
            "--pkid",
            &did,
            "--format",
            "ed25519",
        ],
        &revoke,
    );
    assert_eq!(signed.code, 0, "{}", signed.stderr);
    let r = run(&db, &["verify", "-"], &signed.stdout);
    assert_eq!(r.code, 0, "the signature itself is valid: {}", r.stdout);
    let r = run(&db, &["import"], &signed.stdout);
    assert!(
        format!("{}{}", r.stdout, r.stderr).contains("unverified-revocation"),
        "{}{}",
        r.stdout,
        r.stderr
    );
    let r = run(&db, &["consent", "--json"], "");
    assert_eq!(r.code, 1, "{}", r.stdout);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["consents"][0]["state"], "granted", "{v}");
    assert_eq!(
        v["unverified_revocations"].as_array().unwrap().len(),
        1,
        "{v}"
    );
}

/// Only the spellings of a grant grant: `check` warns about a value that is neither grant nor
/// refusal, at its line, and `crosstalk consent` lists it as not understood; a refusal with a
/// remark is a refusal; `implicit` is granted but not explicit.
#[test]
fn consent_values_that_are_not_understood_grant_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db");
    let msg = |n: u32| format!("01K00000000000000000000{n:03}");
    let values = [
        ("no", "not understood"),
        ("denied", "not understood"),
        ("explicit_yes (verbal)", "not understood"),
        ("explicit_no (patient refused)", "denied"),
        ("explicit_no 2025-10-09t16:00z", "denied"),
        ("Explicit-Yes 2025-10-09t16:00z", "granted"),
        ("implicit", "granted"),
    ];
    let paste: String = values
        .iter()
        .enumerate()
        .map(|(i, (value, _))| {
            env(
                &msg(i as u32),
                None,
                "REQUEST",
                &format!("meta: privacy\nPII: present\nConsent: {value}\nConsent-ID: c-{i}\n"),
            )
        })
        .collect();

    let r = run(&db, &["check"], &paste);
    let warned: Vec<&str> = r
        .stdout
        .lines()
        .filter(|l| l.ends_with("[unknown-consent]"))
        .collect();
    assert_eq!(warned.len(), 3, "{}", r.stdout);
    // The first envelope's `Consent:` value: line 11, column 10.
    assert!(
        warned[0].starts_with("<stdin>:11:10: warning: Consent `no` is not understood"),
        "{}",
        warned[0]
    );
    assert!(
        warned[2].contains("after `explicit_yes` only a time may follow"),
        "{}",
        warned[2]
    );

    assert_eq!(run(&db, &["import"], &paste).code, 0);
    let r = run(&db, &["consent", "--json"], "");
    assert_eq!(r.code, 0, "{}", r.stdout);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    for (i, (value, state)) in values.iter().enumerate() {
        let c = v["consents"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["consent_id"] == format!("c-{i}"))
            .unwrap_or_else(|| panic!("c-{i} in {v}"));
        assert_eq!(c["state"], state.replace(' ', "_"), "{value}: {c}");
        assert_eq!(
            c["explicit"],
            *value != "implicit" && *state == "granted",
            "{value}: {c}"
        );
    }
    let r = run(&db, &["consent"], "");
    assert!(
        r.stdout
            .contains("not understood c-0  Consent `no` since 20"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains(
            "[threads 01K000000000]  (neither a grant nor a refusal: no consent is in force)"
        ),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("granted  c-6  implicit since")
            && r.stdout
                .contains("  (not explicit: personal data needs explicit consent)"),
        "{}",
        r.stdout
    );
}

/// The spec's own example: a grant from 2025 in a thread whose ids are from 2024, withdrawn by a
/// verified REVOKE with `Effective: immediate`. It takes effect when it was received; a REVOKE
/// that takes effect before the grant is listed with the reason, not dropped.
#[test]
fn an_immediate_revoke_takes_effect_on_receipt_and_none_is_dropped_silently() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db");
    let sign = signer(&db, &dir.path().join("k.pem"));
    let grant = spec_env(
        "01J9J3DBC4N7P2Q3R5S7T9W1V2",
        None,
        "REQUEST",
        "meta: privacy\nPII: redacted\nConsent: explicit_yes_2025-10-09T16:00Z\nScope: medical\n\
         Consent-ID: patient-842-consent-2025-10-09\n",
    );
    assert_eq!(run(&db, &["import"], &grant).code, 0);
    let revoke = |message: &str, effective: &str| {
        sign(&spec_env(
            message,
            Some("01J9J3DBC4N7P2Q3R5S7T9W1V2"),
            "REVOKE",
            &format!(
                "meta: revocation\nType: consent\nConsent-ID: patient-842-consent-2025-10-09\n\
                 Reason: patient request\nEffective: {effective}\n"
            ),
        ))
    };

    // Before the grant: listed, with the grant that stands.
    let early = revoke("01J9J3DBC4N7P2Q3R5S7T9W1Z0", "2024-01-01T00:00Z");
    let r = run(&db, &["import"], &early);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let r = run(&db, &["consent"], "");
    assert_eq!(
        r.code, 1,
        "a REVOKE that withdraws nothing exits 1: {}",
        r.stdout
    );
    assert!(r.stdout.starts_with("granted  patient-842"), "{}", r.stdout);
    assert!(
        r.stdout.contains(
            "NOT TAKEN  REVOKE 01J9J3DBC4N7P2Q3R5S7T9W1Z0 of patient-842-consent-2025-10-09: \
             it takes effect at 2024-01-01T00:00:00Z, before the consent's statement in force \
             (01J9J3DBC4N7P2Q3R5S7T9W1V2 at 2025-10-09T16:00:00Z)"
        ),
        "{}",
        r.stdout
    );

    let before = jiff::Timestamp::now();
    let r = run(
        &db,
        &["import"],
        &revoke("01J9J3DBC4N7P2Q3R5S7T9W1Z1", "IMMEDIATE"),
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let r = run(&db, &["consent", "--json"], "");
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let c = &v["consents"][0];
    assert_eq!(c["state"], "revoked", "{v}");
    assert_eq!(c["revoked_by"], "01J9J3DBC4N7P2Q3R5S7T9W1Z1", "{v}");
    let at: jiff::Timestamp = c["revoked_at"].as_str().unwrap().parse().unwrap();
    assert!(
        at >= before
            .checked_sub(jiff::SignedDuration::from_secs(1))
            .unwrap(),
        "in force from when it was received: {at} (imported after {before})"
    );
    // The early REVOKE is still listed: the consent is withdrawn, but not by it.
    let untaken = v["untaken_revocations"].as_array().unwrap();
    assert_eq!(untaken.len(), 1, "{v}");
    assert_eq!(untaken[0]["message"], "01J9J3DBC4N7P2Q3R5S7T9W1Z0");
    assert_eq!(untaken[0]["why"], "before_statement");
    assert_eq!(
        untaken[0]["statement_in_force"],
        "01J9J3DBC4N7P2Q3R5S7T9W1V2"
    );
    assert_eq!(r.code, 1);
}

/// A REVOKE first pasted unsigned has no effect, and import says what to do: trust the
/// sender's key and get it again signed. Done, the signed copy (the same message, now signed)
/// withdraws the consent. A key trusted only after the signed copy arrived still does not
/// count.
#[test]
fn a_revoke_pasted_unsigned_takes_effect_once_its_signed_copy_arrives() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db");
    let grant = env(
        "01K0000000000000000000000A",
        None,
        "REQUEST",
        "meta: privacy\nConsent: explicit_yes_2025-10-09T16:00Z\nConsent-ID: c-1\n",
    );
    let revoke = env(
        "01K0000000000000000000000C",
        Some("01K0000000000000000000000A"),
        "REVOKE",
        "meta: revocation\nType: consent\nConsent-ID: c-1\nReason: withdrawn\n\
         Effective: 2025-10-10T00:00Z\n",
    );
    let r = run(&db, &["import"], &format!("{grant}{revoke}"));
    let said = format!("{}{}", r.stdout, r.stderr);
    assert!(said.contains("ask for it again signed"), "{said}");
    assert_eq!(run(&db, &["consent"], "").code, 1, "not taken yet");

    let sign = signer(&db, &dir.path().join("k.pem"));
    let r = run(&db, &["import"], &sign(&revoke));
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("signed"), "{}", r.stdout);
    let r = run(&db, &["consent", "--json"], "");
    assert_eq!(r.code, 0, "taken: {}", r.stdout);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["consents"][0]["state"], "revoked", "{v}");
    assert_eq!(v["consents"][0]["revoked_by"], "01K0000000000000000000000C");

    // The other order: the signed copy arrives before its key is trusted.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db");
    let other = dir.path().join("other.db");
    let sign = signer(&other, &dir.path().join("k.pem"));
    run(&db, &["import"], &format!("{grant}{revoke}"));
    run(&db, &["import"], &sign(&revoke));
    let public = run(&other, &["keys", "list", "--json"], "");
    let v: Value = serde_json::from_str(&public.stdout).unwrap();
    let key = v[0]["public_key"].as_str().expect("public key").to_string();
    let r = run(&db, &["keys", "add", "kalle@desk", &key], "");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        run(&db, &["consent"], "").code,
        1,
        "trusted after it arrived"
    );
}
