//! App flows of the import's integrity rules, driven by actions: an id conflict is a loud ✗
//! row and its text is reachable with `V`; after an import the newest envelope the paste added
//! is selected, so `y` copies what just arrived; invalid ids are imported with fresh ids (`F`)
//! and a reply naming the original id threads under the fresh one.

use crate::helpers::support;

use crosstalk::app::Action;
use crosstalk::ids::IdGenerator;
use ratatui::crossterm::event::{KeyCode, KeyModifiers};
use support::{harness, store_in};

const NONE: KeyModifiers = KeyModifiers::NONE;

fn ids(n: usize) -> Vec<String> {
    let g = IdGenerator::new();
    (0..n).map(|_| g.next_id()).collect()
}

fn env(from: &str, thread: &str, parent: Option<&str>, message: &str, body: &str) -> String {
    let parent = parent.map_or(String::new(), |p| format!("parent: {p}\n"));
    format!(
        "[[{from}→op v1]]\nuser: kalle\nthread: {thread}\n{parent}message: {message}\n\
         context: integrity flow\nintent: REQUEST\nbody: |\n  {body}\nsig: none\n[[END]]\n"
    )
}

#[test]
fn an_id_conflict_is_a_loud_row_and_its_text_is_kept_and_shown_with_v() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = harness(store_in(dir.path()), 120, 36);
    let id = ids(2);
    t.act(Action::Paste(env(
        "claude",
        &id[0],
        None,
        &id[1],
        "the original words",
    )));
    t.key(KeyCode::Enter, NONE);
    assert!(t.app.popup.is_none());

    t.act(Action::Paste(env(
        "claude",
        &id[0],
        None,
        &id[1],
        "words someone changed",
    )));
    let screen = t.screen();
    assert!(screen.contains("✗ id"), "{screen}");
    assert!(screen.contains("kept as conflicting version"), "{screen}");
    assert!(screen.contains("[id-conflict]"), "{screen}");
    assert!(!screen.contains("No problems found"), "{screen}");
    assert!(!screen.contains("= dup"), "{screen}");

    t.key(KeyCode::Enter, NONE);
    assert!(t.app.popup.is_none());
    assert!(
        t.status_line().contains("1 id conflict(s)"),
        "{:?}",
        t.status_line()
    );
    // The conflicting message is selected; the stored text is shown with a note.
    assert_eq!(t.shown_message_id().as_deref(), Some(id[1].as_str()));
    let screen = t.screen();
    assert!(screen.contains("the original words"), "{screen}");
    assert!(screen.contains("id conflict: 1 other text"), "{screen}");

    // V: the conflicting version, what differs named.
    t.keys("V");
    let screen = t.screen();
    assert!(screen.contains("words someone changed"), "{screen}");
    assert!(screen.contains("conflicting version 1 of 1"), "{screen}");
    assert!(screen.contains("stored message in: body"), "{screen}");
    // y copies the version shown, and does not record the stored message relayed.
    let relayed = |t: &support::Harness| t.app.store.delivery(&id[1]).unwrap().unwrap().relayed;
    let before = relayed(&t);
    t.keys("y");
    assert!(t.copies().last().unwrap().contains("words someone changed"));
    assert!(
        t.status_line().contains("not recorded as relayed"),
        "{:?}",
        t.status_line()
    );
    assert_eq!(relayed(&t), before);
    // V again: the stored text.
    t.keys("V");
    let screen = t.screen();
    assert!(screen.contains("the original words"), "{screen}");
    assert!(!screen.contains("words someone changed"), "{screen}");
}

