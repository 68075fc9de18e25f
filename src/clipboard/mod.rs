//! Copy and paste: one long-lived [`Clipboard`] handle that tries, in order, the system
//! clipboard (arboard: Wayland, X11, macOS, Windows), OSC 52 (the terminal's clipboard, which
//! reaches the operator's machine over SSH and through tmux), a clipboard command (`wl-copy`,
//! `xclip`, `pbcopy`, or one from the config) and, when nothing else works, a file in the data
//! directory. Every copy returns a [`CopyReport`] that says which one took the text, so the
//! status bar never claims a copy that did not happen.
//!
//! On Linux the system clipboard is owned by a process and empties when it exits; a detached
//! helper ([`hold_from_stdin`], run as `crosstalk __hold-clipboard`) keeps the text pasteable
//! after the app exits.

mod command;
mod env;
mod hold;
mod osc52;
#[cfg(test)]
mod tests;
pub mod watch;

pub use env::Env;
#[cfg(test)]
use hold::HOLD_SUBCOMMAND;
pub(crate) use hold::hold_from_stdin;
pub(crate) use osc52::{DEFAULT_OSC52_WARN_BYTES, osc52_sequence};

use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// `[clipboard]` in `config.toml`: how copies leave the app and how pastes come in.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ClipboardConfig {
    /// Where copies go first. `auto`: the system clipboard when the session is local and has a
    /// display, OSC 52 when it is remote or has none. The other values force a starting point;
    /// a failure still falls down the chain (system → OSC 52 → command → file).
    pub method: Method,
    /// Copy command, run through `sh -c` with the text on stdin (e.g.
    /// `"xclip -selection clipboard"`). Unset: `wl-copy` under Wayland, `xclip`/`xsel` under
    /// X11, `pbcopy` on macOS, whichever is on `PATH`.
    pub command: Option<String>,
    /// Paste command, run through `sh -c`, printing the clipboard on stdout. Unset:
    /// `wl-paste --no-newline`, `xclip -selection clipboard -o`, `xsel`, `pbpaste` likewise.
    pub paste_command: Option<String>,
    /// An OSC 52 copy whose escape sequence is longer than this many bytes carries a warning
    /// in the status bar, because many terminals silently drop long ones (see
    /// [`DEFAULT_OSC52_WARN_BYTES`]).
    pub osc52_warn_bytes: usize,
}

impl Default for ClipboardConfig {
    fn default() -> Self {
        ClipboardConfig {
            method: Method::Auto,
            command: None,
            paste_command: None,
            osc52_warn_bytes: DEFAULT_OSC52_WARN_BYTES,
        }
    }
}

/// A way to copy: chosen in the config (`auto` only there) and named in each [`CopyReport`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Pick by the session: system clipboard when local with a display, else OSC 52.
    #[default]
    Auto,
    /// The system clipboard through arboard.
    System,
    /// The OSC 52 escape sequence, written to the terminal.
    Osc52,
    /// The configured (or detected) copy command.
    Command,
    /// `clipboard.txt` in the data directory.
    File,
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Method::Auto => "auto",
            Method::System => "system clipboard",
            Method::Osc52 => "OSC 52",
            Method::Command => "clipboard command",
            Method::File => "file",
        })
    }
}

/// Where a copy went, for the status bar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopyReport {
    /// The method that took the text (never [`Method::Auto`]).
    pub method: Method,
    /// Size of the text in bytes.
    pub bytes: usize,
    /// Something the operator should know: an OSC 52 copy too large for many terminals, a
    /// system copy that will not outlive the app, or why a file was used.
    pub warning: Option<String>,
    /// The file written, for [`Method::File`].
    pub file: Option<PathBuf>,
}

impl CopyReport {
    /// One line for the status bar. OSC 52 says "sent", not "copied": the terminal never
    /// confirms, and may have ignored it.
    pub fn status_line(&self) -> String {
        let size = human_size(self.bytes);
        let line = match (self.method, &self.file) {
            (Method::File, Some(path)) => {
                let line = format!("saved {size} to {}", path.display());
                return match &self.warning {
                    Some(why) => format!("{line} ({why})"),
                    None => line,
                };
            }
            (Method::Osc52, _) => format!("sent {size} to the terminal via OSC 52"),
            (Method::Command, _) => format!("copied {size} with the clipboard command"),
            _ => format!("copied {size} to the system clipboard"),
        };
        match &self.warning {
            Some(warning) => format!("{line} — {warning}"),
            None => line,
        }
    }
}

