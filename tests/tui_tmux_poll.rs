//! POLL collation and ERROR replies in the real binary, in tmux: `P` on a 2-of-3 POLL shows
//! who answered and how each voted, the quorum and the expired deadline; `c` writes the
//! E-TIMEOUT ERROR for the silent target and copies the CLOSE (OSC 52); a broken paste is
//! answered with E-FORMAT from the preview (`E`, then C-y).

mod tmux;

use tmux::Term;

const THREAD: &str = "01K76Q0Z00000000000000T001";
const POLL: &str = "01K76Q0Z00000000000000P001";
const CLAUDE: &str = "01K76Q3N00000000000000R001";
const GPT: &str = "01K76Q6B00000000000000R002";

/// A 2-of-3 POLL whose deadline has passed, answered in time by two of its three targets.
fn poll_thread() -> String {
    format!(
        "[[human://op→POLL v1]]\nuser: kalle\nsession: 2025-10-09T16Z a7f3d1\nthread: {THREAD}\n\
message: {POLL}\ncontext: storage poll\nintent: POLL\nmeta: routing\n\
Targets: [\"claude://s/a\", \"chatgpt://t/x\", \"gemini://g\"]\nmeta: poll\nType: consensus\n\
Quorum: 2-of-3\nDeadline: 2025-10-11T00:00Z\nbody: |\n  Which store?\n  SQLITE | FILES | ABSTAIN?\n\
sig: none\n[[END]]\n\n\
[[claude://s/a→human://op v1]]\nuser: claude\nthread: {THREAD}\nparent: {POLL}\nmessage: {CLAUDE}\n\
intent: RESPOND\nbody: |\n  SQLITE, it is one file.\nsig: none\n[[END]]\n\n\
[[chatgpt://t/x→human://op v1]]\nuser: gpt\nthread: {THREAD}\nparent: {POLL}\nmessage: {GPT}\n\
intent: RESPOND\nmeta: poll\nVote: FILES\nbody: |\n  Either works.\nsig: none\n[[END]]\n"
    )
}

#[test]
fn a_two_of_three_poll_is_tallied_and_closed_with_e_timeout() {
    let Some(t) = Term::new() else { return };
    let file = t.path("poll.txt");
    std::fs::write(&file, poll_thread()).unwrap();
    t.import(&[&file]);
    t.start(120, 36, &[]);
    t.wait_for("storage poll");
    t.keys(&[":"]);
    t.type_text(&format!("open {POLL}"));
    t.keys(&["Enter"]);
    t.wait_for("Which store?");
    t.keys(&["P"]);
    let s = t.wait_for("Quorum:");
    for want in [
        "claude://s/a   yes       SQLITE",
        "chatgpt://t/x  yes       FILES",
        "gemini://g     no        -",
        "Quorum: 2 of 2 needed — reached",
        "Deadline: 2025-10-11T00:00Z — expired",
        "c: write E-TIMEOUT for 1 silent target(s)",
    ] {
        assert!(s.contains(want), "{want}\n{s}");
    }
    t.keys(&["c"]);
    t.wait_for("Poll closed: wrote 1 E-TIMEOUT ERROR(s) (for gemini://g)");
    let copied = t.wait_buffer("the CLOSE", |b| b.contains("intent: CLOSE"));
    assert!(copied.contains("Quorum-Reached: yes"), "{copied}");
    // The ERROR and the CLOSE are in the thread, answering the POLL.
    let show = t.cli_json(&["show", THREAD]);
    let messages = show["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 5, "{show}");
    let error = messages
        .iter()
        .find(|m| m["intent"] == "ERROR")
        .expect("an ERROR");
    assert_eq!(error["parent"], POLL);
    let json = t.cli_json(&["poll", POLL]);
    assert_eq!(
        json["tally"]["silent"].as_array().unwrap().len(),
        0,
        "{json}"
    );
    assert_eq!(json["tally"]["targets"][2]["answer"], "ERROR E-TIMEOUT");
    t.keys(&["q"]);
    assert_eq!(t.wait_exit(), 0);
}

#[test]
fn a_broken_paste_is_answered_with_e_format() {
    let Some(t) = Term::new() else { return };
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
    assert!(copied.starts_with("[[CHATGPT→CLAUDE v1]]"), "{copied}");
    assert!(copied.contains("[self-parent]"), "{copied}");
    let ex = crosstalk::protocol::extract(&copied, &Default::default());
    assert!(ex.envelopes[0].diagnostics.iter().all(|d| !d.is_error()));
    t.keys(&["q"]);
    assert_eq!(t.wait_exit(), 0);
}
