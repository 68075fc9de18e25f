//! Standard output for every command, in one place because it decides what reaches a
//! terminal.
//!
//! Several commands print envelopes as they are (`fmt`, `export`, `sign`, `reply`, `error`,
//! `new`): that is their job when the output goes to a file or another program, and those
//! bytes must stay exact. On a terminal the same bytes would be obeyed — an envelope can
//! hold escape sequences that set the clipboard (OSC 52), the window title or clear the
//! screen, and bidi overrides that make text read as something else. So when standard
//! output is a terminal everything written here passes through the sanitizer, and standard
//! error says once, at the end of the command ([`note`]), that something was shown as a
//! placeholder.

use std::io::{BufWriter, IsTerminal, StdoutLock, Write};
use std::sync::atomic::{AtomicUsize, Ordering};

use super::Failure;
use crate::sanitize::Sanitizer;

/// Characters shown as placeholders on the terminal during this command, by every
/// [`Stdout`].
static REPLACED: AtomicUsize = AtomicUsize::new(0);

/// Says on standard error how many characters were shown as placeholders, if any.
pub(super) fn note() {
    let n = REPLACED.load(Ordering::Relaxed);
    if n > 0 {
        let s = if n == 1 { "" } else { "s" };
        eprintln!(
            "note: {n} control character{s} shown as placeholder{s}; redirect to a file for the exact bytes"
        );
    }
}

/// Writes `text` to standard output through a [`Stdout`] of its own.
pub(super) fn write_stdout(text: &str) {
    let mut out = Stdout::new();
    let _ = out.write_all(text.as_bytes());
    if let Err(f) = out.finish() {
        eprintln!("crosstalk: {}", f.message);
    }
}

/// Standard output, sanitized when it is a terminal and exact otherwise.
///
/// A reader that went away (`| head`) ends the process with status 0: it is no error of
/// the input. Other write errors are kept and reported by [`Stdout::finish`].
pub(super) struct Stdout {
    out: BufWriter<StdoutLock<'static>>,
    /// `Some` when standard output is a terminal.
    terminal: Option<Terminal>,
    error: Option<std::io::Error>,
    finished: bool,
}

/// What sanitizing a stream needs to carry from one write to the next.
struct Terminal {
    sanitizer: Sanitizer,
    /// The end of a UTF-8 sequence cut by a write boundary, held until the rest arrives.
    pending: Vec<u8>,
    text: String,
}

impl Stdout {
    /// Standard output, locked for the command's lifetime.
    pub(super) fn new() -> Self {
        let stdout = std::io::stdout();
        let terminal = stdout.is_terminal().then(Terminal::new);
        Stdout {
            out: BufWriter::new(stdout.lock()),
            terminal,
            error: None,
            finished: false,
        }
    }

    /// Flushes, and turns a write error into a failure (exit 2).
    pub(super) fn finish(mut self) -> Result<(), Failure> {
        self.finished = true;
        self.end().map_err(|e| {
            Failure::usage(format!(
                "cannot write to standard output: {e}; check the disk or the output file"
            ))
        })
    }

    fn end(&mut self) -> std::io::Result<()> {
        if let Some(t) = &mut self.terminal
            && !t.pending.is_empty()
        {
            // An incomplete sequence at the very end: not text, shown as U+FFFD.
            let rest = String::from_utf8_lossy(&std::mem::take(&mut t.pending)).into_owned();
            self.emit(rest.as_bytes());
        }
        if self.error.is_none() {
            let r = self.out.flush();
            self.check(r);
        }
        match self.error.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Keeps the first write error; a closed pipe ends the process quietly.
    fn check(&mut self, r: std::io::Result<()>) {
        if let Err(e) = r {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                std::process::exit(0);
            }
            self.error.get_or_insert(e);
        }
    }

    /// Writes bytes to a terminal: decoded as far as they are whole UTF-8, sanitized.
    fn emit(&mut self, buf: &[u8]) {
        let Some(t) = &mut self.terminal else {
            return;
        };
        let mut text = std::mem::take(&mut t.text);
        text.clear();
        REPLACED.fetch_add(t.feed(buf, &mut text), Ordering::Relaxed);
        let r = self.out.write_all(text.as_bytes());
        if let Some(t) = &mut self.terminal {
            t.text = text;
        }
        self.check(r);
    }
}

