//! Writing as a terminal user expects, read off the drawn screen: readline keys in the
//! composer, the prompts and the filter; undo by word; the intent picker's list; the copy seen
//! whole before C-y at 80×24; `[compose] editor_first`.

use crate::helpers::support;

use crosstalk::app::Action;
use crosstalk::contacts::{AddressBook, Contact};
use crosstalk::store::Store;
use ratatui::crossterm::event::{KeyCode, KeyModifiers};
use support::{demo_store, harness};

const NONE: KeyModifiers = KeyModifiers::NONE;
const ALT: KeyModifiers = KeyModifiers::ALT;
const CTRL: KeyModifiers = KeyModifiers::CONTROL;

fn book() -> AddressBook {
    AddressBook {
        contacts: vec![Contact {
            name: "Claude".into(),
            address: Some("claude://session/7c2e91".into()),
            ..Default::default()
        }],
        fenced_recipients: Vec::new(),
    }
}

/// The rows of the body box on screen, without its borders.
fn body_rows(screen: &str) -> Vec<String> {
    let rows: Vec<&str> = screen.lines().collect();
    let Some(top) = rows.iter().position(|r| r.contains("body (")) else {
        return Vec::new();
    };
    (rows[top + 1..].iter())
        .take_while(|r| !r.starts_with('└'))
        .map(|r| {
            let inside = r.split('│').nth(1).unwrap_or_default();
            inside.trim_end().to_string()
        })
        .collect()
}

/// `N`'s suggested body is replaced by the first key, and the body is then written with
/// readline's keys; what C-y copies is exactly what was meant. The context prompt edits so
/// too.
#[test]
fn ns_suggestion_goes_and_the_body_is_written_with_readline_keys() {
    for (w, h) in [(80, 24), (200, 50)] {
        let mut t = harness(Store::open_in_memory().unwrap(), w, h);
        t.app.contacts = book();
        t.app.settings.from = "human://kalle".into();
        t.keys("N");
        t.key(KeyCode::Enter, NONE);
        t.keys("kyoto trpi");
        t.ctrl('w');
        t.keys("trip");
        assert!(
            t.screen().contains("context: kyoto trip▏"),
            "{}",
            t.screen()
        );
        t.key(KeyCode::Enter, NONE);
        assert!(
            t.screen().contains("Please answer with one envelope"),
            "{}",
            t.screen()
        );
        // The suggestion is selected: Backspace clears it all.
        t.key(KeyCode::Backspace, NONE);
        assert_eq!(body_rows(&t.screen())[0], "", "{}", t.screen());
        t.keys("new world");
        t.ctrl('a');
        t.keys("Hello ");
        t.ctrl('e');
        t.keys(" extra words");
        t.ctrl('w');
        t.key(KeyCode::Backspace, ALT);
        t.key(KeyCode::Backspace, NONE);
        t.keys(".");
        t.key(KeyCode::Char('b'), ALT);
        t.key(KeyCode::Char('b'), ALT);
        t.keys("brave ");
        // C-k kills to the end, M-y puts it back (C-y copies in the composer).
        t.ctrl('k');
        assert_eq!(body_rows(&t.screen())[0], "Hello brave", "{}", t.screen());
        t.key(KeyCode::Char('y'), ALT);
        // M-f, C-Right, M-d and C-b, C-f move and kill by words and characters.
        t.ctrl('a');
        t.key(KeyCode::Char('f'), ALT);
        t.key(KeyCode::Right, CTRL);
        t.key(KeyCode::Char('d'), ALT);
        t.keys(" bold");
        t.ctrl('b');
        t.ctrl('f');
        assert_eq!(
            body_rows(&t.screen())[0],
            "Hello brave bold world.",
            "{}",
            t.screen()
        );
        // Undo takes back the word typed, then the word killed.
        t.ctrl('z');
        assert_eq!(body_rows(&t.screen())[0], "Hello brave world.");
        t.ctrl('z');
        assert_eq!(body_rows(&t.screen())[0], "Hello brave new world.");
        t.ctrl('y');
        let copied = t.copies().pop().expect("copied");
        let read = crosstalk::protocol::extract(&copied, &Default::default());
        let env = &read.envelopes.last().expect("the envelope").envelope;
        assert_eq!(
            env.body.as_deref(),
            Some("Hello brave new world."),
            "{copied}"
        );
        assert_eq!(env.context(), Some("kyoto trip"));
    }
}

