//! End-to-end flows of the real `crosstalk` binary in a real terminal: tmux.
//!
//! Each test starts its own tmux server on a socket inside its own temporary directory (so tests
//! run in parallel and never touch the operator's tmux), runs the app in a detached session of
//! a known size, types with `send-keys`, reads the screen with `capture-pane`, pastes with
//! `paste-buffer -p` (a bracketed paste) and reads what the app copied through OSC 52 from
//! tmux's paste buffers (`set-clipboard on`). Every wait polls the screen; nothing relies on a
//! fixed sleep.
//!
//! The app and the CLI always run with `--db` in the temporary directory, `HOME` and the XDG
//! directories there too, an empty config file, and no display or SSH variables.
//!
//! tmux is required: CI installs it (`.ci/run`). Without it these tests fail and say so, unless
//! `CROSSTALK_SKIP_TMUX=1` is set, which skips them. The harness is `helpers::tmux`, shared with the
//! other files of `tui/`.

use crate::helpers::tmux;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;
use tmux::*;

// ---------------------------------------------------------------------------------------------

#[test]
fn empty_database_help_then_quit_restores_the_terminal() {
    let Some(t) = Term::new() else { return };
    t.start(120, 40, &[]);
    let s = t.wait_for("No threads yet.");
    assert!(s.contains("Threads"), "{s}");
    t.wait_for("Empty database. Paste an envelope (or press p)");

    // While it runs: alternate screen and mouse reporting are on (the checks after quitting
    // mean something).
    assert_eq!(t.format("#{alternate_on}"), "1");
    assert!(
        t.format("#{mouse_standard_flag}#{mouse_any_flag}")
            .contains('1'),
        "mouse capture is on while the app runs"
    );

    t.type_text("?");
    let s = t.wait_for("Help —");
    assert!(s.contains("Browse"), "help lists the browse keys:\n{s}");
    assert!(has_row(&s, &["y", "copy envelope"]), "{s}");
    assert!(has_row(&s, &["q", "quit"]), "{s}");

    t.keys(&["Escape"]);
    let s = t.wait_gone("Help —");
    assert!(
        s.contains("No threads yet."),
        "help closed, list back:\n{s}"
    );

    t.type_text("q");
    assert_eq!(t.wait_exit(), 0, "q quits with status 0");
    let s = t.screen();
    assert!(
        !s.contains("No threads yet.") && !s.contains("Threads"),
        "the app's screen is gone after quitting:\n{s}"
    );
    assert_eq!(t.format("#{alternate_on}"), "0", "alternate screen left");
    assert_eq!(
        t.format("#{mouse_standard_flag}#{mouse_any_flag}#{mouse_sgr_flag}"),
        "000",
        "mouse reporting switched off"
    );
    assert_eq!(t.format("#{cursor_flag}"), "1", "cursor shown again");
}

#[test]
fn bracketed_paste_of_a_transcript_previews_then_imports() {
    let Some(t) = Term::new() else { return };
    t.start(120, 40, &[]);
    t.wait_for("No threads yet.");

    let transcript = std::fs::read_to_string(manifest(TRANSCRIPT)).unwrap();
    t.paste(&transcript, true);
    let s = t.wait_for("Paste: 3 envelopes");
    assert!(s.contains("Enter imports"), "{s}");
    // One row per envelope, at the line each starts on in the paste.
    for line in ["line 5", "line 15", "line 27"] {
        assert!(
            s.contains(line),
            "preview lists the envelope at {line}:\n{s}"
        );
    }
    // Nothing is imported until Enter.
    assert_eq!(t.cli_json(&["threads"]), serde_json::json!([]));

    t.keys(&["Enter"]);
    let s = t.wait_for("Imported 3, 0 already stored, 0 rejected");
    assert!(!s.contains("Paste: 3 envelopes"), "preview closed:\n{s}");
    assert!(
        has_row(&s, &["naming", "CLAUDE, CHATGPT"]),
        "list row:\n{s}"
    );
    assert!(s.contains("naming — 3 messages"), "tree title:\n{s}");
    assert!(
        has_row(
            &s,
            &["CLAUDE→CHATGPT", "Should the tool be called crosstalk"]
        ),
        "{s}"
    );
    assert!(
        has_row(&s, &["CHATGPT→CLAUDE", "Nobody can pronounce"]),
        "{s}"
    );
    assert!(
        has_row(&s, &["CLAUDE→CHATGPT", "Agreed, crosstalk it is."]),
        "{s}"
    );
    assert!(s.lines().next().unwrap().contains("— 1 thread"), "{s}");

    // The database holds it, read while the app still has it open.
    let (_, show) = t.only_thread();
    assert_eq!(show["context"], "naming");
    assert_eq!(show["messages"].as_array().unwrap().len(), 3);
    let bodies: Vec<&str> = show["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["body"].as_str().unwrap())
        .collect();
    assert!(bodies.contains(&"Agreed, crosstalk it is."), "{bodies:?}");
    for m in show["messages"].as_array().unwrap() {
        assert_eq!(m["diagnostics"], serde_json::json!([]), "clean import: {m}");
    }

    t.type_text("q");
    assert_eq!(t.wait_exit(), 0);
    let (_, show) = t.only_thread();
    assert_eq!(
        show["messages"].as_array().unwrap().len(),
        3,
        "kept after quitting"
    );
}

/// tmux's plain `paste-buffer -p` sends line breaks as CR, as xterm and VTE terminals do in a
/// bracketed paste; the app should read them as line breaks.
#[test]
fn bracketed_paste_with_carriage_returns_imports_cleanly() {
    let Some(t) = Term::new() else { return };
    t.start(120, 40, &[]);
    t.wait_for("No threads yet.");
    let transcript = std::fs::read_to_string(manifest(TRANSCRIPT)).unwrap();
    t.paste(&transcript, false);
    let s = t.wait_for("Paste: 3 envelopes");
    for line in ["line 5", "line 15", "line 27"] {
        assert!(s.contains(line), "envelope at {line}:\n{s}");
    }
    t.keys(&["Enter"]);
    t.wait_for("Imported 3");
    let (_, show) = t.only_thread();
    for m in show["messages"].as_array().unwrap() {
        assert_eq!(m["diagnostics"], serde_json::json!([]), "{m}");
        assert!(!m["body"].as_str().unwrap().contains('\r'), "{m}");
    }
}

/// A terminal without bracketed paste types a paste as keys. Run as commands, a transcript's
/// letters would open replies (`n`, `r`), save drafts and type the rest into them; the burst
/// opens the paste preview instead, as a bracketed paste does, and nothing else happens.
#[test]
fn a_paste_without_bracketed_paste_opens_the_preview_not_commands() {
    let Some(t) = Term::new() else { return };
    t.start(80, 24, &[]);
    t.wait_for("No threads yet.");
    let transcript = std::fs::read_to_string(manifest(TRANSCRIPT)).unwrap();
    t.paste_as_keys(&transcript);
    t.wait_for("Paste: 3 envelopes");
    t.keys(&["Enter"]);
    t.wait_for("Imported 3");
    let (_, show) = t.only_thread();
    assert_eq!(show["messages"].as_array().unwrap().len(), 3, "{show}");
    for m in show["messages"].as_array().unwrap() {
        assert_eq!(m["diagnostics"], serde_json::json!([]), "{m}");
    }
    let queue = t.cli_json(&["queue"]);
    let drafts = queue["sections"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["section"] == "drafts"))
        .map(|s| s["count"].clone());
    assert_eq!(
        drafts,
        Some(serde_json::json!(0)),
        "no draft was made: {queue}"
    );
    // Keys a person types are still keys.
    t.keys(&["?"]);
    t.wait_for("Help");
}

