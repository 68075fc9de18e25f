//! The inspector pane: styles the rows the app laid out for the selected envelope.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{focused, inner, pane_block, theme};
use crate::app::panes::inspector::{RowKind, View};
use crate::app::{App, Pane};

/// Draws the inspector.
pub(super) fn render(app: &App, frame: &mut Frame, area: Rect) {
    let view = match app.inspector.view {
        View::Fields => "fields",
        View::Received => "as received",
        View::Canonical => "canonical",
    };
    let rows = &app.inspector.rows;
    let body = inner(area);
    let h = body.height as usize;
    let scroll = app.inspector.scroll.min(rows.len().saturating_sub(h));
    let more = if rows.len() > h {
        format!(" {}/{} ", (scroll + h).min(rows.len()), rows.len())
    } else {
        String::new()
    };
    let title = Line::from(vec![
        Span::raw(" Envelope — "),
        Span::styled(view, theme::KEY),
        Span::raw(" (v) "),
        Span::styled(more, theme::DIM),
    ]);
    frame.render_widget(pane_block(title, focused(app, Pane::Inspector)), area);
    if rows.is_empty() {
        frame.render_widget(Paragraph::new("Select a message to see it here."), body);
        return;
    }
    let lines: Vec<Line> = rows
        .iter()
        .skip(scroll)
        .take(h)
        .map(|r| match r.kind {
            RowKind::Title => Line::from(Span::styled(r.text.clone(), theme::TITLE)),
            RowKind::Field => Line::from(vec![
                Span::styled(r.key.clone(), theme::KEY),
                Span::raw(r.text.clone()),
            ]),
            RowKind::Folded => Line::from(Span::styled(r.text.clone(), theme::DIM)),
            RowKind::Error => Line::from(Span::styled(r.text.clone(), theme::ERROR)),
            RowKind::Warning => Line::from(Span::styled(r.text.clone(), theme::WARN)),
            RowKind::Markdown => Line::from(r.spans.clone()),
            RowKind::Body | RowKind::Text | RowKind::Blank => Line::from(r.text.clone()),
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), body);
}
