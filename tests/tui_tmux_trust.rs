//! The trust store in the real binary, in tmux: a key announced in an imported envelope is
//! pinned and its signed message shows ✓; a paste announcing a different key for the same id
//! shows ⚠ in the tree and the alarm in the inspector, `K` lists the key with the different
//! one seen; `crosstalk keys trust` settles it.

mod tmux;

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
