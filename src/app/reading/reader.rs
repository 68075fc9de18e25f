//! The reader: one message given the whole screen, as a mail client's pager. Its body is
//! rendered (markdown) once per width; `/` searches it (typed like a prompt), `n`/`N` go from
//! match to match, `J`/`K` read the next or previous message of the thread, `y` copies the
//! whole body and `1`–`9` the code block of that number, as written.

use ratatui::text::Line;

use crate::app::popups::popup::Prompt;
use crate::app::text::{safe_line, short_time};
use crate::markdown::Rendered;
use crate::store::StoredMessage;

/// The open reader.
#[derive(Debug)]
pub struct Reader {
    /// The message read.
    pub message: StoredMessage,
    /// Who wrote to whom, the intent and when, and the thread's context: safe to print.
    pub head: Vec<String>,
    /// The body as rendered for `built_for` cells.
    pub body: Rendered,
    /// The width `body` was rendered for.
    pub built_for: Option<usize>,
    /// Each body row's text, folded to lower case, for the search: made at the first search
    /// of a width, not at every opening (a 1 MB body has some 30 000 rows).
    pub plain: Vec<String>,
    /// The first body row shown.
    pub scroll: usize,
    /// The search being typed, after `/`.
    pub prompt: Option<Prompt>,
    /// The last search run.
    pub query: String,
    /// The body rows that match it.
    pub hits: Vec<usize>,
    /// The match shown (index into `hits`).
    pub hit: Option<usize>,
}

impl Reader {
    /// A reader on `m` (`context` is its thread's), rendered at `width`.
    pub(crate) fn new(m: StoredMessage, context: Option<&str>, width: usize) -> Reader {
        let env = &m.envelope;
        let mut head = vec![format!(
            "{} → {} · {} · {}",
            safe_line(&env.banner.from),
            safe_line(&env.banner.to),
            safe_line(m.intent.as_deref().unwrap_or("(no intent)")),
            short_time(m.claimed_at.as_deref().unwrap_or(&m.arrived_at)),
        )];
        if let Some(c) = context.filter(|c| !c.is_empty()) {
            head.push(format!("context: {}", safe_line(c)));
        }
        let mut r = Reader {
            message: m,
            head,
            body: Rendered::default(),
            built_for: None,
            plain: Vec::new(),
            scroll: 0,
            prompt: None,
            query: String::new(),
            hits: Vec::new(),
            hit: None,
        };
        r.lay_out(width);
        r
    }

    /// Renders the body for `width` cells, when not already done.
    pub(crate) fn lay_out(&mut self, width: usize) {
        if self.built_for == Some(width) {
            return;
        }
        // The row at the top stays about where it was: the same share of the body.
        let share = match self.body.lines.len() {
            0 => 0.0,
            n => self.scroll as f64 / n as f64,
        };
        self.body = match self.message.envelope.body.as_deref() {
            Some(text) => crate::markdown::render_uncoloured(text, width),
            None => Rendered {
                lines: vec![Line::from("(no body)")],
                ..Rendered::default()
            },
        };
        self.plain.clear();
        self.built_for = Some(width);
        self.scroll = (share * self.body.lines.len() as f64) as usize;
        let query = std::mem::take(&mut self.query);
        self.search(&query, false);
    }

    /// Scrolls by `delta` rows, within `page` rows of screen; the code blocks that come
    /// into sight are coloured.
    pub(crate) fn scroll_by(&mut self, delta: isize, page: usize) {
        let max = self.body.lines.len().saturating_sub(page);
        self.scroll = self.scroll.saturating_add_signed(delta).min(max);
        self.body.colour_rows(self.scroll..self.scroll + page);
    }

