//! How the composer's multi-line boxes (the body and META) lay their text out on screen:
//! soft-wrapped between words, as the preview beside them wraps the envelope.
//!
//! The editor widget's own wrapping breaks at every Unicode word boundary, so it split an
//! e-mail address at its `@`, a time at its `:`, moved a `?` alone onto the next row, began
//! rows with the space it broke at, and hid the cursor at the end of a full row. Here a row
//! breaks only after spaces: the spaces a row breaks at stay at its end (drawn as far as the
//! box is wide, like the spaces a word processor lets hang in the margin), and only a word
//! longer than the whole row is cut. The cursor, the vertical moves and the scrolling all
//! read the same rows, so what is drawn and where a key goes cannot disagree.
//!
//! Positions are (line, column) in characters, as the widget counts them; a row is a range
//! of columns of one line.

use ratatui_textarea::{CursorMove, TextArea};
use unicode_width::UnicodeWidthChar;

/// Cells a tab takes: the widget's own tab stop.
pub(crate) const TAB: usize = 4;

/// Cells `c` takes on screen.
pub(crate) fn cell_width(c: char) -> usize {
    if c == '\t' {
        TAB
    } else {
        c.width().unwrap_or(0)
    }
}

/// One screen row: columns `start..end` of line `line`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row {
    /// The line it shows part of.
    pub line: usize,
    /// Its first column.
    pub start: usize,
    /// The column after its last.
    pub end: usize,
}

/// The rows of a box `width` cells wide, and where its cursor is drawn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rows {
    /// Every row, in order.
    pub rows: Vec<Row>,
    /// The cursor's row (an index into `rows`) and its cell in that row.
    pub cursor: (usize, usize),
}

/// The column ranges one line takes in rows of `width` cells.
pub(crate) fn line_rows(line: &str, width: usize) -> Vec<(usize, usize)> {
    let width = width.max(1);
    let chars: Vec<char> = line.chars().collect();
    let mut rows = Vec::new();
    let (mut start, mut x) = (0usize, 0usize);
    // The column after the last space run of the row so far: where it may break.
    let mut brk: Option<usize> = None;
    for (i, &c) in chars.iter().enumerate() {
        let w = cell_width(c);
        if c == ' ' {
            // Spaces never start a row: they hang at the end of the one they follow.
            x += w;
            brk = Some(i + 1);
            continue;
        }
        if x + w > width && i > start {
            match brk.filter(|&b| b > start) {
                Some(b) => {
                    rows.push((start, b));
                    start = b;
                    x = chars[b..i].iter().map(|&c| cell_width(c)).sum();
                }
                None => {
                    rows.push((start, i));
                    start = i;
                    x = 0;
                }
            }
            brk = None;
            // The word carried over is itself longer than a row: cut it where it is full.
            if x + w > width && i > start {
                rows.push((start, i));
                start = i;
                x = 0;
            }
        }
        x += w;
    }
    rows.push((start, chars.len()));
    rows
}

/// The width in cells of columns `start..end` of `line`.
fn cells(line: &str, start: usize, end: usize) -> usize {
    line.chars()
        .skip(start)
        .take(end - start)
        .map(cell_width)
        .sum()
}

/// The rows of `lines` in a box `width` cells wide, with the cursor at `cursor`. When the
/// cursor is at the end of a line whose last row is full, that line gets one more, empty,
/// row for it (as an editor in a terminal shows the cursor past a full row); no other line
/// gets one, so no empty row appears that the text does not have.
pub fn layout(lines: &[String], width: usize, cursor: (usize, usize)) -> Rows {
    let width = width.max(1);
    let mut rows = Vec::new();
    let mut at = (0, 0);
    for (n, line) in lines.iter().enumerate() {
        let first = rows.len();
        for (start, end) in line_rows(line, width) {
            rows.push(Row {
                line: n,
                start,
                end,
            });
        }
        if n != cursor.0 {
            continue;
        }
        let len = line.chars().count();
        let col = cursor.1.min(len);
        if let Some(last) = rows.last().copied() {
            if col == len && len > 0 && cells(line, last.start, last.end) >= width {
                rows.push(Row {
                    line: n,
                    start: len,
                    end: len,
                });
            }
        }
        // A column on the border of two rows belongs to the second: the first ends before it.
        let k = (first..rows.len())
            .find(|&k| col < rows[k].end || k + 1 == rows.len())
            .unwrap_or(first);
        at = (k, cells(line, rows[k].start, col));
    }
    if rows.is_empty() {
        rows.push(Row {
            line: 0,
            start: 0,
            end: 0,
        });
    }
    Rows { rows, cursor: at }
}

