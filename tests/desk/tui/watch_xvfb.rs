//! The clipboard watch against a real X clipboard: Xvfb on a free display, the clipboard set
//! with `xclip` as a chat window's Copy button sets it, and the real binary watching —
//! `crosstalk watch --json`, and the app in tmux after `W`.
//!
//! Shown: an envelope copied is stored once (copying it again adds nothing), text without
//! an envelope is ignored and not stored, an invalid envelope is announced, and the app's own
//! copy (`y`) is never imported again — by the app, nor by a `crosstalk watch` running beside
//! it. The watch waits for XFixes' word of each copy and reads it at once (every copy of a
//! burst is seen), and polls when told to.
//!
//! Without Xvfb or xclip the tests fail saying so (CI installs both: `.ci/run`);
//! `CROSSTALK_SKIP_XVFB=1` skips them.

use crate::helpers::tmux;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;
use tmux::xvfb::{Piped, Xvfb, next_line, spawn_piped};
use tmux::{BIN, Term, manifest};

const WAIT: Duration = Duration::from_secs(20);

fn envelope() -> String {
    std::fs::read_to_string(manifest("assets/examples/v11-request.crosstalk")).unwrap()
}

/// An envelope with errors (ids that are not ULIDs).
const INVALID: &str = "[[A→B v1]]\nthread: nope\nmessage: nope\nintent: REQUEST\n\nbody: |\n  x\nsig: none\n[[END]]\n";

fn count(db: &Path, sql: &str) -> i64 {
    let c = rusqlite::Connection::open(db).unwrap();
    c.query_row(sql, [], |r| r.get(0)).unwrap()
}

#[test]
fn the_cli_imports_each_copied_envelope_once_and_announces_invalid_ones() {
    let Some(x) = Xvfb::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("w.db");
    // What the clipboard holds before the watch starts is not imported.
    x.copy(&envelope().replace("01J9J3DBC4N7P2Q3R5S7T9V1V2", "01J9J3DBC4N7P2Q3R5S7T9V1V9"));
    std::fs::write(dir.path().join("c.toml"), "[watch]\ninterval_ms = 100\n").unwrap();
    let Piped {
        child: mut watch,
        out,
        err,
    } = spawn_piped(x.crosstalk(dir.path(), &dir.path().join("c.toml")).args([
        "--db",
        db.to_str().unwrap(),
        "watch",
        "--json",
    ]));
    let started = next_line(&err, "the watch to start");
    assert!(
        started.contains("watching the clipboard (X11 events)"),
        "{started}"
    );

    x.copy(&envelope());
    let first: Value = serde_json::from_str(&next_line(&out, "the envelope")).unwrap();
    assert_eq!(first["imported"], 1, "{first}");
    assert_eq!(first["rejected"], 0, "{first}");
    assert_eq!(count(&db, "SELECT count(*) FROM messages"), 1);

    // The same text copied again, then text without an envelope, each read by the watch:
    // neither is news, so the next line is the invalid envelope's.
    x.copy_until_read(&envelope());
    x.copy_until_read("a chat answer with no envelope in it");
    x.copy(INVALID);
    let bad: Value = serde_json::from_str(&next_line(&out, "the invalid envelope")).unwrap();
    assert_eq!(bad["rejected"], 1, "{bad}");
    assert!(
        bad["first_error"].as_str().unwrap().contains("bad-id"),
        "{bad}"
    );
    assert_eq!(count(&db, "SELECT count(*) FROM messages"), 1);
    assert_eq!(
        count(&db, "SELECT count(*) FROM pastes"),
        2,
        "the envelope and the invalid one are kept raw; the chat text is not"
    );

    // Ctrl-C: a clean end, exit 0.
    let pid = watch.id().to_string();
    Command::new("kill").args(["-INT", &pid]).status().unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(s) = watch.try_wait().unwrap() {
            break s;
        }
        assert!(start.elapsed() < WAIT, "watch did not end on SIGINT");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status}");
    let last = next_line(&err, "the closing note");
    assert!(
        last.contains("stopped watching; 1 message(s) imported"),
        "{last}"
    );
}

