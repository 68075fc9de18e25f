//! The title bar, the key hints (from the keymap, so never stale: those of the focused pane
//! and the selection on the browse screen) and the status line.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::theme;
use crate::app::text::{safe_line, truncate};
use crate::app::{App, Level};

/// `crosstalk — <database> — N threads`.
pub(super) fn title(app: &App, frame: &mut Frame, area: Rect) {
    let n = app.list.rows.len();
    let count = match (app.list.more || app.list.before, n) {
        (true, _) => format!("{n}+ threads"),
        (false, 1) => "1 thread".to_string(),
        (false, _) => format!("{n} threads"),
    };
    let filter = if app.list.filter.is_empty() && app.list.counts.is_none() {
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

/// The hint line above the status line; a status too long for its line takes the hint line
/// too, so that what an error says to do is not cut off (the hints come back with the next
/// message that fits).
pub(super) fn hints_and_status(app: &App, frame: &mut Frame, hints_area: Rect, status_area: Rect) {
    let width = (status_area.width as usize).saturating_sub(watch_mark(app).chars().count());
    if crate::app::text::width(&safe_line(&app.status.1)) <= width
        || hints_area.y + 1 != status_area.y
    {
        frame.render_widget(Paragraph::new(hint_line(app, hints_area.width)), hints_area);
        status(app, frame, status_area);
        return;
    }
    let both = Rect {
        height: 2,
        ..hints_area
    };
    status_lines(app, frame, both, 2);
}

/// The hint line: `key what` pairs, as many as fit, most useful first. On the browse screen
/// they are the focused pane's and the selection's (a message to relay puts `y relay it`
/// first); elsewhere the scope's.
pub(super) fn hint_line(app: &App, width: u16) -> Line<'static> {
    let hints = match app.scope() {
        crate::app::keymap::Scope::Browse => app.keymap.browse_hints(browse_at(app)),
        scope => app.keymap.hints(scope),
    };
    let mut spans = Vec::new();
    let mut used = 0usize;
    for (key, what) in hints {
        let w = crate::app::text::width(&key) + crate::app::text::width(what) + 4;
        if used + w > width as usize {
            break;
        }
        spans.push(Span::styled(format!(" {key} "), theme::HINT_KEY));
        spans.push(Span::raw(format!(" {what} ")));
        used += w;
    }
    Line::from(spans)
}

/// Where the browse screen is, for its hints: the focused pane, and what the selected message
/// is (to relay, to answer, placed by the desk, a POLL) or what waits to be put up.
fn browse_at(app: &App) -> crate::app::keymap::BrowseAt {
    let state = app.delivery.as_ref().and_then(|d| d.state.as_deref());
    let row = (app.tree.as_ref()).and_then(|t| t.selected_index().map(|i| &t.outline.rows[i]));
    crate::app::keymap::BrowseAt {
        pane: Some(app.focus),
        to_relay: state == Some("to_relay"),
        to_me: state == Some("to_me"),
        placed: row.is_some_and(|r| r.inferred),
        poll: row.is_some_and(|r| r.intent.as_deref() == Some("POLL")),
        waiting: !app.hop_next.is_empty(),
    }
}

/// The status line: what just happened.
pub(super) fn status(app: &App, frame: &mut Frame, area: Rect) {
    status_lines(app, frame, area, 1);
}

/// The watch's state, which stays in sight while it is on, whatever the status says.
fn watch_mark(app: &App) -> &'static str {
    if app.watching() { " ◉ watching " } else { "" }
}

/// The status message in up to `rows` lines of `area`, wrapped at spaces, the last line cut
/// with `…` when it still does not fit.
fn status_lines(app: &App, frame: &mut Frame, area: Rect, rows: usize) {
    let (level, text) = &app.status;
    let style = match level {
        Level::Info => theme::DIM,
        Level::Warn => theme::WARN,
        Level::Error => theme::ERROR,
    };
    let mark = watch_mark(app);
    let width = (area.width as usize).saturating_sub(mark.chars().count());
    let text = safe_line(text);
    let mut lines = crate::app::text::wrap(&text, width.max(1));
    if lines.len() > rows {
        // What is cut off stays readable in `:messages`, and the line says so.
        let rest = lines.split_off(rows - 1).join(" ");
        let more = " :messages";
        match width.checked_sub(crate::app::text::width(more)) {
            Some(room) if room > 10 => lines.push(format!("{}{more}", truncate(&rest, room))),
            _ => lines.push(truncate(&rest, width)),
        }
    }
    let lines: Vec<Line> = (lines.into_iter().enumerate())
        .map(|(i, l)| {
            let lead = if i == 0 { mark } else { "" };
            let pad = " ".repeat(if i == 0 { 0 } else { mark.chars().count() });
            Line::from(vec![
                Span::styled(lead, theme::HINT_KEY),
                Span::raw(pad),
                Span::styled(l, style),
            ])
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), area);
}