/// `1 byte`, `512 bytes`, `1.2 KiB`, `180 KiB`, `3.4 MiB`.
pub(crate) fn human_size(bytes: usize) -> String {
    const KIB: f64 = 1024.0;
    let b = bytes as f64;
    match bytes {
        1 => "1 byte".to_owned(),
        0..1024 => format!("{bytes} bytes"),
        1024..10_240 => format!("{:.1} KiB", b / KIB),
        10_240..1_048_576 => format!("{:.0} KiB", b / KIB),
        _ => format!("{:.1} MiB", b / (KIB * KIB)),
    }
}

/// Why a copy or the hold helper failed.
#[derive(Debug, thiserror::Error)]
pub enum ClipboardError {
    /// Every method in the chain failed, the file fallback included.
    #[error("nothing could take the copy: {}", describe(.0))]
    AllFailed(Vec<(Method, String)>),
    /// The hold helper could not read the text from its stdin.
    #[error("cannot read the text to hold from stdin: {0}")]
    Stdin(#[source] std::io::Error),
    /// The hold helper could not set the system clipboard.
    #[error("system clipboard: {0}")]
    System(#[source] arboard::Error),
}

fn describe(failures: &[(Method, String)]) -> String {
    let parts: Vec<String> = failures
        .iter()
        .map(|(m, why)| format!("{m}: {why}"))
        .collect();
    parts.join("; ")
}

/// The app's one clipboard handle: keeps the arboard connection and the hold helper for as
/// long as the app runs.
pub struct Clipboard {
    config: ClipboardConfig,
    env: Env,
    data_dir: PathBuf,
    /// Opened on first use and kept: on X11 and Wayland the handle serves the copied text to
    /// other programs, so a dropped handle would empty the clipboard.
    system: Option<arboard::Clipboard>,
    /// Hold helpers started by this handle, so they are reaped (no zombies) and an older one
    /// cannot re-take the clipboard after a newer copy.
    holders: Vec<std::process::Child>,
    /// What this handle copied, so a clipboard watch never takes it for new input.
    own: watch::OwnCopies,
    /// The last system copy, not yet handed to a hold helper: this process serves it while
    /// it runs, and hands it over when the handle is dropped (see [`Clipboard::hand_over`]).
    unheld: Option<String>,
}

impl Drop for Clipboard {
    fn drop(&mut self) {
        self.hand_over();
    }
}

impl fmt::Debug for Clipboard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Clipboard")
            .field("config", &self.config)
            .field("env", &self.env)
            .field("data_dir", &self.data_dir)
            .field("system_open", &self.system.is_some())
            .field("holders", &self.holders.len())
            .finish_non_exhaustive()
    }
}

impl Clipboard {
    /// A handle for `config`, in `env`; the file fallback writes `<data_dir>/clipboard.txt`.
    /// Opens nothing yet.
    pub fn new(config: ClipboardConfig, env: Env, data_dir: PathBuf) -> Clipboard {
        Clipboard {
            config,
            env,
            system: None,
            holders: Vec::new(),
            own: watch::OwnCopies::shared(data_dir.join("own-copies")),
            data_dir,
            unheld: None,
        }
    }

    /// This handle with its own copies remembered in `file` (the state directory's
    /// `own-copies`, shared by the app and the clipboard watch).
    pub fn own_copies_in(mut self, file: PathBuf) -> Clipboard {
        self.own = watch::OwnCopies::shared(file);
        self
    }

    /// This handle with its own copies remembered in memory only: a companion on the
    /// operator's machine writes nothing there but its spool.
    pub(crate) fn own_copies_in_memory(mut self) -> Clipboard {
        self.own = watch::OwnCopies::default();
        self
    }

    /// The record of this handle's own copies, for a [`watch::Watcher`].
    pub(crate) fn own_copies(&self) -> watch::OwnCopies {
        self.own.clone()
    }

    /// A reader of the clipboard for another thread (the watch): the same way [`paste`]
    /// reads (arboard, then the paste command), with a connection of its own.
    ///
    /// [`paste`]: Clipboard::paste
    pub fn reader(&self) -> Reader {
        Reader {
            config: self.config.clone(),
            env: self.env.clone(),
            system: None,
        }
    }

    /// The file the last-resort fallback writes.
    pub(crate) fn fallback_file(&self) -> PathBuf {
        self.data_dir.join("clipboard.txt")
    }

