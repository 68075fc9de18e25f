//! Every list moves the same way: in the drafts list, the queue and the pickers, `j`/`k`,
//! `PgDn`/`PgUp` (`C-d`/`C-u`), `G`/`End` and `g`/`Home` move as they do in the panes.

use crate::helpers::support;

use crosstalk::app::App;
use crosstalk::app::popups::popup::Popup;
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

/// A database of `threads` one-message threads (`thread 0` … , the last imported the newest)
/// and one more thread of `messages` messages, each answering the one before (`message 0` …).
fn long_lists(threads: usize, messages: usize) -> crosstalk::store::Store {
    let mut store = crosstalk::store::Store::open_in_memory().unwrap();
    let g = crosstalk::ids::IdGenerator::new();
    let env = |thread: &str, parent: Option<&str>, id: &str, context: &str, body: &str| {
        let parent = parent.map_or(String::new(), |p| format!("parent: {p}\n"));
        format!(
            "[[CLAUDE→CHATGPT v1]]\nuser: kalle\nthread: {thread}\n{parent}message: {id}\n\
             context: {context}\nintent: REQUEST\nbody: |\n  {body}\nsig: none\n[[END]]\n"
        )
    };
    let long = g.next_id();
    let mut text = String::new();
    let mut parent: Option<String> = None;
    for i in 0..messages {
        let id = g.next_id();
        text.push_str(&env(
            &long,
            parent.as_deref(),
            &id,
            "long thread",
            &format!("message {i}"),
        ));
        parent = Some(id);
    }
    for i in 0..threads {
        let (thread, id) = (g.next_id(), g.next_id());
        text.push_str(&env(&thread, None, &id, &format!("thread {i}"), "one"));
    }
    store.import_text("t", &text, &Default::default()).unwrap();
    store
}

/// The rows drawn inside a pane's borders (its area as the app lays it out).
fn inside(t: &Harness, pane: ratatui::layout::Rect) -> String {
    let buf = t.buffer();
    let mut out = String::new();
    for y in pane.y + 1..pane.y + pane.height.saturating_sub(1) {
        for x in pane.x + 1..pane.x + pane.width.saturating_sub(1) {
            out.push_str(buf[(x, y)].symbol());
        }
        out.push('\n');
    }
    out
}

/// Whether the thread list's rows and the tree's rows show `thread` and `message`.
fn in_sight(t: &Harness, thread: &str, message: &str) -> bool {
    let areas = t.app.areas();
    inside(t, areas.list).contains(thread) && inside(t, areas.tree).contains(message)
}

/// Shrinking the terminal (120×40 to 80×24) keeps the selected thread and the selected
/// message in sight: the panes scroll to them, not only on the next move.
#[test]
fn a_resize_keeps_the_selected_thread_and_message_in_sight() {
    let mut t = harness(long_lists(40, 40), 120, 40);
    // The long thread is the oldest: the last row of the list. Its last message is selected
    // when it opens.
    t.keys("G");
    t.key(KeyCode::Enter, NONE);
    assert!(in_sight(&t, "long thread", "message 39"), "{}", t.screen());
    t.act(crosstalk::app::Action::Resize(80, 24));
    assert!(
        in_sight(&t, "long thread", "message 39"),
        "the selected thread and message are in sight:\n{}",
        t.screen()
    );
    // And back: a taller pane shows the rows above the selection again, none empty below.
    t.act(crosstalk::app::Action::Resize(120, 40));
    assert!(in_sight(&t, "thread 10", "message 28"), "{}", t.screen());
    assert!(in_sight(&t, "long thread", "message 39"), "{}", t.screen());

    // A message in the middle, selected at 80×24 near the bottom, stays in sight at a
    // smaller height too.
    t.act(crosstalk::app::Action::Resize(80, 24));
    t.keys("g");
    t.keys(&"j".repeat(20));
    t.act(crosstalk::app::Action::Resize(80, 20));
    assert!(in_sight(&t, "long thread", "message 20"), "{}", t.screen());
}

/// A database of `n` threads with no messages, thread `i` (id `T00000i`, context `topic i`)
/// active `i` seconds after the first: the list shows them newest first, `T{n-1}` on top.
fn many_threads(dir: &std::path::Path, n: usize) -> std::path::PathBuf {
    let db = dir.join("many.db");
    drop(crosstalk::store::Store::open(&db).unwrap());
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch(&format!(
        "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < {last})
         INSERT INTO threads (id, context, created_at, last_activity)
         SELECT printf('T%06d', i), 'topic ' || i, t, t
         FROM (SELECT i, strftime('%Y-%m-%dT%H:%M:%SZ', 1700000000 + i, 'unixepoch') AS t
               FROM n);",
        last = n - 1
    ))
    .unwrap();
    db
}

