//! The paste box after the terminal's size changed (the composer's boxes are laid out and
//! scrolled by `editor_rows`, which needs no refit).
//!
//! The editor widget scrolls a box only to keep its cursor in sight. Made taller, a box
//! scrolled down kept its first row: the rows below the text's last line stayed empty while
//! the lines above it stayed hidden, until the operator moved the cursor up to them. After a
//! resize each multi-line box is brought back to showing as much of its text as fits, its
//! cursor where it was and in sight.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::Widget;
use ratatui_textarea::{CursorMove, TextArea};

/// Scrolls `ta` back to its first line, keeping its cursor: the next frame then scrolls down
/// from there just far enough for the cursor, so a box that now holds the whole text shows
/// all of it. The widget keeps where it is scrolled to only as it is drawn, so it is drawn
/// once, off screen, with the cursor on the first line; `width` is about the width it will
/// be drawn at (its lines are wrapped for that width until the next frame wraps them anew).
pub(crate) fn refit(ta: &mut TextArea<'_>, width: u16) {
    let at = ta.cursor();
    let (row, col) = (at.0, at.1);
    // The widget jumps to a position given in 16-bit coordinates: a cursor beyond them
    // (a line of more than 65 535 characters) could not be put back, so the box is left.
    let (Ok(row), Ok(col)) = (u16::try_from(row), u16::try_from(col)) else {
        return;
    };
    ta.move_cursor(CursorMove::Jump(0, 0));
    let area = Rect::new(0, 0, width.max(1), 1);
    let mut off_screen = Buffer::empty(area);
    (&*ta).render(area, &mut off_screen);
    ta.move_cursor(CursorMove::Jump(row, col));
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui_textarea::WrapMode;

    /// The rows `ta` shows in a box of `width`×`height`, trailing blanks trimmed.
    fn shown(ta: &TextArea<'_>, width: u16, height: u16) -> Vec<String> {
        let area = Rect::new(0, 0, width, height);
        let mut buf = Buffer::empty(area);
        ta.render(area, &mut buf);
        (0..height)
            .map(|y| {
                (0..width)
                    .map(|x| buf[(x, y)].symbol().to_string())
                    .collect::<String>()
                    .trim_end()
                    .to_string()
            })
            .collect()
    }

    fn typed(lines: usize) -> TextArea<'static> {
        let mut ta = TextArea::new((1..=lines).map(|i| format!("line {i}")).collect());
        ta.set_wrap_mode(WrapMode::WordOrGlyph);
        ta.move_cursor(CursorMove::Bottom);
        ta.move_cursor(CursorMove::End);
        ta
    }

    #[test]
    fn a_taller_box_shows_the_lines_above_its_cursor() {
        let mut ta = typed(20);
        // Typed in a box of 4 rows: scrolled to the last four lines.
        assert_eq!(shown(&ta, 30, 4)[0], "line 17");
        // Without a refit, a box of 12 rows still begins there and shows 8 empty rows.
        assert_eq!(shown(&ta, 30, 12)[0], "line 17");
        assert_eq!(shown(&ta, 30, 12)[4], "");
        refit(&mut ta, 30);
        let rows = shown(&ta, 30, 12);
        assert_eq!(rows[0], "line 9");
        assert_eq!(rows[11], "line 20");
        assert_eq!(
            ta.cursor(),
            (19, 7),
            "the cursor stays at the end of the last line"
        );
        // A box that holds everything shows everything.
        refit(&mut ta, 30);
        let rows = shown(&ta, 30, 30);
        assert_eq!(rows[0], "line 1");
        assert_eq!(rows[19], "line 20");
    }

    #[test]
    fn the_cursor_and_the_selection_stay_where_they_were() {
        let mut ta = typed(20);
        ta.move_cursor(CursorMove::Jump(15, 2));
        ta.start_selection();
        ta.move_cursor(CursorMove::Jump(16, 4));
        let _ = shown(&ta, 30, 4);
        let selected = ta.selection_range();
        refit(&mut ta, 30);
        assert_eq!(ta.cursor(), (16, 4));
        assert_eq!(ta.selection_range(), selected);
        // The cursor's line is in sight in a box of any height.
        for height in 1..25 {
            let mut ta = ta.clone();
            refit(&mut ta, 30);
            assert!(
                shown(&ta, 30, height).iter().any(|r| r == "line 17"),
                "height {height}"
            );
        }
    }

    #[test]
    fn an_empty_box_and_a_very_long_line_are_left_as_they_are() {
        let mut ta = TextArea::default();
        refit(&mut ta, 10);
        assert_eq!(ta.cursor(), (0, 0));
        let long = "x".repeat(70_000);
        let mut ta = TextArea::new(vec![long]);
        ta.move_cursor(CursorMove::End);
        refit(&mut ta, 10);
        assert_eq!(ta.cursor(), (0, 70_000));
    }
}
