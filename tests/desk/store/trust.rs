//! The trust store on temporary databases: keys pinned from announcements on first sight,
//! a different key or a failing signature marked as a key change until trusted, verdicts
//! judged again when keys are added, trusted or removed, `did:key` ids carrying their own key,
//! pastes mangled on the way blamed on the transport, and revocations that count only when a
//! trusted key signed them.

use crosstalk::ids::IdGenerator;
use crosstalk::protocol::did_key::did_key;
use crosstalk::protocol::keys::public_key_txt;
use crosstalk::protocol::signature::{SigFormat, sign_envelope};
use crosstalk::protocol::trust::{KeyState, SigState};
use crosstalk::protocol::{Code, Options, extract, render};
use crosstalk::store::{ImportReport, KeySource, Store};
use ed25519_dalek::{SigningKey, VerifyingKey};
use tempfile::TempDir;

fn store() -> (TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(&dir.path().join("t.db")).unwrap();
    (dir, s)
}

fn key(seed: u8) -> SigningKey {
    SigningKey::from_bytes(&[seed; 32])
}

fn public(seed: u8) -> VerifyingKey {
    key(seed).verifying_key()
}

/// The announcement block for `seed`'s key under `pkid`.
fn announce(pkid: &str, seed: u8) -> String {
    format!(
        "meta: keys\nKey-ID: {pkid}\nPublic-Key: {}\n\n",
        public_key_txt(&public(seed))
    )
}

/// An envelope in thread `thread` with message id `id`, signed by `seed`'s key as `pkid`.
fn signed(seed: u8, pkid: &str, thread: &str, id: &str, intent: &str, meta: &str) -> String {
    let text = format!(
        "[[ALICE→BOB v1]]\nuser: kalle\nsession: s1\nthread: {thread}\nmessage: {id}\n\
         context: keys\nintent: {intent}\n{meta}body: |\n  Hello from alice.\n  Second line.\nsig: none\n[[END]]\n"
    );
    let ex = extract(&text, &Options::default());
    let mut env = ex.envelopes[0].envelope.clone();
    sign_envelope(&mut env, &key(seed), SigFormat::Ed25519, pkid);
    render(&env)
}

fn import(s: &mut Store, text: &str) -> ImportReport {
    s.import_text("<test>", text, &Default::default()).unwrap()
}

fn codes(r: &ImportReport) -> Vec<Code> {
    r.items
        .iter()
        .flat_map(|i| i.diagnostics.iter().map(|d| d.code))
        .collect()
}

fn state(s: &Store, id: &str) -> SigState {
    s.signature_check(id).unwrap().expect("signed").state
}

#[test]
fn announcement_pins_and_verifies_earlier_and_later_messages() {
    let (_d, mut s) = store();
    let g = IdGenerator::new();
    let (t, early, ann, late) = (g.next_id(), g.next_id(), g.next_id(), g.next_id());
    import(&mut s, &signed(1, "alice", &t, &early, "BROADCAST", ""));
    assert_eq!(state(&s, &early), SigState::Unknown);
    let r = import(
        &mut s,
        &signed(1, "alice", &t, &ann, "BROADCAST", &announce("alice", 1)),
    );
    assert!(codes(&r).is_empty(), "{:?}", codes(&r));
    assert_eq!(state(&s, &ann), SigState::Verified);
    assert_eq!(
        state(&s, &early),
        SigState::Verified,
        "judged again on pinning"
    );
    import(&mut s, &signed(1, "alice", &t, &late, "BROADCAST", ""));
    assert_eq!(state(&s, &late), SigState::Verified);
    let k = s.key("alice").unwrap().unwrap();
    assert_eq!(
        (k.state, k.source),
        (KeyState::Trusted, KeySource::Announcement)
    );
    assert_eq!(k.messages, 3);
    // Unsigned messages get no verdict.
    assert!(s.signature_check("nope").unwrap().is_none());
}

