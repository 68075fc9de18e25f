//! The look of rendered markdown: the 16 basic colours and modifiers only (as `ui/theme.rs`
//! keeps the rest of the app), so a body reads the same under any terminal theme, tmux and SSH.

use ratatui::style::{Color, Modifier, Style};

/// A heading of level 1: bold and underlined, in the heading colour.
pub(super) const H1: Style = Style::new()
    .fg(Color::Cyan)
    .add_modifier(Modifier::BOLD)
    .add_modifier(Modifier::UNDERLINED);
/// A heading of level 2.
pub(super) const H2: Style = Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD);
/// A heading of level 3.
pub(super) const H3: Style = Style::new().add_modifier(Modifier::BOLD);
/// Headings of levels 4 to 6: told apart from bold text by the italic.
pub(super) const H4: Style = Style::new()
    .add_modifier(Modifier::BOLD)
    .add_modifier(Modifier::ITALIC);
/// `*emphasis*`.
pub(super) const EMPHASIS: Style = Style::new().add_modifier(Modifier::ITALIC);
/// `**strong**`.
pub(super) const STRONG: Style = Style::new().add_modifier(Modifier::BOLD);
/// `~~struck~~`.
pub(super) const STRIKE: Style = Style::new().add_modifier(Modifier::CROSSED_OUT);
/// `` `inline code` ``: a colour of its own, since its backticks are not shown.
pub(super) const INLINE_CODE: Style = Style::new().fg(Color::Yellow);
/// A link's text.
pub(super) const LINK: Style = Style::new()
    .fg(Color::Blue)
    .add_modifier(Modifier::UNDERLINED);
/// The URL shown after a link's text, and an image's.
pub(super) const URL: Style = Style::new().fg(Color::DarkGray);
/// An image's alt text.
pub(super) const IMAGE: Style = Style::new().add_modifier(Modifier::ITALIC);
/// List markers (`•`, `1.`, task boxes).
pub(super) const MARKER: Style = Style::new().fg(Color::Cyan);
/// The bar in front of a block quote's lines.
pub(super) const QUOTE_BAR: Style = Style::new().fg(Color::DarkGray);
/// A block quote's text.
pub(super) const QUOTE: Style = Style::new().add_modifier(Modifier::ITALIC);
/// The bar in front of a code block's lines, and table rules.
pub(super) const FRAME: Style = Style::new().fg(Color::DarkGray);
/// A code block's number, `[1]`: what the reader copies it by.
pub(super) const CODE_NUMBER: Style = Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD);
/// A code block's language label.
pub(super) const CODE_LANG: Style = Style::new().fg(Color::DarkGray);
/// A table's header row.
pub(super) const TABLE_HEAD: Style = Style::new().add_modifier(Modifier::BOLD);
/// Horizontal rules.
pub(super) const RULE: Style = Style::new().fg(Color::DarkGray);
/// HTML, shown as its text.
pub(super) const HTML: Style = Style::new().fg(Color::DarkGray);
/// Footnote references and labels.
pub(super) const FOOTNOTE: Style = Style::new().fg(Color::Magenta);