/// An envelope of its own thread with message id number `n` (distinct ids, distinct texts).
fn numbered(n: usize) -> String {
    format!(
        "[[CLAUDE→CHATGPT v1]]\nuser: kalle\nthread: 01KAQ4W5J8Z000000000000000\nmessage: 01KAQ4W5J8Z00000000{n:07}\ncontext: burst\nintent: REQUEST\nbody: |\n  copy {n}\nsig: none\n[[END]]\n"
    )
}

/// A `crosstalk watch --json` on `x` with `config`, started; its stderr's first line.
fn watch_json(x: &Xvfb, dir: &Path, config: &str) -> (Piped, String) {
    std::fs::write(dir.join("c.toml"), config).unwrap();
    let db = dir.join("w.db");
    let piped = spawn_piped(x.crosstalk(dir, &dir.join("c.toml")).args([
        "--db",
        db.to_str().unwrap(),
        "watch",
        "--json",
    ]));
    let started = next_line(&piped.err, "the watch to start");
    (piped, started)
}

/// Every change of the clipboard's owner is read at once, not at the next look: each
/// `xclip` here hands its text over once and ends, and the next copy follows as soon as it
/// has, while the watch would poll only once a minute. What this holds to is what XFixes
/// guarantees (an event for each owner change), whatever the load on the machine.
#[test]
fn every_copy_is_read_as_it_is_made_not_at_the_next_look() {
    let Some(x) = Xvfb::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (mut w, started) = watch_json(&x, dir.path(), "[watch]\ninterval_ms = 60000\n");
    assert!(started.contains("(X11 events)"), "{started}");
    for n in 1..=20 {
        let mut xclip = x.copy_read_once(&numbered(n));
        let start = Instant::now();
        while xclip.try_wait().unwrap().is_none() {
            assert!(start.elapsed() < WAIT, "copy {n} was never read");
            std::thread::sleep(Duration::from_millis(2));
        }
    }
    for n in 1..=20 {
        let line: Value = serde_json::from_str(&next_line(&w.out, "an import")).unwrap();
        assert_eq!(line["imported"], 1, "copy {n}: {line}");
    }
    assert_eq!(
        count(&dir.path().join("w.db"), "SELECT count(*) FROM messages"),
        20
    );
    let _ = w.child.kill();
    let _ = w.child.wait();
}

/// Copies `count` distinct envelopes (ids from `first` on) one after another, `gap` apart,
/// each with an `xclip` of its own that owns the clipboard before the next starts (as a Copy
/// button, or a script copying, does); then waits until the watch has caught up (its store
/// has not grown for a second, or holds them all) and says how many it stored.
fn burst(x: &Xvfb, db: &Path, first: usize, count_of: usize, gap: Duration) -> i64 {
    for n in first..first + count_of {
        x.copy(&numbered(n));
        std::thread::sleep(gap);
    }
    let stored = || {
        if db.exists() {
            count(db, "SELECT count(*) FROM messages")
        } else {
            0
        }
    };
    let (mut last, mut since) = (stored(), Instant::now());
    let start = Instant::now();
    while last < count_of as i64 && since.elapsed() < Duration::from_secs(1) {
        assert!(
            start.elapsed() < WAIT,
            "the watch never caught up ({last} stored)"
        );
        std::thread::sleep(Duration::from_millis(50));
        let now = stored();
        if now != last {
            (last, since) = (now, Instant::now());
        }
    }
    last
}

/// How many copies of the burst below may be missing: on a busy machine, a few. `xclip`'s
/// first process ends just after it asked for the selection, not once the X server gave it,
/// so two of its servers waiting for a core can take the clipboard a millisecond apart (the X
/// server's own timestamps show it), and the first text is then gone before any reader could
/// ask for it. `every_copy_is_read_as_it_is_made_not_at_the_next_look` holds to every copy,
/// at any load; polling misses nine in ten of these.
const BURST_MAY_MISS: i64 = 4;

