//! The app notices what other processes write to its database (`crosstalk import` in
//! another terminal, `crosstalk watch`): on the tick the list and the open thread are read
//! again, and the operator's selection does not move.

use crate::helpers::support;

use crosstalk::app::Action;
use crosstalk::store::Store;
use support::harness;

/// A new thread, as another process would import it.
fn other_thread() -> String {
    "[[gemini://chat/1→claude://session/9 v1]]\nuser: op\nsession: 2026-03-10T14Z 9\nthread: 01KKD000000000000000000000\nmessage: 01KKD000000000000000000001\ncontext: from another process\nintent: REQUEST\n\nbody: |\n  hello from elsewhere\nsig: none\n[[END]]\n".to_string()
}

/// A reply to `parent` in `thread`.
fn reply(thread: &str, parent: &str, message: &str) -> String {
    format!(
        "[[chatgpt://thread/b5d20f→claude://session/7c2e91 v1]]\nuser: op\nsession: 2026-03-10T14Z 7c\nthread: {thread}\nmessage: {message}\nparent: {parent}\nintent: RESPOND\n\nbody: |\n  a late reply\nsig: none\n[[END]]\n"
    )
}

#[test]
fn imports_by_another_process_appear_on_the_tick_and_the_selection_stays() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let mut seeded = Store::open(&db).unwrap();
    crosstalk::tui::demo::seed(&mut seeded).unwrap();
    drop(seeded);
    let mut t = harness(Store::open(&db).unwrap(), 120, 40);
    // Select the second thread and a message in the middle of it.
    t.act(Action::Down);
    t.act(Action::Open);
    t.act(Action::Up);
    let thread = t.app.list.selected_id().unwrap().to_string();
    let message = t.shown_message_id().unwrap();
    let threads = t.thread_count();

    // Nothing changed: a tick reads nothing again.
    t.act(Action::Tick);
    assert_eq!(t.thread_count(), threads);

    let mut other = Store::open(&db).unwrap();
    let report = other
        .import_text("other", &other_thread(), &Default::default())
        .unwrap();
    assert_eq!(report.items.len(), 1);
    // Not before the tick: the app reads only when asked.
    assert_eq!(t.thread_count(), threads);
    t.act(Action::Tick);
    assert_eq!(t.thread_count(), threads + 1, "the new thread is listed");
    assert!(t.screen().contains("from another process"));
    assert_eq!(t.app.list.selected_id(), Some(thread.as_str()));
    assert_eq!(t.shown_message_id().as_deref(), Some(message.as_str()));

    // A reply into the open thread: the tree grows, the selection stays on its message.
    let rows = t.app.tree.as_ref().unwrap().outline.rows.len();
    other
        .import_text(
            "other",
            &reply(&thread, &message, "01KKD000000000000000000002"),
            &Default::default(),
        )
        .unwrap();
    t.act(Action::Tick);
    let tree = t.app.tree.as_ref().unwrap();
    assert_eq!(tree.outline.rows.len(), rows + 1);
    assert_eq!(t.shown_message_id().as_deref(), Some(message.as_str()));
    assert_eq!(t.app.list.selected_id(), Some(thread.as_str()));
}

#[test]
fn folds_survive_a_refresh() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let mut seeded = Store::open(&db).unwrap();
    crosstalk::tui::demo::seed(&mut seeded).unwrap();
    drop(seeded);
    let mut t = harness(Store::open(&db).unwrap(), 120, 40);
    t.act(Action::Open);
    t.act(Action::Top);
    t.act(Action::Collapse);
    let visible = t.app.tree.as_ref().unwrap().visible.len();
    let message = t.shown_message_id().unwrap();
    let mut other = Store::open(&db).unwrap();
    other
        .import_text("other", &other_thread(), &Default::default())
        .unwrap();
    t.act(Action::Tick);
    assert_eq!(t.app.tree.as_ref().unwrap().visible.len(), visible);
    assert_eq!(t.shown_message_id().as_deref(), Some(message.as_str()));
}