#[test]
fn after_import_the_newest_envelope_added_is_selected_and_copied() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = harness(store_in(dir.path()), 120, 36);
    let id = ids(4);
    // Stored before: the question.
    t.act(Action::Paste(env(
        "op",
        &id[0],
        None,
        &id[1],
        "the question",
    )));
    t.key(KeyCode::Enter, NONE);
    // The paste: the reply first, then the question quoted again (a duplicate), then an
    // older message quoted that was not stored yet. The reply's id is the newest.
    let older = "01J9J3D9C2V8M4P1R6S8T9V0V1";
    let paste = format!(
        "{}\n{}\n{}",
        env("claude", &id[0], Some(&id[1]), &id[3], "the fresh answer"),
        env("op", &id[0], None, &id[1], "the question"),
        env("claude", &id[0], None, older, "an old quoted note"),
    );
    t.act(Action::Paste(paste));
    t.key(KeyCode::Enter, NONE);
    assert_eq!(
        t.shown_message_id().as_deref(),
        Some(id[3].as_str()),
        "{:?}",
        t.status_line()
    );
    t.keys("y");
    let copied = t.copies().last().unwrap().clone();
    assert!(copied.contains("the fresh answer"), "{copied}");
}

#[test]
fn invalid_ids_are_offered_fresh_ones_with_f_and_the_original_is_shown() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = harness(store_in(dir.path()), 120, 36);
    let (bad_thread, bad_message) = ("01J9J3D9C2V8M4P1R6S8T9U0V1", "01J9J3D9C2V8M4P1R6S8T9U0V2");
    t.act(Action::Paste(env(
        "claude",
        bad_thread,
        None,
        bad_message,
        "example ids",
    )));
    let screen = t.screen();
    assert!(screen.contains("✗ error"), "{screen}");
    assert!(screen.contains("F: import with fresh ids"), "{screen}");
    t.keys("F");
    assert!(t.app.popup.is_none(), "{:?}", t.status_line());
    let fresh = t.shown_message_id().unwrap();
    assert_ne!(fresh, bad_message);
    let screen = t.screen();
    assert!(
        screen.contains(&format!("originally {bad_message}")),
        "{screen}"
    );
    // A reply naming the original id, pasted later: Enter threads it under the fresh id.
    let reply = ids(1).remove(0);
    t.act(Action::Paste(env(
        "gpt",
        bad_thread,
        Some(bad_message),
        &reply,
        "the reply",
    )));
    t.key(KeyCode::Enter, NONE);
    assert_eq!(
        t.shown_message_id().as_deref(),
        Some(reply.as_str()),
        "{:?}",
        t.status_line()
    );
    let m = t.app.store.message(&reply).unwrap().unwrap();
    assert_eq!(m.parent.as_deref(), Some(fresh.as_str()));
}

#[test]
fn the_preview_says_respond_and_which_line_starts_a_new_thread() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = harness(store_in(dir.path()), 140, 36);
    let id = ids(3);
    // A whole new thread in one paste: the second envelope joins the thread of line 1.
    let paste = format!(
        "{}\n{}",
        env("claude", &id[0], None, &id[1], "opening"),
        env("gpt", &id[0], Some(&id[1]), &id[2], "answer")
    );
    t.act(Action::Paste(paste));
    let screen = t.screen();
    assert!(screen.contains("new thread"), "{screen}");
    assert!(screen.contains("joins the thread of line 1"), "{screen}");
    t.key(KeyCode::Esc, NONE);
    // A v1.0 `response:` reply is shown as RESPOND.
    let v10 = "[[claude→gpt v1]]\nuser: kalle\nsession: 2025-10-09T16Z a7f3d1\nintent: REQUEST\n\
               body: |\n  question\nsig: none\n[[END]]\n\n[[gpt→claude v1]]\n\
               session: 2025-10-09T16Z a7f3d1\nresponse: |\n  the reply\n[[END]]\n";
    t.act(Action::Paste(v10.to_string()));
    let screen = t.screen();
    assert!(screen.contains("RESPOND gpt→claude"), "{screen}");
}

