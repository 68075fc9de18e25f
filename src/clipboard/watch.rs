//! Watching the clipboard for envelopes: the operator presses a chat window's Copy button and
//! the envelope lands in the database, no paste needed.
//!
//! The decisions are here and pure ([`Watcher::observe`]): is this text new (its digest
//! differs from the last text seen — the text itself is not kept), is it a copy crosstalk made
//! itself ([`OwnCopies`], filled by [`Clipboard::copy`](super::Clipboard::copy) before the
//! copy happens), does it hold an envelope at all. The reading happens on a thread of its own
//! ([`Poller`]), so neither the app's draw loop nor the CLI's signal handling ever waits on a
//! clipboard owner that is slow to answer. That thread waits for the display server's word of
//! each copy where there is one (`x11.rs`, `wayland.rs`) and polls elsewhere (`poller.rs`).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Deserialize;
use sha2::{Digest as _, Sha256};

use crate::protocol::Options;

mod poller;
#[cfg(all(
    unix,
    not(any(target_os = "macos", target_os = "android", target_os = "emscripten"))
))]
mod wayland;
#[cfg(all(
    unix,
    not(any(target_os = "macos", target_os = "android", target_os = "emscripten"))
))]
mod x11;

pub use poller::Waits;
pub(crate) use poller::{Polled, Poller};

/// The source name watched text is kept under, as `<paste>` is for pastes.
pub(crate) const SOURCE: &str = "<clipboard>";

/// The shortest polling interval accepted: faster polling costs CPU and still misses copies
/// made faster than it; where the display server tells of each copy the watch does not poll.
pub(crate) const MIN_INTERVAL_MS: u64 = 50;

/// `[watch]` in `config.toml`: how the clipboard is watched (`crosstalk watch`, `W`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WatchConfig {
    /// Milliseconds between two looks at the clipboard (at least [`MIN_INTERVAL_MS`]) where
    /// the watch polls: where the display server does not tell of each copy, or with
    /// `events` off.
    pub interval_ms: u64,
    /// Wait for the display server's word of each copy (X11's XFixes, Wayland's
    /// data-control) where it gives one, instead of polling: each copy is read as it is
    /// made, so copies milliseconds apart are all seen (only one replaced before any reader
    /// could ask for it is lost), and the hop does not wait for the next look. Off: always
    /// poll (for a clipboard program that misbehaves, and to compare the two).
    pub events: bool,
    /// Ring the terminal bell when an envelope arrives or an invalid one is found.
    pub bell: bool,
    /// The app starts watching as it opens, as if `W` were pressed (`crosstalk watch`
    /// always watches).
    pub on_start: bool,
}

impl Default for WatchConfig {
    fn default() -> Self {
        WatchConfig {
            interval_ms: 100,
            events: true,
            bell: false,
            on_start: false,
        }
    }
}

impl WatchConfig {
    /// The interval, raised to [`MIN_INTERVAL_MS`].
    pub(crate) fn interval(&self) -> Duration {
        Duration::from_millis(self.interval_ms.max(MIN_INTERVAL_MS))
    }
}

/// The SHA-256 of a clipboard text, line breaks and trailing white space normalized: a
/// terminal or clipboard tool that turns `\n` into `\r\n` or drops the last newline does not
/// make the same text new.
pub(crate) type TextDigest = [u8; 32];

/// The digest of `text` as the watcher compares it.
pub fn digest(text: &str) -> TextDigest {
    let mut h = Sha256::new();
    for line in text.trim_end().lines() {
        h.update(line.trim_end_matches('\r').as_bytes());
        h.update(b"\n");
    }
    h.finalize().into()
}

/// The digests of the last texts crosstalk copied itself, shared between the clipboard
/// handle (which records them) and the watcher (which skips them). A few are kept: the
/// operator may copy several envelopes in a row before the watcher looks.
///
/// With a file (see [`OwnCopies::shared`]) the digests are also written to the data
/// directory, so a `crosstalk watch` in another terminal skips the app's copies too. Only
/// digests are written, never the text.
#[derive(Debug, Clone, Default)]
pub struct OwnCopies {
    mem: Arc<Mutex<VecDeque<TextDigest>>>,
    file: Option<std::path::PathBuf>,
}

