//! The two-action hop in the real binary: the app in tmux watching a real X clipboard (Xvfb)
//! with `[relay] copy_on_import`, and `xclip` playing three chat windows — setting the
//! clipboard as a window's Copy button does, reading it as a paste does.
//!
//! CLAUDE → CHATGPT → GEMINI → CLAUDE → CHATGPT, each hop two clipboard operations: every
//! envelope stored once, threaded, marked relayed; each recipient's text fenced as its
//! contact says, CHATGPT's preamble before the first envelope it gets and not the second; an
//! invalid copy and a copy of two envelopes leave the clipboard alone and are announced, and
//! `>` puts the two up one after the other; the app's own copies are never imported again.
//!
//! A POLL goes to three windows, one copy each: pasted into the app (OSC 52 copies read back
//! from tmux), and copied under `crosstalk watch` (its Enter on a terminal of its own).

use crate::helpers::http;
use crate::helpers::tmux;

use std::time::{Duration, Instant};

use tmux::Term;
use tmux::relay::{self, count};
use tmux::xvfb::{Piped, Xvfb, next_json, spawn_piped};

const WAIT: Duration = Duration::from_secs(20);
const PREFIX: &str = "01KAQ4W5J8Z0000000000000H";
const PREAMBLE: &str = "You are talking to Claude and Gemini through Kalle's relay.";

fn envelope(from: &str, to: &str, n: u8, parent: Option<u8>, body: &str) -> String {
    relay::envelope(PREFIX, "three windows", (from, to), n, parent, body)
}

/// One hop: the sender's window copies its whole answer, prose around the envelope `text`;
/// the recipient's window gets what crosstalk put up for it.
fn hop(x: &Xvfb, t: &Term, text: &str, body: &str, to: &str) -> String {
    let text = format!("Here is my reply for {to}:\n\n{text}\nTell me what they say.\n");
    x.copy(&text);
    let pasted = x.clipboard_until(&format!("the envelope for {to}"), |c| {
        c != text && c.contains(body)
    });
    t.wait_for(&format!("Ready for {to}"));
    pasted
}

