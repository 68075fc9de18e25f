//! Inline text poured into rows of a width: words joined by single spaces (the line breaks a
//! model put inside a paragraph are spaces to it, so a hard-wrapped paragraph is reflowed),
//! broken between words, and a word split only when it alone is wider than a row. Widths are
//! terminal cells (`crate::cells`): a wide character counts two, a combining mark none, and a
//! character is never parted from the marks that follow it.

use ratatui::style::Style;
use ratatui::text::Span;
use unicode_width::UnicodeWidthChar;

/// A piece of inline content, its text already made safe.
#[derive(Debug, Clone)]
pub(super) enum Atom {
    /// Text in a style; its spaces are where rows may break.
    Text(String, Style),
    /// A hard line break: the row ends here.
    Break,
}

/// One row of spans.
pub(super) type Row = Vec<Span<'static>>;

/// A word: its pieces (a word may change style midway, `**bo**ld`) and its width.
struct Word {
    parts: Vec<(String, Style)>,
    width: usize,
}

enum Token {
    Word(Word),
    Space(Style),
    Break,
}

/// The width in cells of `s`, measured by clusters (a character and the zero-width marks
/// after it) as a terminal draws them.
pub(super) fn width(s: &str) -> usize {
    clusters(s).map(|(_, w)| w).sum()
}

/// `s` cut into clusters with their widths.
fn clusters(s: &str) -> impl Iterator<Item = (&str, usize)> {
    let mut rest = s;
    std::iter::from_fn(move || {
        let mut chars = rest.char_indices();
        let (_, first) = chars.next()?;
        let mut end = first.len_utf8();
        for (i, c) in chars {
            if c.width() == Some(0) {
                end = i + c.len_utf8();
            } else {
                break;
            }
        }
        let (cluster, tail) = rest.split_at(end);
        rest = tail;
        let w = if cluster.len() == 1 {
            usize::from(cluster.as_bytes()[0] >= 0x20)
        } else {
            crate::cells::width(cluster)
        };
        Some((cluster, w))
    })
}

fn tokens(atoms: &[Atom]) -> Vec<Token> {
    let mut out = Vec::new();
    let mut word: Option<Word> = None;
    for atom in atoms {
        match atom {
            Atom::Break => {
                if let Some(w) = word.take() {
                    out.push(Token::Word(w));
                }
                out.push(Token::Break);
            }
            Atom::Text(text, style) => {
                for (i, piece) in text.split(' ').enumerate() {
                    if i > 0 {
                        if let Some(w) = word.take() {
                            out.push(Token::Word(w));
                        }
                        if !matches!(out.last(), Some(Token::Space(_))) {
                            out.push(Token::Space(*style));
                        }
                    }
                    if piece.is_empty() {
                        continue;
                    }
                    let w = word.get_or_insert_with(|| Word {
                        parts: Vec::new(),
                        width: 0,
                    });
                    w.width += width(piece);
                    w.parts.push((piece.to_string(), *style));
                }
            }
        }
    }
    if let Some(w) = word {
        out.push(Token::Word(w));
    }
    out
}

/// Appends `text` to `row`, merged into the last span when the style is the same.
pub(super) fn push(row: &mut Row, text: &str, style: Style) {
    if text.is_empty() {
        return;
    }
    if let Some(last) = row.last_mut() {
        if last.style == style {
            last.content.to_mut().push_str(text);
            return;
        }
    }
    row.push(Span::styled(text.to_string(), style));
}

/// `atoms` as rows of at most `max` cells (at least one row, possibly empty).
pub(super) fn flow(atoms: &[Atom], max: usize) -> Vec<Row> {
    let max = max.max(1);
    let mut rows: Vec<Row> = Vec::new();
    let mut cur: Row = Vec::new();
    let mut cur_w = 0;
    let mut space: Option<Style> = None;
    for token in tokens(atoms) {
        match token {
            Token::Space(style) => {
                if cur_w > 0 {
                    space = Some(style);
                }
            }
            Token::Break => {
                rows.push(std::mem::take(&mut cur));
                cur_w = 0;
                space = None;
            }
            Token::Word(word) => {
                let gap = usize::from(space.is_some() && cur_w > 0);
                if cur_w + gap + word.width <= max {
                    if let (Some(style), 1) = (space, gap) {
                        push(&mut cur, " ", style);
                    }
                    for (text, style) in &word.parts {
                        push(&mut cur, text, *style);
                    }
                    cur_w += gap + word.width;
                } else {
                    if cur_w > 0 {
                        rows.push(std::mem::take(&mut cur));
                    }
                    if word.width <= max {
                        for (text, style) in &word.parts {
                            push(&mut cur, text, *style);
                        }
                        cur_w = word.width;
                    } else {
                        cur_w = split_word(&word, max, &mut rows, &mut cur);
                    }
                }
                space = None;
            }
        }
    }
    rows.push(cur);
    rows
}

/// A word wider than a row, cut between clusters: full rows go to `rows`, the rest stays in
/// `cur`, whose width is returned.
fn split_word(word: &Word, max: usize, rows: &mut Vec<Row>, cur: &mut Row) -> usize {
    let mut w = 0;
    for (text, style) in &word.parts {
        let mut start = 0;
        let mut at = 0;
        for (cluster, cw) in clusters(text) {
            if w + cw > max && w > 0 {
                push(cur, &text[start..at], *style);
                rows.push(std::mem::take(cur));
                start = at;
                w = 0;
            }
            w += cw;
            at += cluster.len();
        }
        push(cur, &text[start..], *style);
    }
    w
}

/// `s` cut into rows of at most `max` cells between clusters, spaces kept as they are: a line
/// of code, whose spacing is its meaning.
pub(super) fn hard_wrap(s: &str, max: usize) -> Vec<std::ops::Range<usize>> {
    let max = max.max(1);
    let mut out = Vec::new();
    let (mut start, mut at, mut w) = (0, 0, 0);
    for (cluster, cw) in clusters(s) {
        if w + cw > max && w > 0 {
            out.push(start..at);
            start = at;
            w = 0;
        }
        w += cw;
        at += cluster.len();
    }
    out.push(start..s.len());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(rows: &[Row]) -> Vec<String> {
        rows.iter()
            .map(|r| r.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn words_are_reflowed_and_split_only_when_too_long() {
        let atoms = [Atom::Text(
            "one two  three\nfour".replace('\n', " "),
            Style::new(),
        )];
        assert_eq!(text(&flow(&atoms, 9)), ["one two", "three", "four"]);
        let long = [Atom::Text("abcdefghij xy".into(), Style::new())];
        assert_eq!(text(&flow(&long, 4)), ["abcd", "efgh", "ij", "xy"]);
    }

    #[test]
    fn wide_and_combining_characters_are_measured_in_cells() {
        let atoms = [Atom::Text("日本語 e\u{301}e\u{301}".into(), Style::new())];
        assert_eq!(text(&flow(&atoms, 6)), ["日本語", "e\u{301}e\u{301}"]);
        assert_eq!(hard_wrap("日本語", 4), [0..6, 6..9]);
        assert_eq!(width("e\u{301}"), 1);
    }
}
