//! `o`: the reader — a message over the whole screen at 80×24: its body rendered, scrolled,
//! searched with `/`, `n` and `N`, a numbered code block and the whole body copied (as written,
//! checked in what the copy sent), the next message read with `J`, and a 1 MB body read to its
//! end.

use crate::helpers::support;

use crosstalk::app::Action;
use ratatui::crossterm::event::{KeyCode, KeyModifiers};
use support::{harness, store_in};

const NONE: KeyModifiers = KeyModifiers::NONE;

fn id_at(t: &str, n: u128) -> String {
    let ms = t.parse::<jiff::Timestamp>().unwrap().as_millisecond() as u64;
    ulid::Ulid::from_parts(ms, n).to_string()
}

/// An envelope of `from` in `thread` answering `parent`, with `body` (indented here).
fn envelope(thread: &str, id: &str, parent: Option<&str>, from: &str, body: &str) -> String {
    let parent = parent.map(|p| format!("parent: {p}\n")).unwrap_or_default();
    let body: String = body.lines().map(|l| format!("  {l}\n")).collect();
    format!(
        "[[{from}→HUMAN v1]]\nuser: m\nsession: 2025-10-09T16Z a7f3d1\nthread: {thread}\n{parent}\
message: {id}\ncontext: the launch plan\nintent: RESPOND\nbody: |\n{body}sig: none\n[[END]]\n\n"
    )
}

const SH: &str = "cargo build --release\nstrip target/release/crosstalk";
const RUST: &str = "fn main() {\n    println!(\"hi\");\n}";

/// (first, second, text): a long markdown answer and a short reply to it.
fn thread() -> (String, String, String) {
    let thread = id_at("2025-10-09T16:00:00Z", 1);
    let (a, b) = (
        id_at("2025-10-09T16:00:00Z", 2),
        id_at("2025-10-09T16:05:00Z", 3),
    );
    let filler: String = (1..=60)
        .map(|i| format!("Step {i} of the plan.\n\n"))
        .collect();
    let body = format!(
        "# The plan\n\nFirst **build** it:\n\n```sh\n{SH}\n```\n\n{filler}A needle here.\n\n\
```rust\n{RUST}\n```\n\nAnd a second needle at the end.\n"
    );
    let text = envelope(&thread, &a, None, "CLAUDE", &body)
        + &envelope(&thread, &b, Some(&a), "GEMINI", "Agreed, **ship it**.");
    (a, b, text)
}

#[test]
fn o_reads_a_message_full_screen_searches_it_and_copies_a_code_block() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = store_in(dir.path());
    let (first, _second, text) = thread();
    store.import_text("t", &text, &Default::default()).unwrap();
    support::replay_arrivals(&mut store, &text);
    let mut t = harness(store, 80, 24);
    t.act(Action::Run(format!("open {first}")));
    t.keys("o");
    let s = t.screen();
    assert!(s.contains("CLAUDE → HUMAN · RESPOND"), "{s}");
    assert!(s.contains("context: the launch plan"), "{s}");
    assert!(s.contains("The plan") && !s.contains("# The plan"), "{s}");
    assert!(s.contains("cargo build --release"), "{s}");
    assert!(s.contains("rows 1–"), "{s}");
    for line in s.lines() {
        assert!(line.chars().count() <= 80, "{line}");
    }
    // The search: typed after /, Enter keeps it, n and N go between its matches.
    t.keys("/needle\n");
    assert!(
        t.status_line().contains("2 rows match “needle”"),
        "{}",
        t.status_line()
    );
    let s = t.screen();
    assert!(s.contains("A needle here."), "{s}");
    assert!(s.contains("/needle — match 1 of 2 (n, N)"), "{s}");
    t.keys("n");
    assert!(
        t.status_line().contains("Match 2 of 2."),
        "{}",
        t.status_line()
    );
    assert!(t.screen().contains("And a second needle at the end."));
    t.keys("n");
    assert!(t.status_line().contains("Match 1 of 2."), "wraps around");
    t.keys("N");
    assert!(t.status_line().contains("Match 2 of 2."));
    // Esc in the search line closes the line, not the reader.
    t.keys("/nothing-like-it");
    t.key(KeyCode::Esc, NONE);
    assert!(t.screen().contains("CLAUDE → HUMAN · RESPOND"));
    // The code blocks, as written: no highlighting, no frame, no number.
    t.keys("2");
    assert!(
        t.status_line().contains("Copied code block [2]"),
        "{}",
        t.status_line()
    );
    assert_eq!(t.copies().last().unwrap(), RUST);
    t.keys("1");
    assert_eq!(t.copies().last().unwrap(), SH);
    t.keys("3");
    assert!(
        t.status_line()
            .contains("No code block [3]: this body has 2")
    );
    t.keys("y");
    let body = t.copies().pop().unwrap();
    assert!(
        body.starts_with("# The plan\n") && body.contains("```rust\n"),
        "{body}"
    );
    // Scrolled to the end, the last row is in sight.
    t.keys("G");
    assert!(t.screen().contains("And a second needle at the end."));
    t.keys("g");
    assert!(t.screen().contains("rows 1–"));
    // J reads the reply in its place; q goes back to the tree.
    t.keys("J");
    let s = t.screen();
    assert!(
        s.contains("GEMINI → HUMAN") && s.contains("ship it") && !s.contains("**"),
        "{s}"
    );
    assert!(t.status_line().contains("Message 2 of 2."));
    t.keys("J");
    assert!(
        t.status_line()
            .contains("This is the last message of the thread.")
    );
    t.keys("K");
    assert!(t.screen().contains("CLAUDE → HUMAN"));
    t.keys("q");
    assert!(!t.screen().contains("rows 1–"));
    assert_eq!(t.app.selected_id(), Some(first.as_str()));
}

#[test]
fn a_one_megabyte_body_is_read_to_its_end_at_80_by_24() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = store_in(dir.path());
    let thread = id_at("2025-10-09T16:00:00Z", 1);
    let id = id_at("2025-10-09T16:00:00Z", 2);
    let mut body = String::new();
    let mut i = 0;
    // As much as one envelope may carry (1 MiB, the indentation included).
    while body.len() + 2 * body.lines().count() < 1_030_000 {
        i += 1;
        body.push_str(&format!(
            "Paragraph {i}: a line a model wrote, with *some* emphasis.\n\n"
        ));
    }
    body.push_str("THE LAST LINE");
    let text = envelope(&thread, &id, None, "CLAUDE", &body);
    let report = store.import_text("t", &text, &Default::default()).unwrap();
    assert_eq!(report.items[0].outcome, crosstalk::store::Outcome::Imported);
    let mut t = harness(store, 80, 24);
    t.act(Action::Run(format!("open {id}")));
    t.keys("o");
    t.keys("G");
    let s = t.screen();
    assert!(s.contains("THE LAST LINE"), "{s}");
    t.keys("/paragraph 7777:\n");
    assert!(
        t.screen().contains("Paragraph 7777: a line"),
        "{}",
        t.screen()
    );
    t.key(KeyCode::PageUp, NONE);
    t.key(KeyCode::Char(' '), NONE);
    assert!(t.screen().contains("Paragraph 7777"));
}
