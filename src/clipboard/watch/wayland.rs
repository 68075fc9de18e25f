//! Wayland: a compositor with the data-control protocol (`ext-data-control-v1`, or
//! wlroots' `zwlr-data-control-v1`) sends a `selection` event with each copy, and its offer
//! is read at once, before the next copy replaces it. wl-clipboard-rs's [`Watcher`] speaks
//! the protocol (arboard reads and copies through the same crate). Compositors without
//! data-control (GNOME's) fail to open here; the watch then tries X11 (XWayland), then polls.

use std::time::{Duration, Instant};

use wl_clipboard_rs::paste::{MimeType, Seat, select_mime_type};
use wl_clipboard_rs::watch::{CancelHandle, ClipboardEvent, ClipboardType, Watcher};

use super::poller::{Contents, Events, Waits};

/// How long the program that copied gets to write its text into the pipe.
const ANSWER_WAIT: Duration = Duration::from_secs(2);

/// A connection to the compositor that hears of every copy.
pub(super) struct Wayland {
    watcher: Watcher,
}

impl Wayland {
    /// Connects to the compositor of `WAYLAND_DISPLAY`; with the handle that ends a wait in
    /// [`Events::next`] from another thread. An error (no data-control) says why.
    pub(super) fn open() -> Result<(Wayland, CancelHandle), String> {
        let watcher =
            Watcher::new(ClipboardType::Regular, Seat::Unspecified).map_err(|e| e.to_string())?;
        let cancel = watcher.cancel_handle();
        Ok((Wayland { watcher }, cancel))
    }

    /// Waits for the next copy (the first call: what the clipboard holds now) and reads its
    /// text at once. `Ok(None)`: the wait was cancelled. An error means the connection broke.
    fn next_copy(&mut self) -> Result<Option<Contents>, String> {
        let Some(event) = self.watcher.next_event().map_err(|e| e.to_string())? else {
            return Ok(None);
        };
        let (mime_types, mut offer) = match event {
            ClipboardEvent::Changed {
                mime_types, offer, ..
            } => (mime_types, offer),
            ClipboardEvent::Cleared { .. } => return Ok(Some(Contents::Empty)),
        };
        let Some(mime) = select_mime_type(mime_types, MimeType::Text) else {
            return Ok(Some(Contents::Empty));
        };
        let pipe = offer.receive(&mime).map_err(|e| e.to_string())?;
        Ok(Some(read_within(pipe, ANSWER_WAIT)))
    }
}

impl Events for Wayland {
    fn waits(&self) -> Waits {
        Waits::WaylandEvents
    }

    /// The compositor sends the current selection first, as the watcher starts.
    fn current(&mut self) -> Result<Contents, String> {
        Ok(self.next_copy()?.unwrap_or(Contents::Empty))
    }

    /// Until the next copy or the cancel handle: the watcher has no timeout of its own.
    fn next(&mut self, _timeout: Duration) -> Result<Option<Contents>, String> {
        self.next_copy()
    }
}

/// Everything written into `pipe` until its writer closes it, unless that takes longer
/// than `wait`: a program that never finishes writing must not stop the watch for good.
fn read_within(mut pipe: impl std::io::Read + std::os::fd::AsFd, wait: Duration) -> Contents {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let deadline = Instant::now() + wait;
    let mut text = Vec::new();
    let mut chunk = [0u8; 64 * 1024];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let Ok(timeout) = Timespec::try_from(left) else {
            return Contents::NoAnswer;
        };
        if left.is_zero() {
            return Contents::NoAnswer;
        }
        let ready = {
            let fd = pipe.as_fd();
            let mut fds = [PollFd::new(&fd, PollFlags::IN)];
            poll(&mut fds, Some(&timeout))
        };
        match ready {
            Ok(0) => return Contents::NoAnswer,
            Ok(_) | Err(rustix::io::Errno::INTR) => {}
            Err(e) => {
                tracing::debug!(%e, "the copied text could not be read");
                return Contents::NoAnswer;
            }
        }
        match pipe.read(&mut chunk) {
            Ok(0) => return Contents::Text(text),
            Ok(n) => text.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                tracing::debug!(%e, "the copied text could not be read");
                return Contents::NoAnswer;
            }
        }
    }
}