/// A text whose lines end in CR LF (copied on Windows, or from a mail) arrives through a
/// bracketed paste as CR CR: it stores the body its sender wrote, not one with a blank line
/// before every line, and is the same message as the copy imported from a file.
#[test]
fn a_crlf_text_pasted_stores_the_body_its_sender_wrote() {
    let Some(t) = Term::new() else { return };
    let lf = "[[CLAUDE→CHATGPT v1]]\nuser: kalle\nsession: 2026-12-01T21Z abc\n\
thread: 01KBBQ0000000000000000CR01\nmessage: 01KBBQ0000000000000000CR02\ncontext: line ends\n\
intent: REQUEST\nbody: |\n  First line.\n\n  Third line, after a blank one.\nsig: none\n[[END]]\n";
    t.start(120, 40, &[]);
    t.wait_for("No threads yet.");
    t.paste(&lf.replace('\n', "\r\n"), false);
    t.wait_for("Paste: 1 envelope");
    t.keys(&["Enter"]);
    t.wait_for("Imported 1");
    let (_, show) = t.only_thread();
    let m = &show["messages"][0];
    assert_eq!(
        m["body"], "First line.\n\nThird line, after a blank one.",
        "{m}"
    );
    assert_eq!(m["diagnostics"], serde_json::json!([]), "{m}");
    // The same envelope from a file with LF line ends is the message stored, not a conflict.
    let file = t.path("lf.crosstalk");
    std::fs::write(&file, lf).unwrap();
    let report = t.cli_json(&["import", file.to_str().unwrap()]);
    assert_eq!(report[0]["items"][0]["outcome"], "duplicate", "{report}");
    t.keys(&["q"]);
    assert_eq!(t.wait_exit(), 0);
}

/// The same CR line breaks, pasted into the composer's body, should stay line breaks.
#[test]
fn bracketed_paste_into_the_body_keeps_line_breaks() {
    let Some(t) = Term::new() else { return };
    t.import(&[&manifest("assets/examples/v10-question.crosstalk")]);
    t.start(120, 40, &[]);
    t.wait_for("naming the project");
    t.type_text("r");
    t.wait_for("Reply to");
    t.paste("line one\nline two\n", false);
    let s = t.wait_for("line one");
    assert!(
        !s.contains("line oneline two") && has_row(&s, &["  line two"]),
        "two body lines expected:\n{s}"
    );
    assert!(!s.contains("control character"), "{s}");
}

#[test]
fn copy_envelope_and_thread_go_out_via_osc52() {
    let Some(t) = Term::new() else { return };
    t.import(&[&manifest(TRANSCRIPT)]);
    let (thread, show) = t.only_thread();
    let ids = message_ids(&show);
    let export = t.cli(&["export", &thread]);

    t.start(120, 40, &[]);
    t.wait_for("naming — 3 messages");
    assert_eq!(t.buffer(), None, "no paste buffer before any copy");
    t.keys(&["Enter"]);
    // The last message is selected when a thread opens.
    t.wait_until("the last message in the inspector", |s| {
        has_row(s, &["message", &ids[2]])
    });

    t.type_text("y");
    let copied = t.wait_buffer("one envelope", |b| b.contains("[[END]]"));
    assert!(copied.starts_with("[[CLAUDE→CHATGPT v1]]\n"), "{copied:?}");
    assert!(copied.ends_with("[[END]]\n"), "{copied:?}");
    assert_eq!(copied.matches("[[END]]").count(), 1, "{copied:?}");
    assert!(
        copied.contains(&format!("\nmessage: {}\n", ids[2])),
        "{copied:?}"
    );
    assert!(
        copied.contains("\n  Agreed, crosstalk it is.\n"),
        "{copied:?}"
    );
    assert!(
        export.contains(copied.trim_end()),
        "the copy is the envelope's canonical text:\n{copied}\n--- export ---\n{export}"
    );
    let s = t.wait_for("via OSC 52");
    assert!(
        status_line(&s).contains(&format!(
            "sent {} bytes to the terminal via OSC 52",
            copied.len()
        )),
        "status: {}",
        status_line(&s)
    );

    t.type_text("Y");
    let all = t.wait_buffer("three envelopes", |b| b.matches("[[END]]").count() == 3);
    assert_eq!(
        all, export,
        "Y copies the thread as `crosstalk export` writes it"
    );
    let s = t.wait_for("(3 envelopes;");
    assert!(
        status_line(&s).contains("via OSC 52"),
        "{}",
        status_line(&s)
    );
    assert!(s.contains("not recorded as relayed"), "{s}");
}

