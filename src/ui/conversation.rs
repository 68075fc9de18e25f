//! The `N` popup: the address book to pick from, then the context being typed.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::popups::frame_block;
use super::theme;
use crate::app::App;
use crate::app::popups::popup::Conversation;
use crate::app::text::{safe_line, truncate};

/// Draws the picker or the context prompt.
pub(super) fn render(app: &App, c: &Conversation, frame: &mut Frame, size: Rect) {
    let contacts = &app.contacts.contacts;
    let area = crate::app::panes::layout::picker_area(size, 80, contacts.len());
    let title = match &c.context {
        None => " New conversation — pick a contact (Enter), Esc cancels ",
        Some(_) => " New conversation — context, then Enter ",
    };
    let inner = frame_block(title, frame, area);
    let width = inner.width as usize;
    let mut lines: Vec<Line> = Vec::new();
    if let Some(p) = &c.context {
        let name = contacts.get(c.selected).map_or("", |k| k.name.as_str());
        lines.push(Line::from(Span::styled(
            truncate(&safe_line(&format!("To {name}")), width),
            theme::DIM,
        )));
        let mut spans = vec![Span::styled("context: ", theme::KEY)];
        spans.extend(super::editor::typed_line(
            p.split(),
            width.saturating_sub(10),
            ratatui::style::Style::default(),
            true,
        ));
        lines.push(Line::from(spans));
    } else {
        let first = c
            .selected
            .saturating_sub(inner.height.saturating_sub(1) as usize);
        for (i, k) in contacts
            .iter()
            .enumerate()
            .skip(first)
            .take(inner.height as usize)
        {
            let text = truncate(&safe_line(&format!("{}  {}", k.name, k.address())), width);
            let style = if i == c.selected {
                theme::SELECTED
            } else {
                ratatui::style::Style::new()
            };
            lines.push(Line::from(Span::styled(text, style)));
        }
    }
    frame.render_widget(Paragraph::new(lines), inner);
}
