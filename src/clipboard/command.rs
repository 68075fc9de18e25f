//! Clipboard commands (`wl-copy`, `xclip`, `pbcopy`, or the configured ones): found on `PATH`
//! and run through `sh -c` with a time limit, so a command that hangs cannot freeze the app.

use std::io::{Read, Write};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use super::Env;

/// How long a clipboard command may take. `wl-copy` and `xclip` fork a server and return at
/// once; anything slower is stuck (waiting for a display, say).
pub(super) const TIMEOUT: Duration = Duration::from_secs(5);

/// The copy command for this session, when one is on `PATH`.
pub(super) fn default_copy(env: &Env) -> Option<&'static str> {
    first_found(
        env,
        &[
            (env.wayland_display.is_some(), "wl-copy", "wl-copy"),
            (env.display.is_some(), "xclip", "xclip -selection clipboard"),
            (env.display.is_some(), "xsel", "xsel --clipboard --input"),
            (cfg!(target_os = "macos"), "pbcopy", "pbcopy"),
        ],
    )
}

/// The paste command for this session, when one is on `PATH`.
pub(super) fn default_paste(env: &Env) -> Option<&'static str> {
    first_found(
        env,
        &[
            (
                env.wayland_display.is_some(),
                "wl-paste",
                "wl-paste --no-newline",
            ),
            (
                env.display.is_some(),
                "xclip",
                "xclip -selection clipboard -o",
            ),
            (env.display.is_some(), "xsel", "xsel --clipboard --output"),
            (cfg!(target_os = "macos"), "pbpaste", "pbpaste"),
        ],
    )
}

/// The command of the first candidate that applies and whose program is on `PATH`.
fn first_found(env: &Env, candidates: &[(bool, &str, &'static str)]) -> Option<&'static str> {
    candidates
        .iter()
        .find(|(applies, program, _)| *applies && env.find_program(program).is_some())
        .map(|(_, _, command)| *command)
}

/// Runs `sh -c command` with `PATH` from `env` (the one the defaults were found in). With
/// `input`, writes it to stdin and discards stdout; without, stdin is empty and stdout is
/// returned. Stderr is discarded: it would scribble over the TUI. Succeeds only when the
/// command exits 0 within `timeout` having read all of `input`.
pub(super) fn run(
    env: &Env,
    command: &str,
    input: Option<Vec<u8>>,
    timeout: Duration,
) -> Result<Vec<u8>, String> {
    let deadline = Instant::now() + timeout;
    // An absolute shell: `PATH` below may be one that holds only clipboard tools.
    let mut cmd = Command::new(if cfg!(unix) { "/bin/sh" } else { "sh" });
    if let Some(path) = &env.path {
        cmd.env("PATH", path);
    }
    let mut child = cmd
        .arg("-c")
        .arg(command)
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(if input.is_some() {
            Stdio::null()
        } else {
            Stdio::piped()
        })
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start: {e}"))?;

    // Writing and reading happen on threads so a command that neither reads nor exits (or a
    // forked server that keeps a pipe open) is caught by the time limit instead of blocking us.
    let (tx, rx) = mpsc::channel::<std::io::Result<Vec<u8>>>();
    match (input, child.stdin.take(), child.stdout.take()) {
        (Some(bytes), Some(mut stdin), _) => {
            thread::spawn(move || tx.send(stdin.write_all(&bytes).map(|()| Vec::new())));
        }
        (None, _, Some(mut stdout)) => {
            thread::spawn(move || {
                let mut buf = Vec::new();
                tx.send(stdout.read_to_end(&mut buf).map(|_| buf))
            });
        }
        _ => return Err(kill(&mut child, "pipes were not set up".to_owned())),
    }

    let status = wait_until(&mut child, deadline)?;
    let remaining = deadline.saturating_duration_since(Instant::now());
    let Ok(io) = rx.recv_timeout(remaining) else {
        return Err(format!("did not finish within {} s", timeout.as_secs()));
    };
    if !status.success() {
        return Err(format!("failed ({status})"));
    }
    // A command that exits 0 without reading all its input did not copy it all (`true`, say).
    io.map_err(|e| format!("did not take all the text: {e}"))
}

/// Waits for `child` until `deadline`, then kills it.
fn wait_until(child: &mut Child, deadline: Instant) -> Result<ExitStatus, String> {
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Ok(status),
            Ok(None) if Instant::now() >= deadline => {
                return Err(kill(child, "did not finish in time".to_owned()));
            }
            Ok(None) => thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(kill(child, format!("cannot wait for it: {e}"))),
        }
    }
}

/// Kills and reaps `child` (`sh -c` execs a simple command, so this reaches the command
/// itself) and passes `why` on.
fn kill(child: &mut Child, why: String) -> String {
    let _ = child.kill();
    let _ = child.wait();
    why
}
