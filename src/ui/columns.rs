//! Side by side: the columns the app laid out (`app::reading::columns`), drawn over the
//! browse screen down to its hint and status lines, which stay in sight.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

use super::theme;
use crate::app::reading::columns::{HEAD_ROWS, SideBySide};
use crate::app::text::{truncate, width};

/// Draws the view.
pub(super) fn render(v: &SideBySide, frame: &mut Frame, size: Rect) {
    let area = Rect {
        height: size.height.saturating_sub(2),
        ..size
    };
    frame.render_widget(Clear, area);
    let w = area.width as usize;
    let (shown, each) = v.fit(w);
    let last = (v.first + shown).min(v.columns.len());
    let more = if v.columns.len() > shown {
        format!(
            " · columns {}–{} of {} (←/→)",
            v.first + 1,
            last,
            v.columns.len()
        )
    } else {
        String::new()
    };
    let mut lines = vec![Line::from(Span::styled(
        truncate(&format!("{}{more}", v.title), w),
        theme::TITLE,
    ))];
    let mut heads = Vec::new();
    for (i, c) in v.columns[v.first..last].iter().enumerate() {
        if i > 0 {
            heads.push(Span::styled("│", theme::BORDER));
        }
        let mut head = c.sender.clone();
        if let Some(vote) = &c.vote {
            head.push_str(&format!(" · vote {vote}"));
        }
        if c.answered == Some("no") {
            head.push_str(" · silent");
        } else if let Some(a @ ("late" | "declined")) = c.answered {
            head.push_str(&format!(" · {a}"));
        }
        heads.push(Span::styled(pad(&truncate(&head, each), each), theme::KEY));
    }
    lines.push(Line::from(heads));
    let rule: Vec<String> = (v.first..last).map(|_| "─".repeat(each)).collect();
    lines.push(Line::from(Span::styled(rule.join("┼"), theme::BORDER)));
    let page = (size.height as usize).saturating_sub(HEAD_ROWS);
    for row in v.scroll..v.scroll + page {
        let mut spans = Vec::new();
        for (i, col) in v.rows[v.first..last.min(v.rows.len())].iter().enumerate() {
            if i > 0 {
                spans.push(Span::styled("│", theme::BORDER));
            }
            let line = col.get(row).cloned().unwrap_or_default();
            let used: usize = line.spans.iter().map(|s| width(&s.content)).sum();
            spans.extend(line.spans);
            spans.push(Span::raw(" ".repeat(each.saturating_sub(used))));
        }
        lines.push(Line::from(spans));
    }
    frame.render_widget(Paragraph::new(lines), area);
}

/// `s` padded with spaces to `w` cells.
fn pad(s: &str, w: usize) -> String {
    format!("{s}{}", " ".repeat(w.saturating_sub(width(s))))
}