#[test]
fn reply_is_saved_copied_and_awaits_an_answer() {
    let Some(t) = Term::new() else { return };
    t.import(&[&manifest(TRANSCRIPT)]);
    let (thread, show) = t.only_thread();
    let ids = message_ids(&show);
    let original = &ids[0];
    assert_eq!(show["messages"][0]["from"], "CLAUDE");
    assert_eq!(show["messages"][0]["to"], "CHATGPT");
    std::fs::write(
        t.path("config.toml"),
        "[operator]\naddresses = [\"kalle\"]\n",
    )
    .unwrap();

    t.start(120, 40, &[]);
    t.wait_for("naming — 3 messages");
    t.keys(&["Enter"]);
    t.type_text("g");
    t.wait_until("the first message in the inspector", |s| {
        has_row(s, &["message", original]) && has_row(s, &["intent", "REQUEST"])
    });

    t.type_text("r");
    let s = t.wait_for("Reply to");
    assert!(s.contains(&format!("parent: {original}")), "{s}");
    // The desk answers CLAUDE in its own name, not as CHATGPT.
    assert!(s.contains("[[kalle→CLAUDE v1]]"), "{s}");
    t.type_text("Tabs win, clearly.");
    t.wait_until("the typed body in the preview", |s| {
        s.contains("  Tabs win, clearly.")
    });

    t.keys(&["C-y"]);
    let copied = t.wait_buffer("the reply", |b| b.contains("Tabs win, clearly."));
    assert!(copied.starts_with("[[kalle→CLAUDE v1]]\n"), "{copied:?}");
    assert!(
        copied.contains(&format!("\nparent: {original}\n")),
        "{copied:?}"
    );
    assert!(
        copied.contains(&format!("\nthread: {thread}\n")),
        "{copied:?}"
    );
    assert!(copied.contains("\n  Tabs win, clearly.\n"), "{copied:?}");
    assert!(copied.ends_with("[[END]]\n"), "{copied:?}");
    let reply_id = copied
        .lines()
        .find_map(|l| l.strip_prefix("message: "))
        .expect("the reply has a message id")
        .to_string();
    assert_ne!(&reply_id, original);

    let s = t.wait_for("awaits no reply");
    assert!(
        status_line(&s).contains("via OSC 52"),
        "{}",
        status_line(&s)
    );
    assert!(s.contains("naming — 4 messages"), "{s}");
    assert!(
        has_row(&s, &["status", "sent (written here)"]),
        "the inspector shows the copied reply:\n{s}"
    );
    assert!(
        has_row(&s, &["kalle→CLAUDE", "Tabs win, clearly."]),
        "the tree shows the reply:\n{s}"
    );

    t.type_text("q");
    assert_eq!(t.wait_exit(), 0);
    let show = t.cli_json(&["show", &thread]);
    let reply = show["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["message"] == reply_id.as_str())
        .unwrap_or_else(|| panic!("reply {reply_id} stored: {show}"));
    // Copied out, and awaiting no reply: it answers.
    assert_eq!(reply["status"], "sent", "{reply}");
    assert_eq!(reply["parent"], original.as_str(), "{reply}");
    assert_eq!(reply["from"], "kalle");
    assert_eq!(reply["to"], "CLAUDE");
    assert_eq!(reply["body"], "Tabs win, clearly.");
}

/// A reply drafted by `crosstalk reply` is a draft, not yet a message: the list marks it ✎,
/// `D` lists it, Enter resumes it in the composer, and C-y copies it and files it: from then on
/// the inspector's `status` row says it was sent, and (a RESPOND) that it awaits no answer.
#[test]
fn a_cli_draft_resumes_in_the_composer_and_is_sent_once_copied() {
    let Some(t) = Term::new() else { return };
    t.import(&[&manifest("assets/examples/v10-question.crosstalk")]);
    let (_, show) = t.only_thread();
    let original = message_ids(&show).remove(0);
    t.cli(&["reply", &original, "--body", "Draft from the CLI."]);
    t.start(120, 40, &[]);
    let s = t.wait_for("naming the project");
    assert!(has_row(&s, &["✎", "naming the project"]), "{s}");
    assert!(
        !s.contains("Draft from the CLI."),
        "a draft is not a message of the tree:\n{s}"
    );
    t.type_text("D");
    t.wait_for("Draft from the CLI.");
    t.keys(&["Enter"]);
    t.wait_for("Reply to");
    t.keys(&["C-y"]);
    let s = t.wait_for("awaits no reply");
    // A RESPOND awaits nothing by the intent registry: the tree does not mark it.
    assert!(
        !has_row(&s, &["⏳", "Draft from the CLI."]),
        "the tree marks it:\n{s}"
    );
    t.keys(&["Tab"]);
    let s = t.wait_until("the inspector's status row", |s| {
        has_row(s, &["status", "sent (written here)"])
    });
    assert!(s.contains("Draft from the CLI."), "{s}");
}

#[test]
fn drafts_survive_quitting_and_sigkill() {
    let Some(t) = Term::new() else { return };
    t.import(&[&manifest("assets/examples/v10-question.crosstalk")]);
    let (_, show) = t.only_thread();
    let original = message_ids(&show).remove(0);

    t.start(120, 40, &[]);
    t.wait_for("naming the project");
    t.type_text("r");
    t.wait_for("Reply to");
    t.type_text("half a thought");
    t.wait_for("  half a thought");
    t.keys(&["Escape"]);
    let s = t.wait_for("Draft kept");
    assert!(s.contains("Threads"), "back on the browse screen:\n{s}");
    t.type_text("q");
    assert_eq!(t.wait_exit(), 0);

    // A new run on the same database: the draft is announced, and `r` on the same message
    // resumes it.
    t.restart(&[]);
    t.wait_for("1 draft(s) kept from before");
    t.type_text("r");
    let s = t.wait_for("Draft resumed");
    assert!(s.contains("half a thought"), "{s}");
    assert!(s.contains(&format!("parent: {original}")), "{s}");

    // Typing goes on; every keystroke is saved, so SIGKILL loses nothing shown on screen.
    t.type_text(", finished");
    t.wait_for("half a thought, finished");
    let pid = t.app_pid();
    let killed = Command::new("sh")
        .args(["-c", &format!("kill -KILL {pid}")])
        .status()
        .expect("running kill");
    assert!(killed.success());
    assert_eq!(t.wait_exit(), 128 + 9, "the app died of SIGKILL");

    t.restart(&[]);
    t.wait_for("1 draft(s) kept from before");
    t.type_text("D");
    let s = t.wait_for("Drafts —");
    assert!(
        has_row(&s, &["half a thought, finished"]),
        "the drafts list shows the text typed before the kill:\n{s}"
    );
    t.keys(&["Enter"]);
    let s = t.wait_for("Draft resumed");
    assert!(s.contains("  half a thought, finished"), "{s}");
    assert!(s.contains(&format!("parent: {original}")), "{s}");
    t.keys(&["Escape"]);
    t.wait_for("Draft kept");
    t.type_text("q");
    assert_eq!(t.wait_exit(), 0);
}

#[test]
fn escape_sequences_in_a_body_are_shown_not_obeyed() {
    let Some(t) = Term::new() else { return };
    // Each line ends in a hard break (`\`): the fields view renders the body as markdown,
    // which would join the lines of one paragraph.
    let hostile = "[[MALLORY→CLAUDE v1]]\n\
        user: mallory\n\
        session: 2025-10-09T16Z evil01\n\
        context: hostile body\n\
        intent: REQUEST\n\
        body: |\n  \
        title \x1b]0;PWNED\x07 set\\\n  \
        clear \x1b[2J\x1b[H screen \x1b[31mRED\x1b[0m\\\n  \
        clip \x1b]52;c;UFdORUQtQ0xJUA==\x07 board\\\n  \
        bidi \u{202E}gnp.exe\\\n  \
        bell \x07 done\n\
        sig: none\n\
        [[END]]\n";
    let file = t.path("hostile.crosstalk");
    std::fs::write(&file, hostile).unwrap();
    t.import(&[&file]);

    t.start(120, 40, &[]);
    t.wait_for("hostile body");
    // run.sh set this title before starting the app: titles from the pane do reach tmux.
    assert_eq!(t.format("#{pane_title}"), "crosstalk-test");

    t.keys(&["Enter"]);
    let check = |view: &str| {
        let s = t.wait_for("bidi ⟨U+202E⟩gnp.exe");
        assert!(s.contains("title ␛]0;PWNED␇ set"), "{view}:\n{s}");
        assert!(
            s.contains("clear ␛[2J␛[H screen ␛[31mRED␛[0m"),
            "{view}:\n{s}"
        );
        assert!(
            s.contains("clip ␛]52;c;UFdORUQtQ0xJUA==␇ board"),
            "{view}:\n{s}"
        );
        assert!(s.contains("bell ␇ done"), "{view}:\n{s}");
        // The frame is intact: title bar, pane borders, hints.
        let rows: Vec<&str> = s.lines().collect();
        assert!(rows[0].contains("crosstalk —"), "{view}:\n{s}");
        assert!(
            rows[1].starts_with("┌ Threads") || rows[1].starts_with("┌▶ Threads"),
            "{view}:\n{s}"
        );
        assert!(
            rows[37].starts_with('└') && rows[37].ends_with('┘'),
            "{view}:\n{s}"
        );
        assert!(rows[38].contains("help"), "{view}:\n{s}");
        assert!(has_row(&s, &["hostile body", "MALLORY"]), "{view}:\n{s}");
        assert_eq!(t.format("#{pane_title}"), "crosstalk-test", "{view}");
        assert!(!t.format("#{window_name}").contains("PWNED"), "{view}");
        assert_eq!(
            t.buffer_names(),
            Vec::<String>::new(),
            "{view}: the body's OSC 52 set no tmux buffer"
        );
    };
    check("fields");
    assert!(t.screen().contains("Envelope — fields"));
    t.type_text("v");
    t.wait_for("Envelope — as received");
    check("as received");
    t.type_text("v");
    t.wait_for("Envelope — canonical");
    check("canonical");
}

/// `--demo` runs on a database made at start-up: its seeded draft is not one "kept from
/// before", as it is after a real database is opened again.
#[test]
fn the_demo_does_not_claim_drafts_kept_from_before() {
    let Some(t) = Term::new() else { return };
    t.start(100, 30, &["--demo"]);
    let s = t.wait_for("draft(s) not sent yet: D lists them.");
    assert!(!s.contains("kept from before"), "{s}");
    assert!(s.contains("demo (throwaway database)"), "{s}");
}

#[test]
fn too_small_then_big_enough_again() {
    let Some(t) = Term::new() else { return };
    t.start(120, 40, &["--demo"]);
    t.wait_for("Kyoto trip");
    t.tmux(&["resize-window", "-t", "ct", "-x", "50", "-y", "15"]);
    let s = t.wait_for("Terminal too small");
    assert!(s.contains("50×15"), "{s}");
    assert!(!s.contains("Threads"), "{s}");
    t.tmux(&["resize-window", "-t", "ct", "-x", "80", "-y", "24"]);
    let s = t.wait_until("the app drawn at 80×24", |s| {
        s.contains("Threads") && !s.contains("Terminal too small")
    });
    assert!(s.contains("Kyoto trip"), "{s}");
    assert_eq!(t.format("#{pane_width}x#{pane_height}"), "80x24");
}

/// The real terminal shrinks (120×40 to 80×24, as when a window is tiled) with a thread near
/// the end of the list and the last message of a long thread selected: both panes scroll to
/// keep them in sight at once, without a key.
#[test]
fn a_resize_keeps_the_selected_thread_and_message_in_sight() {
    let Some(t) = Term::new() else { return };
    let g = crosstalk::ids::IdGenerator::new();
    let env = |thread: &str, parent: Option<&str>, id: &str, context: &str, body: &str| {
        let parent = parent.map_or(String::new(), |p| format!("parent: {p}\n"));
        format!(
            "[[CLAUDE→CHATGPT v1]]\nuser: kalle\nthread: {thread}\n{parent}message: {id}\n\
             context: {context}\nintent: REQUEST\nbody: |\n  {body}\nsig: none\n[[END]]\n"
        )
    };
    let (long, mut parent, mut text) = (g.next_id(), None::<String>, String::new());
    for i in 0..40 {
        let id = g.next_id();
        let body = format!("message {i}");
        text.push_str(&env(&long, parent.as_deref(), &id, "long thread", &body));
        parent = Some(id);
    }
    for i in 0..40 {
        let (thread, id) = (g.next_id(), g.next_id());
        text.push_str(&env(
            &thread,
            None,
            &id,
            &format!("short thread {i}"),
            "one",
        ));
    }
    let file = t.path("threads.crosstalk");
    std::fs::write(&file, text).unwrap();
    t.import(&[&file]);
    t.start(120, 40, &[]);
    t.wait_for("short thread 39");
    // The long thread is the oldest, the list's last row; Enter opens it on its last message.
    t.type_text("G");
    t.keys(&["Enter"]);
    t.wait_until("the long thread open", |s| {
        has_row(s, &["REQUEST", "message 39"])
    });
    t.tmux(&["resize-window", "-t", "ct", "-x", "80", "-y", "24"]);
    t.wait_until("the app drawn at 80×24", |s| {
        s.lines().count() <= 24 && s.contains("Threads")
    });
    let s = t.wait_until("the selection in sight at 80×24", |s| {
        has_row(s, &["REQUEST", "message 39"]) && has_row(s, &["long thread", "40"])
    });
    assert!(!has_row(&s, &["REQUEST", "message 20"]), "{s}");
}

#[test]
fn a_body_written_small_fills_its_box_once_the_terminal_grows() {
    let Some(t) = Term::new() else { return };
    t.start(80, 24, &[]);
    t.wait_for("No threads yet.");
    t.type_text("n");
    t.wait_for("New envelope");
    let body: Vec<String> = (1..=20).map(|i| format!("body line {i:02}")).collect();
    t.paste(&body.join("\n"), true);
    // The body box's rows (the preview beside it shows the body too).
    let body_box = |s: &str| -> Vec<String> {
        let rows: Vec<&str> = s.lines().collect();
        let Some(top) = rows.iter().position(|r| r.contains("body (M-e")) else {
            return Vec::new();
        };
        (rows[top + 1..].iter())
            .take_while(|r| !r.starts_with('└'))
            .map(|r| r.trim_matches(|c| c == '│' || c == ' ').to_string())
            .collect()
    };
    let s = t.wait_for("body line 20");
    let small = body_box(&s);
    assert_eq!(small.last().unwrap(), "body line 20", "{s}");
    assert!(!small.contains(&"body line 01".to_string()), "{s}");
    t.tmux(&["resize-window", "-t", "ct", "-x", "80", "-y", "50"]);
    // The taller box shows the lines above the cursor, not empty rows below the last line.
    let s = t.wait_until("the composer drawn at 80×50", |s| {
        body_box(s).len() > small.len() + 10
    });
    let tall = body_box(&s);
    assert_eq!(tall.last().unwrap(), "body line 20", "{s}");
    let first = &tall[0];
    let shown = tall.len().min(20);
    assert_eq!(first, &format!("body line {:02}", 21 - shown), "{s}");
    // Typing goes on where it was: at the end of the last line.
    t.type_text(" END");
    t.wait_for("body line 20 END");
}

#[test]
fn demo_at_80x24_draws_every_pane_cleanly() {
    let Some(t) = Term::new() else { return };
    t.start(80, 24, &["--demo"]);
    let s = t.wait_until("the demo's panes", |s| {
        s.contains("Kyoto trip, 10–14 December — 5 messages") && s.contains("Envelope — fields")
    });
    let rows: Vec<&str> = s.lines().collect();
    assert!(rows.len() <= 24, "{s}");
    assert!(
        rows[0].starts_with(" crosstalk — demo (throwaway database) — 7 threads"),
        "{s}"
    );
    assert!(
        rows[1].starts_with("┌▶ Threads") && rows[1].ends_with('┐'),
        "{s}"
    );
    // Every pane row is boxed at both edges: nothing drawn past the right border, no stray
    // wide character pushing a row out of line.
    for (i, row) in rows.iter().enumerate().take(22).skip(2) {
        let first = row.chars().next().unwrap_or(' ');
        let last = row.chars().last().unwrap_or(' ');
        assert!(
            matches!(first, '│' | '└') && matches!(last, '│' | '┐' | '┘'),
            "row {i} is not boxed: {row:?}\n{s}"
        );
    }
    assert!(rows[21].starts_with('└') && rows[21].ends_with('┘'), "{s}");
    for ctx in [
        "Kyoto trip",
        "signing key",
        "ingest worker",
        "notes app",
        "flaky CI test",
        "webhook relay",
    ] {
        assert!(s.contains(ctx), "the list shows {ctx}:\n{s}");
    }
    assert!(has_row(&s, &["REQUEST", "Kalle and his"]), "tree:\n{s}");
    // The short inspector shows the body first, the headers folded to one line.
    assert!(
        has_row(&s, &["▸ 7 headers (H)", "REQUEST", "received"]),
        "inspector:\n{s}"
    );
    assert!(has_row(&s, &["The forecast for 12 December"]), "{s}");
    // The thread list is focused: its keys are hinted, with the next thing to do.
    assert!(
        rows[22].contains("help") && rows[22].contains("open") && rows[22].contains("next to do"),
        "hint line: {:?}",
        rows[22]
    );
}

/// The footer hint line should show whole hints: as many as fit, none cut in the middle.
#[test]
fn hint_line_shows_whole_hints() {
    let Some(t) = Term::new() else { return };
    // Every label the browse footer has, for any pane and selection.
    let descriptions = [
        "open",
        "reply",
        "new",
        "copy",
        "paste",
        "search",
        "filter",
        "help",
        "quit",
        "next to do",
        "by state",
        "archive",
        "fold",
        "parent",
        "inspector",
        "raw / canonical",
        "headers",
        "pipe",
        "relay it",
        "answer it",
        "put up the next",
        "move ≈ reply",
        "poll panel",
    ];
    for (w, h) in [(120u16, 40u16), (80, 24)] {
        let (ws, hs) = (w.to_string(), h.to_string());
        if t.runs.get() == 0 {
            t.start(w, h, &["--demo"]);
        } else {
            t.tmux(&["resize-window", "-t", "ct", "-x", &ws, "-y", &hs]);
        }
        let s = t.wait_until("the demo at this size", |s| {
            s.lines().count() >= h as usize - 1 && s.contains("Threads")
        });
        let hints = s.lines().nth(h as usize - 2).unwrap().trim_end();
        assert!(
            descriptions.iter().any(|d| hints.ends_with(d)),
            "{w}×{h}: the hint line ends in a cut hint: {hints:?}"
        );
    }
}

#[test]
fn search_finds_a_word_and_opens_its_thread() {
    let Some(t) = Term::new() else { return };
    t.start(120, 40, &["--demo"]);
    let s = t.wait_for("Kyoto trip, 10–14 December — 5 messages");
    assert!(!s.contains("flaky CI test — "), "{s}");
    t.type_text("/");
    t.wait_for("Search — Enter opens");
    // Only the flaky-test conversation mentions bisecting.
    t.type_text("bisect");
    let s = t.wait_until("hits for bisect", |s| {
        s.contains("/ bisect") && s.contains(" matches")
    });
    assert!(
        has_row(&s, &["flaky CI test — "]),
        "the hit names its thread:\n{s}"
    );
    assert!(!s.contains("  0 of "), "{s}");
    t.keys(&["Enter"]);
    let s = t.wait_for("flaky CI test — 5 messages");
    assert!(!s.contains("Search — Enter opens"), "search closed:\n{s}");
}

#[test]
fn a_click_in_the_list_opens_that_thread() {
    let Some(t) = Term::new() else { return };
    t.start(120, 40, &["--demo"]);
    let s = t.wait_for("Kyoto trip, 10–14 December — 5 messages");
    let row = s
        .lines()
        .position(|l| l.contains("signing key and c"))
        .expect("the signing-key thread is listed");
    // SGR mouse report (1-based column and row): left button down, then up.
    let at = row + 1;
    t.send_bytes(format!("\x1b[<0;5;{at}M\x1b[<0;5;{at}m").as_bytes());
    t.wait_for("signing key and calendar consent — 2 messages");
}

/// The permission bits of `path`.
fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// Text that arrives faster than the app reads it (a long `send-keys`, or a paste from a
/// terminal without bracketed paste, which comes as keys) is taken whole: none of it waits in
/// the terminal for the next key, where a kill would lose it. The terminal hands it over in
/// reads of about a kilobyte; the text is three of them.
#[test]
fn a_burst_of_typed_text_is_taken_whole_without_another_key() {
    let Some(t) = Term::new() else { return };
    t.start(100, 30, &[]);
    t.wait_for("No threads yet.");
    t.type_text("n");
    t.wait_for("New envelope");
    let burst = format!("{}TAIL", "y".repeat(3000));
    t.type_text(&burst);
    t.wait_for("yyyTAIL");
    let db = rusqlite::Connection::open(&t.db).unwrap();
    let saved = || -> String {
        db.query_row("SELECT form FROM drafts", [], |r| r.get(0))
            .unwrap_or_default()
    };
    let start = Instant::now();
    while !saved().contains(&burst) {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the draft holds the whole burst: {} bytes saved",
            saved().len()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    t.keys(&["Escape"]);
    t.wait_for("Draft kept");
}

#[test]
fn the_composer_keeps_typing_while_another_process_holds_the_write_lock() {
    let Some(t) = Term::new() else { return };
    t.start(140, 40, &[]);
    t.wait_for("No threads yet.");
    // This test process plays the long import: it holds the write lock until told.
    let import = rusqlite::Connection::open(&t.db).unwrap();
    import.execute_batch("BEGIN IMMEDIATE").unwrap();
    t.type_text("n");
    t.wait_for("New envelope");
    let start = Instant::now();
    t.type_text("typed during an import");
    let s = t.wait_for("typed during an import");
    // A key used to wait out SQLite's 60 s busy timeout; the text shows at once now.
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "typing took {:?} with the database locked",
        start.elapsed()
    );
    assert!(
        s.contains("draft not saved yet: database busy"),
        "the composer says the draft waits:\n{s}"
    );
    assert!(
        status_line(&s).starts_with("Draft not saved yet: database busy"),
        "{s}"
    );
    import.execute_batch("COMMIT").unwrap();
    let s = t.wait_for("(draft saved");
    assert!(!s.contains("not saved yet"), "{s}");
    let form: String = import
        .query_row("SELECT form FROM drafts", [], |r| r.get(0))
        .unwrap();
    assert!(form.contains("typed during an import"), "{form}");
    t.keys(&["Escape"]);
    t.wait_for("Draft kept");

    // Locked again, and the operator quits with a draft the database has not taken: after
    // a bounded wait it goes to a file beside the database, and the app says where.
    t.keys(&["D"]);
    t.wait_for("typed during an import");
    t.keys(&["Enter"]);
    t.wait_for("Draft resumed");
    import.execute_batch("BEGIN IMMEDIATE").unwrap();
    t.type_text(", then quit");
    t.wait_for("draft not saved yet: database busy");
    t.keys(&["Escape"]);
    t.wait_for("Draft not saved yet");
    t.type_text("q");
    assert_eq!(t.wait_exit(), 0);
    // Joined: the note is longer than a row.
    let s = t.tmux(&["capture-pane", "-p", "-J", "-t", "ct"]);
    let line = s
        .lines()
        .find(|l| l.contains("not saved in the database"))
        .unwrap_or_else(|| panic!("the app says where the draft went:\n{s}"));
    let files: Vec<PathBuf> = std::fs::read_dir(t.db.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_str().unwrap().contains("crosstalk-draft-"))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let name = files[0].file_name().unwrap().to_str().unwrap();
    assert!(line.contains(name), "{line}");
    let text = std::fs::read_to_string(&files[0]).unwrap();
    assert!(
        text.contains("  typed during an import, then quit"),
        "{text}"
    );
    assert_eq!(mode(&files[0]), 0o600);
    import.execute_batch("ROLLBACK").unwrap();
}

/// A tmpfs mounted for one test, unmounted when dropped.
struct Mount(PathBuf);

impl Mount {
    /// Mounts a `size` tmpfs at `dir`; why not, when it cannot (not root, no mount).
    fn tmpfs(dir: &Path, size: &str) -> Result<Mount, String> {
        std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size},mode=0700")])
            .arg("tmpfs")
            .arg(dir)
            .output()
            .map_err(|e| format!("cannot run mount: {e}"))?;
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).trim().to_string());
        }
        Ok(Mount(dir.to_path_buf()))
    }

    /// Writes a file until the file system is full.
    fn fill(&self) {
        use std::io::Write as _;
        let mut f = std::fs::File::create(self.0.join("filler")).unwrap();
        for size in [65536, 4096, 1] {
            let block = vec![0u8; size];
            while f.write_all(&block).and_then(|()| f.sync_all()).is_ok() {}
        }
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

#[test]
fn a_paste_on_a_full_disk_is_previewed_and_written_to_a_file() {
    let Some(mut t) = Term::new() else { return };
    let mount = match Mount::tmpfs(&t.path("full"), "4m") {
        Ok(m) => m,
        Err(why) => {
            eprintln!(
                "skipping the full-disk flow: cannot mount a small tmpfs to fill ({why}); it runs as root, as in CI"
            );
            return;
        }
    };
    t.db = mount.0.join("crosstalk.db");
    let spare = t.path("spare-tmp");
    std::fs::create_dir(&spare).unwrap();
    t.app_env
        .push(("TMPDIR".into(), spare.to_str().unwrap().into()));
    t.start(120, 40, &[]);
    t.wait_for("No threads yet.");
    mount.fill();

    let transcript = std::fs::read_to_string(manifest(TRANSCRIPT)).unwrap();
    t.paste(&transcript, true);
    let s = t.wait_for("NOT SAVED");
    assert!(s.contains("Paste: 3 envelopes"), "still previewed:\n{s}");
    assert!(s.contains("Not saved: disk full"), "{s}");
    assert!(
        status_line(&s).starts_with("Paste not saved: disk full"),
        "{s}"
    );
    // w: no room beside the database, so the temporary folder takes it.
    t.type_text("w");
    let s = t.wait_for("Paste written to ");
    let files: Vec<PathBuf> = std::fs::read_dir(&spare)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let file = &files[0];
    assert!(
        s.contains(file.to_str().unwrap()),
        "the status names {}:\n{s}",
        file.display()
    );
    assert!(
        file.file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with("crosstalk-paste-")
    );
    assert_eq!(std::fs::read_to_string(file).unwrap(), transcript);
    assert_eq!(mode(file), 0o600);
    t.keys(&["Escape"]);
    t.wait_for("Paste not in the database; it is in");
    t.type_text("q");
    assert_eq!(t.wait_exit(), 0);
}

#[test]
fn the_editor_gets_a_file_only_the_operator_can_read() {
    let Some(mut t) = Term::new() else { return };
    let seen = t.path("editor-saw");
    let editor = t.path("editor.sh");
    std::fs::write(
        &editor,
        format!(
            "#!/bin/sh\nstat -c %a \"$1\" > {out}\necho \"$1\" >> {out}\nprintf 'edited in the editor\\n' > \"$1\"\n",
            out = sh_quote(seen.to_str().unwrap())
        ),
    )
    .unwrap();
    std::fs::set_permissions(&editor, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    t.app_env
        .push(("EDITOR".into(), editor.to_str().unwrap().into()));
    t.start(120, 40, &[]);
    t.wait_for("No threads yet.");
    t.type_text("n");
    t.wait_for("New envelope");
    t.keys(&["M-e"]);
    t.wait_for("edited in the editor");
    let report = std::fs::read_to_string(&seen).unwrap();
    let mut lines = report.lines();
    assert_eq!(lines.next(), Some("600"), "{report}");
    let path = Path::new(lines.next().unwrap());
    assert!(
        !path.exists(),
        "{} is removed after the edit",
        path.display()
    );
    t.keys(&["Escape"]);
    t.wait_for("Draft kept");
    t.type_text("q");
    assert_eq!(t.wait_exit(), 0);
}

/// `|` runs a command on the real terminal with the envelope on its input; its output stays
/// until Enter, and the app comes back with the exit status.
#[test]
fn pipe_runs_a_command_on_the_terminal_with_the_envelope_on_its_input() {
    let Some(t) = Term::new() else { return };
    let out = t.path("piped.txt");
    t.start(80, 24, &["--demo"]);
    t.wait_for("Kyoto trip");
    t.keys(&["Enter"]);
    t.wait_for("▶ Kyoto trip");
    t.type_text("|");
    t.wait_for(":pipe ");
    t.type_text(&format!(
        "tee {} | grep -c END; exit 4",
        sh_quote(out.to_str().unwrap())
    ));
    t.keys(&["Enter"]);
    // The command's output on the plain terminal, then the prompt to come back.
    let s = t.wait_for("Press Enter to return to crosstalk");
    assert!(s.contains("exited with status 4]"), "{s}");
    assert!(has_row(&s, &["1"]), "grep counted one envelope:\n{s}");
    let piped = std::fs::read_to_string(&out).unwrap();
    assert!(
        piped.starts_with("[[") && piped.trim_end().ends_with("[[END]]"),
        "{piped}"
    );
    t.keys(&["Enter"]);
    let s = t.wait_for("Threads");
    assert!(status_line(&s).contains("exited with status 4"), "{s}");

    t.type_text("q");
    assert_eq!(t.wait_exit(), 0);
}

/// A piped command that never ends: C-c ends the command, not the app, which comes back
/// with the command's ending on its status line and goes on taking keys.
#[test]
fn ctrl_c_ends_a_piped_command_not_the_app() {
    let Some(t) = Term::new() else { return };
    t.start(80, 24, &["--demo"]);
    t.wait_for("Kyoto trip");
    t.type_text("|");
    t.wait_for(":pipe ");
    t.type_text("echo started; sleep 100000");
    t.keys(&["Enter"]);
    t.wait_for("started");
    t.keys(&["C-c"]);
    let s = t.wait_for("Press Enter to return to crosstalk");
    assert!(s.contains("was ended by a signal"), "{s}");
    t.keys(&["Enter"]);
    let s = t.wait_for("Threads");
    assert!(status_line(&s).contains("ended by a signal"), "{s}");
    t.type_text("?");
    t.wait_for("Help — keys in force");
}

/// In the composer of the real terminal, C-_ (the byte 0x1F, as terminals send C-/) and C-z
/// undo the last change — a word typed — and C-r redoes it.
#[test]
fn the_composer_undoes_with_the_keys_terminals_send() {
    let Some(t) = Term::new() else { return };
    t.start(80, 24, &["--demo"]);
    t.wait_for("Kyoto trip");
    t.type_text("n");
    t.wait_for("New envelope");
    t.type_text("xyzzy plugh");
    t.wait_for("xyzzy plugh");
    // Undo goes by word: the last word typed, then the one before.
    t.send_bytes(&[0x1f]);
    t.wait_until("C-_ undid the last word", |s| {
        s.contains("xyzzy") && !s.contains("plugh")
    });
    t.keys(&["C-z"]);
    t.wait_until("C-z undid another", |s| !s.contains("xyzzy"));
    t.keys(&["C-r"]);
    t.wait_until("C-r redid it", |s| {
        s.contains("xyzzy") && !s.contains("plugh")
    });
}

/// `X` on the list asks what goes; Esc keeps the thread, `y` erases it, and the CLI on the
/// same database agrees; `:export-all` writes the backup in the format its name asks for.
#[test]
fn erase_asks_then_erases_and_export_all_writes_every_thread() {
    let Some(t) = Term::new() else { return };
    t.import(&[
        &manifest("assets/examples/v10-question.crosstalk"),
        &manifest("assets/examples/v11-request.crosstalk"),
    ]);
    let before = t.cli_json(&["threads"]).as_array().unwrap().len();
    assert_eq!(before, 2);
    t.start(100, 30, &[]);
    t.wait_for("Threads");
    t.type_text(":export-all ~/backup.json");
    t.keys(&["Enter"]);
    let s = t.wait_for("Wrote 2 threads");
    assert!(status_line(&s).contains("as json"), "{s}");
    let backup = std::fs::read_to_string(t.path("home/backup.json")).unwrap();
    let v: Value = serde_json::from_str(&backup).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 2);

    t.type_text("X");
    t.wait_for("Erase for good?");
    t.keys(&["Escape"]);
    t.wait_for("Nothing erased.");
    assert_eq!(t.cli_json(&["threads"]).as_array().unwrap().len(), 2);
    t.type_text("X");
    t.wait_for("Erase for good?");
    t.type_text("y");
    let s = t.wait_for("Erased:");
    assert!(status_line(&s).contains("1 thread"), "{s}");
    assert_eq!(t.cli_json(&["threads"]).as_array().unwrap().len(), 1);
    t.type_text("q");
    assert_eq!(t.wait_exit(), 0);
}

/// SIGTERM (a `kill`, a shutdown) and SIGHUP (the SSH connection dropped) end the app the way
/// `q` does: the draft typed is saved, and the terminal gets its screen, mouse and cursor
/// back. Killed by the default action, the shell's prompt landed on the app's screen with
/// mouse reports going to it.
#[test]
fn sigterm_and_sighup_save_the_draft_and_give_the_terminal_back() {
    let Some(t) = Term::new() else { return };
    t.import(&[&manifest("assets/examples/v10-question.crosstalk")]);
    for (i, (signal, number)) in [("TERM", 15), ("HUP", 1)].into_iter().enumerate() {
        if i == 0 {
            t.start(120, 40, &[]);
        } else {
            t.restart(&[]);
        }
        t.wait_for("naming the project");
        t.type_text("r");
        t.wait_for("Reply to");
        let text = format!("typed before SIG{signal}");
        t.type_text(&text);
        t.wait_for(&text);
        assert_eq!(t.format("#{alternate_on}"), "1");
        let pid = t.app_pid();
        let sent = Command::new("kill")
            .args([&format!("-{signal}"), &pid.to_string()])
            .status()
            .expect("running kill");
        assert!(sent.success());
        assert_eq!(t.wait_exit(), 128 + number, "SIG{signal}");
        assert_eq!(t.format("#{alternate_on}"), "0", "alternate screen left");
        assert_eq!(
            t.format("#{mouse_standard_flag}#{mouse_any_flag}#{mouse_sgr_flag}"),
            "000",
            "mouse reporting switched off"
        );
        assert_eq!(t.format("#{cursor_flag}"), "1", "cursor shown again");
        let drafts = t.cli(&["queue", "--json"]);
        assert!(drafts.contains(&text), "{drafts}");
    }
}

/// SIGTERM while a piped command runs ends the command with the app, which gives the terminal
/// back without waiting for an Enter nobody may be there to press.
#[test]
fn sigterm_during_a_piped_command_ends_both() {
    let Some(t) = Term::new() else { return };
    let marker = t.path("still-running");
    t.start(80, 24, &["--demo"]);
    t.wait_for("Kyoto trip");
    t.type_text("|");
    t.wait_for(":pipe ");
    t.type_text(&format!(
        "echo started; sleep 30; touch {}",
        sh_quote(marker.to_str().unwrap())
    ));
    t.keys(&["Enter"]);
    t.wait_for("started");
    let pid = t.app_pid();
    let sent = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .expect("running kill");
    assert!(sent.success());
    assert_eq!(t.wait_exit(), 128 + 15);
    assert_eq!(t.format("#{alternate_on}"), "0");
    assert_eq!(
        t.format("#{mouse_standard_flag}#{mouse_any_flag}#{mouse_sgr_flag}"),
        "000"
    );
    // The command's shell is gone (its command line names the marker): it can never touch it.
    let marker_arg = marker.to_str().unwrap();
    let start = Instant::now();
    while running_with(marker_arg) {
        assert!(
            start.elapsed() < TIMEOUT,
            "the piped command outlived the app"
        );
        std::thread::sleep(POLL);
    }
    assert!(!marker.exists(), "the command was ended with the app");
}

/// Whether a process of this machine has `arg` in its command line (a zombie has none).
fn running_with(arg: &str) -> bool {
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return false;
    };
    procs.filter_map(Result::ok).any(|p| {
        let cmdline = std::fs::read(p.path().join("cmdline")).unwrap_or_default();
        String::from_utf8_lossy(&cmdline).contains(arg)
    })
}

