//! POLL and ERROR flows driven by actions: `P` opens the poll panel (targets × answered ×
//! vote, quorum, time left), `c` after the deadline writes the E-TIMEOUT ERRORs and the CLOSE
//! and copies the CLOSE; `E` picks an ERROR code (or NACK) and opens the composer on the
//! spec's ERROR reply; `E` in the paste preview answers a broken envelope with E-FORMAT.

use crate::helpers::support;

use crosstalk::app::Action;
use crosstalk::app::popups::popup::Popup;
use ratatui::crossterm::event::{KeyCode, KeyModifiers};
use support::{harness, store_in};

const NONE: KeyModifiers = KeyModifiers::NONE;

/// A ULID of time `t` (RFC 3339), made unique by `n`.
fn id_at(t: &str, n: u128) -> String {
    let ms = t.parse::<jiff::Timestamp>().unwrap().as_millisecond() as u64;
    ulid::Ulid::from_parts(ms, n).to_string()
}

/// (thread, poll, reply of claude, text): a 2-of-3 POLL answered by two targets.
fn two_of_three() -> (String, String, String, String) {
    let thread = id_at("2025-10-09T16:00:00Z", 1);
    let poll = id_at("2025-10-09T16:00:00Z", 2);
    let (a, b) = (
        id_at("2025-10-09T16:10:00Z", 3),
        id_at("2025-10-09T16:20:00Z", 4),
    );
    let text = format!(
        "[[human://op→POLL v1]]\nuser: kalle\nsession: 2025-10-09T16Z a7f3d1\nthread: {thread}\n\
message: {poll}\ncontext: storage\nintent: POLL\nmeta: routing\n\
Targets: [\"claude://s/a\", \"chatgpt://t/x\", \"gemini://g\"]\nmeta: poll\nType: consensus\n\
Quorum: 2-of-3\nDeadline: 2025-10-09T18:00Z\nbody: |\n  Which store?\n  SQLITE | FILES | ABSTAIN?\n\
sig: none\n[[END]]\n\n\
[[claude://s/a→human://op v1]]\nuser: claude\nsession: 2025-10-09T16Z a7f3d1\nthread: {thread}\n\
parent: {poll}\nmessage: {a}\nintent: RESPOND\nbody: |\n  SQLITE, it is one file.\nsig: none\n[[END]]\n\n\
[[chatgpt://t/x→human://op v1]]\nuser: gpt\nsession: 2025-10-09T16Z a7f3d1\nthread: {thread}\n\
parent: {poll}\nmessage: {b}\nintent: RESPOND\nmeta: poll\nVote: files\nbody: |\n  \
Either works.\nsig: none\n[[END]]\n"
    );
    (thread, poll, a, text)
}

fn at(t: &str) -> Option<jiff::Timestamp> {
    Some(t.parse().unwrap())
}

