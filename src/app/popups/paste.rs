//! Pastes: the paste preview (raw text kept first, then a dry run of its import) and the paste
//! box, with their keys; and where every popup's keys are sent to the popup's own room.

use ratatui_textarea::TextArea;

use crate::app::background::pending::{cause, is_busy, write_aside};
use crate::app::panes::layout::preview_page;
use crate::app::panes::list_move::{is_move, select};
use crate::app::popups::popup::{Popup, Preview, UnsavedPaste};
use crate::app::text::headline;
use crate::app::{Action, App};
use crate::store::{ImportItem, ImportReport, Outcome};

impl App {
    /// Keeps `text` as received, then previews what importing it would do. When the
    /// database does not take the paste (disk full, another process's import holding the
    /// lock) the preview still opens, read from the text alone, and the paste stays in
    /// memory marked "not saved" until it is stored or written to a file.
    pub(in crate::app) fn preview_paste(&mut self, source: &str, text: &str) -> anyhow::Result<()> {
        if text.trim().is_empty() {
            self.warn("The paste was empty.");
            return Ok(());
        }
        let stored = match self.store.keep_text(source, text) {
            Ok(kept) => self
                .store
                .import_kept(&kept, &self.settings.options, &mut |_| {}, false)
                .map(|report| (kept, report))
                .map_err(anyhow::Error::from),
            Err(e) => Err(e.into()),
        };
        let (kept, report) = match stored {
            Ok(k) => k,
            Err(e) => return self.preview_unsaved(source, text, &e),
        };
        if report.items.is_empty() {
            self.popup = None;
            self.warn(format!(
                "No envelope found in the paste ({} bytes, kept as paste #{}); a [[FROM→TO v1]] banner line starts one.",
                text.len(),
                kept.paste_id
            ));
            return Ok(());
        }
        let mut destinations: Vec<String> = Vec::with_capacity(report.items.len());
        for (i, item) in report.items.iter().enumerate() {
            // A paste carrying a whole new thread: later envelopes join the one the first
            // creates.
            let creator = report.items[..i].iter().zip(&destinations).find(|(e, d)| {
                e.outcome == Outcome::Imported
                    && e.thread == item.thread
                    && d.as_str() == "new thread"
            });
            let d = match (&item.outcome, &item.thread) {
                (Outcome::Imported, Some(_)) if creator.is_some() => format!(
                    "joins the thread of line {}",
                    creator.map_or(0, |(e, _)| e.span.start_line)
                ),
                (Outcome::Rejected, _) => "not imported (errors)".to_string(),
                (Outcome::Duplicate, _) => "already stored".to_string(),
                (Outcome::Signed, _) => "signs the stored (unsigned) message".to_string(),
                (Outcome::Conflict, _) => "kept as conflicting version".to_string(),
                (_, Some(t)) if self.store.has_thread(t)? => {
                    let ctx = self
                        .list
                        .rows
                        .iter()
                        .find(|r| &r.summary.id == t)
                        .and_then(|r| r.summary.context.clone());
                    format!("joins {}", ctx.unwrap_or_else(|| t.clone()))
                }
                (_, Some(_)) => "new thread".to_string(),
                (_, None) => "new thread".to_string(),
            };
            destinations.push(d);
        }
        let (summaries, bodies) = summaries(text, &self.settings, &report);
        self.popup = Some(Popup::Preview(Preview {
            kept: Some(kept),
            unsaved: None,
            selected: 0,
            report,
            destinations,
            summaries,
            bodies,
            rendered: Default::default(),
            bytes: text.len(),
        }));
        Ok(())
    }

    /// The preview of a paste the database did not take: what each envelope is, read from
    /// the text alone (parsing needs no disk), and a way to keep it in a file.
    fn preview_unsaved(
        &mut self,
        source: &str,
        text: &str,
        e: &anyhow::Error,
    ) -> anyhow::Result<()> {
        let why = cause(e);
        let extracted = crate::protocol::extract(text, &self.settings.options);
        let items: Vec<ImportItem> = extracted
            .envelopes
            .iter()
            .map(|p| ImportItem {
                span: p.span,
                outcome: if p.diagnostics.iter().any(|d| d.is_error()) {
                    Outcome::Rejected
                } else {
                    Outcome::Imported
                },
                message: p.envelope.message().map(str::to_string),
                thread: p.envelope.thread().map(str::to_string),
                diagnostics: p.diagnostics.clone(),
            })
            .collect();
        let destinations = vec!["not checked (not saved)".to_string(); items.len()];
        let summaries = extracted
            .envelopes
            .iter()
            .map(|p| headline(&p.envelope, None))
            .collect();
        let bodies = (extracted.envelopes.iter())
            .map(|p| p.envelope.body.clone())
            .collect();
        // The file it was already written to, when this is the same paste again.
        let file = match &self.popup {
            Some(Popup::Preview(Preview {
                unsaved: Some(u), ..
            })) if u.text == text => u.file.clone(),
            _ => None,
        };
        self.error(format!(
            "Paste not saved: {why}. It is kept here: w writes it to a file, Enter tries the database again."
        ));
        self.popup = Some(Popup::Preview(Preview {
            kept: None,
            unsaved: Some(UnsavedPaste {
                source: source.to_string(),
                text: text.to_string(),
                cause: why,
                retry: is_busy(e),
                file,
                confirm_drop: false,
            }),
            selected: 0,
            report: ImportReport {
                source: source.to_string(),
                paste_id: 0,
                items,
                diagnostics: extracted.diagnostics,
            },
            destinations,
            summaries,
            bodies,
            rendered: Default::default(),
            bytes: text.len(),
        }));
        Ok(())
    }