/// A burst: 200 distinct envelopes copied one after another 5 ms apart, all imported (but
/// [`BURST_MAY_MISS`]). Each copy is the clipboard's for a few milliseconds (the pause, and
/// the next xclip's start), which is all the watch needs: it asks for the text as soon as the
/// X server tells of the copy. (A polling watch stores about one in ten: see the next test.)
#[test]
fn a_burst_of_copies_is_all_imported() {
    // Alone among the tests with an X clipboard (see `Xvfb::start_alone`).
    let Some(x) = Xvfb::start_alone() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (mut w, started) = watch_json(&x, dir.path(), "");
    assert!(started.contains("(X11 events)"), "{started}");
    let db = dir.path().join("w.db");
    let stored = burst(&x, &db, 1, 200, Duration::from_millis(5));
    assert!(
        stored >= 200 - BURST_MAY_MISS,
        "{stored} of 200 copies imported"
    );
    let _ = w.child.kill();
    let _ = w.child.wait();
}

/// With `[watch] events = false` the watch polls where XFixes is there, says so, and still
/// imports what is copied; a burst shows what the events are for: copies made faster than
/// the looks are missed. (A server without XFixes cannot be had here: Xvfb started with
/// `-extension XFIXES`, and Composite and Damage that are built on it, aborts on an
/// assertion as soon as the watch reads its clipboard, the watch from before the events
/// too. The fallback from a source that does not open is held in `watch/poller.rs`'s tests.)
#[test]
fn with_events_off_the_watch_polls_and_says_so() {
    let Some(x) = Xvfb::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (mut w, started) = watch_json(&x, dir.path(), "[watch]\nevents = false\n");
    assert!(
        started.contains("watching the clipboard (polling every 100 ms)"),
        "{started}"
    );
    x.copy(&envelope());
    let first: Value = serde_json::from_str(&next_line(&w.out, "the envelope")).unwrap();
    assert_eq!(first["imported"], 1, "{first}");
    // 40 copies as in the burst above last a few hundred milliseconds: a few looks, a few
    // copies seen.
    let db = dir.path().join("w.db");
    let stored = burst(&x, &db, 1, 40, Duration::from_millis(5)) - 1;
    assert!(
        stored < 40,
        "polling every 100 ms imported all 40 copies of a burst: the burst tests cannot tell \
         polling from events any more"
    );
    let _ = w.child.kill();
    let _ = w.child.wait();
}

#[test]
fn without_a_display_the_watch_says_so_and_ends() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("c.toml"), "").unwrap();
    let out = Command::new(BIN)
        .args(["--db", dir.path().join("w.db").to_str().unwrap(), "watch"])
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("SSH_TTY")
        .env_remove("SSH_CONNECTION")
        .env("HOME", dir.path())
        .env("CROSSTALK_CONFIG", dir.path().join("c.toml"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    if cfg!(target_os = "linux") {
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("no clipboard reachable"), "{err}");
    }
}