#[test]
fn three_windows_relay_in_two_clipboard_operations_per_hop() {
    let Some(x) = Xvfb::start() else { return };
    let Some(mut t) = Term::new() else { return };
    std::fs::write(
        t.path("config.toml"),
        format!(
            "[operator]\naddresses = [\"kalle\"]\n[relay]\ncopy_on_import = true\n\
             [watch]\ninterval_ms = 100\n\n\
             [[contacts]]\nname = \"CHATGPT\"\nfence = true\npreamble = \"{PREAMBLE}\"\n\n\
             [[contacts]]\nname = \"GEMINI\"\n\n[[contacts]]\nname = \"CLAUDE\"\n"
        ),
    )
    .unwrap();
    t.app_env.push(("DISPLAY".into(), x.display.clone()));
    t.start(120, 40, &[]);
    t.wait_for("Empty database");
    t.keys(&["W"]);
    t.wait_for("Watching the clipboard");

    // CLAUDE → CHATGPT: the first envelope CHATGPT's window gets, after its preamble, fenced.
    let first = envelope("CLAUDE", "CHATGPT", 1, None, "Which cache should we use?");
    let pasted = hop(&x, &t, &first, "Which cache should we use?", "CHATGPT");
    assert!(pasted.starts_with(PREAMBLE), "{pasted}");
    assert!(
        pasted.contains("\n\n```\n[[CLAUDE→CHATGPT v1]]\n"),
        "{pasted}"
    );
    assert!(pasted.trim_end().ends_with("[[END]]\n```"), "{pasted}");

    // CHATGPT → GEMINI: no fence, no preamble for GEMINI.
    let second = envelope("CHATGPT", "GEMINI", 2, Some(1), "Redis; Gemini, agree?");
    let pasted = hop(&x, &t, &second, "Redis; Gemini, agree?", "GEMINI");
    assert!(pasted.starts_with("[[CHATGPT→GEMINI v1]]\n"), "{pasted}");
    assert!(!pasted.contains("```"), "{pasted}");

    // GEMINI → CLAUDE.
    let third = envelope("GEMINI", "CLAUDE", 3, Some(2), "Agreed, with a TTL.");
    let pasted = hop(&x, &t, &third, "Agreed, with a TTL.", "CLAUDE");
    assert!(pasted.starts_with("[[GEMINI→CLAUDE v1]]\n"), "{pasted}");

    // CLAUDE → CHATGPT again: fenced, and no preamble the second time.
    let fourth = envelope(
        "CLAUDE",
        "CHATGPT",
        4,
        Some(3),
        "Settled: Redis with a TTL.",
    );
    let pasted = hop(&x, &t, &fourth, "Settled: Redis with a TTL.", "CHATGPT");
    assert!(
        pasted.starts_with("```\n[[CLAUDE→CHATGPT v1]]\n"),
        "{pasted}"
    );
    assert!(!pasted.contains(PREAMBLE), "{pasted}");

    // An invalid envelope: the clipboard keeps what was copied, and the app says why.
    relay::an_invalid_copy_stays_on_the_clipboard(&x, |text| t.wait_for(text));

    // Two envelopes in one copy: left alone, announced; `>` puts each up in turn.
    let fifth = envelope(
        "CLAUDE",
        "GEMINI",
        5,
        Some(4),
        "Gemini, write the TTL down.",
    );
    let sixth = envelope("CLAUDE", "CHATGPT", 6, Some(4), "ChatGPT, write the code.");
    let both = format!("{fifth}\n{sixth}");
    x.copy(&both);
    let s = t.wait_for("2 envelopes for others in one copy");
    assert!(s.contains("> puts up the first (for GEMINI)"), "{s}");
    // The decision, with any copy it makes, comes before the status line that says what came
    // of it: the clipboard read now is what the decision left.
    assert_eq!(x.clipboard_until("a read", |c| !c.is_empty()), both);
    t.keys(&[">"]);
    let pasted = x.clipboard_until("the first of two", |c| c.contains("write the TTL down"));
    assert!(pasted.starts_with("[[CLAUDE→GEMINI v1]]\n"), "{pasted}");
    t.wait_for("> puts up the next (1 left, for CHATGPT)");
    t.keys(&[">"]);
    let pasted = x.clipboard_until("the second of two", |c| c.contains("write the code"));
    assert!(
        pasted.starts_with("```\n[[CLAUDE→CHATGPT v1]]\n"),
        "{pasted}"
    );
    t.wait_for("that was the last");

    // No loop: every envelope stored once, none of crosstalk's own copies imported; the
    // pastes kept are the six the windows copied. The watch hears of the app's own last copy
    // after the status line says it was made, and an own copy is never announced, so nothing
    // shows that it was heard: a bounded wait, a few of the watch's reads long, is the only
    // way to give a wrong import its chance to happen.
    std::thread::sleep(Duration::from_millis(400));
    relay::stored_once_threaded_and_relayed(&t.db, 6, "relayed_at IS NOT NULL");
    assert_eq!(count(&t.db, "SELECT count(*) FROM pastes"), 6);
    t.keys(&["q"]);
    assert_eq!(t.wait_exit(), 0);
}

/// In the live relay, an envelope a window copies for the operator is selected as the watch
/// (on from the start) imports it: `r` then answers that envelope (its parent), written by
/// the desk (`[operator] addresses`) to its sender — not the envelope selected before, and
/// not in the name of the AI it was relayed to.
#[test]
fn a_watched_envelope_for_the_operator_is_what_r_answers() {
    let Some(x) = Xvfb::start() else { return };
    let Some(mut t) = Term::new() else { return };
    std::fs::write(
        t.path("config.toml"),
        "[operator]\naddresses = [\"kalle\"]\n[relay]\ncopy_on_import = true\n\
         [watch]\ninterval_ms = 100\non_start = true\n",
    )
    .unwrap();
    t.app_env.push(("DISPLAY".into(), x.display.clone()));
    // Wide enough that the status line shows every word of what it says.
    t.start(220, 40, &[]);
    t.wait_for("Watching the clipboard");

    // CLAUDE → CHATGPT, put up for CHATGPT and selected.
    let first = envelope("CLAUDE", "CHATGPT", 1, None, "Which cache should we use?");
    hop(&x, &t, &first, "Which cache should we use?", "CHATGPT");

    // CHATGPT answers Kalle: left on the clipboard, and selected.
    let to_me = envelope(
        "CHATGPT",
        "kalle",
        2,
        Some(1),
        "Redis, Kalle; shall I write it up?",
    );
    x.copy(&format!("For Kalle:\n\n{to_me}\n"));
    let s = t.wait_for("Selected, for you: REQUEST CHATGPT→kalle");
    assert!(s.contains("the envelope is addressed to you"), "{s}");
    t.keys(&["r"]);
    let s = t.wait_for("Reply to");
    assert!(s.contains(&format!("parent: {PREFIX}2")), "{s}");
    assert!(s.contains("[[kalle→CHATGPT v1]]"), "{s}");
    assert!(s.contains("intent: RESPOND"), "{s}");
    t.keys(&["Escape"]);
    t.wait_gone("Reply to");
    t.keys(&["q"]);
    assert_eq!(t.wait_exit(), 0);
}

