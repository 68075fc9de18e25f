//! The delivery ledger in the real binary, in tmux: an envelope to relay is copied with `y`
//! and shown relayed; a REQUEST then awaits its answer, an ACK does not, a POLL awaits each of
//! its targets; a reply whose parent never arrived is marked in the tree and the list; the
//! queue (`Q`) opens its rows; `crosstalk queue --json` reports the same.
//!
//! Same sandbox as tests/tui_tmux.rs (its own tmux server and temporary HOME/XDG folders; the
//! copy goes out as OSC 52 into tmux's paste buffer). `CROSSTALK_SKIP_TMUX=1` skips it.

use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::Value;

const TIMEOUT: Duration = Duration::from_secs(20);
const POLL: Duration = Duration::from_millis(50);
const BIN: &str = env!("CARGO_BIN_EXE_crosstalk");

fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

struct Term {
    dir: tempfile::TempDir,
}

impl Term {
    fn new() -> Option<Term> {
        if std::env::var("CROSSTALK_SKIP_TMUX").as_deref() == Ok("1") {
            eprintln!("skipping the tmux end-to-end test: CROSSTALK_SKIP_TMUX=1");
            return None;
        }
        let found = Command::new("tmux")
            .arg("-V")
            .output()
            .is_ok_and(|o| o.status.success());
        assert!(
            found,
            "tmux is not installed; install it or set CROSSTALK_SKIP_TMUX=1"
        );
        let dir = tempfile::Builder::new()
            .prefix("ctd")
            .tempdir_in("/tmp")
            .unwrap();
        for d in ["home", "data", "config", "state", "cache"] {
            std::fs::create_dir_all(dir.path().join(d)).unwrap();
        }
        std::fs::write(
            dir.path().join("config.toml"),
            "[operator]\naddresses = [\"human@desk\"]\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("tmux.conf"),
            "set -s set-clipboard on\nset -s escape-time 0\nset -g default-shell /bin/sh\n\
             set -g remain-on-exit on\nset -g status off\n",
        )
        .unwrap();
        Some(Term { dir })
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn sandbox(&self, cmd: &mut Command) {
        for var in [
            "DISPLAY",
            "WAYLAND_DISPLAY",
            "SSH_TTY",
            "SSH_CONNECTION",
            "SSH_CLIENT",
            "TMUX",
            "TMUX_PANE",
            "CROSSTALK_DB",
            "CROSSTALK_LOG",
        ] {
            cmd.env_remove(var);
        }
        cmd.env("HOME", self.path("home"))
            .env("XDG_DATA_HOME", self.path("data"))
            .env("XDG_CONFIG_HOME", self.path("config"))
            .env("XDG_STATE_HOME", self.path("state"))
            .env("XDG_CACHE_HOME", self.path("cache"))
            .env("CROSSTALK_CONFIG", self.path("config.toml"));
        if std::env::var_os("LANG").is_none() {
            cmd.env("LANG", "C.UTF-8");
        }
    }

    fn tmux_output(&self, args: &[&str]) -> Output {
        let mut cmd = Command::new("tmux");
        self.sandbox(&mut cmd);
        cmd.arg("-u")
            .arg("-S")
            .arg(self.path("tmux.sock"))
            .arg("-f")
            .arg(self.path("tmux.conf"))
            .args(args);
        cmd.output().expect("running tmux")
    }

    fn tmux(&self, args: &[&str]) -> String {
        let out = self.tmux_output(args);
        assert!(
            out.status.success(),
            "tmux {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn start(&self, w: u16, h: u16) {
        let cmd = format!(
            "env -u DISPLAY -u WAYLAND_DISPLAY -u SSH_TTY -u SSH_CONNECTION HOME={} \
             XDG_DATA_HOME={} CROSSTALK_CONFIG={} {} --db {}",
            sh_quote(self.path("home").to_str().unwrap()),
            sh_quote(self.path("data").to_str().unwrap()),
            sh_quote(self.path("config.toml").to_str().unwrap()),
            sh_quote(BIN),
            sh_quote(self.path("t.db").to_str().unwrap()),
        );
        let (w, h) = (w.to_string(), h.to_string());
        self.tmux(&["new-session", "-d", "-s", "ct", "-x", &w, "-y", &h, &cmd]);
    }

    fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-t", "ct"])
    }

    /// Polls until `ok` holds on two identical captures in a row.
    fn wait_until(&self, what: &str, ok: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        let mut last: Option<String> = None;
        loop {
            let s = self.screen();
            if !ok(&s) {
                last = None;
            } else if last.as_deref() == Some(s.as_str()) {
                return s;
            } else {
                last = Some(s.clone());
            }
            assert!(
                start.elapsed() < TIMEOUT,
                "timed out waiting for {what}; the screen:\n{s}"
            );
            std::thread::sleep(POLL);
        }
    }

    fn wait_for(&self, text: &str) -> String {
        self.wait_until(&format!("{text:?}"), |s| s.contains(text))
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "ct"];
        args.extend_from_slice(keys);
        self.tmux(&args);
    }

    fn buffer(&self) -> Option<String> {
        let out = self.tmux_output(&["show-buffer"]);
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    }

    fn wait_buffer(&self, what: &str, ok: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            if let Some(b) = self.buffer().filter(|b| ok(b)) {
                return b;
            }
            assert!(
                start.elapsed() < TIMEOUT,
                "no paste buffer with {what}:\n{}",
                self.screen()
            );
            std::thread::sleep(POLL);
        }
    }

    fn cli(&self, args: &[&str]) -> String {
        let mut cmd = Command::new(BIN);
        self.sandbox(&mut cmd);
        cmd.args(args).arg("--db").arg(self.path("t.db"));
        let out = cmd.output().expect("running crosstalk");
        assert!(
            out.status.success(),
            "crosstalk {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn queue(&self) -> Value {
        serde_json::from_str(&self.cli(&["queue", "--json"])).unwrap()
    }
}

impl Drop for Term {
    fn drop(&mut self) {
        let _ = self.tmux_output(&["kill-server"]);
    }
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
    let Some(t) = Term::new() else { return };
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
    let q = t.queue();
    assert_eq!(
        section(&q, "to_relay"),
        [req.clone(), ack.clone(), poll.clone(), orphan.clone()]
    );
    assert_eq!(section(&q, "missing_parent"), std::slice::from_ref(&orphan));
    assert!(t.cli(&["queue"]).contains("to relay (4)"));

    t.start(160, 40);
    t.wait_for("Threads");
    // The list marks the missed relay.
    t.wait_for("⚠1");
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
    // The POLL awaits each of its targets.
    t.keys(&["Q"]);
    t.wait_for("to relay (2)");
    t.keys(&["Enter"]);
    t.wait_for("POLL body");
    t.keys(&["y"]);
    t.wait_buffer("the POLL", |b| b.contains(&format!("message: {poll}")));
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
    let q = t.queue();
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
    assert!(section(&t.queue(), "missing_parent").is_empty());
}
