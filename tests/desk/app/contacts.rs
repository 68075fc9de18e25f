//! The address book in the app: a contact's name typed in the composer becomes its address,
//! and a contact's `fence` decides over the older `[recipients]` table.

use crate::helpers::support;

use crosstalk::contacts::{AddressBook, Contact};
use crosstalk::store::Store;
use ratatui::crossterm::event::{KeyCode, KeyModifiers};
use support::harness;

fn book() -> AddressBook {
    AddressBook {
        contacts: vec![
            Contact {
                name: "Claude".into(),
                address: Some("claude://session/7c2e91".into()),
                ..Default::default()
            },
            // The harness fences `fenced-bot` through [recipients]; the contact says no.
            Contact {
                name: "fenced-bot".into(),
                address: Some("bot://x/1".into()),
                fence: false,
                preamble: None,
                ..Default::default()
            },
        ],
        fenced_recipients: vec!["fenced-bot".into()],
    }
}

#[test]
fn contact_names_in_the_composer_become_addresses() {
    let mut t = harness(Store::open_in_memory().unwrap(), 120, 40);
    t.app.contacts = book();
    t.keys("n");
    t.keys("hello");
    t.key(KeyCode::Tab, KeyModifiers::NONE);
    t.keys("human://kalle\nclaude\n");
    t.ctrl('y');
    assert!(!t.composing(), "{:?}", t.status_line());
    let copied = t.copies().pop().unwrap();
    assert!(
        copied.starts_with("[[human://kalle→claude://session/7c2e91 v1]]"),
        "{copied}"
    );
}

#[test]
fn a_contact_decides_the_fence_over_recipients() {
    let mut t = harness(Store::open_in_memory().unwrap(), 120, 40);
    t.app.contacts = book();
    t.keys("n");
    t.keys("hello");
    t.key(KeyCode::Tab, KeyModifiers::NONE);
    t.keys("human://kalle\nfenced-bot\n");
    t.ctrl('y');
    let copied = t.copies().pop().unwrap();
    assert!(
        copied.starts_with("[[human://kalle→bot://x/1 v1]]"),
        "{copied}"
    );
}

#[test]
fn n_without_contacts_says_how_to_add_them() {
    let mut t = harness(Store::open_in_memory().unwrap(), 120, 40);
    t.keys("N");
    assert!(t.app.popup.is_none());
    assert!(
        t.status_line().contains("[[contacts]]"),
        "{:?}",
        t.status_line()
    );
}
