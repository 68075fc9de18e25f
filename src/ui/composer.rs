//! The composer screen: header form and body editor, and beside (or below) them the envelope
//! exactly as it will be copied with its live diagnostics.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};
use ratatui_textarea::TextArea;

use super::{bars, theme};
use crate::app::App;
use crate::app::composer::{Composer, Field};
use crate::app::text::{CONTINUED, safe, safe_line, short_time, soft_wrap, truncate};

/// Draws the composer over the whole screen.
pub fn render(app: &App, c: &Composer, frame: &mut Frame, area: Rect) {
    let [title, main, hints, status] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(8),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(area);
    let what = match &c.replying_to {
        Some(r) => format!(" Reply to {}", safe_line(r)),
        None => " New envelope".to_string(),
    };
    let saved = match (&c.unsaved, &c.saved_at) {
        // The short cause ("database busy"); the status line has the whole of it.
        (Some(why), _) => format!(
            "  (draft not saved yet: {} — retrying)",
            why.split(" (").next().unwrap_or(why)
        ),
        (None, Some(t)) => format!("  (draft saved {})", short_time(t)),
        (None, None) => String::new(),
    };
    frame.render_widget(
        Paragraph::new(Line::from(vec![
            Span::styled(
                truncate(
                    &what,
                    (area.width as usize).saturating_sub(crate::app::text::width(&saved)),
                ),
                theme::TITLE,
            ),
            Span::styled(
                saved,
                if c.unsaved.is_some() {
                    theme::WARN
                } else {
                    theme::DIM
                },
            ),
        ])),
        title,
    );
    let (form_area, preview_area) = if main.width >= 110 {
        let [a, b] = Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)])
            .areas(main);
        (a, b)
    } else {
        let [a, b] =
            Layout::vertical([Constraint::Percentage(62), Constraint::Percentage(38)]).areas(main);
        (a, b)
    };
    form(c, frame, form_area);
    preview(c, frame, preview_area);
    bars::hints_and_status(app, frame, hints, status);
}

/// A field's label; the focused one is marked `▶` and reversed, not only coloured.
fn label(name: &str, on: bool) -> Span<'static> {
    if on {
        let name = name.trim_start();
        Span::styled(format!("▶{name:<8}"), theme::FOCUS_TITLE).patch_style(theme::FOCUS_BORDER)
    } else {
        Span::styled(format!("{name:<9}"), theme::KEY)
    }
}

fn one_line(frame: &mut Frame, area: Rect, name: &str, t: &TextArea<'static>, on: bool) {
    let [l, r] = Layout::horizontal([Constraint::Length(9), Constraint::Min(1)]).areas(area);
    frame.render_widget(Paragraph::new(label(name, on)), l);
    frame.render_widget(t, r);
}

/// The META block's height in a form of `height` rows: its lines (up to six) and borders.
/// Below the four rows of fields, a block the operator is not typing in takes at most a third
/// of what is left, so that the body keeps lines to write in at 80×24 (an ERROR reply's
/// `meta: error` block is five lines); focused, it takes what it needs, the body keeping one.
fn meta_height(c: &Composer, height: u16) -> u16 {
    let wanted = (c.meta.lines().len() as u16 + 2).clamp(3, 8);
    let room = height.saturating_sub(4);
    let most = if c.focus == Field::Meta {
        room.saturating_sub(3)
    } else {
        room / 3
    };
    wanted.min(most.max(3))
}

fn form(c: &Composer, frame: &mut Frame, area: Rect) {
    let meta_h = meta_height(c, area.height);
    let [row1, row2, row3, ids, meta, body] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Length(meta_h),
        Constraint::Min(3),
    ])
    .areas(area);
    let [from, to] =
        Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(row1);
    one_line(frame, from, " from", &c.from, c.focus == Field::From);
    one_line(frame, to, " to", &c.to, c.focus == Field::To);
    let on = c.focus == Field::Intent;
    let picker = if on {
        format!("◂ {} ▸  (←/→ to pick)", c.form.intent)
    } else {
        c.form.intent.clone()
    };
    frame.render_widget(
        Paragraph::new(Line::from(vec![
            label(" intent", on),
            Span::styled(picker, theme::intent(Some(&c.form.intent))),
        ])),
        row2,
    );
    one_line(
        frame,
        row3,
        " context",
        &c.context,
        c.focus == Field::Context,
    );
    let mut id_text = format!(" thread {}  message {}", c.form.thread, c.form.message);
    if let Some(p) = &c.form.parent {
        id_text.push_str(&format!("  parent {p}"));
    }
    frame.render_widget(
        Paragraph::new(Span::styled(
            truncate(&safe_line(&id_text), area.width as usize),
            theme::DIM,
        )),
        ids,
    );
    let block = |name: &str, on: bool| {
        Block::default()
            .borders(Borders::ALL)
            .border_style(if on {
                theme::FOCUS_BORDER
            } else {
                theme::BORDER
            })
            .title(super::focus_title(Line::from(name.to_string()), on))
    };
    let meta_on = c.focus == Field::Meta;
    let lines = c.meta.lines().len();
    let title = if lines + 2 > meta_h as usize {
        format!(" META ({lines} lines; Tab to it shows them) ")
    } else {
        " META (C-t adds routing / privacy) ".to_string()
    };
    let b = block(&title, meta_on);
    let inner = b.inner(meta);
    frame.render_widget(b, meta);
    frame.render_widget(&c.meta, inner);
    let body_on = c.focus == Field::Body;
    let b = block(" body (C-e opens $EDITOR) ", body_on);
    let inner = b.inner(body);
    frame.render_widget(b, body);
    frame.render_widget(&c.body, inner);
}

fn preview(c: &Composer, frame: &mut Frame, area: Rect) {
    let errors = c.diagnostics.iter().filter(|d| d.is_error()).count() + c.meta_problems.len();
    let warnings = c.diagnostics.len() + c.meta_problems.len() - errors;
    let verdict = if errors > 0 {
        Span::styled(
            format!(" {errors} error(s) — not ready to copy "),
            theme::ERROR,
        )
    } else if warnings > 0 {
        Span::styled(format!(" valid, {warnings} warning(s) "), theme::WARN)
    } else {
        Span::styled(" valid ✓ ", theme::OK)
    };
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme::BORDER)
        .title(Line::from(vec![
            Span::raw(" As it will be copied — "),
            verdict,
        ]));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let w = inner.width as usize;
    let mut lines: Vec<Line> = Vec::new();
    // Rows past the first of a soft-wrapped line start with the continuation mark, so the
    // preview never shows a line break the copy does not have.
    let mut push = |text: &str, style: Style| {
        for (cont, part) in soft_wrap(text, w) {
            let mut spans = Vec::with_capacity(2);
            if cont {
                spans.push(Span::styled(CONTINUED, theme::DIM));
            }
            spans.push(Span::styled(part, style));
            lines.push(Line::from(spans));
        }
    };
    for p in &c.meta_problems {
        push(&safe_line(p), theme::ERROR);
    }
    for d in &c.diagnostics {
        let style = if d.is_error() {
            theme::ERROR
        } else {
            theme::WARN
        };
        let text = format!("line {}: {} [{}]", d.line, safe_line(&d.message), d.code);
        push(&text, style);
    }
    if !c.meta_problems.is_empty() || !c.diagnostics.is_empty() {
        push("", Style::default());
    }
    for l in safe(&c.preview).lines() {
        push(l, Style::default());
    }
    frame.render_widget(Paragraph::new(lines), inner);
}
