//! Whole operator flows driven by keys and actions against a temporary database: paste →
//! preview → import, open and copy, reply and copy (awaiting reply until answered), drafts
//! that survive the app, search, filter, folding, config errors.

use crate::helpers::support;

use std::time::{Duration, Instant};

use crosstalk::app::{Action, Effect, Pane};
use crosstalk::store::Store;
use ratatui::crossterm::event::{KeyCode, KeyModifiers};
use support::{demo_store, harness, store_in};

const NONE: KeyModifiers = KeyModifiers::NONE;

fn request() -> &'static str {
    include_str!("../../../assets/examples/v11-request.crosstalk")
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
    assert_eq!(t.thread_count(), 0);
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
    assert_eq!(t.thread_count(), 1);
    assert!(
        t.status_line()
            .starts_with("Imported 1, 0 already stored, 0 rejected"),
        "{:?}",
        t.status_line()
    );
    assert_eq!(t.focused_pane(), Pane::Tree);
    assert!(t.app.selected_message().is_some());
    // The same paste again: a duplicate.
    t.act(Action::Paste(request().to_string()));
    assert!(t.screen().contains("already stored"));
    t.key(KeyCode::Enter, NONE);
    assert!(
        t.status_line().contains("1 already stored"),
        "{:?}",
        t.status_line()
    );
}

#[test]
fn a_paste_without_envelopes_is_kept_and_explained() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = harness(store_in(dir.path()), 100, 30);
    t.act(Action::Paste("just some chat text, no envelope\n".into()));
    assert!(t.app.popup.is_none());
    assert!(
        t.status_line().contains("No envelope found"),
        "{:?}",
        t.status_line()
    );
    let raw = rusqlite::Connection::open(dir.path().join("t.db")).unwrap();
    let (bytes, zstd): (Vec<u8>, bool) = raw
        .query_row("SELECT bytes, zstd FROM paste_pieces", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    let bytes = match zstd {
        true => zstd::stream::decode_all(bytes.as_slice()).unwrap(),
        false => bytes,
    };
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
    assert!(t.status_line().contains("OSC 52"), "{:?}", t.status_line());
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
    assert!(t.composing());
    t.keys("Here is the answer.");
    t.ctrl('y');
    assert!(!t.composing(), "{:?}", t.status_line());
    let copied = t.copies().pop().expect("a copy");
    let env = &original.envelope;
    // The desk answers the sender in its own name (the harness's desk is `human://op`).
    assert!(
        copied.starts_with(&format!("[[human://op→{} ", env.banner.from)),
        "{copied}"
    );
    assert!(copied.contains(&format!("parent: {}", original.id)));
    assert!(copied.contains("intent: RESPOND"));
    assert!(copied.contains("  Here is the answer."));
    assert!(
        t.status_line().contains("sent; its intent awaits no reply"),
        "{:?}",
        t.status_line()
    );
    let sent = t.app.selected_message().unwrap().clone();
    // Sent, and awaiting no reply: it is itself the answer.
    assert_eq!(sent.status, "sent");
    // A RESPOND copied out awaits nothing more (the intent registry's rule).
    assert!(!t.app.list.rows[0].summary.awaiting_reply);
    // The answer arrives: an envelope naming the sent one as parent.
    let answer = format!(
        "[[{}→human://op v1.1]]\nuser: x\nthread: {}\nparent: {}\nmessage: 01KZZZZZZZZZZZZZZZZZZZZZZZ\nintent: RESPOND\nbody: |\n  thanks\n[[END]]\n",
        env.banner.from, sent.thread, sent.id
    );
    t.act(Action::Paste(answer));
    assert!(t.screen().contains("joins"), "{}", t.screen());
    t.key(KeyCode::Enter, NONE);
    let stored = t.app.store.message(&sent.id).unwrap().unwrap();
    assert_eq!(stored.status, "answered");
    assert!(!t.app.list.rows[0].summary.awaiting_reply);
}

/// A relay between two AIs (CLAUDE→CHATGPT, kept here) and one envelope of each kind for the
/// operator (`kalle`): the ids of (the relayed REQUEST, a REQUEST for kalle, a RESPOND for
/// kalle, a CLOSE for kalle), all in one thread.
fn desk_thread(t: &mut support::Harness) -> [String; 4] {
    let thread = "01KAQ4W5J8Z000000000000T01";
    let m = |n: u8| format!("01KAQ4W5J8Z000000000000M{n:02}");
    let env = |(from, to): (&str, &str), n: u8, intent: &str| {
        format!(
            "[[{from}→{to} v1]]\nuser: kalle\nsession: 2025-10-09T16Z abc123\nthread: {thread}\n\
             message: {}\ncontext: cache choice\nintent: {intent}\nbody: |\n  {intent} from {from}\n\
             sig: none\n[[END]]\n",
            m(n)
        )
    };
    let text = [
        env(("CLAUDE", "CHATGPT"), 1, "REQUEST"),
        env(("GEMINI", "kalle"), 2, "REQUEST"),
        env(("GEMINI", "kalle"), 3, "RESPOND"),
        env(("CLAUDE", "KALLE"), 4, "CLOSE"),
    ]
    .concat();
    t.act(Action::Paste(text));
    t.key(KeyCode::Enter, NONE);
    [m(1), m(2), m(3), m(4)]
}

/// `r` writes as the operator (the desk, `[operator] addresses`), to the message's sender:
/// never as the AI the message was for. RESPOND answers what asks, ACK what only tells; a
/// follow-up to the operator's own reply goes on to its recipient.
#[test]
fn r_writes_as_the_desk_to_the_sender() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = store_in(dir.path());
    store.set_operator_addresses(&["kalle".into()]).unwrap();
    let mut t = harness(store, 120, 40);
    t.app.settings.desk = "kalle".into();
    let [relayed, request, respond, close] = desk_thread(&mut t);
    let mut sent = None;
    for (id, to, intent) in [
        (&relayed, "CLAUDE", "RESPOND"),
        (&request, "GEMINI", "RESPOND"),
        (&respond, "GEMINI", "ACK"),
        (&close, "CLAUDE", "ACK"),
    ] {
        t.act(Action::Run(format!("open {id}")));
        assert_eq!(t.shown_message_id().as_deref(), Some(id.as_str()));
        t.keys("r");
        let c = t.app.composer.as_ref().expect("the composer");
        assert_eq!(
            (c.form.from.as_str(), c.form.to.as_str()),
            ("kalle", to),
            "reply to {id}"
        );
        assert_eq!(c.form.intent, intent, "reply to {id}");
        assert_eq!(c.form.parent.as_deref(), Some(id.as_str()));
        assert_eq!(c.form.user, "op", "the [compose] user");
        assert_eq!(c.form.context, "cache choice");
        if id == &relayed {
            t.keys("Redis.");
            t.ctrl('y');
            assert!(!t.composing(), "{:?}", t.status_line());
            let copied = t.copies().pop().unwrap();
            assert!(copied.starts_with("[[kalle→CLAUDE v1]]\n"), "{copied}");
            sent = t.app.selected_message().cloned();
        } else {
            t.key(KeyCode::Esc, NONE);
        }
    }
    // The reply sent to CLAUDE, followed up: on to CLAUDE, asking.
    let sent = sent.expect("the reply sent");
    assert_eq!(sent.direction, "composed");
    t.act(Action::Run(format!("open {}", sent.id)));
    t.keys("r");
    let c = t.app.composer.as_ref().expect("the composer");
    assert_eq!(
        (c.form.from.as_str(), c.form.to.as_str()),
        ("kalle", "CLAUDE")
    );
    assert_eq!(c.form.intent, "REQUEST");
    assert_eq!(c.form.parent.as_deref(), Some(sent.id.as_str()));
}

