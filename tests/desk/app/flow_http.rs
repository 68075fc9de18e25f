//! `y` for a contact with `delivery = "http"` posts the envelope to a real `crosstalk serve`
//! on loopback instead of copying it; the answer is recorded on the tick (the message relayed
//! by http, the ACK in the thread) and the status line says what came of it. The UI thread
//! never waits on the post: `y` returns at once.

use crate::helpers::http;
use crate::helpers::support;

use std::time::{Duration, Instant};

use crosstalk::app::Action;
use crosstalk::contacts::{Contact, DeliveryMethod};
use crosstalk::ids::IdGenerator;
use crosstalk::store::Store;
use ratatui::crossterm::event::{KeyCode, KeyModifiers};
use support::{harness, store_in};

fn contact(url: &str, token: Option<&str>) -> Contact {
    Contact {
        name: "CHATGPT".into(),
        delivery: DeliveryMethod::Http,
        url: Some(url.into()),
        token: token.map(str::to_string),
        ..Default::default()
    }
}

/// Ticks until the status line no longer says it is delivering (at most 20 s).
fn settle(t: &mut support::Harness) -> String {
    let start = Instant::now();
    while t.app.delivering() && start.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(20));
        t.act(Action::Tick);
    }
    t.status_line()
}

#[test]
fn y_delivers_over_http_and_records_the_ack() {
    let dir = tempfile::tempdir().unwrap();
    let srv_db = dir.path().join("srv.db");
    let server = http::Server::start(&srv_db, &["--token", "tok"]);
    let mut t = harness(store_in(dir.path()), 120, 40);
    t.app
        .contacts
        .contacts
        .push(contact(&server.url, Some("tok")));
    let (id, text) = http::envelope(&IdGenerator::new(), "Relay me over HTTP.");
    t.act(Action::Paste(text));
    t.key(KeyCode::Enter, KeyModifiers::NONE);
    let start = Instant::now();
    t.keys("y");
    assert!(
        start.elapsed() < Duration::from_millis(500),
        "y waited on the network"
    );
    assert!(
        t.status_line().contains("Delivering to CHATGPT over HTTP"),
        "{:?}",
        t.status_line()
    );
    assert!(t.copies().is_empty(), "nothing copied to the clipboard");
    let status = settle(&mut t);
    assert_eq!(status, "Delivered to CHATGPT over HTTP: ACK");
    let d = t.app.store.delivery(&id).unwrap().unwrap();
    assert_eq!(d.relayed.unwrap().1, "http");
    // The ACK is in the thread, under the message.
    let m = t.app.store.message(&id).unwrap().unwrap();
    let thread = t.app.store.thread(&m.thread).unwrap().unwrap();
    assert_eq!(thread.messages.len(), 2);
    assert_eq!(thread.messages[1].intent.as_deref(), Some("ACK"));
    assert_eq!(thread.messages[1].parent.as_deref(), Some(id.as_str()));
    assert_eq!(server.stop(), 0);
    assert!(
        Store::open(&srv_db)
            .unwrap()
            .message(&id)
            .unwrap()
            .is_some()
    );
}

#[test]
fn a_refusal_and_no_answer_are_said_on_the_status_line() {
    let dir = tempfile::tempdir().unwrap();
    let server = http::Server::start(&dir.path().join("srv.db"), &["--token", "tok"]);
    let mut t = harness(store_in(dir.path()), 120, 40);
    t.app
        .contacts
        .contacts
        .push(contact(&server.url, Some("wrong")));
    let (id, text) = http::envelope(&IdGenerator::new(), "Relay me.");
    t.act(Action::Paste(text));
    t.key(KeyCode::Enter, KeyModifiers::NONE);
    t.keys("y");
    let status = settle(&mut t);
    assert_eq!(
        status,
        "Refused by CHATGPT over HTTP: 403 E-PERM: The token is not accepted"
    );
    assert_eq!(t.app.store.delivery(&id).unwrap().unwrap().relayed, None);

    let url = server.url.clone();
    server.stop();
    t.app.contacts.contacts[0] = contact(&url, Some("tok"));
    t.keys("y");
    let status = settle(&mut t);
    assert!(
        status.starts_with("Not delivered to CHATGPT over HTTP: no answer from"),
        "{status}"
    );
}

