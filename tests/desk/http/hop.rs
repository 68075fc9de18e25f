//! The desk's side of a companion's hop (`/crosstalk/hop`): what a copied text becomes —
//! kept raw, imported, answered with what to put on the companion's clipboard — decided over
//! a store without sockets; then the endpoints on a real `serve` on loopback: the token is
//! required even there, and refusals are JSON.

use crate::helpers::http;

use crosstalk::contacts::{AddressBook, Contact, DeliveryMethod};
use crosstalk::ids::IdGenerator;
use crosstalk::store::Store;
use crosstalk::transport::http::hop::{HopAnswer, parse_refusal};
use crosstalk::transport::http::receive::Desk;
use crosstalk::transport::route::HopPlan as Hop;
use proptest::prelude::*;

fn envelope(ids: &IdGenerator, from: &str, to: &str, body: &str) -> (String, String) {
    let mut e = crosstalk::protocol::Envelope::new(from, to);
    let id = ids.next_id();
    e.set_header("thread", ids.next_id());
    e.set_header("message", &id);
    e.set_header("context", "companion");
    e.set_header("intent", "REQUEST");
    e.body = Some(body.to_string());
    e.sig = Some("none".into());
    (id, crosstalk::protocol::render(&e))
}

fn book() -> AddressBook {
    AddressBook {
        contacts: vec![Contact {
            name: "CHATGPT".into(),
            fence: true,
            preamble: Some("Be brief.".into()),
            ..Default::default()
        }],
        fenced_recipients: Vec::new(),
    }
}

struct Fixture {
    _dir: tempfile::TempDir,
    path: std::path::PathBuf,
    desk: Desk,
}

fn desk() -> Fixture {
    desk_with(book())
}

fn desk_with(book: AddressBook) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("desk.db");
    let mut store = Store::open(&path).unwrap();
    store
        .set_operator_addresses(&["kalle".to_string()])
        .unwrap();
    let desk = Desk::new(store, Some("kalle".into()), 1 << 20).with_carrier(book, None);
    Fixture {
        _dir: dir,
        path,
        desk,
    }
}

fn answer(a: &crosstalk::transport::http::receive::Answer) -> HopAnswer {
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.content_type, "application/json");
    serde_json::from_str(&a.body).unwrap_or_else(|e| panic!("{e}: {}", a.body))
}

fn relayed_by(path: &std::path::Path, id: &str) -> Option<String> {
    Store::open(path)
        .unwrap()
        .delivery(id)
        .unwrap()
        .and_then(|d| d.relayed)
        .map(|(_, how)| how)
}

/// A companion's copy for a contact that takes envelopes over HTTP is delivered by the desk
/// itself, through the same route as the app's `y`: the answer says so (the companion leaves
/// its clipboard alone), and the message is relayed by `http` with the peer's ACK in its
/// thread. Stored only (`?carry=0`), it is not delivered.
#[test]
fn a_hop_for_a_contact_over_http_is_delivered_by_the_desk() {
    let peer_dir = tempfile::tempdir().unwrap();
    let peer = http::Server::start(&peer_dir.path().join("peer.db"), &["--token", "tok"]);
    let mut book = book();
    book.contacts.push(Contact {
        name: "GEMINI".into(),
        delivery: DeliveryMethod::Http,
        url: Some(peer.url.clone()),
        token: Some("tok".into()),
        ..Default::default()
    });
    let mut f = desk_with(book);
    let ids = IdGenerator::new();
    let (kept, text) = envelope(&ids, "CLAUDE", "GEMINI", "Only kept.");
    let a = answer(&f.desk.hop("p", text.as_bytes(), false));
    assert!(matches!(&a.hop, Hop::Relay { .. }), "{a:?}");
    assert_eq!(relayed_by(&f.path, &kept), None);
    let (id, text) = envelope(&ids, "CLAUDE", "GEMINI", "Over the wire.");
    let a = answer(&f.desk.hop("p", text.as_bytes(), true));
    let Hop::Delivered { done, next } = &a.hop else {
        panic!("not delivered: {a:?}");
    };
    assert!(!a.carried, "the companion has nothing to put up");
    assert!(next.is_empty());
    assert_eq!(
        (
            done.message.as_str(),
            done.over.as_str(),
            done.delivered,
            done.recorded
        ),
        (id.as_str(), "http", true, true)
    );
    assert_eq!(done.line, "Delivered to GEMINI over HTTP: ACK");
    assert_eq!(relayed_by(&f.path, &id).as_deref(), Some("http"));
    let thread = Store::open(&f.path)
        .unwrap()
        .message(&id)
        .unwrap()
        .unwrap()
        .thread;
    let listed = Store::open(&f.path)
        .unwrap()
        .thread(&thread)
        .unwrap()
        .unwrap();
    assert!(
        (listed.messages.iter()).any(|m| m.envelope.intent_raw() == Some("ACK")),
        "the peer's ACK is in the thread"
    );
}

