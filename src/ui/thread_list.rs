//! The thread list pane: two lines of text per thread would halve what fits at 80×24, so
//! each thread is one row — markers, context, participants, count and age — and only the
//! visible rows are drawn.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{focused, inner, pane_block, theme};
use crate::app::text::{age, safe_line, truncate, width};
use crate::app::{App, Pane};

/// Draws the list.
pub(super) fn render(app: &App, frame: &mut Frame, area: Rect) {
    let list = &app.list;
    let title = title(list, area.width as usize);
    frame.render_widget(pane_block(title, focused(app, Pane::List)), area);
    let body = inner(area);
    if list.rows.is_empty() {
        let text = if list.state != crate::store::StateFilter::All {
            "No thread in this state. s shows the next one."
        } else if list.filter.is_empty() {
            "No threads yet.\n\nPaste an envelope into this window, press p to import from the clipboard, or n to write one.\n\nTry `crosstalk --demo`."
        } else {
            "No thread matches the filter. Esc clears it."
        };
        frame.render_widget(
            Paragraph::new(text).wrap(ratatui::widgets::Wrap { trim: true }),
            body,
        );
        return;
    }
    let w = body.width as usize;
    let lines: Vec<Line> = list
        .rows
        .iter()
        .enumerate()
        .skip(list.offset)
        .take(body.height as usize)
        .map(|(i, row)| row_line(app, row, w, i == list.selected))
        .collect();
    frame.render_widget(Paragraph::new(lines), body);
}

/// The list's title: its state filter's part, and the text filter while there is one.
/// In a narrow pane (80 columns) it leaves out "Threads".
fn title(list: &crate::app::panes::thread_list::ThreadList, pane_width: usize) -> Line<'static> {
    let state = state_part(list, None);
    if list.filtering || !list.filter.is_empty() {
        // Inside the corners, after the head, with room for the cursor and a space; in a
        // narrow pane (80 columns) the head leaves out "Threads" to give the filter room.
        let room = |head: &str| pane_width.saturating_sub(width(head) + 4);
        let mut head = format!(" Threads{state} — filter: ");
        if room(&head) < 12 {
            head = format!("{state} filter: ");
        }
        let room = room(&head);
        let typed = crate::app::writing::readline::split_at_cursor(&list.filter, list.filter_at);
        let mut spans = vec![Span::raw(head)];
        spans.extend(super::editor::typed_line(
            typed,
            room,
            theme::KEY,
            list.filtering,
        ));
        spans.push(Span::raw(" "));
        Line::from(spans)
    } else {
        let full = format!(" Threads{state} ");
        if width(&full) + 2 <= pane_width {
            Line::from(full)
        } else {
            // A narrow pane (80 columns) leaves out "Threads" and shortens the state's name;
            // the counts stay whole.
            let counts = state_part(list, Some(0));
            let room = pane_width.saturating_sub(width(&counts) + 4);
            Line::from(format!("{} ", state_part(list, Some(room))))
        }
    }
}

/// A thread's row, `w` cells wide: its markers (unread, signature alarms, waiting,
/// drafts, what is to do), its context or participants, its count and age.
fn row_line(app: &App, row: &crate::store::ThreadRow, w: usize, selected: bool) -> Line<'static> {
    let s = &row.summary;
    let marker = if row.unread {
        Span::styled("●", theme::UNREAD)
    } else {
        Span::raw(" ")
    };
    let waiting = match (&s.awaiting_since, s.awaiting_reply) {
        (Some(t), true) => format!("⏳{} ", age(t, app.now)),
        _ => String::new(),
    };
    let drafts = if row.drafts > 0 { "✎ " } else { "" };
    let mut todo = String::new();
    if row.to_relay > 0 {
        todo.push_str(&format!("⇢{} ", row.to_relay));
    }
    if row.to_me > 0 {
        todo.push_str(&format!("✉{} ", row.to_me));
    }
    if row.missing_parents > 0 {
        todo.push_str(&format!("⚠{} ", row.missing_parents));
    }
    // A bad signature or a changed key: red, before anything else to do.
    let alarm = if row.signature_alarms > 0 {
        format!("✗{} ", row.signature_alarms)
    } else {
        String::new()
    };
    let when = row.latest.as_deref().unwrap_or(&s.last_activity);
    let right = format!("{} {:>3}", s.message_count, age(when, app.now));
    let name = s
        .context
        .clone()
        .filter(|c| !c.trim().is_empty())
        .unwrap_or_else(|| s.participants.join(", "));
    let who = if s.context.is_some() {
        format!(" · {}", s.participants.join(", "))
    } else {
        String::new()
    };
    let room = w.saturating_sub(
        2 + width(&alarm) + width(&waiting) + width(drafts) + width(&todo) + width(&right) + 1,
    );
    let main = truncate(&format!("{}{}", safe_line(&name), safe_line(&who)), room);
    let pad = " ".repeat(room.saturating_sub(width(&main)));
    let mut spans = vec![
        marker,
        Span::raw(" "),
        Span::styled(alarm, theme::ERROR),
        Span::styled(waiting, theme::AWAITING),
        Span::styled(drafts.to_string(), theme::WARN),
        Span::styled(todo, theme::WARN),
        Span::raw(main),
        Span::raw(pad),
        Span::raw(" "),
        Span::styled(right, theme::DIM),
    ];
    theme::highlight(&mut spans, selected);
    Line::from(spans)
}

/// The state filter's part of the list title: ` [to relay] 3 of 12`, how many threads it
/// lists of all there are; empty without a state filter. With `name_room`, the state's name
/// is cut to that many cells (`Some(0)`: no name, to measure the rest).
fn state_part(
    list: &crate::app::panes::thread_list::ThreadList,
    name_room: Option<usize>,
) -> String {
    let Some(title) = list.state.title() else {
        return String::new();
    };
    let name = match name_room {
        Some(0) => String::new(),
        Some(room) => truncate(title, room),
        None => title.to_string(),
    };
    let counts = match list.counts {
        Some((shown, all)) => format!(" {shown} of {all}"),
        None => String::new(),
    };
    format!(" [{name}]{counts}")
}
