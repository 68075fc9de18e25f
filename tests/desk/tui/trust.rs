//! The trust store in the real binary, in tmux: a key announced in an imported envelope is
//! pinned and its signed message shows ✓; a paste announcing a different key for the same id
//! shows ⚠ in the tree and the alarm in the inspector, `K` lists the key with the different
//! one seen; `crosstalk keys trust` settles it.

use crate::helpers::tmux;

use crosstalk::protocol::keys::public_key_txt;
use crosstalk::protocol::signature::{SigFormat, sign_envelope};
use crosstalk::protocol::{Options, extract, render};
use ed25519_dalek::SigningKey;
use tmux::Term;

const THREAD: &str = "01KAQ4W5J8Z0000000000000T1";

/// An envelope announcing `seed`'s key for `alice` and signed with it.
fn signed(seed: u8, message: &str, body: &str) -> String {
    let key = SigningKey::from_bytes(&[seed; 32]);
    let text = format!(
        "[[alice→op v1]]\nuser: kalle\nthread: {THREAD}\nmessage: {message}\n\
         context: trust tmux\nintent: BROADCAST\n\nmeta: keys\nKey-ID: alice\nPublic-Key: {}\n\n\
         body: |\n  {body}\nsig: none\n[[END]]\n",
        public_key_txt(&key.verifying_key())
    );
    let mut env = extract(&text, &Options::default()).envelopes[0]
        .envelope
        .clone();
    sign_envelope(&mut env, &key, SigFormat::Ed25519, "alice");
    render(&env)
}

#[test]
fn a_pinned_key_verifies_and_a_different_one_raises_the_alarm() {
    let Some(t) = Term::new() else { return };
    let file = t.path("first.txt");
    std::fs::write(
        &file,
        signed(1, "01KAQ4W5J8Z0000000000000M1", "first words"),
    )
    .unwrap();
    t.import(&[&file]);
    t.start(120, 60, &[]);
    let s = t.wait_for("first words");
    t.wait_for("✓ verified");
    assert!(s.contains("✓ "), "{s}");
    t.paste(
        &signed(2, "01KAQ4W5J8Z0000000000000M2", "second words"),
        true,
    );
    t.wait_for("second words");
    t.keys(&["Enter"]);
    let s = t.wait_for("⚠ changed");
    assert!(s.contains("NEW key"), "{s}");
    // The thread list raises it too, in the thread's row.
    assert!(tmux::has_row(&s, &["✗", "trust tmux"]), "{s}");
    let keys = t.cli_json(&["keys", "list"]);
    assert_eq!(keys[0]["state"], "changed", "{keys}");
    t.keys(&["K"]);
    let s = t.wait_for("⚠ alice — changed (announcement)");
    assert!(s.contains("different key seen: ed25519:pk="), "{s}");
    t.keys(&["Escape"]);
    t.wait_gone("different key seen");
    t.keys(&["q"]);
    assert_eq!(t.wait_exit(), 0);
    t.cli(&["keys", "trust", "alice"]);
    let keys = t.cli_json(&["keys", "list"]);
    assert_eq!(keys[0]["state"], "trusted", "{keys}");
}

/// With `[signing]` in the config, C-y signs the reply it copies; the copy (as OSC 52
/// delivered it) verifies through the store with `crosstalk verify` and no `--key`.
#[test]
fn c_y_signs_the_reply_and_verify_checks_it_through_the_store() {
    let Some(t) = Term::new() else { return };
    let key = t.path("me.pem");
    t.cli(&["keys", "generate", "op@desk", "-o", key.to_str().unwrap()]);
    std::fs::write(
        t.path("config.toml"),
        format!(
            "[signing]\nkey = \"{}\"\npkid = \"op@desk\"\nformat = \"ed25519\"\n",
            key.display()
        ),
    )
    .unwrap();
    let file = t.path("first.txt");
    std::fs::write(
        &file,
        signed(1, "01KAQ4W5J8Z0000000000000M1", "a signed question"),
    )
    .unwrap();
    t.import(&[&file]);
    t.start(120, 60, &[]);
    t.wait_for("a signed question");
    t.type_text("r");
    t.wait_for("Reply to");
    t.type_text("A signed answer.");
    t.keys(&["C-y"]);
    let copied = t.wait_buffer("the signed reply", |b| b.contains("A signed answer."));
    assert!(
        copied.contains("\nsig: ed25519:pkid=op@desk;sig="),
        "{copied:?}"
    );
    t.keys(&["q"]);
    assert_eq!(t.wait_exit(), 0);
    let reply = t.path("reply.txt");
    std::fs::write(&reply, &copied).unwrap();
    let verified = t.cli(&["verify", reply.to_str().unwrap()]);
    assert!(verified.contains("✓"), "{verified}");
    assert!(verified.contains("op@desk"), "{verified}");
}