#[test]
fn one_envelope_for_someone_else_comes_back_ready_and_recorded() {
    let mut f = desk();
    let ids = IdGenerator::new();
    let (id, text) = envelope(&ids, "CLAUDE", "CHATGPT", "Which cache?");
    let copied = format!("Sure! Here it is:\n\n{text}\nAnything else?\n");
    let a = answer(&f.desk.hop("127.0.0.1:9", copied.as_bytes(), true));
    let Hop::Relay { ready, .. } = &a.hop else {
        panic!("{a:?}")
    };
    assert!(a.carried);
    assert_eq!(ready.message, id);
    assert!(ready.preamble && ready.fenced);
    assert_eq!(
        ready.text,
        format!("Be brief.\n\n```\n{}\n```\n", text.trim_end())
    );
    assert_eq!(a.arrival.as_ref().unwrap().imported, 1);
    assert_eq!(relayed_by(&f.path, &id).as_deref(), Some("companion"));
    // The raw copy, prose and all, is kept.
    let pastes: i64 = rusqlite::Connection::open(&f.path)
        .unwrap()
        .query_row("SELECT count(*) FROM pastes", [], |r| r.get(0))
        .unwrap();
    assert_eq!(pastes, 1);

    // Copied again once relayed: nothing to do; the second envelope to CHATGPT comes
    // without the preamble.
    let a = answer(&f.desk.hop("p", copied.as_bytes(), true));
    assert_eq!(a.hop, Hop::Nothing);
    let (_, text) = envelope(&ids, "CLAUDE", "CHATGPT", "Second.");
    let a = answer(&f.desk.hop("p", text.as_bytes(), true));
    let Hop::Relay { ready, .. } = &a.hop else {
        panic!("{a:?}")
    };
    assert!(!ready.preamble && ready.text.starts_with("```\n[[CLAUDE→CHATGPT v1]]"));
}

#[test]
fn a_copy_not_carried_is_stored_and_relayed_when_copied_again() {
    let mut f = desk();
    let ids = IdGenerator::new();
    let (id, text) = envelope(&ids, "CLAUDE", "GEMINI", "Spooled.");
    let a = answer(&f.desk.hop("p", text.as_bytes(), false));
    assert!(matches!(a.hop, Hop::Relay { .. }), "{a:?}");
    assert!(!a.carried);
    assert_eq!(relayed_by(&f.path, &id), None);
    // The same envelope copied again (in other prose): a duplicate still to relay, relayed.
    let a = answer(&f.desk.hop("p", format!("again:\n{text}").as_bytes(), true));
    assert!(a.carried, "{a:?}");
    assert_eq!(a.arrival.as_ref().unwrap().duplicates, 1);
    assert_eq!(relayed_by(&f.path, &id).as_deref(), Some("companion"));
}

#[test]
fn several_wait_and_are_put_up_one_by_one() {
    let mut f = desk();
    let ids = IdGenerator::new();
    let (a_id, a) = envelope(&ids, "CLAUDE", "GEMINI", "One.");
    let (b_id, b) = envelope(&ids, "CLAUDE", "CHATGPT", "Two.");
    let got = answer(&f.desk.hop("p", format!("{a}\n{b}").as_bytes(), true));
    let Hop::Several { waiting } = &got.hop else {
        panic!("{got:?}")
    };
    assert!(!got.carried);
    assert_eq!(
        waiting
            .iter()
            .map(|w| (w.message.as_str(), w.to.as_str()))
            .collect::<Vec<_>>(),
        [(a_id.as_str(), "GEMINI"), (b_id.as_str(), "CHATGPT")]
    );
    assert_eq!(relayed_by(&f.path, &a_id), None);
    for (id, to) in [(&a_id, "GEMINI"), (&b_id, "CHATGPT")] {
        let got = answer(&f.desk.put_up(id.as_bytes()));
        let Hop::Relay { ready, .. } = &got.hop else {
            panic!("{got:?}")
        };
        assert_eq!(ready.to, to);
        assert_eq!(relayed_by(&f.path, id).as_deref(), Some("companion"));
    }
    let missing = f.desk.put_up(b"01KAQ4W5J8Z00000000000000X");
    assert_eq!(missing.status, 404);
    assert!(parse_refusal(&missing.body).is_some(), "{}", missing.body);
}

