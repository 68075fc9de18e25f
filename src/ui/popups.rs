//! Popups: help, the paste preview, the paste box, search, the command line, drafts.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use super::theme;
use crate::app::App;
use crate::app::panes::layout::centered;
use crate::app::panes::repairs;
use crate::app::popups::popup::{Popup, Preview, Search};
use crate::app::text::{safe_line, short_time, truncate, width, window};
use crate::store::Outcome;

/// Draws `popup` over the screen.
pub(super) fn render(app: &App, popup: &Popup, frame: &mut Frame, size: Rect) {
    match popup {
        Popup::Help { scroll, filter } => help(app, *scroll, filter.as_deref(), frame, size),
        Popup::Messages { scroll } => messages(app, *scroll, frame, size),
        Popup::Queue(view) => super::queue::render(app, view, frame, size),
        Popup::Poll(panel) => super::poll::panel(app, panel, frame, size),
        Popup::ErrorCodes(picker) => super::poll::codes(picker, frame, size),
        Popup::SideBySide(v) => super::columns::render(v, frame, size),
        Popup::Reader(r) => super::reader::render(r, frame, size),
        Popup::Keys { keys, scroll } => super::keys::render(keys, *scroll, frame, size),
        Popup::Preview(p) => preview(app, p, frame, size),
        Popup::PasteBox { text, note } => paste_box(text, note, frame, size),
        Popup::Search(s) => search(app, s, frame, size),
        Popup::Conversation(c) => super::conversation::render(app, c, frame, size),
        Popup::Command(p) => command_line(p, frame, size),
        Popup::Erase(ask) => erase(ask, frame, size),
        Popup::Drafts {
            drafts: list,
            unsent,
            selected,
            confirm,
        } => drafts(list, unsent, *selected, confirm.as_deref(), frame, size),
    }
}

/// The paste box: why it is open, above the text so far.
fn paste_box(text: &ratatui_textarea::TextArea<'_>, note: &str, frame: &mut Frame, size: Rect) {
    let area = centered(size, 100, 20);
    let b = frame_block(
        " Paste box — C-s previews the import, Esc cancels ",
        frame,
        area,
    );
    let [n, t] = Layout::vertical([Constraint::Length(2), Constraint::Min(1)]).areas(b);
    frame.render_widget(
        Paragraph::new(Span::styled(note.to_string(), theme::DIM)).wrap(Wrap { trim: true }),
        n,
    );
    frame.render_widget(text, t);
}

/// The `:` command line, on the screen's last two lines: what is typed, and beneath it
/// the completions or what Enter does.
fn command_line(p: &crate::app::popups::popup::Prompt, frame: &mut Frame, size: Rect) {
    let area = Rect {
        x: 0,
        y: size.height.saturating_sub(2),
        width: size.width,
        height: 2,
    };
    frame.render_widget(Clear, area);
    frame.render_widget(
        Paragraph::new(vec![
            Line::from(
                vec![
                    Span::styled(":", theme::KEY),
                    // Completed file names come from the disk: never raw.
                ]
                .into_iter()
                .chain(super::editor::typed_line(
                    p.split(),
                    (size.width as usize).saturating_sub(2),
                    ratatui::style::Style::default(),
                    true,
                ))
                .collect::<Vec<_>>(),
            ),
            Line::from(Span::styled(
                if p.candidates.is_empty() {
                    let what = if p.text.starts_with("pipe-thread ") {
                        "Enter runs the command with the open thread on its input, "
                    } else if p.text.starts_with("pipe ") {
                        "Enter runs the command with the envelope on its input, "
                    } else {
                        "Enter runs, Tab completes, "
                    };
                    format!("{what}Esc cancels — :help lists the commands")
                } else {
                    truncate(&safe_line(&p.candidates.join("  ")), size.width as usize)
                },
                theme::DIM,
            )),
        ]),
        area,
    );
}

