//! The import's integrity rules in the real binary, in tmux: an id conflict is a loud ✗ row
//! and its text is shown with `V` after the import; an envelope with the spec's example ids is
//! imported with `F` under fresh ids and a reply naming the original threads under it; after an
//! import the newest envelope the paste added is selected, so `y` copies it (OSC 52).

use crate::helpers::tmux;

use tmux::Term;

const THREAD: &str = "01KAQ4W5J8Z0000000000000T1";
const QUESTION: &str = "01KAQ4W5J8Z0000000000000M1";

fn env(from: &str, thread: &str, parent: Option<&str>, message: &str, body: &str) -> String {
    let parent = parent.map_or(String::new(), |p| format!("parent: {p}\n"));
    format!(
        "[[{from}→op v1]]\nuser: kalle\nthread: {thread}\n{parent}message: {message}\n\
         context: integrity tmux\nintent: REQUEST\nbody: |\n  {body}\nsig: none\n[[END]]\n"
    )
}

/// The CLI imports `text` before the app starts.
fn import_first(t: &Term, text: &str) {
    let file = t.path("first.txt");
    std::fs::write(&file, text).unwrap();
    t.import(&[&file]);
}

#[test]
fn a_conflicting_id_is_a_loud_row_and_v_shows_the_kept_version() {
    let Some(t) = Term::new() else { return };
    import_first(
        &t,
        &env("claude", THREAD, None, QUESTION, "the original words"),
    );
    t.start(120, 36, &[]);
    t.wait_for("the original words");
    t.paste(
        &env("claude", THREAD, None, QUESTION, "words someone changed"),
        true,
    );
    let s = t.wait_for("[id-conflict]");
    assert!(s.contains("✗ id"), "{s}");
    assert!(s.contains("kept as conflicting version"), "{s}");
    assert!(!s.contains("No problems found"), "{s}");
    t.keys(&["Enter"]);
    let s = t.wait_for("id conflict: 1 other text");
    assert!(s.contains("1 id conflict(s)"), "{s}");
    t.keys(&["V"]);
    let s = t.wait_for("words someone changed");
    assert!(s.contains("conflicting version 1 of 1"), "{s}");
    // The stored message is unchanged, and the version is listed.
    let show = t.cli_json(&["show", THREAD]);
    let m = &show["messages"][0];
    assert_eq!(m["body"], "the original words");
    assert_eq!(m["versions"].as_array().unwrap().len(), 1, "{m}");
    t.keys(&["q"]);
    assert_eq!(t.wait_exit(), 0);
}

#[test]
fn example_ids_are_imported_fresh_with_f_and_a_reply_naming_them_threads_under() {
    let Some(t) = Term::new() else { return };
    let (bad_thread, bad_message) = ("01J9J3D9C2V8M4P1R6S8T9U0V1", "01J9J3D9C2V8M4P1R6S8T9U0V2");
    t.start(120, 36, &[]);
    t.wait_for("Empty database");
    t.paste(
        &env(
            "claude",
            bad_thread,
            None,
            bad_message,
            "copied the example",
        ),
        true,
    );
    t.wait_for("F: import with fresh ids");
    t.keys(&["F"]);
    t.wait_for(&format!("originally {bad_message}"));
    let reply = "01KAQ4W5J8Z0000000000000R1";
    t.paste(
        &env(
            "gpt",
            bad_thread,
            Some(bad_message),
            reply,
            "answering the example",
        ),
        true,
    );
    t.wait_for("Paste: 1 envelope");
    t.keys(&["Enter"]);
    t.wait_for("answering the example");
    let (_, show) = t.only_thread();
    let messages = show["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2, "{show}");
    assert_eq!(messages[0]["original_id"], bad_message, "{show}");
    assert_eq!(messages[1]["message"], reply);
    assert_eq!(messages[1]["parent"], messages[0]["message"], "{show}");
    t.keys(&["q"]);
    assert_eq!(t.wait_exit(), 0);
}

#[test]
fn after_import_y_copies_the_newest_envelope_the_paste_added() {
    let Some(t) = Term::new() else { return };
    import_first(&t, &env("op", THREAD, None, QUESTION, "the question"));
    t.start(120, 36, &[]);
    t.wait_for("the question");
    // The fresh answer, the question quoted again (already stored), and an older note quoted
    // that was not stored: the answer is what just arrived.
    let answer = "01KAQ4W5J8Z0000000000000A9";
    let paste = format!(
        "{}\n{}\n{}",
        env("op", THREAD, None, QUESTION, "the question"),
        env("claude", THREAD, Some(QUESTION), answer, "the fresh answer"),
        env(
            "claude",
            THREAD,
            None,
            "01J9J3D9C2V8M4P1R6S8T9V0V1",
            "an old quoted note"
        ),
    );
    t.paste(&paste, true);
    t.wait_for("Paste: 3 envelopes");
    t.keys(&["Enter"]);
    t.wait_for("Imported 2, 1 already stored");
    t.keys(&["y"]);
    let copied = t.wait_buffer("the fresh answer", |b| b.contains("the fresh answer"));
    assert!(copied.contains(answer), "{copied}");
    assert!(!copied.contains("an old quoted note"), "{copied}");
    t.keys(&["q"]);
    assert_eq!(t.wait_exit(), 0);
}
