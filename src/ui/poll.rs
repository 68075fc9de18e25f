//! The poll panel and the ERROR code picker. The panel's lines are built (and made safe) by
//! `app::poll_panel`; this only lays them out.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::popups::frame_block;
use super::theme;
use crate::app::keymap::Scope;
use crate::app::panes::layout::centered;
use crate::app::popups::poll_panel::PollPanel;
use crate::app::text::truncate;
use crate::app::writing::error_reply::{CodePicker, choices};
use crate::app::{Action, App};

/// Draws the poll panel.
pub(super) fn panel(app: &App, panel: &PollPanel, frame: &mut Frame, size: Rect) {
    let key = |a: &Action, fallback: &str| {
        app.keymap
            .key_for(Scope::Poll, a)
            .map(|k| k.to_string())
            .unwrap_or_else(|| fallback.to_string())
    };
    let close = key(&Action::ClosePoll, "close_poll");
    let lines = panel.lines(&close);
    let height = (lines.len() as u16 + 2).max(8);
    let area = centered(size, 96, height);
    let title = format!(
        " Poll — {close} closes after the deadline, {} leaves ",
        key(&Action::Back, "back")
    );
    let inner = frame_block(&title, frame, area);
    let w = inner.width as usize;
    let tally = &panel.view.tally;
    let shown: Vec<Line> = lines
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let style = if i == 0 {
                theme::TITLE
            } else if l.starts_with("Quorum:") && tally.quorum_reached {
                theme::OK
            } else if (l.starts_with("Quorum:") && tally.quorum_out_of_reach)
                || (l.starts_with("Deadline:") && tally.expired)
            {
                theme::WARN
            } else {
                ratatui::style::Style::new()
            };
            Line::from(Span::styled(truncate(l, w), style))
        })
        .collect();
    frame.render_widget(Paragraph::new(shown), inner);
}

/// Draws the ERROR code picker.
pub(super) fn codes(picker: &CodePicker, frame: &mut Frame, size: Rect) {
    let rows = choices();
    let area = crate::app::panes::layout::picker_area(size, 64, rows.len());
    let inner = frame_block(
        " Answer with — Enter opens the composer, Esc cancels ",
        frame,
        area,
    );
    let w = inner.width as usize;
    let lines: Vec<Line> = rows
        .iter()
        .enumerate()
        .map(|(i, (code, what))| {
            let text = truncate(&format!(" {code:<14} {what}"), w);
            if i == picker.selected {
                Line::from(Span::styled(text, theme::SELECTED))
            } else {
                Line::from(text)
            }
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), inner);
}