    /// Offers an unsaved paste to the database again; the preview keeps its selected row.
    /// Whether the database took it.
    fn store_unsaved_again(&mut self, source: &str, text: &str) -> anyhow::Result<bool> {
        let selected = match &self.popup {
            Some(Popup::Preview(p)) => p.selected,
            _ => 0,
        };
        let status = self.status.clone();
        self.preview_paste(source, text)?;
        let stored = match &mut self.popup {
            Some(Popup::Preview(p)) => {
                p.selected = selected.min(p.report.items.len().saturating_sub(1));
                p.unsaved.is_none()
            }
            // No envelope after all: kept, and the status line says so.
            _ => true,
        };
        if !stored {
            // Still not taken: the preview says so; the status line keeps what it said.
            self.set_status(status);
        }
        Ok(stored)
    }

    /// On the tick: tries again to store a paste the database did not take. It is retried
    /// only while the database was busy (a full disk stays full until the operator acts;
    /// Enter tries again).
    pub(in crate::app) fn retry_unsaved_paste(&mut self) -> anyhow::Result<()> {
        let Some(Popup::Preview(Preview {
            unsaved: Some(u), ..
        })) = &self.popup
        else {
            return Ok(());
        };
        if !u.retry {
            return Ok(());
        }
        let (source, text) = (u.source.clone(), u.text.clone());
        if self.store_unsaved_again(&source, &text)? && self.popup.is_some() {
            self.info("The paste is saved now (the database is free again): Enter imports it.");
        }
        Ok(())
    }

    /// `w` in the preview: writes the paste to a file beside the database (else in the
    /// temporary folder), readable by the operator only, and says where.
    fn save_paste_to_file(&mut self) -> anyhow::Result<()> {
        let Some(Popup::Preview(p)) = &mut self.popup else {
            return Ok(());
        };
        let text = match (&p.unsaved, &p.kept) {
            (Some(u), _) => u.text.clone(),
            (None, Some(k)) => {
                let note = format!(
                    "The paste is already kept in the database (paste #{}).",
                    k.paste_id
                );
                self.info(note);
                return Ok(());
            }
            (None, None) => return Ok(()),
        };
        let path = write_aside(self.settings.db_path.as_deref(), "crosstalk-paste", &text)?;
        if let Some(Popup::Preview(p)) = &mut self.popup {
            if let Some(u) = p.unsaved.as_mut() {
                u.file = Some(path.clone());
            }
        }
        self.info(format!("Paste written to {}", path.display()));
        Ok(())
    }

    /// `p`: imports what the system clipboard holds, or opens the paste box.
    pub(in crate::app) fn paste_from_clipboard(&mut self) -> anyhow::Result<()> {
        match self.clipboard.paste() {
            Some(text) if !text.trim().is_empty() => self.preview_paste("<clipboard>", &text),
            _ => {
                let mut text = TextArea::default();
                text.set_placeholder_text(
                    "Paste here with your terminal (Ctrl-Shift-V, Cmd-V, or the mouse)…",
                );
                self.popup = Some(Popup::PasteBox {
                    text: Box::new(crate::app::writing::text_box::TextBox::new(text)),
                    note: "The clipboard cannot be read from here (remote session or no display)."
                        .into(),
                });
                Ok(())
            }
        }
    }

