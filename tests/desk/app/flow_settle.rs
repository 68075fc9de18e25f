//! Settling by hand, driven by keys: in the queue (`Q`) `d` marks a row done, `x` dismisses
//! it and `u` brings back the last one settled, again and again; a draft being composed is
//! not dismissed there; in the thread list `a` archives a thread (and brings an archived one
//! back) and `U` undoes it, its queue items staying in `Q`.

use crate::helpers::support;

use crosstalk::app::Pane;
use crosstalk::app::popups::popup::Popup;
use crosstalk::store::{Section, StateFilter, Store};
use ratatui::crossterm::event::{KeyCode, KeyModifiers};
use support::{demo_store, harness, store_in};

const NONE: KeyModifiers = KeyModifiers::NONE;

fn env(from: &str, to: &str, thread: &str, id: &str, intent: &str, context: &str) -> String {
    format!(
        "[[{from}→{to} v1]]\nuser: kalle\nthread: {thread}\nmessage: {id}\n\
         context: {context}\nintent: {intent}\nbody: |\n  {intent} for {to}\nsig: none\n[[END]]\n"
    )
}

fn ids(n: usize) -> Vec<String> {
    let g = crosstalk::ids::IdGenerator::new();
    (0..n).map(|_| g.next_id()).collect()
}

/// Three threads: two envelopes to relay (`v[1]`, then `v[3]`) and one addressed to the
/// operator (`v[5]`), oldest first.
fn three_items(dir: &std::path::Path) -> (Store, Vec<String>) {
    let mut store = store_in(dir);
    store
        .set_operator_addresses(&["human@desk".into()])
        .unwrap();
    let v = ids(6);
    let text = [
        env("CLAUDE", "CHATGPT", &v[0], &v[1], "REQUEST", "first relay"),
        env("GEMINI", "CLAUDE", &v[2], &v[3], "REQUEST", "second relay"),
        env("CLAUDE", "human@desk", &v[4], &v[5], "ESCALATE", "for me"),
    ]
    .concat();
    store.import_text("t", &text, &Default::default()).unwrap();
    (store, v)
}

/// The open queue's rows: (section, message id), in order, and the selected index.
fn queue_rows(t: &support::Harness) -> (Vec<(Section, String)>, usize) {
    match &t.app.popup {
        Some(Popup::Queue(view)) => (
            view.rows()
                .into_iter()
                .map(|(s, r)| (s, r.message.clone()))
                .collect(),
            view.selected,
        ),
        _ => panic!("the queue is not open"),
    }
}

/// How message `id` is settled in the database, if it is.
fn settled(t: &support::Harness, id: &str) -> Option<String> {
    t.app
        .store
        .delivery(id)
        .unwrap()
        .unwrap()
        .settled
        .map(|s| s.1)
}

#[test]
fn queue_rows_are_marked_done_dismissed_and_brought_back_newest_first() {
    let dir = tempfile::tempdir().unwrap();
    let (store, v) = three_items(dir.path());
    let mut t = harness(store, 120, 40);
    let relay_marks =
        |t: &support::Harness| -> usize { t.app.list.rows.iter().map(|r| r.to_relay).sum() };
    assert_eq!(relay_marks(&t), 2);
    t.keys("Q");
    let s = t.screen();
    assert!(
        s.contains("Enter opens, d marks done, x dismisses, u undoes, Esc closes"),
        "{s}"
    );
    assert_eq!(queue_rows(&t).0.len(), 3);
    // `d` on the first row: it leaves at once, and the row after it takes its place.
    t.keys("d");
    assert_eq!(settled(&t, &v[1]).as_deref(), Some("done"));
    let status = t.status_line();
    assert!(
        status.starts_with("Marked done: REQUEST CLAUDE→CHATGPT")
            && status.ends_with("— u undoes."),
        "{status}"
    );
    let (rows, selected) = queue_rows(&t);
    assert_eq!(
        rows,
        [
            (Section::ToRelay, v[3].clone()),
            (Section::ToMe, v[5].clone())
        ]
    );
    assert_eq!(selected, 0);
    let s = t.screen();
    assert!(
        s.contains("to relay (1)") && s.contains("Marked done"),
        "{s}"
    );
    // The thread list's markers follow at once.
    assert_eq!(relay_marks(&t), 1);
    // `x` on the last row: the selection falls on the row before, the new last.
    t.keys("j");
    t.keys("x");
    assert_eq!(settled(&t, &v[5]).as_deref(), Some("dismissed"));
    assert!(
        t.status_line().starts_with("Dismissed: ESCALATE"),
        "{:?}",
        t.status_line()
    );
    assert_eq!(queue_rows(&t), (vec![(Section::ToRelay, v[3].clone())], 0));
    // Closed and opened again, `u` still brings back the last one settled, selected.
    t.key(KeyCode::Esc, NONE);
    t.keys("Q");
    t.keys("u");
    assert_eq!(settled(&t, &v[5]), None);
    assert!(
        t.status_line()
            .starts_with("Back under addressed to me: ESCALATE"),
        "{:?}",
        t.status_line()
    );
    let (rows, selected) = queue_rows(&t);
    assert_eq!(rows[selected], (Section::ToMe, v[5].clone()));
    // Then the one before it; then nothing is left to undo, and the line says what to do.
    t.keys("u");
    assert_eq!(settled(&t, &v[1]), None);
    let (rows, selected) = queue_rows(&t);
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[selected], (Section::ToRelay, v[1].clone()));
    assert_eq!(relay_marks(&t), 2);
    t.keys("u");
    assert!(
        t.status_line()
            .starts_with("Nothing settled here to undo: d marks"),
        "{:?}",
        t.status_line()
    );
    assert_eq!(queue_rows(&t).0.len(), 3);
    // The inspector says how a settled message was settled.
    t.keys("d");
    t.key(KeyCode::Esc, NONE);
    t.act(crosstalk::app::Action::Run(format!("open {}", v[1])));
    let line = t.app.inspector.delivery_line.clone().unwrap();
    assert!(line.contains("done by hand"), "{line}");
}