/// `crosstalk watch` (the command, no app) makes the same hop: the recipient's text on the
/// clipboard, fenced and after the preamble as the contact says, recorded as relayed; an
/// envelope addressed to the operator and a copy of two leave the clipboard alone; its own
/// copies are never imported.
#[test]
fn the_watch_command_hops_too() {
    let Some(x) = Xvfb::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("w.db");
    let config = dir.path().join("c.toml");
    std::fs::write(
        &config,
        format!(
            "[operator]\naddresses = [\"kalle\"]\n[relay]\ncopy_on_import = true\n\
             [watch]\ninterval_ms = 100\n\n\
             [[contacts]]\nname = \"CHATGPT\"\nfence = true\npreamble = \"{PREAMBLE}\"\n"
        ),
    )
    .unwrap();
    let Piped {
        child: mut watch,
        out,
        err,
    } = watch_json(&x, dir.path(), &db, &config);
    let started = err.recv_timeout(WAIT).expect("the watch to start");
    assert!(
        started.contains("put back ready for their recipients"),
        "{started}"
    );

    let first = envelope("CLAUDE", "CHATGPT", 1, None, "Which cache should we use?");
    let copied = format!("My answer:\n\n{first}\nThanks.\n");
    x.copy(&copied);
    let line = next_json(&out, "the first hop");
    assert_eq!(line["imported"], 1, "{line}");
    assert_eq!(line["hop"]["decision"], "relay", "{line}");
    assert_eq!(line["hop"]["ready"]["to"], "CHATGPT", "{line}");
    assert_eq!(line["hop"]["ready"]["preamble"], true, "{line}");
    assert_eq!(line["copied"], "system clipboard", "{line}");
    let pasted = x.clipboard_until("the envelope for CHATGPT", |c| {
        c != copied && c.contains("Which cache")
    });
    assert!(pasted.starts_with(PREAMBLE), "{pasted}");
    assert!(
        pasted.contains("\n\n```\n[[CLAUDE→CHATGPT v1]]\n"),
        "{pasted}"
    );

    // Addressed to the operator: imported, the clipboard left alone.
    let to_me = envelope("CHATGPT", "kalle", 2, Some(1), "Done, Kalle.");
    x.copy(&to_me);
    let line = next_json(&out, "the envelope to the operator");
    assert_eq!(line["hop"]["decision"], "refuse", "{line}");
    assert!(
        line["hop"]["reason"]
            .as_str()
            .unwrap()
            .contains("addressed to you"),
        "{line}"
    );
    // The watch writes its line once it has acted on the copy, any copy it makes included:
    // the clipboard read now is what it left.
    assert_eq!(x.clipboard(), to_me);

    // Two for others: left alone, both listed as waiting.
    let both = format!(
        "{}\n{}",
        envelope("CLAUDE", "GEMINI", 3, Some(1), "Gemini, check."),
        envelope("CLAUDE", "CHATGPT", 4, Some(1), "ChatGPT, code.")
    );
    x.copy(&both);
    let line = next_json(&out, "the copy of two");
    assert_eq!(line["hop"]["decision"], "several", "{line}");
    assert_eq!(line["waiting"], 2, "{line}");
    assert_eq!(line["hop"]["waiting"][0]["to"], "GEMINI", "{line}");
    // The watch writes its line once it has acted on the copy, any copy it makes included:
    // the clipboard read now is what it left.
    assert_eq!(x.clipboard(), both);

    // No loop: four messages, one relayed (by the system clipboard), three pastes kept.
    assert_eq!(count(&db, "SELECT count(*) FROM messages"), 4);
    assert_eq!(count(&db, "SELECT count(*) FROM pastes"), 3);
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM delivery WHERE relayed_at IS NOT NULL"
        ),
        1
    );
    interrupt(&mut watch);
}

