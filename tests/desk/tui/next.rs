//! The real binary at 80×24, in tmux: a thread row with its markers keeps a readable title
//! and names participants by contact name, and `t` lands on the message to relay, then on the
//! one addressed to the operator, saying each on the status line; `y` then relays the one it
//! landed on (read back from tmux's paste buffer, where OSC 52 put it).
//!
//! Same sandbox as `flows.rs`. `CROSSTALK_SKIP_TMUX=1` skips it.

use crate::helpers::tmux;

use tmux::Term;

fn ulid(minutes_ago: u64, n: u128) -> String {
    let now = jiff::Timestamp::now().as_millisecond() as u64;
    ulid::Ulid::from_parts(now - minutes_ago * 60_000, n).to_string()
}

fn env(from: &str, to: &str, id: &str, context: &str, body: &str) -> String {
    format!(
        "[[{from}→{to} v1]]\nuser: kalle\nthread: {id}\nmessage: {id}\ncontext: {context}\n\
         intent: REQUEST\nbody: |\n  {body}\nsig: none\n[[END]]\n\n"
    )
}

#[test]
fn at_80_columns_rows_stay_readable_and_t_lands_on_the_message_to_relay() {
    let Some(t) = Term::new() else { return };
    std::fs::write(
        t.path("config.toml"),
        "[operator]\naddresses = [\"human://kalle\"]\n\n\
         [[contacts]]\nname = \"CLAUDE\"\naddress = \"claude://session/7c2e91\"\n\n\
         [[contacts]]\nname = \"GPT\"\naddress = \"chatgpt://thread/f07d3e\"\n",
    )
    .unwrap();
    let (relay, mine) = (ulid(50, 1), ulid(10, 2));
    let text = [
        env(
            "chatgpt://thread/f07d3e",
            "claude://session/7c2e91",
            &relay,
            "launch plan for the spring release",
            "Plan the launch with me.",
        ),
        env(
            "claude://session/7c2e91",
            "human://kalle",
            &mine,
            "budget review",
            "Which budget line should go?",
        ),
    ]
    .concat();
    std::fs::write(t.path("in.crosstalk"), text).unwrap();
    t.cli(&["import", t.path("in.crosstalk").to_str().unwrap()]);

    t.start(80, 24, &[]);
    let s = t.wait_for("Threads");
    // The row keeps its title beside its markers: unread, to relay.
    assert!(tmux::has_row(&s, &["│●⇢ launch plan for…"]), "{s}");
    assert!(tmux::has_row(&s, &["│●✉ budget review ·…"]), "{s}");
    assert!(!s.contains("claude://session/7c2e91→"), "{s}");

    // `t` lands on the message to relay, across threads, and says what it found.
    t.keys(&["t"]);
    let s = t.wait_until("t's first stop", |s| {
        tmux::status_line(s).starts_with("to relay: REQUEST GPT→CLAUDE")
    });
    assert!(tmux::status_line(&s).ends_with("(1 of 2)"), "{s}");
    assert!(
        tmux::has_row(&s, &["⇢ GPT→CLAUDE", "Plan the launch"]),
        "{s}"
    );
    assert!(s.contains("⇢ to relay (y)"), "{s}");
    // Relayed from where it landed.
    t.keys(&["y"]);
    let copy = t.wait_buffer("the message to relay", |b| {
        b.contains(&format!("message: {relay}"))
    });
    assert!(
        copy.starts_with("[[chatgpt://thread/f07d3e→claude://session/7c2e91 v1]]"),
        "{copy}"
    );
    t.wait_for("relayed (OSC 52)");
    // Then the one addressed to the operator; relayed, the first is no longer to do.
    t.keys(&["t"]);
    let s = t.wait_until("t's next stop", |s| {
        tmux::status_line(s).starts_with("addressed to me: REQUEST CLAUDE→human://kalle")
    });
    assert!(tmux::status_line(&s).ends_with("(1 of 1)"), "{s}");
    assert!(s.contains("Which budget line"), "{s}");
}
