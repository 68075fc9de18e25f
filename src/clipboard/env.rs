//! The surroundings the clipboard chain decides by: display, SSH, tmux, `PATH`, terminal.
//! Injected, so tests decide what they are instead of the machine running them.

use std::ffi::OsString;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use super::hold;

/// What the clipboard code knows about its surroundings. [`Env::from_process`] reads the real
/// process; tests build one by hand so no display, terminal or `PATH` leaks in.
#[derive(Debug, Clone, Default)]
pub struct Env {
    /// `$DISPLAY` (X11).
    pub display: Option<OsString>,
    /// `$WAYLAND_DISPLAY`.
    pub wayland_display: Option<OsString>,
    /// `$SSH_TTY`: set in interactive SSH sessions.
    pub ssh_tty: Option<OsString>,
    /// `$SSH_CONNECTION`: set in every SSH session, also without a tty.
    pub ssh_connection: Option<OsString>,
    /// `$TMUX`: inside tmux, OSC 52 needs `set -s set-clipboard on` there.
    pub tmux: Option<OsString>,
    /// `$PATH`, searched for the default copy and paste commands.
    pub path: Option<OsString>,
    /// Whether the writer given to [`Clipboard::copy`](super::Clipboard::copy) is a terminal;
    /// OSC 52 is never written anywhere else (escape codes in a pipe or file corrupt it).
    pub terminal: bool,
    /// A platform whose clipboard needs no display variable (macOS, Windows).
    pub native_clipboard: bool,
    /// Whether arboard may be called at all. Off in tests: arboard talks to whatever display
    /// the test process happens to have, whatever this `Env` says.
    pub system_clipboard: bool,
    /// Program and arguments that keep a system-clipboard copy alive after the app exits (see
    /// [`hold_from_stdin`](super::hold_from_stdin)); `None` spawns nothing.
    pub hold_command: Option<Vec<OsString>>,
}

impl Env {
    /// The real environment. `terminal` is whether stdout is a terminal; the app overrides it
    /// if it writes OSC 52 elsewhere. `hold_command` is this executable with
    /// [`HOLD_SUBCOMMAND`](super::hold::HOLD_SUBCOMMAND) on platforms whose clipboard dies with its
    /// owner.
    pub(crate) fn from_process() -> Env {
        let var = |name| std::env::var_os(name).filter(|v| !v.is_empty());
        Env {
            display: var("DISPLAY"),
            wayland_display: var("WAYLAND_DISPLAY"),
            ssh_tty: var("SSH_TTY"),
            ssh_connection: var("SSH_CONNECTION"),
            tmux: var("TMUX"),
            path: var("PATH"),
            terminal: std::io::stdout().is_terminal(),
            native_clipboard: cfg!(any(target_os = "macos", windows)),
            system_clipboard: true,
            hold_command: hold::default_hold_command(),
        }
    }

    /// An SSH session: the system clipboard here belongs to the remote machine, not to the
    /// operator, so OSC 52 goes first.
    pub(crate) fn is_remote(&self) -> bool {
        self.ssh_tty.is_some() || self.ssh_connection.is_some()
    }

    /// Whether a system clipboard can exist at all (a display server or a native clipboard).
    pub(crate) fn has_display(&self) -> bool {
        self.native_clipboard || self.display.is_some() || self.wayland_display.is_some()
    }

    /// `name` as an executable file in a `PATH` directory.
    pub(crate) fn find_program(&self, name: &str) -> Option<PathBuf> {
        let path = self.path.as_ref()?;
        std::env::split_paths(path)
            .map(|dir| dir.join(name))
            .find(|p| is_executable(p))
    }
}

fn is_executable(path: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(path) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.is_file() && meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        meta.is_file()
    }
}
