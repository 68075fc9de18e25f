//! What each scrolled region shows follows its selection. The thread list and the tree keep
//! the first row they show, so that a list scrolls line by line; a resize (120×40 to 80×24),
//! a tick that read the screen again, or a move left that row where it was while the
//! selection ended up below the pane's new bottom. After every action the app brings each
//! selection back into sight here, in one place, so no path that changes a selection or a
//! pane's size can leave the selection off screen.

use super::layout::inner_height;
use super::popup::Popup;
use super::thread_list::keep_visible;
use super::{App, help, messages};

impl App {
    /// Scrolls each region just far enough for its selection, and no region past its end.
    pub(super) fn keep_in_view(&mut self) {
        let areas = self.areas();
        self.list.scroll_into_view(inner_height(areas.list));
        if let Some(t) = self.tree.as_mut() {
            let h = inner_height(areas.tree);
            t.offset = keep_visible(t.selected, t.offset, h, t.visible.len());
        }
        // Scrolled, not selected: the inspector, help and `:messages` stop where their last
        // row is at the bottom, so the first key back up moves them at once.
        self.inspector.scroll_by(0, inner_height(areas.inspector));
        match self.popup.as_mut() {
            Some(Popup::Help { scroll }) => {
                *scroll = (*scroll).min(help::help_last_scroll(&self.keymap, self.size));
            }
            Some(Popup::Messages { scroll }) => {
                *scroll = (*scroll).min(messages::last_scroll(&self.messages, self.size));
            }
            _ => {}
        }
    }
}
