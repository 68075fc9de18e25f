//! The popups that are read and scrolled — help, `:messages` and the keys (`K`) — and how a
//! move or a wheel notch scrolls them.

use crate::app::panes::layout::{keys_area, popup_page};
use crate::app::panes::list_move::step;
use crate::app::popups::popup::Popup;
use crate::app::{Action, App};

impl App {
    /// A move in a scrolled popup: a list move by pages, a wheel notch by rows.
    pub(in crate::app) fn scroll_popup_action(&mut self, action: Action) {
        let Some(popup) = self.popup.as_mut() else {
            return;
        };
        match popup {
            Popup::Keys { keys, scroll } => {
                // A key takes two rows or three: a page of keys is half the rows in sight.
                let page = (popup_page(keys_area(self.size)) / 2).max(1);
                scroll_by(scroll, &action, page, 1, keys.len().saturating_sub(1));
            }
            Popup::Messages { scroll } => {
                let (area, lines) =
                    crate::app::popups::messages::messages_layout(&self.messages, self.size);
                let last = lines
                    .len()
                    .saturating_sub(crate::app::panes::layout::inner_height(area));
                scroll_by(scroll, &action, popup_page(area), 3, last);
            }
            Popup::Help { .. } if matches!(action, Action::Input(_)) => self.help_typed(action),
            Popup::Help { scroll, filter } => {
                let page = popup_page(crate::app::popups::help::help_area(self.size));
                let last = crate::app::popups::help::help_last_scroll(
                    &self.keymap,
                    self.size,
                    filter.as_deref(),
                );
                scroll_by(scroll, &action, page, 3, last);
            }
            _ => {}
        }
    }
}

/// Moves a scrolled popup's first row `scroll` as `action` says: a list move (a page being
/// `page` rows) or `notch` rows a wheel notch; never past `last`.
fn scroll_by(scroll: &mut usize, action: &Action, page: usize, notch: isize, last: usize) {
    let delta = match action {
        Action::Scroll(_, _, d) => notch * *d as isize,
        a => step(a, page as isize).unwrap_or(0),
    };
    *scroll = scroll.saturating_add_signed(delta).min(last);
}
