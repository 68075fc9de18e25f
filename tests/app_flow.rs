//! Whole operator flows driven by keys and actions against a temporary database: paste →
//! preview → import, open and copy, reply and copy (awaiting reply until answered), drafts
//! that survive the app, search, filter, folding, config errors.

mod support;

use crosstalk::app::{Action, Pane};
use crosstalk::store::Store;
use ratatui::crossterm::event::{KeyCode, KeyModifiers};
use support::{demo_store, harness, store_in};

const NONE: KeyModifiers = KeyModifiers::NONE;

fn request() -> &'static str {
    include_str!("../assets/examples/v11-request.crosstalk")
}

#[test]
fn paste_previews_then_imports_and_keeps_the_raw_text_even_when_cancelled() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = harness(store_in(dir.path()), 100, 30);
    // Esc: nothing imported, but the paste is kept.
    t.act(Action::Paste(format!(
        "Claude said:\n```\n{}```\n",
        request()
    )));
    assert!(t.screen().contains("Paste: 1 envelope"));
    t.key(KeyCode::Esc, NONE);
    assert!(t.app.list.rows.is_empty());
    let raw = rusqlite::Connection::open(dir.path().join("t.db")).unwrap();
    let pastes: i64 = raw
        .query_row("SELECT count(*) FROM pastes", [], |r| r.get(0))
        .unwrap();
    assert_eq!(pastes, 1);
    // Again, Enter: imported, listed, opened.
    t.act(Action::Paste(format!(
        "Claude said:\n```\n{}```\n",
        request()
    )));
    t.key(KeyCode::Enter, NONE);
    assert_eq!(t.app.list.rows.len(), 1);
    assert!(
        t.app
            .status
            .1
            .starts_with("Imported 1, 0 already stored, 0 rejected"),
        "{:?}",
        t.app.status
    );
    assert_eq!(t.app.focus, Pane::Tree);
    assert!(t.app.selected_message().is_some());
    // The same paste again: a duplicate.
    t.act(Action::Paste(request().to_string()));
    assert!(t.screen().contains("already stored"));
    t.key(KeyCode::Enter, NONE);
    assert!(
        t.app.status.1.contains("1 already stored"),
        "{:?}",
        t.app.status
    );
}

#[test]
fn a_paste_without_envelopes_is_kept_and_explained() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = harness(store_in(dir.path()), 100, 30);
    t.act(Action::Paste("just some chat text, no envelope\n".into()));
    assert!(t.app.popup.is_none());
    assert!(
        t.app.status.1.contains("No envelope found"),
        "{:?}",
        t.app.status
    );
    let raw = rusqlite::Connection::open(dir.path().join("t.db")).unwrap();
    let bytes: Vec<u8> = raw
        .query_row("SELECT bytes FROM paste_pieces", [], |r| r.get(0))
        .unwrap();
    assert_eq!(bytes, b"just some chat text, no envelope\n");
}

#[test]
fn copy_sends_the_canonical_envelope_and_copy_thread_sends_all() {
    let mut t = harness(demo_store(), 120, 40);
    t.key(KeyCode::Enter, NONE);
    t.keys("y");
    let copies = t.copies();
    let m = t.app.selected_message().unwrap().clone();
    assert_eq!(copies.len(), 1);
    assert_eq!(copies[0], m.canonical);
    assert!(t.app.status.1.contains("OSC 52"), "{:?}", t.app.status);
    t.keys("Y");
    let all = t.copies().pop().unwrap();
    let n = t.app.tree.as_ref().unwrap().outline.rows.len();
    assert_eq!(all.matches("[[END]]").count(), n);
}

#[test]
fn reply_and_copy_waits_for_the_answer_until_an_import_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = harness(store_in(dir.path()), 120, 40);
    t.act(Action::Paste(request().to_string()));
    t.key(KeyCode::Enter, NONE);
    let original = t.app.selected_message().unwrap().clone();
    t.keys("r");
    assert!(t.app.composer.is_some());
    t.keys("Here is the answer.");
    t.ctrl('y');
    assert!(t.app.composer.is_none(), "{:?}", t.app.status);
    let copied = t.copies().pop().expect("a copy");
    let env = &original.envelope;
    assert!(
        copied.starts_with(&format!("[[{}→{} ", env.banner.to, env.banner.from)),
        "{copied}"
    );
    assert!(copied.contains(&format!("parent: {}", original.id)));
    assert!(copied.contains("intent: RESPOND"));
    assert!(copied.contains("  Here is the answer."));
    assert!(
        t.app.status.1.contains("awaiting reply"),
        "{:?}",
        t.app.status
    );
    let sent = t.app.selected_message().unwrap().clone();
    assert_eq!(sent.status, "awaiting_reply");
    assert!(t.app.list.rows[0].summary.awaiting_reply);
    // The answer arrives: an envelope naming the sent one as parent.
    let answer = format!(
        "[[{}→{} v1.1]]\nuser: x\nthread: {}\nparent: {}\nmessage: 01KZZZZZZZZZZZZZZZZZZZZZZZ\nintent: RESPOND\nbody: |\n  thanks\n[[END]]\n",
        env.banner.from, env.banner.to, sent.thread, sent.id
    );
    t.act(Action::Paste(answer));
    assert!(t.screen().contains("joins"), "{}", t.screen());
    t.key(KeyCode::Enter, NONE);
    let stored = t.app.store.message(&sent.id).unwrap().unwrap();
    assert_eq!(stored.status, "answered");
    assert!(!t.app.list.rows[0].summary.awaiting_reply);
}