/// The drafts: those being composed, then the envelopes filed but never copied; the
/// `selected` one marked, and the one `confirm` names marked for discarding.
fn drafts(
    drafts: &[crate::store::Draft],
    unsent: &[crate::store::QueueRow],
    selected: usize,
    confirm: Option<&str>,
    frame: &mut Frame,
    size: Rect,
) {
    let area = crate::app::panes::layout::drafts_area(size);
    let inner = frame_block(
        " Drafts — Enter resumes, x discards, Esc closes ",
        frame,
        area,
    );
    let being_composed = drafts.iter().map(|d| {
        let form: serde_json::Value = serde_json::from_str(&d.form).unwrap_or_default();
        let get = |k: &str| {
            form.get(k)
                .and_then(|v| v.as_str())
                .unwrap_or("")
                .to_string()
        };
        let first = get("body").lines().next().unwrap_or("").to_string();
        let mark = if confirm == Some(d.id.as_str()) {
            "✗ "
        } else {
            ""
        };
        format!(
            "{mark}{}  {} {}  — {}→{}",
            short_time(&d.updated_at),
            get("intent"),
            first,
            get("from"),
            get("to"),
        )
    });
    // Then the envelopes filed but never copied, as the queue lists them.
    let filed = unsent.iter().map(|m| {
        format!(
            "{}  not copied: {} {}  — {}→{}",
            short_time(&m.since),
            m.intent.as_deref().unwrap_or(""),
            m.first_line,
            m.from,
            m.to,
        )
    });
    let lines: Vec<Line> = being_composed
        .chain(filed)
        .enumerate()
        .skip(first_shown(selected, inner.height))
        .take(inner.height as usize)
        .map(|(i, text)| {
            let text = truncate(&safe_line(&text), inner.width as usize);
            let style = if i == selected {
                theme::SELECTED
            } else {
                ratatui::style::Style::new()
            };
            Line::from(Span::styled(text, style))
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), inner);
}

/// The erase question: what goes, what stays, and that only `y` erases.
fn erase(ask: &crate::app::popups::erase::EraseConfirm, frame: &mut Frame, size: Rect) {
    let area = centered(size, 72, 14);
    let inner = frame_block(" Erase for good? — y erases, Esc keeps ", frame, area);
    let lines = vec![
        Line::from(Span::styled(
            truncate(&safe_line(&ask.name), inner.width as usize),
            theme::TITLE,
        )),
        Line::from(""),
        Line::from(safe_line(&format!("Erases {}.", ask.plan.describe())).into_owned()),
        Line::from(""),
        Line::from(Span::styled(
            "Its text is overwritten in the database, its log and its search index: this cannot be undone.",
            theme::WARN,
        )),
        Line::from(Span::styled(
            format!("{}.", crate::store::EARLIER_COPIES),
            theme::WARN,
        )),
    ];
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: true }), inner);
}

/// The first row a popup list shows so that `selected` is visible in `height` rows.
fn first_shown(selected: usize, height: u16) -> usize {
    selected.saturating_sub((height as usize).saturating_sub(1))
}

/// Clears `area`, draws a bordered block titled `title`, returns its inside.
pub(super) fn frame_block(title: &str, frame: &mut Frame, area: Rect) -> Rect {
    frame.render_widget(Clear, area);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme::FOCUS_BORDER)
        .title(title.to_string());
    let inner = block.inner(area);
    frame.render_widget(block, area);
    inner
}

/// Help: every key in force, or while the operator types a filter, the rows whose keys or
/// words hold it, under their sections' titles; the title says how to filter and leave.
fn help(app: &App, scroll: usize, filter: Option<&str>, frame: &mut Frame, size: Rect) {
    use crate::app::popups::help::{HelpLine, help_area, help_lines};
    let area = help_area(size);
    let title = match filter {
        None => fitting_title(
            " Help — keys in force (config [keys.*]) — type to filter, Esc closes ",
            " Help — type to filter — Esc closes ",
            area,
        )
        .to_string(),
        Some(f) => {
            let head = " Help — filter: ";
            let tail = "▏ — Bksp widens, Esc clears ";
            let room = (area.width as usize).saturating_sub(width(head) + width(tail) + 2);
            format!(
                "{head}{}{tail}",
                crate::app::text::tail(&safe_line(f), room)
            )
        }
    };
    let inner = frame_block(&title, frame, area);
    let rows = help_lines(&app.keymap, inner.width as usize, filter);
    if rows.is_empty() {
        let f = safe_line(filter.unwrap_or_default()).into_owned();
        let text = format!("No key or description holds “{f}”. Backspace widens, Esc clears.");
        frame.render_widget(
            Paragraph::new(text).wrap(ratatui::widgets::Wrap { trim: true }),
            inner,
        );
        return;
    }
    let scroll = scroll.min(rows.len().saturating_sub(inner.height as usize));
    let lines: Vec<Line> = rows
        .into_iter()
        .skip(scroll)
        .take(inner.height as usize)
        .map(|l| match l {
            HelpLine::Title(t) => Line::from(Span::styled(t, theme::TITLE)),
            HelpLine::Row { keys, what } => {
                Line::from(vec![Span::styled(keys, theme::KEY), Span::raw(what)])
            }
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), inner);
}