/// `E` writes the ERROR (and the NACK) as the desk to the message's sender; so does the
/// paste preview's `E-FORMAT` for a broken envelope.
#[test]
fn e_writes_as_the_desk_to_the_sender() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = store_in(dir.path());
    store.set_operator_addresses(&["kalle".into()]).unwrap();
    let mut t = harness(store, 120, 40);
    t.app.settings.desk = "kalle".into();
    let [relayed, ..] = desk_thread(&mut t);
    t.act(Action::Run(format!("open {relayed}")));
    // E-ROUTE, the first code.
    t.keys("E\n");
    let c = t.app.composer.as_ref().expect("the composer");
    assert_eq!(c.form.intent, "ERROR");
    assert_eq!(
        (c.form.from.as_str(), c.form.to.as_str()),
        ("kalle", "CLAUDE")
    );
    assert_eq!(c.form.parent.as_deref(), Some(relayed.as_str()));
    assert!(c.form.meta.contains("Code: E-ROUTE"), "{}", c.form.meta);
    t.ctrl('y');
    let copied = t.copies().pop().unwrap();
    assert!(copied.starts_with("[[kalle→CLAUDE v1]]\n"), "{copied}");
    // The NACK, the last choice.
    t.act(Action::Run(format!("open {relayed}")));
    t.keys("E");
    t.keys(&"j".repeat(12));
    t.keys("\n");
    let c = t.app.composer.as_ref().expect("the composer");
    assert_eq!(c.form.intent, "NACK");
    assert_eq!(
        (c.form.from.as_str(), c.form.to.as_str()),
        ("kalle", "CLAUDE")
    );
    t.key(KeyCode::Esc, NONE);

    // A broken paste: E-FORMAT from the desk to its sender, not from its recipient.
    let id = "01KAQ4W5J8Z000000000000M09";
    t.act(Action::Paste(format!(
        "[[CLAUDE→CHATGPT v1]]\nuser: kalle\nthread: {id}\nparent: {id}\nmessage: {id}\n\
         intent: REQUEST\nbody: |\n  Answering myself?\nsig: none\n[[END]]\n"
    )));
    t.keys("E");
    let c = t.app.composer.as_ref().expect("the composer");
    assert_eq!(c.form.intent, "ERROR");
    assert_eq!(
        (c.form.from.as_str(), c.form.to.as_str()),
        ("kalle", "CLAUDE")
    );
    assert!(c.form.meta.contains("Code: E-FORMAT"), "{}", c.form.meta);
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
    assert!(
        t.status_line().contains("1 draft(s)"),
        "{:?}",
        t.status_line()
    );
    t.key(KeyCode::Enter, NONE);
    t.keys("r");
    let c = t.app.composer.as_ref().expect("composer");
    assert_eq!(c.form.body, "half a thought");
    t.keys(" more");
    t.key(KeyCode::Esc, NONE);
    assert!(t.status_line().contains("Draft kept"));
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
    assert!(t.composing(), "not sent while invalid");
    assert!(
        t.status_line().starts_with("Not copied (draft saved)"),
        "{:?}",
        t.status_line()
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
    assert!(!t.composing(), "{:?}", t.status_line());
    let copied = t.copies().pop().unwrap();
    // The same form as `crosstalk new`: banner v1 and a session.
    assert!(copied.starts_with("[[Claude→Gemini v1]]"), "{copied}");
    assert!(copied.contains("\nsession: "), "{copied}");
    assert!(copied.contains("intent: ESCALATE"));
    assert!(copied.contains("context: a context"));
    assert!(copied.contains("meta: routing"));
    assert!(copied.contains("  Hello there"));
    assert_eq!(t.thread_count(), 1);
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
        copied.starts_with("```\n[[Claude→fenced-bot v1]]"),
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
        t.status_line().contains("removed 2 control"),
        "{:?}",
        t.status_line()
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

/// In the composer C-z (and C-_, which terminals send for C-/) undoes the last change to the
/// focused box — a word typed, not a character — and C-r redoes it; the draft follows. C-u is
/// readline's kill to the start of the line, and its kill is a step undone too.
#[test]
fn the_composer_undoes_and_redoes() {
    let mut t = harness(demo_store(), 80, 24);
    t.keys("n");
    t.keys("abc def");
    let body = |t: &support::Harness| t.app.composer.as_ref().unwrap().form.body.clone();
    assert_eq!(body(&t), "abc def");
    t.ctrl('z');
    assert_eq!(body(&t), "abc");
    t.ctrl('r');
    assert_eq!(body(&t), "abc def");
    // C-_ as crossterm reports it from a terminal: C-7.
    t.ctrl('7');
    assert_eq!(body(&t), "abc");
    t.keys(" xy");
    t.ctrl('u');
    assert_eq!(body(&t), "");
    t.ctrl('/');
    assert_eq!(body(&t), "abc xy");
    t.ctrl('z');
    t.ctrl('z');
    assert_eq!(body(&t), "");
    // The draft saved is what undo left.
    let drafts = t.app.store.drafts().unwrap();
    assert!(
        drafts.iter().any(|d| d.form.contains(r#""body":"""#)),
        "{drafts:?}"
    );
    // The body back from $EDITOR is a step too.
    t.keys("mine");
    t.act(Action::EditedBody("from the editor\n".into()));
    assert_eq!(body(&t), "from the editor");
    t.ctrl('z');
    assert_eq!(body(&t), "mine");
    assert!(
        t.status_line().starts_with("Undid the $EDITOR edit"),
        "{:?}",
        t.status_line()
    );
    t.ctrl('r');
    assert_eq!(body(&t), "from the editor");
}

/// The search finds while a word is still being typed: its last word matches the words it
/// begins.
#[test]
fn search_finds_as_the_last_word_is_typed() {
    let mut t = harness(demo_store(), 80, 24);
    t.keys("/");
    t.keys("Nishi");
    let s = t.screen();
    assert!(!s.contains("0 of 0"), "{s}");
    let Some(crosstalk::app::popups::popup::Popup::Search(search)) = &t.app.popup else {
        panic!("no search: {s}")
    };
    assert!(!search.hits.is_empty(), "{s}");
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
    assert_eq!(t.focused_pane(), Pane::Inspector);
    let m = t.app.selected_message().unwrap();
    assert!(m.envelope.body.as_deref().unwrap().contains("Nishiki"));
    // Typing in the list filters it; Esc clears.
    t.key(KeyCode::Esc, NONE);
    t.key(KeyCode::Esc, NONE);
    t.keys("f");
    t.keys("rate limiter");
    assert_eq!(t.thread_count(), 1);
    assert!(t.screen().contains("filter: rate limiter"));
    t.key(KeyCode::Esc, NONE);
    assert_eq!(t.thread_count(), crosstalk::tui::demo::FILES.len());
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
    assert_eq!(t.focused_pane(), Pane::List);
}

#[test]
fn command_line_and_help() {
    let mut t = harness(demo_store(), 80, 24);
    t.keys(":");
    t.keys("bogus\n");
    assert!(
        t.status_line().contains("Unknown command `:bogus`"),
        "{:?}",
        t.status_line()
    );
    // A known command without its argument says what to add.
    t.keys(":export\n");
    assert!(
        t.status_line()
            .starts_with("`:export` needs a file name: `:export FILE`"),
        "{:?}",
        t.status_line()
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
    // Every mistake at once, each at its place: a letter that could no longer be typed, and
    // the composer left without a way out.
    let config = crosstalk::config::parse(
        "[keys.composer]\na = \"save_and_copy\"\nesc = \"next_field\"\n\"ctrl-c\" = \"next_field\"\n",
        std::path::Path::new("c.toml"),
    )
    .unwrap();
    let e = crosstalk::tui::keymap(&config).unwrap_err().to_string();
    let lines: Vec<&str> = e.lines().collect();
    assert_eq!(lines.len(), 2, "{e}");
    assert!(
        lines[0].starts_with("c.toml:2:1: `a` types or edits text"),
        "{e}"
    );
    // (Named at one of the two lines that took its keys.)
    assert!(
        lines[1].starts_with("c.toml:3:1: [keys.composer] leaves no key for `back`"),
        "{e}"
    );
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

#[test]
fn a_paste_into_the_open_filter_is_filter_text() {
    let mut t = harness(demo_store(), 80, 24);
    let pastes = t.app.store.pastes().map(|p| p.len()).ok();
    t.keys("f");
    // Its first line, without the bidi override: not an import of the pasted text.
    t.act(Action::Paste("kyo\u{202e}to\r\nsecond line\n".into()));
    assert_eq!(t.app.list.filter, "kyoto");
    assert!(t.app.popup.is_none() && t.app.list.filtering);
    assert!(
        !t.status_line().contains("No envelope"),
        "{:?}",
        t.status_line()
    );
    assert_eq!(t.thread_count(), 1);
    assert!(t.screen().contains("filter: kyoto"));
    assert_eq!(
        t.app.store.pastes().map(|p| p.len()).ok(),
        pastes,
        "nothing stored"
    );
    // Closed, a paste is an import again.
    t.key(KeyCode::Esc, NONE);
    t.act(Action::Paste("kyoto\n".into()));
    assert!(
        t.status_line().contains("No envelope"),
        "{:?}",
        t.status_line()
    );
}

#[test]
fn the_paste_preview_moves_by_pages_and_to_either_end() {
    let mut t = harness(Store::open_in_memory().unwrap(), 100, 24);
    t.act(Action::Paste(vec![request(); 30].join("\n")));
    assert!(t.screen().contains("Paste: 30 envelopes"), "{}", t.screen());
    let selected = |t: &support::Harness| match &t.app.popup {
        Some(crosstalk::app::popups::popup::Popup::Preview(p)) => p.selected,
        other => panic!("no preview: {other:?}"),
    };
    t.keys("G");
    assert_eq!(selected(&t), 29);
    t.keys("g");
    assert_eq!(selected(&t), 0);
    t.key(KeyCode::PageDown, NONE);
    let page = selected(&t);
    assert!(page > 1 && page < 29, "a page down: {page}");
    t.key(KeyCode::End, NONE);
    assert_eq!(selected(&t), 29);
    t.key(KeyCode::PageUp, NONE);
    assert_eq!(selected(&t), 29 - page);
    t.key(KeyCode::Home, NONE);
    assert_eq!(selected(&t), 0);
    assert!(
        t.screen().contains("Paste: 30 envelopes"),
        "still the preview"
    );
}

/// Another process holding the database's write lock, as a long `crosstalk import` does.
fn hold_write_lock(db: &std::path::Path) -> rusqlite::Connection {
    let other = rusqlite::Connection::open(db).unwrap();
    other.execute_batch("BEGIN IMMEDIATE").unwrap();
    other
}

#[cfg(unix)]
fn mode(path: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn typing_never_waits_for_a_locked_database_and_the_draft_is_saved_after() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let mut t = harness(store_in(dir.path()), 140, 40);
    t.keys("n");
    let other = hold_write_lock(&db);
    // Each key returns at once (the app's connection does not wait for the lock); the
    // bound is far above a key's cost and far below SQLite's usual busy wait.
    for c in "typed while locked".chars() {
        let start = Instant::now();
        t.keys(&c.to_string());
        let took = start.elapsed();
        assert!(
            took < Duration::from_millis(100),
            "a key took {took:?} while another connection held the write lock"
        );
    }
    let c = t.app.composer.as_ref().unwrap();
    assert_eq!(c.form.body, "typed while locked");
    assert!(
        c.unsaved.as_deref().unwrap().starts_with("database busy"),
        "{:?}",
        c.unsaved
    );
    let s = t.screen();
    assert!(s.contains("draft not saved yet: database busy"), "{s}");
    assert!(
        t.status_line()
            .starts_with("Draft not saved yet: database busy"),
        "{:?}",
        t.status_line()
    );
    assert!(t.app.has_pending());
    // A tick while the lock is still held: still pending, and it does not wait either.
    let start = Instant::now();
    t.act(Action::Tick);
    assert!(start.elapsed() < Duration::from_millis(100));
    assert!(t.app.composer.as_ref().unwrap().unsaved.is_some());
    let n: i64 = other
        .query_row("SELECT count(*) FROM drafts", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 0);
    // The import commits: the next tick saves the draft.
    other.execute_batch("COMMIT").unwrap();
    t.act(Action::Tick);
    assert!(!t.app.has_pending());
    let c = t.app.composer.as_ref().unwrap();
    assert!(c.unsaved.is_none() && c.saved_at.is_some());
    assert!(t.screen().contains("(draft saved"), "{}", t.screen());
    assert!(
        t.status_line().starts_with("Draft saved"),
        "{:?}",
        t.status_line()
    );
    let form: String = other
        .query_row("SELECT form FROM drafts", [], |r| r.get(0))
        .unwrap();
    assert!(form.contains("typed while locked"), "{form}");
}

#[test]
fn a_draft_the_database_never_takes_is_written_beside_it_when_the_app_ends() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let mut t = harness(store_in(dir.path()), 120, 40);
    t.app.settings.db_path = Some(db.clone());
    t.keys("n");
    let _other = hold_write_lock(&db);
    t.keys("kept safe");
    // Leaving the composer: the draft stays pending, and says so.
    t.key(KeyCode::Esc, NONE);
    assert!(!t.composing());
    assert!(
        t.status_line().starts_with("Draft not saved yet"),
        "{:?}",
        t.status_line()
    );
    assert_eq!(t.app.pending_drafts.len(), 1);
    // Quitting with the lock still held: a bounded wait, then a file beside the database.
    let start = Instant::now();
    let notes = t.app.finish(Duration::from_millis(200));
    assert!(start.elapsed() < Duration::from_secs(5));
    assert_eq!(notes.len(), 1, "{notes:?}");
    let path = notes[0].rsplit("written to ").next().unwrap();
    let path = std::path::Path::new(path);
    assert!(notes[0].contains("database busy"), "{notes:?}");
    assert_eq!(path.parent(), Some(dir.path()));
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.contains("  kept safe"), "{text}");
    #[cfg(unix)]
    assert_eq!(mode(path), 0o600);
    // The next start names the file, so its text is not forgotten there.
    drop(_other);
    drop(t);
    let t = support::harness_on(&db, 120, 40);
    assert!(
        t.status_line().contains("written to files")
            && t.status_line().contains(&*path.to_string_lossy()),
        "{:?}",
        t.status_line()
    );
}

#[test]
fn reads_and_pastes_while_the_database_is_busy_keep_the_last_data_then_catch_up() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let mut t = harness(store_in(dir.path()), 120, 40);
    let other = hold_write_lock(&db);
    t.act(Action::Paste(request().to_string()));
    let s = t.screen();
    assert!(
        s.contains("Paste: 1 envelope") && s.contains("NOT SAVED"),
        "{s}"
    );
    assert!(s.contains("Not saved: database busy"), "{s}");
    other.execute_batch("COMMIT").unwrap();
    // The tick stores it; the preview now shows the real check.
    t.act(Action::Tick);
    let s = t.screen();
    assert!(s.contains("(kept)") && s.contains("new thread"), "{s}");
    t.key(KeyCode::Enter, NONE);
    assert_eq!(t.thread_count(), 1, "{:?}", t.status_line());
}

#[test]
fn a_paste_on_a_full_disk_is_previewed_kept_in_memory_and_written_to_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let mut t = harness(store_in(dir.path()), 120, 40);
    t.app.settings.db_path = Some(db.clone());
    // The file may not grow any more: every write that needs a page fails as on a full disk.
    t.app.store.limit_growth(0).unwrap();
    // Chat text that does not compress (pastes are kept compressed), enough to need new pages
    // (more than the free room of the pages a new database has, 16 KiB each).
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let chat: String = (0..1600 * 60)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if i % 60 == 59 {
                '\n'
            } else {
                char::from(b'a' + (x % 26) as u8)
            }
        })
        .collect();
    let text = format!("{chat}{}", request());
    t.act(Action::Paste(text.clone()));
    let s = t.screen();
    assert!(
        s.contains("Paste: 1 envelope") && s.contains("NOT SAVED"),
        "{s}"
    );
    assert!(s.contains("Not saved: disk full"), "{s}");
    assert!(s.contains("✓ valid"), "parsed without the database:\n{s}");
    assert!(
        t.status_line().starts_with("Paste not saved: disk full"),
        "{:?}",
        t.status_line()
    );
    let raw = rusqlite::Connection::open(&db).unwrap();
    let count = |raw: &rusqlite::Connection| -> i64 {
        raw.query_row("SELECT count(*) FROM pastes", [], |r| r.get(0))
            .unwrap()
    };
    assert_eq!(count(&raw), 0);
    // Enter tries the database again: still full, the paste stays.
    t.key(KeyCode::Enter, NONE);
    assert!(t.screen().contains("NOT SAVED"), "{}", t.screen());
    assert!(
        t.status_line().starts_with("Still not saved: disk full"),
        "{:?}",
        t.status_line()
    );
    // w writes it to a file beside the database, private to the operator.
    t.keys("w");
    let path = t
        .status_line()
        .strip_prefix("Paste written to ")
        .unwrap_or_else(|| panic!("{:?}", t.status_line()))
        .to_string();
    let path = std::path::Path::new(&path);
    assert_eq!(path.parent(), Some(dir.path()));
    assert_eq!(std::fs::read_to_string(path).unwrap(), text);
    #[cfg(unix)]
    assert_eq!(mode(path), 0o600);
    assert!(t.screen().contains("written to"), "{}", t.screen());
    t.key(KeyCode::Esc, NONE);
    assert!(t.app.popup.is_none());
    assert!(t.status_line().contains(path.to_str().unwrap()));
    // Esc without w: the paste is never dropped silently, it goes to a file.
    t.act(Action::Paste(text.clone()));
    t.key(KeyCode::Esc, NONE);
    assert!(t.app.popup.is_none());
    let second = t
        .status_line()
        .rsplit("written to ")
        .next()
        .unwrap()
        .to_string();
    assert_ne!(second, path.to_str().unwrap());
    assert_eq!(std::fs::read_to_string(&second).unwrap(), text);
    // Room again: the same paste is kept and imported.
    t.app.store.limit_growth(100_000).unwrap();
    t.act(Action::Paste(text));
    assert!(t.screen().contains("(kept)"), "{}", t.screen());
    t.key(KeyCode::Enter, NONE);
    assert_eq!(t.thread_count(), 1, "{:?}", t.status_line());
    assert_eq!(count(&raw), 1);
}

