//! Where each region of the screen is, for a terminal size. The views draw into these areas
//! and the app uses the same ones to page lists and to hit-test mouse clicks, so the two
//! cannot disagree.

use ratatui::layout::{Constraint, Layout, Rect};

/// The smallest terminal the app draws in; below it, it says so instead.
pub(crate) const MIN_SIZE: (u16, u16) = (60, 20);

/// The browse screen's regions (pane areas include their borders).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Areas {
    /// The title bar.
    pub title: Rect,
    /// The thread list pane.
    pub list: Rect,
    /// The thread tree pane.
    pub tree: Rect,
    /// The inspector pane.
    pub inspector: Rect,
    /// Key hints.
    pub hints: Rect,
    /// The status line.
    pub status: Rect,
}

impl Areas {
    /// The regions of a `size` terminal.
    pub fn new(size: Rect) -> Areas {
        let [title, main, hints, status] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Min(3),
            Constraint::Length(1),
            Constraint::Length(1),
        ])
        .areas(size);
        let list_w = (main.width * 35 / 100).clamp(28.min(main.width), 52);
        let [list, right] =
            Layout::horizontal([Constraint::Length(list_w), Constraint::Min(10)]).areas(main);
        let [tree, inspector] =
            Layout::vertical([Constraint::Percentage(42), Constraint::Percentage(58)]).areas(right);
        Areas {
            title,
            list,
            tree,
            inspector,
            hints,
            status,
        }
    }
}

/// The rows inside a bordered pane.
pub(crate) fn inner_height(pane: Rect) -> usize {
    pane.height.saturating_sub(2) as usize
}

/// The envelope rows the paste preview's list shows at once: 55 % of the popup's inside,
/// below the "not saved" note when there is one, as `ui::popups` lays it out. PgUp and PgDn
/// move by it, less a row that stays in sight.
pub(crate) fn preview_page(size: Rect, unsaved: bool) -> usize {
    let popup = centered(size, 110, size.height.saturating_sub(4));
    let inside = inner_height(popup).saturating_sub(if unsaved { 2 } else { 0 });
    (inside * 55 / 100).saturating_sub(1).max(1)
}

/// The drafts popup (`D`).
pub(crate) fn drafts_area(size: Rect) -> Rect {
    centered(size, 90, 16)
}

/// The queue popup (`Q`): above the hint and status lines, which say what settling a row
/// did and how to undo it (a long status takes the hint line too).
pub(crate) fn queue_area(size: Rect) -> Rect {
    let above = Rect {
        height: size.height.saturating_sub(2),
        ..size
    };
    centered(above, 110, 30)
}

/// A picker of `rows` rows: the error codes after `E`, the contacts after `N` (at most 12
/// in sight; the list scrolls).
pub(crate) fn picker_area(size: Rect, width: u16, rows: usize) -> Rect {
    centered(size, width, (rows.min(12) as u16) + 4)
}

/// The keys popup (`K`).
pub(crate) fn keys_area(size: Rect) -> Rect {
    centered(size, 100, size.height.saturating_sub(4).max(6))
}

/// The rows PgUp and PgDn move in a popup list drawn in `area`: its inside, less a row that
/// stays in sight.
pub(crate) fn popup_page(area: Rect) -> usize {
    inner_height(area).saturating_sub(1).max(1)
}

/// The columns inside a bordered pane.
pub(crate) fn inner_width(pane: Rect) -> u16 {
    pane.width.saturating_sub(2)
}

/// Whether the terminal is too small to draw in.
pub(crate) fn too_small(size: Rect) -> bool {
    size.width < MIN_SIZE.0 || size.height < MIN_SIZE.1
}

/// Whether `(x, y)` falls inside `r`.
pub fn contains(r: Rect, x: u16, y: u16) -> bool {
    x >= r.x && x < r.x + r.width && y >= r.y && y < r.y + r.height
}

/// A centered popup of at most `w`×`h` inside `area`.
pub(crate) fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width.saturating_sub(2)).max(1);
    let h = h.min(area.height.saturating_sub(2)).max(1);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_tile_small_and_large_terminals() {
        for (w, h) in [(80, 24), (120, 40), (60, 20), (300, 90)] {
            let a = Areas::new(Rect::new(0, 0, w, h));
            assert_eq!(a.list.width + a.tree.width, w);
            assert_eq!(a.tree.height + a.inspector.height + 3, h);
            assert!(
                a.list.width >= 28 && inner_height(a.tree) >= 3,
                "{w}x{h}: {a:?}"
            );
        }
        assert!(too_small(Rect::new(0, 0, 59, 30)));
        assert!(!too_small(Rect::new(0, 0, 60, 20)));
    }
}
