//! Piping an envelope or a thread to a shell command, as mutt's `|` does: the app leaves the
//! alternate screen, the command runs on the real terminal with the text on its standard
//! input, the operator reads its output, and Enter brings the app back with the exit status.

use std::io::{BufRead as _, Write as _};
use std::process::{Command, ExitStatus, Stdio};

use ratatui::crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
};
use ratatui::crossterm::execute;

use crate::app::pipe::PipeRequest;

/// Runs the request on the real terminal and returns what to say on the status line:
/// (whether the command succeeded, the line).
pub fn run(terminal: &mut ratatui::DefaultTerminal, req: &PipeRequest) -> (bool, String) {
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
    let status = spawn(&req.command, &req.input);
    let said = describe(&req.command, &status);
    // The command's output stays on screen until the operator has read it.
    print!(
        "\n[{}]\nPress Enter to return to crosstalk. ",
        crate::sanitize::sanitize_line(&said)
    );
    let _ = std::io::stdout().flush();
    let _ = std::io::stdin().lock().read_line(&mut String::new());
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
pub fn spawn(command: &str, input: &str) -> std::io::Result<ExitStatus> {
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
    let status = child.wait();
    let _ = writer.join();
    status
}

/// `` `cmd` exited 0 ``, `` `cmd` exited with status 3 ``, or why it did not run.
pub fn describe(command: &str, status: &std::io::Result<ExitStatus>) -> String {
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
        let status = spawn(&cmd, "[[A→B v1.1]]\nbody: |\n  hi\n[[END]]\n");
        assert_eq!(
            std::fs::read_to_string(&out).unwrap(),
            "[[A→B v1.1]]\nbody: |\n  hi\n[[END]]\n"
        );
        assert_eq!(describe("x", &status), "`x` exited with status 3");
        // A command that never reads its input still ends, and succeeds.
        let big = "x".repeat(1 << 20);
        let status = spawn("true", &big);
        assert_eq!(describe("true", &status), "`true` exited 0");
    }
}