/// At 80×24 in a real terminal, an error longer than the status and hint lines ends in
/// `:messages`, and `:messages` shows every word of it; Esc closes it and the app quits clean.
#[test]
fn a_message_cut_at_80_by_24_is_read_whole_with_messages() {
    let Some(t) = Term::new() else { return };
    t.start(80, 24, &[]);
    t.wait_for("No threads yet.");
    t.type_text(":no-such-command");
    t.keys(&["Enter"]);
    let s = t.wait_for("… :messages");
    assert!(!s.contains("quit."), "cut:\n{s}");
    t.type_text(":messages");
    t.keys(&["Enter"]);
    let s = t.wait_for("Messages —");
    assert!(s.contains("raw,") && s.contains("quit."), "whole:\n{s}");
    assert!(s.contains("Unknown command `:no-such-command`"), "{s}");
    t.keys(&["Escape"]);
    t.wait_gone("Messages —");
    t.type_text("q");
    assert_eq!(t.wait_exit(), 0);
}

/// An envelope of its own thread, `context` naming it and its body `body`.
fn thread_text(thread: &str, context: &str, body: &str) -> String {
    format!(
        "[[CLAUDE→CHATGPT v1]]\nuser: u\nthread: {thread}\nmessage: {thread}\ncontext: {context}\n\
         intent: REQUEST\nbody: |\n  {body}\nsig: none\n[[END]]\n"
    )
}