/// `crosstalk watch`'s hop to a contact that takes envelopes over HTTP posts the envelope to
/// it, as the app's hop does, instead of putting it on the clipboard: the peer stores it and
/// answers ACK, the ACK is stored in the thread, the message is relayed by `http`, and the
/// clipboard keeps what was copied.
#[test]
fn the_watch_command_posts_to_an_http_contact() {
    let Some(x) = Xvfb::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let server = http::Server::start(&dir.path().join("peer.db"), &[]);
    let db = dir.path().join("w.db");
    let config = dir.path().join("c.toml");
    std::fs::write(
        &config,
        format!(
            "[operator]\naddresses = [\"kalle\"]\n[relay]\ncopy_on_import = true\n\
             [watch]\ninterval_ms = 100\n\n\
             [[contacts]]\nname = \"CHATGPT\"\ndelivery = \"http\"\nurl = \"{}\"\n",
            server.url
        ),
    )
    .unwrap();
    let Piped {
        child: mut watch,
        out,
        err,
    } = watch_json(&x, dir.path(), &db, &config);
    err.recv_timeout(WAIT).expect("the watch to start");

    let (id, envelope) = http::envelope(&crosstalk::ids::IdGenerator::new(), "Over HTTP, please.");
    let copied = format!("My answer:\n\n{envelope}\nThanks.\n");
    x.copy(&copied);
    let line = next_json(&out, "the post");
    assert_eq!(line["imported"], 1, "{line}");
    assert_eq!(line["posted"]["over"], "http", "{line}");
    assert_eq!(line["posted"]["accepted"], true, "{line}");
    assert_eq!(
        line["posted"]["line"], "Delivered to CHATGPT over HTTP: ACK",
        "{line}"
    );
    assert!(line.get("hop").is_none(), "{line}");
    // The watch writes its line once it has acted on the copy, any copy it makes included:
    // the clipboard read now is what it left.
    assert_eq!(x.clipboard(), copied, "nothing put on the clipboard");

    let relayed =
        format!("SELECT count(*) FROM messages WHERE id = '{id}' AND relay_method = 'http'");
    assert_eq!(count(&db, &relayed), 1);
    assert_eq!(
        count(&db, "SELECT count(*) FROM messages WHERE intent = 'ACK'"),
        1
    );
    interrupt(&mut watch);
    assert_eq!(server.stop(), 0);
    assert_eq!(
        count(&dir.path().join("peer.db"), "SELECT count(*) FROM messages"),
        1
    );
}

/// `crosstalk watch --json` on `db` with `config`, under the Xvfb display `x`.
fn watch_json(
    x: &Xvfb,
    dir: &std::path::Path,
    db: &std::path::Path,
    config: &std::path::Path,
) -> Piped {
    spawn_piped(
        x.crosstalk(dir, config)
            .args(["--db", db.to_str().unwrap(), "watch", "--json"])
            .stdin(std::process::Stdio::null()),
    )
}