#[test]
fn p_tallies_a_poll_and_c_closes_it_after_the_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = store_in(dir.path());
    let (thread, poll, reply, text) = two_of_three();
    store.import_text("t", &text, &Default::default()).unwrap();
    support::replay_arrivals(&mut store, &text);
    let mut t = harness(store, 120, 40);
    t.app.fixed_now = at("2025-10-09T17:00:00Z");
    t.act(Action::Run(format!("open {poll}")));
    assert_eq!(t.shown_message_id().as_deref(), Some(poll.as_str()));
    t.keys("P");
    assert!(
        matches!(t.app.popup, Some(Popup::Poll(_))),
        "{:?}",
        t.status_line()
    );
    let s = t.screen();
    for want in [
        "Poll — c closes after the deadline",
        "claude://s/a   yes       SQLITE",
        "chatgpt://t/x  yes       FILES",
        "gemini://g     no        -",
        "Votes: SQLITE 1 · FILES 1 · ABSTAIN 0",
        "Quorum: 2 of 2 needed — reached",
        "Deadline: 2025-10-09T18:00Z — 1h 0m left",
        "Not closable yet: the poll runs until its deadline",
    ] {
        assert!(s.contains(want), "{want}\n{s}");
    }
    // Before the deadline `c` writes nothing.
    t.keys("c");
    assert!(
        t.status_line().contains("Poll not closed"),
        "{:?}",
        t.status_line()
    );
    assert_eq!(
        t.app.store.thread(&thread).unwrap().unwrap().messages.len(),
        3
    );
    t.key(KeyCode::Esc, NONE);
    assert!(t.app.popup.is_none());

    // After it: one E-TIMEOUT for the silent target, and the CLOSE, copied.
    t.app.fixed_now = at("2025-10-09T19:00:00Z");
    t.keys("P");
    assert!(
        t.screen()
            .contains("c: write E-TIMEOUT for 1 silent target(s)")
    );
    t.keys("c");
    assert!(t.app.popup.is_none());
    let status = t.status_line();
    assert!(
        status.contains("Poll closed: wrote 1 E-TIMEOUT ERROR(s) (for gemini://g) and a CLOSE"),
        "{status}"
    );
    let copy = t.copies().pop().unwrap();
    assert!(
        copy.contains("intent: CLOSE") && copy.contains("SQLITE: 1"),
        "{copy}"
    );
    let view = t.app.store.thread(&thread).unwrap().unwrap();
    assert_eq!(view.messages.len(), 5);
    let error = view
        .messages
        .iter()
        .find(|m| m.intent.as_deref() == Some("ERROR"))
        .unwrap();
    // Written by the desk (the operator's own name), for gemini, never as gemini.
    assert_eq!(error.envelope.banner.from, "human://op");
    assert_eq!(error.envelope.user(), Some("system"));
    assert_eq!(
        error.envelope.meta_block("error").unwrap().get("Target"),
        Some("gemini://g")
    );
    assert_eq!(error.parent.as_deref(), Some(poll.as_str()));
    let meta = error.envelope.meta_block("error").unwrap();
    assert_eq!(meta.get("Code"), Some("E-TIMEOUT"));
    assert_eq!(meta.get("Original-Intent"), Some("POLL"));
    // `y` copies the ERROR, which awaits no reply: the status line says so.
    let error_id = error.id.clone();
    t.act(Action::Run(format!("open {error_id}")));
    t.keys("y");
    let status = t.status_line();
    assert!(
        status.contains("awaits no reply") && !status.contains("awaiting reply"),
        "{status}"
    );
    // The panel now reads closed; `c` again writes nothing.
    t.act(Action::Run(format!("open {poll}")));
    t.keys("P");
    assert!(t.screen().contains("Closed by"), "{}", t.screen());
    t.keys("c");
    assert!(
        t.status_line().contains("already closed"),
        "{:?}",
        t.status_line()
    );
    t.key(KeyCode::Esc, NONE);
    // P on an answer opens its POLL's panel; on a message that neither is nor answers a
    // POLL it says so.
    t.act(Action::Run(format!("open {reply}")));
    t.keys("P");
    assert!(matches!(t.app.popup, Some(Popup::Poll(_))));
    t.key(KeyCode::Esc, NONE);
    let v = crosstalk::ids::IdGenerator::new();
    let (other, m) = (v.next_id(), v.next_id());
    t.act(Action::Paste(format!(
        "[[CLAUDE→CHATGPT v1]]\nuser: kalle\nthread: {other}\nmessage: {m}\nintent: REQUEST\n\
         body: |\n  Hi.\nsig: none\n[[END]]\n"
    )));
    t.key(KeyCode::Enter, NONE);
    t.act(Action::Run(format!("open {m}")));
    assert_eq!(t.shown_message_id().as_deref(), Some(m.as_str()));
    t.keys("P");
    assert!(t.app.popup.is_none());
    assert!(
        t.status_line().contains("Not a POLL (intent REQUEST)"),
        "{:?}",
        t.status_line()
    );
}