#[test]
fn the_app_watches_after_w_and_never_imports_its_own_copy() {
    let Some(x) = Xvfb::start() else { return };
    let Some(mut t) = Term::new() else { return };
    std::fs::write(t.path("config.toml"), "[watch]\ninterval_ms = 100\n").unwrap();
    t.app_env.push(("DISPLAY".into(), x.display.clone()));
    t.start(120, 30, &[]);
    t.wait_for("Empty database");
    t.keys(&["W"]);
    t.wait_for("Watching the clipboard (X11 events)");
    assert!(t.screen().contains("◉ watching"));

    x.copy(&envelope());
    let s = t.wait_for("1 new message(s) imported");
    assert!(s.contains("architecture review"), "{s}");
    assert_eq!(count(&t.db, "SELECT count(*) FROM pastes"), 1);

    // A `crosstalk watch` in another terminal, on the same data directory.
    let mut cli = Command::new(BIN);
    t.sandbox(&mut cli);
    let Piped {
        child: mut cli,
        out: cli_out,
        err: cli_err,
    } = spawn_piped(
        cli.args(["--db", t.db.to_str().unwrap(), "watch", "--json"])
            .env("DISPLAY", &x.display),
    );
    next_line(&cli_err, "the other watch to start");

    // Chat text in between, so that what the app copies next differs from what both
    // watches saw last (the envelope imported above is already in canonical form).
    x.copy("some chat text");
    // Neither watch says anything of a text without envelopes, and an `xclip` serving a
    // number of reads cannot tell whose they were: a bounded wait, many of the watches'
    // reads long, is the only way to know both saw it.
    std::thread::sleep(Duration::from_millis(400));
    // The app's own copy of the selected envelope lands on the clipboard …
    t.keys(&["Enter", "y"]);
    t.wait_for("system clipboard");
    let start = Instant::now();
    while !x.clipboard().contains("Please review the storage design") {
        assert!(
            start.elapsed() < WAIT,
            "the copy never reached the clipboard"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // … and several intervals later it was not taken for new input. An own copy is never
    // announced, so nothing shows that the watch has heard of it: a bounded wait is the only
    // way to give a wrong import its chance (the invalid copy below comes after it, and the
    // other watch's first line shows that it skipped the copy too).
    std::thread::sleep(Duration::from_millis(800));
    assert_eq!(count(&t.db, "SELECT count(*) FROM pastes"), 1);
    assert!(!t.screen().contains("already stored"));

    // An invalid envelope is announced.
    x.copy(INVALID);
    t.wait_for("1 invalid, not imported");
    // The other watch skipped the app's copy too: its first line is the invalid envelope.
    let first: Value = serde_json::from_str(&next_line(&cli_out, "the invalid envelope")).unwrap();
    assert_eq!(first["rejected"], 1, "{first}");
    assert_eq!(first["duplicates"], 0, "{first}");
    let _ = cli.kill();
    let _ = cli.wait();

    // W again: stopped.
    t.keys(&["W"]);
    let s = t.wait_for("Stopped watching the clipboard");
    assert!(!s.contains("◉ watching"));
}

/// A copy outlives the process that made it (a helper serves it once the command exits), and
/// the helper never puts its text back over a later copy by another program: it ends.
#[test]
fn a_copy_outlives_its_command_and_never_comes_back_over_a_later_one() {
    let Some(x) = Xvfb::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("c.toml"),
        "[compose]\nfrom = \"human://kalle\"\n",
    )
    .unwrap();
    let out = x
        .crosstalk(dir.path(), &dir.path().join("c.toml"))
        .args(["--db", dir.path().join("w.db").to_str().unwrap()])
        .args(["primer", "--to", "CLAUDE", "--copy"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let start = Instant::now();
    let held = loop {
        let c = x.clipboard();
        if c.contains("[[") {
            break c;
        }
        assert!(
            start.elapsed() < WAIT,
            "the copy did not outlive the command: {c:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(held.contains("CLAUDE"), "{held}");
    // Another program copies: its text stays, now and once the helper has ended (after
    // that, nothing can put the helper's text back).
    x.copy("the next window's answer");
    let start = Instant::now();
    while helpers_on(&x.display) > 0 {
        assert!(start.elapsed() < WAIT, "the helper never ended");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(x.clipboard(), "the next window's answer");
    assert_eq!(
        helpers_on(&x.display),
        0,
        "the helper ended when its text was replaced"
    );
}

/// Hold helpers running on `display` (other tests' helpers serve other displays).
fn helpers_on(display: &str) -> usize {
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return 0;
    };
    procs
        .filter_map(Result::ok)
        .filter(|p| {
            let read = |f: &str| std::fs::read(p.path().join(f)).unwrap_or_default();
            let cmdline = String::from_utf8_lossy(&read("cmdline")).into_owned();
            let environ = String::from_utf8_lossy(&read("environ")).into_owned();
            cmdline.contains("__hold-clipboard")
                && environ
                    .split('\0')
                    .any(|v| v == format!("DISPLAY={display}"))
        })
        .count()
}
