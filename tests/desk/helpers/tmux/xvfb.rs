//! Xvfb on a free display with an X clipboard set and read by `xclip`, as a chat window's
//! Copy button sets it and a paste reads it. Without Xvfb or xclip, `start` fails loudly, as
//! the tmux flows do without tmux (CI installs both: `.ci/run`): a test that could not run
//! must not pass. `CROSSTALK_SKIP_XVFB=1` skips these tests on purpose.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

/// Taken shared by every test that runs an X clipboard, and alone by one whose copies are
/// milliseconds apart (the watch's burst): the other tests' Xvfb servers, apps and copies
/// running beside it take the cores its watch needs to read each copy before the next
/// replaces it (the machine's load, not the watch's doing).
static CORES: RwLock<()> = RwLock::new(());

/// A hold on [`CORES`], for as long as the X server runs.
enum Cores {
    Shared {
        _held: RwLockReadGuard<'static, ()>,
    },
    Alone {
        _held: RwLockWriteGuard<'static, ()>,
    },
}

fn found(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
}

/// Xvfb on a display it picks itself (`-displayfd`), killed on drop.
pub struct Xvfb {
    child: Child,
    /// The display, `:N`.
    pub display: String,
    /// Held while it runs.
    _cores: Cores,
}

impl Xvfb {
    /// Xvfb beside the other tests' X servers.
    pub fn start() -> Option<Xvfb> {
        let cores = Cores::Shared {
            _held: CORES.read().unwrap_or_else(|e| e.into_inner()),
        };
        Xvfb::start_holding(cores)
    }

    /// Xvfb once every other test's X server has ended, none starting until this one ends.
    pub fn start_alone() -> Option<Xvfb> {
        let cores = Cores::Alone {
            _held: CORES.write().unwrap_or_else(|e| e.into_inner()),
        };
        Xvfb::start_holding(cores)
    }

