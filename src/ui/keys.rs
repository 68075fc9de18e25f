//! The `K` popup: the trust store's keys, one or two rows each, a changed key in red with the
//! different key that was seen for it.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::popups::frame_block;
use super::theme;
use crate::app::text::truncate;
use crate::protocol::trust::KeyState;
use crate::store::KeyRow;

/// Draws the keys popup, from row `scroll` on.
pub(super) fn render(keys: &[KeyRow], scroll: usize, frame: &mut Frame, size: Rect) {
    let area = crate::app::panes::layout::keys_area(size);
    let inner = frame_block(
        " Keys — crosstalk keys trust ID accepts a change; j/k move, Esc closes ",
        frame,
        area,
    );
    let w = inner.width as usize;
    let mut lines = Vec::new();
    if keys.is_empty() {
        lines.push(Line::from(Span::styled(
            "No keys yet. `crosstalk keys add ID KEY` adds one; an envelope with a `meta: keys` \
             block pins its key when imported.",
            theme::DIM,
        )));
    }
    for k in keys.iter().skip(scroll) {
        let style = match k.state {
            KeyState::Trusted => theme::OK,
            KeyState::Changed | KeyState::Revoked => theme::ERROR,
        };
        let mark = match k.state {
            KeyState::Trusted => "✓",
            KeyState::Changed => "⚠",
            KeyState::Revoked => "✗",
        };
        let head = format!(
            "{mark} {} — {} ({}), {} signed message(s)",
            crate::sanitize::marked_id(&k.pkid),
            k.state.as_str(),
            k.source.as_str(),
            k.messages
        );
        lines.push(Line::from(Span::styled(truncate(&head, w), style)));
        lines.push(Line::from(Span::styled(
            truncate(&format!("    {}", k.public_key), w),
            theme::DIM,
        )));
        if let Some(p) = &k.pending_key {
            lines.push(Line::from(Span::styled(
                truncate(&format!("    different key seen: {p}"), w),
                theme::ERROR,
            )));
        }
    }
    frame.render_widget(Paragraph::new(lines), inner);
}