#[test]
fn a_reply_is_not_copied_before_the_database_has_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let mut t = harness(store_in(dir.path()), 120, 40);
    t.act(Action::Paste(request().to_string()));
    t.key(KeyCode::Enter, NONE);
    t.keys("r");
    let other = hold_write_lock(&db);
    t.keys("the answer");
    t.ctrl('y');
    assert!(t.composing());
    assert!(t.copies().is_empty());
    assert!(
        t.status_line().starts_with("Not copied yet: database busy"),
        "{:?}",
        t.status_line()
    );
    other.execute_batch("COMMIT").unwrap();
    t.act(Action::Tick);
    t.ctrl('y');
    assert!(!t.composing(), "{:?}", t.status_line());
    assert!(t.copies().pop().unwrap().contains("  the answer"));
    assert!(
        t.status_line().contains("sent; its intent awaits no reply"),
        "{:?}",
        t.status_line()
    );
}

#[test]
fn a_thread_opens_while_another_process_imports_and_is_marked_seen_after() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let mut t = harness(store_in(dir.path()), 120, 40);
    // Another process imports a thread; the app lists it unread.
    let mut other = Store::open(&db).unwrap();
    other
        .import_text("<cli>", request(), &Default::default())
        .unwrap();
    drop(other);
    t.keys("f");
    t.key(KeyCode::Esc, NONE);
    assert!(t.thread_rows()[0].starts_with('●'), "{}", t.screen());
    // It imports again (holding the write lock) while the operator opens the thread.
    let import = hold_write_lock(&db);
    let start = Instant::now();
    t.key(KeyCode::Enter, NONE);
    assert!(start.elapsed() < Duration::from_millis(100));
    assert!(t.app.selected_message().is_some(), "{:?}", t.status_line());
    assert!(t.thread_rows()[0].starts_with(' '), "{}", t.screen());
    assert_eq!(
        t.status_level(),
        crosstalk::app::Level::Info,
        "{:?}",
        t.status_line()
    );
    assert_eq!(t.app.pending_seen.len(), 1);
    let seen = |c: &rusqlite::Connection| -> bool {
        c.query_row("SELECT seen_at IS last_activity FROM threads", [], |r| {
            r.get(0)
        })
        .unwrap()
    };
    assert!(!seen(&import));
    import.execute_batch("COMMIT").unwrap();
    t.act(Action::Tick);
    assert!(t.app.pending_seen.is_empty());
    assert!(seen(&import));
}

