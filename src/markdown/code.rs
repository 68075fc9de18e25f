//! A code block set apart: a label row with its number and language (`[1] rust`), then its
//! lines behind a bar, coloured by language, cut (not reflowed: spacing is code's meaning)
//! where a line is wider than the pane.
//!
//! Colouring is by far the dearest part of a render (syntect's grammars run their regexes
//! over every line: tens of microseconds a line), so a block can be rendered plain and
//! coloured later, in place ([`colour`]), when it comes into view: the cut of its lines does
//! not depend on their colours, so the rows stay where they are.

use ratatui::style::Style;
use ratatui::text::Line;

use super::flow::{Row, hard_wrap, push};
use super::highlight::Highlighter;
use super::style;
use crate::cells;
use crate::sanitize::{sanitize, sanitize_line};

/// In front of each of a block's lines.
const BAR: &str = "│ ";

/// The cells a code line gets in a block rendered in `max` cells.
pub(super) fn code_room(max: usize) -> usize {
    max.saturating_sub(cells::width(BAR)).max(1)
}

/// Colours the rows `lines` of a block rendered plain (its label row first) in place: each
/// code row's last span, its text, is replaced by the text in the grammar's styles.
pub(super) fn colour(lang: &str, code: &str, room: usize, lines: &mut [Line<'static>]) {
    let Some(mut hl) = Highlighter::new(lang, code.len()) else {
        return;
    };
    let mut row = 1;
    for line in code.split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let safe = sanitize(line);
        let pieces = hl.line(&safe);
        for seg in hard_wrap(&safe, room) {
            let Some(l) = lines.get_mut(row) else { return };
            row += 1;
            if seg.is_empty() {
                continue;
            }
            l.spans.pop();
            let mut spans = std::mem::take(&mut l.spans);
            for (range, st) in &pieces {
                let (from, to) = (range.start.max(seg.start), range.end.min(seg.end));
                if from < to {
                    push(&mut spans, &safe[from..to], *st);
                }
            }
            l.spans = spans;
        }
    }
}

/// The code of a block as written, without its last newline: what a copy holds.
pub(super) fn as_written(code: &str) -> String {
    code.strip_suffix('\n').unwrap_or(code).to_string()
}

/// The rows of code block `number` in language `lang`, for a width of `max` cells; coloured
/// when `coloured`, else plain (each code row then ends in one unstyled span, which
/// [`colour`] replaces).
pub(super) fn rows(
    number: usize,
    lang: Option<&str>,
    code: &str,
    max: usize,
    coloured: bool,
) -> Vec<Row> {
    let mut out = Vec::new();
    let mut label = Row::new();
    let tag = format!("[{number}]");
    push(&mut label, &tag, style::CODE_NUMBER);
    if let Some(lang) = lang {
        let room = max.saturating_sub(cells::width(&tag) + 1);
        let lang = cells::truncate(&sanitize_line(lang), room);
        if !lang.is_empty() {
            push(&mut label, " ", Style::new());
            push(&mut label, &lang, style::CODE_LANG);
        }
    }
    out.push(label);
    let body = code.strip_suffix('\n').unwrap_or(code);
    if body.is_empty() {
        return out;
    }
    let mut hl = lang
        .filter(|_| coloured)
        .and_then(|l| Highlighter::new(l, code.len()));
    let room = code_room(max);
    for line in body.split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let safe = sanitize(line);
        let pieces = match hl.as_mut() {
            Some(h) => h.line(&safe),
            None => vec![(0..safe.len(), Style::new())],
        };
        for seg in hard_wrap(&safe, room) {
            let mut row = Row::new();
            push(&mut row, BAR, style::FRAME);
            for (range, st) in &pieces {
                let (from, to) = (range.start.max(seg.start), range.end.min(seg.end));
                if from < to {
                    push(&mut row, &safe[from..to], *st);
                }
            }
            out.push(row);
        }
    }
    out
}