impl Rows {
    /// The position on row `row` nearest to cell `x` without passing it: where a vertical
    /// move lands. A row that another of its line follows ends before its last column (that
    /// column is the next row's first).
    pub fn position(&self, lines: &[String], row: usize, x: usize) -> (usize, usize) {
        let Some(r) = self.rows.get(row).copied() else {
            return (0, 0);
        };
        let last_of_line = self
            .rows
            .get(row + 1)
            .is_none_or(|next| next.line != r.line);
        let most = if last_of_line || r.end == r.start {
            r.end
        } else {
            r.end - 1
        };
        let line = lines.get(r.line).map(String::as_str).unwrap_or("");
        let mut col = r.start;
        let mut cell = 0;
        for c in line.chars().skip(r.start).take(most - r.start) {
            let w = cell_width(c);
            if cell + w > x {
                break;
            }
            cell += w;
            col += 1;
        }
        (r.line, col)
    }

    /// The first row a box of `height` rows shows, moved from `top` as little as keeps the
    /// cursor in sight, and never so far that rows below the text stay empty while text
    /// above is hidden (a box made taller shows the lines above its cursor again).
    pub fn top(&self, top: usize, height: usize) -> usize {
        let height = height.max(1);
        let row = self.cursor.0;
        let mut top = top.min(self.rows.len().saturating_sub(height));
        if row < top {
            top = row;
        } else if row >= top + height {
            top = row + 1 - height;
        }
        top
    }
}

/// The cursor of `ta` as (line, column).
pub fn cursor(ta: &TextArea<'_>) -> (usize, usize) {
    let at = ta.cursor();
    (at.0, at.1)
}

/// Moves the cursor of `ta` by `delta` rows of a box `width` cells wide, to the cell
/// nearest `goal` — the cell a run of vertical moves started from, so that passing a short
/// row does not pull the cursor to the left for good — and returns that goal. `select`
/// extends the selection, as Shift does with the widget's own moves.
pub(crate) fn move_rows(
    ta: &mut TextArea<'_>,
    width: usize,
    delta: isize,
    goal: Option<usize>,
    select: bool,
) -> usize {
    let rows = layout(ta.lines(), width, cursor(ta));
    let goal = goal.unwrap_or(rows.cursor.1);
    let last = rows.rows.len().saturating_sub(1);
    let target = rows.cursor.0.saturating_add_signed(delta).min(last);
    let (line, col) = rows.position(ta.lines(), target, goal);
    if select {
        if !ta.is_selecting() {
            ta.start_selection();
        }
    } else {
        ta.cancel_selection();
    }
    jump(ta, line, col);
    goal
}

