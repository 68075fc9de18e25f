//! The thread list pane: two lines of text per thread would halve what fits at 80×24, so
//! each thread is one row — markers, context, participants, count and age — and only the
//! visible rows are drawn. At 80 columns the pane is 26 cells inside: markers take a cell
//! each without counts, the count and age sit in narrow columns at the right, and
//! participants go by their contact names, so the context keeps most of the row.

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
    let shown = || {
        (list.rows.iter())
            .skip(list.offset)
            .take(body.height as usize)
    };
    let cols = Columns::of(shown());
    let lines: Vec<Line> = shown()
        .enumerate()
        .map(|(i, row)| {
            let selected = list.offset + i == list.selected;
            let names = |p: &str| app.contacts.display_name(p).to_string();
            row_line(app.now, &names, row, w, cols, selected)
        })
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

/// The columns every visible row shares, so that markers, titles, counts and ages line up
/// from row to row: the markers' cells (as many as the row needing most has, up to three),
/// the count's digits.
#[derive(Debug, Clone, Copy)]
struct Columns {
    marks: usize,
    count: usize,
}

impl Columns {
    fn of<'a>(rows: impl Iterator<Item = &'a crate::store::ThreadRow>) -> Columns {
        let mut c = Columns { marks: 0, count: 1 };
        for row in rows {
            c.marks = c.marks.max(marks(row).len());
            c.count = c.count.max(row.summary.message_count.to_string().len());
        }
        c
    }
}

/// Cells of the age column: `59s`, `3h`, `13d`, `52w`.
const AGE: usize = 3;

/// A thread's markers, one cell each, most pressing first: what is to do (the most pressing
/// of a bad signature `✗`, a missed relay `⚠` — both say something went wrong — a message
/// to relay `⇢`, one addressed to the operator `✉`), a reply awaited `⧗`, a draft `✎`. Counts are the tree's and the
/// queue's to tell; a row at 80 columns needs its cells for the title.
fn marks(row: &crate::store::ThreadRow) -> Vec<(&'static str, ratatui::style::Style)> {
    let mut out = Vec::new();
    let todo = if row.signature_alarms > 0 {
        Some(("✗", theme::ERROR))
    } else if row.missing_parents > 0 {
        Some(("⚠", theme::WARN))
    } else if row.to_relay > 0 {
        Some(("⇢", theme::WARN))
    } else if row.to_me > 0 {
        Some(("✉", theme::WARN))
    } else {
        None
    };
    out.extend(todo);
    if awaiting(row) {
        out.push(("⧗", theme::AWAITING));
    }
    if row.drafts > 0 {
        out.push(("✎", theme::WARN));
    }
    out
}

/// Whether the thread awaits a reply to something the operator sent or relayed.
fn awaiting(row: &crate::store::ThreadRow) -> bool {
    row.summary.awaiting_reply && row.summary.awaiting_since.is_some()
}

/// A thread's row, `w` cells wide: the unread mark, its markers, its context (or
/// participants, by their contact names) and participants, its count and age. The age is
/// how long a reply has been awaited when one is (in the awaiting colour), else the time
/// since the thread's last activity.
fn row_line(
    now: jiff::Timestamp,
    names: &dyn Fn(&str) -> String,
    row: &crate::store::ThreadRow,
    w: usize,
    cols: Columns,
    selected: bool,
) -> Line<'static> {
    let s = &row.summary;
    let unread = if row.unread {
        Span::styled("●", theme::UNREAD)
    } else {
        Span::raw(" ")
    };
    let marks = marks(row);
    let (when, age_style) = match (&s.awaiting_since, awaiting(row)) {
        (Some(t), true) => (t.as_str(), theme::AWAITING),
        _ => (
            row.latest.as_deref().unwrap_or(&s.last_activity),
            theme::DIM,
        ),
    };
    let count = format!("{:>width$}", s.message_count, width = cols.count);
    let age = format!("{:>AGE$}", age(when, now));
    let names: Vec<String> = (s.participants.iter())
        .map(|p| safe_line(&names(p)).into_owned())
        .collect();
    let context = s.context.as_deref().filter(|c| !c.trim().is_empty());
    let main = match context {
        Some(c) if names.is_empty() => safe_line(c).into_owned(),
        Some(c) => format!("{} · {}", safe_line(c), names.join(", ")),
        None => names.join(", "),
    };
    let marks_w = if cols.marks > 0 { cols.marks + 1 } else { 0 };
    let room = w.saturating_sub(1 + marks_w + 1 + cols.count + 1 + AGE);
    let main = cut(&main, room);
    let pad = " ".repeat(room.saturating_sub(width(&main)));
    let mut spans = vec![unread];
    if cols.marks > 0 {
        let n = marks.len();
        spans.extend(marks.into_iter().map(|(m, style)| Span::styled(m, style)));
        spans.push(Span::raw(" ".repeat(cols.marks - n + 1)));
    }
    spans.extend([
        Span::raw(main),
        Span::raw(pad),
        Span::raw(" "),
        Span::styled(count, theme::DIM),
        Span::raw(" "),
        Span::styled(age, age_style),
    ]);
    theme::highlight(&mut spans, selected);
    Line::from(spans)
}

