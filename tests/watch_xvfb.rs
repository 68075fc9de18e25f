//! The clipboard watch against a real X clipboard: Xvfb on a free display, the clipboard set
//! with `xclip` as a chat window's Copy button sets it, and the real binary watching —
//! `crosstalk watch --json`, and the app in tmux after `W`.
//!
//! Shown: an envelope copied is stored once (copying it again adds nothing), text without
//! an envelope is ignored and not stored, an invalid envelope is announced, and the app's own
//! copy (`y`) is never imported again — by the app, nor by a `crosstalk watch` running beside
//! it.
//!
//! Without Xvfb or xclip the tests fail saying so (CI installs both: `.ci/run`);
//! `CROSSTALK_SKIP_XVFB=1` skips them.

mod tmux;

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
    assert!(started.contains("watching the clipboard"), "{started}");

    x.copy(&envelope());
    let first: Value = serde_json::from_str(&next_line(&out, "the envelope")).unwrap();
    assert_eq!(first["imported"], 1, "{first}");
    assert_eq!(first["rejected"], 0, "{first}");
    assert_eq!(count(&db, "SELECT count(*) FROM messages"), 1);

    // The same text copied again, then text without an envelope: neither is news, so the
    // next line is the invalid envelope's.
    x.copy(&envelope());
    x.copy("a chat answer with no envelope in it");
    std::thread::sleep(Duration::from_millis(400));
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
    t.wait_for("Watching the clipboard");
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
    // … and several intervals later it was not taken for new input.
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
    // Another program copies: its text stays, now and after the helper's next look.
    x.copy("the next window's answer");
    std::thread::sleep(Duration::from_millis(1500));
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