#[test]
fn an_action_the_busy_database_refuses_says_so_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let mut t = harness(store_in(dir.path()), 120, 40);
    t.keys("n");
    t.keys("a draft to discard");
    t.key(KeyCode::Esc, NONE);
    t.keys("D");
    t.keys("x");
    let import = hold_write_lock(&db);
    let start = Instant::now();
    t.keys("x");
    assert!(start.elapsed() < Duration::from_millis(100));
    assert!(
        t.status_line().starts_with("Database busy") && t.status_line().contains("not done"),
        "{:?}",
        t.status_line()
    );
    let s = t.screen();
    assert!(s.contains("a draft to discard"), "still listed:\n{s}");
    assert!(s.contains("database busy: last data read"), "{s}");
    import.execute_batch("COMMIT").unwrap();
    t.act(Action::Tick);
    assert!(!t.app.stale);
    assert!(!t.screen().contains("database busy"));
    t.keys("x");
    assert_eq!(
        t.app.store.drafts().unwrap().len(),
        0,
        "{:?}",
        t.status_line()
    );
}

#[test]
fn the_open_filter_takes_every_letter_and_commands_keep_their_keys_otherwise() {
    let mut t = harness(demo_store(), 80, 24);
    // `f` opens the filter: letters that are commands elsewhere (r reply, n new, q quit,
    // y copy, p paste) are typed into it.
    t.keys("f");
    assert!(
        t.screen().contains("Enter"),
        "the footer hints the filter's keys"
    );
    t.keys("rnqyp");
    assert!(!t.app.quit && !t.composing() && t.app.popup.is_none());
    assert_eq!(t.app.list.filter, "rnqyp");
    assert!(t.screen().contains("filter: rnqyp"));
    t.key(KeyCode::Backspace, NONE);
    assert_eq!(t.app.list.filter, "rnqy");
    // Esc clears and closes it; the same letters are commands again.
    t.key(KeyCode::Esc, NONE);
    assert!(t.app.list.filter.is_empty() && !t.app.list.filtering);
    t.keys("r");
    assert!(t.composing(), "r replies outside the filter");
    t.key(KeyCode::Esc, NONE);
    // Enter keeps the filter and opens the thread; then letters are commands again.
    t.keys("fkyoto\n");
    assert_eq!(t.thread_count(), 1);
    assert_eq!(t.focused_pane(), Pane::Tree);
    let help: Vec<String> = t
        .app
        .keymap
        .help_rows()
        .into_iter()
        .map(|(k, d)| format!("{k} {d}"))
        .collect();
    assert!(help.iter().any(|r| r.contains("Thread filter (after f)")));
    assert!(help.iter().any(|r| r == "f filter"), "{help:?}");
    assert!(!help.iter().any(|r| r.contains("typing filters")));
}

#[test]
fn a_draft_shows_at_once_and_is_never_a_message_or_unread() {
    let mut t = harness(demo_store(), 80, 24);
    let row = |t: &support::Harness, i: usize| {
        let r = &t.app.list.rows[i];
        (r.summary.message_count, r.unread, r.drafts)
    };
    let i = t.app.list.selected;
    t.key(KeyCode::Enter, NONE);
    let (count, unread, drafts) = row(&t, i);
    assert_eq!((unread, drafts), (false, 0));
    // A reply typed and left: the thread shows ✎ at once, D agrees, the title counts it
    // (beside the reply the demo filed and never copied), and the thread neither gains a
    // message nor turns unread.
    t.keys("r");
    t.keys("hi");
    t.key(KeyCode::Esc, NONE);
    assert_eq!(row(&t, i), (count, false, 1));
    let s = t.screen();
    assert!(s.contains("✎ 2 drafts"), "{s}");
    assert!(s.lines().nth(2).unwrap().contains('✎'), "{s}");
    assert_eq!(
        t.app.tree.as_ref().unwrap().outline.rows.len(),
        count as usize
    );
    // A new envelope's draft has no thread row; the title still counts it.
    t.keys("n");
    t.keys("x");
    t.key(KeyCode::Esc, NONE);
    assert!(t.screen().contains("✎ 3 drafts"));
    t.keys("D");
    assert!(t.screen().contains("Drafts"));
    // Discarding the reply's draft takes its ✎ away at once.
    let reply_row = match &t.app.popup {
        Some(crosstalk::app::popups::popup::Popup::Drafts { drafts, .. }) => {
            drafts.iter().position(|d| d.parent.is_some()).unwrap()
        }
        _ => panic!("drafts list not open"),
    };
    for _ in 0..reply_row {
        t.keys("j");
    }
    t.keys("xx");
    t.key(KeyCode::Esc, NONE);
    assert_eq!(row(&t, i), (count, false, 0));
    assert!(t.screen().contains("✎ 2 drafts"));
    // A reply sent (C-y) is a message: counted once, its draft and ✎ gone, still read.
    t.keys("r");
    t.keys("sent now");
    assert_eq!(row(&t, i).2, 1);
    t.ctrl('y');
    let i = t.app.list.selected;
    assert_eq!(row(&t, i), (count + 1, false, 0));
    assert!(
        t.screen().contains("✎ 2 drafts"),
        "the new envelope's draft remains:\n{}",
        t.screen()
    );
}

#[test]
fn a_short_inspector_shows_the_body_first_and_h_unfolds_the_headers() {
    let mut t = harness(demo_store(), 80, 24);
    t.keys("fKyoto\n");
    let body_line = "The forecast for 12 December";
    let s = t.screen();
    assert!(s.contains("▸ 7 headers (H) · REQUEST · received"), "{s}");
    assert!(s.contains(body_line) && !s.contains("session    "), "{s}");
    // H shows every header (the body moves below them); H again folds them.
    t.keys("H");
    let s = t.screen();
    assert!(
        s.contains("session    ") && !s.contains("▸ 7 headers"),
        "{s}"
    );
    t.keys("H");
    assert!(t.screen().contains(body_line));
    // The choice holds for the next message.
    t.keys("H");
    t.keys("k");
    let s = t.screen();
    assert!(s.contains("intent ") && !s.contains("headers (H)"), "{s}");
    // A click on the folded line unfolds the headers too.
    t.keys("H");
    assert!(t.screen().contains("▸ 7 headers"));
    let a = t.app.areas();
    let fold_row = t
        .app
        .inspector
        .rows
        .iter()
        .position(|r| r.text.starts_with("▸"))
        .unwrap();
    t.act(Action::Click(
        a.inspector.x + 3,
        a.inspector.y + 1 + fold_row as u16,
    ));
    assert!(!t.screen().contains("▸ 7 headers"));
    // A tall inspector shows the headers unless folded.
    let mut t = harness(demo_store(), 120, 40);
    t.keys("fKyoto\n");
    assert!(t.screen().contains("session    "));
    t.keys("H");
    assert!(t.screen().contains("▸ 7 headers (H)"));
}

