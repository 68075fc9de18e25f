//! The tmux harness of the flows in `tui/`: a sandboxed tmux server per test on a private
//! socket, the real binary launched in it, keys, bracketed pastes, screen captures and OSC 52
//! copies read back from tmux's paste buffers.

pub mod relay;
pub mod xvfb;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::Value;

/// How long any one wait may take: generous, for a loaded two-core CI machine.
pub const TIMEOUT: Duration = Duration::from_secs(20);
/// How often a wait looks at the screen again.
pub const POLL: Duration = Duration::from_millis(50);

pub const BIN: &str = env!("CARGO_BIN_EXE_crosstalk");

pub fn manifest(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// Quotes `s` for `sh`.
pub fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Whether these tests run: tmux present, or a loud failure; `CROSSTALK_SKIP_TMUX=1` skips.
pub fn tmux_wanted() -> bool {
    if std::env::var("CROSSTALK_SKIP_TMUX").as_deref() == Ok("1") {
        eprintln!("skipping the tmux end-to-end test: CROSSTALK_SKIP_TMUX=1");
        return false;
    }
    let found = Command::new("tmux")
        .arg("-V")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    assert!(
        found,
        "tmux is not installed: the end-to-end TUI tests in tests/desk/tui/ drive the app \
         through it. Install tmux (`apt-get install tmux`, `brew install tmux`; CI's .ci/run \
         does this), or set CROSSTALK_SKIP_TMUX=1 to skip these tests."
    );
    true
}

/// One tmux server with one session running the app, and the sandbox it runs in.
pub struct Term {
    pub dir: tempfile::TempDir,
    pub socket: PathBuf,
    pub conf: PathBuf,
    pub script: PathBuf,
    pub pidfile: PathBuf,
    pub db: PathBuf,
    /// Launches so far; each prints `EXITED:<status> run=<n>.` when the app ends.
    pub runs: std::cell::Cell<u32>,
    /// Variables set for the app on top of the sandbox (`EDITOR`, `TMPDIR`).
    pub app_env: Vec<(String, String)>,
}

impl Term {
    /// A sandbox and a tmux server, nothing started yet; `None` when the tests are skipped.
    pub fn new() -> Option<Term> {
        if !tmux_wanted() {
            return None;
        }
        // A short directory: a unix socket path must stay under ~100 bytes.
        let base = std::env::temp_dir();
        let base = if base.as_os_str().len() > 60 {
            PathBuf::from("/tmp")
        } else {
            base
        };
        let dir = tempfile::Builder::new()
            .prefix("ctt")
            .tempdir_in(base)
            .expect("temp dir");
        let p = |name: &str| dir.path().join(name);
        for d in ["home", "data", "config", "state", "cache"] {
            std::fs::create_dir_all(p(d)).unwrap();
        }
        std::fs::write(p("config.toml"), "").unwrap();
        std::fs::write(
            p("tmux.conf"),
            "set -s set-clipboard on\n\
             set -s escape-time 0\n\
             set -g default-shell /bin/sh\n\
             set -g remain-on-exit on\n\
             set -g status off\n\
             set -g history-limit 1000\n",
        )
        .unwrap();
        let q = |name: &str| sh_quote(p(name).to_str().expect("utf-8 temp path"));
        // run.sh RUN APP ARGS...: the sandboxed environment, a title the app must leave alone,
        // the app (its pid in `pid`), then its exit status on the restored screen. The shell
        // stays (sleeping) so tmux reads that last line before the pane's process ends.
        let script = format!(
            "run=$1; shift\n\
             unset DISPLAY WAYLAND_DISPLAY SSH_TTY SSH_CONNECTION SSH_CLIENT SSH_AUTH_SOCK \
             CROSSTALK_DB CROSSTALK_LOG EDITOR VISUAL\n\
             export HOME={home} XDG_DATA_HOME={data} XDG_CONFIG_HOME={config} \
             XDG_STATE_HOME={state} XDG_CACHE_HOME={cache} CROSSTALK_CONFIG={cfg}\n\
             export LANG=${{LANG:-C.UTF-8}}\n\
             printf '\\033]2;crosstalk-test\\007\\033[H\\033[2J'\n\
             sh -c 'echo $$ > \"$0.tmp\" && mv \"$0.tmp\" \"$0\" && exec \"$@\"' {pid} \"$@\"\n\
             echo \"EXITED:$? run=$run.\"\n\
             exec sleep 600\n",
            home = q("home"),
            data = q("data"),
            config = q("config"),
            state = q("state"),
            cache = q("cache"),
            cfg = q("config.toml"),
            pid = q("pid"),
        );
        std::fs::write(p("run.sh"), script).unwrap();
        Some(Term {
            socket: p("tmux.sock"),
            conf: p("tmux.conf"),
            script: p("run.sh"),
            pidfile: p("pid"),
            db: p("crosstalk.db"),
            runs: std::cell::Cell::new(0),
            app_env: Vec::new(),
            dir,
        })
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The sandbox's environment on a command (tmux, or the CLI).
    pub fn sandbox(&self, cmd: &mut Command) {
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

    /// Runs a tmux command on this server.
    pub fn tmux_output(&self, args: &[&str]) -> Output {
        let mut cmd = Command::new("tmux");
        self.sandbox(&mut cmd);
        cmd.arg("-u")
            .arg("-S")
            .arg(&self.socket)
            .arg("-f")
            .arg(&self.conf)
            .args(args);
        cmd.output().expect("running tmux")
    }

    /// Runs a tmux command that must succeed; its stdout.
    pub fn tmux(&self, args: &[&str]) -> String {
        let out = self.tmux_output(args);
        assert!(
            out.status.success(),
            "tmux {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The shell command that runs the app with `args` (always with `--db`).
    pub fn app_command(&self, args: &[&str]) -> String {
        let n = self.runs.get() + 1;
        self.runs.set(n);
        let _ = std::fs::remove_file(&self.pidfile);
        let mut words = vec![
            "sh".to_string(),
            sh_quote(self.script.to_str().unwrap()),
            n.to_string(),
        ];
        if !self.app_env.is_empty() {
            words.push("env".into());
            words.extend(
                self.app_env
                    .iter()
                    .map(|(k, v)| sh_quote(&format!("{k}={v}"))),
            );
        }
        words.extend([
            sh_quote(BIN),
            "--db".to_string(),
            sh_quote(self.db.to_str().unwrap()),
        ]);
        words.extend(args.iter().map(|a| sh_quote(a)));
        words.join(" ")
    }

    /// Starts the server and the app in a `width`×`height` session.
    pub fn start(&self, width: u16, height: u16, args: &[&str]) {
        let cmd = self.app_command(args);
        let (w, h) = (width.to_string(), height.to_string());
        self.tmux(&["new-session", "-d", "-s", "ct", "-x", &w, "-y", &h, &cmd]);
    }

    /// Starts the app again in the same pane (after it exited or was killed).
    pub fn restart(&self, args: &[&str]) {
        let cmd = self.app_command(args);
        self.tmux(&["respawn-pane", "-k", "-t", "ct", &cmd]);
    }

    /// The screen as text.
    pub fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-t", "ct"])
    }

    /// A tmux format of the pane (`#{pane_title}`).
    pub fn format(&self, fmt: &str) -> String {
        self.tmux(&["display-message", "-p", "-t", "ct", fmt])
            .trim_end()
            .to_string()
    }

    /// Polls the screen until `ok` holds; the screen that satisfied it. `ok` must hold on two
    /// identical captures in a row: a capture can catch a frame half drawn, and the assertions
    /// that follow look at the whole screen.
    pub fn wait_until(&self, what: &str, ok: impl Fn(&str) -> bool) -> String {
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
            if start.elapsed() > TIMEOUT {
                panic!("timed out after {TIMEOUT:?} waiting for {what}; the screen:\n{s}");
            }
            std::thread::sleep(POLL);
        }
    }

    /// Polls the screen until it shows `text`.
    pub fn wait_for(&self, text: &str) -> String {
        self.wait_until(&format!("{text:?}"), |s| s.contains(text))
    }

    /// Polls the screen until it no longer shows `text`.
    pub fn wait_gone(&self, text: &str) -> String {
        self.wait_until(&format!("{text:?} to go away"), |s| !s.contains(text))
    }

    /// Waits for the app of the latest launch to end; its exit status (from the
    /// `EXITED:<status> run=<n>.` line run.sh prints after it).
    pub fn wait_exit(&self) -> i32 {
        let tag = format!(" run={}.", self.runs.get());
        let status = |s: &str| {
            s.lines().find_map(|l| {
                let before = &l[..l.find(&tag)?];
                before[before.rfind("EXITED:")? + "EXITED:".len()..]
                    .parse::<i32>()
                    .ok()
            })
        };
        let s = self.wait_until("the app to exit (EXITED:...)", |s| status(s).is_some());
        status(&s).unwrap()
    }

    /// Key names (`Enter`, `Escape`, `C-y`), one after the other.
    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "ct"];
        args.extend_from_slice(keys);
        self.tmux(&args);
    }

    /// Literal text, typed.
    pub fn type_text(&self, text: &str) {
        self.tmux(&["send-keys", "-t", "ct", "-l", text]);
    }

    /// Raw bytes on the app's input (mouse reports).
    pub fn send_bytes(&self, bytes: &[u8]) {
        let hex: Vec<String> = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let mut args = vec!["send-keys", "-t", "ct", "-H"];
        args.extend(hex.iter().map(String::as_str));
        self.tmux(&args);
    }

    /// A bracketed paste of `text` (the app asked for bracketed paste, so tmux wraps it in
    /// `ESC[200~ … ESC[201~`). `keep_lf`: line feeds as they are (`-r`); without it tmux sends
    /// them as carriage returns, as xterm and VTE terminals do.
    pub fn paste(&self, text: &str, keep_lf: bool) {
        let file = self.path("paste.txt");
        std::fs::write(&file, text).unwrap();
        self.tmux(&["load-buffer", "-b", "to-paste", file.to_str().unwrap()]);
        let mut args = vec!["paste-buffer", "-p", "-d", "-b", "to-paste", "-t", "ct"];
        if keep_lf {
            args.push("-r");
        }
        self.tmux(&args);
    }

    /// `text` pasted as a terminal without bracketed paste sends it: as keys, all at once
    /// (tmux's `paste-buffer` without `-p`; line feeds as carriage returns).
    pub fn paste_as_keys(&self, text: &str) {
        let file = self.path("paste.txt");
        std::fs::write(&file, text).unwrap();
        self.tmux(&["load-buffer", "-b", "to-paste", file.to_str().unwrap()]);
        self.tmux(&["paste-buffer", "-d", "-b", "to-paste", "-t", "ct"]);
    }

    /// The newest tmux paste buffer (what the last OSC 52 copy set), if any.
    pub fn buffer(&self) -> Option<String> {
        let out = self.tmux_output(&["show-buffer"]);
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// Every tmux paste buffer's name.
    pub fn buffer_names(&self) -> Vec<String> {
        self.tmux(&["list-buffers", "-F", "#{buffer_name}"])
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// Polls until the newest paste buffer satisfies `ok`.
    pub fn wait_buffer(&self, what: &str, ok: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let b = self.buffer();
            if let Some(b) = &b {
                if ok(b) {
                    return b.clone();
                }
            }
            if start.elapsed() > TIMEOUT {
                panic!(
                    "timed out waiting for a paste buffer with {what}; newest buffer: {b:?}\nscreen:\n{}",
                    self.screen()
                );
            }
            std::thread::sleep(POLL);
        }
    }

    /// The running app's pid (written by run.sh before it execs the app).
    pub fn app_pid(&self) -> u32 {
        let start = Instant::now();
        loop {
            if let Ok(s) = std::fs::read_to_string(&self.pidfile) {
                if let Ok(pid) = s.trim().parse() {
                    return pid;
                }
            }
            assert!(
                start.elapsed() < TIMEOUT,
                "the app's pid file never appeared"
            );
            std::thread::sleep(POLL);
        }
    }

    /// Runs the CLI on the sandbox's database; stdout of a successful run.
    pub fn cli(&self, args: &[&str]) -> String {
        let mut cmd = Command::new(BIN);
        self.sandbox(&mut cmd);
        cmd.args(args).arg("--db").arg(&self.db);
        let out = cmd.output().expect("running crosstalk");
        assert!(
            out.status.success(),
            "crosstalk {args:?} failed ({}): {}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// `crosstalk ARGS --db DB`, whatever its exit status: the status and standard output.
    pub fn cli_status(&self, args: &[&str]) -> (i32, String) {
        let mut cmd = Command::new(BIN);
        self.sandbox(&mut cmd);
        cmd.args(args).arg("--db").arg(&self.db);
        let out = cmd.output().expect("running crosstalk");
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    }

    /// `crosstalk ARGS --json --db DB`, read as JSON (it must succeed).
    pub fn cli_json(&self, args: &[&str]) -> Value {
        let mut a = args.to_vec();
        a.push("--json");
        let out = self.cli(&a);
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
    }

    /// `crosstalk import` of files before the app starts.
    pub fn import(&self, files: &[&Path]) {
        let mut args = vec!["import"];
        let files: Vec<&str> = files.iter().map(|f| f.to_str().unwrap()).collect();
        args.extend(files);
        self.cli(&args);
    }

    /// The one thread of the database: its id and `show --json`.
    pub fn only_thread(&self) -> (String, Value) {
        let threads = self.cli_json(&["threads"]);
        let list = threads.as_array().expect("threads --json is an array");
        assert_eq!(list.len(), 1, "one thread expected: {threads}");
        let id = list[0]["id"].as_str().unwrap().to_string();
        let show = self.cli_json(&["show", &id]);
        (id, show)
    }
}

impl Drop for Term {
    fn drop(&mut self) {
        let _ = self.tmux_output(&["kill-server"]);
    }
}

/// The message ids of a `show --json` thread, in tree order.
pub fn message_ids(show: &Value) -> Vec<String> {
    show["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["message"].as_str().unwrap().to_string())
        .collect()
}

/// The status line: the last non-empty row.
pub fn status_line(screen: &str) -> &str {
    screen
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
}

/// A screen row that holds every one of `parts`.
pub fn row_with<'a>(screen: &'a str, parts: &[&str]) -> Option<&'a str> {
    screen.lines().find(|l| parts.iter().all(|p| l.contains(p)))
}

pub fn has_row(screen: &str, parts: &[&str]) -> bool {
    row_with(screen, parts).is_some()
}

pub const TRANSCRIPT: &str = "tests/fixtures/paste/prose_between.txt";
