//! Tables laid out in columns fitted to the width: each column as wide as its widest cell when
//! all fit, otherwise the narrow columns keep their width and the wide ones share what is left,
//! their cells wrapped. When even that leaves a column too narrow to read, the table is shown
//! as one record per row, `header: value` a line, which reads at any width.

use pulldown_cmark::Alignment;
use ratatui::style::Style;

use super::flow::{Atom, Row, flow, push, width};
use super::style;

/// Below this many cells a column (that needs more) is too narrow to read: records instead.
const NARROWEST: usize = 8;
/// Between two columns.
const SEPARATOR: &str = " │ ";

/// A table being read: its header and rows of cells, each cell its inline content.
#[derive(Debug, Default)]
pub(super) struct Table {
    aligns: Vec<Alignment>,
    head: Vec<Vec<Atom>>,
    rows: Vec<Vec<Vec<Atom>>>,
    in_head: bool,
}

impl Table {
    pub(super) fn new(aligns: Vec<Alignment>) -> Self {
        Self {
            aligns,
            ..Self::default()
        }
    }

    /// The header's cells follow.
    pub(super) fn start_head(&mut self) {
        self.in_head = true;
    }

    /// A body row's cells follow.
    pub(super) fn start_row(&mut self) {
        self.in_head = false;
        self.rows.push(Vec::new());
    }

    /// The next cell of the header or of the current row.
    pub(super) fn push_cell(&mut self, atoms: Vec<Atom>) {
        if self.in_head {
            self.head.push(atoms);
        } else if let Some(row) = self.rows.last_mut() {
            row.push(atoms);
        }
    }

    fn columns(&self) -> usize {
        self.rows
            .iter()
            .map(Vec::len)
            .chain([self.head.len(), self.aligns.len()])
            .max()
            .unwrap_or(0)
    }

    /// The table as rows of at most `max` cells.
    pub(super) fn layout(&self, max: usize) -> Vec<Row> {
        let n = self.columns();
        if n == 0 {
            return Vec::new();
        }
        let mut natural = vec![0; n];
        for row in std::iter::once(&self.head).chain(&self.rows) {
            for (c, cell) in row.iter().enumerate() {
                natural[c] = natural[c].max(row_width(&flow(cell, usize::MAX)[0]));
            }
        }
        let Some(space) = max.checked_sub(width(SEPARATOR) * (n - 1)) else {
            return self.records(max);
        };
        let widths = fill(&natural, space);
        if (0..n).any(|c| widths[c] < natural[c].min(NARROWEST)) {
            return self.records(max);
        }
        let mut out = Vec::new();
        if !self.head.is_empty() {
            let head: Vec<Vec<Atom>> = self.head.iter().map(|c| bold(c)).collect();
            out.extend(self.row_lines(&head, &widths));
            let mut rule = Row::new();
            for (c, w) in widths.iter().enumerate() {
                if c > 0 {
                    push(&mut rule, "─┼─", style::FRAME);
                }
                push(&mut rule, &"─".repeat(*w), style::FRAME);
            }
            out.push(rule);
        }
        for row in &self.rows {
            out.extend(self.row_lines(row, &widths));
        }
        out
    }

    /// One table row as screen rows: each cell wrapped to its column, padded to its alignment.
    fn row_lines(&self, cells: &[Vec<Atom>], widths: &[usize]) -> Vec<Row> {
        let flowed: Vec<Vec<Row>> = widths
            .iter()
            .enumerate()
            .map(|(c, w)| match cells.get(c) {
                Some(cell) => flow(cell, *w),
                None => vec![Row::new()],
            })
            .collect();
        let height = flowed.iter().map(Vec::len).max().unwrap_or(1);
        (0..height)
            .map(|i| {
                let mut row = Row::new();
                for (c, w) in widths.iter().enumerate() {
                    if c > 0 {
                        push(&mut row, SEPARATOR, style::FRAME);
                    }
                    let cell = flowed[c].get(i).cloned().unwrap_or_default();
                    let room = w.saturating_sub(row_width(&cell));
                    let last = c + 1 == widths.len();
                    let (before, after) = match self.aligns.get(c) {
                        Some(Alignment::Right) => (room, 0),
                        Some(Alignment::Center) => (room / 2, room - room / 2),
                        _ => (0, room),
                    };
                    push(&mut row, &" ".repeat(before), Style::new());
                    row.extend(cell);
                    if !last {
                        push(&mut row, &" ".repeat(after), Style::new());
                    }
                }
                row
            })
            .collect()
    }

    /// The table as records, one per row: `header: value` a line (wrapped), a blank row
    /// between records.
    fn records(&self, max: usize) -> Vec<Row> {
        let mut out = Vec::new();
        if self.rows.is_empty() {
            for cell in &self.head {
                out.extend(flow(&bold(cell), max));
            }
            return out;
        }
        for (r, row) in self.rows.iter().enumerate() {
            if r > 0 {
                out.push(Row::new());
            }
            for (c, cell) in row.iter().enumerate() {
                let mut atoms = match self.head.get(c) {
                    Some(h) if !h.is_empty() => bold(h),
                    _ => vec![Atom::Text(format!("column {}", c + 1), style::TABLE_HEAD)],
                };
                atoms.push(Atom::Text(": ".into(), style::TABLE_HEAD));
                atoms.extend(cell.iter().cloned());
                out.extend(flow(&atoms, max));
            }
        }
        out
    }
}

/// The cells of `atoms` in the header's style.
fn bold(atoms: &[Atom]) -> Vec<Atom> {
    atoms
        .iter()
        .map(|a| match a {
            Atom::Text(s, st) => Atom::Text(s.clone(), st.patch(style::TABLE_HEAD)),
            Atom::Break => Atom::Break,
        })
        .collect()
}

/// The width of a row of spans, in cells.
pub(super) fn row_width(row: &Row) -> usize {
    row.iter().map(|s| width(&s.content)).sum()
}

/// Column widths within `space`: the narrowest columns first get what they need while that is
/// no more than an even share of what is left; the rest share the remainder.
fn fill(natural: &[usize], space: usize) -> Vec<usize> {
    let mut widths = vec![0; natural.len()];
    let mut order: Vec<usize> = (0..natural.len()).collect();
    order.sort_by_key(|&c| natural[c]);
    let mut left = space;
    for (k, &c) in order.iter().enumerate() {
        let share = left / (natural.len() - k);
        widths[c] = natural[c].min(share);
        left -= widths[c];
    }
    widths
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn narrow_columns_keep_their_width_and_wide_ones_share_the_rest() {
        assert_eq!(fill(&[3, 40, 50], 60), [3, 28, 29]);
        assert_eq!(fill(&[3, 4], 60), [3, 4]);
    }
}