/// Settling that the database does not take (another process settled it meanwhile) is said,
/// and the queue read again.
#[test]
fn a_row_settled_elsewhere_meanwhile_is_read_again() {
    let dir = tempfile::tempdir().unwrap();
    let (store, v) = three_items(dir.path());
    let mut t = harness(store, 120, 40);
    t.keys("Q");
    let mut other = Store::open(&dir.path().join("t.db")).unwrap();
    other
        .settle(&v[1], crosstalk::store::Settled::Dismissed)
        .unwrap();
    t.keys("d");
    assert!(
        t.status_line().contains("was settled already (elsewhere)"),
        "{:?}",
        t.status_line()
    );
    assert_eq!(settled(&t, &v[1]).as_deref(), Some("dismissed"));
    assert_eq!(queue_rows(&t).0.len(), 2);
    // Nothing of its own to undo.
    t.keys("u");
    assert!(t.status_line().starts_with("Nothing settled here"));
    // A row erased meanwhile is said to be gone, and leaves.
    assert_eq!(
        queue_rows(&t),
        (
            vec![
                (Section::ToRelay, v[3].clone()),
                (Section::ToMe, v[5].clone())
            ],
            0
        )
    );
    other
        .erase(&crosstalk::store::EraseTarget::Message(v[3].clone()))
        .unwrap();
    t.keys("x");
    assert!(
        t.status_line()
            .ends_with("is gone (erased meanwhile): the queue is read again."),
        "{:?}",
        t.status_line()
    );
    assert_eq!(queue_rows(&t), (vec![(Section::ToMe, v[5].clone())], 0));
}

/// A draft being composed is not dismissed from the queue (its typed text would go without a
/// word): the line says where it is discarded. An envelope filed but never copied is
/// dismissed like any item, and leaves the drafts everywhere.
#[test]
fn a_draft_being_composed_is_refused_and_one_never_copied_dismissed() {
    let mut t = harness(demo_store(), 120, 40);
    t.keys("n");
    t.keys("half a thought");
    t.key(KeyCode::Esc, NONE);
    assert_eq!(t.app.store.drafts().unwrap().len(), 1);
    let unsent = t.app.store.unsent_messages(10).unwrap();
    assert_eq!(unsent.len(), 1, "the demo files one reply it never copied");
    let drafts_before = t.app.drafts;
    t.keys("Q");
    let (rows, _) = queue_rows(&t);
    let at = |id: &str| rows.iter().position(|(_, m)| m == id).unwrap();
    let composing = t.app.store.drafts().unwrap()[0].id.clone();
    for _ in 0..at(&composing) {
        t.keys("j");
    }
    for key in ["x", "d"] {
        t.keys(key);
        let status = t.status_line();
        assert!(
            status.starts_with("A draft being composed is not")
                && status.contains("Enter resumes it; D lists the drafts, where x discards one"),
            "{status}"
        );
        assert_eq!(t.app.store.drafts().unwrap().len(), 1);
    }
    // The filed one: dismissed, it is no draft any more (title bar, D, the queue).
    t.keys("g");
    for _ in 0..at(&unsent[0].message) {
        t.keys("j");
    }
    t.keys("x");
    assert!(
        t.status_line().starts_with("Dismissed"),
        "{:?}",
        t.status_line()
    );
    assert!(t.app.store.unsent_messages(10).unwrap().is_empty());
    assert_eq!(t.app.drafts, drafts_before - 1);
    let (rows, _) = queue_rows(&t);
    assert!(!rows.iter().any(|(_, m)| *m == unsent[0].message));
    t.keys("u");
    assert_eq!(t.app.store.unsent_messages(10).unwrap().len(), 1);
    assert_eq!(t.app.drafts, drafts_before);
}

