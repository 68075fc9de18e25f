//! The help screen's lines: the keymap's rows laid out for a width. A description too long
//! for its line goes on over lines indented under the description column rather than being
//! cut, so every word of help can be read in the smallest terminal the app draws in. The view
//! draws these lines and the app scrolls over the same ones, so scrolling reaches the end.
//!
//! Help is filtered by typing: a letter narrows the rows to those whose keys or description
//! hold what was typed (case aside), under their sections' titles; Backspace widens, Esc
//! clears the filter and a second Esc closes. Help's own keys that are letters (`q` and `?`
//! close it, space pages, `j` `k` `g` `G` move) keep their meaning until a filter is begun;
//! once it is, every letter is typed, `q` too. `/` begins a filter with nothing typed yet, to
//! look for one of those letters. The arrows, PgUp and PgDn still scroll while filtering.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;

use crate::app::keymap::{Keymap, Scope};
use crate::app::panes::layout::{centered, inner_height, inner_width};
use crate::app::popups::popup::Popup;
use crate::app::text::{width, wrap};
use crate::app::{Action, App};

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

impl Popup {
    /// Help, unfiltered, at its top.
    pub(crate) fn help() -> Popup {
        Popup::Help {
            scroll: 0,
            filter: None,
        }
    }
}

impl App {
    /// The help popup's keys that are typed into its filter rather than bound (see the
    /// module's doc): `None` for the keys that act as bound.
    pub(in crate::app) fn help_typing(&self, ev: &KeyEvent) -> Option<Action> {
        let Some(Popup::Help { filter, .. }) = &self.popup else {
            return None;
        };
        let plain = !ev
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        let typed = Some(Action::Input(*ev));
        match ev.code {
            KeyCode::Char(_) if plain && filter.is_some() => typed,
            KeyCode::Char('/') if plain => typed,
            KeyCode::Char(_) if plain && self.keymap.action(Scope::Help, ev).is_none() => typed,
            KeyCode::Backspace | KeyCode::Esc if filter.is_some() => typed,
            _ => None,
        }
    }

    /// A key typed into help's filter: a letter narrows, Backspace widens (and ends the
    /// filter once it is empty), Esc clears it; the rows shown start at the top again.
    pub(in crate::app) fn help_typed(&mut self, action: Action) {
        let (Some(Popup::Help { scroll, filter }), Action::Input(ev)) =
            (self.popup.as_mut(), action)
        else {
            return;
        };
        match (ev.code, filter.as_mut()) {
            (KeyCode::Char('/'), None) => *filter = Some(String::new()),
            (KeyCode::Char(c), Some(f)) => f.push(c),
            (KeyCode::Char(c), None) => *filter = Some(c.to_string()),
            (KeyCode::Backspace, Some(f)) if f.is_empty() => *filter = None,
            (KeyCode::Backspace, Some(f)) => {
                f.pop();
            }
            (KeyCode::Esc, _) => *filter = None,
            _ => {}
        }
        *scroll = 0;
    }
}

/// The keymap's help rows that `filter` keeps: every row without one; with one, the rows
/// whose keys or description hold it (case aside), each section's title over its rows kept
/// and a blank line after them.
fn kept_rows(keymap: &Keymap, filter: Option<&str>) -> Vec<(String, String)> {
    let rows = keymap.help_rows();
    let Some(filter) = filter.map(str::to_lowercase).filter(|f| !f.is_empty()) else {
        return rows;
    };
    let holds = |s: &str| s.to_lowercase().contains(&filter);
    let mut out = Vec::new();
    let mut title: Option<(String, String)> = None;
    for (keys, what) in rows {
        if keys.is_empty() {
            // A title, or the blank line that ends a section.
            if what.is_empty() {
                if title.take().is_none() {
                    out.push((keys, what));
                }
            } else {
                title = Some((keys, what));
            }
            continue;
        }
        if holds(&keys) || holds(&what) {
            if let Some(t) = title.take() {
                if out
                    .last()
                    .is_some_and(|(k, w): &(String, String)| !k.is_empty() || !w.is_empty())
                {
                    out.push((String::new(), String::new()));
                }
                out.push(t);
            }
            out.push((keys, what));
        }
    }
    while out
        .last()
        .is_some_and(|(k, w)| k.is_empty() && w.is_empty())
    {
        out.pop();
    }
    while out
        .first()
        .is_some_and(|(k, w)| k.is_empty() && w.is_empty())
    {
        out.remove(0);
    }
    out
}

/// Help's lines inside `cols` columns, narrowed by `filter` (see [`kept_rows`]).
pub(crate) fn help_lines(keymap: &Keymap, cols: usize, filter: Option<&str>) -> Vec<HelpLine> {
    let mut out = Vec::new();
    for (keys, what) in kept_rows(keymap, filter) {
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
pub(crate) fn help_last_scroll(keymap: &Keymap, size: Rect, filter: Option<&str>) -> usize {
    let area = help_area(size);
    help_lines(keymap, inner_width(area) as usize, filter)
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
        let lines = help_lines(&km, cols, None);
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

#[cfg(test)]
mod filter_tests {
    use super::*;

    fn text(lines: &[HelpLine]) -> Vec<String> {
        lines
            .iter()
            .map(|l| match l {
                HelpLine::Title(t) => t.clone(),
                HelpLine::Row { keys, what } => format!("{keys}{what}"),
            })
            .collect()
    }

    /// A filter keeps the rows whose keys or words hold it, under their sections' titles.
    #[test]
    fn a_filter_keeps_matching_rows_under_their_titles() {
        let km = Keymap::default();
        let all = help_lines(&km, 76, None);
        let kept = help_lines(&km, 76, Some("ReLaY"));
        let lines = text(&kept);
        assert!(lines.len() < all.len() / 4, "{lines:#?}");
        assert_eq!(lines[0], Scope::Browse.title());
        assert!(
            lines
                .iter()
                .any(|l| l.contains("next message that needs you")),
            "{lines:#?}"
        );
        assert!(
            !lines.iter().any(|l| l == Scope::Queue.title()),
            "{lines:#?}"
        );
        for l in &kept {
            if let HelpLine::Row { keys, what } = l
                && !keys.trim().is_empty()
            {
                let row = format!("{keys}{what}").to_lowercase();
                assert!(row.contains("relay"), "{row:?}");
            }
        }
        assert!(!lines.last().unwrap().is_empty());
        // By key too: `t` alone finds every row whose key or words hold a t.
        let keys = text(&help_lines(&km, 76, Some("C-y")));
        assert!(keys.iter().any(|l| l.contains("save + copy")), "{keys:#?}");
        assert!(help_lines(&km, 76, Some("zzzz")).is_empty());
        assert_eq!(help_lines(&km, 76, Some("")), all);
    }
}