    /// The methods a copy tries, in order.
    fn chain(&self) -> &'static [Method] {
        use Method::*;
        match self.config.method {
            // Remote: this machine's clipboard is useless to the operator. No display: arboard
            // cannot work. Either way the terminal is the way out.
            Auto if self.env.is_remote() || !self.env.has_display() => &[Osc52, Command, File],
            Auto | System => &[System, Osc52, Command, File],
            Osc52 => &[Osc52, Command, File],
            Command => &[Command, File],
            File => &[File],
        }
    }

    /// Copies `text` by the first method that works; OSC 52 sequences go to `osc52_out` (the
    /// terminal). The error lists every method tried and why each failed.
    pub fn copy(
        &mut self,
        text: &str,
        osc52_out: &mut dyn Write,
    ) -> Result<CopyReport, ClipboardError> {
        hold::reap(&mut self.holders);
        // Recorded before the copy: a watch reading the clipboard right after it already
        // knows the text is ours.
        self.own.record(text);
        let mut failures: Vec<(Method, String)> = Vec::new();
        for &method in self.chain() {
            let attempt = match method {
                Method::System => self.copy_system(text).map(|w| (w, None)),
                Method::Osc52 => self.copy_osc52(text, osc52_out).map(|w| (w, None)),
                Method::Command => self.copy_command(text).map(|()| (None, None)),
                Method::File | Method::Auto => self.copy_file(text).map(|path| {
                    // A forced `file` is a choice, not a fallback: no excuse needed then.
                    let why = (!failures.is_empty()).then(|| "no clipboard available".to_owned());
                    (why, Some(path))
                }),
            };
            match attempt {
                Ok((warning, file)) => {
                    tracing::debug!(%method, bytes = text.len(), ?failures, "clipboard copy");
                    return Ok(CopyReport {
                        method,
                        bytes: text.len(),
                        warning,
                        file,
                    });
                }
                Err(why) => {
                    tracing::debug!(%method, %why, "clipboard method failed");
                    failures.push((method, why));
                }
            }
        }
        tracing::warn!(?failures, "clipboard copy failed");
        Err(ClipboardError::AllFailed(failures))
    }

    fn arboard(&mut self) -> Result<&mut arboard::Clipboard, String> {
        if !self.env.system_clipboard {
            return Err("system clipboard disabled".to_owned());
        }
        // Not cached on failure: arboard documents that opening may be retried.
        if self.system.is_none() {
            self.system = Some(arboard::Clipboard::new().map_err(|e| e.to_string())?);
        }
        self.system
            .as_mut()
            .ok_or_else(|| "system clipboard not open".to_owned())
    }

    /// The system clipboard. This process serves the text for as long as it runs; a hold
    /// helper takes over only when the handle is dropped ([`Clipboard::hand_over`]). A helper
    /// started at every copy would take the clipboard some milliseconds later, and when the
    /// operator copied something else meanwhile (the next window's answer, right after a
    /// hop) it would put the stale text back over theirs.
    fn copy_system(&mut self, text: &str) -> Result<Option<String>, String> {
        self.arboard()?.set_text(text).map_err(|e| e.to_string())?;
        // Helpers of earlier copies quit when this one took the clipboard; reap them.
        hold::reap(&mut self.holders);
        self.unheld = Some(text.to_owned());
        Ok(None)
    }

    /// Hands the last system copy to a hold helper, so it stays pasteable after this process
    /// ends — when it is still what the clipboard holds: a later copy by another program is
    /// never overwritten.
    pub(crate) fn hand_over(&mut self) {
        let Some(text) = self.unheld.take() else {
            return;
        };
        let Some(system) = self.system.as_mut() else {
            return;
        };
        match system.get_text() {
            Ok(now) if watch::digest(&now) == watch::digest(&text) => {}
            _ => return,
        }
        if let Err(e) = hold::spawn(self.env.hold_command.as_deref(), &mut self.holders, &text) {
            tracing::warn!(error = %e, "clipboard hold helper failed: the copy ends with this process");
        }
    }

    fn copy_osc52(&mut self, text: &str, out: &mut dyn Write) -> Result<Option<String>, String> {
        if !self.env.terminal {
            return Err("output is not a terminal".to_owned());
        }
        if self.env.tmux.is_some() {
            tracing::debug!("OSC 52 inside tmux: reaches the clipboard with `set-clipboard on`");
        }
        let sequence = osc52_sequence(text);
        out.write_all(sequence.as_bytes())
            .and_then(|()| out.flush())
            .map_err(|e| e.to_string())?;
        Ok(osc52::size_warning(
            sequence.len(),
            self.config.osc52_warn_bytes,
        ))
    }

    fn copy_command(&mut self, text: &str) -> Result<(), String> {
        let cmd = match &self.config.command {
            Some(cmd) => cmd.clone(),
            None => command::default_copy(&self.env)
                .ok_or("none configured and none found on PATH")?
                .to_owned(),
        };
        command::run(
            &self.env,
            &cmd,
            Some(text.as_bytes().to_vec()),
            command::TIMEOUT,
        )
        .map(drop)
        .map_err(|e| format!("`{cmd}`: {e}"))
    }

    fn copy_file(&mut self, text: &str) -> Result<PathBuf, String> {
        let path = self.fallback_file();
        write_private(&path, text.as_bytes()).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(path)
    }

    /// Text on the system clipboard: arboard, then the paste command. `None` when nothing can
    /// be read (remote session or no display, unless `method = "system"` or a paste command is
    /// configured) or the clipboard is empty; the app then offers its paste box.
    pub fn paste(&mut self) -> Option<String> {
        if self.env.system_clipboard
            && self.system.is_none()
            && reads_locally(&self.config, &self.env)
        {
            // Opened here so a later copy serves from the same handle.
            let _ = self.arboard();
        }
        match read(&self.config, &self.env, self.system.as_mut()) {
            Ok(text) => text,
            Err(why) => {
                tracing::debug!(%why, "clipboard read failed");
                None
            }
        }
    }
}

