//! The composer's multi-line boxes (the body and META), drawn from the rows
//! [`crate::app::writing::editor_rows`] lays out: wrapped between words, the rows from the one the app
//! scrolled to, the selection, and the cursor in the box that has the focus.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui_textarea::TextArea;

use super::theme;
use crate::app::text::{safe_line, tail, truncate, width};
use crate::app::writing::editor_rows::{self, TAB, cell_width};

/// One line typed into a prompt or the filter, the cursor (`▏`, when `cursor`) drawn between
/// `before` and `after`, in `room` cells besides the cursor: what is before the cursor keeps
/// its end in sight, what follows it is cut.
pub(super) fn typed_line(
    (before, after): (&str, &str),
    room: usize,
    style: Style,
    cursor: bool,
) -> Vec<Span<'static>> {
    let before = tail(&safe_line(before), room);
    let left = room.saturating_sub(width(&before));
    let after = truncate(&safe_line(after), left);
    vec![
        Span::styled(before, style),
        Span::styled(if cursor { "▏" } else { "" }, style),
        Span::styled(after, style),
    ]
}

/// Draws `ta` in `area` from row `top`; the cursor shows when `focused`.
pub(super) fn render(ta: &TextArea<'_>, top: usize, focused: bool, frame: &mut Frame, area: Rect) {
    let width = area.width as usize;
    let cursor = editor_rows::cursor(ta);
    let laid = editor_rows::layout(ta.lines(), width, cursor);
    let selection = ta.selection_range();
    let selected = |line: usize, col: usize| {
        selection.is_some_and(|(from, to)| (line, col) >= from && (line, col) < to)
    };
    let mut lines = Vec::new();
    for row in laid.rows.iter().skip(top).take(area.height as usize) {
        let text = ta.lines().get(row.line).map(String::as_str).unwrap_or("");
        let mut spans: Vec<Span<'static>> = Vec::new();
        let (mut run, mut run_style) = (String::new(), Style::new());
        let mut x = 0;
        for (col, c) in text
            .chars()
            .enumerate()
            .skip(row.start)
            .take(row.end - row.start)
        {
            let w = cell_width(c);
            // The spaces a row breaks at hang past its end: drawn as far as the box goes.
            if x + w > width {
                break;
            }
            let style = if selected(row.line, col) {
                theme::SELECTION
            } else {
                Style::new()
            };
            if style != run_style && !run.is_empty() {
                spans.push(Span::styled(std::mem::take(&mut run), run_style));
            }
            run_style = style;
            if c == '\t' {
                run.push_str(&" ".repeat(TAB));
            } else {
                run.push(c);
            }
            x += w;
        }
        if !run.is_empty() {
            spans.push(Span::styled(run, run_style));
        }
        lines.push(Line::from(spans));
    }
    frame.render_widget(Paragraph::new(lines), area);
    let (row, x) = laid.cursor;
    if focused && row >= top && row < top + area.height as usize && width > 0 {
        // On the space a full row breaks at, past its last cell, the cursor shows in that cell.
        let x = area.x + x.min(width - 1) as u16;
        let y = area.y + (row - top) as u16;
        frame.buffer_mut()[(x, y)].set_style(theme::CURSOR);
    }
}