#[test]
fn drafts_are_saved_as_typed_and_come_back_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    {
        let mut t = harness(store_in(dir.path()), 120, 40);
        t.act(Action::Paste(request().to_string()));
        t.key(KeyCode::Enter, NONE);
        t.keys("r");
        t.keys("half a thought");
        // No save key, no Esc: the app is simply dropped, as a crash would.
    }
    let mut t = harness(store_in(dir.path()), 120, 40);
    assert!(t.app.status.1.contains("1 draft(s)"), "{:?}", t.app.status);
    t.key(KeyCode::Enter, NONE);
    t.keys("r");
    let c = t.app.composer.as_ref().expect("composer");
    assert_eq!(c.form.body, "half a thought");
    t.keys(" more");
    t.key(KeyCode::Esc, NONE);
    assert!(t.app.status.1.contains("Draft kept"));
    t.keys("D");
    assert!(t.screen().contains("half a thought more"), "{}", t.screen());
    t.key(KeyCode::Enter, NONE);
    assert_eq!(
        t.app.composer.as_ref().unwrap().form.body,
        "half a thought more"
    );
    t.key(KeyCode::Esc, NONE);
    // Discarding takes two presses.
    t.keys("D");
    t.keys("x");
    assert_eq!(t.app.store.drafts().unwrap().len(), 1);
    t.keys("x");
    assert_eq!(t.app.store.drafts().unwrap().len(), 0);
}

#[test]
fn new_envelope_needs_addresses_and_explains_errors_before_copying() {
    let mut t = harness(Store::open_in_memory().unwrap(), 120, 40);
    t.keys("n");
    t.keys("Hello there");
    t.ctrl('y');
    assert!(t.app.composer.is_some(), "not sent while invalid");
    assert!(
        t.app.status.1.starts_with("Not copied (draft saved)"),
        "{:?}",
        t.app.status
    );
    assert!(t.copies().is_empty());
    // Tab to from, type, Enter moves on to `to`.
    t.key(KeyCode::Tab, NONE);
    t.keys("Claude\nGemini\n");
    // Intent picker: → twice from REQUEST is ESCALATE.
    t.key(KeyCode::Right, NONE);
    t.key(KeyCode::Right, NONE);
    t.key(KeyCode::Enter, NONE);
    t.keys("a context");
    t.ctrl('t');
    t.ctrl('y');
    assert!(t.app.composer.is_none(), "{:?}", t.app.status);
    let copied = t.copies().pop().unwrap();
    assert!(copied.starts_with("[[Claude→Gemini v1.1]]"), "{copied}");
    assert!(copied.contains("intent: ESCALATE"));
    assert!(copied.contains("context: a context"));
    assert!(copied.contains("meta: routing"));
    assert!(copied.contains("  Hello there"));
    assert_eq!(t.app.list.rows.len(), 1);
}

#[test]
fn copies_for_configured_recipients_are_fenced() {
    let mut t = harness(Store::open_in_memory().unwrap(), 120, 40);
    t.keys("n");
    t.keys("hi");
    t.key(KeyCode::Tab, NONE);
    t.keys("Claude\nfenced-bot\n");
    t.ctrl('y');
    let copied = t.copies().pop().unwrap();
    assert!(
        copied.starts_with("```\n[[Claude→fenced-bot v1.1]]"),
        "{copied}"
    );
    assert!(copied.ends_with("[[END]]\n```\n"), "{copied}");
}

#[test]
fn pasted_control_characters_never_reach_the_editor() {
    let mut t = harness(Store::open_in_memory().unwrap(), 120, 40);
    t.keys("n");
    t.act(Action::Paste("a\x1b[2Jb\u{202e}c\r\nd".into()));
    let c = t.app.composer.as_ref().unwrap();
    assert_eq!(c.form.body, "a[2Jbc\nd");
    assert!(
        t.app.status.1.contains("removed 2 control"),
        "{:?}",
        t.app.status
    );
}

#[test]
fn hostile_envelope_text_is_shown_as_placeholders() {
    let mut t = harness(Store::open_in_memory().unwrap(), 120, 40);
    let evil = "[[Mallory→Claude v1.1]]\nuser: m\nthread: 01KA0000000000000000000000\nmessage: 01KA0000000000000000000001\ncontext: ev\u{202e}il\x1b]0;PWNED\x07\nintent: REQUEST\nbody: |\n  \x1b[2J\x1b]52;c;SGFjaw==\x07gotcha \x1b[31mred\n[[END]]\n";
    t.act(Action::Paste(evil.into()));
    t.key(KeyCode::Enter, NONE);
    for view in 0..3 {
        let s = t.screen();
        assert!(
            !s.contains('\x1b') && !s.contains('\x07') && !s.contains('\u{202e}'),
            "view {view}:\n{s}"
        );
        t.keys("v");
    }
    assert!(t.screen().contains("␛"));
}