/// How many own copies are remembered.
const OWN_COPIES: usize = 16;

impl OwnCopies {
    /// Own copies recorded in memory and in `file` (read by other crosstalk processes).
    pub fn shared(file: std::path::PathBuf) -> OwnCopies {
        OwnCopies {
            mem: Arc::default(),
            file: Some(file),
        }
    }

    /// Remembers `text` as copied by crosstalk.
    pub fn record(&self, text: &str) {
        let d = digest(text);
        let Ok(mut own) = self.mem.lock() else { return };
        own.retain(|x| *x != d);
        own.push_back(d);
        while own.len() > OWN_COPIES {
            own.pop_front();
        }
        // Only into a state directory that exists (the app makes it for its log): a copy
        // never creates folders.
        let file = self
            .file
            .as_deref()
            .filter(|f| f.parent().is_some_and(std::path::Path::is_dir));
        if let Some(file) = file {
            let mut all = read_digests(file);
            all.retain(|x| *x != d);
            all.push(d);
            let keep = all.len().saturating_sub(OWN_COPIES);
            let text: String = all[keep..].iter().map(|d| hex(d) + "\n").collect();
            if let Err(e) = super::write_private(file, text.as_bytes()) {
                tracing::debug!(%e, "own copies not written for other processes");
            }
        }
    }

    /// Whether `d` is one of crosstalk's own copies (this process's, or with a file, any
    /// crosstalk process's).
    pub fn contains(&self, d: &TextDigest) -> bool {
        if self.mem.lock().map(|own| own.contains(d)).unwrap_or(false) {
            return true;
        }
        self.file
            .as_deref()
            .is_some_and(|f| read_digests(f).contains(d))
    }
}

fn hex(d: &TextDigest) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// The digests in `file`, one hex line each; unreadable lines and a missing file are none.
fn read_digests(file: &std::path::Path) -> Vec<TextDigest> {
    let Ok(text) = std::fs::read_to_string(file) else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|l| {
            let l = l.trim();
            if l.len() != 64 {
                return None;
            }
            let mut d = [0u8; 32];
            for (i, b) in d.iter_mut().enumerate() {
                *b = u8::from_str_radix(l.get(2 * i..2 * i + 2)?, 16).ok()?;
            }
            Some(d)
        })
        .collect()
}

/// What the watcher made of one look at the clipboard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    /// Nothing new (the same text as before, or an empty clipboard).
    Same,
    /// crosstalk copied this text itself.
    OwnCopy,
    /// New text without an envelope (chat, code): ignored and not stored.
    NoEnvelope {
        /// Its size.
        bytes: usize,
    },
    /// New text that holds at least one envelope: to be imported.
    Envelopes {
        /// How many envelopes (valid or not) it holds.
        count: usize,
    },
}

/// The watcher's memory: the digest of the last text seen, nothing more.
#[derive(Debug)]
pub struct Watcher {
    last: Option<TextDigest>,
    own: OwnCopies,
    options: Options,
}

impl Watcher {
    /// A watcher that skips `own` copies and reads envelopes with `options`.
    pub fn new(own: OwnCopies, options: Options) -> Watcher {
        Watcher {
            last: None,
            own,
            options,
        }
    }

    /// Takes what the clipboard holds when watching starts as already seen: turning the
    /// watch on imports what is copied from then on, not whatever was copied last week.
    pub fn baseline(&mut self, text: Option<&str>) {
        self.last = text.map(digest);
    }

    /// Judges one look at the clipboard (`None`: empty or not text).
    pub fn observe(&mut self, text: Option<&str>) -> Seen {
        let Some(text) = text.filter(|t| !t.trim().is_empty()) else {
            return Seen::Same;
        };
        let d = digest(text);
        if self.last == Some(d) {
            return Seen::Same;
        }
        self.last = Some(d);
        if self.own.contains(&d) {
            return Seen::OwnCopy;
        }
        let count = envelope_count(text, &self.options);
        if count == 0 {
            Seen::NoEnvelope { bytes: text.len() }
        } else {
            Seen::Envelopes { count }
        }
    }
}