    /// Runs a search for `query` (case folded); with `jump`, shows the first match at or
    /// after the top row. Whether anything matched.
    pub(crate) fn search(&mut self, query: &str, jump: bool) -> bool {
        self.query = query.to_string();
        let q = fold(query);
        if !q.is_empty() && self.plain.is_empty() {
            self.plain = self.body.plain_lines().iter().map(|l| fold(l)).collect();
        }
        self.hits = if q.is_empty() {
            Vec::new()
        } else {
            (self.plain.iter().enumerate())
                .filter(|(_, l)| l.contains(&q))
                .map(|(i, _)| i)
                .collect()
        };
        self.hit = None;
        if jump && !self.hits.is_empty() {
            let at = self.hits.partition_point(|&r| r < self.scroll);
            self.hit = Some(at % self.hits.len());
        }
        !self.hits.is_empty()
    }

    /// Goes to the next match (`forward`) or the one before, wrapping around; the row to
    /// show, or `None` without matches.
    pub(crate) fn next_hit(&mut self, forward: bool) -> Option<usize> {
        let n = self.hits.len();
        if n == 0 {
            return None;
        }
        let i = match (self.hit, forward) {
            (None, true) => self.hits.partition_point(|&r| r <= self.scroll) % n,
            (None, false) => (self.hits.partition_point(|&r| r < self.scroll) + n - 1) % n,
            (Some(i), true) => (i + 1) % n,
            (Some(i), false) => (i + n - 1) % n,
        };
        self.hit = Some(i);
        Some(self.hits[i])
    }

    /// Puts `row` in sight: a third down the page, so what leads to it shows too.
    pub(crate) fn show_row(&mut self, row: usize, page: usize) {
        self.scroll = row.saturating_sub(page / 3);
        self.scroll_by(0, page);
    }
}

/// `s` folded for a search that ignores case: each character's lower case, one for one, so
/// positions in the folded text are positions in the text.
pub(crate) fn fold(s: &str) -> String {
    s.chars()
        .map(|c| c.to_lowercase().next().unwrap_or(c))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reader(body: &str, width: usize) -> Reader {
        let text = format!(
            "[[CLAUDE→HUMAN v1]]\nmessage: 01J00000000000000000000000\nintent: RESPOND\nbody: |\n{}sig: none\n[[END]]\n",
            body.lines().map(|l| format!("  {l}\n")).collect::<String>()
        );
        let mut store = crate::store::Store::open_in_memory().unwrap();
        let report = store.import_text("t", &text, &Default::default()).unwrap();
        let id = report.items[0].message.clone().unwrap();
        let m = store.message(&id).unwrap().unwrap();
        Reader::new(m, Some("plans"), width)
    }

    #[test]
    fn the_search_goes_from_match_to_match_and_wraps() {
        let body: String = (0..100)
            .map(|i| {
                if i % 30 == 7 {
                    "the Needle here\n".to_string()
                } else {
                    format!("line {i}\n")
                }
            })
            .collect();
        let mut r = reader(&body, 60);
        assert!(r.search("needle", true));
        assert_eq!(r.hits.len(), 4);
        let first = r.hits[r.hit.unwrap()];
        let rows: Vec<usize> = (0..4).filter_map(|_| r.next_hit(true)).collect();
        assert_eq!(rows.len(), 4);
        assert_eq!(rows[3], first, "wraps back to the first");
        assert!(!r.search("absent", true));
        assert_eq!(r.next_hit(true), None);
    }

    #[test]
    fn a_narrower_screen_keeps_the_place_and_the_search() {
        let body: String = (0..200)
            .map(|i| format!("word {i} and some more words to wrap\n\n"))
            .collect();
        let mut r = reader(&body, 100);
        r.search("word 150 ", true);
        r.scroll = r.body.lines.len() * 3 / 4;
        let rows = r.body.lines.len();
        r.lay_out(20);
        assert!(r.body.lines.len() > rows);
        assert_eq!(r.hits.len(), 1);
        let share = r.scroll as f64 / r.body.lines.len() as f64;
        assert!((share - 0.75).abs() < 0.05, "{share}");
    }

    #[test]
    fn the_head_names_sender_recipient_intent_and_context() {
        let r = reader("hi", 80);
        assert!(
            r.head[0].starts_with("CLAUDE → HUMAN · RESPOND"),
            "{:?}",
            r.head
        );
        assert_eq!(r.head[1], "context: plans");
    }
}
