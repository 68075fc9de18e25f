//! The status line says what the last action did, and only while it is about what is on
//! screen. A line such as "copied …" or "imported …" left up after the operator has moved on
//! reads as if it were about the thread now shown; so a message stays until the operator goes
//! somewhere else — another thread or message selected, a view opened or closed (help, the
//! queue, a preview, the composer) — and is cleared then, unless the action that moved said
//! something of its own. Errors and warnings follow the same rule: they stay in sight while
//! the operator stays where they happened, and `:messages` keeps every one of them.

use std::mem::Discriminant;

use super::popups::popup::Popup;
use super::{App, Level};

/// Where the operator is, as far as the status line cares: what is selected and which view
/// is open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Place {
    thread: Option<String>,
    message: Option<String>,
    popup: Option<Discriminant<Popup>>,
    composing: bool,
}

impl App {
    /// Sets the status line; every message goes through here, so an action's own message is
    /// told apart from one left by an earlier action (see [`App::clear_stale_status`]).
    pub(crate) fn set_status(&mut self, status: (Level, String)) {
        self.status = status;
        self.said = self.said.wrapping_add(1);
    }

    /// Where the operator is now.
    pub(super) fn place(&self) -> Place {
        Place {
            thread: self.list.selected_id().map(str::to_string),
            message: self.selected_id().map(str::to_string),
            popup: self.popup.as_ref().map(std::mem::discriminant),
            composing: self.composer.is_some(),
        }
    }

    /// After an action: the status line is cleared when the operator moved from `before` and
    /// the action said nothing itself (`said` is the count of messages before it).
    pub(super) fn clear_stale_status(&mut self, before: &Place, said: u64) {
        if self.said == said && !self.status.1.is_empty() && self.place() != *before {
            self.status = (Level::Info, String::new());
        }
    }
}
