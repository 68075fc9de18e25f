//! Side by side: the answers to one message in columns, one per sender, so an operator can
//! compare what three models said. On a POLL (or an answer to one) the columns are the POLL's
//! targets in its order, each with its vote and standing — a target that has not answered
//! keeps its column, empty — then any other sender that replied; on any other message they
//! are its replies, grouped by sender in the order they first answered. The columns scroll
//! together, a row at a time, and shift left and right when more senders answered than the
//! screen holds.

use ratatui::text::Line;

use crate::app::text::{safe_line, short_time};
use crate::store::StoredMessage;

/// The narrowest a column is drawn: below this, fewer columns are shown and the rest are
/// reached with ←/→.
pub(crate) const MIN_COLUMN: usize = 24;

/// Rows of the screen that are not body: the title, the column heads, the rule under them,
/// and the app's hint and status lines, which stay in sight below.
pub(crate) const HEAD_ROWS: usize = 5;

/// One sender's column.
#[derive(Debug, Clone)]
pub struct Column {
    /// The sender, as its banner names it, safe to print.
    pub sender: String,
    /// The vote (POLL targets): the option voted, `(no vote)`, `-`; safe to print.
    pub vote: Option<String>,
    /// Whether it answered (POLL targets): `yes`, `no`, `declined`, `late`.
    pub answered: Option<&'static str>,
    /// Its answers, oldest first.
    pub answers: Vec<StoredMessage>,
}

/// The open view.
#[derive(Debug)]
pub struct SideBySide {
    /// What is being answered, in one line, safe to print.
    pub title: String,
    /// One column per sender.
    pub columns: Vec<Column>,
    /// The first column shown.
    pub first: usize,
    /// The first body row shown, in every column at once.
    pub scroll: usize,
    /// Each column's rows at the width they were laid out for (built once per width, not at
    /// every frame: a long answer is wrapped once).
    pub rows: Vec<Vec<Line<'static>>>,
    /// The column width `rows` were built for.
    pub built_for: Option<usize>,
}

impl SideBySide {
    /// A view of `columns` answering what `title` says.
    pub(crate) fn new(title: String, columns: Vec<Column>) -> SideBySide {
        SideBySide {
            title,
            columns,
            first: 0,
            scroll: 0,
            rows: Vec::new(),
            built_for: None,
        }
    }

    /// How many columns fit in `width` cells (a one-cell gap between them) and the width of
    /// each.
    pub fn fit(&self, width: usize) -> (usize, usize) {
        let n = self.columns.len().max(1);
        let shown = ((width + 1) / (MIN_COLUMN + 1)).clamp(1, n);
        let each = (width.saturating_sub(shown - 1) / shown).max(1);
        (shown, each)
    }

    /// Lays every column out for `width` cells of screen, when not already done.
    pub(crate) fn lay_out(&mut self, width: usize) {
        let (_, each) = self.fit(width);
        if self.built_for == Some(each) {
            return;
        }
        self.rows = self.columns.iter().map(|c| column_rows(c, each)).collect();
        self.built_for = Some(each);
    }

    /// The longest column, in rows.
    pub fn height(&self) -> usize {
        self.rows.iter().map(Vec::len).max().unwrap_or(0)
    }

    /// Scrolls by `delta` rows within `page` rows of screen.
    pub(crate) fn scroll_by(&mut self, delta: isize, page: usize) {
        let max = self.height().saturating_sub(page);
        self.scroll = self.scroll.saturating_add_signed(delta).min(max);
    }

    /// Shifts the columns shown by `delta`, within those that exist.
    pub(crate) fn shift(&mut self, delta: isize, width: usize) {
        let (shown, _) = self.fit(width);
        let max = self.columns.len().saturating_sub(shown);
        self.first = self.first.saturating_add_signed(delta).min(max);
    }
}