/// Reads the clipboard on a thread of its own (see [`Clipboard::reader`]).
pub struct Reader {
    config: ClipboardConfig,
    env: Env,
    system: Option<arboard::Clipboard>,
}

impl fmt::Debug for Reader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reader")
            .field("config", &self.config)
            .field("env", &self.env)
            .field("system_open", &self.system.is_some())
            .finish()
    }
}

impl Reader {
    /// Whether a clipboard can be read here at all; why not, in words for the operator.
    pub fn reachable(&self) -> Result<(), String> {
        if reads_locally(&self.config, &self.env) || self.config.paste_command.is_some() {
            return Ok(());
        }
        Err(if self.env.is_remote() {
            "no clipboard reachable: this is an SSH session, and the clipboard here is not the operator's (set [clipboard] paste_command to read one anyway)".into()
        } else {
            "no clipboard reachable: no display (DISPLAY and WAYLAND_DISPLAY are unset); run it in a desktop session, or set [clipboard] paste_command".into()
        })
    }

    /// The clipboard's text (`None`: empty or not text). An error means it could not be
    /// read at all.
    pub fn read(&mut self) -> Result<Option<String>, String> {
        self.reachable()?;
        if self.env.system_clipboard
            && self.system.is_none()
            && reads_locally(&self.config, &self.env)
        {
            match arboard::Clipboard::new() {
                Ok(c) => self.system = Some(c),
                Err(e) => tracing::debug!(%e, "system clipboard not open"),
            }
        }
        read(&self.config, &self.env, self.system.as_mut())
    }
}

/// Whether the clipboard of this machine is the operator's: local with a display, or forced.
fn reads_locally(config: &ClipboardConfig, env: &Env) -> bool {
    config.method == Method::System || (!env.is_remote() && env.has_display())
}

/// The one read path of [`Clipboard::paste`] and [`Reader::read`]: arboard when the session
/// is local, then the paste command. `Ok(None)`: empty or not text.
fn read(
    config: &ClipboardConfig,
    env: &Env,
    system: Option<&mut arboard::Clipboard>,
) -> Result<Option<String>, String> {
    let local = reads_locally(config, env);
    let mut why = None;
    if let (true, Some(cb)) = (local && env.system_clipboard, system) {
        match cb.get_text() {
            Ok(text) if !text.is_empty() => return Ok(Some(text)),
            Ok(_) => return Ok(None),
            // Empty, or something other than text (an image): nothing to read, and asking
            // the paste command would find the same.
            Err(arboard::Error::ContentNotAvailable) => return Ok(None),
            Err(e) => why = Some(e.to_string()),
        }
    }
    let cmd = match &config.paste_command {
        Some(cmd) => cmd.clone(),
        // The defaults read this machine's clipboard: only worth it when that is local.
        None if local => match command::default_paste(env) {
            Some(c) => c.to_owned(),
            None => {
                return match why {
                    Some(w) => Err(format!("system clipboard: {w}")),
                    None => Ok(None),
                };
            }
        },
        None => return Ok(None),
    };
    match command::run(env, &cmd, None, command::TIMEOUT) {
        Ok(bytes) if !bytes.is_empty() => Ok(Some(String::from_utf8_lossy(&bytes).into_owned())),
        Ok(_) => Ok(None),
        Err(e) => Err(format!("`{cmd}`: {e}")),
    }
}

/// Writes `bytes` to `path`, creating the directory; readable by the owner only where that
/// exists, since copied envelopes can be private.
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}