#[test]
fn e_picks_a_code_and_composes_the_error_reply() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = store_in(dir.path());
    let (thread, _, reply, text) = two_of_three();
    store.import_text("t", &text, &Default::default()).unwrap();
    let mut t = harness(store, 120, 40);
    t.act(Action::Run(format!("open {reply}")));
    t.keys("E");
    let s = t.screen();
    assert!(
        s.contains("E-ROUTE") && s.contains("E-RATE") && s.contains("NACK"),
        "{s}"
    );
    // The picker's own keys are hinted, not the drafts list's.
    let hints = s.lines().rev().nth(1).unwrap_or_default();
    assert!(hints.contains("open") && !hints.contains("discard"), "{s}");
    t.keys("jj\n");
    let c = t.app.composer.as_ref().expect("composer");
    assert_eq!(c.form.intent, "ERROR");
    assert_eq!(c.form.user, "system");
    assert_eq!(c.form.parent.as_deref(), Some(reply.as_str()));
    assert_eq!(c.form.thread, thread);
    assert_eq!(
        (c.form.from.as_str(), c.form.to.as_str()),
        ("human://op", "claude://s/a")
    );
    assert!(c.form.meta.contains("Code: E-FORMAT"), "{}", c.form.meta);
    assert!(c.form.meta.contains("Original-Intent: RESPOND"));
    let id = c.form.message.clone();
    t.ctrl('y');
    assert!(!t.composing(), "{:?}", t.status_line());
    let copy = t.copies().pop().unwrap();
    assert!(
        copy.contains("meta: error\nCode: E-FORMAT\nReason: Malformed envelope"),
        "{copy}"
    );
    let stored = t.app.store.message(&id).unwrap().unwrap();
    assert_eq!(stored.intent.as_deref(), Some("ERROR"));
    assert_eq!(stored.thread, thread);
    assert_eq!(stored.parent.as_deref(), Some(reply.as_str()));

    // The last choice is a NACK; Esc on the picker composes nothing.
    t.act(Action::Run(format!("open {reply}")));
    t.keys("E");
    t.key(KeyCode::Esc, NONE);
    assert!(t.app.popup.is_none() && !t.composing());
    t.keys("E");
    t.keys(&"j".repeat(12));
    t.keys("\n");
    let c = t.app.composer.as_ref().expect("composer");
    assert_eq!(c.form.intent, "NACK");
    assert_eq!(c.form.parent.as_deref(), Some(reply.as_str()));
}

#[test]
fn e_in_the_preview_answers_a_broken_envelope_with_e_format() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = harness(store_in(dir.path()), 120, 40);
    let id = id_at("2025-10-09T16:00:00Z", 9);
    let broken = format!(
        "[[CLAUDE→CHATGPT v1]]\nuser: kalle\nthread: {id}\nparent: {id}\nmessage: {id}\n\
         intent: REQUEST\nbody: |\n  Answering myself?\nsig: none\n[[END]]\n"
    );
    t.act(Action::Paste(broken));
    assert!(matches!(t.app.popup, Some(Popup::Preview(_))));
    let s = t.screen();
    assert!(s.contains("E: reply E-FORMAT to the sender"), "{s}");
    t.keys("E");
    assert!(t.app.popup.is_none());
    let c = t.app.composer.as_ref().expect("composer");
    assert_eq!(c.form.intent, "ERROR");
    assert_eq!(c.form.to, "CLAUDE");
    assert_eq!(c.form.parent.as_deref(), Some(id.as_str()));
    assert!(c.form.meta.contains("Code: E-FORMAT"));
    assert!(c.form.body.contains("[self-parent]"), "{}", c.form.body);
    assert!(
        t.status_line().contains("E-FORMAT reply to CLAUDE"),
        "{:?}",
        t.status_line()
    );
    t.ctrl('y');
    assert!(!t.composing(), "{:?}", t.status_line());
    assert!(t.copies().pop().unwrap().contains("Code: E-FORMAT"));

    // A clean paste offers nothing to answer.
    let v = id_at("2025-10-09T16:00:00Z", 10);
    t.act(Action::Paste(format!(
        "[[CLAUDE→CHATGPT v1]]\nuser: kalle\nthread: {v}\nmessage: {v}\nintent: REQUEST\n\
         body: |\n  Fine.\nsig: none\n[[END]]\n"
    )));
    t.keys("E");
    assert!(matches!(t.app.popup, Some(Popup::Preview(_))));
    assert!(
        t.status_line().contains("nothing to answer"),
        "{:?}",
        t.status_line()
    );
}

#[test]
fn hostile_poll_text_reaches_the_panel_made_safe() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = store_in(dir.path());
    let (thread, poll) = (
        id_at("2025-10-09T16:00:00Z", 21),
        id_at("2025-10-09T16:00:00Z", 22),
    );
    let text = format!(
        "[[human://op→POLL v1]]\nuser: kalle\nthread: {thread}\nmessage: {poll}\nintent: POLL\n\
meta: routing\nTargets: [\"evil\u{1b}[2J\", \"b\u{202e}c\"]\nmeta: poll\nQuorum: 99999999999999999999\n\
Deadline: \u{1b}]52;c;aGk=\u{7}\nbody: |\n  \u{1b}[31mred\u{1b}[0m | B\u{9b}X | ok\nsig: none\n[[END]]\n"
    );
    store.import_text("t", &text, &Default::default()).unwrap();
    let mut t = harness(store, 120, 40);
    t.act(Action::Run(format!("open {poll}")));
    t.keys("P");
    assert!(
        matches!(t.app.popup, Some(Popup::Poll(_))),
        "{:?}",
        t.status_line()
    );
    let s = t.screen();
    assert!(s.contains("Quorum: 0 of 2 needed"), "{s}");
    assert!(s.contains("deadline unreadable"), "{s}");
    for bad in ['\u{1b}', '\u{7}', '\u{9b}', '\u{202e}'] {
        assert!(!s.contains(bad), "{bad:?} on screen:\n{s}");
    }
    t.keys("c");
    assert!(
        t.status_line().contains("Poll not closed"),
        "{:?}",
        t.status_line()
    );
}