/// Puts the cursor of `ta` at (`line`, `col`). The widget jumps to positions of 16 bits; a
/// position beyond them (a line of more than 65 535 characters) is reached a step at a time.
pub(crate) fn jump(ta: &mut TextArea<'_>, line: usize, col: usize) {
    if let (Ok(l), Ok(c)) = (u16::try_from(line), u16::try_from(col)) {
        ta.move_cursor(CursorMove::Jump(l, c));
        return;
    }
    ta.move_cursor(CursorMove::Jump(u16::try_from(line).unwrap_or(u16::MAX), 0));
    for _ in usize::from(u16::MAX)..line {
        ta.move_cursor(CursorMove::Down);
    }
    ta.move_cursor(CursorMove::Head);
    for _ in 0..col {
        ta.move_cursor(CursorMove::Forward);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(line: &str, width: usize) -> Vec<String> {
        let chars: Vec<char> = line.chars().collect();
        line_rows(line, width)
            .into_iter()
            .map(|(s, e)| chars[s..e].iter().collect())
            .collect()
    }

    #[test]
    fn rows_break_after_spaces_and_cut_only_words_longer_than_a_row() {
        assert_eq!(
            shown("where is it? Mail kalle@example.com at 10:30, ok", 12),
            [
                "where is it? ",
                "Mail ",
                "kalle@exampl",
                "e.com at ",
                "10:30, ok"
            ]
        );
        assert_eq!(
            shown("abcdefghij abcdefghij", 10),
            ["abcdefghij ", "abcdefghij"]
        );
        assert_eq!(shown("a  b", 2), ["a  ", "b"]);
        assert_eq!(shown("", 5), [""]);
        assert_eq!(
            shown("     ", 2),
            ["     "],
            "spaces hang, they never start a row"
        );
        // Wide characters are never split, and each takes its two cells.
        assert_eq!(shown("東京の天気", 4), ["東京", "の天", "気"]);
        assert_eq!(shown("x", 0), ["x"]);
    }

    fn lines(text: &str) -> Vec<String> {
        text.split('\n').map(str::to_string).collect()
    }

    #[test]
    fn the_cursor_gets_a_row_past_a_full_row_and_keeps_its_cell() {
        let l = lines("abcdefghij\nxy");
        let r = layout(&l, 10, (0, 10));
        assert_eq!(r.rows.len(), 3, "{r:?}");
        assert_eq!(r.cursor, (1, 0));
        let r = layout(&l, 10, (0, 3));
        assert_eq!(r.rows.len(), 2, "no empty row the text does not have");
        assert_eq!(r.cursor, (0, 3));
        let l = lines("where is it? Mail");
        assert_eq!(
            layout(&l, 12, (0, 13)).cursor,
            (1, 0),
            "the next row's first"
        );
        assert_eq!(layout(&l, 12, (0, 8)).cursor, (0, 8));
        assert_eq!(
            layout(&l, 12, (0, 12)).cursor,
            (0, 12),
            "on the space it hangs"
        );
        assert_eq!(layout(&l, 12, (0, 17)).cursor, (1, 4));
        assert_eq!(layout(&lines("a\tb"), 20, (0, 2)).cursor, (0, 5));
    }

    #[test]
    fn vertical_moves_land_on_the_nearest_cell_of_the_row() {
        let l = lines("where is it? Mail them\nok");
        let r = layout(&l, 12, (0, 0));
        // Row 0 is "where is it? " (columns 0..13): its last column belongs to it only as
        // the space it breaks at; row 1 is "Mail them", the line's last.
        assert_eq!(r.position(&l, 1, 3), (0, 16));
        assert_eq!(r.position(&l, 0, 50), (0, 12));
        assert_eq!(
            r.position(&l, 1, 50),
            (0, 22),
            "the last row reaches the line's end"
        );
        assert_eq!(r.position(&l, 2, 1), (1, 1));
        assert_eq!(r.position(&l, 9, 1), (0, 0), "no such row");
    }

    #[test]
    fn the_box_scrolls_as_little_as_keeps_the_cursor_and_fills_when_taller() {
        let l: Vec<String> = (0..20).map(|i| format!("line {i}")).collect();
        let r = layout(&l, 30, (19, 0));
        assert_eq!(r.top(0, 4), 16);
        assert_eq!(r.top(16, 4), 16);
        assert_eq!(
            r.top(16, 12),
            8,
            "taller: the lines above the cursor come back"
        );
        assert_eq!(r.top(16, 30), 0);
        let r = layout(&l, 30, (2, 0));
        assert_eq!(r.top(16, 4), 2);
    }
}
