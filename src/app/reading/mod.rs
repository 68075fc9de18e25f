//! The full-screen views for reading: the reader (one message given the whole screen, as a
//! mail client's pager) and the answers to one message side by side. Each is laid out once per
//! width here and only drawn by `ui`.

pub mod columns;
pub mod reader;

use crate::app::panes::list_move::step;
use crate::app::popups::popup::{Popup, Prompt};
use crate::app::text::safe_line;
use crate::app::{Action, App};
use crate::store::StoredMessage;

impl App {
    /// `C`: the answers to the selected message side by side. On a POLL, or an answer to
    /// one, the POLL's targets with their votes; on a message with replies, its replies; on a
    /// message without, it and its siblings (the answers to its parent).
    pub(in crate::app) fn open_side_by_side(&mut self) -> anyhow::Result<()> {
        let Some(selected) = self.selected_message().cloned() else {
            self.warn(
                "Select a message to see its answers side by side (open a thread with Enter).",
            );
            return Ok(());
        };
        let is_poll =
            |m: &StoredMessage| m.envelope.intent() == Some(crate::protocol::Intent::Poll);
        let parent = match &selected.parent {
            Some(p) => self.store.message(p)?,
            None => None,
        };
        let anchor = if is_poll(&selected) {
            selected
        } else if let Some(p) = parent.filter(is_poll) {
            p
        } else if !self.replies_to(&selected.id)?.is_empty() {
            selected
        } else if let Some(p) = match &selected.parent {
            Some(p) => self.store.message(p)?,
            None => None,
        } {
            p
        } else {
            self.warn("No answers to show side by side: the message has no replies yet.");
            return Ok(());
        };
        let replies = self.replies_to(&anchor.id)?;
        let tally = match is_poll(&anchor) {
            true => self.store.poll_view(anchor.clone(), self.now)?,
            false => None,
        };
        let columns = match tally {
            Some(view) => columns::by_target(&view.tally, replies),
            None => columns::by_sender(replies),
        };
        if columns.is_empty() {
            self.warn("No answers to show side by side: the message has no replies yet.");
            return Ok(());
        }
        let what = anchor.intent.as_deref().unwrap_or("message");
        let title = format!(
            "{} answers to the {} from {}: {}",
            columns.len(),
            safe_line(what),
            safe_line(&anchor.envelope.banner.from),
            safe_line(anchor.envelope.first_line())
        );
        self.popup = Some(Popup::SideBySide(Box::new(columns::SideBySide::new(
            title, columns,
        ))));
        self.lay_out_reading();
        Ok(())
    }

    /// The messages of the open thread that answer `id`, in arrival order.
    fn replies_to(&self, id: &str) -> anyhow::Result<Vec<StoredMessage>> {
        let Some(tree) = self.tree.as_ref() else {
            return Ok(Vec::new());
        };
        let ids: Vec<String> = (tree.outline.rows.iter())
            .filter(|r| r.parent.as_deref() == Some(id))
            .map(|r| r.id.clone())
            .collect();
        let mut out = Vec::new();
        for id in ids {
            if let Some(m) = self.store.message(&id)? {
                out.push(m);
            }
        }
        out.sort_by(|a, b| a.arrived_at.cmp(&b.arrived_at));
        Ok(out)
    }

    /// Keys in the side-by-side view (Back is handled by the popup).
    pub(in crate::app) fn side_by_side_action(&mut self, action: Action) {
        let (width, page) = reading_size(self.size);
        let Some(Popup::SideBySide(v)) = self.popup.as_mut() else {
            return;
        };
        match action {
            Action::ColumnLeft => v.shift(-1, width),
            Action::ColumnRight => v.shift(1, width),
            a => {
                if let Some(d) = step(&a, page as isize) {
                    v.scroll_by(d, page);
                }
            }
        }
    }

    /// Lays the open full-screen view out for the screen's width (after it opened, and after
    /// a resize).
    pub(in crate::app) fn lay_out_reading(&mut self) {
        let (width, page) = reading_size(self.size);
        match self.popup.as_mut() {
            Some(Popup::SideBySide(v)) => {
                v.lay_out(width);
                v.shift(0, width);
                v.scroll_by(0, page);
            }
            Some(Popup::Reader(r)) => {
                r.lay_out(width);
                r.scroll_by(0, reader_page(self.size, r));
            }
            _ => {}
        }
    }

    /// `o`: the selected message full screen.
    pub(in crate::app) fn open_reader(&mut self) {
        let Some(m) = self.selected_message().cloned() else {
            self.warn("Select a message to read (open a thread with Enter).");
            return;
        };
        let context = self.tree.as_ref().and_then(|t| t.outline.context.clone());
        let (width, _) = reading_size(self.size);
        let reader = reader::Reader::new(m, context.as_deref(), width);
        self.popup = Some(Popup::Reader(Box::new(reader)));
        self.lay_out_reading();
    }