    fn start_holding(cores: Cores) -> Option<Xvfb> {
        if std::env::var("CROSSTALK_SKIP_XVFB").as_deref() == Ok("1") {
            eprintln!("skipping the X clipboard test: CROSSTALK_SKIP_XVFB=1");
            return None;
        }
        assert!(
            found("Xvfb") && found("xclip"),
            "Xvfb or xclip is not installed: the clipboard watch tests set and read a real X \
             clipboard with them. Install both (`apt-get install xvfb xclip`; CI's .ci/run \
             does this), or set CROSSTALK_SKIP_XVFB=1 to skip these tests."
        );
        let mut child = Command::new("Xvfb")
            .args([
                "-displayfd",
                "1",
                "-nolisten",
                "tcp",
                "-screen",
                "0",
                "640x480x24",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting Xvfb");
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        out.read_line(&mut line).expect("Xvfb's display number");
        let display = format!(":{}", line.trim());
        assert!(display.len() > 1, "Xvfb printed no display number");
        Some(Xvfb {
            child,
            display,
            _cores: cores,
        })
    }

    /// Sets the clipboard as a Copy button would; xclip stays to serve it.
    pub fn copy(&self, text: &str) {
        let mut c = Command::new("xclip")
            .args(["-selection", "clipboard", "-i"])
            .env("DISPLAY", &self.display)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("xclip");
        std::io::Write::write_all(&mut c.stdin.take().unwrap(), text.as_bytes()).unwrap();
        // xclip forks a server and its first process exits.
        c.wait().unwrap();
    }

    /// Sets the clipboard as [`Xvfb::copy`] does, with an `xclip` that hands the text over
    /// once and then ends; returns that `xclip`, whose end shows the text was read.
    pub fn copy_read_once(&self, text: &str) -> Child {
        let mut c = Command::new("xclip")
            .args(["-selection", "clipboard", "-i", "-quiet", "-loops", "1"])
            .env("DISPLAY", &self.display)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("xclip");
        std::io::Write::write_all(&mut c.stdin.take().unwrap(), text.as_bytes()).unwrap();
        c
    }

    /// Sets the clipboard with [`Xvfb::copy_read_once`] and waits (at most [`LINE_WAIT`])
    /// until it was read: a watch on this display has then seen `text`.
    pub fn copy_until_read(&self, text: &str) {
        let mut xclip = self.copy_read_once(text);
        let start = std::time::Instant::now();
        while xclip.try_wait().unwrap().is_none() {
            if start.elapsed() > LINE_WAIT {
                let _ = xclip.kill();
                panic!("nothing read the copy {text:?} within {LINE_WAIT:?}");
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }

    /// The clipboard's text now ("" when the read did not finish within two seconds: an
    /// `xclip -o` that asks an owner which lost the selection meanwhile waits forever).
    pub fn clipboard(&self) -> String {
        let mut child = Command::new("xclip")
            .args(["-selection", "clipboard", "-o"])
            .env("DISPLAY", &self.display)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("xclip -o");
        let start = std::time::Instant::now();
        while child.try_wait().ok().flatten().is_none() {
            if start.elapsed() > std::time::Duration::from_secs(2) {
                let _ = child.kill();
                let _ = child.wait();
                return String::new();
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let mut out = Vec::new();
        if let Some(mut stdout) = child.stdout.take() {
            let _ = std::io::Read::read_to_end(&mut stdout, &mut out);
        }
        String::from_utf8_lossy(&out).into_owned()
    }
}

impl Xvfb {
    /// The real binary on this display, at home in `dir` (its data and state directory too), reading
    /// `config`, with nothing that would make it think it runs over SSH or on Wayland.
    pub fn crosstalk(&self, dir: &std::path::Path, config: &std::path::Path) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_crosstalk"));
        cmd.env("DISPLAY", &self.display)
            .env("HOME", dir)
            .env("XDG_DATA_HOME", dir)
            .env("XDG_STATE_HOME", dir)
            .env("CROSSTALK_CONFIG", config)
            .env_remove("WAYLAND_DISPLAY")
            .env_remove("SSH_TTY")
            .env_remove("SSH_CONNECTION");
        cmd
    }

    /// Waits (at most 30 s) until the clipboard holds text that `ok` accepts; that text.
    pub fn clipboard_until(&self, what: &str, ok: impl Fn(&str) -> bool) -> String {
        let start = std::time::Instant::now();
        loop {
            let text = self.clipboard();
            if ok(&text) {
                return text;
            }
            assert!(
                start.elapsed() < std::time::Duration::from_secs(30),
                "the clipboard never held {what}; it holds:\n{text}"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// How long a watched process gets to print its next line.
pub const LINE_WAIT: std::time::Duration = std::time::Duration::from_secs(20);

/// The lines of a child's stream, read on a thread of their own.
pub fn lines(stream: impl std::io::Read + Send + 'static) -> std::sync::mpsc::Receiver<String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for l in BufReader::new(stream).lines().map_while(Result::ok) {
            if tx.send(l).is_err() {
                return;
            }
        }
    });
    rx
}

/// A child whose standard output and error are read line by line. Keep both receivers while
/// the child runs: dropping one stops its reader, and the child's next write to that stream
/// fails (a Rust program's `eprintln!` then panics).
pub struct Piped {
    /// The process.
    pub child: Child,
    /// Its standard output's lines.
    pub out: std::sync::mpsc::Receiver<String>,
    /// Its standard error's lines.
    pub err: std::sync::mpsc::Receiver<String>,
}

/// Spawns `cmd` with its standard output and error piped, each read on a thread of its own.
pub fn spawn_piped(cmd: &mut Command) -> Piped {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn crosstalk");
    let out = lines(child.stdout.take().expect("piped standard output"));
    let err = lines(child.stderr.take().expect("piped standard error"));
    Piped { child, out, err }
}

/// The next line, within [`LINE_WAIT`]; `what` names it in the failure.
pub fn next_line(rx: &std::sync::mpsc::Receiver<String>, what: &str) -> String {
    rx.recv_timeout(LINE_WAIT)
        .unwrap_or_else(|_| panic!("no line for {what} within {LINE_WAIT:?}"))
}

/// The next line, as a JSON object (a `--json` watch's).
pub fn next_json(rx: &std::sync::mpsc::Receiver<String>, what: &str) -> serde_json::Value {
    let line = next_line(rx, what);
    serde_json::from_str(&line).unwrap_or_else(|e| panic!("{what}: {e}: {line}"))
}