    pub(in crate::app) fn popup_action(&mut self, action: Action) -> anyhow::Result<()> {
        let Some(popup) = self.popup.as_mut() else {
            return Ok(());
        };
        if let (Popup::Reader(r), Action::Back) = (&mut *popup, &action) {
            if r.prompt.take().is_some() {
                return Ok(());
            }
        }
        if action == Action::Back {
            return self.close_popup();
        }
        match popup {
            Popup::Reader(_) => self.reader_action(action),
            Popup::Queue(_) => self.queue_action(action),
            Popup::Poll(_) => self.poll_action(action),
            Popup::SideBySide(_) => {
                self.side_by_side_action(action);
                Ok(())
            }
            Popup::ErrorCodes(_) => self.code_picker_action(action),
            Popup::Keys { .. } | Popup::Messages { .. } | Popup::Help { .. } => {
                self.scroll_popup_action(action);
                Ok(())
            }
            Popup::Preview(_) | Popup::PasteBox { .. } => self.paste_popup_action(action),
            Popup::Command(_) => self.command_action(action),
            Popup::Search(_) => self.search_action(action),
            Popup::Erase(_) => self.erase_popup_action(action),
            Popup::Conversation(_) => self.conversation_action(action),
            Popup::Drafts { .. } => self.drafts_action(action),
        }
    }

    /// The keys of the paste's own popups: the preview and the paste box.
    fn paste_popup_action(&mut self, action: Action) -> anyhow::Result<()> {
        let Some(popup) = self.popup.as_mut() else {
            return Ok(());
        };
        match popup {
            Popup::Preview(p) => match action {
                a if is_move(&a) => {
                    let page = preview_page(self.size, p.unsaved.is_some());
                    let len = p.report.items.len();
                    p.selected = select(p.selected, len, &a, page).unwrap_or(p.selected);
                }
                Action::Confirm => return self.import_preview(false),
                Action::ImportFreshIds => return self.import_preview(true),
                Action::EditPaste => {
                    let text = match (&p.unsaved, &p.kept) {
                        (Some(u), _) => u.text.clone(),
                        (None, Some(k)) => self.store.paste_text(k.paste_id)?,
                        (None, None) => return Ok(()),
                    };
                    self.ask(crate::app::Effect::EditPaste(text));
                }
                Action::SaveToFile => return self.save_paste_to_file(),
                Action::ErrorReply => return self.reply_format_error(),
                _ => {}
            },
            Popup::PasteBox { text, .. } => match action {
                Action::Paste(s) => {
                    // A bracketed paste into the box is the common case: go straight to the
                    // preview rather than making the operator confirm twice.
                    let mut all = text.lines().join("\n");
                    all.push_str(&s);
                    return self.preview_paste("<paste>", &all);
                }
                Action::Input(ev) => {
                    text.key(&ev, &mut self.kill, false);
                }
                Action::Undo => {
                    text.undo();
                }
                Action::Redo => {
                    text.redo();
                }
                Action::Confirm => {
                    let all = text.lines().join("\n");
                    return self.preview_paste("<paste>", &all);
                }
                _ => {}
            },
            _ => {}
        }
        Ok(())
    }

    /// Closes the popup. A paste the database did not take is never dropped silently: it is
    /// written to a file first (and when no file can be written either, a second cancel is
    /// needed).
    fn close_popup(&mut self) -> anyhow::Result<()> {
        if matches!(self.popup, Some(Popup::Erase(_))) {
            self.popup = None;
            self.info("Nothing erased.");
            return Ok(());
        }
        // Text in the paste box is a paste like any other: kept, not thrown away with the box.
        if let Some(Popup::PasteBox { text, .. }) = &self.popup {
            let typed = text.lines().join("\n");
            self.popup = None;
            if typed.trim().is_empty() {
                return Ok(());
            }
            let db = self.settings.db_path.clone();
            match self.store.keep_text("<paste box>", &typed) {
                Ok(kept) => self.info(format!(
                    "Paste box closed; its text is kept as paste #{} (`crosstalk pastes show {}` prints it).",
                    kept.paste_id, kept.paste_id
                )),
                Err(e) => match write_aside(db.as_deref(), "crosstalk-paste", &typed) {
                    Ok(path) => self.warn(format!(
                        "Paste box closed; its text was not saved in the database ({}) and is in {}",
                        crate::app::background::pending::cause(&e.into()),
                        path.display()
                    )),
                    Err(w) => self.error(format!(
                        "Paste box closed; its text could not be kept ({}; {w:#})",
                        crate::app::background::pending::cause(&e.into())
                    )),
                },
            }
            return Ok(());
        }
        let db = self.settings.db_path.clone();
        let Some(Popup::Preview(Preview {
            unsaved: Some(u), ..
        })) = &mut self.popup
        else {
            self.popup = None;
            return Ok(());
        };
        let status = match (&u.file, u.confirm_drop) {
            (Some(f), _) => Ok(format!(
                "Paste not in the database; it is in {}",
                f.display()
            )),
            (None, true) => Ok("Paste dropped.".to_string()),
            (None, false) => match write_aside(db.as_deref(), "crosstalk-paste", &u.text) {
                Ok(path) => Ok(format!(
                    "Paste not saved in the database ({}); written to {}",
                    u.cause,
                    path.display()
                )),
                Err(e) => {
                    u.confirm_drop = true;
                    Err(format!(
                        "Paste not saved in the database ({}) and {e:#}. Esc again drops it.",
                        u.cause
                    ))
                }
            },
        };
        match status {
            Ok(note) => {
                self.popup = None;
                self.warn(note);
            }
            Err(note) => self.error(note),
        }
        Ok(())
    }