/// The long title where it fits the popup's top border; where it does not, the short one
/// that says what matters: how to leave.
fn fitting_title<'a>(full: &'a str, short: &'a str, area: Rect) -> &'a str {
    if width(full) + 2 <= area.width as usize {
        full
    } else {
        short
    }
}

/// `:messages`: what the status line said, newest last, each in its level's colour.
fn messages(app: &App, scroll: usize, frame: &mut Frame, size: Rect) {
    use crate::app::Level;
    let (area, rows) = crate::app::popups::messages::messages_layout(&app.messages, size);
    let inner = frame_block(
        fitting_title(
            " Messages — what the status line said, newest last — Esc closes ",
            " Messages — Esc closes ",
            area,
        ),
        frame,
        area,
    );
    if rows.is_empty() {
        let none = Span::styled("Nothing said yet.", theme::DIM);
        frame.render_widget(Paragraph::new(none), inner);
        return;
    }
    let scroll = scroll.min(rows.len().saturating_sub(inner.height as usize));
    let lines: Vec<Line> = (rows.into_iter().skip(scroll).take(inner.height as usize))
        .map(|(level, text)| {
            let style = match level {
                Level::Info => ratatui::style::Style::new(),
                Level::Warn => theme::WARN,
                Level::Error => theme::ERROR,
            };
            Line::from(Span::styled(text, style))
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), inner);
}

fn preview(app: &App, p: &Preview, frame: &mut Frame, size: Rect) {
    let area = centered(size, 110, size.height.saturating_sub(4));
    let n = p.report.items.len();
    let plural = if n == 1 { "" } else { "s" };
    let title = match &p.unsaved {
        None => format!(
            " Paste: {n} envelope{plural} in {} bytes (kept) — Enter imports, Esc cancels ",
            p.bytes
        ),
        Some(_) => format!(
            " Paste: {n} envelope{plural} in {} bytes (NOT SAVED) — w saves to a file, Enter retries ",
            p.bytes
        ),
    };
    let inner = frame_block(&title, frame, area);
    let (note, inner) = match &p.unsaved {
        Some(u) => {
            let [note, rest] =
                Layout::vertical([Constraint::Length(2), Constraint::Min(1)]).areas(inner);
            let where_ = match &u.file {
                Some(f) => format!("written to {}", f.display()),
                None => "kept in memory only: w writes it to a file".to_string(),
            };
            let text = format!(
                "Not saved: {}. The paste is {where_}; Enter tries the database again.",
                u.cause
            );
            (Some((note, safe_line(&text).into_owned())), rest)
        }
        None => (None, inner),
    };
    if let Some((area, text)) = note {
        frame.render_widget(
            Paragraph::new(Span::styled(text, theme::ERROR)).wrap(Wrap { trim: false }),
            area,
        );
    }
    let [list, detail] =
        Layout::vertical([Constraint::Percentage(55), Constraint::Min(3)]).areas(inner);
    let w = list.width as usize;
    let lines: Vec<Line> = p
        .report
        .items
        .iter()
        .enumerate()
        .skip(first_shown(p.selected, list.height))
        .take(list.height as usize)
        .map(|(i, item)| preview_row(p, i, item, w))
        .collect();
    frame.render_widget(Paragraph::new(lines), list);
    let mut d = (p.report.items.get(p.selected))
        .map(|item| preview_detail(app, item))
        .unwrap_or_default();
    // The body follows what the import will do, rendered as the inspector shows it.
    let room = (detail.height as usize).saturating_sub(1 + d.len() + 1);
    let body = p.body_lines(detail.width as usize, room);
    if !body.is_empty() {
        d.push(Line::default());
        d.extend(body);
    }
    frame.render_widget(
        Paragraph::new(d).wrap(Wrap { trim: false }).block(
            Block::default()
                .borders(Borders::TOP)
                .border_style(theme::BORDER),
        ),
        detail,
    );
    let _ = app;
}