#[test]
fn e_edits_the_paste_and_previews_the_edited_text_keeping_the_original() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = harness(store_in(dir.path()), 140, 36);
    let bad = "01J9J3D9C2V8M4P1R6S8T9U0V2";
    let good = ids(2);
    let original = env("claude", &good[0], None, bad, "fix my id");
    t.act(Action::Paste(original.clone()));
    assert!(
        t.screen().contains("e: edit the paste before import"),
        "{}",
        t.screen()
    );
    t.keys("e");
    // The runtime runs $EDITOR on this text; here the edit comes back as the runtime sends it.
    let Some(crosstalk::app::Effect::EditPaste(text)) = t.take_effect() else {
        panic!("no edit asked of the runtime")
    };
    assert_eq!(text, original);
    t.act(Action::EditedPaste(text.replace(bad, &good[1])));
    let screen = t.screen();
    assert!(screen.contains("✓ valid"), "{screen}");
    t.key(KeyCode::Enter, NONE);
    assert_eq!(t.shown_message_id().as_deref(), Some(good[1].as_str()));
    // Both the original paste and the edited one are kept.
    let raw = rusqlite::Connection::open(dir.path().join("t.db")).unwrap();
    let pastes: i64 = raw
        .query_row("SELECT count(*) FROM pastes", [], |r| r.get(0))
        .unwrap();
    assert_eq!(pastes, 2);
}

#[test]
fn the_preview_shows_the_ids_the_import_will_make() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = harness(store_in(dir.path()), 140, 36);
    let v10 = "[[claude→gpt v1]]\nuser: kalle\nsession: 2025-10-09T16Z a7f3d1\nintent: REQUEST\n\
               body: |\n  question\nsig: none\n[[END]]\n";
    t.act(Action::Paste(v10.to_string()));
    let shown = match &t.app.popup {
        Some(crosstalk::app::popups::popup::Popup::Preview(p)) => {
            p.report.items[0].message.clone().unwrap()
        }
        _ => panic!("no preview"),
    };
    let tail = &shown[shown.len() - 6..];
    assert!(
        t.screen().contains(&format!("id …{tail}")),
        "{}",
        t.screen()
    );
    t.key(KeyCode::Enter, NONE);
    assert_eq!(
        t.shown_message_id().as_deref(),
        Some(shown.as_str()),
        "the import made the id shown"
    );
}

/// A signature whose key id is spelled in look-alike letters (`аlice` with a Cyrillic `а`),
/// and a banner name so spelled: the inspector's title and signature line and the `K` popup
/// mark each, with the scripts it mixes.
#[test]
fn look_alike_key_ids_and_names_are_marked_in_the_inspector_and_the_keys_popup() {
    use crosstalk::protocol::keys::public_key_txt;
    use crosstalk::protocol::signature::{SigFormat, sign_envelope};
    use crosstalk::protocol::{Options, extract, render};
    let dir = tempfile::tempdir().unwrap();
    let mut t = harness(store_in(dir.path()), 200, 50);
    let [thread, message] = [0, 1].map(|i| ids(2)[i].clone());
    let sk = ed25519_dalek::SigningKey::from_bytes(&[5; 32]);
    let look_alike = "\u{430}lice@example.com";
    let text = format!(
        "[[\u{421}LAUDE→op v1]]\nuser: kalle\nthread: {thread}\nmessage: {message}\n\
         context: look-alikes\nintent: BROADCAST\n\nmeta: keys\nKey-ID: {look_alike}\n\
         Public-Key: {}\n\nbody: |\n  Hello.\nsig: none\n[[END]]\n",
        public_key_txt(&sk.verifying_key())
    );
    let mut env = extract(&text, &Options::default()).envelopes[0]
        .envelope
        .clone();
    sign_envelope(&mut env, &sk, SigFormat::Ed25519, look_alike);
    t.act(Action::Paste(render(&env)));
    t.key(KeyCode::Enter, NONE);

    let mark = "⚠ mixes Cyrillic and Latin letters";
    let (line, _) = t.app.inspector.signature_line.clone().expect("signed");
    assert!(line.contains(&format!("`{look_alike}` {mark}")), "{line}");
    let s = t.screen();
    assert!(s.contains(&format!("\u{421}LAUDE {mark}")), "{s}");

    t.keys("K");
    let s = t.screen();
    assert!(s.contains(&format!("{look_alike} {mark}")), "{s}");
}