/// How many envelopes `text` holds. A text without a `[[` cannot hold one: chat and code
/// copied all day cost one byte search.
fn envelope_count(text: &str, options: &Options) -> usize {
    if memchr::memmem::find(text.as_bytes(), b"[[").is_none() {
        return 0;
    }
    crate::protocol::extract(text, options).envelopes.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    const ENVELOPE: &str = include_str!("../../assets/examples/v11-request.crosstalk");

    fn watcher() -> (Watcher, OwnCopies) {
        let own = OwnCopies::default();
        (Watcher::new(own.clone(), Options::default()), own)
    }

    #[test]
    fn the_baseline_is_not_new_and_the_same_text_twice_is_new_once() {
        let (mut w, _) = watcher();
        w.baseline(Some(ENVELOPE));
        assert_eq!(w.observe(Some(ENVELOPE)), Seen::Same);
        assert_eq!(w.observe(Some("hello")), Seen::NoEnvelope { bytes: 5 });
        assert_eq!(w.observe(Some("hello")), Seen::Same);
        assert_eq!(w.observe(Some(ENVELOPE)), Seen::Envelopes { count: 1 });
        assert_eq!(w.observe(Some(ENVELOPE)), Seen::Same);
        // Line breaks changed by a terminal do not make it new.
        assert_eq!(w.observe(Some(&ENVELOPE.replace('\n', "\r\n"))), Seen::Same);
        assert_eq!(w.observe(None), Seen::Same);
        assert_eq!(w.observe(Some("  \n")), Seen::Same);
    }

    #[test]
    fn own_copies_are_never_new_input() {
        let (mut w, own) = watcher();
        w.baseline(None);
        own.record(ENVELOPE);
        assert_eq!(w.observe(Some(ENVELOPE)), Seen::OwnCopy);
        // Something else, then the own copy again: still ours.
        assert_eq!(w.observe(Some("x")), Seen::NoEnvelope { bytes: 1 });
        assert_eq!(w.observe(Some(ENVELOPE)), Seen::OwnCopy);
        // Forgotten after enough newer copies.
        for i in 0..OWN_COPIES {
            own.record(&format!("copy {i}"));
        }
        assert_eq!(w.observe(Some("y")), Seen::NoEnvelope { bytes: 1 });
        assert_eq!(w.observe(Some(ENVELOPE)), Seen::Envelopes { count: 1 });
    }

    #[test]
    fn own_copies_reach_other_processes_through_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("own-copies");
        let app = OwnCopies::shared(file.clone());
        app.record(ENVELOPE);
        // Another process: its own handle on the same file.
        let mut w = Watcher::new(OwnCopies::shared(file.clone()), Options::default());
        assert_eq!(w.observe(Some(ENVELOPE)), Seen::OwnCopy);
        for i in 0..OWN_COPIES {
            app.record(&format!("copy {i}"));
        }
        assert_eq!(
            std::fs::read_to_string(&file).unwrap().lines().count(),
            OWN_COPIES
        );
        assert_eq!(w.observe(Some("x")), Seen::NoEnvelope { bytes: 1 });
        assert_eq!(w.observe(Some(ENVELOPE)), Seen::Envelopes { count: 1 });
    }

    #[test]
    fn invalid_envelopes_count_as_envelopes() {
        let (mut w, _) = watcher();
        let broken = "[[A→B v1]]\nbody: |\n  no ids\n[[END]]\n";
        assert_eq!(w.observe(Some(broken)), Seen::Envelopes { count: 1 });
        assert_eq!(
            w.observe(Some("a [[wiki]] link")),
            Seen::NoEnvelope { bytes: 15 }
        );
    }

    #[test]
    fn the_interval_has_a_floor() {
        let c = WatchConfig {
            interval_ms: 1,
            ..WatchConfig::default()
        };
        assert_eq!(c.interval(), Duration::from_millis(MIN_INTERVAL_MS));
    }
}