/// A column's rows at `w` cells: each answer's intent and time, then its body.
fn column_rows(c: &Column, w: usize) -> Vec<Line<'static>> {
    use ratatui::style::{Modifier, Style};
    let mut rows = Vec::new();
    if c.answers.is_empty() {
        rows.push(Line::styled(
            "(no answer yet)",
            Style::new().add_modifier(Modifier::DIM),
        ));
    }
    for (i, m) in c.answers.iter().enumerate() {
        if i > 0 {
            rows.push(Line::from(""));
        }
        let intent = m.intent.as_deref().unwrap_or("(no intent)");
        let head = format!(
            "{} · {}",
            safe_line(intent),
            short_time(m.claimed_at.as_deref().unwrap_or(&m.arrived_at))
        );
        rows.push(Line::styled(
            crate::app::text::truncate(&head, w),
            Style::new().add_modifier(Modifier::BOLD),
        ));
        match m.envelope.body.as_deref() {
            Some(body) => rows.extend(crate::markdown::render(body, w).lines),
            None => rows.push(Line::from("(no body)")),
        }
    }
    rows
}

/// The columns answering `anchor`: `replies` are the messages whose parent is `anchor`, in
/// arrival order. Without a tally, one column per sender in the order they first answered.
pub(crate) fn by_sender(replies: Vec<StoredMessage>) -> Vec<Column> {
    let mut columns: Vec<Column> = Vec::new();
    for m in replies {
        let sender = safe_line(&m.envelope.banner.from).into_owned();
        match columns.iter_mut().find(|c| c.sender == sender) {
            Some(c) => c.answers.push(m),
            None => columns.push(Column {
                sender,
                vote: None,
                answered: None,
                answers: vec![m],
            }),
        }
    }
    columns
}

/// The columns answering a POLL: one per target in the POLL's order, with its vote, then a
/// column for each other sender that replied.
pub(crate) fn by_target(
    tally: &crate::protocol::poll::Tally,
    replies: Vec<StoredMessage>,
) -> Vec<Column> {
    let mut columns: Vec<Column> = tally
        .targets
        .iter()
        .map(|t| Column {
            sender: safe_line(&t.target).into_owned(),
            vote: Some(safe_line(&t.vote_cell()).into_owned()),
            answered: Some(t.standing.answered()),
            answers: Vec::new(),
        })
        .collect();
    let mut others = Vec::new();
    for m in replies {
        // The counted answer goes under its target; another answer by the same sender (an
        // earlier draft of its vote, a follow-up) goes with it.
        let counted = tally
            .targets
            .iter()
            .position(|t| t.message.as_deref() == Some(m.id.as_str()));
        let by_name = || {
            let from = safe_line(&m.envelope.banner.from).into_owned();
            columns.iter().position(|c| same_sender(&c.sender, &from))
        };
        match counted.or_else(by_name) {
            Some(i) => columns[i].answers.push(m),
            None => others.push(m),
        }
    }
    columns.extend(by_sender(others));
    columns
}

/// Whether a POLL target and a banner sender name the same participant: the same name, or a
/// name and an address of that name (`GEMINI`, `gemini://…`).
fn same_sender(target: &str, from: &str) -> bool {
    let name = |s: &str| {
        s.split_once("://")
            .map_or(s, |(scheme, _)| scheme)
            .to_ascii_lowercase()
    };
    target.eq_ignore_ascii_case(from) || name(target) == name(from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_fit_the_width_and_shift_within_those_that_exist() {
        let cols = (0..5)
            .map(|i| Column {
                sender: format!("S{i}"),
                vote: None,
                answered: None,
                answers: Vec::new(),
            })
            .collect();
        let mut v = SideBySide::new("t".into(), cols);
        assert_eq!(v.fit(80), (3, 26));
        assert_eq!(v.fit(200), (5, 39));
        assert_eq!(v.fit(20), (1, 20));
        v.shift(10, 80);
        assert_eq!(v.first, 2);
        v.shift(-1, 80);
        assert_eq!(v.first, 1);
        v.shift(-5, 200);
        assert_eq!(v.first, 0);
    }

    #[test]
    fn a_target_and_its_address_are_one_sender() {
        assert!(same_sender("GEMINI", "gemini://session/1"));
        assert!(same_sender("claude", "CLAUDE"));
        assert!(!same_sender("GEMINI", "CLAUDE"));
    }
}
