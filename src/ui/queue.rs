//! The queue popup: one heading per section with its count, then its rows oldest first —
//! age, intent, from→to, the first body line, and who is awaited or how it was relayed. The
//! title names the keys that open, settle and undo, as bound.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use super::theme;
use crate::app::App;
use crate::app::keymap::Scope;
use crate::app::relay::queue::QueueView;
use crate::app::text::{age, safe_line, truncate};
use crate::store::{QueueRow, Section};

/// Draws the queue over the screen.
pub(super) fn render(app: &App, view: &QueueView, frame: &mut Frame, size: Rect) {
    let area = crate::app::panes::layout::queue_area(size);
    frame.render_widget(Clear, area);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme::FOCUS_BORDER)
        .title(title(app));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let w = inner.width as usize;
    // (line, row index when it is a row)
    let mut lines: Vec<(Line, Option<usize>)> = Vec::new();
    let mut index = 0;
    for s in &view.queue.sections {
        let more = if s.more { "+" } else { "" };
        lines.push((
            Line::from(Span::styled(
                format!("{} ({}{more})", s.section.title(), s.count),
                theme::TITLE,
            )),
            None,
        ));
        for r in &s.rows {
            let text = truncate(&row_text(app, s.section, r), w);
            let style = if index == view.selected {
                theme::SELECTED
            } else {
                ratatui::style::Style::new()
            };
            lines.push((Line::from(Span::styled(text, style)), Some(index)));
            index += 1;
        }
    }
    let height = inner.height as usize;
    let at = lines
        .iter()
        .position(|(_, i)| *i == Some(view.selected))
        .unwrap_or(0);
    let first = at.saturating_sub(height.saturating_sub(2));
    let shown: Vec<Line> = lines
        .into_iter()
        .skip(first)
        .take(height)
        .map(|(l, _)| l)
        .collect();
    frame.render_widget(Paragraph::new(shown), inner);
}

/// The title names the queue's own keys as bound (a config may move them): open, settle,
/// undo, close.
fn title(app: &App) -> String {
    use crate::app::Action;
    let words = [
        (Action::Open, "opens"),
        (Action::Done, "marks done"),
        (Action::Dismiss, "dismisses"),
        (Action::Undo, "undoes"),
        (Action::Back, "closes"),
    ];
    let keys: Vec<String> = (words.iter())
        .filter_map(|(a, what)| {
            let key = app.keymap.key_for(Scope::Queue, a)?;
            Some(format!("{key} {what}"))
        })
        .collect();
    format!(" Queue — {} ", keys.join(", "))
}

/// One row as text, safe to print.
fn row_text(app: &App, section: Section, r: &QueueRow) -> String {
    let mut text = format!(
        "  {:>4} {:<9} {}→{}  {}",
        age(&r.since, app.now),
        r.intent.as_deref().unwrap_or("-"),
        r.from,
        r.to,
        r.first_line
    );
    if section == Section::Awaiting && !r.awaiting_from.is_empty() {
        text.push_str(&format!("  · awaiting {}", r.awaiting_from.join(", ")));
        if let Some(n) = r.awaiting_needed.filter(|n| *n > 1) {
            text.push_str(&format!(" ({n} needed)"));
        }
    }
    if let Some(c) = r.carried.filter(|c| c.partial() && r.relayed_at.is_none()) {
        text.push_str(&format!(
            "  · {}",
            crate::app::text::carried_words(section, c)
        ));
    } else if let (Some(at), Some(how)) = (&r.relayed_at, &r.relay_method) {
        text.push_str(&format!(
            "  · {}",
            crate::app::text::relay_words(at, how, app.now)
        ));
    }
    if r.unsent_draft {
        text.push_str("  · being composed");
    }
    safe_line(&text).into_owned()
}