/// Set to a home directory, [`export_in_home_child`] runs (as a process of its own).
const HOME_CHILD_ENV: &str = "CROSSTALK_EXPORT_HOME_CHILD";

/// `~/` is the home directory: the flow runs in a child process whose HOME is a temporary
/// one, since the tests beside it share this process's environment.
#[test]
fn export_expands_home_picks_the_format_tab_completes_and_open_takes_a_prefix() {
    let home = tempfile::tempdir().unwrap();
    let out = crate::helpers::common::this_test(module_path!(), "export_in_home_child")
        .args(["--nocapture", "--test-threads=1"])
        .env("HOME", home.path())
        .env(HOME_CHILD_ENV, home.path())
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stdout}{stderr}");
    // The child ran the flow (an empty filter would pass too).
    assert!(stdout.contains("1 passed"), "{stdout}{stderr}");
    assert!(home.path().join("exports/kyoto.mbox").is_file());
}

/// The export flow of the test above, run in its child.
#[test]
fn export_in_home_child() {
    let Some(home) = std::env::var_os(HOME_CHILD_ENV) else {
        return;
    };
    let home = std::path::PathBuf::from(home);
    assert_eq!(
        std::env::var_os("HOME"),
        Some(home.clone().into_os_string())
    );
    let mut t = harness(demo_store(), 80, 24);
    t.key(KeyCode::Enter, NONE);
    let thread = t.app.tree.as_ref().unwrap().outline.id.clone();
    let count = t.app.tree.as_ref().unwrap().outline.rows.len();
    std::fs::create_dir_all(home.join("exports")).unwrap();
    // Tab completes the command (to what `export` and `export-all` share), then the
    // directory under ~.
    t.keys(":exp\t");
    t.keys(" ~/exp\t");
    let line = match &t.app.popup {
        Some(crosstalk::app::popups::popup::Popup::Command(p)) => p.text.clone(),
        _ => panic!("command line closed"),
    };
    assert_eq!(line, "export ~/exports/");
    t.keys("kyoto.crosstalk\n");
    let text = std::fs::read_to_string(home.join("exports/kyoto.crosstalk")).unwrap();
    assert_eq!(text.matches("[[END]]").count(), count);
    // A .json name gets the thread as JSON, a .md name as markdown.
    t.keys(":export ~/exports/kyoto.json\n");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(home.join("exports/kyoto.json")).unwrap())
            .unwrap();
    assert_eq!(json["id"], thread.as_str());
    assert_eq!(json["messages"].as_array().unwrap().len(), count);
    assert!(t.status_line().contains("as json"), "{:?}", t.status_line());
    t.keys(":export ~/exports/kyoto.md\n");
    let md = std::fs::read_to_string(home.join("exports/kyoto.md")).unwrap();
    assert!(md.starts_with("# Kyoto"), "{md}");
    // An .eml name is one message: a thread of several is not written, and the status says
    // what to do; a .mbox name gets a mailbox of them all.
    assert!(count > 1);
    t.keys(":export ~/exports/kyoto.eml\n");
    assert!(!home.join("exports/kyoto.eml").exists());
    assert!(
        t.status_line().contains("an .eml file holds one message")
            && t.status_line().contains("Export to a .mbox file"),
        "{:?}",
        t.status_line()
    );
    t.keys(":export ~/exports/kyoto.mbox\n");
    let mbox = std::fs::read_to_string(home.join("exports/kyoto.mbox")).unwrap();
    assert_eq!(
        mbox.matches("From crosstalk@crosstalk.invalid ").count(),
        count
    );
    // `:open` takes the first characters of an id, in any case.
    t.key(KeyCode::Esc, NONE);
    t.keys("G");
    assert_ne!(t.app.tree.as_ref().unwrap().outline.id, thread);
    t.keys(&format!(":open {}\n", thread[..20].to_ascii_lowercase()));
    assert_eq!(
        t.app.tree.as_ref().unwrap().outline.id,
        thread,
        "{:?}",
        t.status_line()
    );
    assert_eq!(t.focused_pane(), Pane::Tree);
    // Too short a prefix lists a few and opens nothing.
    t.keys(":open 0\n");
    assert!(t.status_line().contains("ids ("), "{:?}", t.status_line());
    t.keys(":open ZZZ\n");
    assert!(
        t.status_line()
            .contains("No thread or message id starts with `ZZZ`")
    );
}

#[test]
fn the_screens_say_things_once_whole_and_in_the_operators_terms() {
    let mut t = harness(demo_store(), 80, 24);
    // The tree's intent column fits the thread's longest intent (BROADCAST, 9 letters).
    t.keys("fsigning\n");
    let s = t.screen();
    assert!(s.contains("BROADCAST") && !s.contains("BROADCA…"), "{s}");
    // A received message's status is said once.
    t.keys("H");
    let s = t.screen();
    assert!(s.contains("status") && !s.contains("(received)"), "{s}");
    // "as received" is the pane's title, not also the first row.
    t.keys("v");
    let rows = &t.app.inspector.rows;
    assert!(rows[0].text.starts_with("[["), "{:?}", rows[0]);
    assert!(t.screen().contains("Envelope — as received"));
    t.keys("vv");
    t.key(KeyCode::Esc, NONE);
    t.key(KeyCode::Esc, NONE);
    // A search hit deep in a long line is in view at 80 columns, and a hit in the context
    // is not said twice.
    t.keys("/shards");
    let s = t.screen();
    assert_eq!(s.matches("[shards]").count(), 3, "{s}");
    t.key(KeyCode::Esc, NONE);
    t.keys("/limiter");
    let s = t.screen();
    // Hits in the context: said once, and told apart by intent, sender and body.
    assert!(s.contains("rate [limiter] design"), "{s}");
    assert!(!s.contains("review — webhook"), "{s}");
    assert!(
        s.contains("CLOSE") && s.contains("· Decision recorded"),
        "{s}"
    );
    t.key(KeyCode::Esc, NONE);
    // A paste the reader repaired (no [[END]], body not indented) is previewed as fixed,
    // and the inspector says what was repaired without asking the operator to fix it.
    let damaged = "[[CLAUDE→CHATGPT v1.1]]\nthread: 01KKC11SV2Q506QQNSS2207Q64\nmessage: 01KKC11SV2Q506QQNSS2207QZZ\nparent: 01KKC3RDGKX9D6JBHZY62EVSHW\nintent: ACK\nbody: |\nnoted, thanks\nsig: none\n";
    t.act(Action::Paste(damaged.into()));
    let s = t.screen();
    assert!(s.contains("✓ fixed"), "{s}");
    assert!(s.contains("repaired: had no [[END]]"), "{s}");
    assert!(!s.contains("add `[[END]]`"), "{s}");
    t.key(KeyCode::Enter, NONE);
    let m = t.app.selected_message().unwrap();
    assert_eq!(m.id, "01KKC11SV2Q506QQNSS2207QZZ");
    let text: Vec<String> = t
        .app
        .inspector
        .rows
        .iter()
        .map(|r| r.text.clone())
        .collect();
    let all = text.join("\n");
    assert!(
        all.contains("repaired when read (2) — nothing to do"),
        "{all}"
    );
    assert!(
        !all.contains("Indent body lines") && !all.contains("add `[[END]]`"),
        "{all}"
    );
}

#[test]
fn pipe_sends_the_envelope_or_the_thread_to_a_command_and_reports_its_status() {
    let mut t = harness(demo_store(), 80, 24);
    // Nothing selected yet in a fresh list: open a thread first.
    t.key(KeyCode::Enter, NONE);
    let selected = t.app.selected_message().unwrap().clone();
    t.keys("|");
    let s = t.screen();
    assert!(s.contains(":pipe "), "{s}");
    assert!(s.contains("with the envelope on its input"), "{s}");
    t.keys("grep -c body\n");
    let Some(Effect::Pipe(req)) = t.take_effect() else {
        panic!("no pipe for the runtime")
    };
    assert_eq!(req.command, "grep -c body");
    assert_eq!(req.input, selected.canonical);
    assert!(req.what.contains(&selected.id));
    // The runtime answers with the exit status.
    t.act(Action::Piped(
        false,
        "`grep -c body` exited with status 1".into(),
    ));
    assert_eq!(t.status_line(), "`grep -c body` exited with status 1");
    assert_eq!(t.status_level(), crosstalk::app::Level::Warn);
    // Alt-| pipes the whole thread, offering the last command again.
    t.key(KeyCode::Char('|'), KeyModifiers::ALT);
    assert!(t.screen().contains(":pipe-thread grep -c body"));
    t.key(KeyCode::Enter, NONE);
    let Some(Effect::Pipe(req)) = t.take_effect() else {
        panic!("no pipe for the runtime")
    };
    let n = t.app.tree.as_ref().unwrap().outline.rows.len();
    assert_eq!(req.input.matches("[[END]]").count(), n);
    assert!(req.what.contains(&format!("({n} envelopes)")));
    // No command: nothing runs, and the status says what to write.
    t.keys(":pipe\n");
    assert_eq!(t.take_effect(), None);
    assert!(
        t.status_line()
            .contains("`:pipe` needs a command: `:pipe CMD`"),
        "{}",
        t.status_line()
    );
}

