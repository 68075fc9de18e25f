//! The full-screen views for reading: the reader (one message given the whole screen, as a
//! mail client's pager) and the answers to one message side by side. Each is laid out once per
//! width here and only drawn by `ui`.

pub mod columns;

use crate::app::panes::list_move::step;
use crate::app::popups::popup::Popup;
use crate::app::text::safe_line;
use crate::app::{Action, App};
use crate::store::StoredMessage;

impl App {
    /// `C`: the answers to the selected message side by side. On a POLL, or an answer to
    /// one, the POLL's targets with their votes; on a message with replies, its replies; on a
    /// message without, it and its siblings (the answers to its parent).
    pub(in crate::app) fn open_side_by_side(&mut self) -> anyhow::Result<()> {
        let Some(selected) = self.selected_message().cloned() else {
            self.warn("Select a message to see its answers side by side (open a thread with Enter).");
            return Ok(());
        };
        let is_poll = |m: &StoredMessage| m.envelope.intent() == Some(crate::protocol::Intent::Poll);
        let parent = match &selected.parent {
            Some(p) => self.store.message(p)?,
            None => None,
        };
        let anchor = if is_poll(&selected) {
            selected
        } else if let Some(p) = parent.filter(is_poll) {
            p
        } else if !self.replies_to(&selected.id)?.is_empty() {
            selected
        } else if let Some(p) = match &selected.parent {
            Some(p) => self.store.message(p)?,
            None => None,
        } {
            p
        } else {
            self.warn("No answers to show side by side: the message has no replies yet.");
            return Ok(());
        };
        let replies = self.replies_to(&anchor.id)?;
        let tally = match is_poll(&anchor) {
            true => self.store.poll_view(anchor.clone(), self.now)?,
            false => None,
        };
        let columns = match tally {
            Some(view) => columns::by_target(&view.tally, replies),
            None => columns::by_sender(replies),
        };
        if columns.is_empty() {
            self.warn("No answers to show side by side: the message has no replies yet.");
            return Ok(());
        }
        let what = anchor.intent.as_deref().unwrap_or("message");
        let title = format!(
            "{} answers to the {} from {}: {}",
            columns.len(),
            safe_line(what),
            safe_line(&anchor.envelope.banner.from),
            safe_line(anchor.envelope.first_line())
        );
        self.popup = Some(Popup::SideBySide(Box::new(columns::SideBySide::new(
            title, columns,
        ))));
        self.lay_out_reading();
        Ok(())
    }

    /// The messages of the open thread that answer `id`, in arrival order.
    fn replies_to(&self, id: &str) -> anyhow::Result<Vec<StoredMessage>> {
        let Some(tree) = self.tree.as_ref() else {
            return Ok(Vec::new());
        };
        let ids: Vec<String> = (tree.outline.rows.iter())
            .filter(|r| r.parent.as_deref() == Some(id))
            .map(|r| r.id.clone())
            .collect();
        let mut out = Vec::new();
        for id in ids {
            if let Some(m) = self.store.message(&id)? {
                out.push(m);
            }
        }
        out.sort_by(|a, b| a.arrived_at.cmp(&b.arrived_at));
        Ok(out)
    }

    /// Keys in the side-by-side view (Back is handled by the popup).
    pub(in crate::app) fn side_by_side_action(&mut self, action: Action) {
        let (width, page) = reading_size(self.size);
        let Some(Popup::SideBySide(v)) = self.popup.as_mut() else {
            return;
        };
        match action {
            Action::ColumnLeft => v.shift(-1, width),
            Action::ColumnRight => v.shift(1, width),
            a => {
                if let Some(d) = step(&a, page as isize) {
                    v.scroll_by(d, page);
                }
            }
        }
    }

    /// Lays the open full-screen view out for the screen's width (after it opened, and after
    /// a resize).
    pub(in crate::app) fn lay_out_reading(&mut self) {
        let (width, page) = reading_size(self.size);
        if let Some(Popup::SideBySide(v)) = self.popup.as_mut() {
            v.lay_out(width);
            v.shift(0, width);
            v.scroll_by(0, page);
        }
    }
}

/// The width and the body rows of a full-screen view on a screen of `size`: the title, the
/// column heads, the rule and the footer take [`columns::HEAD_ROWS`].
pub(crate) fn reading_size(size: ratatui::layout::Rect) -> (usize, usize) {
    (
        size.width as usize,
        (size.height as usize).saturating_sub(columns::HEAD_ROWS),
    )
}