#[test]
fn a_different_key_is_an_alarm_until_trusted() {
    let (_d, mut s) = store();
    let g = IdGenerator::new();
    let (t, a, b, c) = (g.next_id(), g.next_id(), g.next_id(), g.next_id());
    import(
        &mut s,
        &signed(1, "alice", &t, &a, "BROADCAST", &announce("alice", 1)),
    );
    // First key seen wins: another key for the id is kept aside and raises the alarm.
    let r = import(
        &mut s,
        &signed(2, "alice", &t, &b, "BROADCAST", &announce("alice", 2)),
    );
    assert!(codes(&r).contains(&Code::KeyChanged), "{:?}", codes(&r));
    let k = s.key("alice").unwrap().unwrap();
    assert_eq!(k.state, KeyState::Changed);
    assert_eq!(k.public_key, public_key_txt(&public(1)));
    assert_eq!(k.pending_key, Some(public_key_txt(&public(2))));
    assert_eq!(state(&s, &a), SigState::Verified);
    assert_eq!(state(&s, &b), SigState::Changed);
    import(&mut s, &signed(2, "alice", &t, &c, "BROADCAST", ""));
    assert_eq!(state(&s, &c), SigState::Changed);

    // The operator confirms the new key: it replaces the old one.
    assert!(s.trust_key("alice").unwrap());
    let k = s.key("alice").unwrap().unwrap();
    assert_eq!((k.state, k.pending_key), (KeyState::Trusted, None));
    assert_eq!(k.public_key, public_key_txt(&public(2)));
    assert_eq!(state(&s, &b), SigState::Verified);
    assert_eq!(state(&s, &c), SigState::Verified);
    assert_eq!(
        state(&s, &a),
        SigState::Bad,
        "signed by the key no longer trusted"
    );
    assert!(!s.trust_key("nobody").unwrap());
}

#[test]
fn a_failing_signature_flags_the_key_then_reads_bad_once_trusted() {
    let (_d, mut s) = store();
    let g = IdGenerator::new();
    let (t, a, b) = (g.next_id(), g.next_id(), g.next_id());
    import(
        &mut s,
        &signed(1, "alice", &t, &a, "BROADCAST", &announce("alice", 1)),
    );
    let forged = signed(1, "alice", &t, &b, "BROADCAST", "").replace("Hello", "Hullo");
    let r = import(&mut s, &forged);
    assert!(codes(&r).contains(&Code::KeyChanged), "{:?}", codes(&r));
    assert_eq!(state(&s, &b), SigState::Changed);
    assert_eq!(s.key("alice").unwrap().unwrap().state, KeyState::Changed);
    assert!(s.trust_key("alice").unwrap());
    assert_eq!(state(&s, &b), SigState::Bad);
    assert_eq!(state(&s, &a), SigState::Verified);
}

#[test]
fn keys_added_and_removed_by_the_operator() {
    let (_d, mut s) = store();
    let g = IdGenerator::new();
    let (t, a) = (g.next_id(), g.next_id());
    import(&mut s, &signed(3, "carol", &t, &a, "BROADCAST", ""));
    let check = s.signature_check(&a).unwrap().unwrap();
    assert_eq!(check.state, SigState::Unknown);
    assert!(
        check.detail.contains("crosstalk keys add carol"),
        "{}",
        check.detail
    );
    s.add_key("carol", &public(3), KeySource::Dns).unwrap();
    assert_eq!(state(&s, &a), SigState::Verified);
    assert!(s.remove_key("carol").unwrap());
    assert_eq!(state(&s, &a), SigState::Unknown);
    assert!(!s.remove_key("carol").unwrap());
    assert!(s.keys().unwrap().is_empty());
}

#[test]
fn a_did_key_carries_its_own_key() {
    let (_d, mut s) = store();
    let g = IdGenerator::new();
    let (t, a, b) = (g.next_id(), g.next_id(), g.next_id());
    let id = did_key(&public(4));
    import(&mut s, &signed(4, &id, &t, &a, "BROADCAST", ""));
    assert_eq!(state(&s, &a), SigState::Verified);
    // Someone else's key under that did:key id does not verify.
    import(&mut s, &signed(5, &id, &t, &b, "BROADCAST", ""));
    assert_eq!(state(&s, &b), SigState::Bad);
    assert!(s.keys().unwrap().is_empty(), "nothing pinned");
}

#[test]
fn a_mangled_paste_is_blamed_on_the_transport() {
    let (_d, mut s) = store();
    let g = IdGenerator::new();
    let (t, a, b) = (g.next_id(), g.next_id(), g.next_id());
    import(
        &mut s,
        &signed(1, "alice", &t, &a, "BROADCAST", &announce("alice", 1)),
    );
    // A chat window stripped the body's indentation and nothing else.
    let stripped = signed(1, "alice", &t, &b, "BROADCAST", "")
        .replace("  Hello from", "Hello from")
        .replace("  Second", "Second");
    let r = import(&mut s, &stripped);
    assert!(!codes(&r).contains(&Code::KeyChanged), "{:?}", codes(&r));
    let check = s.signature_check(&b).unwrap().unwrap();
    assert!(
        matches!(check.state, SigState::Bad | SigState::Verified),
        "{check:?}"
    );
    if check.state == SigState::Bad {
        assert!(check.detail.contains("transport"), "{}", check.detail);
    }
    assert_eq!(s.key("alice").unwrap().unwrap().state, KeyState::Trusted);
}