/// At 80×24 the preview beside the form holds six rows; C-o shows the copy over the whole
/// screen, scrolled to its end, so the body and `sig:` are seen before C-y copies from there.
#[test]
fn the_whole_copy_is_seen_before_it_is_copied_at_80x24() {
    let mut t = harness(Store::open_in_memory().unwrap(), 80, 24);
    t.app.contacts = book();
    t.keys("n");
    let body: Vec<String> = (1..=12).map(|i| format!("line {i} of the body")).collect();
    t.act(Action::Paste(body.join("\n")));
    t.key(KeyCode::Tab, NONE);
    t.keys("human://op\nclaude\n");
    let s = t.screen();
    assert!(s.contains("C-o shows it all"), "{s}");
    assert!(!s.contains("[[END]]"), "{s}");
    t.ctrl('o');
    let s = t.screen();
    assert!(
        s.contains("[[human://op→claude://session/7c2e91 v1]]"),
        "{s}"
    );
    assert!(s.contains("1–19/21 ↑↓ · C-y copies · Esc back"), "{s}");
    // Typing does not reach the form out of sight; the list keys scroll.
    t.keys("G");
    let s = t.screen();
    for want in ["  line 12 of the body", "sig: none", "[[END]]"] {
        assert!(s.contains(want), "{want}:\n{s}");
    }
    t.keys("g");
    assert!(t.screen().contains("[[human://op→"), "{}", t.screen());
    t.key(KeyCode::PageDown, NONE);
    t.key(KeyCode::PageDown, NONE);
    assert!(t.screen().contains("[[END]]"), "{}", t.screen());
    // Esc goes back to the form, and the composer stays open.
    t.key(KeyCode::Esc, NONE);
    assert!(t.screen().contains("C-o shows it all"), "{}", t.screen());
    t.ctrl('o');
    t.ctrl('y');
    assert!(!t.composing(), "{}", t.screen());
    let copied = t.copies().pop().unwrap();
    assert!(copied.ends_with("sig: none\n[[END]]\n"), "{copied}");
    assert!(copied.contains("  line 12 of the body\n"), "{copied}");
}

/// At 80×24 the focused picker lists every intent on two rows, the current one marked; `C`
/// jumps to CLOSE.
#[test]
fn the_intent_picker_lists_every_intent_at_80x24() {
    let mut t = harness(Store::open_in_memory().unwrap(), 80, 24);
    t.keys("n");
    for _ in 0..3 {
        t.key(KeyCode::Tab, NONE);
    }
    let s = t.screen();
    let rows: Vec<&str> = s
        .lines()
        .skip_while(|l| !l.starts_with("▶intent"))
        .take(2)
        .collect();
    let listed = rows.join(" ");
    for name in [
        "[REQUEST]",
        "RESPOND",
        "ESCALATE",
        "HANDOFF",
        "POLL",
        "ACK",
        "NACK",
        "ERROR",
        "BROADCAST",
        "REVOKE",
        "CLOSE",
    ] {
        assert!(listed.contains(name), "{name}:\n{s}");
    }
    t.keys("C");
    let s = t.screen();
    assert!(s.contains("[CLOSE]") && !s.contains("[REQUEST]"), "{s}");
    // Unfocused, the intent takes its one row again.
    t.key(KeyCode::Tab, NONE);
    let s = t.screen();
    assert!(s.contains(" intent  CLOSE\n"), "{s}");
}