    /// Keys in the reader, and in its search prompt (Back there only closes the prompt: see
    /// `popup_action`).
    pub(in crate::app) fn reader_action(&mut self, action: Action) -> anyhow::Result<()> {
        let size = self.size;
        let Some(Popup::Reader(r)) = self.popup.as_mut() else {
            return Ok(());
        };
        let page = reader_page(size, r);
        if let Some(prompt) = r.prompt.as_mut() {
            match action {
                Action::Input(ev) if prompt.edit(&ev, &mut self.kill) => {
                    let q = prompt.text.clone();
                    if r.search(&q, true) {
                        let row = r.hits[r.hit.unwrap_or(0)];
                        r.show_row(row, page);
                    }
                }
                Action::Paste(text) => {
                    let clean = crate::app::strip_controls(&text).0.replace('\n', " ");
                    prompt.text.push_str(&clean);
                    let q = prompt.text.clone();
                    r.search(&q, true);
                }
                Action::Down | Action::Up => {
                    if let Some(row) = r.next_hit(action == Action::Down) {
                        r.show_row(row, page);
                    }
                }
                Action::Open => {
                    r.prompt = None;
                    let q = r.query.clone();
                    let found = r.hits.len();
                    if let Some(row) = r.hit.and_then(|i| r.hits.get(i)).copied() {
                        r.show_row(row, page);
                    }
                    match found {
                        0 if q.is_empty() => {}
                        0 => self.warn(format!("No match for “{}”.", safe_line(&q))),
                        n => self.info(format!(
                            "{n} rows match “{}”: n goes to the next, N to the one before.",
                            safe_line(&q)
                        )),
                    }
                }
                _ => {}
            }
            return Ok(());
        }
        match action {
            Action::Search => r.prompt = Some(Prompt::default()),
            Action::SearchNext | Action::SearchPrev => {
                let forward = action == Action::SearchNext;
                match r.next_hit(forward) {
                    Some(row) => {
                        r.show_row(row, page);
                        let (i, n) = (r.hit.unwrap_or(0) + 1, r.hits.len());
                        self.info(format!("Match {i} of {n}."));
                    }
                    None if r.query.is_empty() => self.info("Nothing searched yet: / searches."),
                    None => {
                        let q = safe_line(&r.query).into_owned();
                        self.warn(format!("No match for “{q}”."));
                    }
                }
            }
            Action::NextMessage | Action::PrevMessage => {
                self.read_next(action == Action::NextMessage)
            }
            Action::CopyBody => {
                let body = r.message.envelope.body.clone().unwrap_or_default();
                self.copy_plain(&body, "the body");
            }
            Action::CopyBlock(n) => {
                let count = r.body.blocks.len();
                match r.body.blocks.iter().find(|b| b.number == n as usize) {
                    Some(b) => {
                        let code = b.code.clone();
                        self.copy_plain(&code, &format!("code block [{n}]"));
                    }
                    None if count == 0 => self.warn("This body has no code block to copy."),
                    None => self.warn(format!(
                        "No code block [{n}]: this body has {count} (1 to {count})."
                    )),
                }
            }
            a => {
                if let Some(d) = step(&a, page as isize) {
                    r.scroll_by(d, page);
                }
            }
        }
        Ok(())
    }

    /// `J`/`K` in the reader: the next (or previous) message of the thread, in tree order,
    /// read in its place; the tree's selection follows.
    fn read_next(&mut self, forward: bool) {
        let Some(tree) = self.tree.as_mut() else {
            return;
        };
        let Some(i) = tree.selected_index() else {
            return;
        };
        let n = tree.outline.rows.len();
        let next = match forward {
            true if i + 1 < n => i + 1,
            false if i > 0 => i - 1,
            _ => {
                let edge = if forward { "last" } else { "first" };
                self.info(format!("This is the {edge} message of the thread."));
                return;
            }
        };
        tree.select_index(next);
        self.refresh_inspector();
        let query = match &self.popup {
            Some(Popup::Reader(r)) => r.query.clone(),
            _ => String::new(),
        };
        self.open_reader();
        if let Some(Popup::Reader(r)) = self.popup.as_mut() {
            // The search goes on in the next message: n finds it there.
            r.search(&query, false);
        }
        self.info(format!("Message {} of {n}.", next + 1));
    }

    /// Copies `text` as it is (no fence, no preamble: it is not an envelope) and says so.
    fn copy_plain(&mut self, text: &str, what: &str) {
        match self.clipboard.copy(text, &mut self.terminal_out) {
            Ok(report) => {
                self.last_copy = Some(report.method);
                let line = format!("Copied {what}: {}.", report.status_line());
                match report.warning {
                    Some(_) => self.warn(line),
                    None => self.info(line),
                }
            }
            Err(e) => self.error(format!("Not copied: {e}")),
        }
    }
}

/// The body rows of the reader on a screen of `size`: less its head, a rule, the search line
/// and the app's hint and status lines.
pub(crate) fn reader_page(size: ratatui::layout::Rect, r: &reader::Reader) -> usize {
    (size.height as usize).saturating_sub(r.head.len() + 4)
}

/// The width and the body rows of a full-screen view on a screen of `size`: the title, the
/// column heads, the rule and the footer take [`columns::HEAD_ROWS`].
pub(crate) fn reading_size(size: ratatui::layout::Rect) -> (usize, usize) {
    (
        size.width as usize,
        (size.height as usize).saturating_sub(columns::HEAD_ROWS),
    )
}