#[test]
fn what_crosstalk_cannot_vouch_for_is_refused() {
    let mut f = desk();
    let ids = IdGenerator::new();
    let (_, to_me) = envelope(&ids, "CHATGPT", "kalle", "For you.");
    let got = answer(&f.desk.hop("p", to_me.as_bytes(), true));
    assert!(
        matches!(&got.hop, Hop::Refuse { reason } if reason.contains("addressed to you")),
        "{got:?}"
    );
    let invalid = "[[A→B v1]]\nthread: nope\nmessage: nope\nintent: REQUEST\nbody: |\n  x\nsig: none\n[[END]]\n";
    let got = answer(&f.desk.hop("p", invalid.as_bytes(), true));
    assert!(
        matches!(&got.hop, Hop::Refuse { reason } if reason.contains("bad-id")),
        "{got:?}"
    );
    assert!(!got.carried);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Any bytes: answered in JSON, kept raw, never carried unless one new envelope for
    /// someone else was in them.
    #[test]
    fn any_copy_gets_a_json_answer_and_is_kept(
        noise in prop::collection::vec(any::<u8>(), 0..200),
        cut in 0usize..200,
    ) {
        let mut f = desk();
        let ids = IdGenerator::new();
        let (_, text) = envelope(&ids, "CLAUDE", "GEMINI", "hi\u{1b}]52;c;AAAA\u{7}");
        let cut = cut.min(text.len());
        let cut = (0..=cut).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0);
        let mut body = text.as_bytes()[..cut].to_vec();
        body.extend(&noise);
        body.extend(&text.as_bytes()[cut..]);
        let a = f.desk.hop("p", &body, true);
        prop_assert_eq!(a.status, 200, "{}", a.body);
        let got: HopAnswer = serde_json::from_str(&a.body).unwrap();
        prop_assert_eq!(got.carried, matches!(got.hop, Hop::Relay { .. }));
        let pastes: i64 = rusqlite::Connection::open(&f.path)
            .unwrap()
            .query_row("SELECT count(*) FROM pastes", [], |r| r.get(0))
            .unwrap();
        prop_assert_eq!(pastes, 1);
    }
}

/// Posts `body` to `path` with extra header lines; the answer.
fn post(addr: std::net::SocketAddr, path: &str, headers: &[&str], body: &str) -> http::Raw {
    let mut req = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\n",
        body.len()
    );
    for h in headers {
        req.push_str(h);
        req.push_str("\r\n");
    }
    req.push_str("\r\n");
    req.push_str(body);
    http::raw(addr, req.as_bytes())
}

#[test]
fn the_hop_endpoints_need_the_token_even_on_loopback() {
    let dir = tempfile::tempdir().unwrap();
    let ids = IdGenerator::new();
    let (_, text) = envelope(&ids, "CLAUDE", "GEMINI", "Over the wire.");

    // No token configured: the binding's receive works, the hop does not.
    let open = http::Server::start(&dir.path().join("open.db"), &[]);
    let r = post(open.addr, "/crosstalk/hop", &[], &text);
    assert_eq!(r.status, 403, "{r:?}");
    assert!(
        r.header("content-type")
            .unwrap()
            .starts_with("application/json")
    );
    let e = parse_refusal(&r.body).unwrap();
    assert!(e.reason.contains("--token"), "{e:?}");
    assert_eq!(open.stop(), 0);

    let serve = http::Server::start(&dir.path().join("desk.db"), &["--token", "s3cret"]);
    let r = post(serve.addr, "/crosstalk/hop", &[], &text);
    assert_eq!(r.status, 401, "{r:?}");
    assert_eq!(parse_refusal(&r.body).unwrap().code, "E-PERM");
    let r = post(
        serve.addr,
        "/crosstalk/hop",
        &["Authorization: Bearer nope"],
        &text,
    );
    assert_eq!(r.status, 403, "{r:?}");
    let r = post(
        serve.addr,
        "/crosstalk/hop",
        &["Authorization: Bearer s3cret"],
        &text,
    );
    assert_eq!(r.status, 200, "{r:?}");
    let got: HopAnswer = serde_json::from_str(&r.body).unwrap();
    assert!(
        got.carried && matches!(got.hop, Hop::Relay { .. }),
        "{got:?}"
    );
    // `?carry=0`: stored, not recorded as relayed.
    let (id, other) = envelope(&ids, "CLAUDE", "GEMINI", "Spooled over the wire.");
    let r = post(
        serve.addr,
        "/crosstalk/hop?carry=0",
        &["Authorization: Bearer s3cret"],
        &other,
    );
    let got: HopAnswer = serde_json::from_str(&r.body).unwrap();
    assert!(!got.carried, "{got:?}");
    assert_eq!(serve.stop(), 0);
    assert_eq!(relayed_by(&dir.path().join("desk.db"), &id), None);
}