    /// Enter in the preview: imports the kept paste for real (`F`: with fresh ids for
    /// envelopes rejected only for invalid ids). A paste the database has not taken yet is
    /// offered to it again first (the preview then shows the real check).
    fn import_preview(&mut self, fresh_ids: bool) -> anyhow::Result<()> {
        if let Some(Popup::Preview(Preview {
            unsaved: Some(u), ..
        })) = &self.popup
        {
            let (source, text) = (u.source.clone(), u.text.clone());
            if !self.store_unsaved_again(&source, &text)? {
                if let Some(Popup::Preview(Preview {
                    unsaved: Some(u), ..
                })) = &self.popup
                {
                    let note = format!("Still not saved: {}. w writes it to a file.", u.cause);
                    self.error(note);
                }
            } else if self.popup.is_some() {
                self.info("The paste is saved now: Enter imports it.");
            }
            return Ok(());
        }
        let Some(Popup::Preview(p)) = self.popup.take() else {
            return Ok(());
        };
        let Some(kept) = p.kept.as_ref() else {
            return Ok(());
        };
        let report = match self.store.import_kept_with(
            kept,
            &self.settings.options,
            &mut |_| {},
            true,
            fresh_ids,
        ) {
            Ok(r) => r,
            Err(e) => {
                // The preview stays: the paste is kept, Enter can try again.
                self.popup = Some(Popup::Preview(p));
                return Err(e.into());
            }
        };
        // The message selected afterwards is the one that just arrived: `y` copies it.
        if let Some(item) = crate::app::background::landing::landing(&report) {
            let (thread, message) = (item.thread.clone(), item.message.clone());
            if let Some(t) = thread {
                self.reveal(&t, message.as_deref())?;
            }
        } else {
            self.list.reload(&self.store)?;
        }
        let (clean, mut text) = crate::app::background::landing::summary(&report);
        if self.settings.copy_on_import {
            let relayed = self.copy_after_import(&report)?;
            text.push_str(&relayed);
        }
        if clean {
            self.info(text);
        } else {
            self.warn(text);
        }
        Ok(())
    }
}

impl Preview {
    /// The selected envelope's body rendered as markdown for `width` cells, its first `rows`
    /// lines, their code coloured. The rendering is kept for the item and width it was made
    /// for, so a frame that draws the same preview again only copies the lines it shows.
    pub(crate) fn body_lines(
        &self,
        width: usize,
        rows: usize,
    ) -> Vec<ratatui::text::Line<'static>> {
        let Some(Some(body)) = self.bodies.get(self.selected) else {
            return Vec::new();
        };
        let mut memo = self.rendered.borrow_mut();
        if !matches!(&*memo, Some(m) if m.0 == self.selected && m.1 == width) {
            let body = crate::markdown::render_uncoloured(body, width);
            *memo = Some(Box::new((self.selected, width, body)));
        }
        let Some(m) = memo.as_mut() else {
            return Vec::new();
        };
        // Only the rows shown are coloured: a long paste's code costs nothing unseen.
        m.2.colour_rows(0..rows);
        m.2.lines.iter().take(rows).cloned().collect()
    }
}

/// For each envelope of `text`: the id it will be stored under when that is made on receipt
/// (shortened; the dry run makes the same ids as the import), intent, from→to and the body's
/// first line (the same extraction the import runs); and its body as written.
fn summaries(
    text: &str,
    settings: &crate::app::Settings,
    report: &ImportReport,
) -> (Vec<String>, Vec<Option<String>>) {
    let extracted = crate::protocol::extract(text, &settings.options);
    let bodies = (extracted.envelopes.iter())
        .map(|p| p.envelope.body.clone())
        .collect();
    let summaries = extracted
        .envelopes
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let item = report.items.get(i);
            let made = match (p.envelope.message(), item) {
                (None, Some(it)) if it.outcome == Outcome::Imported => it.message.as_deref(),
                _ => None,
            };
            let id = made.map_or(String::new(), |m| {
                let tail = m.get(m.len().saturating_sub(6)..).unwrap_or(m);
                format!("id …{tail} · ")
            });
            // A reply without an intent (a v1.0 `response:`) is stored as RESPOND: say so.
            let answering = p.envelope.parent().is_some();
            let intent = match p.envelope.intent_raw() {
                None => p
                    .intent_answering(answering)
                    .map(|i| i.as_str().to_string()),
                Some(_) => None,
            };
            format!("{id}{}", headline(&p.envelope, intent.as_deref()))
        })
        .collect();
    (summaries, bodies)
}
