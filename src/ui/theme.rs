//! Colours and styles in one place. Only the 16 basic colours are used, so the app reads
//! the same under any terminal theme, tmux and SSH.

use ratatui::style::{Color, Modifier, Style};

use crate::protocol::Intent;

/// Unfocused pane borders.
pub(crate) const BORDER: Style = Style::new().fg(Color::DarkGray);
/// The focused pane's border.
pub(crate) const FOCUS_BORDER: Style = Style::new().fg(Color::Cyan);
/// The focused pane's (or field's) title: reversed, so focus shows without colour.
pub(crate) const FOCUS_TITLE: Style = Style::new()
    .add_modifier(Modifier::REVERSED)
    .add_modifier(Modifier::BOLD);
/// The selected row.
pub(crate) const SELECTED: Style = Style::new().add_modifier(Modifier::REVERSED);
/// The cursor of the composer's body and META boxes.
pub(crate) const CURSOR: Style = Style::new().add_modifier(Modifier::REVERSED);
/// Text selected in the composer's boxes: underlined too, so it shows without colour.
pub(crate) const SELECTION: Style = Style::new()
    .bg(Color::LightBlue)
    .add_modifier(Modifier::UNDERLINED);
/// Secondary text (times, counts).
pub(crate) const DIM: Style = Style::new().fg(Color::DarkGray);
/// Section titles.
pub(crate) const TITLE: Style = Style::new().add_modifier(Modifier::BOLD);
/// Header and META keys.
pub const KEY: Style = Style::new().fg(Color::Cyan);
/// Errors.
pub const ERROR: Style = Style::new().fg(Color::Red).add_modifier(Modifier::BOLD);
/// Warnings.
pub(crate) const WARN: Style = Style::new().fg(Color::Yellow);
/// Good news.
pub const OK: Style = Style::new().fg(Color::Green);
/// Key names in hints.
pub(crate) const HINT_KEY: Style = Style::new().fg(Color::Black).bg(Color::Gray);
/// Unread marker.
pub(crate) const UNREAD: Style = Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD);
/// "Awaiting reply" marker.
pub(crate) const AWAITING: Style = Style::new().fg(Color::Yellow);

/// Marks a row's spans as the selected row when `on`.
pub(crate) fn highlight(spans: &mut [ratatui::text::Span<'_>], on: bool) {
    if on {
        for s in spans {
            s.style = s.style.patch(SELECTED);
        }
    }
}

/// The badge colour of an intent.
pub fn intent(raw: Option<&str>) -> Style {
    let color = match raw.map(Intent::parse) {
        Some(Intent::Request) => Color::Blue,
        Some(Intent::Respond) => Color::Green,
        Some(Intent::Poll) => Color::Magenta,
        Some(Intent::Error) | Some(Intent::Nack) => Color::Red,
        Some(Intent::Escalate) | Some(Intent::Handoff) => Color::Yellow,
        Some(Intent::Close) | Some(Intent::Revoke) => Color::DarkGray,
        _ => Color::Cyan,
    };
    Style::new().fg(color).add_modifier(Modifier::BOLD)
}
