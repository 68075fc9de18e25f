//! Keeping a copy pasteable after the app exits. On X11 and Wayland the clipboard is not a
//! store: the program that copied serves the text to whoever pastes, and when it exits the
//! text is gone. So each system copy also starts a detached helper, this same executable run
//! as `crosstalk __hold-clipboard`, which takes the text on stdin, becomes the clipboard's
//! owner and serves it until another program copies something, then exits.

use std::ffi::OsString;
use std::process::Child;

use super::ClipboardError;

/// The hidden CLI subcommand that runs [`hold_from_stdin`].
pub(crate) const HOLD_SUBCOMMAND: &str = "__hold-clipboard";

/// Body of `crosstalk __hold-clipboard`: reads all of stdin, puts it on the system clipboard
/// and, on X11 and Wayland, keeps serving it until another program takes the clipboard over
/// or the display goes away. Elsewhere the clipboard keeps text by itself, so this
/// sets it and returns.
pub(crate) fn hold_from_stdin() -> Result<(), ClipboardError> {
    use std::io::Read as _;
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .map_err(ClipboardError::Stdin)?;
    let mut clipboard = arboard::Clipboard::new().map_err(ClipboardError::System)?;
    // The helper starts a few (under load, a hundred) milliseconds after the copy it keeps.
    // If another program copied meanwhile (the operator copying in a chat window right after
    // a hop), taking the clipboard now would put stale text back over theirs: only text that
    // is still ours, or a clipboard left empty by a copier that already exited, is taken.
    if let Ok(now) = clipboard.get_text()
        && !still_ours(&now, &text)
    {
        return Ok(());
    }
    #[cfg(all(
        unix,
        not(any(target_os = "macos", target_os = "android", target_os = "emscripten"))
    ))]
    {
        // Served by arboard's thread while this handle lives. Asking the clipboard every
        // half second, rather than waiting for arboard to report the selection lost, also
        // ends the helper when its display goes away (a waiting helper would outlive it).
        clipboard
            .set_text(text.clone())
            .map_err(ClipboardError::System)?;
        loop {
            std::thread::sleep(HOLD_CHECK);
            match clipboard.get_text() {
                Ok(now) if still_ours(&now, &text) => {}
                _ => return Ok(()),
            }
        }
    }
    #[cfg(not(all(
        unix,
        not(any(target_os = "macos", target_os = "android", target_os = "emscripten"))
    )))]
    {
        clipboard.set_text(text).map_err(ClipboardError::System)
    }
}

/// How often a hold helper checks that the clipboard still holds its text.
#[cfg(all(
    unix,
    not(any(target_os = "macos", target_os = "android", target_os = "emscripten"))
))]
const HOLD_CHECK: std::time::Duration = std::time::Duration::from_millis(500);

/// Whether the clipboard's text `now` is the `copied` text (a clipboard may drop a final
/// newline or turn line ends into CRLF on the way).
fn still_ours(now: &str, copied: &str) -> bool {
    super::watch::digest(now) == super::watch::digest(copied)
}

/// `[current_exe, __hold-clipboard]` where the clipboard dies with its owner (arboard's Linux
/// backend: Linux and the BSDs); `None` elsewhere or when the executable cannot be found.
pub(super) fn default_hold_command() -> Option<Vec<OsString>> {
    if cfg!(all(
        unix,
        not(any(
            target_os = "macos",
            target_os = "android",
            target_os = "emscripten"
        ))
    )) {
        let exe = std::env::current_exe().ok()?;
        Some(vec![exe.into_os_string(), HOLD_SUBCOMMAND.into()])
    } else {
        None
    }
}

/// Forgets helpers that have exited, reaping them.
pub(super) fn reap(holders: &mut Vec<Child>) {
    holders.retain_mut(|child| matches!(child.try_wait(), Ok(None)));
}

/// Starts `command` as the new holder of `text`, after stopping older ones. Called right after
/// this process set the clipboard, which already told older helpers to quit; stopping them
/// here covers one that had not taken the clipboard yet and would take it back with stale
/// text. `None` means no helper (tests, platforms that need none): nothing to do.
pub(super) fn spawn(
    command: Option<&[OsString]>,
    holders: &mut Vec<Child>,
    text: &str,
) -> Result<(), String> {
    for mut old in holders.drain(..) {
        let _ = old.kill();
        let _ = old.wait();
    }
    let Some((program, args)) = command.and_then(|c| c.split_first()) else {
        return Ok(());
    };
    spawn_detached(program, args, text).map(|child| holders.push(child))
}

#[cfg(unix)]
fn spawn_detached(program: &OsString, args: &[OsString], text: &str) -> Result<Child, String> {
    use std::io::Write as _;
    use std::os::unix::process::CommandExt as _;
    use std::process::{Command, Stdio};

    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        // Its own process group, so Ctrl-C in the terminal does not reach it; `/` as its
        // directory, so it pins no mount point while it waits.
        .process_group(0)
        .current_dir("/")
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", program.to_string_lossy()))?;
    // The helper reads all of stdin before anything else, so this write does not block for
    // long; closing stdin (the drop) tells it the text is complete.
    let written = match child.stdin.take() {
        Some(mut stdin) => stdin.write_all(text.as_bytes()).map_err(|e| e.to_string()),
        None => Err("no stdin".to_owned()),
    };
    match written {
        Ok(()) => Ok(child),
        Err(e) => {
            let _ = child.kill();
            let _ = child.wait();
            Err(format!("cannot hand the text to the helper: {e}"))
        }
    }
}

#[cfg(not(unix))]
fn spawn_detached(_program: &OsString, _args: &[OsString], _text: &str) -> Result<Child, String> {
    Err("not needed on this platform".to_owned())
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_later_copy_is_not_ours() {
        assert!(super::still_ours("a\nb\n", "a\nb\n"));
        assert!(
            super::still_ours("a\r\nb", "a\nb\n"),
            "line ends and a final newline"
        );
        assert!(!super::still_ours(
            "what the operator copied next",
            "a\nb\n"
        ));
    }
}
