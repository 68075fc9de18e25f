//! At 80 columns: thread rows keep their titles readable beside their markers, and
//! participants go by their contact names in the list and the tree, while names the address
//! book does not know stay the envelope's own, made safe.

use crate::helpers::support;

use crosstalk::contacts::{AddressBook, Contact};
use crosstalk::store::Store;
use support::{demo_store, harness};

fn book() -> AddressBook {
    AddressBook {
        contacts: vec![
            Contact {
                name: "CLAUDE".into(),
                address: Some("claude://session/7c2e91".into()),
                ..Default::default()
            },
            Contact {
                name: "GPT".into(),
                address: Some("chatgpt://thread/f07d3e".into()),
                ..Default::default()
            },
        ],
        fenced_recipients: Vec::new(),
    }
}

/// The demo's most marked row (unread, addressed to me and a missed relay, awaiting a
/// reply) kept 6 characters of its context at 80×24 ("⏳ 0s ✉1 ⚠1 incide…"); its markers are
/// a cell each now, and it keeps 15 and the `…`.
#[test]
fn the_demo_rows_keep_their_titles_at_80_columns() {
    let t = harness(demo_store(), 80, 24);
    let rows = t.thread_rows();
    let incident = (rows.iter())
        .find(|r| r.contains("incident"))
        .unwrap_or_else(|| panic!("{}", t.screen()));
    let title = incident
        .trim_start_matches(['●', '✉', '⧗', '✎', '⇢', '⚠', '✗', ' '])
        .split("  ")
        .next()
        .unwrap();
    assert!(incident.starts_with("●⚠⧗ "), "{incident:?}");
    assert!(title.chars().count() >= 15, "{incident:?}\n{}", t.screen());
    assert!(
        !rows.iter().any(|r| r.contains("⏳") || r.contains("✉1")),
        "{rows:?}"
    );
}

#[test]
fn participants_show_by_contact_name_in_the_list_and_the_tree() {
    let mut store = Store::open_in_memory().unwrap();
    let text = "[[claude://session/7c2e91→chatgpt://thread/f07d3e v1]]\n\
                message: 01JD8X0000000000000000000A\n\
                context: launch\n\
                intent: REQUEST\n\
                body: Plan the launch.\n\
                [[/claude://session/7c2e91]]\n";
    store.import_text("t", text, &Default::default()).unwrap();
    // A sender the book does not know keeps its own name.
    let other = "[[gemini://chat/42→chatgpt://thread/f07d3e v1]]\n\
                 message: 01JD8X0000000000000000000B\n\
                 body: hi\n\
                 [[/gemini://chat/42]]\n";
    store.import_text("u", other, &Default::default()).unwrap();
    let mut t = harness(store, 80, 24);
    t.app.contacts = book();
    let screen = t.screen();
    let rows = t.thread_rows();
    assert!(
        rows.iter().any(|r| r.contains("launch · CLAUDE,…")),
        "{screen}"
    );
    assert!(
        rows.iter().any(|r| r.contains("gemini://chat/42")),
        "{screen}"
    );
    assert!(!rows.iter().any(|r| r.contains("claude://")), "{screen}");
    // The tree names them too.
    let launch = rows.iter().position(|r| r.contains("launch")).unwrap();
    let at = t.app.list.selected;
    for _ in at..launch {
        t.keys("j");
    }
    for _ in launch..at {
        t.keys("k");
    }
    t.key(
        ratatui::crossterm::event::KeyCode::Enter,
        ratatui::crossterm::event::KeyModifiers::NONE,
    );
    let screen = t.screen();
    assert!(screen.contains("CLAUDE→GPT"), "{screen}");
}

/// Opens the demo thread whose row contains `name` in the tree.
fn open_thread(t: &mut support::Harness, name: &str) {
    use ratatui::crossterm::event::{KeyCode, KeyModifiers};
    while t.focused_pane() != crosstalk::app::Pane::List {
        t.key(KeyCode::BackTab, KeyModifiers::NONE);
    }
    let rows = t.thread_rows();
    let want = (rows.iter())
        .position(|r| r.contains(name))
        .unwrap_or_else(|| panic!("no {name}: {rows:?}"));
    t.keys("g");
    for _ in 0..want {
        t.keys("j");
    }
    t.key(
        ratatui::crossterm::event::KeyCode::Enter,
        ratatui::crossterm::event::KeyModifiers::NONE,
    );
}

/// The rows of the tree pane as drawn.
fn tree_rows(t: &support::Harness) -> Vec<String> {
    let buf = t.buffer();
    let pane = crosstalk::app::panes::layout::Areas::new(t.app.size).tree;
    (pane.y + 1..pane.bottom() - 1)
        .map(|y| {
            (pane.x + 1..pane.right() - 1)
                .map(|x| buf[(x, y)].symbol())
                .collect::<String>()
        })
        .filter(|r| !r.trim().is_empty())
        .collect()
}

#[test]
fn the_tree_indents_every_reply_when_the_config_says_so() {
    let mut t = harness(demo_store(), 120, 40);
    open_thread(&mut t, "Kyoto");
    let branches = tree_rows(&t);
    // By default the RESPOND, its parent's only reply, stays in its parent's column.
    assert!(branches[1].starts_with("● RESPOND"), "{branches:#?}");
    t.app.settings.ui.tree_indent = crosstalk::config::TreeIndent::Every;
    open_thread(&mut t, "flaky CI");
    open_thread(&mut t, "Kyoto");
    let every = tree_rows(&t);
    assert!(every[1].starts_with("└─● RESPOND"), "{every:#?}");
    assert!(every[2].starts_with("  ├─● ESCALATE"), "{every:#?}");
    assert_eq!(branches.len(), every.len());
}