/// `text` cut to `room` cells, its `…` right after the last word kept (`launch plan…`, not
/// `launch plan …`).
fn cut(text: &str, room: usize) -> String {
    let cut = truncate(text, room);
    match cut.strip_suffix('…') {
        Some(kept) if kept.ends_with(' ') => format!("{}…", kept.trim_end()),
        _ => cut,
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{ThreadRow, ThreadSummary};

    /// A row with every marker on: unread, a bad signature, to relay, to me, a missed relay,
    /// a reply awaited, a draft; 14 messages, by a contact.
    fn marked() -> ThreadRow {
        ThreadRow {
            summary: ThreadSummary {
                id: "t1".into(),
                context: Some("launch plan for the spring release".into()),
                participants: vec!["claude://session/7c2e91".into(), "evil\u{1b}[31m".into()],
                message_count: 14,
                last_activity: "2026-12-01T11:58:00Z".into(),
                awaiting_reply: true,
                awaiting_since: Some("2026-12-01T09:00:00Z".into()),
                archived_at: None,
            },
            unread: true,
            drafts: 1,
            to_relay: 2,
            to_me: 1,
            missing_parents: 1,
            latest: Some("2026-12-01T11:58:00Z".into()),
            signature_alarms: 1,
        }
    }

    fn text(line: &Line<'_>) -> String {
        line.spans.iter().map(|s| s.content.as_ref()).collect()
    }

    /// The address book's names, as the pane asks them of it.
    fn names(who: &str) -> String {
        let book = crate::contacts::AddressBook {
            contacts: vec![crate::contacts::Contact {
                name: "CLAUDE".into(),
                address: Some("claude://session/7c2e91".into()),
                ..Default::default()
            }],
            fenced_recipients: Vec::new(),
        };
        book.display_name(who).to_string()
    }

    /// At 80×24 the list is 26 cells inside. With every marker on, the row used to keep
    /// none of its title (`✗1 ⏳3h ✎ ⇢2 ✉1 ⚠1` and `14  0s` took all 26); now the markers
    /// take a cell each and the title keeps 14 characters.
    #[test]
    fn every_marker_on_leaves_fourteen_cells_for_the_title_at_80_columns() {
        let now = "2026-12-01T12:00:00Z".parse().unwrap();
        let row = marked();
        let cols = Columns::of([&row].into_iter());
        let line = text(&row_line(now, &names, &row, 26, cols, false));
        assert_eq!(line, "●✗⧗✎ launch plan f… 14  3h");
        assert_eq!(width(&line), 26);
        // 14 cells: 13 characters of the context and the `…` that says it goes on.
        let kept = 26 - width("●✗⧗✎ ") - width(" 14  3h");
        assert_eq!(kept, 14);
        assert_eq!(width("launch plan f…"), kept);
    }

    /// Participants go by their contact names; names the book does not know stay theirs,
    /// made safe.
    #[test]
    fn participants_go_by_contact_name_and_unknown_ones_stay_safe() {
        let now = "2026-12-01T12:00:00Z".parse().unwrap();
        let mut row = marked();
        row.summary.context = Some("kyoto".into());
        let cols = Columns::of([&row].into_iter());
        let line = text(&row_line(now, &names, &row, 60, cols, false));
        assert!(line.contains("kyoto · CLAUDE, evil"), "{line:?}");
        assert!(
            !line.contains('\u{1b}') && !line.contains("claude://"),
            "{line:?}"
        );
    }

    /// A row with nothing to mark keeps its title in the column of the marked rows beside
    /// it, and counts and ages line up at the right.
    #[test]
    fn rows_line_up() {
        let now = "2026-12-01T12:00:00Z".parse().unwrap();
        let mut plain = marked();
        plain.unread = false;
        plain.summary.context = Some("notes".into());
        plain.summary.message_count = 3;
        plain.summary.awaiting_reply = false;
        (plain.drafts, plain.to_relay, plain.to_me) = (0, 0, 0);
        (plain.missing_parents, plain.signature_alarms) = (0, 0);
        let rows = [marked(), plain];
        let cols = Columns::of(rows.iter());
        let lines: Vec<String> = (rows.iter())
            .map(|r| text(&row_line(now, &names, r, 26, cols, false)))
            .collect();
        assert_eq!(lines[1], "     notes · CLAUD…  3  2m");
        assert_eq!(width(&lines[1]), 26);
        // Nothing marked in sight: no marker column at all.
        let cols = Columns::of(rows[1..].iter());
        let line = text(&row_line(now, &names, &rows[1], 26, cols, false));
        assert!(line.starts_with(" notes · CLAUDE"), "{line:?}");
    }
}