impl Terminal {
    fn new() -> Self {
        Terminal {
            sanitizer: Sanitizer::default(),
            pending: Vec::new(),
            text: String::new(),
        }
    }

    /// Appends the sanitized text of `buf` to `out`, holding back a UTF-8 sequence cut at
    /// its end until the next call; returns how many characters became placeholders.
    /// Bytes that are not UTF-8 (never written by this program) become U+FFFD.
    fn feed(&mut self, buf: &[u8], out: &mut String) -> usize {
        self.pending.extend_from_slice(buf);
        let mut replaced = 0;
        let mut rest: &[u8] = &self.pending;
        loop {
            match std::str::from_utf8(rest) {
                Ok(s) => {
                    replaced += self.sanitizer.push(s, out);
                    rest = &[];
                    break;
                }
                Err(e) => {
                    let (ok, after) = rest.split_at(e.valid_up_to());
                    // `valid_up_to` bytes are UTF-8 by the error's own contract.
                    let ok = std::str::from_utf8(ok).unwrap_or_default();
                    replaced += self.sanitizer.push(ok, out);
                    match e.error_len() {
                        Some(n) => {
                            out.push('\u{FFFD}');
                            rest = &after[n..];
                        }
                        None => {
                            rest = after;
                            break;
                        }
                    }
                }
            }
        }
        let done = self.pending.len() - rest.len();
        self.pending.drain(..done);
        replaced
    }
}

impl Default for Stdout {
    fn default() -> Self {
        Self::new()
    }
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.error.is_none() {
            if self.terminal.is_some() {
                self.emit(buf);
            } else {
                let r = self.out.write_all(buf);
                self.check(r);
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.error.is_none() {
            let r = self.out.flush();
            self.check(r);
        }
        Ok(())
    }
}

impl Drop for Stdout {
    /// A command that returned early (an error after some output) still flushes what it
    /// wrote.
    fn drop(&mut self) {
        if !self.finished {
            let _ = self.end();
        }
    }
}

/// Prints a value as pretty JSON and a newline on standard output.
pub(super) fn print_json(
    out: &mut Stdout,
    v: &impl serde::Serialize,
) -> Result<(), super::Failure> {
    crate::json::write(out, v)
        .and_then(|()| out.write_all(b"\n").map_err(serde_json::Error::io))
        .map_err(|e| super::Failure::usage(format!("cannot write JSON to standard output: {e}")))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::sanitize::{is_unsafe, sanitize};

    proptest! {
        /// However the bytes are cut into writes, the terminal gets the sanitized whole.
        #[test]
        fn writes_cut_anywhere_print_as_the_whole(
            s in "(\\PC|[\u{1b}\u{7}\t\n\u{9b}\u{202e}\u{200b}é😀]){0,40}",
            cuts in prop::collection::vec(0usize..200, 0..6),
        ) {
            let bytes = s.as_bytes();
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c % (bytes.len() + 1)).collect();
            cuts.sort_unstable();
            let mut t = Terminal::new();
            let mut out = String::new();
            let mut replaced = 0;
            let mut from = 0;
            for cut in cuts.into_iter().chain([bytes.len()]) {
                replaced += t.feed(&bytes[from..cut], &mut out);
                from = cut;
            }
            prop_assert!(t.pending.is_empty());
            prop_assert_eq!(&out, &sanitize(&s));
            prop_assert!(!out.chars().any(is_unsafe));
            let hidden = s.chars().filter(|&c| is_unsafe(c) && c != '\t').count();
            prop_assert_eq!(replaced, hidden);
        }
    }

    #[test]
    fn bytes_that_are_not_utf8_become_replacement_characters() {
        let mut t = Terminal::new();
        let mut out = String::new();
        t.feed(b"a\xffb\xe2\x80", &mut out);
        assert_eq!(out, "a\u{FFFD}b");
        t.feed(b"\xaec", &mut out);
        assert_eq!(out, "a\u{FFFD}b⟨U+202E⟩c");
    }
}
