//! POLL collation and ERROR replies in the real binary, in tmux: `P` on a 2-of-3 POLL whose
//! options and votes are written in prose shows who answered and how each voted, the quorum and
//! the time left; once the deadline has passed `c` writes the desk's E-TIMEOUT ERROR for the
//! silent target and copies the CLOSE with the right tally (OSC 52); a broken paste is answered
//! with E-FORMAT from the preview (`E`, then C-y).

use crate::helpers::tmux;

use tmux::Term;

/// The ids of the broken paste's envelope (a thread and a message id it names itself).
const THREAD: &str = "01K76Q0Z00000000000000T001";
const POLL: &str = "01K76Q0Z00000000000000P001";

/// A ULID of `t` plus `secs`, made unique by `n`.
fn id_at(t: jiff::Timestamp, secs: i64, n: u128) -> String {
    let ms = t.as_millisecond() + secs * 1000;
    ulid::Ulid::from_parts(ms as u64, n).to_string()
}

/// A 2-of-3 POLL whose options are an `Options:` line of its body, due `deadline`, and the
/// answers of two of its targets, voting in prose. Claude's id claims a time after the
/// deadline, as models invent them: it arrives before it, and counts.
fn poll_thread(now: jiff::Timestamp, deadline: &str) -> (String, String) {
    let (thread, poll) = (id_at(now, -60, 1), id_at(now, -60, 2));
    let claude = id_at(now, 3 * 3600, 3);
    let gpt = id_at(now, -30, 4);
    let text = format!(
        "[[human://op→POLL v1]]\nuser: kalle\nsession: 2025-10-09T16Z a7f3d1\nthread: {thread}\n\
message: {poll}\ncontext: offsite poll\nintent: POLL\nmeta: routing\n\
Targets: [\"claude://s/a\", \"chatgpt://t/x\", \"gemini://g\"]\nmeta: poll\nType: consensus\n\
Quorum: 2-of-3\nDeadline: {deadline}\nbody: |\n  Which date works for the offsite?\n  \
Options: DEC15 | DEC22 | ABSTAIN.\nsig: none\n[[END]]\n\n\
[[claude://s/a→human://op v1]]\nuser: claude\nthread: {thread}\nparent: {poll}\nmessage: {claude}\n\
intent: RESPOND\nbody: |\n  DEC15 works best for me; DEC22 clashes with a release.\nsig: none\n[[END]]\n\n\
[[chatgpt://t/x→human://op v1]]\nuser: gpt\nthread: {thread}\nparent: {poll}\nmessage: {gpt}\n\
intent: RESPOND\nbody: |\n  I would go with dec22, not DEC15.\nsig: none\n[[END]]\n"
    );
    (text, poll)
}

#[test]
fn a_poll_written_in_prose_is_tallied_and_closed_after_its_deadline() {
    let Some(t) = Term::new() else { return };
    let now = jiff::Timestamp::now();
    // A few seconds ahead: the answers arrive before it, the close comes after it.
    let due = now.checked_add(jiff::SignedDuration::from_secs(6)).unwrap();
    let deadline = due.strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
    let (text, poll) = poll_thread(now, &deadline);
    let file = t.path("poll.txt");
    std::fs::write(&file, text).unwrap();
    t.import(&[&file]);
    t.start(120, 36, &[]);
    t.wait_for("offsite poll");
    t.keys(&[":"]);
    t.type_text(&format!("open {poll}"));
    t.keys(&["Enter"]);
    t.wait_for("Which date works");
    t.keys(&["P"]);
    let s = t.wait_for("Quorum:");
    for want in [
        "options DEC15 | DEC22 | ABSTAIN (from the body's Options: line (line 2))",
        "claude://s/a   yes       DEC15",
        "chatgpt://t/x  yes       DEC22",
        "gemini://g     no        -",
        "↳ the first option named in its first sentence",
        "Quorum: 2 of 2 needed — reached",
        "left",
        "Not closable yet: the poll runs until its deadline",
    ] {
        assert!(s.contains(want), "{want}\n{s}");
    }
    t.keys(&["Escape"]);
    // Past the deadline (the app's own clock): the same answers still count.
    while jiff::Timestamp::now() <= due.checked_add(jiff::SignedDuration::from_secs(1)).unwrap() {
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    t.keys(&["P"]);
    let s = t.wait_for("c: write E-TIMEOUT for 1 silent target(s)");
    assert!(s.contains("Deadline: ") && s.contains("expired"), "{s}");
    assert!(s.contains("claude://s/a   yes       DEC15"), "{s}");
    t.keys(&["c"]);
    t.wait_for("Poll closed: wrote 1 E-TIMEOUT ERROR(s) (for gemini://g)");
    let copied = t.wait_buffer("the CLOSE", |b| b.contains("intent: CLOSE"));
    assert!(copied.contains("Quorum-Reached: yes"), "{copied}");
    assert!(
        copied.contains("Votes: DEC15: 1, DEC22: 1, ABSTAIN: 0"),
        "{copied}"
    );
    // From the desk, never from an AI that did not send it.
    assert!(copied.starts_with("[[human://"), "{copied}");
    // The ERROR and the CLOSE are in the thread, answering the POLL; the ERROR is a record,
    // not a draft to send.
    let (thread, show) = t.only_thread();
    let messages = show["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 5, "{show}");
    let error = messages
        .iter()
        .find(|m| m["intent"] == "ERROR")
        .expect("an ERROR");
    assert_eq!(error["parent"], poll.as_str());
    let queue = t.cli_json(&["queue"]);
    let drafts = &queue["sections"][4];
    assert_eq!(drafts["section"], "drafts");
    assert_eq!(drafts["count"], 0, "{queue}");
    let json = t.cli_json(&["poll", &poll]);
    assert_eq!(
        json["tally"]["silent"].as_array().unwrap().len(),
        0,
        "{json}"
    );
    assert_eq!(json["tally"]["targets"][2]["answer"], "ERROR E-TIMEOUT");
    assert_eq!(json["tally"]["targets"][0]["vote"], "DEC15");
    assert_eq!(json["thread"], thread.as_str());
    t.keys(&["q"]);
    assert_eq!(t.wait_exit(), 0);
}

#[test]
fn a_broken_paste_is_answered_with_e_format() {
    let Some(t) = Term::new() else { return };
    std::fs::write(
        t.path("config.toml"),
        "[operator]\naddresses = [\"kalle\"]\n",
    )
    .unwrap();
    t.start(120, 36, &[]);
    t.wait_for("Empty database");
    let broken = format!(
        "[[CLAUDE→CHATGPT v1]]\nuser: kalle\nthread: {THREAD}\nparent: {POLL}\nmessage: {POLL}\n\
         intent: REQUEST\nbody: |\n  Answering myself?\nsig: none\n[[END]]\n"
    );
    t.paste(&broken, true);
    t.wait_for("E: reply E-FORMAT to the sender");
    t.keys(&["E"]);
    t.wait_for("E-FORMAT reply to CLAUDE");
    t.keys(&["C-y"]);
    let copied = t.wait_buffer("the ERROR", |b| b.contains("Code: E-FORMAT"));
    // From the desk, which read the paste, to the sender: never as CHATGPT.
    assert!(copied.starts_with("[[kalle→CLAUDE v1]]"), "{copied}");
    assert!(copied.contains("[self-parent]"), "{copied}");
    let ex = crosstalk::protocol::extract(&copied, &Default::default());
    assert!(ex.envelopes[0].diagnostics.iter().all(|d| !d.is_error()));
    t.keys(&["q"]);
    assert_eq!(t.wait_exit(), 0);
}