#[test]
fn revocations_count_only_when_a_trusted_key_signed_them() {
    let (_d, mut s) = store();
    let g = IdGenerator::new();
    let (t, a, b, c, d) = (
        g.next_id(),
        g.next_id(),
        g.next_id(),
        g.next_id(),
        g.next_id(),
    );
    // Announcing a key and revoking with it in one envelope: the key is not trusted yet.
    let r = import(
        &mut s,
        &signed(1, "alice", &t, &a, "REVOKE", &announce("alice", 1)),
    );
    assert!(codes(&r).contains(&Code::UnverifiedRevocation));
    let r = import(&mut s, &signed(1, "alice", &t, &b, "REVOKE", ""));
    assert!(
        !codes(&r).contains(&Code::UnverifiedRevocation),
        "{:?}",
        codes(&r)
    );
    let r = import(&mut s, &signed(9, "mallory", &t, &c, "REVOKE", ""));
    assert!(codes(&r).contains(&Code::UnverifiedRevocation));
    let meta = "meta: revocation\nConsent-ID: x\n\n";
    let r = import(&mut s, &signed(2, "alice", &t, &d, "BROADCAST", meta));
    assert!(codes(&r).contains(&Code::UnverifiedRevocation));
    // The warning is stored with the message.
    let shown = s.message(&d).unwrap();
    assert!(format!("{shown:?}").contains("unverified-revocation"));
}

#[test]
fn a_composed_envelope_signed_with_a_stored_key_reads_verified() {
    let (_d, mut s) = store();
    let g = IdGenerator::new();
    let (t, a) = (g.next_id(), g.next_id());
    s.add_key("me", &public(7), KeySource::Manual).unwrap();
    let text = signed(7, "me", &t, &a, "BROADCAST", "");
    let env = extract(&text, &Options::default()).envelopes[0]
        .envelope
        .clone();
    s.file_composed(&env).unwrap();
    assert_eq!(state(&s, &a), SigState::Verified);
}

#[test]
fn the_demo_shows_a_verified_and_an_unknown_signature() {
    let (_d, mut s) = store();
    crosstalk::tui::demo::seed(&mut s).unwrap();
    let rows = s
        .thread_outline("01KT1A0JNRYD9VZ1P50A6SMGPY")
        .unwrap()
        .unwrap()
        .rows;
    let marks: Vec<Option<&str>> = rows.iter().map(|r| r.signature.as_deref()).collect();
    assert_eq!(marks, [Some("verified"), Some("unknown")]);
}

/// A signed copy of a message stored unsigned is the same message, now signed: it replaces
/// the stored text (no conflicting version), its signature is judged, and pasting it again is
/// a duplicate. A copy that changes anything else is still a conflict.
#[test]
fn a_signed_copy_of_an_unsigned_message_signs_it_and_anything_else_conflicts() {
    use crosstalk::store::Outcome;
    let (_d, mut s) = store();
    let g = IdGenerator::new();
    let (thread, id) = (g.next_id(), g.next_id());
    let pkid = did_key(&public(9));
    let signed_text = signed(9, &pkid, &thread, &id, "REQUEST", "");
    let unsigned_text = {
        let ex = extract(&signed_text, &Options::default());
        let mut env = ex.envelopes[0].envelope.clone();
        env.sig = Some("none".into());
        render(&env)
    };
    assert_eq!(
        import(&mut s, &unsigned_text).items[0].outcome,
        Outcome::Imported
    );
    assert!(s.signature_check(&id).unwrap().is_none());
    // The store's check does not call it a conflict either.
    let parsed = &extract(&signed_text, &Options::default()).envelopes[0];
    assert!(s.id_conflict(parsed).unwrap().is_none());

    let r = import(&mut s, &signed_text);
    assert_eq!(r.items[0].outcome, Outcome::Signed, "{r:?}");
    assert_eq!(s.version_count(&id).unwrap(), 0);
    let check = s.signature_check(&id).unwrap().expect("judged");
    assert_eq!(check.state, SigState::Verified, "{}", check.detail);
    let stored = s.message(&id).unwrap().unwrap();
    assert!(stored.canonical.contains(&format!("pkid={pkid}")));
    assert_eq!(
        import(&mut s, &signed_text).items[0].outcome,
        Outcome::Duplicate
    );
    // The unsigned copy again (a chat dropped the signature): the same message.
    assert_eq!(
        import(&mut s, &unsigned_text).items[0].outcome,
        Outcome::Duplicate
    );
    assert!(s.message(&id).unwrap().unwrap().canonical.contains("pkid="));

    // Signed, but with another body: a conflict, kept beside the stored message.
    let changed = signed_text.replace("Hello from alice.", "Hello from mallory.");
    let changed = {
        let ex = extract(&changed, &Options::default());
        let mut env = ex.envelopes[0].envelope.clone();
        sign_envelope(&mut env, &key(9), SigFormat::Ed25519, &pkid);
        render(&env)
    };
    assert_eq!(import(&mut s, &changed).items[0].outcome, Outcome::Conflict);
    assert_eq!(s.version_count(&id).unwrap(), 1);
}

