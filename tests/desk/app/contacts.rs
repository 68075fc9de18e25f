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

/// A contact with `primer = true`: the first hop to its window (here `[relay]
/// copy_on_import`, as the watch and `>` make it) brings the primer after its preamble, so a
/// window opened without `N` learns the format; the next hop there is the envelope alone.
#[test]
fn a_contact_with_primer_gets_it_on_the_first_hop_only() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = harness(support::store_in(dir.path()), 120, 40);
    t.app.settings.copy_on_import = true;
    t.app.contacts = AddressBook {
        contacts: vec![Contact {
            name: "GEMINI".into(),
            address: Some("gemini://chat/42".into()),
            preamble: Some("Gemini, read this first.".into()),
            primer: true,
            ..Default::default()
        }],
        fenced_recipients: Vec::new(),
    };
    let g = crosstalk::ids::IdGenerator::new();
    for round in 0..2 {
        let (thread, id) = (g.next_id(), g.next_id());
        t.act(crosstalk::app::Action::Paste(format!(
            "[[claude://s/1→gemini://chat/42 v1]]\nuser: kalle\nthread: {thread}\n\
             message: {id}\ncontext: round {round}\nintent: REQUEST\nbody: |\n  hello\n\
             sig: none\n[[END]]\n"
        )));
        t.key(KeyCode::Enter, KeyModifiers::NONE);
        let copy = t.copies().pop().unwrap();
        if round == 0 {
            assert!(
                copy.starts_with("Gemini, read this first.\n\n# How to answer"),
                "{copy}"
            );
            assert!(
                t.status_line().contains("the primer first"),
                "{:?}",
                t.status_line()
            );
        } else {
            assert!(
                copy.starts_with("[[claude://s/1→gemini://chat/42 v1]]"),
                "{copy}"
            );
            assert!(!t.status_line().contains("first"), "{:?}", t.status_line());
        }
        let env = crosstalk::protocol::extract(&copy, &Default::default());
        let last = env.envelopes.last().unwrap();
        assert_eq!(
            last.envelope.context(),
            Some(format!("round {round}").as_str())
        );
    }
}