/// Drafts are counted and listed alike everywhere: an envelope composed and filed but never
/// copied (the queue's drafts) is counted in the title bar, marked ✎ in the thread list,
/// listed by `D` (Enter shows it in its thread, where `y` copies it) beside drafts being
/// composed.
#[test]
fn an_envelope_filed_but_not_copied_is_a_draft_everywhere() {
    let mut t = harness(demo_store(), 120, 40);
    let unsent = t.app.store.unsent_messages(10).unwrap();
    assert_eq!(unsent.len(), 1, "the demo files one reply it never copied");
    let filed = unsent[0].clone();
    assert!(t.app.store.drafts().unwrap().is_empty());
    let s = t.screen();
    assert!(s.contains("✎ 1 draft"), "{s}");
    let row = t
        .app
        .list
        .rows
        .iter()
        .find(|r| r.summary.id == filed.thread)
        .expect("its thread is listed");
    assert_eq!(row.drafts, 1);
    t.keys("D");
    let s = t.screen();
    assert!(s.contains("not copied: RESPOND"), "{s}");
    t.keys("x");
    assert!(
        t.status_line().contains("Enter shows it there"),
        "{:?}",
        t.status_line()
    );
    t.key(KeyCode::Enter, KeyModifiers::NONE);
    assert!(t.app.popup.is_none());
    assert_eq!(t.focused_pane(), Pane::Tree);
    assert_eq!(
        t.shown_message_id().as_deref(),
        Some(filed.message.as_str())
    );
}

/// While the terminal is too small the screen says only that: keys that would act on what
/// it does not show (erase and its `y`, copy, open) do nothing, and neither does the mouse;
/// `q` still quits.
#[test]
fn a_screen_too_small_to_see_takes_no_command() {
    let mut t = harness(demo_store(), 50, 15);
    // Too small, the screen shows no count: the list itself says nothing was erased.
    let threads = t.app.list.rows.len();
    t.keys("X");
    t.keys("y");
    t.key(KeyCode::Enter, KeyModifiers::NONE);
    t.app.update(Action::Click(3, 3));
    assert!(t.app.popup.is_none());
    assert!(t.copies().is_empty(), "{:?}", t.copies());
    assert_eq!(t.app.list.rows.len(), threads);
    assert!(t.screen().contains("Terminal too small"));
    // Big enough again: the same keys act.
    t.app.update(Action::Resize(80, 24));
    t.keys("X");
    assert!(t.app.popup.is_some(), "the erase question is asked");
    t.key(KeyCode::Esc, KeyModifiers::NONE);
    t.app.update(Action::Resize(50, 15));
    t.keys("q");
    assert!(t.app.quit);
}

/// A body back from `$EDITOR` says so on the status line, replacing what a failed edit said
/// before; bytes that were not UTF-8 (read as U+FFFD) are counted.
#[test]
fn an_edited_body_replaces_an_earlier_editor_failure_on_the_status_line() {
    let mut t = harness(demo_store(), 80, 24);
    t.keys("n");
    t.app
        .error("$EDITOR: `false` exited with exit status: 1; the body is unchanged");
    t.app
        .update(Action::EditedBody("line one\nline two".into()));
    assert_eq!(t.status_line(), "Body edited in $EDITOR.");
    t.app.update(Action::EditedBody("caf\u{FFFD} ok".into()));
    assert!(
        t.status_line().contains("1 character(s) were not UTF-8"),
        "{:?}",
        t.status_line()
    );
    assert!(t.screen().contains("caf\u{FFFD} ok"));
}

/// `:attach` on a directory says it is no file, not that it is too large.
#[test]
fn attaching_a_directory_says_it_is_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = harness(demo_store(), 80, 24);
    t.keys("n");
    t.app
        .update(Action::Run(format!("attach {}", dir.path().display())));
    assert!(
        t.status_line().contains("it is not a file"),
        "{:?}",
        t.status_line()
    );
}

/// Two windows on one database editing one draft: each keeps its text, and no two envelopes
/// are copied under one message id.
#[test]
fn two_windows_on_one_draft_keep_both_texts_and_never_share_an_id() {
    let dir = tempfile::tempdir().unwrap();
    let mut a = harness(store_in(dir.path()), 120, 40);
    a.act(Action::Paste(request().to_string()));
    a.key(KeyCode::Enter, NONE);
    a.keys("r");
    a.keys("from A");
    let id = a.app.composer.as_ref().unwrap().form.message.clone();
    a.key(KeyCode::Esc, NONE);

    // B resumes the same draft; A resumes it too, and both type.
    let mut b = harness(store_in(dir.path()), 120, 40);
    b.key(KeyCode::Enter, NONE);
    b.keys("r");
    assert_eq!(b.app.composer.as_ref().unwrap().form.message, id);
    a.keys("r");
    a.keys(" and more");
    b.keys(" but B");
    let fork = b.app.composer.as_ref().unwrap().form.message.clone();
    assert_ne!(fork, id, "B's text went under a new id");
    assert!(
        b.status_line()
            .contains("changed in another crosstalk window"),
        "{:?}",
        b.status_line()
    );
    let bodies: Vec<String> = (b.app.store.drafts().unwrap().iter())
        .map(|d| d.envelope.clone())
        .collect();
    assert_eq!(bodies.len(), 2, "{bodies:?}");
    assert!(bodies.iter().any(|t| t.contains("from A and more")));
    assert!(bodies.iter().any(|t| t.contains("from A but B")));

    // A copies its draft; B, still on the fork, copies its own under its own id.
    a.ctrl('y');
    assert!(!a.composing(), "{:?}", a.status_line());
    b.keys("!");
    b.ctrl('y');
    assert!(!b.composing(), "{:?}", b.status_line());
    let copied = [a.copies(), b.copies()].concat();
    let ids: Vec<&str> = copied
        .iter()
        .filter_map(|t| t.lines().find_map(|l| l.strip_prefix("message: ")))
        .collect();
    assert_eq!(ids.len(), 2, "{copied:?}");
    assert_ne!(ids[0], ids[1]);
    assert!(b.app.store.drafts().unwrap().is_empty());
}

/// A draft copied from one window, then sent from another that still had it open: the
/// second keeps its text under a new id and copies nothing until asked again.
#[test]
fn a_draft_filed_from_another_window_is_not_copied_again_under_its_id() {
    let dir = tempfile::tempdir().unwrap();
    let mut a = harness(store_in(dir.path()), 120, 40);
    a.act(Action::Paste(request().to_string()));
    a.key(KeyCode::Enter, NONE);
    a.keys("r");
    a.keys("first");
    a.key(KeyCode::Esc, NONE);
    let mut b = harness(store_in(dir.path()), 120, 40);
    b.key(KeyCode::Enter, NONE);
    b.keys("r");
    a.keys("r");
    a.ctrl('y');
    assert_eq!(a.copies().len(), 1);
    let id = a.copies()[0]
        .lines()
        .find_map(|l| l.strip_prefix("message: "))
        .unwrap()
        .to_string();
    b.ctrl('y');
    assert!(b.copies().is_empty(), "nothing copied under a filed id");
    let c = b.app.composer.as_ref().expect("still composing");
    assert_ne!(c.form.message, id);
    assert!(
        b.status_line().contains("copied from another"),
        "{:?}",
        b.status_line()
    );
    b.keys(" second");
    b.ctrl('y');
    assert_eq!(b.copies().len(), 1);
    assert!(!b.copies()[0].contains(&id), "{}", b.copies()[0]);
}

/// A draft another window discarded while this one still types in it is kept again, and the
/// operator is told.
#[test]
fn a_draft_discarded_in_another_window_comes_back_with_a_word() {
    let dir = tempfile::tempdir().unwrap();
    let mut a = harness(store_in(dir.path()), 120, 40);
    a.act(Action::Paste(request().to_string()));
    a.key(KeyCode::Enter, NONE);
    a.keys("r");
    a.keys("still typing");
    let mut b = harness(store_in(dir.path()), 120, 40);
    b.keys("D");
    b.keys("x");
    b.keys("x");
    assert!(
        b.app.store.drafts().unwrap().is_empty(),
        "{:?}",
        b.status_line()
    );
    a.keys(" more");
    assert!(
        a.status_line().contains("discarded or erased in another"),
        "{:?}",
        a.status_line()
    );
    let drafts = a.app.store.drafts().unwrap();
    assert_eq!(drafts.len(), 1);
    assert!(drafts[0].envelope.contains("still typing more"));
}

