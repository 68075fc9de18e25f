//! The help screen's lines: the keymap's rows laid out for a width. A description too long
//! for its line goes on over lines indented under the description column rather than being
//! cut, so every word of help can be read in the smallest terminal the app draws in. The view
//! draws these lines and the app scrolls over the same ones, so scrolling reaches the end.

use ratatui::layout::Rect;

use crate::app::keymap::Keymap;
use crate::app::panes::layout::{centered, inner_height, inner_width};
use crate::app::text::{width, wrap};

/// The keys column: two spaces, then the keys padded to this width and a space.
const KEYS_WIDTH: usize = 17;

/// One line of help.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HelpLine {
    /// A section title, or the blank line between sections.
    Title(String),
    /// The keys cell (indented and padded to the description column; blank on a continuation
    /// line) and the words describing them.
    Row {
        /// The keys, as wide as the column.
        keys: String,
        /// What they do, or the rest of it.
        what: String,
    },
}

/// The help popup in a `size` terminal.
pub(crate) fn help_area(size: Rect) -> Rect {
    centered(size, 76, size.height.saturating_sub(2))
}

/// Help's lines inside `cols` columns.
pub(crate) fn help_lines(keymap: &Keymap, cols: usize) -> Vec<HelpLine> {
    let mut out = Vec::new();
    for (keys, what) in keymap.help_rows() {
        if keys.is_empty() {
            out.extend(wrap(&what, cols).into_iter().map(HelpLine::Title));
            continue;
        }
        let cell = format!("  {keys:<KEYS_WIDTH$} ");
        // Keys wider than the column push the description right, and wrap it there.
        let indent = width(&cell);
        let room = cols.saturating_sub(indent).max(10);
        for (i, part) in wrap(&what, room).into_iter().enumerate() {
            let keys = if i == 0 {
                cell.clone()
            } else {
                " ".repeat(indent)
            };
            out.push(HelpLine::Row { keys, what: part });
        }
    }
    out
}

/// The furthest help scrolls in a `size` terminal: where its last line is at the bottom.
pub(crate) fn help_last_scroll(keymap: &Keymap, size: Rect) -> usize {
    let area = help_area(size);
    help_lines(keymap, inner_width(area) as usize)
        .len()
        .saturating_sub(inner_height(area))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// At the smallest size, every line fits and no word of a description is lost.
    #[test]
    fn long_descriptions_wrap_under_their_column() {
        let km = Keymap::default();
        let cols = 56;
        let lines = help_lines(&km, cols);
        let mut text = String::new();
        for l in &lines {
            let (w, s) = match l {
                HelpLine::Title(t) => (width(t), t.clone()),
                HelpLine::Row { keys, what } => (width(keys) + width(what), what.clone()),
            };
            assert!(w <= cols, "{l:?}");
            text.push_str(&s);
            text.push(' ');
        }
        let words = |s: &str| s.split_whitespace().map(str::to_string).collect::<Vec<_>>();
        for (_, what) in km.help_rows() {
            for w in words(&what) {
                assert!(text.contains(&w), "{w} of {what}");
            }
        }
        let at = lines
            .iter()
            .position(|l| matches!(l, HelpLine::Row { keys, .. } if keys.contains(":export-all")))
            .unwrap();
        let HelpLine::Row { keys, what } = &lines[at + 1] else {
            panic!("{:?}", lines[at + 1])
        };
        assert!(keys.trim().is_empty() && width(keys) == 20, "{keys:?}");
        assert!(!what.is_empty());
    }
}
