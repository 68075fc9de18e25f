//! The reader: one message over the whole screen down to the hint and status lines — its
//! head, the body the app rendered (`app::reading::reader`), the search line — with the
//! search's matches marked in the rows shown.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

use super::theme;
use crate::app::reading::reader::{Reader, fold};
use crate::app::reading::reader_page;
use crate::app::text::truncate;

/// A match of the search.
const MATCH: Style = Style::new().add_modifier(Modifier::REVERSED);
/// The match `n`/`N` went to.
const CURRENT: Style = Style::new()
    .add_modifier(Modifier::REVERSED)
    .add_modifier(Modifier::BOLD)
    .add_modifier(Modifier::UNDERLINED);

/// Draws the reader.
pub(super) fn render(r: &Reader, frame: &mut Frame, size: Rect) {
    let area = Rect {
        height: size.height.saturating_sub(2),
        ..size
    };
    frame.render_widget(Clear, area);
    let w = area.width as usize;
    let page = reader_page(size, r);
    let total = r.body.lines.len();
    let last = (r.scroll + page).min(total);
    let place = if total > page {
        format!(" · rows {}–{last} of {total}", r.scroll + 1)
    } else {
        String::new()
    };
    let mut lines = vec![Line::from(vec![
        Span::styled(
            truncate(&r.head[0], w.saturating_sub(place.chars().count())),
            theme::TITLE,
        ),
        Span::styled(place, theme::DIM),
    ])];
    for h in &r.head[1..] {
        lines.push(Line::from(Span::styled(truncate(h, w), theme::DIM)));
    }
    lines.push(Line::from(Span::styled("─".repeat(w), theme::BORDER)));
    let q = fold(&r.query);
    let current = r.hit.and_then(|i| r.hits.get(i)).copied();
    for (i, line) in r.body.lines[r.scroll..last].iter().enumerate() {
        let row = r.scroll + i;
        let hit = !q.is_empty() && r.plain.get(row).is_some_and(|p| p.contains(&q));
        lines.push(match hit {
            true => mark(line, &q, if current == Some(row) { CURRENT } else { MATCH }),
            false => line.clone(),
        });
    }
    while lines.len() < r.head.len() + 1 + page {
        lines.push(Line::from(""));
    }
    lines.push(search_line(r, w));
    frame.render_widget(Paragraph::new(lines), area);
}

/// The line under the body: the search being typed, the last one and where its matches are,
/// or what can be copied.
fn search_line(r: &Reader, w: usize) -> Line<'static> {
    let text = match (&r.prompt, r.query.is_empty()) {
        (Some(p), _) => {
            let found = match (p.text.is_empty(), r.hits.len()) {
                (true, _) => String::new(),
                (false, 0) => "  (no match)".into(),
                (false, n) => format!("  ({n} rows)"),
            };
            return Line::from(vec![
                Span::styled(
                    format!("/{}", truncate(&p.text, w.saturating_sub(16))),
                    theme::KEY,
                ),
                Span::styled("▏", theme::CURSOR),
                Span::styled(found, theme::DIM),
            ]);
        }
        (None, false) => match (r.hit, r.hits.len()) {
            (_, 0) => format!("/{} — no match", r.query),
            (Some(i), n) => format!("/{} — match {} of {n} (n, N)", r.query, i + 1),
            (None, n) => format!("/{} — {n} rows match (n, N)", r.query),
        },
        (None, true) => match r.body.blocks.len() {
            0 => "/ searches · y copies the body".into(),
            1 => "/ searches · y copies the body · 1 copies code block [1]".into(),
            n => format!(
                "/ searches · y copies the body · 1–{} copies that code block of [1]–[{n}]",
                n.min(9)
            ),
        },
    };
    Line::from(Span::styled(
        truncate(&crate::app::text::safe_line(&text), w),
        theme::DIM,
    ))
}

/// `line` with every occurrence of `q` (case folded, as `fold` folds) in `style`.
fn mark(line: &Line<'static>, q: &str, style: Style) -> Line<'static> {
    let text: Vec<char> = line.spans.iter().flat_map(|s| s.content.chars()).collect();
    let folded: Vec<char> = fold(&text.iter().collect::<String>()).chars().collect();
    let q: Vec<char> = q.chars().collect();
    let mut hit = vec![false; text.len()];
    let mut i = 0;
    while !q.is_empty() && i + q.len() <= folded.len() {
        if folded[i..i + q.len()] == q[..] {
            hit[i..i + q.len()].iter_mut().for_each(|h| *h = true);
            i += q.len();
        } else {
            i += 1;
        }
    }
    let mut spans = Vec::new();
    let mut at = 0;
    for s in &line.spans {
        let chars: Vec<char> = s.content.chars().collect();
        let mut start = 0;
        while start < chars.len() {
            let on = hit[at + start];
            let len = chars[start..]
                .iter()
                .enumerate()
                .take_while(|(k, _)| hit[at + start + k] == on)
                .count();
            let piece: String = chars[start..start + len].iter().collect();
            let st = if on { s.style.patch(style) } else { s.style };
            spans.push(Span::styled(piece, st));
            start += len;
        }
        at += chars.len();
    }
    Line::from(spans).style(line.style)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_every_match_across_spans_ignoring_case() {
        let line = Line::from(vec![
            Span::raw("a Ne"),
            Span::styled("edle b needle", theme::KEY),
        ]);
        let m = mark(&line, "needle", MATCH);
        let marked: String = (m.spans.iter())
            .filter(|s| s.style.add_modifier.contains(Modifier::REVERSED))
            .map(|s| s.content.to_string())
            .collect();
        assert_eq!(marked, "Needleneedle");
        let all: String = m.spans.iter().map(|s| s.content.to_string()).collect();
        assert_eq!(all, "a Needle b needle");
    }
}
