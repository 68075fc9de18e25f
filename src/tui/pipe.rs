//! Piping an envelope or a thread to a shell command, as mutt's `|` does: the app leaves the
//! alternate screen, the command runs on the real terminal with the text on its standard
//! input, the operator reads its output, and Enter brings the app back with the exit status.

use std::io::{BufRead as _, Write as _};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::RecvTimeoutError;

use ratatui::crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
};
use ratatui::crossterm::execute;

use crate::app::pipe::PipeRequest;

/// Runs the request on the real terminal and returns what to say on the status line:
/// (whether the command succeeded, the line).
pub(super) fn run(
    terminal: &mut ratatui::DefaultTerminal,
    req: &PipeRequest,
    stop: &AtomicUsize,
) -> (bool, String) {
    let _ = execute!(
        std::io::stdout(),
        DisableMouseCapture,
        DisableBracketedPaste
    );
    ratatui::restore();
    // The ids come from an envelope: never printed raw.
    println!(
        "crosstalk: {} | {}\n",
        crate::sanitize::sanitize_line(&req.what),
        crate::sanitize::sanitize_line(&req.command)
    );
    // The command runs on the terminal as it is, so C-c and C-\ send their signals to it
    // and to this process alike: caught here, they end the command only (it does not
    // inherit the handler), and the app comes back as after any other ending.
    let caught = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let handlers: Vec<_> = [signal_hook::consts::SIGINT, signal_hook::consts::SIGQUIT]
        .into_iter()
        .filter_map(|sig| signal_hook::flag::register(sig, caught.clone()).ok())
        .collect();
    let status = spawn(&req.command, &req.input, stop);
    let said = describe(&req.command, &status);
    // The command's output stays on screen until the operator has read it, unless the app
    // is asked to end (SIGTERM, SIGHUP): then nobody may be there to press Enter.
    if stop.load(Ordering::Relaxed) == 0 {
        print!(
            "\n[{}]\nPress Enter to return to crosstalk. ",
            crate::sanitize::sanitize_line(&said)
        );
        let _ = std::io::stdout().flush();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = std::io::stdin().lock().read_line(&mut String::new());
            let _ = tx.send(());
        });
        while stop.load(Ordering::Relaxed) == 0
            && rx.recv_timeout(WAIT_STEP) == Err(RecvTimeoutError::Timeout)
        {}
    }
    for id in handlers {
        signal_hook::low_level::unregister(id);
    }
    *terminal = ratatui::init();
    let _ = execute!(std::io::stdout(), EnableBracketedPaste, EnableMouseCapture);
    (matches!(status, Ok(s) if s.success()), said)
}

/// Runs `command` with `sh -c`, `input` on its standard input (written from another thread,
/// so a command that does not read it cannot block the app; a command that stops reading
/// early is not an error), its output on the terminal.
pub(super) fn spawn(command: &str, input: &str, stop: &AtomicUsize) -> std::io::Result<ExitStatus> {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(command)
        .stdin(Stdio::piped())
        .spawn()?;
    let stdin = child.stdin.take();
    let input = input.to_string();
    let writer = std::thread::spawn(move || {
        if let Some(mut stdin) = stdin {
            let _ = stdin.write_all(input.as_bytes());
        }
    });
    // Waited for in steps, so that the app asked to end ends the command with it.
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Ok(status),
            Ok(None) if stop.load(Ordering::Relaxed) != 0 => {
                let _ = child.kill();
                break child.wait();
            }
            Ok(None) => std::thread::sleep(WAIT_STEP),
            Err(e) => break Err(e),
        }
    };
    let _ = writer.join();
    status
}

/// How often a running command, and the wait for Enter after it, look whether the app is
/// asked to end.
const WAIT_STEP: std::time::Duration = std::time::Duration::from_millis(50);

/// `` `cmd` exited 0 ``, `` `cmd` exited with status 3 ``, or why it did not run.
pub(super) fn describe(command: &str, status: &std::io::Result<ExitStatus>) -> String {
    match status {
        Ok(s) => match s.code() {
            Some(0) => format!("`{command}` exited 0"),
            Some(n) => format!("`{command}` exited with status {n}"),
            None => format!("`{command}` was ended by a signal ({s})"),
        },
        Err(e) => format!("`{command}` could not run: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_reaches_standard_input_and_the_status_comes_back() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let cmd = format!("cat > '{}'; exit 3", out.display());
        let go = AtomicUsize::new(0);
        let status = spawn(&cmd, "[[A→B v1.1]]\nbody: |\n  hi\n[[END]]\n", &go);
        assert_eq!(
            std::fs::read_to_string(&out).unwrap(),
            "[[A→B v1.1]]\nbody: |\n  hi\n[[END]]\n"
        );
        assert_eq!(describe("x", &status), "`x` exited with status 3");
        // A command that never reads its input still ends, and succeeds.
        let big = "x".repeat(1 << 20);
        let status = spawn("true", &big, &go);
        assert_eq!(describe("true", &status), "`true` exited 0");
        // Asked to end, the app ends the command with it.
        let stop = AtomicUsize::new(15);
        let start = std::time::Instant::now();
        let status = spawn("sleep 30", "", &stop);
        assert!(start.elapsed() < std::time::Duration::from_secs(5));
        assert!(
            describe("sleep 30", &status).contains("signal"),
            "{status:?}"
        );
    }
}
