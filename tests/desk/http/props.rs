//! Whatever a client posts, the desk answers one valid envelope: an ACK exactly when the body
//! was one storable envelope, else an ERROR whose status and code agree. Hostile bodies
//! (mangled envelopes, control characters, invalid UTF-8) included.

use crosstalk::ids::IdGenerator;
use crosstalk::protocol::{Options, extract};
use crosstalk::store::Store;
use crosstalk::transport::http::receive::Desk;
use proptest::prelude::*;

fn valid_envelope(ids: &IdGenerator, body: &str) -> String {
    let mut e = crosstalk::protocol::Envelope::new("CLAUDE", "CHATGPT");
    e.set_header("thread", ids.next_id());
    e.set_header("message", ids.next_id());
    e.set_header("context", "props");
    e.set_header("intent", "REQUEST");
    e.body = Some(body.to_string());
    e.sig = Some("none".into());
    crosstalk::protocol::render(&e)
}

/// Bodies: a valid envelope cut, spliced with noise, or noise alone.
fn bodies() -> impl Strategy<Value = Vec<u8>> {
    let ids = IdGenerator::new();
    let base = valid_envelope(&ids, "hello\u{1b}[31m red");
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..300),
        (0..base.len(), prop::collection::vec(any::<u8>(), 0..40)).prop_map(move |(cut, noise)| {
            let mut b = base.as_bytes()[..cut].to_vec();
            b.extend(noise);
            b.extend(&base.as_bytes()[cut..]);
            b
        }),
        "[^\u{0}]{0,200}".prop_map(|s| format!("[[A→B v1]]\n{s}\n[[END]]\n").into_bytes()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn every_answer_is_one_valid_envelope(body in bodies()) {
        let store = Store::open_in_memory().unwrap();
        let mut desk = Desk::new(store, Some("human://desk".into()), 1 << 20);
        let answer = desk.receive("127.0.0.1:1", &body);
        let found = extract(&answer.body, &Options::default());
        prop_assert_eq!(found.envelopes.len(), 1, "{}", answer.body);
        let env = &found.envelopes[0];
        prop_assert!(env.diagnostics.iter().all(|d| !d.is_error()), "{:?}\n{}", env.diagnostics, answer.body);
        prop_assert_eq!(env.envelope.banner.from.as_str(), "human://desk");
        let intent = env.envelope.intent_raw().unwrap_or_default().to_string();
        let code = env.envelope.meta_block("error").and_then(|m| m.get("Code")).map(str::to_string);
        match answer.status {
            200 => {
                prop_assert_eq!(intent.as_str(), "ACK");
                prop_assert!(answer.stored.is_some());
            }
            400 | 409 => prop_assert_eq!(code.as_deref(), Some("E-FORMAT")),
            413 => prop_assert_eq!(code.as_deref(), Some("E-TOO-LARGE")),
            s => prop_assert!(false, "unexpected status {}", s),
        }
    }
}

#[test]
fn a_stored_envelope_is_acknowledged_again_when_posted_again() {
    let ids = IdGenerator::new();
    let text = valid_envelope(&ids, "twice");
    let mut desk = Desk::new(Store::open_in_memory().unwrap(), None, 1 << 20);
    let first = desk.receive("p", text.as_bytes());
    let again = desk.receive("p", text.as_bytes());
    assert_eq!((first.status, again.status), (200, 200));
    assert_eq!(first.stored, again.stored);
    // Without a desk address, the recipient acknowledges.
    assert!(
        first.body.starts_with("[[CHATGPT→CLAUDE v1]]"),
        "{}",
        first.body
    );
}