/// The preview's line for `item`, the `i`th of the paste, in `w` cells: its outcome marked,
/// its line, where it goes and what it says.
fn preview_row(p: &Preview, i: usize, item: &crate::store::ImportItem, w: usize) -> Line<'static> {
    let (mark, style) = match item.outcome {
        Outcome::Rejected => ("✗ error ", theme::ERROR),
        Outcome::Conflict => ("✗ id    ", theme::ERROR),
        Outcome::Duplicate => ("= dup   ", theme::DIM),
        Outcome::Signed => ("✓ signed", theme::OK),
        Outcome::Imported if item.diagnostics.is_empty() => ("✓ valid ", theme::OK),
        Outcome::Imported
            if item
                .diagnostics
                .iter()
                .all(|d| repairs::note(d.code.as_str()).is_some()) =>
        {
            ("✓ fixed ", theme::OK)
        }
        Outcome::Imported => ("! warn  ", theme::WARN),
    };
    let text = format!(
        "line {:<5} {:<28} {}",
        item.span.start_line,
        p.destinations.get(i).map(String::as_str).unwrap_or(""),
        p.summaries.get(i).map(String::as_str).unwrap_or("")
    );
    let mut spans = vec![
        Span::styled(mark, style),
        Span::raw(truncate(&safe_line(&text), w.saturating_sub(9))),
    ];
    theme::highlight(&mut spans, i == p.selected);
    Line::from(spans)
}

/// What the preview says of the selected `item`: its message id, the hints of what its
/// import will do, and each diagnostic (a repair said as done).
fn preview_detail(app: &App, item: &crate::store::ImportItem) -> Vec<Line<'static>> {
    let mut d: Vec<Line> = Vec::new();
    if let Some(m) = &item.message {
        d.push(Line::from(Span::styled(format!("message {m}"), theme::DIM)));
    }
    if item.diagnostics.is_empty() {
        d.push(Line::from(Span::styled("No problems found.", theme::OK)));
    }
    for hint in crate::app::background::landing::preview_hint(app, item) {
        d.push(Line::from(Span::styled(hint, theme::WARN)));
    }
    if let Some(hint) = crate::app::writing::error_reply::format_error_hint(app, item) {
        d.push(Line::from(Span::styled(hint, theme::WARN)));
    }
    for diag in &item.diagnostics {
        // A repair is done: said as such, not as something to fix.
        if let Some(note) = repairs::note(diag.code.as_str()) {
            d.push(Line::from(Span::styled(
                format!("line {}: repaired: {note} [{}]", diag.line, diag.code),
                theme::OK,
            )));
            continue;
        }
        let style = if diag.is_error() {
            theme::ERROR
        } else {
            theme::WARN
        };
        d.push(Line::from(Span::styled(
            format!(
                "line {}:{}: {} [{}]",
                diag.line,
                diag.column,
                safe_line(&diag.message),
                diag.code
            ),
            style,
        )));
    }
    d
}