/// Sends the watch SIGINT, as Ctrl-C does, and waits (at most [`WAIT`]) for it to end.
fn interrupt(watch: &mut std::process::Child) {
    std::process::Command::new("kill")
        .args(["-INT", &watch.id().to_string()])
        .status()
        .unwrap();
    let start = Instant::now();
    while watch.try_wait().unwrap().is_none() {
        assert!(start.elapsed() < WAIT, "watch did not end on SIGINT");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Three windows a POLL goes to: ChatGPT's collapses newlines (fenced) and gets a preamble
/// before the first envelope; Claude's and Gemini's get the envelope as it is.
const POLL_CONFIG: &str = "[operator]\naddresses = [\"kalle\"]\n[relay]\ncopy_on_import = true\n\
    [watch]\ninterval_ms = 100\n\n\
    [[contacts]]\nname = \"CHATGPT\"\naddress = \"chatgpt://t/x\"\nfence = true\n\
    preamble = \"You are one of three voters.\"\n\n\
    [[contacts]]\nname = \"CLAUDE\"\naddress = \"claude://s/a\"\n";

/// A POLL from a fourth model to `claude://s/a`, `chatgpt://t/x` and `gemini://g`.
fn poll_for_three(n: u8) -> String {
    format!(
        "[[mistral://m→POLL v1]]\nuser: kalle\nthread: {PREFIX}{n}\nmessage: {PREFIX}{n}\n\
         context: cache poll\nintent: POLL\nmeta: routing\n\
         Targets: [\"claude://s/a\", \"chatgpt://t/x\", \"gemini://g\"]\n\
         body: |\n  Which cache? REDIS | MEMCACHED\nsig: none\n[[END]]\n"
    )
}

/// What each of the three windows gets, in turn: Claude's the envelope, ChatGPT's the
/// preamble and the envelope fenced, Gemini's the envelope.
fn check_the_three_copies(copies: &[String]) {
    assert!(
        copies[0].starts_with("[[mistral://m→POLL v1]]\n"),
        "{}",
        copies[0]
    );
    assert!(
        copies[1].starts_with("You are one of three voters.\n\n```\n[[mistral://m→POLL v1]]\n"),
        "{}",
        copies[1]
    );
    assert!(
        copies[1].trim_end().ends_with("[[END]]\n```"),
        "{}",
        copies[1]
    );
    assert!(
        copies[2].starts_with("[[mistral://m→POLL v1]]\n"),
        "{}",
        copies[2]
    );
    for c in copies {
        assert!(c.contains("Which cache? REDIS | MEMCACHED"), "{c}");
    }
}

/// A POLL pasted into the app with `copy_on_import` goes up for its first target at once and
/// `>` puts it up for each next one; the ledger has it relayed once all three had it.
#[test]
fn a_pasted_poll_goes_to_its_three_targets_with_gt() {
    let Some(t) = Term::new() else { return };
    std::fs::write(t.path("config.toml"), POLL_CONFIG).unwrap();
    t.start(160, 40, &[]);
    t.wait_for("Empty database");
    let poll = poll_for_three(1);
    t.paste(&poll, true);
    t.wait_for("Paste: 1 envelope");
    t.keys(&["Enter"]);
    let mut copies = vec![t.wait_buffer("Claude's copy", |b| b.contains("REDIS | MEMCACHED"))];
    let s = t.wait_for("POLL for claude://s/a (1 of 3)");
    assert!(s.contains("> puts it up for chatgpt://t/x next"), "{s}");
    assert!(s.contains("relayed to 1 of 3 targets"), "{s}");
    t.keys(&[">"]);
    copies.push(t.wait_buffer("ChatGPT's copy", |b| b.starts_with("You are one")));
    let s = t.wait_for("POLL for chatgpt://t/x (2 of 3)");
    assert!(s.contains("its preamble first"), "{s}");
    assert!(s.contains("> puts it up for gemini://g next"), "{s}");
    t.keys(&[">"]);
    // Gemini's copy is Claude's text again: told apart by the status line, which follows it.
    t.wait_for("that was its last target");
    assert_eq!(t.buffer_names().len(), 3, "{:?}", t.buffer_names());
    copies.push(t.buffer().unwrap());
    check_the_three_copies(&copies);
    t.wait_for("POLL for gemini://g (3 of 3)");
    // Stored once, relayed: one row per window, each by OSC 52.
    assert_eq!(count(&t.db, "SELECT count(*) FROM messages"), 1);
    assert_eq!(
        count(
            &t.db,
            "SELECT count(*) FROM messages WHERE relayed_at IS NOT NULL"
        ),
        1
    );
    assert_eq!(
        count(
            &t.db,
            "SELECT count(*) FROM message_relays WHERE relay_method = 'OSC 52'"
        ),
        3
    );
    t.keys(&["q"]);
    assert_eq!(t.wait_exit(), 0);
}

/// `crosstalk watch` on a terminal of its own makes the same round: a copied POLL goes up for
/// its first target, and Enter puts it up for each next one, each as its window gets it.
#[test]
fn the_watch_command_puts_a_poll_up_for_each_target_with_enter() {
    let Some(x) = Xvfb::start() else { return };
    let Some(mut t) = Term::new() else { return };
    std::fs::write(t.path("config.toml"), POLL_CONFIG).unwrap();
    t.app_env.push(("DISPLAY".into(), x.display.clone()));
    t.start(160, 30, &["watch"]);
    t.wait_for("Ctrl-C stops");
    let copied = format!(
        "A poll for you three:\n\n{}\nVote soon.\n",
        poll_for_three(2)
    );
    x.copy(&copied);
    let mut copies = vec![x.clipboard_until("Claude's copy", |c| {
        c != copied && c.contains("REDIS | MEMCACHED")
    })];
    let s = t.wait_for("POLL for claude://s/a (1 of 3): paste it there");
    assert!(s.contains("Enter puts it up for chatgpt://t/x next"), "{s}");
    t.keys(&["Enter"]);
    copies.push(x.clipboard_until("ChatGPT's copy", |c| c.starts_with("You are one")));
    t.wait_for(
        "POLL for chatgpt://t/x (2 of 3): paste it there, its preamble first; Enter puts it up for gemini://g next",
    );
    t.keys(&["Enter"]);
    t.wait_for("POLL for gemini://g (3 of 3): paste it there; that was its last target");
    copies.push(x.clipboard_until("Gemini's copy", |c| c.starts_with("[[mistral")));
    check_the_three_copies(&copies);
    assert_eq!(
        count(
            &t.db,
            "SELECT count(*) FROM message_relays WHERE relay_method = 'system clipboard'"
        ),
        3
    );
    assert_eq!(
        count(
            &t.db,
            "SELECT count(*) FROM messages WHERE relayed_at IS NOT NULL"
        ),
        1
    );
    // SIGINT, as Ctrl-C sends it, to the watch alone (not to the shell that reports it).
    let pid = t.app_pid().to_string();
    std::process::Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .unwrap();
    assert_eq!(t.wait_exit(), 0);
}
