//! The composer screen: header form and body editor, and beside (or below) them the envelope
//! exactly as it will be copied with its live diagnostics.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};
use ratatui_textarea::TextArea;

use super::{bars, theme};
use crate::app::keymap::Scope;
use crate::app::text::{CONTINUED, safe_line, short_time, truncate};
use crate::app::writing::composer::{Composer, Field};
use crate::app::writing::composer_layout::{ComposerAreas, LABEL, intent_rows};
use crate::app::writing::copy_view::Tone;
use crate::app::{Action, App};

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
    form(app, c, &areas, frame);
    preview(app, c, frame, areas.preview);
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
    let [l, r] = Layout::horizontal([Constraint::Length(LABEL), Constraint::Min(1)]).areas(area);
    frame.render_widget(Paragraph::new(label(name, on)), l);
    frame.render_widget(t, r);
}

/// The intent: the current one, or focused, every intent with the current one marked
/// (`[RESPOND]`, reversed) and each first letter underlined, the key that jumps to it.
fn intent_picker(c: &Composer, frame: &mut Frame, area: Rect) {
    let on = c.focus == Field::Intent;
    let [l, r] = Layout::horizontal([Constraint::Length(LABEL), Constraint::Min(1)]).areas(area);
    frame.render_widget(Paragraph::new(label(" intent", on)), l);
    if !on {
        let style = theme::intent(Some(&c.form.intent));
        let line = Line::from(Span::styled(safe_line(&c.form.intent).into_owned(), style));
        frame.render_widget(Paragraph::new(line), r);
        return;
    }
    let rows = intent_rows(&c.form.intent, r.width as usize);
    let fits = rows.len() <= r.height as usize;
    let mut lines: Vec<Line> = Vec::new();
    for row in rows {
        let mut spans = Vec::new();
        for (i, (name, current)) in row.into_iter().enumerate() {
            if i > 0 {
                spans.push(Span::raw(" "));
            }
            let style = theme::intent(Some(name));
            let (first, rest) = name.split_at(1);
            let first_style = style.add_modifier(Modifier::UNDERLINED);
            if current {
                let reversed = style.add_modifier(Modifier::REVERSED | Modifier::BOLD);
                spans.push(Span::styled("[", reversed));
                spans.push(Span::styled(
                    first,
                    reversed.add_modifier(Modifier::UNDERLINED),
                ));
                spans.push(Span::styled(rest, reversed));
                spans.push(Span::styled("]", reversed));
            } else {
                spans.push(Span::styled(first, first_style));
                spans.push(Span::styled(rest, style));
            }
        }
        lines.push(Line::from(spans));
    }
    if !fits {
        // Too narrow for the list: the current one, and how to change it.
        let style = theme::intent(Some(&c.form.intent));
        lines = vec![Line::from(Span::styled(
            format!("◂ {} ▸  (←/→, or its first letter)", c.form.intent),
            style,
        ))];
    }
    frame.render_widget(Paragraph::new(lines), r);
}

fn form(app: &App, c: &Composer, areas: &ComposerAreas, frame: &mut Frame) {
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
    intent_picker(c, frame, row2);
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
    let title = match app.keymap.key_for(Scope::Composer, &Action::EditExternal) {
        Some(k) => format!(" body ({k} opens $EDITOR) "),
        None => " body ".to_string(),
    };
    let b = block(&title, body_on);
    let inner = b.inner(body);
    frame.render_widget(b, body);
    super::editor::render(&c.body, c.body_top, body_on, frame, inner);
}

fn preview(app: &App, c: &Composer, frame: &mut Frame, area: Rect) {
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
    let key = |a: Action| {
        app.keymap
            .key_for(Scope::Composer, &a)
            .map(|k| k.to_string())
            .unwrap_or_else(|| a.to_string())
    };
    let w = crate::app::panes::layout::inner_width(area) as usize;
    let h = crate::app::panes::layout::inner_height(area);
    let rows = c.copy_rows(w);
    let top = c.copy_view.unwrap_or(0).min(rows.len().saturating_sub(h));
    // Where the copy is not all in sight, the title says how to see the rest.
    let how = match c.copy_view {
        Some(_) => format!(
            "— {}–{}/{} ↑↓ · {} copies · Esc back ",
            (top + 1).min(rows.len()),
            (top + h).min(rows.len()),
            rows.len(),
            key(Action::SaveAndCopy),
        ),
        None if rows.len() > h => format!("— {} shows it all ", key(Action::ShowCopy)),
        None => String::new(),
    };
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(if c.copy_view.is_some() {
            theme::FOCUS_BORDER
        } else {
            theme::BORDER
        })
        .title(Line::from(vec![
            Span::raw(" As it will be copied — "),
            verdict,
            Span::styled(how, theme::KEY),
        ]));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let lines: Vec<Line> = (rows.into_iter().skip(top).take(h))
        .map(|r| {
            let style = match r.tone {
                Tone::Error => theme::ERROR,
                Tone::Warn => theme::WARN,
                Tone::Plain => Style::default(),
            };
            let mut spans = Vec::with_capacity(2);
            if r.continued {
                spans.push(Span::styled(CONTINUED, theme::DIM));
            }
            spans.push(Span::styled(r.text, style));
            Line::from(spans)
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), inner);
}
