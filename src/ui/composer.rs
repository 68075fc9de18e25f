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
use crate::app::text::{CONTINUED, safe, safe_line, short_time, soft_wrap, truncate};
use crate::app::writing::composer::{Composer, Field};
use crate::app::writing::composer_layout::ComposerAreas;

/// Draws the composer over the whole screen.
pub(super) fn render(app: &App, c: &Composer, frame: &mut Frame, area: Rect) {
    let areas = ComposerAreas::new(area, c);
    let (title, hints, status) = (areas.title, areas.hints, areas.status);
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
    form(c, &areas, frame);
    preview(c, frame, areas.preview);
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

fn form(c: &Composer, areas: &ComposerAreas, frame: &mut Frame) {
    let area = areas.form;
    let (from, to, row2, row3, ids, meta, body) = (
        areas.from,
        areas.to,
        areas.intent,
        areas.context,
        areas.ids,
        areas.meta,
        areas.body,
    );
    one_line(frame, from, " from", &c.from, c.focus == Field::From);
    one_line(frame, to, " to", &c.to, c.focus == Field::To);
    let on = c.focus == Field::Intent;
    let picker = if on {
        format!("◂ {} ▸  (←/→, or its first letter)", c.form.intent)
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
    let (meta_w, meta_h) = areas.text_size(Field::Meta);
    let hidden = crate::app::writing::editor_rows::layout(
        c.meta.lines(),
        meta_w,
        crate::app::writing::editor_rows::cursor(&c.meta),
    )
    .rows
    .len()
        > meta_h;
    let title = if hidden {
        format!(" META ({lines} lines; Tab to it shows them) ")
    } else {
        " META (C-t adds routing / privacy) ".to_string()
    };
    let b = block(&title, meta_on);
    let inner = b.inner(meta);
    frame.render_widget(b, meta);
    super::editor::render(&c.meta, c.meta_top, meta_on, frame, inner);
    let body_on = c.focus == Field::Body;
    let b = block(" body (C-e opens $EDITOR) ", body_on);
    let inner = b.inner(body);
    frame.render_widget(b, body);
    super::editor::render(&c.body, c.body_top, body_on, frame, inner);
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
