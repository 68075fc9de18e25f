//! Erasing from the app: `X` asks with exactly what goes, only `y` erases, Esc keeps
//! everything; a message erased from the tree leaves its thread open on what is left.

use crate::helpers::support;

use crosstalk::app::popups::popup::Popup;
use crosstalk::app::{Action, Pane};
use ratatui::crossterm::event::{KeyCode, KeyModifiers};
use support::{harness, store_in};

const NONE: KeyModifiers = KeyModifiers::NONE;

fn thread_of_three() -> String {
    let g = crosstalk::ids::IdGenerator::new();
    let (t, a, b) = (g.next_id(), g.next_id(), g.next_id());
    let env = |parent: Option<&str>, id: &str, body: &str| {
        let parent = parent.map_or(String::new(), |p| format!("parent: {p}\n"));
        format!(
            "[[CLAUDE→CHATGPT v1]]\nuser: kalle\nsession: s1\nthread: {t}\n{parent}message: {id}\n\
             context: erase me\nintent: REQUEST\nbody: |\n  {body}\nsig: none\n[[END]]\n"
        )
    };
    format!(
        "{}\n{}\n{}",
        env(None, &t, "the root"),
        env(Some(&t), &a, "Secretword in the middle"),
        env(Some(&a), &b, "the leaf")
    )
}

#[test]
fn x_asks_y_erases_esc_keeps() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = harness(store_in(dir.path()), 100, 30);
    t.act(Action::Paste(thread_of_three()));
    t.key(KeyCode::Enter, NONE);
    assert_eq!(t.focused_pane(), Pane::Tree);

    // The root, then one down: the middle message.
    t.keys("gj");
    let middle = t.app.selected_message().unwrap().id.clone();
    assert!(
        t.app
            .selected_message()
            .unwrap()
            .canonical
            .contains("Secretword"),
        "the middle message is selected"
    );

    t.keys("X");
    assert!(matches!(t.app.popup, Some(Popup::Erase(_))));
    let s = t.screen();
    assert!(s.contains("Erase for good?"), "{s}");
    assert!(s.contains("Erases 1 message, 1 raw paste"), "{s}");
    let Some(Popup::Erase(ask)) = &t.app.popup else {
        unreachable!()
    };
    assert_eq!(
        ask.plan.sharing_pastes, 2,
        "the other two came in the same paste"
    );
    assert_eq!(ask.plan.orphaned_replies, 1);
    assert!(s.contains("cannot be undone"), "{s}");
    // Erasing reaches this database only, and the question says so.
    assert!(
        s.contains("Backups and exports made before this") && s.contains("still hold"),
        "{s}"
    );

    // Esc keeps everything; so does any key other than y.
    t.key(KeyCode::Esc, NONE);
    assert!(t.app.popup.is_none());
    assert_eq!(t.status_line(), "Nothing erased.");
    assert!(t.app.store.message(&middle).unwrap().is_some());
    t.keys("X");
    t.keys("j");
    assert!(matches!(t.app.popup, Some(Popup::Erase(_))), "j is not yes");

    t.keys("y");
    assert!(t.app.popup.is_none());
    assert!(
        t.status_line().starts_with("Erased: 1 message"),
        "{:?}",
        t.status_line()
    );
    assert!(t.app.store.message(&middle).unwrap().is_none());
    // The thread stays open on what is left, with the middle's parent selected.
    let tree = t.app.tree.as_ref().expect("the thread is still open");
    assert_eq!(tree.outline.rows.len(), 2);
    assert!(
        t.app
            .selected_message()
            .unwrap()
            .canonical
            .contains("the root")
    );
    assert!(t.app.store.search("Secretword", 5).unwrap().is_empty());

    // From the list, X erases the whole thread.
    t.key(KeyCode::Esc, NONE);
    assert_eq!(t.focused_pane(), Pane::List);
    t.keys("X");
    assert!(t.screen().contains("thread “erase me”"), "{}", t.screen());
    t.keys("y");
    assert_eq!(t.thread_count(), 0);
    assert!(t.app.tree.is_none());
    assert!(
        t.status_line().contains("1 thread"),
        "{:?}",
        t.status_line()
    );
}

/// A thread without context is named by its id (shortened), not by an empty pair of quotes.
#[test]
fn a_thread_without_context_is_named_by_its_id() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = harness(store_in(dir.path()), 80, 24);
    let g = crosstalk::ids::IdGenerator::new();
    let (thread, message) = (g.next_id(), g.next_id());
    t.act(Action::Paste(format!(
        "[[CLAUDE→CHATGPT v1]]\nuser: kalle\nsession: s1\nthread: {thread}\nmessage: {message}\n\
         intent: REQUEST\nbody: |\n  no context here\nsig: none\n[[END]]\n"
    )));
    t.key(KeyCode::Enter, NONE);
    t.key(KeyCode::Esc, NONE);
    assert_eq!(t.focused_pane(), Pane::List);
    t.keys("X");
    let s = t.screen();
    assert!(!s.contains("“”"), "{s}");
    let stored = &t.app.list.rows[0].summary.id;
    let short: String = stored.chars().take(12).collect();
    assert!(s.contains(&format!("thread {short}…")), "{s}");
}