/// The search prompt, the command line and the filter move their cursor and kill as readline
/// does; the cursor is drawn where it is.
#[test]
fn prompts_and_the_filter_edit_as_readline_does() {
    let mut t = harness(demo_store(), 120, 40);
    t.keys(":");
    t.keys("helpp");
    t.key(KeyCode::Backspace, NONE);
    t.ctrl('a');
    t.keys("x");
    assert!(t.screen().contains(":x▏help"), "{}", t.screen());
    t.key(KeyCode::Backspace, NONE);
    t.ctrl('k');
    t.ctrl('y');
    t.keys(" ");
    t.ctrl('y');
    assert!(t.screen().contains(":help help▏"), "{}", t.screen());
    t.key(KeyCode::Char('b'), ALT);
    t.ctrl('u');
    t.ctrl('e');
    assert!(t.screen().contains(":help▏"), "{}", t.screen());
    // Undo goes back by word and kill there too.
    t.keys(" me");
    t.ctrl('z');
    assert!(t.screen().contains(":help▏"), "{}", t.screen());
    // Then the kill of C-u, the cursor where it was.
    t.ctrl('z');
    assert!(t.screen().contains(":help ▏help"), "{}", t.screen());
    t.ctrl('r');
    assert!(t.screen().contains(":help▏"), "{}", t.screen());
    t.key(KeyCode::Enter, NONE);
    assert!(t.screen().contains("Help —"), "{}", t.screen());
    t.key(KeyCode::Esc, NONE);

    t.keys("/");
    t.keys("Nishiki market");
    t.ctrl('w');
    t.key(KeyCode::Backspace, ALT);
    t.keys("Nishiki");
    t.key(KeyCode::Left, CTRL);
    assert!(t.screen().contains("/ ▏Nishiki"), "{}", t.screen());
    t.key(KeyCode::Esc, NONE);

    t.keys("f");
    t.keys("kyoto");
    t.ctrl('a');
    t.key(KeyCode::Char('d'), ALT);
    t.keys("naming");
    let s = t.screen();
    assert!(s.contains("filter: naming▏"), "{s}");
    t.key(KeyCode::Char('s'), ALT);
    assert!(t.screen().contains("filter: ▏"), "{}", t.screen());
    t.ctrl('z');
    assert!(t.screen().contains("filter: naming▏"), "{}", t.screen());
}

/// Help lists the editing keys, and the composer's undo and $EDITOR where readline does not
/// want them.
#[test]
fn help_says_the_editing_keys() {
    let mut t = harness(demo_store(), 120, 300);
    t.keys("?");
    let s = t.screen();
    for row in [
        "Editing text (composer, search, command line, filter, paste box)",
        "C-a Home",
        "C-k",
        "kill to the end of the line",
        "C-u",
        "kill to the start of the line",
        "C-w M-Bksp",
        "M-b C-←",
        "M-s",
        "select all",
    ] {
        assert!(s.contains(row), "{row}:\n{s}");
    }
    let row = |keys: &str, what: &str| {
        s.lines()
            .any(|l| l.contains(&format!("{keys} ")) && l.contains(what))
    };
    assert!(row("C-z C-_", "undo"), "{s}");
    assert!(row("M-e", "$EDITOR"), "{s}");
    assert!(row("C-o", "whole copy"), "{s}");
}

/// `[compose] editor_first`: a new envelope's and a reply's composer ask for `$EDITOR` as soon
/// as they open; the body back from it is in the form.
#[test]
fn editor_first_opens_the_editor_at_once() {
    let mut t = harness(demo_store(), 80, 24);
    t.app.settings.editor_first = true;
    t.keys("n");
    assert_eq!(
        t.take_effect(),
        Some(crosstalk::app::Effect::EditBody(String::new()))
    );
    t.act(Action::EditedBody("written in the editor\n".into()));
    assert_eq!(body_rows(&t.screen())[0], "written in the editor");
    t.key(KeyCode::Esc, NONE);
    t.key(KeyCode::Enter, NONE);
    t.keys("r");
    assert!(matches!(
        t.take_effect(),
        Some(crosstalk::app::Effect::EditBody(_))
    ));
    // Off, the composer opens on the form.
    t.key(KeyCode::Esc, NONE);
    t.app.settings.editor_first = false;
    t.keys("n");
    assert_eq!(t.take_effect(), None);
}