/// The command line recalls what was run with ↑ (and C-p), newest first, and ↓ gives back
/// what was being typed.
#[test]
fn the_command_line_recalls_the_commands_run_before() {
    let mut t = harness(demo_store(), 100, 30);
    t.keys(":drafts\n");
    t.key(KeyCode::Esc, NONE);
    t.keys(":help\n");
    t.key(KeyCode::Esc, NONE);
    t.keys(":ex");
    let prompt = |t: &support::Harness| match &t.app.popup {
        Some(crosstalk::app::popups::popup::Popup::Command(p)) => p.text.clone(),
        other => panic!("no command line: {:?}", other.is_some()),
    };
    t.key(KeyCode::Up, NONE);
    assert_eq!(prompt(&t), "help");
    t.ctrl('p');
    assert_eq!(prompt(&t), "drafts");
    t.key(KeyCode::Up, NONE);
    assert_eq!(prompt(&t), "drafts", "nothing older");
    t.key(KeyCode::Down, NONE);
    assert_eq!(prompt(&t), "help");
    t.key(KeyCode::Down, NONE);
    assert_eq!(prompt(&t), "ex", "what was typed comes back");
    assert!(t.screen().contains(":ex"), "{}", t.screen());
}

/// Text in the paste box is kept when the box is closed, as every paste is.
#[test]
fn closing_the_paste_box_keeps_its_text() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = harness(store_in(dir.path()), 100, 30);
    t.keys("p");
    assert!(
        matches!(
            t.app.popup,
            Some(crosstalk::app::popups::popup::Popup::PasteBox { .. })
        ),
        "no clipboard here: the paste box opens"
    );
    t.keys("half a transcript");
    t.key(KeyCode::Esc, NONE);
    assert!(t.app.popup.is_none());
    assert!(
        t.status_line().contains("kept as paste #"),
        "{:?}",
        t.status_line()
    );
    let pastes = t.app.store.pastes().unwrap();
    assert_eq!(pastes.len(), 1);
    let kept = t.app.store.paste_bytes(pastes[0].id).unwrap().unwrap();
    assert_eq!(kept, b"half a transcript");
    // An empty box leaves nothing behind.
    t.keys("p");
    t.key(KeyCode::Esc, NONE);
    assert_eq!(t.app.store.pastes().unwrap().len(), 1);
}

/// At 80×24 a message longer than the status and hint lines is cut, and says where to read
/// it whole: `:messages` shows every word of what the status line said, newest last, the
/// earlier messages above; Esc closes it.
#[test]
fn a_message_cut_at_80_columns_is_read_whole_in_messages() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = harness(store_in(dir.path()), 80, 24);
    t.act(Action::Paste(request().to_string()));
    t.key(KeyCode::Enter, NONE);
    t.keys(":bogus");
    t.key(KeyCode::Enter, NONE);
    let screen = t.screen();
    let status: Vec<&str> = screen.lines().rev().take(2).collect();
    assert!(status[0].trim_end().ends_with(":messages"), "{screen}");
    assert!(!screen.contains("raw, quit."), "cut: {screen}");
    t.keys(":messages");
    t.key(KeyCode::Enter, NONE);
    let screen = t.screen();
    assert!(screen.contains("Messages"), "{screen}");
    assert!(
        screen.contains("raw, quit."),
        "the end of the message: {screen}"
    );
    assert!(screen.contains("Unknown command `:bogus`"), "{screen}");
    assert!(
        screen.contains("Imported 1"),
        "the message before it: {screen}"
    );
    let order = |s: &str| screen.find(s).unwrap();
    assert!(order("Imported 1") < order("Unknown command"), "{screen}");
    t.key(KeyCode::Esc, NONE);
    assert!(t.app.popup.is_none());
    // Many messages: it opens at the newest, and scrolls back to the oldest kept.
    for i in 0..30 {
        t.keys(&format!(":nosuch{i}"));
        t.key(KeyCode::Enter, NONE);
    }
    t.keys(":messages");
    t.key(KeyCode::Enter, NONE);
    let screen = t.screen();
    assert!(screen.contains(":nosuch29`"), "{screen}");
    assert!(!screen.contains(":nosuch0`"), "{screen}");
    t.key(KeyCode::Home, NONE);
    let screen = t.screen();
    assert!(screen.contains("Empty database"), "{screen}");
    assert!(!screen.contains(":nosuch29`"), "{screen}");
    t.key(KeyCode::End, NONE);
    assert!(t.screen().contains(":nosuch29`"), "{}", t.screen());
}

/// The status line speaks of what is on screen: a message about an action stays while the
/// operator stays where it happened (another pane of the same message), and goes once another
/// message or thread is selected or another view opens, errors as well; an action that moves
/// says its own message; `:messages` keeps everything that was said.
#[test]
fn a_status_message_goes_when_the_operator_moves_on() {
    let mut t = harness(demo_store(), 120, 40);
    t.key(KeyCode::Enter, NONE);
    t.keys("y");
    let copied = t.status_line();
    assert!(copied.contains("OSC 52"), "{copied}");
    t.key(KeyCode::Tab, NONE);
    assert_eq!(t.focused_pane(), Pane::Inspector);
    assert_eq!(t.status_line(), copied, "the same message, in another pane");
    t.key(KeyCode::Esc, NONE);
    t.keys("k");
    assert_eq!(t.status_line(), "", "another message is selected");
    assert!(!t.screen().contains("OSC 52"), "{}", t.screen());

    t.keys(":bogus\n");
    assert_eq!(t.status_level(), crosstalk::app::Level::Error);
    t.key(KeyCode::Tab, NONE);
    assert!(
        t.status_line().starts_with("Unknown command"),
        "an error stays put"
    );
    t.key(KeyCode::Esc, NONE);
    t.key(KeyCode::Esc, NONE);
    assert_eq!(t.focused_pane(), Pane::List);
    t.keys("j");
    assert_eq!(t.status_line(), "", "another thread is selected");

    // A view opened clears the line; closing it says nothing either.
    t.keys("y");
    assert!(!t.status_line().is_empty());
    t.keys("?");
    assert_eq!(t.status_line(), "", "help opened");
    t.key(KeyCode::Esc, NONE);

    // Moving with something to say: the new message stands.
    t.keys("s");
    assert!(
        t.status_line().starts_with("Showing threads"),
        "{:?}",
        t.status_line()
    );

    t.keys(":messages\n");
    let s = t.screen();
    assert!(s.contains("Unknown command `:bogus`"), "{s}");
    assert!(s.contains("Showing threads"), "{s}");
}

/// In the composer ↑ and ↓ go by the rows the body shows, wrapped between words, and keep
/// the column a run of them started from across a shorter line; Shift selects as it goes.
#[test]
fn the_composer_moves_up_and_down_by_wrapped_rows() {
    let mut t = harness(demo_store(), 80, 24);
    t.keys("n");
    let first = format!("{}kalle@example.com end", "word ".repeat(14));
    t.keys(&first);
    let at = |t: &support::Harness| {
        let c = t.app.composer.as_ref().unwrap().body.cursor();
        (c.0, c.1)
    };
    assert_eq!(at(&t), (0, 91));
    // The box is 78 wide: the address begins the second row, 21 cells before the end.
    t.key(KeyCode::Up, NONE);
    assert_eq!(
        at(&t),
        (0, 21),
        "the same cell one row up, in the same line"
    );
    t.key(KeyCode::Down, NONE);
    assert_eq!(at(&t), (0, 91));
    t.key(KeyCode::Enter, NONE);
    t.keys("ab");
    t.key(KeyCode::Enter, NONE);
    t.keys("a third line, long enough");
    t.key(KeyCode::Up, NONE);
    assert_eq!(at(&t), (1, 2), "the short line's end");
    t.key(KeyCode::Up, NONE);
    assert_eq!(at(&t), (0, 91), "as near the column as the row reaches");
    t.key(KeyCode::Down, NONE);
    t.key(KeyCode::Down, NONE);
    assert_eq!(at(&t), (2, 25));
    // Shift+↑ selects from where it was.
    t.key(KeyCode::Up, KeyModifiers::SHIFT);
    let c = t.app.composer.as_ref().unwrap();
    assert_eq!(c.body.selection_range(), Some(((1, 2), (2, 25))));
    // A page up from the bottom reaches the first row.
    t.key(KeyCode::Down, NONE);
    t.key(KeyCode::PageUp, NONE);
    assert_eq!(at(&t).0, 0);
}

