//! The delivery ledger in the real binary, in tmux: an envelope to relay is copied with `y`
//! and shown relayed; a REQUEST then awaits its answer, an ACK does not, a POLL awaits each of
//! its targets; a reply whose parent never arrived is marked in the tree and the list; the
//! queue (`Q`) opens its rows; `crosstalk queue --json` reports the same. In the queue `d`
//! marks a row done, `u` brings it back and `x` dismisses it; in the list `a` archives a
//! thread and `U` brings it back, each checked with the CLI.
//!
//! Same sandbox as `flows.rs` (its own tmux server and temporary HOME/XDG folders; the
//! copy goes out as OSC 52 into tmux's paste buffer). `CROSSTALK_SKIP_TMUX=1` skips it.

use crate::helpers::tmux;

use serde_json::Value;
use tmux::Term;

/// The shared sandbox, with the operator's own address in its config.
fn term() -> Option<Term> {
    let t = Term::new()?;
    std::fs::write(
        t.path("config.toml"),
        "[operator]\naddresses = [\"human@desk\"]\n",
    )
    .unwrap();
    Some(t)
}

/// `crosstalk queue --json`.
fn queue(t: &Term) -> Value {
    t.cli_json(&["queue"])
}

/// The message ids of a queue section.
fn section(q: &Value, name: &str) -> Vec<String> {
    q["sections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["section"] == name)
        .unwrap()["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["message"].as_str().unwrap().to_string())
        .collect()
}

fn ulid(minutes_ago: u64, n: u128) -> String {
    let now = jiff::Timestamp::now().as_millisecond() as u64;
    ulid::Ulid::from_parts(now - minutes_ago * 60_000, n).to_string()
}

fn env(
    from: &str,
    to: &str,
    thread: &str,
    parent: Option<&str>,
    id: &str,
    intent: &str,
    meta: &str,
) -> String {
    let parent = parent.map_or(String::new(), |p| format!("parent: {p}\n"));
    format!(
        "[[{from}→{to} v1]]\nuser: kalle\nthread: {thread}\n{parent}message: {id}\n\
         context: ctx {intent}\nintent: {intent}\n{meta}body: |\n  {intent} body\nsig: none\n[[END]]\n\n"
    )
}

#[test]
fn relay_awaiting_missing_parent_and_the_queue_in_the_real_binary() {
    let Some(t) = term() else { return };
    // Oldest first: the REQUEST, the ACK, the POLL; and a reply whose parent never came.
    let (req, ack, poll, orphan, never) = (
        ulid(50, 1),
        ulid(40, 2),
        ulid(30, 3),
        ulid(20, 4),
        ulid(25, 5),
    );
    let poll_meta = "meta: routing\nTargets: [\"CLAUDE\", \"CHATGPT\"]\n";
    let text = [
        env("CLAUDE", "CHATGPT", &req, None, &req, "REQUEST", ""),
        env("CLAUDE", "CHATGPT", &ack, None, &ack, "ACK", ""),
        env("human@desk", "POLL", &poll, None, &poll, "POLL", poll_meta),
        env(
            "CHATGPT",
            "CLAUDE",
            &orphan,
            Some(&never),
            &orphan,
            "RESPOND",
            "",
        ),
    ]
    .concat();
    std::fs::write(t.path("in.crosstalk"), text).unwrap();
    t.cli(&["import", t.path("in.crosstalk").to_str().unwrap()]);
    let q = queue(&t);
    assert_eq!(
        section(&q, "to_relay"),
        [req.clone(), ack.clone(), poll.clone(), orphan.clone()]
    );
    assert_eq!(section(&q, "missing_parent"), std::slice::from_ref(&orphan));
    assert!(t.cli(&["queue"]).contains("to relay (4)"));

    // Wide enough that the inspector's delivery line is one row, also when the time an id
    // claims is on another day (just after midnight) and is told with its date.
    t.start(200, 40, &[]);
    t.wait_for("Threads");
    // The list marks the missed relay (before its being to relay too).
    t.wait_until("the missed relay's row", |s| {
        tmux::has_row(s, &["⚠", "ctx RESPOND"])
    });
    // The queue opens its first row: the REQUEST. `y` relays it.
    t.keys(&["Q"]);
    t.wait_for("to relay (4)");
    t.keys(&["Enter"]);
    t.wait_for("⇢ to relay (y)");
    t.keys(&["y"]);
    let copy = t.wait_buffer("the REQUEST", |b| b.contains(&format!("message: {req}")));
    assert!(copy.starts_with("[[CLAUDE→CHATGPT"), "{copy}");
    let s = t.wait_for("relayed (OSC 52)");
    assert!(
        s.contains("relayed 0s ago by OSC 52") || s.contains("relayed 1s ago by OSC 52"),
        "{s}"
    );
    assert!(s.contains("awaiting CHATGPT"), "{s}");
    // The ACK: relayed, and it awaits nothing.
    t.keys(&["Q"]);
    t.wait_for("to relay (3)");
    t.keys(&["Enter"]);
    t.wait_for("ACK body");
    t.keys(&["y"]);
    t.wait_buffer("the ACK", |b| b.contains(&format!("message: {ack}")));
    let s = t.wait_for("relayed (OSC 52)");
    assert!(!s.contains("⏳ awaiting"), "{s}");
    // The POLL goes to each of its targets, `y` for the first and `>` for the next, and
    // then awaits each of them.
    t.keys(&["Q"]);
    t.wait_for("to relay (2)");
    t.keys(&["Enter"]);
    t.wait_for("POLL body");
    t.keys(&["y"]);
    t.wait_buffer("the POLL", |b| b.contains(&format!("message: {poll}")));
    let s = t.wait_for("POLL for CLAUDE (1 of 2)");
    assert!(s.contains("> puts it up for CHATGPT next"), "{s}");
    assert!(
        s.contains("relayed to 1 of 2 targets (not yet: CHATGPT)"),
        "{s}"
    );
    t.keys(&[">"]);
    t.wait_for("POLL for CHATGPT (2 of 2)");
    assert_eq!(
        t.buffer_names().len(),
        4,
        "one copy each: {:?}",
        t.buffer_names()
    );
    let s = t.wait_for("awaiting CLAUDE, CHATGPT");
    assert!(s.contains("(2 answers needed)"), "{s}");
    // The queue now: the REQUEST and the POLL await; the ACK is nowhere.
    t.keys(&["Q"]);
    let s = t.wait_for("awaiting reply (2)");
    assert!(
        s.contains("to relay (1)") && s.contains("missing parent (1)"),
        "{s}"
    );
    // Its last row opens the reply that misses its parent; the tree marks it.
    t.keys(&["j", "j", "j", "j", "Enter"]);
    let s = t.wait_for("its parent was never received");
    assert!(s.contains("⚠ ⇢ CHATGPT→CLAUDE"), "{s}");
    let q = queue(&t);
    assert_eq!(section(&q, "awaiting"), [req.clone(), poll.clone()]);
    assert_eq!(section(&q, "to_relay"), std::slice::from_ref(&orphan));
    let rows = q["sections"][2]["rows"].as_array().unwrap();
    assert_eq!(rows[0]["relay_method"], "OSC 52");
    assert_eq!(
        rows[1]["awaiting_from"],
        serde_json::json!(["CLAUDE", "CHATGPT"])
    );
    // The parent arrives late: the marks go.
    std::fs::write(
        t.path("late.crosstalk"),
        env("CLAUDE", "CHATGPT", &orphan, None, &never, "REQUEST", ""),
    )
    .unwrap();
    t.cli(&["import", t.path("late.crosstalk").to_str().unwrap()]);
    assert!(section(&queue(&t), "missing_parent").is_empty());
}

/// The thread ids `crosstalk threads` lists (`archived`: with `--archived`).
fn thread_ids(t: &Term, archived: bool) -> Vec<String> {
    let mut args = vec!["threads"];
    if archived {
        args.push("--archived");
    }
    t.cli_json(&args)
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn settling_in_the_queue_and_archiving_a_thread_in_the_real_binary() {
    let Some(t) = term() else { return };
    let (first, second) = (ulid(20, 1), ulid(10, 2));
    // Two threads, each with an envelope to relay; the second imported last, so it is the
    // newest and the list's first row.
    for (name, id, intent) in [("a", &first, "REQUEST"), ("b", &second, "BROADCAST")] {
        let file = t.path(&format!("{name}.crosstalk"));
        std::fs::write(&file, env("CLAUDE", "CHATGPT", id, None, id, intent, "")).unwrap();
        t.cli(&["import", file.to_str().unwrap()]);
    }
    assert_eq!(
        section(&queue(&t), "to_relay"),
        [first.clone(), second.clone()]
    );

    t.start(120, 40, &[]);
    t.wait_for("Threads");
    // `d` marks the first row done: it leaves at once, and the line says how to undo it.
    t.keys(&["Q"]);
    t.wait_for("to relay (2)");
    t.keys(&["d"]);
    let s = t.wait_for("to relay (1)");
    assert!(
        tmux::status_line(&s).starts_with("Marked done: REQUEST CLAUDE→CHATGPT")
            && s.contains("u undoes."),
        "{s}"
    );
    assert_eq!(
        section(&queue(&t), "to_relay"),
        std::slice::from_ref(&second)
    );
    // `u` brings it back, selected; `x` then dismisses it.
    t.keys(&["u"]);
    t.wait_for("Back under to relay: REQUEST");
    t.wait_for("to relay (2)");
    t.keys(&["x"]);
    t.wait_for("Dismissed: REQUEST");
    t.wait_for("to relay (1)");
    assert_eq!(
        section(&queue(&t), "to_relay"),
        std::slice::from_ref(&second)
    );
    let undone = t.cli_json(&["queue", "undo", &first]);
    assert_eq!(undone["changed"], true, "settled by the app: {undone}");
    t.cli(&["queue", "dismiss", &first]);

    // In the list, `a` archives the selected (newest) thread; its queue item stays.
    t.keys(&["Escape"]);
    t.wait_gone("to relay (1)");
    t.keys(&["a"]);
    let s = t.wait_for("Archived “ctx BROADCAST”");
    assert!(
        tmux::status_line(&s).contains("U undoes; s cycles to the archived threads"),
        "{s}"
    );
    assert_eq!(thread_ids(&t, false), std::slice::from_ref(&first));
    assert_eq!(thread_ids(&t, true), std::slice::from_ref(&second));
    assert_eq!(
        section(&queue(&t), "to_relay"),
        std::slice::from_ref(&second)
    );
    // `U` brings it back.
    t.keys(&["U"]);
    t.wait_for("“ctx BROADCAST” is back in the thread list");
    assert!(thread_ids(&t, true).is_empty());
    assert_eq!(thread_ids(&t, false).len(), 2);
}