/// At 80×24 the ERROR composer leaves the body lines to write in: its four-line
/// `meta: error` block (five lines) shows one (the block's title says how many there are) until the
/// META field is focused, which then shows it whole.
#[test]
fn the_error_composer_at_80_by_24_keeps_room_for_the_body() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = store_in(dir.path());
    let (_, _, reply, text) = two_of_three();
    store.import_text("t", &text, &Default::default()).unwrap();
    let mut t = harness(store, 80, 24);
    t.act(Action::Run(format!("open {reply}")));
    t.keys("E");
    t.keys("jj\n");
    assert!(t.composing());
    for line in ["first line", "second line", "third line"] {
        t.act(Action::Paste(format!("{line}\n")));
    }
    let s = t.screen();
    for line in ["first line", "second line", "third line"] {
        assert!(s.contains(line), "{line} in sight:\n{s}");
    }
    assert!(
        s.contains("5 lines; Tab"),
        "the block says it holds more:\n{s}"
    );
    // Focused, the block shows every line.
    while t.app.composer.as_ref().unwrap().focus != crosstalk::app::writing::composer::Field::Meta {
        t.key(KeyCode::Tab, KeyModifiers::NONE);
    }
    let s = t.screen();
    for entry in ["Code: E-FORMAT", "Original-Intent: RESPOND"] {
        assert!(s.contains(entry), "{entry}:\n{s}");
    }
}

/// `M` on a reply the desk placed (marked ≈), then `M` on the message it answers, moves it;
/// `Esc` between the two leaves it; a reply whose envelope names its parent is not moved.
#[test]
fn m_moves_a_reply_the_desk_placed() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = store_in(dir.path());
    let text = "[[CLAUDE→CHATGPT v1]]\nsession: s9\nintent: REQUEST\nbody: |\n  First question?\n[[END]]\n\
[[CLAUDE→CHATGPT v1]]\nsession: s9\nintent: REQUEST\nbody: |\n  Second question?\n[[END]]\n\
[[CHATGPT→CLAUDE v1]]\nsession: s9\nresponse: |\n  The answer to the first.\n[[END]]\n";
    let r = store.import_text("t", text, &Default::default()).unwrap();
    let ids: Vec<String> = r.items.iter().filter_map(|i| i.message.clone()).collect();
    let mut t = harness(store, 120, 40);
    t.act(Action::Run(format!("open {}", ids[2])));
    assert!(t.screen().contains("≈ "), "{}", t.screen());
    assert!(t.screen().contains("placed by the desk"), "{}", t.screen());
    t.keys("M");
    assert!(
        t.status_line().contains("Moving this reply"),
        "{:?}",
        t.status_line()
    );
    t.key(KeyCode::Esc, NONE);
    assert!(t.app.moving.is_none());
    assert_eq!(
        t.app
            .store
            .message(&ids[2])
            .unwrap()
            .unwrap()
            .parent
            .as_deref(),
        Some(ids[1].as_str())
    );
    t.keys("M");
    // The first question: the thread's root (the thread is named after it).
    t.app.focus = crosstalk::app::Pane::Tree;
    t.keys("g");
    assert_eq!(t.shown_message_id().as_deref(), Some(ids[0].as_str()));
    t.keys("M");
    assert!(t.status_line().contains("Moved"), "{:?}", t.status_line());
    assert_eq!(
        t.app
            .store
            .message(&ids[2])
            .unwrap()
            .unwrap()
            .parent
            .as_deref(),
        Some(ids[0].as_str())
    );
    assert_eq!(t.shown_message_id().as_deref(), Some(ids[2].as_str()));
    // The first question names no parent and was placed by nobody: not movable.
    t.keys("g");
    t.keys("M");
    assert!(
        t.status_line().contains("only a reply the desk placed"),
        "{:?}",
        t.status_line()
    );
}