#[test]
fn search_filter_fold_and_mouse() {
    let mut t = harness(demo_store(), 120, 40);
    // Search opens the thread holding the hit, with the message selected in the inspector.
    t.keys("/");
    t.keys("Nishiki");
    let s = t.screen();
    assert!(s.contains(" matches") && !s.contains("  0 of "), "{s}");
    t.key(KeyCode::Enter, NONE);
    assert_eq!(t.app.focus, Pane::Inspector);
    let m = t.app.selected_message().unwrap();
    assert!(m.envelope.body.as_deref().unwrap().contains("Nishiki"));
    // Typing in the list filters it; Esc clears.
    t.key(KeyCode::Esc, NONE);
    t.key(KeyCode::Esc, NONE);
    t.keys("f");
    t.keys("rate limiter");
    assert_eq!(t.app.list.rows.len(), 1);
    assert!(t.screen().contains("filter: rate limiter"));
    t.key(KeyCode::Esc, NONE);
    assert_eq!(t.app.list.rows.len(), 6);
    // Fold the branch point of the rate limiter thread and unfold it.
    t.keys("frate\n");
    let tree = t.app.tree.as_ref().unwrap();
    let branch = tree.replies.iter().position(|&r| r > 1).unwrap();
    let all = tree.visible.len();
    let tree = t.app.tree.as_mut().unwrap();
    tree.select_index(branch);
    t.keys(" ");
    assert!(t.app.tree.as_ref().unwrap().visible.len() < all);
    assert!(t.screen().contains("[+"));
    t.keys(" ");
    assert_eq!(t.app.tree.as_ref().unwrap().visible.len(), all);
    // u goes to the parent; a click selects a list row.
    t.keys("ju");
    assert_eq!(t.app.tree.as_ref().unwrap().selected_index(), Some(branch));
    let areas = t.app.areas();
    t.act(Action::Click(areas.list.x + 3, areas.list.y + 1));
    assert_eq!(t.app.list.selected, 0);
    assert_eq!(t.app.focus, Pane::List);
}

#[test]
fn command_line_and_help() {
    let mut t = harness(demo_store(), 80, 24);
    t.keys(":");
    t.keys("bogus\n");
    assert!(
        t.app.status.1.contains("Unknown command `:bogus`"),
        "{:?}",
        t.app.status
    );
    t.keys("?");
    assert!(t.screen().contains("Help"));
    t.key(KeyCode::PageDown, NONE);
    t.key(KeyCode::Esc, NONE);
    assert!(t.app.popup.is_none());
    let out = t.dir.path().join("thread.crosstalk");
    t.key(KeyCode::Enter, NONE);
    t.keys(&format!(":export {}\n", out.display()));
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(
        text.matches("[[END]]").count(),
        t.app.tree.as_ref().unwrap().outline.rows.len()
    );
    t.keys(":q\n");
    assert!(t.app.quit);
}

#[test]
fn keymap_errors_in_config_name_the_place() {
    let text = "[keys.browse]\nx = \"quit\"\nz = \"explode\"\n";
    let config = crosstalk::config::parse(text, std::path::Path::new("c.toml")).unwrap();
    let e = crosstalk::tui::keymap(&config).unwrap_err().to_string();
    assert!(e.starts_with("c.toml:3:5: "), "{e}");
    assert!(e.contains("unknown action `explode`"), "{e}");
    let config = crosstalk::config::parse(
        "[keys.nowhere]\nx = \"quit\"\n",
        std::path::Path::new("c.toml"),
    )
    .unwrap();
    let e = crosstalk::tui::keymap(&config).unwrap_err().to_string();
    assert!(e.starts_with("c.toml:1:7: "), "{e}");
    let config = crosstalk::config::parse(
        "[keys.composer]\n\"ctrl-\" = \"quit\"\n",
        std::path::Path::new("c.toml"),
    )
    .unwrap();
    let e = crosstalk::tui::keymap(&config).unwrap_err().to_string();
    assert!(e.starts_with("c.toml:2:1: "), "{e}");
}

#[test]
fn a_paste_over_help_or_drafts_still_lands_in_a_preview() {
    let mut t = harness(Store::open_in_memory().unwrap(), 100, 30);
    t.keys("?");
    t.act(Action::Paste(request().to_string()));
    assert!(t.screen().contains("Paste: 1 envelope"), "{}", t.screen());
    // A second paste over the preview replaces it.
    t.act(Action::Paste(format!("{}\n{}", request(), request())));
    assert!(t.screen().contains("Paste: 2 envelopes"), "{}", t.screen());
}
