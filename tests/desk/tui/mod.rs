//! The real binary in a real terminal: a tmux server per test, and for the clipboard flows a
//! real X clipboard under Xvfb.

mod attachments;
mod companion;
mod delivery;
mod flows;
mod hop;
mod http;
mod integrity;
mod next;
mod poll;
mod primer;
mod privacy;
mod reading;
mod refresh;
mod trust;
mod watch_xvfb;
mod writing;
