//! OSC 52: the escape sequence that asks the terminal to put text on its clipboard. It is the
//! one way out of an SSH session, because the terminal runs on the operator's machine.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use super::human_size;

/// Default for `osc52_warn_bytes`: 100 000 bytes of escape sequence. Terminals cap OSC 52 very
/// differently and drop what is too long without a word: hterm (ChromeOS) stops at 100 000
/// bytes, kitty's ordinary limit is about 256 KiB, tmux keeps sequences up to its input buffer
/// (1 MiB by default), xterm takes a lot, and some (Termux, older st) give up at a few KiB or
/// less. Past 100 000 the copy is likely to be lost somewhere, so the status bar says so.
pub(crate) const DEFAULT_OSC52_WARN_BYTES: usize = 100_000;

/// `ESC ] 52 ; c ; <base64 of text> BEL`: sets the clipboard (`c`) of the terminal that reads it.
///
/// Never wrapped in tmux's DCS passthrough (`ESC P tmux; …`): with `set -s set-clipboard on`,
/// tmux reads a plain OSC 52 itself, keeps the text as a paste buffer (`tmux show-buffer`) and
/// forwards it to the outer terminal; passthrough would skip the buffer and needs
/// `allow-passthrough` besides. BEL ends it rather than `ESC \`, as more terminals accept it.
pub(crate) fn osc52_sequence(text: &str) -> String {
    format!("\x1b]52;c;{}\x07", STANDARD.encode(text))
}

/// The warning for a sequence of `sequence_len` bytes, when over `warn_bytes`.
pub(super) fn size_warning(sequence_len: usize, warn_bytes: usize) -> Option<String> {
    (sequence_len > warn_bytes).then(|| {
        format!(
            "{} encoded is more than many terminals accept",
            human_size(sequence_len)
        )
    })
}
