//! A signed envelope goes on verifiable: whatever the store fills in on receipt (ids, a
//! reply's intent) and however the signer laid the text out, the text a copy, an export, a
//! mail or a POST carries still verifies with the signer's key, with or without this desk's
//! audit hop, and reads back as the same envelope.

use crosstalk::protocol::signature::{SigFormat, sign_bytes, sign_envelope, verify_parsed};
use crosstalk::protocol::{Options, extract, render};
use crosstalk::store::{Outcome, Store};
use ed25519_dalek::SigningKey;
use proptest::prelude::*;

fn key() -> SigningKey {
    SigningKey::from_bytes(&[9u8; 32])
}

fn verifies(text: &str) -> bool {
    let ex = extract(text, &Options::default());
    ex.envelopes.len() == 1 && verify_parsed(&ex.envelopes[0], text, &key().verifying_key()).is_ok()
}

/// An envelope's text up to and including its body, in the layout a signer might use.
#[derive(Debug, Clone)]
struct Draft {
    ids: bool,
    reply: bool,
    intent: bool,
    meta: bool,
    tabs: bool,
    body: Vec<String>,
}

fn draft() -> impl Strategy<Value = Draft> {
    (
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        // With text NFC changes: a combining accent, a Kelvin sign.
        prop::collection::vec(
            "[a-zA-Zé ]{0,12}( {0,4}[a-z\u{301}\u{212A}]{1,6}){0,2}",
            1..4,
        ),
    )
        .prop_map(|(ids, reply, intent, meta, tabs, body)| Draft {
            ids,
            reply,
            intent,
            meta,
            tabs,
            body,
        })
}

impl Draft {
    fn text(&self) -> String {
        let mut t = String::from("[[ALICE→DESK v1]]\nuser: alice\nsession: 2025-10-09T16Z s1\n");
        if self.ids {
            t.push_str("thread: 01J9J3D3M6A4M3WQX8G1ZQ0S7K\nmessage: 01J9J3DBC4N7P2Q3R5S7T9V1V1\n");
        }
        t.push_str("context: plans\n");
        if self.intent {
            t.push_str("intent: REQUEST\n");
        }
        if self.meta {
            t.push_str("\nmeta: routing\nX-Priority: high\n\n");
        }
        t.push_str(if self.reply {
            "response: |\n"
        } else {
            "body: |\n"
        });
        let indent = if self.tabs { "\t" } else { "  " };
        for line in &self.body {
            // A line of nothing but spaces would end the body: give it a letter.
            let line = if line.trim().is_empty() {
                "x"
            } else {
                line.trim_end()
            };
            t.push_str(&format!("{indent}{line}\n"));
        }
        t
    }

    /// The envelope signed over its canonical form (`canonical`) or over its bytes as written.
    fn signed(&self, canonical: bool) -> String {
        let text = self.text();
        if canonical {
            let full = format!("{text}sig: none\n[[END]]\n");
            let mut env = extract(&full, &Options::default())
                .envelopes
                .remove(0)
                .envelope;
            sign_envelope(&mut env, &key(), SigFormat::Ed25519, "alice@example.com");
            let out = render(&env);
            if self.reply {
                out.replacen("body: |", "response: |", 1)
            } else {
                out
            }
        } else {
            let sig = sign_bytes(text.as_bytes(), &key(), SigFormat::Jws, "alice@example.com");
            format!("{text}sig: {sig}\n[[END]]\n")
        }
    }
}

/// Ways the text reaches the desk.
fn wrapped(text: &str, how: u8) -> String {
    match how % 4 {
        0 => text.to_string(),
        1 => text.replace('\n', "\r\n"),
        2 => text.lines().map(|l| format!("> {l}\n")).collect(),
        _ => format!("Here it is:\n\n```\n{text}```\n"),
    }
}

proptest! {
    #[test]
    fn what_goes_on_still_verifies(d in draft(), canonical in any::<bool>(), how in 0u8..4) {
        let signed = d.signed(canonical);
        // Only envelopes that verify as they arrive are the subject here.
        prop_assume!(verifies(&signed));
        let pasted = wrapped(&signed, how);
        let mut store = Store::open_in_memory().unwrap();
        let report = store.import_text("paste", &pasted, &Options::default()).unwrap();
        prop_assert_eq!(report.items.len(), 1);
        prop_assert_eq!(report.items[0].outcome, Outcome::Imported);
        let id = report.items[0].message.clone().unwrap();
        let m = store.message(&id).unwrap().unwrap();

        let carried = m.carried();
        prop_assert!(verifies(&carried), "carried:\n{}\nsigned:\n{}", carried, signed);
        let view = store.thread(&m.thread).unwrap().unwrap();
        prop_assert!(verifies(&view.carried_text()));
        let now = jiff::Timestamp::from_second(1_760_000_000).unwrap();
        let hopped = store.relay_text(&m, Some("desk"), now).unwrap();
        prop_assert!(verifies(&hopped), "with a hop:\n{}", hopped);

        // A backup too, which keeps what NFC would change as it came.
        let exported = m.exported();
        prop_assert!(verifies(&exported), "exported:\n{}\nsigned:\n{}", exported, signed);
        prop_assert!(verifies(&view.exported_text()));
        let kept = extract(&exported, &Options::default()).envelopes.remove(0).envelope;

        // What goes on reads back as the envelope that came (ids the desk made aside).
        let sent = extract(&carried, &Options::default()).envelopes.remove(0).envelope;
        let came = extract(&signed, &Options::default()).envelopes.remove(0).envelope;
        prop_assert_eq!(&sent.body, &came.body);
        prop_assert_eq!(&sent.sig, &came.sig);
        prop_assert_eq!(&sent.meta, &came.meta);
        prop_assert_eq!(&kept.body, &came.body);
        prop_assert_eq!(&kept.sig, &came.sig);
    }
}