#[test]
fn a_archives_a_thread_u_undoes_and_the_archived_view_brings_it_back() {
    let dir = tempfile::tempdir().unwrap();
    let (store, v) = three_items(dir.path());
    let mut t = harness(store, 120, 40);
    let listed = |t: &support::Harness| -> Vec<String> {
        t.app
            .list
            .rows
            .iter()
            .map(|r| r.summary.id.clone())
            .collect()
    };
    // Newest first: "for me", "second relay", "first relay". The middle one is archived.
    assert_eq!(listed(&t), [v[4].clone(), v[2].clone(), v[0].clone()]);
    t.keys("j");
    t.keys("a");
    let status = t.status_line();
    assert!(
        status
            == "Archived “second relay”; its queue items stay in Q. U undoes; s cycles to the archived threads, where a brings it back.",
        "{status}"
    );
    assert_eq!(listed(&t), [v[4].clone(), v[0].clone()]);
    // The row after it took its place, and is the thread open.
    assert_eq!(t.app.list.selected_id(), Some(v[0].as_str()));
    assert_eq!(t.app.tree.as_ref().unwrap().outline.id, v[0]);
    assert!(t.app.store.archived_at(&v[2]).unwrap().is_some());
    // Its queue item stays.
    let queue = t.app.store.queue(10).unwrap();
    assert!(queue.rows().any(|(_, r)| r.message == v[3]));
    // `U` brings it back, selected.
    t.keys("U");
    assert_eq!(listed(&t), [v[4].clone(), v[2].clone(), v[0].clone()]);
    assert_eq!(t.app.list.selected_id(), Some(v[2].as_str()));
    assert!(
        t.status_line()
            .starts_with("“second relay” is back in the thread list: U undoes"),
        "{:?}",
        t.status_line()
    );
    // Archived from the tree too (the open thread), then found with the archived threads,
    // where `a` brings it back.
    t.key(KeyCode::Enter, NONE);
    assert_eq!(t.focused_pane(), Pane::Tree);
    t.keys("a");
    assert_eq!(t.focused_pane(), Pane::List);
    assert_eq!(listed(&t), [v[4].clone(), v[0].clone()]);
    while t.app.list.state != StateFilter::Archived {
        t.keys("s");
    }
    assert_eq!(listed(&t), [v[2].clone()]);
    assert!(t.screen().contains("[archived] 1 of 3"), "{}", t.screen());
    t.keys("a");
    assert!(listed(&t).is_empty());
    assert!(t.app.store.archived_at(&v[2]).unwrap().is_none());
    assert!(t.status_line().contains("is back in the thread list"));
    // `U` undoes that too: archived again, so listed here again.
    t.keys("U");
    assert_eq!(listed(&t), [v[2].clone()]);
    // Then the archiving from the tree is undone; the first one was undone already, so
    // nothing is left.
    t.keys("U");
    assert!(t.app.store.archived_at(&v[2]).unwrap().is_none());
    t.keys("U");
    assert!(
        t.status_line()
            .starts_with("Nothing archived here to undo: a archives"),
        "{:?}",
        t.status_line()
    );
}

/// A queue row of an archived thread opens it with the archived threads, so the list's
/// selection is the thread shown in the tree.
#[test]
fn a_queue_row_of_an_archived_thread_opens_it_with_the_archived_threads() {
    let dir = tempfile::tempdir().unwrap();
    let (mut store, v) = three_items(dir.path());
    store.archive_thread(&v[0], true).unwrap();
    let mut t = harness(store, 120, 40);
    assert!(!t.app.list.rows.iter().any(|r| r.summary.id == v[0]));
    t.keys("Q");
    assert_eq!(queue_rows(&t).0[0].1, v[1]);
    t.key(KeyCode::Enter, NONE);
    assert_eq!(t.app.list.state, StateFilter::Archived);
    assert_eq!(t.app.list.selected_id(), Some(v[0].as_str()));
    assert_eq!(t.shown_message_id().as_deref(), Some(v[1].as_str()));
    assert!(
        t.status_line().contains("archived") && t.status_line().contains("a brings it back"),
        "{:?}",
        t.status_line()
    );
}

/// The keys follow the config: the queue's title and the status line name the keys bound.
#[test]
fn settling_keys_follow_the_config() {
    let dir = tempfile::tempdir().unwrap();
    let (store, v) = three_items(dir.path());
    let mut t = harness(store, 120, 40);
    t.app.keymap = crosstalk::app::keymap::Keymap::with_overrides([
        ("queue", "d", "down"),
        ("queue", "D", "done"),
        ("queue", "u", "up"),
        ("queue", "z", "undo"),
        ("browse", "a", "top"),
        ("browse", "e", "archive"),
    ])
    .unwrap();
    t.keys("Q");
    assert!(t.screen().contains("D marks done"), "{}", t.screen());
    t.keys("D");
    assert_eq!(settled(&t, &v[1]).as_deref(), Some("done"));
    assert!(
        t.status_line().ends_with("z undoes."),
        "{:?}",
        t.status_line()
    );
    t.keys("z");
    assert_eq!(settled(&t, &v[1]), None);
    t.key(KeyCode::Esc, NONE);
    t.keys("e");
    assert!(
        t.status_line().contains("where e brings it back"),
        "{:?}",
        t.status_line()
    );
}
