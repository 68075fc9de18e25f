//! Every list moves the same way: in the drafts list, the queue and the pickers, `j`/`k`,
//! `PgDn`/`PgUp` (`C-d`/`C-u`), `G`/`End` and `g`/`Home` move as they do in the panes.

mod support;

use crosstalk::app::App;
use crosstalk::app::popup::Popup;
use crosstalk::contacts::{AddressBook, Contact};
use ratatui::crossterm::event::{KeyCode, KeyModifiers};
use support::{Harness, demo_store, harness};

const NONE: KeyModifiers = KeyModifiers::NONE;

/// Walks the open list with every moving key, checking where its selection lands each time.
fn walk(t: &mut Harness, what: &str, selected: fn(&App) -> usize) {
    let at = |t: &Harness| selected(&t.app);
    t.keys("G");
    let last = at(t);
    assert!(
        last >= 2,
        "{what}: G goes to the last of several rows, at {last}"
    );
    t.keys("g");
    assert_eq!(at(t), 0, "{what}: g");
    t.key(KeyCode::End, NONE);
    assert_eq!(at(t), last, "{what}: End");
    t.key(KeyCode::Home, NONE);
    assert_eq!(at(t), 0, "{what}: Home");
    t.keys("j");
    assert_eq!(at(t), 1, "{what}: j");
    t.keys("k");
    assert_eq!(at(t), 0, "{what}: k");
    t.key(KeyCode::PageDown, NONE);
    let page = at(t);
    assert!(
        page > 1 || last <= 1,
        "{what}: PgDn moves a page, at {page}"
    );
    t.key(KeyCode::PageUp, NONE);
    assert_eq!(at(t), 0, "{what}: PgUp");
    t.ctrl('d');
    assert_eq!(at(t), page, "{what}: C-d");
    t.ctrl('u');
    assert_eq!(at(t), 0, "{what}: C-u");
    t.key(KeyCode::Esc, NONE);
    assert!(t.app.popup.is_none(), "{what}: Esc closes");
}

#[test]
fn drafts_queue_and_pickers_move_like_the_panes() {
    let mut t = harness(demo_store(), 80, 24);
    for body in ["first", "second", "third", "fourth", "fifth"] {
        t.keys("n");
        t.keys(body);
        t.key(KeyCode::Esc, NONE);
    }
    t.keys("D");
    walk(&mut t, "drafts", |app| match &app.popup {
        Some(Popup::Drafts { selected, .. }) => *selected,
        p => panic!("not the drafts: {p:?}"),
    });

    t.keys("Q");
    walk(&mut t, "queue", |app| match &app.popup {
        Some(Popup::Queue(view)) => view.selected,
        p => panic!("not the queue: {p:?}"),
    });

    t.key(KeyCode::Enter, NONE);
    t.keys("E");
    walk(&mut t, "error codes", |app| match &app.popup {
        Some(Popup::ErrorCodes(p)) => p.selected,
        p => panic!("not the code picker: {p:?}"),
    });
    t.keys("EG");
    assert!(t.screen().contains("NACK"), "{}", t.screen());

    t.app.contacts = AddressBook {
        contacts: (1..=20)
            .map(|i| Contact {
                name: format!("contact{i}"),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    };
    t.key(KeyCode::Esc, NONE);
    t.keys("N");
    walk(&mut t, "contacts", |app| match &app.popup {
        Some(Popup::Conversation(c)) => c.selected,
        p => panic!("not the contact picker: {p:?}"),
    });
}

/// A paste while the new conversation's context is asked for goes into it, as it does into
/// the filter and the command line, not into a paste preview that drops the dialog.
#[test]
fn a_paste_into_the_new_conversations_context_lands_there() {
    let mut t = harness(demo_store(), 80, 24);
    t.app.contacts = AddressBook {
        contacts: vec![Contact {
            name: "CLAUDE".into(),
            ..Default::default()
        }],
        ..Default::default()
    };
    t.keys("N");
    t.key(KeyCode::Enter, NONE);
    t.act(crosstalk::app::Action::Paste("budget\nplan".into()));
    match &t.app.popup {
        Some(Popup::Conversation(c)) => {
            assert_eq!(
                c.context.as_ref().map(|p| p.text.as_str()),
                Some("budget plan")
            )
        }
        p => panic!("the dialog went: {p:?}"),
    }
    t.key(KeyCode::Enter, NONE);
    let c = t
        .app
        .composer
        .as_ref()
        .expect("the composer on the first envelope");
    assert_eq!(c.form.context, "budget plan");
}
