//! `C`: the answers to a POLL (or to any message) side by side, one column per sender with
//! its vote, at 80×24 and 200×50; the columns scroll together and shift with ←/→ when the
//! screen holds fewer than answered.

use crate::helpers::support;

use crosstalk::app::Action;
use ratatui::crossterm::event::{KeyCode, KeyModifiers};
use support::{harness, store_in};

const NONE: KeyModifiers = KeyModifiers::NONE;

fn id_at(t: &str, n: u128) -> String {
    let ms = t.parse::<jiff::Timestamp>().unwrap().as_millisecond() as u64;
    ulid::Ulid::from_parts(ms, n).to_string()
}

/// (poll, text): a POLL to four targets, answered by three with bodies of different lengths.
fn poll_of_four() -> (String, String) {
    let thread = id_at("2025-10-09T16:00:00Z", 1);
    let poll = id_at("2025-10-09T16:00:00Z", 2);
    let answer = |from: &str, n: u128, vote: &str, body: &str| {
        let id = id_at("2025-10-09T16:10:00Z", n);
        let body: String = body.lines().map(|l| format!("  {l}\n")).collect();
        format!(
            "[[{from}→human://op v1]]\nuser: m\nsession: 2025-10-09T16Z a7f3d1\nthread: {thread}\n\
parent: {poll}\nmessage: {id}\nintent: RESPOND\nmeta: poll\nVote: {vote}\nbody: |\n{body}sig: none\n[[END]]\n\n"
        )
    };
    let long: String = (1..=60).map(|i| format!("reason {i}\n\n")).collect();
    let text = format!(
        "[[human://op→POLL v1]]\nuser: kalle\nsession: 2025-10-09T16Z a7f3d1\nthread: {thread}\n\
message: {poll}\ncontext: storage\nintent: POLL\nmeta: routing\n\
Targets: [\"CLAUDE\", \"CHATGPT\", \"GEMINI\", \"MISTRAL\"]\nmeta: poll\nType: consensus\n\
Quorum: 2-of-4\nDeadline: 2025-10-09T18:00Z\nbody: |\n  Which store?\n  SQLITE | FILES\n\
sig: none\n[[END]]\n\n{}{}{}",
        answer(
            "CLAUDE",
            3,
            "SQLITE",
            &format!("SQLite: one file.\n{long}last of claude")
        ),
        answer("CHATGPT", 4, "FILES", "Files: greppable."),
        answer("MISTRAL", 5, "SQLITE", "SQLite, with WAL."),
    );
    (poll, text)
}

#[test]
fn c_shows_a_polls_answers_in_columns_with_their_votes() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = store_in(dir.path());
    let (poll, text) = poll_of_four();
    store.import_text("t", &text, &Default::default()).unwrap();
    support::replay_arrivals(&mut store, &text);
    let mut t = harness(store, 200, 50);
    t.app.fixed_now = Some("2025-10-09T17:00:00Z".parse().unwrap());
    t.act(Action::Run(format!("open {poll}")));
    t.keys("C");
    let s = t.screen();
    for want in [
        "4 answers to the POLL from human://op: Which store?",
        "CLAUDE · vote SQLITE",
        "CHATGPT · vote FILES",
        "GEMINI · vote - · silent",
        "MISTRAL · vote SQLITE",
        "SQLite: one file.",
        "Files: greppable.",
        "(no answer yet)",
        "SQLite, with WAL.",
    ] {
        assert!(s.contains(want), "{want}\n{s}");
    }
    // The four columns side by side: one screen row holds every sender.
    let heads = s.lines().find(|l| l.contains("CLAUDE · vote")).unwrap();
    for who in ["CHATGPT", "GEMINI", "MISTRAL"] {
        assert!(heads.contains(who), "{heads}");
    }
    let rule = s.lines().find(|l| l.contains('┼')).unwrap();
    assert_eq!(rule.matches('┼').count(), 3, "{s}");
    // Every column scrolls together: the end of the long answer comes into sight, the heads
    // stay.
    assert!(!s.contains("last of claude"));
    t.keys("G");
    let s = t.screen();
    assert!(s.contains("last of claude"), "{s}");
    assert!(s.contains("CLAUDE · vote SQLITE"), "{s}");
    t.key(KeyCode::Esc, NONE);
    assert!(!t.screen().contains("CLAUDE · vote SQLITE"));
}