/// A REVOKE without a verified signature is flagged in the paste preview and, once imported,
/// withdraws nothing: `crosstalk consent` still reads the consent granted and lists the
/// REVOKE as not taken.
#[test]
fn an_unverified_revoke_is_flagged_and_withdraws_nothing() {
    let Some(t) = Term::new() else { return };
    t.start(120, 40, &[]);
    t.wait_for("Empty database");
    let grant = format!(
        "[[alice→op v1]]\nuser: kalle\nthread: {THREAD}\nmessage: 01KAQ4W5J8Z0000000000000M1\n\
         context: consent tmux\nintent: REQUEST\n\nmeta: privacy\nConsent: explicit_yes\n\
         Consent-ID: c-9\n\nbody: |\n  granted\nsig: none\n[[END]]\n"
    );
    let revoke = format!(
        "[[alice→op v1]]\nuser: kalle\nthread: {THREAD}\nparent: 01KAQ4W5J8Z0000000000000M1\n\
         message: 01KAQ4W5J8Z0000000000000M2\ncontext: consent tmux\nintent: REVOKE\n\n\
         meta: revocation\nType: consent\nConsent-ID: c-9\n\nbody: |\n  withdrawn\nsig: none\n[[END]]\n"
    );
    t.paste(&format!("{grant}\n{revoke}"), true);
    t.wait_for("withdrawn");
    t.keys(&["j"]);
    t.wait_for("unverified-revocation");
    t.keys(&["Enter"]);
    t.wait_for("Imported 2");
    t.keys(&["q"]);
    assert_eq!(t.wait_exit(), 0);
    let (status, out) = t.cli_status(&["consent", "--json"]);
    assert_eq!(status, 1, "an untaken REVOKE exits 1: {out}");
    let consent: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(consent["consents"][0]["state"], "granted", "{consent}");
    assert_eq!(
        consent["unverified_revocations"][0]["message"],
        "01KAQ4W5J8Z0000000000000M2"
    );
}

/// With `[relay] audit`, `y` on a signed envelope to relay copies it with this desk's
/// `meta: audit` hop; the copy (as OSC 52 delivered it) still verifies through the store,
/// comes back as the same message rather than a conflict, and a copy whose body was changed
/// after the hop shows the hop's digest flagged in the inspector's audit trail.
#[test]
fn a_relayed_envelope_with_an_audit_hop_still_verifies() {
    let Some(t) = Term::new() else { return };
    std::fs::write(
        t.path("config.toml"),
        "[operator]\naddresses = [\"op\"]\n[relay]\naudit = true\naudit_by = \"desk-kalle\"\n",
    )
    .unwrap();
    let original = signed(1, "01KAQ4W5J8Z0000000000000M1", "carry this on")
        .replace("[[alice→op v1]]", "[[alice→bob v1]]");
    // Re-signed for its new recipient (the banner is signed).
    let mut env = extract(&original, &Options::default()).envelopes[0]
        .envelope
        .clone();
    sign_envelope(
        &mut env,
        &SigningKey::from_bytes(&[1; 32]),
        SigFormat::Ed25519,
        "alice",
    );
    let file = t.path("first.txt");
    std::fs::write(&file, render(&env)).unwrap();
    t.import(&[&file]);
    t.start(120, 60, &[]);
    t.wait_for("carry this on");
    t.wait_for("⇢ to relay");
    t.keys(&["y"]);
    let copied = t.wait_buffer("the relayed copy", |b| b.contains("carry this on"));
    let s = t.wait_for("audit hop");
    assert!(
        s.contains("relayed (OSC 52) with this desk's audit hop"),
        "{s}"
    );
    for part in [
        "\nmeta: audit\n",
        "Received-By: desk-kalle\n",
        "Previous-Hop: alice\n",
        "Chain: alice → desk-kalle\n",
        "Hop-Digest: sha256:",
    ] {
        assert!(copied.contains(part), "{part} in {copied}");
    }
    t.keys(&["q"]);
    assert_eq!(t.wait_exit(), 0);

    let relayed = t.path("relayed.txt");
    std::fs::write(&relayed, &copied).unwrap();
    let verified = t.cli(&["verify", relayed.to_str().unwrap()]);
    assert!(verified.contains("✓"), "{verified}");
    assert!(
        verified.contains("1 audit hop outside the signature"),
        "{verified}"
    );
    // The copy that went through one more relay is the same message.
    let report = t.cli_json(&["import", relayed.to_str().unwrap()]);
    assert_eq!(report[0]["items"][0]["outcome"], "duplicate", "{report}");

    // Changed after the hop (and given a new id, so it is a message of its own).
    let forged = copied
        .replace("carry this on", "carry this on, and pay mallory")
        .replace("0000000000000M1", "0000000000000M9");
    t.restart(&[]);
    t.wait_for("carry this on");
    t.paste(&forged, true);
    t.wait_for("pay mallory");
    t.keys(&["Enter"]);
    t.wait_for("Imported 1");
    let s = t.wait_for("audit trail (1 hops, outside the signature)");
    assert!(s.contains("1. alice → desk-kalle"), "{s}");
    assert!(s.contains("digest ✗ does not match"), "{s}");
    assert!(
        s.contains("⚠ the content changed after hop 1 received it"),
        "{s}"
    );
    t.keys(&["q"]);
    assert_eq!(t.wait_exit(), 0);
}
