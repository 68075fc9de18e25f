//! What each scrolled region shows follows its selection (and the composer's boxes their
//! cursors). The thread list and the tree keep
//! the first row they show, so that a list scrolls line by line; a resize (120×40 to 80×24),
//! a tick that read the screen again, or a move left that row where it was while the
//! selection ended up below the pane's new bottom. After every action the app brings each
//! selection back into sight here, in one place, so no path that changes a selection or a
//! pane's size can leave the selection off screen.

use crate::app::panes::layout::inner_height;
use crate::app::panes::thread_list::keep_visible;
use crate::app::popups::popup::Popup;
use crate::app::writing::composer::Field;
use crate::app::writing::composer_layout::ComposerAreas;
use crate::app::writing::editor_rows;
use crate::app::{App, popups::help, popups::messages};

impl App {
    /// Scrolls each region just far enough for its selection, and no region past its end.
    pub(in crate::app) fn keep_in_view(&mut self) {
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
            Some(Popup::Help { scroll, filter }) => {
                let last = help::help_last_scroll(&self.keymap, self.size, filter.as_deref());
                *scroll = (*scroll).min(last);
            }
            Some(Popup::Messages { scroll }) => {
                *scroll = (*scroll).min(messages::last_scroll(&self.messages, self.size));
            }
            _ => {}
        }
        // The composer's body and META boxes: the rows around their cursors, wrapped at
        // the width they are drawn at.
        let size = self.size;
        if let Some(c) = self.composer.as_mut() {
            let areas = ComposerAreas::new(size, c);
            for field in [Field::Body, Field::Meta] {
                let (width, height) = areas.text_size(field);
                let (ta, top) = match field {
                    Field::Body => (&c.body, c.body_top),
                    _ => (&c.meta, c.meta_top),
                };
                let top = editor_rows::layout(ta.lines(), width, editor_rows::cursor(ta))
                    .top(top, height);
                match field {
                    Field::Body => c.body_top = top,
                    _ => c.meta_top = top,
                }
            }
        }
    }
}