#[test]
fn at_80_columns_three_columns_show_and_the_arrows_reach_the_fourth() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = store_in(dir.path());
    let (poll, text) = poll_of_four();
    store.import_text("t", &text, &Default::default()).unwrap();
    support::replay_arrivals(&mut store, &text);
    let mut t = harness(store, 80, 24);
    t.app.fixed_now = Some("2025-10-09T17:00:00Z".parse().unwrap());
    // On an answer, its POLL's answers.
    t.act(Action::Run(format!("open {poll}")));
    t.keys("j");
    t.keys("C");
    let s = t.screen();
    assert!(s.contains("columns 1–3 of 4 (←/→)"), "{s}");
    assert!(s.contains("CLAUDE") && s.contains("GEMINI"), "{s}");
    assert!(!s.contains("MISTRAL"), "{s}");
    for line in s.lines() {
        assert!(line.chars().count() <= 80, "{line}");
    }
    t.key(KeyCode::Right, NONE);
    let s = t.screen();
    assert!(s.contains("columns 2–4 of 4"), "{s}");
    assert!(
        s.contains("MISTRAL · vote SQLITE") && !s.contains("CLAUDE ·"),
        "{s}"
    );
    t.keys("l");
    assert!(t.screen().contains("columns 2–4 of 4"), "stops at the last");
    t.keys("h");
    assert!(t.screen().contains("columns 1–3 of 4"));
}

#[test]
fn replies_to_any_message_go_side_by_side_by_sender() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = store_in(dir.path());
    let thread = id_at("2025-10-09T16:00:00Z", 1);
    let root = id_at("2025-10-09T16:00:00Z", 2);
    let mut text = format!(
        "[[HUMAN→ALL v1]]\nuser: kalle\nsession: 2025-10-09T16Z a7f3d1\nthread: {thread}\n\
message: {root}\nintent: REQUEST\nbody: |\n  Name the plan.\nsig: none\n[[END]]\n\n"
    );
    for (i, (from, body)) in [
        ("CLAUDE", "Plan A."),
        ("GEMINI", "Plan B."),
        ("CLAUDE", "Or A2."),
    ]
    .iter()
    .enumerate()
    {
        let id = id_at("2025-10-09T16:10:00Z", 10 + i as u128);
        text.push_str(&format!(
            "[[{from}→HUMAN v1]]\nuser: m\nsession: 2025-10-09T16Z a7f3d1\nthread: {thread}\n\
parent: {root}\nmessage: {id}\nintent: RESPOND\nbody: |\n  {body}\nsig: none\n[[END]]\n\n"
        ));
    }
    store.import_text("t", &text, &Default::default()).unwrap();
    support::replay_arrivals(&mut store, &text);
    let mut t = harness(store, 120, 30);
    t.act(Action::Run(format!("open {root}")));
    t.keys("C");
    let s = t.screen();
    assert!(s.contains("2 answers to the REQUEST from HUMAN"), "{s}");
    let row = |s: &str, what: &str| s.lines().find(|l| l.contains(what)).map(str::to_string);
    // Claude's two answers stack in its column, beside Gemini's.
    let a = row(&s, "Plan A.").unwrap();
    assert!(a.contains("Plan B."), "{s}");
    assert!(row(&s, "Or A2.").is_some(), "{s}");
    // A message without replies: nothing to compare, and it says so.
    t.key(KeyCode::Esc, NONE);
    t.act(Action::Run(format!(
        "open {}",
        id_at("2025-10-09T16:10:00Z", 11)
    )));
    t.keys("C");
    assert!(t.screen().contains("2 answers to the REQUEST"), "siblings");
}