/// Quitting remembers the open thread, the selected message, the filters and the focus;
/// the next start on the same database reopens them. A thread erased meanwhile leaves the
/// list as a fresh start shows it, without a word; another database has its own place.
#[test]
fn the_app_reopens_the_thread_and_filters_it_had_when_it_quit() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let place = dir.path().join("state").join("last-place.json");
    let mut store = Store::open(&db).unwrap();
    for (thread, context) in [
        ("01KB0000000000000000000001", "alpha plan"),
        ("01KB0000000000000000000002", "beta plan"),
        ("01KB0000000000000000000003", "gamma"),
    ] {
        let text = format!(
            "[[CLAUDE→CHATGPT v1]]\nuser: u\nthread: {thread}\nmessage: {thread}\ncontext: {context}\nintent: REQUEST\nbody: |\n  first of {context}\nsig: none\n[[END]]\n\
             [[CHATGPT→CLAUDE v1]]\nuser: u\nthread: {thread}\nparent: {thread}\nmessage: {thread}Z\ncontext: {context}\nintent: RESPOND\nbody: |\n  second of {context}\nsig: none\n[[END]]\n"
        );
        let text = text.replace(&format!("{thread}Z"), &thread.replace("0000000", "0000001"));
        store.import_text("t", &text, &Default::default()).unwrap();
    }
    drop(store);
    let start = |place: &std::path::Path| {
        let mut t = support::harness_unstarted(&db, 120, 40);
        t.app.settings.place_file = Some(place.to_path_buf());
        t.app.start();
        t
    };
    let mut t = start(&place);
    // The newest thread, its last message: a fresh start.
    assert_eq!(t.app.list.selected_id(), Some("01KB0000000000000000000003"));
    t.keys("fplan\n");
    t.keys("j");
    t.keys("k");
    t.key(KeyCode::Tab, NONE);
    let (thread, message) = (
        t.app.tree.as_ref().unwrap().outline.id.clone(),
        t.shown_message_id().unwrap(),
    );
    assert_eq!(thread, "01KB0000000000000000000002");
    assert_eq!(message, thread, "the first message, not the thread's last");
    t.app.finish(Duration::from_millis(10));

    let t = start(&place);
    assert_eq!(t.app.list.filter, "plan");
    assert_eq!(t.thread_count(), 2);
    assert_eq!(t.app.tree.as_ref().unwrap().outline.id, thread);
    assert_eq!(t.shown_message_id().as_deref(), Some(message.as_str()));
    assert_eq!(t.focused_pane(), Pane::Inspector);
    let s = t.screen();
    assert!(
        s.contains("filter: plan") && s.contains("first of beta plan"),
        "{s}"
    );

    // The state filter too.
    let mut t = start(&place);
    t.key(KeyCode::Esc, NONE);
    t.key(KeyCode::Esc, NONE);
    t.key(KeyCode::Esc, NONE);
    t.keys("s");
    let state = t.app.list.state;
    assert_ne!(state, crosstalk::store::StateFilter::All);
    t.app.finish(Duration::from_millis(10));
    let t = start(&place);
    assert_eq!(t.app.list.state, state);
    assert!(t.screen().contains(" of 3"), "{}", t.screen());

    // Erased meanwhile: the list as at any start, and no word about it.
    let mut t = start(&place);
    t.keys("s");
    while t.app.list.state != crosstalk::store::StateFilter::All {
        t.keys("s");
    }
    t.keys("gj");
    let gone = t.app.list.selected_id().unwrap().to_string();
    t.app.finish(Duration::from_millis(10));
    drop(t);
    let mut store = Store::open(&db).unwrap();
    store
        .erase(&crosstalk::store::EraseTarget::Thread(gone.clone()))
        .unwrap();
    drop(store);
    let t = start(&place);
    assert_eq!(t.app.list.selected_id(), Some("01KB0000000000000000000003"));
    assert_eq!(t.focused_pane(), Pane::List);
    assert!(!t.status_line().contains(&gone), "{:?}", t.status_line());
    assert_eq!(t.status_level(), crosstalk::app::Level::Info);

    // Without a place file (the demo) nothing is remembered.
    let mut t = support::harness_unstarted(&db, 120, 40);
    t.app.start();
    t.keys("fgamma\n");
    t.app.finish(Duration::from_millis(10));
    let t = start(&place);
    assert_eq!(t.app.list.filter, "");
}

/// `[watch] on_start` starts the clipboard watch with the app; where no clipboard can be
/// read the status line says so, as `W` does, naming the setting.
#[test]
fn watch_on_start_starts_the_watch_or_says_why_not() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let mut t = support::harness_unstarted(&db, 120, 40);
    t.app.watch_config.on_start = true;
    t.app.start();
    assert!(!t.watch_mark_shown(), "{}", t.screen());
    assert_eq!(t.status_level(), crosstalk::app::Level::Error);
    assert!(
        t.status_line()
            .starts_with("Cannot watch the clipboard: no clipboard reachable")
            && t.status_line().ends_with("([watch] on_start)"),
        "{:?}",
        t.status_line()
    );
    drop(t);

    // A clipboard read by a command: watched from the start, and what it holds imported.
    let clip = dir.path().join("clipboard.txt");
    std::fs::write(&clip, "").unwrap();
    let mut t = support::harness_unstarted(&db, 120, 40);
    t.app.clipboard = crosstalk::clipboard::Clipboard::new(
        crosstalk::clipboard::ClipboardConfig {
            paste_command: Some(format!("cat {}", clip.display())),
            ..Default::default()
        },
        crosstalk::clipboard::Env::default(),
        dir.path().to_path_buf(),
    );
    t.app.watch_config.on_start = true;
    t.app.watch_config.interval_ms = 50;
    t.app.start();
    assert!(t.watch_mark_shown(), "{:?}", t.status_line());
    // What the clipboard holds at the watch's first look is not new: copied after it.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !t.status_line().starts_with("Watching the clipboard") && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
        t.act(Action::Tick);
    }
    std::fs::write(&clip, request()).unwrap();
    while t.app.list.rows.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
        t.act(Action::Tick);
    }
    assert_eq!(t.thread_count(), 1, "{:?}", t.status_line());
}

/// A received envelope's `meta: safety` content warning stands out in the inspector, ahead of
/// the body it warns of, and says so on the folded headers line too; its allowed uses are a
/// row of their own. Read from the screen, where the operator reads it.
#[test]
fn a_content_warning_is_shown_ahead_of_the_body() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = harness(store_in(dir.path()), 100, 40);
    let text = "[[CLAUDE→CHATGPT v1.1]]\nthread: 01K0000000000000000000000A\nmessage: 01K0000000000000000000000B\ncontext: triage\nintent: REQUEST\nmeta: safety\n  Content-Warning: graphic injury\n  Allowed-Use: general, no_training\nbody: |\n  The report follows.\nsig: none\n[[END]]\n";
    t.act(Action::Paste(text.into()));
    t.key(KeyCode::Enter, NONE);
    let screen = t.screen();
    let warning = screen.find("⚠ content warning: graphic injury");
    let uses = screen.find("general, no_training");
    // The inspector's body, below the tree's row that starts with it.
    let body = screen.rfind("The report follows.");
    assert!(
        warning.is_some() && uses.is_some() && body.is_some(),
        "{screen}"
    );
    assert!(warning < body, "the warning comes first:\n{screen}");
    // Folded headers say a warning waits below.
    t.act(Action::ToggleHeaders);
    let folded = t.screen();
    assert!(folded.contains("headers ("), "{folded}");
    assert!(folded.contains("content warning below"), "{folded}");
}

/// The intent picker jumps by first letter (`c` CLOSE, `p` POLL, `R` again from REQUEST to
/// RESPOND), while `h` `j` `k` `l` and the arrows still step; read from the picker on screen.
#[test]
fn the_intent_picker_jumps_to_an_intent_by_its_letter() {
    let mut t = harness(Store::open_in_memory().unwrap(), 120, 40);
    t.keys("n");
    t.keys("Done here.");
    t.key(KeyCode::Tab, NONE);
    t.keys("human://op\nCLAUDE\n");
    // Focused, the picker lists every intent, the current one marked.
    let s = t.screen();
    assert!(
        s.contains("▶intent  [REQUEST] RESPOND ESCALATE HANDOFF POLL ACK NACK ERROR")
            && s.contains("         BROADCAST REVOKE CLOSE"),
        "{s}"
    );
    // The marked one, on the picker's two rows (left of the preview's border).
    let picked = |t: &support::Harness| {
        let s = t.screen();
        let rows: String = (s.lines())
            .skip_while(|l| !l.starts_with("▶intent"))
            .take(2)
            .map(|l| l.split(['│', '┌']).next().unwrap_or_default().to_string())
            .collect();
        let open = rows.find('[').unwrap_or(0);
        let close = rows.find(']').unwrap_or(0);
        rows[open + 1..close].to_string()
    };
    t.keys("c");
    assert_eq!(picked(&t), "CLOSE");
    t.keys("p");
    assert_eq!(picked(&t), "POLL");
    t.keys("j");
    assert_eq!(picked(&t), "ACK");
    t.keys("RR");
    assert_eq!(picked(&t), "RESPOND");
    // A letter no intent begins changes nothing.
    t.keys("z");
    assert_eq!(picked(&t), "RESPOND");
    // What is copied carries the intent picked.
    t.key(KeyCode::Enter, NONE);
    t.ctrl('y');
    let copy = t.copies().pop().unwrap();
    assert!(copy.contains("\nintent: RESPOND\n"), "{copy}");
}
