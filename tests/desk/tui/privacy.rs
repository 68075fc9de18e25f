//! Personal data and consent in the real binary, in tmux: an envelope declaring `PII: none`
//! whose body holds a phone number is warned about in the inspector and badged in the tree; a reply carrying an
//! e-mail address into that thread, whose consent has expired, is not copied at the first
//! C-y; M-r redacts it and the next C-y copies the redacted envelope (OSC 52). A received
//! envelope for someone else holding a phone number, whose consent has expired, is relayed
//! only at the second `y`.

use crate::helpers::tmux;

use tmux::{Term, status_line};

const THREAD: &str = "01KAQ4W5J8Z0000000000000P1";
const MESSAGE: &str = "01KAQ4W5J8Z0000000000000P2";

const EXPIRED: &str = "[[claude→op v1]]
user: kalle
thread: 01KAQ4W5J8Z0000000000000P1
message: 01KAQ4W5J8Z0000000000000P2
context: privacy tmux
intent: REQUEST

meta: privacy
PII: none
Consent: explicit_yes_2025-10-09T16:00Z
Scope: pii
Expires: 2025-10-10T16:00Z
Consent-ID: kalle-2025-10-09

body: |
  Call the clinic on +49 30 1234567 and tell me who to write to.
sig: none
[[END]]
";

#[test]
fn undeclared_pii_is_warned_and_expired_consent_asks_before_copying_pii() {
    let Some(t) = Term::new() else { return };
    t.start(120, 40, &[]);
    t.wait_for("Empty database");
    // The paste preview names the problem before anything is imported.
    t.paste(EXPIRED, true);
    let s = t.wait_for("pii-undeclared");
    assert!(s.contains("a phone number"), "{s}");
    t.keys(&["Enter"]);
    t.wait_for("Imported 1");
    // The inspector names the personal data the body holds.
    let s = t.wait_for("1 phone number");
    assert!(tmux::has_row(&s, &["pii", "1 phone number"]), "{s}");
    // The tree marks the message as holding personal data.
    assert!(
        tmux::has_row(&s, &["REQUEST", "PII claude→op", "Call the clinic"]),
        "{s}"
    );
    let consent = t.cli(&["consent"]);
    assert!(consent.contains("expired  kalle-2025-10-09"), "{consent}");

    t.type_text("r");
    t.wait_for("Reply to");
    t.type_text("Write to ada@example.org please.");
    t.keys(&["C-y"]);
    let s = t.wait_for("again copies it anyway");
    let status = status_line(&s);
    assert!(status.contains("consent is expired"), "{status}");
    assert!(t.buffer().is_none_or(|b| !b.contains("ada@example.org")));

    t.keys(&["M-r"]);
    t.wait_for("Redacted 1 e-mail address");
    t.keys(&["C-y"]);
    let copied = t.wait_buffer("the redacted reply", |b| b.contains("[EMAIL]"));
    assert!(copied.contains("Write to [EMAIL] please."), "{copied:?}");
    assert!(copied.contains("\nPII: redacted\n"), "{copied:?}");
    assert!(copied.contains(&format!("parent: {MESSAGE}")), "{copied:?}");
    assert!(copied.contains(&format!("thread: {THREAD}")), "{copied:?}");
    assert!(!copied.contains("ada@example.org"));
    t.keys(&["q"]);
    assert_eq!(t.wait_exit(), 0);
}

const FOR_CHATGPT: &str = "[[claude→chatgpt v1]]
user: kalle
thread: 01KAQ4W5J8Z0000000000000R1
message: 01KAQ4W5J8Z0000000000000R2
context: privacy relay tmux
intent: REQUEST

meta: privacy
PII: present
Consent: explicit_yes_2025-10-09T16:00Z
Expires: 2025-10-10T16:00Z

body: |
  Please call the clinic on +49 30 1234567.
sig: none
[[END]]
";

#[test]
fn relaying_personal_data_whose_consent_expired_asks_first() {
    let Some(t) = Term::new() else { return };
    t.start(120, 40, &[]);
    t.wait_for("Empty database");
    t.paste(FOR_CHATGPT, true);
    t.wait_for("Please call the clinic");
    t.keys(&["Enter"]);
    t.wait_for("Imported 1");
    t.type_text("y");
    let s = t.wait_for("y again copies it anyway");
    let status = status_line(&s);
    assert!(
        status.contains("its body holds 1 phone number and the thread's consent is expired"),
        "{status}"
    );
    assert!(t.buffer().is_none_or(|b| !b.contains("1234567")));
    t.type_text("y");
    let copied = t.wait_buffer("the relayed envelope", |b| b.contains("1234567"));
    assert!(copied.contains("[[claude→chatgpt v1]]"), "{copied:?}");
    t.wait_for("relayed");
    t.keys(&["q"]);
    assert_eq!(t.wait_exit(), 0);
}