/// `G` on a list longer than a few pages selects its last (oldest) thread and shows it, with
/// only the list's end fetched; from there the list scrolls up across the fetched rows'
/// start as it scrolls down, `g` goes back to the first thread, and a state filter lists
/// its own end.
#[test]
fn the_end_of_a_long_list_is_one_page_away() {
    let dir = tempfile::tempdir().unwrap();
    let n = 5 * crosstalk::app::panes::thread_list::PAGE + 7;
    let mut t = support::harness_on(&many_threads(dir.path(), n), 120, 40);
    assert_eq!(selected_topic(&t), n - 1);
    t.keys("G");
    assert_eq!(selected_topic(&t), 0);
    assert!(t.screen().contains("topic 0"), "{}", t.screen());
    assert!(
        t.app.list.rows.len() <= crosstalk::app::panes::thread_list::PAGE,
        "only the end fetched: {} rows",
        t.app.list.rows.len()
    );
    // Up, row by row and page by page, across the start of what G fetched: every thread in
    // list order, none skipped or repeated.
    let mut seen = vec![selected_topic(&t)];
    for i in 0..(2 * crosstalk::app::panes::thread_list::PAGE + 10) {
        if i % 50 == 49 {
            t.key(KeyCode::PageUp, NONE);
            t.key(KeyCode::PageDown, NONE);
        }
        t.keys("k");
        seen.push(selected_topic(&t));
    }
    let expected: Vec<usize> = (0..seen.len()).collect();
    assert_eq!(seen, expected);
    let shown = t.app.list.selected_id().unwrap().replace('T', "topic ");
    let shown = format!(
        "topic {}",
        shown.trim_start_matches("topic ").trim_start_matches('0')
    );
    assert!(t.screen().contains(&shown), "{shown}: {}", t.screen());
    t.keys("g");
    assert_eq!(selected_topic(&t), n - 1);
    assert!(!t.app.list.before);
    // Down a page at a time deep into the list: each row in order.
    for _ in 0..40 {
        t.key(KeyCode::PageDown, NONE);
    }
    let at = t.app.list.selected;
    assert_eq!(selected_topic(&t), n - 1 - at);
    // With a filter on, G goes to the end of what it lists.
    t.keys("ftopic 1");
    t.key(KeyCode::Enter, NONE);
    while t.focused_pane() != crosstalk::app::Pane::List {
        t.key(KeyCode::Tab, NONE);
    }
    t.keys("G");
    assert_eq!(selected_topic(&t), 1);
}

/// The `i` of the thread (`T00000i`, `topic i`) the list shows selected.
fn selected_topic(t: &support::Harness) -> usize {
    let row = t.selected_thread_row();
    let rest = (row.split("topic ").nth(1)).unwrap_or_else(|| panic!("no topic in {row:?}"));
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().unwrap()
}

/// The first envelope's suggested body is a hint: shown selected, the first key typed
/// replaces it, so nothing is left of it to delete by hand; left as it is, C-y sends it.
#[test]
fn the_first_envelopes_suggested_body_is_replaced_by_what_is_typed() {
    let book = AddressBook {
        contacts: vec![Contact {
            name: "CLAUDE".into(),
            ..Default::default()
        }],
        ..Default::default()
    };
    let mut t = harness(demo_store(), 100, 30);
    t.app.settings.from = "human://kalle".into();
    t.app.contacts = book.clone();
    t.keys("N");
    t.key(KeyCode::Enter, NONE);
    t.keys("budget");
    t.key(KeyCode::Enter, NONE);
    assert!(t.composing());
    assert!(
        t.screen()
            .contains("Please answer with one envelope as described above."),
        "{}",
        t.screen()
    );
    t.keys("Is the budget final?");
    let screen = t.screen();
    assert!(screen.contains("Is the budget final?"), "{screen}");
    assert!(
        !screen.contains("Please answer with one envelope"),
        "the suggestion is gone: {screen}"
    );
    t.ctrl('y');
    let copy = t
        .copies()
        .pop()
        .unwrap_or_else(|| panic!("{}", t.status_line()));
    assert!(copy.contains("body: |\n  Is the budget final?\n"), "{copy}");

    // Left as it is, the suggestion is what goes.
    let mut t = harness(demo_store(), 100, 30);
    t.app.settings.from = "human://kalle".into();
    t.app.contacts = book;
    t.keys("N");
    t.key(KeyCode::Enter, NONE);
    t.keys("budget");
    t.key(KeyCode::Enter, NONE);
    t.ctrl('y');
    let copy = t
        .copies()
        .pop()
        .unwrap_or_else(|| panic!("{}", t.status_line()));
    assert!(
        copy.contains("  budget\n\n  Please answer with one envelope as described above.\n"),
        "{copy}"
    );
}