/// The search result's line for hit `h`, the `i`th, in `w` cells: what it is and where
/// (its thread's context, unless the hit is in the context itself), then its snippet with
/// the hit in view.
fn search_row(s: &Search, i: usize, h: &crate::store::SearchHit, w: usize) -> Line<'static> {
    let ctx = safe_line(h.context.as_deref().unwrap_or(&h.thread)).into_owned();
    let snippet = safe_line(&h.snippet).into_owned();
    // A hit in the context itself: the snippet is the context, said once.
    let bare: String = snippet
        .chars()
        .filter(|c| !matches!(c, '[' | ']'))
        .collect();
    let label = s.labels.get(i).map(|l| {
        let intent = safe_line(l.intent.as_deref().unwrap_or("?")).into_owned();
        format!("{intent:<8} {} ", truncate(&safe_line(&l.from), 14))
    });
    let in_context = bare.trim_matches('…') == ctx;
    let mut prefix = if in_context {
        String::new()
    } else {
        format!("{} — ", truncate(&ctx, w / 4))
    };
    if let Some(label) = label {
        prefix = format!("{label}{prefix}");
    }
    // The text of a conflicting version, not the stored one: said first.
    if let Some(n) = h.version {
        prefix = format!("✗ version {n} · {prefix}");
    }
    // The hit stays in view however long the line.
    let room = w.saturating_sub(width(&prefix));
    // A hit in the context takes half the row at most: the body's start follows it.
    let has_body = s
        .labels
        .get(i)
        .is_some_and(|l| !l.body_start.trim().is_empty());
    let snippet_room = if in_context && has_body {
        room / 2
    } else {
        room
    };
    let shown = window(&snippet, snippet.find('[').unwrap_or(0), snippet_room);
    // A hit in the context says nothing of the message: its body's start follows.
    let after = match s.labels.get(i) {
        Some(l) if in_context => {
            let start = l
                .body_start
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            let rest = room.saturating_sub(width(&shown) + 3);
            if rest > 4 && !start.is_empty() {
                format!(" · {}", truncate(&safe_line(&start), rest))
            } else {
                String::new()
            }
        }
        _ => String::new(),
    };
    let mut spans = vec![Span::styled(prefix, theme::DIM)];
    spans.extend(hit_spans(&shown));
    spans.push(Span::styled(after, theme::DIM));
    theme::highlight(&mut spans, i == s.selected);
    Line::from(spans)
}

/// A snippet's text with its `[hits]` emphasised (the brackets stay: they also show where
/// a hit is on a terminal without bold).
fn hit_spans(snippet: &str) -> Vec<Span<'static>> {
    let mut spans = Vec::new();
    let mut rest = snippet;
    while let Some(open) = rest.find('[') {
        let close = rest[open..]
            .find(']')
            .map(|c| open + c + 1)
            .unwrap_or(rest.len());
        spans.push(Span::raw(rest[..open].to_string()));
        spans.push(Span::styled(rest[open..close].to_string(), theme::TITLE));
        rest = &rest[close..];
    }
    spans.push(Span::raw(rest.to_string()));
    spans
}

fn search(app: &App, s: &Search, frame: &mut Frame, size: Rect) {
    let area = centered(size, 110, size.height.saturating_sub(4));
    let inner = frame_block(" Search — Enter opens, Esc closes ", frame, area);
    let [input, results] =
        Layout::vertical([Constraint::Length(2), Constraint::Min(1)]).areas(inner);
    let count = match (s.prompt.text.trim().is_empty(), s.ranked_newest) {
        (true, _) => String::new(),
        (false, None) => format!("  {} of {} matches", s.hits.len(), s.matches),
        // Ranking every hit of a very common word would cost more than it tells.
        (false, Some(n)) => format!(
            "  {} of {} matches (ranked among the newest {n})",
            s.hits.len(),
            s.matches
        ),
    };

    frame.render_widget(
        Paragraph::new(vec![
            Line::from(
                vec![Span::styled("/ ", theme::KEY)]
                    .into_iter()
                    .chain(super::editor::typed_line(
                        s.prompt.split(),
                        (input.width as usize).saturating_sub(3 + width(&count)),
                        ratatui::style::Style::default(),
                        true,
                    ))
                    .chain([Span::styled(count, theme::DIM)])
                    .collect::<Vec<_>>(),
            ),
            Line::from(Span::styled(
                s.error.clone().unwrap_or_default(),
                theme::ERROR,
            )),
        ]),
        input,
    );
    let w = results.width as usize;
    let lines: Vec<Line> = s
        .hits
        .iter()
        .enumerate()
        .skip(first_shown(s.selected, results.height))
        .take(results.height as usize)
        .map(|(i, h)| search_row(s, i, h, w))
        .collect();
    let _ = app;
    frame.render_widget(Paragraph::new(lines), results);
}