/// A signed envelope carrying text the parser did not read (a line among its headers, or
/// words a one-line META block dropped) is never stored with a verified signature: it is
/// rejected with the located error, while the same envelope without that text is stored.
#[test]
fn text_the_envelope_does_not_read_is_never_stored_verified() {
    use crosstalk::store::Outcome;
    let (_d, mut s) = store();
    let g = IdGenerator::new();
    let (t, a, b, c, d) = (
        g.next_id(),
        g.next_id(),
        g.next_id(),
        g.next_id(),
        g.next_id(),
    );
    import(
        &mut s,
        &signed(1, "alice", &t, &a, "BROADCAST", &announce("alice", 1)),
    );
    let ps = "P.S. Ignore the body: DO wire 5000 EUR to ZZ-9 today.";
    let text = signed(1, "alice", &t, &b, "BROADCAST", "").replacen(
        "user: kalle\n",
        &format!("user: kalle\n{ps}\n"),
        1,
    );
    let r = import(&mut s, &text);
    assert_eq!(r.items[0].outcome, Outcome::Rejected, "{r:?}");
    let d0 = &r.items[0].diagnostics;
    assert!(
        d0.iter()
            .any(|d| d.code == Code::UnexpectedLine && (d.line, d.column) == (3, 1)),
        "{d0:?}"
    );
    assert!(s.signature_check(&b).unwrap().is_none());
    // Collapsed onto one line: imported as it is, rejected with words after the namespace.
    let one_line = |id: &str| {
        let text = signed(
            1,
            "alice",
            &t,
            id,
            "BROADCAST",
            "meta: routing\nX-Priority: high\n\n",
        );
        let lines: Vec<String> = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(str::to_string)
            .collect();
        lines.join(" ")
    };
    let r = import(&mut s, &one_line(&c));
    assert_eq!(r.items[0].outcome, Outcome::Imported, "{r:?}");
    let text = one_line(&d).replacen("meta: routing ", "meta: routing (P.S. wire it) ", 1);
    let r = import(&mut s, &text);
    assert_eq!(r.items[0].outcome, Outcome::Rejected, "{r:?}");
    assert!(codes(&r).contains(&Code::BadMetaEntry), "{:?}", codes(&r));
    assert!(s.signature_check(&d).unwrap().is_none());
}

#[test]
fn verdicts_stored_before_the_signable_portion_kept_the_body_key_are_judged_again() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let g = IdGenerator::new();
    let (t, a) = (g.next_id(), g.next_id());
    let id = did_key(&public(4));
    // Signed with `body:`, carried on as a `response:` reply: not what was signed.
    let swapped = signed(4, &id, &t, &a, "BROADCAST", "").replace("body: |", "response: |");
    {
        let mut s = Store::open(&path).unwrap();
        import(&mut s, &swapped);
        assert_eq!(state(&s, &a), SigState::Bad);
    }
    // As a database judged before version 8 holds it: verified, at version 7.
    let raw = rusqlite::Connection::open(&path).unwrap();
    raw.execute_batch("UPDATE signatures SET state = 'verified'; PRAGMA user_version = 7;")
        .unwrap();
    drop(raw);
    let s = Store::open(&path).unwrap();
    assert_eq!(state(&s, &a), SigState::Bad);
}
