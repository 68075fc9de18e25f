//! POLL collation on a temporary database: the store gathers a POLL and its replies for the
//! tally, `crosstalk poll` shows it (human and JSON, by id or prefix, exit 1 for no POLL),
//! and `--close` after the deadline writes E-TIMEOUT ERRORs and a CLOSE into the thread.

use crate::helpers::common;

use std::path::Path;

use crosstalk::protocol::poll::{self, Standing, can_close};
use crosstalk::store::{MessageMatch, Store};
use serde_json::Value;

/// A ULID of time `t` (RFC 3339), made unique by `n`.
fn id_at(t: &str, n: u128) -> String {
    let ms = t.parse::<jiff::Timestamp>().unwrap().as_millisecond() as u64;
    ulid::Ulid::from_parts(ms, n).to_string()
}

struct Poll {
    thread: String,
    poll: String,
    text: String,
}

/// A 2-of-3 POLL with a deadline, answered by two of its three targets before it.
fn two_of_three(deadline: &str) -> Poll {
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
Quorum: 2-of-3\nDeadline: {deadline}\nbody: |\n  Which store?\n  SQLITE | FILES | ABSTAIN?\n\
sig: none\n[[END]]\n\n\
[[claude://s/a→human://op v1]]\nuser: claude\nsession: 2025-10-09T16Z a7f3d1\nthread: {thread}\n\
parent: {poll}\nmessage: {a}\nintent: RESPOND\nbody: |\n  SQLITE, it is one file.\nsig: none\n[[END]]\n\n\
[[chatgpt://t/x→human://op v1]]\nuser: gpt\nsession: 2025-10-09T16Z a7f3d1\nthread: {thread}\n\
parent: {poll}\nmessage: {b}\nintent: RESPOND\nmeta: poll\nVote: files\nbody: |\n  \
Either works; SQLITE is fine too.\nsig: none\n[[END]]\n"
    );
    Poll { thread, poll, text }
}

/// Imports `text` as if each message arrived when its id says: the history these tests replay
/// (a vote counts by when it arrived, not by its id).
fn import_replayed(s: &mut Store, text: &str) {
    s.import_text("<test>", text, &Default::default()).unwrap();
    replay(s, text);
}

/// Records each message of `text` as arrived when its id says.
fn replay(s: &mut Store, text: &str) {
    for line in text.lines() {
        if let Some(id) = line.strip_prefix("message: ") {
            let at = crosstalk::store::ulid_time(id).expect("a ULID of a plausible time");
            assert!(s.set_arrival(id, at).unwrap(), "{id} stored");
        }
    }
}

/// [`replay`] on the database file `db`.
fn replay_in(db: &Path, text: &str) {
    replay(&mut Store::open(db).unwrap(), text);
}

fn now() -> jiff::Timestamp {
    "2025-10-09T17:00:00Z".parse().unwrap()
}

#[test]
fn the_store_gathers_a_poll_and_its_replies() {
    let p = two_of_three("2025-10-09T18:00Z");
    let mut s = Store::open_in_memory().unwrap();
    import_replayed(&mut s, &p.text);
    let MessageMatch::One(m) = s.find_message(&p.poll[..20]).unwrap() else {
        panic!("prefix")
    };
    let view = s.poll_view(*m, now()).unwrap().expect("a POLL");
    let t = &view.tally;
    assert_eq!(t.targets[0].vote.as_deref(), Some("SQLITE"));
    assert_eq!(t.targets[1].vote.as_deref(), Some("FILES"));
    assert_eq!(t.targets[2].standing, Standing::Silent);
    assert!(t.quorum_reached);
    assert_eq!(t.seconds_left, Some(3600));
    assert!(can_close(t).is_err());
    // Not a POLL: the reply.
    let reply = s
        .message(t.targets[0].message.as_deref().unwrap())
        .unwrap()
        .unwrap();
    assert!(s.poll_view(reply, now()).unwrap().is_none());
    assert!(matches!(
        s.find_message("ZZZZZZ").unwrap(),
        MessageMatch::None
    ));

    // After the deadline: one E-TIMEOUT for gemini, and the CLOSE, stored in the thread.
    let late: jiff::Timestamp = "2025-10-09T19:00:00Z".parse().unwrap();
    let m = s.message(&p.poll).unwrap().unwrap();
    let view = s.poll_view(m, late).unwrap().unwrap();
    assert!(view.tally.expired);
    can_close(&view.tally).unwrap();
    let closed = s.poll_closing(&view, "human://op");
    s.file_closing(&closed).unwrap();
    assert_eq!(closed.errors.len(), 1);
    // Written by the desk, naming the target it stands for.
    assert_eq!(closed.errors[0].banner.from, "human://op");
    let error = closed.errors[0].meta_block("error").unwrap();
    assert_eq!(error.get("Target"), Some("gemini://g"));
    let thread = s.thread(&p.thread).unwrap().unwrap();
    assert_eq!(thread.messages.len(), 5);
    let stored = s
        .message(closed.errors[0].message().unwrap())
        .unwrap()
        .unwrap();
    assert_eq!(stored.direction, "composed");
    assert_eq!(stored.parent.as_deref(), Some(p.poll.as_str()));
    assert_eq!(stored.intent.as_deref(), Some("ERROR"));
    let m = s.message(&p.poll).unwrap().unwrap();
    let view = s.poll_view(m, late).unwrap().unwrap();
    assert!(view.tally.silent.is_empty());
    assert_eq!(view.tally.closed_by.as_deref(), closed.result.message());
    assert!(can_close(&view.tally).is_err());
}

fn run(db: &Path, args: &[&str]) -> common::Run {
    let mut all = vec!["--db", db.to_str().unwrap()];
    all.extend_from_slice(args);
    common::run(&all, "")
}

#[test]
fn crosstalk_poll_tallies_and_closes() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("d.db");
    // The deadline has passed (the test's clock is the real one).
    let p = two_of_three("2025-10-09T18:00Z");
    std::fs::write(dir.path().join("poll.txt"), &p.text).unwrap();
    let r = run(
        &db,
        &["import", dir.path().join("poll.txt").to_str().unwrap()],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    replay_in(&db, &p.text);

    let r = run(&db, &["poll", &p.poll[..16]]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let rows: Vec<&str> = r.stdout.lines().collect();
    assert!(
        rows[0].starts_with(&format!("POLL {}", p.poll)),
        "{}",
        r.stdout
    );
    let row = |t: &str| {
        rows.iter()
            .find(|l| l.trim_start().starts_with(t))
            .copied()
            .unwrap_or("")
    };
    assert!(
        row("claude://s/a")
            .split_whitespace()
            .take(3)
            .eq(["claude://s/a", "yes", "SQLITE"]),
        "{}",
        r.stdout
    );
    assert!(
        row("chatgpt://t/x")
            .split_whitespace()
            .take(3)
            .eq(["chatgpt://t/x", "yes", "FILES"])
    );
    assert!(
        row("gemini://g")
            .split_whitespace()
            .take(3)
            .eq(["gemini://g", "no", "-"])
    );
    assert!(
        r.stdout.contains("Votes: SQLITE: 1, FILES: 1, ABSTAIN: 0"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("Quorum: 2 of 2 needed (reached)"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("Deadline: 2025-10-09T18:00Z (expired "),
        "{}",
        r.stdout
    );

    let r = run(&db, &["poll", &p.poll, "--json"]);
    assert_eq!(r.code, 0);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["tally"]["quorum_reached"], true);
    assert_eq!(v["tally"]["silent"][0], "gemini://g");
    assert_eq!(v["tally"]["targets"][1]["vote"], "FILES");

    // Not a POLL, no such message: exit 1. No argument: exit 2.
    let reply = v["tally"]["targets"][0]["message"]
        .as_str()
        .unwrap()
        .to_string();
    let r = run(&db, &["poll", &reply]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("is not a POLL (its intent: RESPOND)"),
        "{}",
        r.stderr
    );
    assert_eq!(run(&db, &["poll", "ZZZZZZZZ"]).code, 1);
    assert_eq!(run(&db, &["poll"]).code, 2);

    let r = run(&db, &["poll", &p.poll, "--close"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // In the desk's name (no [operator] address nor [compose] from: the user's), never
    // gemini's, which did not answer.
    assert!(!r.stdout.contains("[[gemini://g→"), "{}", r.stdout);
    assert!(r.stdout.contains("Target: gemini://g"), "{}", r.stdout);
    assert!(r.stdout.contains("Code: E-TIMEOUT"));
    assert!(r.stdout.contains("intent: CLOSE"));
    assert!(
        r.stderr
            .contains("wrote 1 E-TIMEOUT error(s) (records, kept in the thread) and a CLOSE"),
        "{}",
        r.stderr
    );
    let r = run(&db, &["poll", &p.poll, "--close"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("already closed"), "{}", r.stderr);
    let r = run(&db, &["poll", &p.poll]);
    assert!(
        r.stdout.contains("gemini://g") && r.stdout.contains("ERROR E-TIMEOUT"),
        "{}",
        r.stdout
    );
}

#[test]
fn a_poll_still_running_is_not_closed() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("d.db");
    let p = two_of_three("2999-01-01T00:00Z");
    std::fs::write(dir.path().join("poll.txt"), &p.text).unwrap();
    assert_eq!(
        run(
            &db,
            &["import", dir.path().join("poll.txt").to_str().unwrap()]
        )
        .code,
        0
    );
    let r = run(&db, &["poll", &p.poll, "--close"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("runs until its deadline"), "{}", r.stderr);
    assert!(run(&db, &["poll", &p.poll]).stdout.contains(" left)"));
}

#[test]
fn the_demo_poll_reads_votes_from_the_first_body_line() {
    let mut s = Store::open_in_memory().unwrap();
    let text = include_str!("../../../assets/demo/03-sync-strategy-poll.crosstalk");
    import_replayed(&mut s, text);
    let m = s.message("01KQYX38D45ABYWJSPYCKYR17K").unwrap().unwrap();
    let at: jiff::Timestamp = "2026-05-07T00:00:00Z".parse().unwrap();
    let t = s.poll_view(m, at).unwrap().unwrap().tally;
    assert_eq!(t.options, ["CRDT", "LAST-WRITE-WINS", "ABSTAIN"]);
    assert_eq!(
        t.counts,
        [
            ("CRDT".to_string(), 2),
            ("LAST-WRITE-WINS".to_string(), 1),
            ("ABSTAIN".to_string(), 0)
        ]
    );
    assert_eq!((t.responded, t.needed, t.quorum_reached), (3, 3, true));
    assert_eq!(t.leader.as_deref(), Some("CRDT"));
    assert_eq!(t.silent, ["gemini://chat/7f30aa"]);
    assert!(t.expired);
    assert_eq!(t.closed_by.as_deref(), Some("01KQZ7HX873FW9D0PZTYF134G7"));
    assert!(can_close(&t).is_err());
}

#[test]
fn crosstalk_poll_prints_hostile_text_made_safe() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("d.db");
    let (thread, poll) = (
        id_at("2025-10-09T16:00:00Z", 31),
        id_at("2025-10-09T16:00:00Z", 32),
    );
    let text = format!(
        "[[human://op→POLL v1]]\nuser: kalle\nthread: {thread}\nmessage: {poll}\nintent: POLL\n\
meta: routing\nTargets: [\"evil\u{1b}[2J\", \"b\u{202e}c\"]\nmeta: poll\n\
Deadline: \u{1b}]52;c;aGk=\u{7}\nbody: |\n  \u{1b}[31mred | B | ok\nsig: none\n[[END]]\n"
    );
    std::fs::write(dir.path().join("p.txt"), text).unwrap();
    assert_eq!(
        run(&db, &["import", dir.path().join("p.txt").to_str().unwrap()]).code,
        0
    );
    let r = run(&db, &["poll", &poll]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    for bad in ['\u{1b}', '\u{7}', '\u{202e}'] {
        assert!(!r.stdout.contains(bad), "{bad:?} in\n{}", r.stdout);
    }
    assert!(r.stdout.contains("deadline unreadable"), "{}", r.stdout);
}

/// A POLL without a deadline can be closed whenever its sender ends it: the CLOSE alone (nobody
/// missed a deadline, so no E-TIMEOUT), and it awaits nobody after it.
#[test]
fn a_poll_without_a_deadline_is_closed_when_its_sender_ends_it() {
    let p = two_of_three("X");
    let text = (p.text.replace("Deadline: X\n", "")).replace("Quorum: 2-of-3", "Quorum: 3-of-3");
    assert!(!text.contains("Deadline"));
    let mut s = Store::open_in_memory().unwrap();
    import_replayed(&mut s, &text);
    let m = s.message(&p.poll).unwrap().unwrap();
    let waits = s.delivery(&m.id).unwrap().unwrap().awaiting_from;
    assert_eq!(waits, ["gemini://g"], "the third target is awaited");
    let view = s.poll_view(m, now()).unwrap().unwrap();
    can_close(&view.tally).expect("a poll without a deadline may be closed");
    let closed = s.poll_closing(&view, "human://op");
    s.file_closing(&closed).unwrap();
    assert!(closed.errors.is_empty(), "nobody timed out");
    assert_eq!(closed.result.intent_raw(), Some("CLOSE"));
    let m = s.message(&p.poll).unwrap().unwrap();
    assert!(s.delivery(&m.id).unwrap().unwrap().awaiting_from.is_empty());
    let view = s.poll_view(m, now()).unwrap().unwrap();
    assert!(can_close(&view.tally).is_err(), "closed once");
}

/// A vote after the deadline counts for the POLL's wait as for its tally: not at all. The
/// queue's "awaiting" and the tally agree, and the poll awaits until it is closed.
#[test]
fn a_late_vote_ends_no_wait_the_tally_does_not_count() {
    // The second vote (16:20) comes after the deadline (16:15): one vote of the two needed.
    let p = two_of_three("2025-10-09T16:15Z");
    let mut s = Store::open_in_memory().unwrap();
    import_replayed(&mut s, &p.text);
    let m = s.message(&p.poll).unwrap().unwrap();
    let view = s.poll_view(m.clone(), now()).unwrap().unwrap();
    assert!(!view.tally.quorum_reached);
    assert_eq!(view.tally.targets[1].standing, Standing::Late);
    let waits = s.delivery(&m.id).unwrap().unwrap();
    assert_eq!(waits.awaiting_from, ["chatgpt://t/x", "gemini://g"]);
    // Closed: nobody is awaited after it.
    let closed = s.poll_closing(&view, "human://op");
    s.file_closing(&closed).unwrap();
    assert!(s.delivery(&m.id).unwrap().unwrap().awaiting_from.is_empty());
}

/// A poll every target declined awaits nobody, and its tally says the quorum is out of reach
/// (not merely "not reached", which reads as if answers could still come); the poll line of
/// `crosstalk poll` says so too.
#[test]
fn a_poll_every_target_declined_awaits_nobody_and_its_quorum_is_out_of_reach() {
    let p = two_of_three("2025-10-09T18:00Z");
    let declined = p
        .text
        .replace("intent: RESPOND\nbody", "intent: NACK\nbody")
        .replace(
            "intent: RESPOND\nmeta: poll\nVote: files",
            "intent: NACK\nmeta: poll\nVote: files",
        );
    let third = id_at("2025-10-09T16:30:00Z", 5);
    let text = format!(
        "{declined}\n[[gemini://g→human://op v1]]\nuser: gemini\nsession: 2025-10-09T16Z a7f3d1\n\
thread: {}\nparent: {}\nmessage: {third}\nintent: NACK\nbody: |\n  Not mine to decide.\nsig: none\n[[END]]\n",
        p.thread, p.poll
    );
    let mut s = Store::open_in_memory().unwrap();
    import_replayed(&mut s, &text);
    let m = s.message(&p.poll).unwrap().unwrap();
    assert!(s.delivery(&m.id).unwrap().unwrap().awaiting_from.is_empty());
    let view = s.poll_view(m, now()).unwrap().unwrap();
    assert!(!view.tally.quorum_reached);
    assert!(view.tally.quorum_out_of_reach, "{:?}", view.tally);
    assert_eq!(poll::quorum_label(&view.tally).1, "out of reach");

    // One target still silent: in reach while the poll runs, merely not reached once over.
    let mut s = Store::open_in_memory().unwrap();
    import_replayed(&mut s, &declined);
    let m = s.message(&p.poll).unwrap().unwrap();
    let view = s.poll_view(m.clone(), now()).unwrap().unwrap();
    assert!(
        view.tally.quorum_out_of_reach,
        "one silent target cannot make two"
    );
    let p1 = two_of_three("2025-10-09T18:00Z");
    let mut s = Store::open_in_memory().unwrap();
    import_replayed(
        &mut s,
        &p1.text
            .replace("intent: RESPOND\nbody", "intent: NACK\nbody"),
    );
    let m = s.message(&p1.poll).unwrap().unwrap();
    let view = s.poll_view(m.clone(), now()).unwrap().unwrap();
    assert!(
        !view.tally.quorum_reached && !view.tally.quorum_out_of_reach,
        "{:?}",
        view.tally
    );
    assert_eq!(poll::quorum_label(&view.tally).1, "not reached");
    let over = s
        .poll_view(m, "2025-10-09T19:00:00Z".parse().unwrap())
        .unwrap()
        .unwrap();
    assert!(over.tally.quorum_out_of_reach && over.tally.expired);
    assert_eq!(poll::quorum_label(&over.tally).1, "not reached");
}

/// A vote counts by when it arrived, whatever its id says: an answer whose id claims a time
/// after the deadline but that arrived before it counts; one whose id claims a time before it
/// but that arrived after it is late.
#[test]
fn a_vote_counts_by_its_arrival_not_by_the_time_in_its_id() {
    let p = two_of_three("2025-10-09T18:00Z");
    let mut s = Store::open_in_memory().unwrap();
    s.import_text("<test>", &p.text, &Default::default())
        .unwrap();
    let [claude, gpt] = ["claude://s/a", "chatgpt://t/x"].map(|from| {
        let m = s.message(&p.poll).unwrap().unwrap();
        let view = s.poll_view(m, now()).unwrap().unwrap();
        let line = view
            .tally
            .targets
            .iter()
            .find(|l| l.target == from)
            .unwrap()
            .clone();
        line.message.unwrap()
    });
    let at = |t: &str| t.parse::<jiff::Timestamp>().unwrap();
    s.set_arrival(&p.poll, at("2025-10-09T16:00:00Z")).unwrap();
    // Claude's id says 16:10, before the deadline; it arrived at 18:30, after it.
    s.set_arrival(&claude, at("2025-10-09T18:30:00Z")).unwrap();
    // ChatGPT's says 16:20 too; it arrived at 17:59.
    s.set_arrival(&gpt, at("2025-10-09T17:59:00Z")).unwrap();
    let m = s.message(&p.poll).unwrap().unwrap();
    let view = s.poll_view(m, at("2025-10-09T19:00:00Z")).unwrap().unwrap();
    let t = &view.tally;
    assert_eq!(t.targets[0].standing, Standing::Late, "{:?}", t.targets[0]);
    assert!(
        t.targets[0].why.contains("arrived 2025-10-09 18:30"),
        "{}",
        t.targets[0].why
    );
    assert_eq!(t.targets[1].vote.as_deref(), Some("FILES"));
    assert!(!t.quorum_reached);
    // The POLL's wait agrees with its tally: Claude is still awaited.
    let waits = s.delivery(&p.poll).unwrap().unwrap().awaiting_from;
    assert_eq!(waits, ["claude://s/a", "gemini://g"]);
}

/// v1.0 answers to a POLL from its targets are each that target's answer to the POLL, not the
/// answer to another target's answer, and the poll tallies both votes; the conversation
/// imported again is all duplicates.
#[test]
fn v10_answers_from_a_polls_targets_answer_the_poll() {
    let thread = id_at("2025-10-09T16:00:00Z", 61);
    let poll = id_at("2025-10-09T16:00:00Z", 62);
    let text = format!(
        "[[CLAUDE→POLL v1]]\nuser: kalle\nsession: 2026-12-01T21Z s1\nthread: {thread}\n\
message: {poll}\nintent: POLL\nmeta: routing\nTargets: [\"CHATGPT\", \"GEMINI\"]\n\
body: |\n  Which date?\n  Options: DEC15 | DEC22 | ABSTAIN.\nsig: none\n[[END]]\n\n\
[[CHATGPT→CLAUDE v1]]\nsession: 2026-12-01T21Z s1\nresponse: |\n  DEC15, clearly.\n[[END]]\n\n\
[[GEMINI→CLAUDE v1]]\nsession: 2026-12-01T21Z s1\nresponse: |\n  I vote DEC22.\n[[END]]\n"
    );
    let mut s = Store::open_in_memory().unwrap();
    s.import_text("<test>", &text, &Default::default()).unwrap();
    let view = s.thread(&thread).unwrap().unwrap();
    let answers: Vec<_> = view.messages.iter().filter(|m| m.id != poll).collect();
    assert_eq!(answers.len(), 2);
    for m in &answers {
        assert_eq!(
            m.parent.as_deref(),
            Some(poll.as_str()),
            "{}",
            m.envelope.banner.from
        );
    }
    let m = s.message(&poll).unwrap().unwrap();
    let t = s.poll_view(m, now()).unwrap().unwrap().tally;
    assert_eq!(t.counts[0], ("DEC15".to_string(), 1));
    assert_eq!(t.counts[1], ("DEC22".to_string(), 1));
    let again = s.import_text("<test>", &text, &Default::default()).unwrap();
    assert_eq!(
        again.count(crosstalk::store::Outcome::Imported),
        0,
        "{:?}",
        again.items
    );
    // Two parties taking turns place each reply under the one before it, as always.
    let conversation = "[[A→B v1]]\nsession: s2\nbody: |\n  one?\n[[END]]\n\
[[B→A v1]]\nsession: s2\nresponse: |\n  two\n[[END]]\n\
[[A→B v1]]\nsession: s2\nbody: |\n  three?\n[[END]]\n";
    let r = s
        .import_text("<t2>", conversation, &Default::default())
        .unwrap();
    let ids: Vec<String> = r.items.iter().filter_map(|i| i.message.clone()).collect();
    assert_eq!(
        s.message(&ids[1]).unwrap().unwrap().parent.as_deref(),
        Some(ids[0].as_str())
    );
    assert_eq!(
        s.message(&ids[2]).unwrap().unwrap().parent.as_deref(),
        Some(ids[1].as_str())
    );
}

/// Closing a poll writes records the operator need not send: they are no drafts.
#[test]
fn a_polls_timeouts_are_records_not_drafts() {
    let p = two_of_three("2025-10-09T18:00Z");
    let mut s = Store::open_in_memory().unwrap();
    import_replayed(&mut s, &p.text);
    let m = s.message(&p.poll).unwrap().unwrap();
    let view = s
        .poll_view(m, "2025-10-09T19:00:00Z".parse().unwrap())
        .unwrap()
        .unwrap();
    let closed = s.poll_closing(&view, "human://op");
    s.file_closing(&closed).unwrap();
    // The CLOSE waits to be copied; the E-TIMEOUT is kept as a record.
    assert_eq!(s.unsent_count().unwrap(), 1);
    let error = closed.errors[0].message().unwrap();
    let d = s.delivery(error).unwrap().unwrap();
    assert_eq!(d.settled.map(|x| x.1).as_deref(), Some("recorded"));
    assert_eq!(s.thread_rows("", 10).unwrap()[0].drafts, 1);
}

/// A reply the desk placed (a v1.0 reply names no parent) can be moved by the operator to
/// the message it answers: its text's `parent:`, its thread and the waits follow, and the same
/// conversation imported again is still all duplicates. A parent an envelope names itself
/// stays.
#[test]
fn a_reply_the_desk_placed_can_be_moved_and_one_its_sender_placed_cannot() {
    let mut s = Store::open_in_memory().unwrap();
    // Claude asks twice; ChatGPT's v1.0 answer to the first arrives after the second.
    let text = "[[CLAUDE→CHATGPT v1]]\nsession: s9\nintent: REQUEST\nbody: |\n  First question?\n[[END]]\n\
[[CLAUDE→CHATGPT v1]]\nsession: s9\nintent: REQUEST\nbody: |\n  Second question?\n[[END]]\n\
[[CHATGPT→CLAUDE v1]]\nsession: s9\nresponse: |\n  The answer to the first.\n[[END]]\n";
    let r = s.import_text("<t>", text, &Default::default()).unwrap();
    let ids: Vec<String> = r.items.iter().filter_map(|i| i.message.clone()).collect();
    let (first, second, answer) = (&ids[0], &ids[1], &ids[2]);
    let stored = s.message(answer).unwrap().unwrap();
    assert_eq!(
        stored.parent.as_deref(),
        Some(second.as_str()),
        "placed under the latest"
    );
    assert!(s.parent_inferred(answer).unwrap());
    let tree = s.thread_outline(&stored.thread).unwrap().unwrap();
    assert!(tree.rows.iter().find(|r| &r.id == answer).unwrap().inferred);
    assert!(s.move_reply(answer, first).unwrap().is_ok());
    let moved = s.message(answer).unwrap().unwrap();
    assert_eq!(moved.parent.as_deref(), Some(first.as_str()));
    assert!(
        moved.canonical.contains(&format!("parent: {first}\n")),
        "{}",
        moved.canonical
    );
    assert_eq!(moved.raw, stored.raw, "the text as received stays");
    // The first question is answered now, the second awaits again.
    assert!(s.delivery(first).unwrap().unwrap().awaiting_from.is_empty());
    assert!(
        !s.delivery(second)
            .unwrap()
            .unwrap()
            .awaiting_from
            .is_empty()
    );
    assert_eq!(
        s.move_reply(answer, first).unwrap(),
        Err(crosstalk::store::MoveRefused::Already)
    );
    assert_eq!(
        s.move_reply(first, answer).unwrap(),
        Err(crosstalk::store::MoveRefused::Named),
        "the first message was placed by nobody"
    );
    let again = s.import_text("<t>", text, &Default::default()).unwrap();
    assert_eq!(
        again.count(crosstalk::store::Outcome::Imported),
        0,
        "{:?}",
        again.items
    );

    // A parent the envelope names is its sender's word.
    let p = two_of_three("2999-01-01T00:00Z");
    import_replayed(&mut s, &p.text);
    let reply = s.poll_replies(&p.poll).unwrap()[0].id.clone();
    assert_eq!(
        s.move_reply(&reply, first).unwrap(),
        Err(crosstalk::store::MoveRefused::Named)
    );
}

/// Relayed as they come, one paste at a time, the v1.0 answers of a POLL's targets still each
/// answer the POLL; a target named by its address (`gemini://chat/1`) is the window a v1.0
/// banner names by its name (`GEMINI`).
#[test]
fn v10_answers_pasted_one_at_a_time_answer_the_poll_and_names_match_addresses() {
    let thread = id_at("2025-10-09T16:00:00Z", 71);
    let poll = id_at("2025-10-09T16:00:00Z", 72);
    let texts = [
        format!(
            "[[CLAUDE→POLL v1]]\nuser: kalle\nsession: 2026-12-01T21Z s7\nthread: {thread}\n\
message: {poll}\nintent: POLL\nmeta: routing\nTargets: [\"chatgpt://thread/9\", \"gemini://chat/1\"]\n\
body: |\n  Options: DEC15 | DEC22\nsig: none\n[[END]]\n"
        ),
        "[[CHATGPT→CLAUDE v1]]\nsession: 2026-12-01T21Z s7\nresponse: |\n  DEC15.\n[[END]]\n"
            .into(),
        "[[GEMINI→CLAUDE v1]]\nsession: 2026-12-01T21Z s7\nresponse: |\n  DEC22.\n[[END]]\n".into(),
    ];
    let mut s = Store::open_in_memory().unwrap();
    for t in &texts {
        s.import_text("<paste>", t, &Default::default()).unwrap();
    }
    let view = s.thread(&thread).unwrap().unwrap();
    assert_eq!(view.messages.len(), 3);
    for m in view.messages.iter().filter(|m| m.id != poll) {
        assert_eq!(
            m.parent.as_deref(),
            Some(poll.as_str()),
            "{}",
            m.envelope.banner.from
        );
    }
    let m = s.message(&poll).unwrap().unwrap();
    let t = s.poll_view(m, now()).unwrap().unwrap().tally;
    // The tally compares senders with targets as written: the addresses are not the names.
    assert_eq!(t.targets.len(), 2);
    // All three again, in one paste: duplicates.
    let again = s
        .import_text("<again>", &texts.concat(), &Default::default())
        .unwrap();
    assert_eq!(
        again.count(crosstalk::store::Outcome::Imported),
        0,
        "{:?}",
        again.items
    );
}