#[test]
fn c_y_posts_a_composed_reply_and_stores_the_ack_under_it() {
    let dir = tempfile::tempdir().unwrap();
    let srv_db = dir.path().join("srv.db");
    let server = http::Server::start(&srv_db, &[]);
    let mut t = harness(store_in(dir.path()), 120, 40);
    t.app.contacts.contacts.push(Contact {
        name: "CLAUDE".into(),
        ..contact(&server.url, None)
    });
    let (_, text) = http::envelope(&IdGenerator::new(), "What do you think?");
    t.act(Action::Paste(text));
    t.key(KeyCode::Enter, KeyModifiers::NONE);
    t.keys("r");
    t.keys("Posted, not pasted.");
    t.ctrl('y');
    assert!(!t.composing());
    assert!(t.copies().is_empty(), "nothing copied to the clipboard");
    let status = settle(&mut t);
    assert_eq!(status, "Delivered to CLAUDE over HTTP: ACK");
    let reply = t
        .app
        .store
        .search("Posted", 5)
        .unwrap()
        .into_iter()
        .next()
        .expect("the reply is stored");
    let m = t.app.store.message(&reply.message).unwrap().unwrap();
    assert_eq!(m.direction, "composed");
    // Filed and carried (no longer a draft), a RESPOND awaiting no reply; the ACK stored
    // under it names it as parent, and answers nothing (an ACK is no answer).
    assert_eq!(m.status, "sent");
    assert_eq!(server.stop(), 0);
    assert!(
        Store::open(&srv_db)
            .unwrap()
            .message(&m.id)
            .unwrap()
            .is_some()
    );
}

/// The hop (a paste relayed on import, a watched copy, `>`) posts to a contact that takes
/// envelopes over HTTP, as `y` does, instead of putting it on the clipboard.
#[test]
fn the_hop_delivers_over_http_to_a_contact_that_takes_it() {
    let dir = tempfile::tempdir().unwrap();
    let srv_db = dir.path().join("srv.db");
    let server = http::Server::start(&srv_db, &[]);
    let mut t = harness(store_in(dir.path()), 120, 40);
    t.app.contacts.contacts.push(contact(&server.url, None));
    t.app.settings.copy_on_import = true;
    let (id, text) = http::envelope(&IdGenerator::new(), "Hop me over HTTP.");
    t.act(Action::Paste(text));
    t.key(KeyCode::Enter, KeyModifiers::NONE);
    assert!(t.copies().is_empty(), "nothing put on the clipboard");
    let status = settle(&mut t);
    assert_eq!(status, "Delivered to CHATGPT over HTTP: ACK");
    let d = t.app.store.delivery(&id).unwrap().unwrap();
    assert_eq!(d.relayed.unwrap().1, "http");
    assert_eq!(server.stop(), 0);
}

/// A peer that asks to be sent again later is waited out on the post's thread, as `send`
/// waits it out: `y` returns at once, the status line says what is waited for, then what
/// came of the post; a wait past `[send] retry_for` is given up at once and said so.
#[test]
fn a_peer_that_asks_to_wait_is_waited_out_off_the_ui_thread() {
    let dir = tempfile::tempdir().unwrap();
    let peer = http::Peer::start(vec![
        http::answer("429 Too Many Requests\r\nRetry-After: 1"),
        http::answer("200 OK"),
    ]);
    let mut t = harness(store_in(dir.path()), 120, 40);
    t.app.contacts.contacts.push(contact(&peer.url, None));
    let (id, text) = http::envelope(&IdGenerator::new(), "Relay me when you can.");
    t.act(Action::Paste(text));
    t.key(KeyCode::Enter, KeyModifiers::NONE);
    let start = Instant::now();
    t.keys("y");
    assert!(
        start.elapsed() < Duration::from_millis(500),
        "y waited on the network"
    );
    let mut said = Vec::new();
    while t.app.delivering() && start.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(20));
        t.act(Action::Tick);
        said.push(t.status_line());
    }
    assert!(
        said.iter()
            .any(|s| s == "CHATGPT answered 429 over HTTP: posting again in 1 s, as it asks…"),
        "{said:?}"
    );
    assert_eq!(t.status_line(), "Delivered to CHATGPT over HTTP: 200");
    assert_eq!(peer.requests(), 2);
    assert_eq!(
        t.app
            .store
            .delivery(&id)
            .unwrap()
            .unwrap()
            .relayed
            .unwrap()
            .1,
        "http"
    );

    let peer = http::Peer::start(vec![http::answer(
        "429 Too Many Requests\r\nRetry-After: 600",
    )]);
    t.app.contacts.contacts[0] = contact(&peer.url, None);
    let (_, text) = http::envelope(&IdGenerator::new(), "And me.");
    t.act(Action::Paste(text));
    t.key(KeyCode::Enter, KeyModifiers::NONE);
    t.keys("y");
    let status = settle(&mut t);
    assert_eq!(
        status,
        "Refused by CHATGPT over HTTP: status 429 without an ERROR envelope (it asks to wait 600 s; y posts it again)"
    );
    assert_eq!(peer.requests(), 1);
}