/// The demo's v1.0 thread names no parents: the desk placed its replies, and the tree says
/// so on each (`≈`), from a dotted guide where one is drawn.
#[test]
fn an_inferred_placement_shows_as_such_in_the_tree() {
    let mut t = harness(demo_store(), 120, 40);
    t.app.settings.ui.tree_indent = crosstalk::config::TreeIndent::Every;
    open_thread(&mut t, "flaky CI");
    let rows = tree_rows(&t);
    let placed: Vec<&String> = rows.iter().filter(|r| r.contains("≈")).collect();
    assert!(!placed.is_empty(), "{rows:#?}");
    assert!(
        placed.iter().all(|r| r.contains("└┄") || r.contains("├┄")),
        "{rows:#?}"
    );
    assert!(
        !rows[0].contains("≈"),
        "the first message is no reply: {rows:#?}"
    );
}

/// The footer line, as drawn above the status line.
fn footer(t: &support::Harness) -> String {
    let screen = t.screen();
    let rows: Vec<&str> = screen.lines().collect();
    rows[rows.len() - 2].trim_end().to_string()
}

/// The footer hints the keys of the focused pane and of the selection, from the keymap in
/// force, whole hints only, within 80 columns.
#[test]
fn the_footer_shows_the_keys_of_the_focused_pane_and_the_selection() {
    use ratatui::crossterm::event::{KeyCode, KeyModifiers};
    let mut t = harness(demo_store(), 80, 24);
    while t.focused_pane() != crosstalk::app::Pane::List {
        t.key(KeyCode::BackTab, KeyModifiers::NONE);
    }
    let list = footer(&t);
    assert!(list.starts_with(" ?  help "), "{list:?}");
    for hint in ["t  next to do", "Enter  open", "f  filter", "s  by state"] {
        assert!(list.contains(hint), "{hint}: {list:?}");
    }
    assert!(!list.contains("raw / canonical"), "{list:?}");
    t.key(KeyCode::Tab, KeyModifiers::NONE);
    let tree = footer(&t);
    assert!(
        tree.contains("r  reply") && tree.contains("Space  fold"),
        "{tree:?}"
    );
    assert!(!tree.contains("f  filter"), "{tree:?}");
    t.key(KeyCode::Tab, KeyModifiers::NONE);
    let inspector = footer(&t);
    assert!(inspector.contains("v  raw / canonical"), "{inspector:?}");
    assert!(inspector.contains("H  headers"), "{inspector:?}");
    // A message to relay selected: relaying it comes first.
    t.keys("t");
    assert!(
        t.status_line().starts_with("to relay: "),
        "{}",
        t.status_line()
    );
    let relay = footer(&t);
    assert!(
        relay.starts_with(" ?  help  y  relay it  t  next to do "),
        "{relay:?}"
    );
    // Addressed to the operator: answering it.
    let mut n = 0;
    while !t.status_line().starts_with("addressed to me: ") && n < 20 {
        t.keys("t");
        n += 1;
    }
    let mine = footer(&t);
    assert!(mine.starts_with(" ?  help  r  answer it "), "{mine:?}");
    for line in [list, tree, inspector, relay, mine] {
        assert!(crosstalk::cells::width(&line) <= 80, "{line:?}");
    }
}

/// A key rebound in `[keys.browse]` is the key the footer shows.
#[test]
fn the_footer_shows_rebound_keys() {
    let mut t = harness(demo_store(), 80, 24);
    t.app.keymap = crosstalk::app::keymap::Keymap::with_overrides([
        ("browse", "T", "next_to_do"),
        ("browse", "t", "top"),
    ])
    .unwrap();
    let line = footer(&t);
    assert!(line.contains(" T  next to do "), "{line:?}");
}

/// `?` help narrows as the operator types: letters filter the rows (keys or words), `q`
/// too once a filter is begun; Backspace widens; Esc clears, then closes. Before a filter,
/// `q` closes as it always did, and `/` begins a filter to look for it.
#[test]
fn help_is_filtered_by_typing() {
    use ratatui::crossterm::event::{KeyCode, KeyModifiers};
    let esc = |t: &mut support::Harness| t.key(KeyCode::Esc, KeyModifiers::NONE);
    let mut t = harness(demo_store(), 80, 24);
    t.keys("?");
    assert!(t.screen().contains("type to filter"), "{}", t.screen());
    t.keys("relay");
    let s = t.screen();
    assert!(s.contains("filter: relay▏"), "{s}");
    assert!(s.contains("next message that needs you"), "{s}");
    assert!(s.contains("Browse (thread list"), "{s}");
    assert!(
        !s.contains("copy envelope") && !s.contains("Composer"),
        "{s}"
    );
    // `q` is typed once filtering: nothing holds "relayq".
    t.keys("q");
    let s = t.screen();
    assert!(t.app.popup.is_some(), "q closed help while filtering");
    assert!(s.contains("No key or description holds “relayq”"), "{s}");
    t.key(KeyCode::Backspace, KeyModifiers::NONE);
    assert!(t.screen().contains("next message that needs you"));
    // Esc clears the filter, and help shows every key again; a second Esc closes.
    esc(&mut t);
    let s = t.screen();
    assert!(
        s.contains("type to filter") && s.contains("copy envelope"),
        "{s}"
    );
    esc(&mut t);
    assert!(t.app.popup.is_none());
    // Before a filter, q closes help; `/` begins one to look for q itself.
    t.keys("?q");
    assert!(t.app.popup.is_none());
    t.keys("?/q");
    let s = t.screen();
    assert!(s.contains("filter: q▏"), "{s}");
    assert!(s.contains("quit"), "{s}");
    assert!(!s.contains("copy envelope"), "{s}");
}
