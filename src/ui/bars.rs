//! The title bar, the key hints (from the keymap, so never stale) and the status line.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::theme;
use crate::app::text::{safe_line, truncate};
use crate::app::{App, Level};

/// `crosstalk — <database> — N threads`.
pub fn title(app: &App, frame: &mut Frame, area: Rect) {
    let n = app.list.rows.len();
    let count = match (app.list.more, n) {
        (true, _) => format!("{n}+ threads"),
        (false, 1) => "1 thread".to_string(),
        (false, _) => format!("{n} threads"),
    };
    let filter = if app.list.filter.is_empty() {
        String::new()
    } else {
        " (filtered)".to_string()
    };
    let busy = if app.stale {
        " — database busy: last data read"
    } else {
        ""
    };
    let drafts = match app.drafts {
        0 => String::new(),
        1 => " — ✎ 1 draft".to_string(),
        n => format!(" — ✎ {n} drafts"),
    };
    let text = format!(
        " crosstalk — {} — {count}{filter}{drafts}{busy}",
        app.settings.label
    );
    let line = Line::from(vec![Span::styled(
        truncate(&text, area.width as usize),
        theme::TITLE,
    )]);
    frame.render_widget(Paragraph::new(line), area);
}

/// Key hints for the scope in force.
pub fn hints(app: &App, frame: &mut Frame, area: Rect) {
    frame.render_widget(Paragraph::new(hint_line(app, area.width)), area);
}

/// The hint line: `key what` pairs, as many as fit.
pub fn hint_line(app: &App, width: u16) -> Line<'static> {
    let mut spans = Vec::new();
    let mut used = 0usize;
    for (key, what) in app.keymap.hints(app.scope()) {
        let w = key.chars().count() + what.chars().count() + 4;
        if used + w > width as usize {
            break;
        }
        spans.push(Span::styled(format!(" {key} "), theme::HINT_KEY));
        spans.push(Span::raw(format!(" {what} ")));
        used += w;
    }
    Line::from(spans)
}

/// The status line: what just happened.
pub fn status(app: &App, frame: &mut Frame, area: Rect) {
    let (level, text) = &app.status;
    let style = match level {
        Level::Info => theme::DIM,
        Level::Warn => theme::WARN,
        Level::Error => theme::ERROR,
    };
    // The watch's state stays in sight while it is on, whatever the status says.
    let mark = if app.watching() { " ◉ watching " } else { "" };
    let width = (area.width as usize).saturating_sub(mark.chars().count());
    let text = truncate(&safe_line(text), width);
    let mut spans = Vec::new();
    if !mark.is_empty() {
        spans.push(Span::styled(mark, theme::HINT_KEY));
    }
    spans.push(Span::styled(text, style));
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}
