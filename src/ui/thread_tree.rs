//! The thread tree pane: guide, intent badge, from→to, first body line, time — for the
//! visible rows only, so a 10 000-message thread draws as fast as a short one.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{focused, inner, pane_block, theme};
use crate::app::text::{age, safe_line, truncate, width};
use crate::app::{App, Pane};

/// Draws the tree of the open thread.
pub(super) fn render(app: &App, frame: &mut Frame, area: Rect) {
    let Some(t) = &app.tree else {
        frame.render_widget(
            pane_block(Line::from(" Thread "), focused(app, Pane::Tree)),
            area,
        );
        return;
    };
    let ctx = t.outline.context.as_deref().unwrap_or("(no context)");
    let title = format!(
        " {} — {} message{} ",
        truncate(&safe_line(ctx), (area.width as usize).saturating_sub(20)),
        t.outline.rows.len(),
        if t.outline.rows.len() == 1 { "" } else { "s" }
    );
    frame.render_widget(
        pane_block(Line::from(title), focused(app, Pane::Tree)),
        area,
    );
    let body = inner(area);
    let w = body.width as usize;
    let lines: Vec<Line> = t
        .visible
        .iter()
        .enumerate()
        .skip(t.offset)
        .take(body.height as usize)
        .map(|(pos, &i)| row_line(app, t, i, w, pos == t.selected))
        .collect();
    frame.render_widget(Paragraph::new(lines), body);
}

/// The row of message `i` of the tree `t`, `w` cells wide: its guide, intent badge and
/// fold, its marks (placed, status, signature, personal data), from→to, first body line
/// and age.
fn row_line(
    app: &App,
    t: &crate::app::panes::thread_tree::ThreadTree,
    i: usize,
    w: usize,
    selected: bool,
) -> Line<'static> {
    let m = &t.outline.rows[i];
    let intent = m.intent.as_deref().unwrap_or("?");
    let badge = truncate(&safe_line(intent), t.intent_width);
    let badge = format!(
        "{badge}{}",
        " ".repeat(t.intent_width.saturating_sub(width(&badge)))
    );
    let fold = if t.folded[i] {
        format!("[+{}] ", t.subtree_len(i))
    } else {
        String::new()
    };
    // ≈: its place was inferred (a v1.0 reply filed under its session's latest); ⇄
    // while the operator moves it.
    let placed = if app.moving.as_deref() == Some(m.id.as_str()) {
        "⇄ "
    } else if m.inferred {
        "≈ "
    } else {
        ""
    };
    let status = format!(
        "{placed}{}{}",
        if m.missing_parent { "⚠ " } else { "" },
        match (m.status.as_str(), m.delivery.as_deref()) {
            ("draft", _) => "✎ ",
            (_, Some("to_relay")) => "⇢ ",
            (_, Some("to_me")) => "✉ ",
            (_, Some("awaiting")) => "⏳",
            _ => "",
        }
    );
    let (sig, sig_style) = signature_mark(m.signature.as_deref());
    // Personal data in the body: worth knowing before relaying or quoting it.
    let pii = if m.pii.is_some() { "PII " } else { "" };
    // By contact name where the address book knows the address: `Claude→ChatGPT` keeps the
    // row for the body's first line at 80 columns, where `claude://session/7c2e91→…` took it.
    let route = format!(
        "{}→{}",
        safe_line(app.contacts.display_name(&m.from)),
        safe_line(app.contacts.display_name(&m.to))
    );
    let first = m.first_line.as_str();
    let time = age(&m.sent_at, app.now);
    let guide = &t.guide[i];
    let fixed = width(guide)
        + 2
        + t.intent_width
        + 1
        + width(&fold)
        + width(&status)
        + width(sig)
        + width(pii)
        + time.len()
        + 1;
    let room = w.saturating_sub(fixed);
    let route = format!("{} ", truncate(&route, (room / 2).saturating_sub(1)));
    let text = truncate(&safe_line(first.trim()), room.saturating_sub(width(&route)));
    let pad = room.saturating_sub(width(&route) + width(&text));
    let mut spans = vec![
        Span::styled(guide.clone(), theme::DIM),
        Span::styled("● ", theme::intent(Some(intent))),
        Span::styled(badge, theme::intent(Some(intent))),
        Span::raw(" "),
        Span::styled(fold, theme::WARN),
        Span::styled(status, theme::AWAITING),
        Span::styled(sig, sig_style),
        Span::styled(pii, theme::WARN),
        Span::styled(route, theme::KEY),
        Span::raw(text),
        Span::raw(" ".repeat(pad)),
        Span::raw(" "),
        Span::styled(time, theme::DIM),
    ];
    theme::highlight(&mut spans, selected);
    Line::from(spans)
}

/// The signature verdict's mark and colour: red for a bad signature or a changed key, the
/// alarms the operator must not miss.
fn signature_mark(state: Option<&str>) -> (&'static str, ratatui::style::Style) {
    use crate::protocol::trust::SigState;
    match state.and_then(SigState::parse) {
        None => ("", theme::DIM),
        Some(SigState::Verified) => ("✓ ", theme::OK),
        Some(SigState::Unknown) => ("? ", theme::DIM),
        Some(s) => (if s == SigState::Bad { "✗ " } else { "⚠ " }, theme::ERROR),
    }
}