/// `[watch] on_start`: with no clipboard to read the app says so as it opens; with one (a
/// paste command) it watches from the start and imports what is copied. Quitting remembers
/// the open thread, the selected message and the filter, and the next start reopens them.
#[test]
fn the_app_watches_from_the_start_and_reopens_where_it_quit() {
    let Some(t) = Term::new() else { return };
    let file = t.path("threads.crosstalk");
    let mut text = thread_text("01KB0000000000000000000001", "alpha plan", "first of alpha");
    text.push_str(&thread_text(
        "01KB0000000000000000000002",
        "beta plan",
        "first of beta",
    ));
    text.push_str(&thread_text(
        "01KB0000000000000000000003",
        "gamma",
        "first of gamma",
    ));
    std::fs::write(&file, text).unwrap();
    t.import(&[&file]);

    std::fs::write(t.path("config.toml"), "[watch]\non_start = true\n").unwrap();
    t.start(100, 30, &[]);
    t.wait_for("Cannot watch the clipboard: no clipboard reachable");
    let s = t.wait_for("([watch] on_start)");
    assert!(!s.contains("◉ watching"), "{s}");
    t.type_text("q");
    assert_eq!(t.wait_exit(), 0);

    let clip = t.path("clipboard.txt");
    std::fs::write(&clip, "").unwrap();
    std::fs::write(
        t.path("config.toml"),
        format!(
            "[watch]\non_start = true\ninterval_ms = 50\n[clipboard]\npaste_command = {}\n",
            toml_string(&format!("cat {}", sh_quote(clip.to_str().unwrap())))
        ),
    )
    .unwrap();
    t.restart(&[]);
    t.wait_for("Watching the clipboard (polling every 50 ms)");
    t.wait_for("◉ watching");
    std::fs::write(
        &clip,
        thread_text(
            "01KB0000000000000000000004",
            "watched delta",
            "copied in a chat",
        ),
    )
    .unwrap();
    t.wait_for("watched delta");

    // The filter, a thread opened from it, the inspector focused; then quit.
    t.type_text("fplan");
    t.keys(&["Enter"]);
    t.wait_until("a plan thread open", |s| {
        s.contains("first of") && s.contains("filter: plan")
    });
    t.keys(&["Escape"]);
    t.wait_for("▶ Threads");
    t.type_text("j");
    t.wait_for("first of alpha");
    t.keys(&["Tab", "Tab"]);
    let s = t.wait_until("the other plan thread open", |s| {
        s.contains("first of alpha") && s.contains("▶ Envelope")
    });
    assert!(s.contains("filter: plan"), "{s}");
    t.type_text("q");
    assert_eq!(t.wait_exit(), 0);
    let state = std::fs::read_to_string(t.path("state/crosstalk/last-place.json")).unwrap();
    assert!(state.contains("01KB0000000000000000000001"), "{state}");

    t.restart(&[]);
    let s = t.wait_until("the last place reopened", |s| {
        s.contains("filter: plan") && s.contains("first of alpha") && s.contains("▶ Envelope")
    });
    assert!(!s.contains("gamma"), "the filter hides the others:\n{s}");
}

/// `s` as a TOML basic string.
fn toml_string(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}
