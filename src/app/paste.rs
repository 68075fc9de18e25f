//! Pastes and popups: the paste preview (raw text kept first, then a dry run of its import),
//! the paste box, search, the command line, help and drafts.

use ratatui_textarea::TextArea;

use super::layout::inner_height;
use super::popup::{Popup, Preview};
use super::text::headline;
use super::{Action, App, strip_controls};
use crate::store::Outcome;

/// The search results asked for at a time.
const SEARCH_LIMIT: usize = 200;

impl App {
    /// Keeps `text` as received, then previews what importing it would do.
    pub(super) fn preview_paste(&mut self, source: &str, text: &str) -> anyhow::Result<()> {
        if text.trim().is_empty() {
            self.warn("The paste was empty.");
            return Ok(());
        }
        let kept = self.store.keep_text(source, text)?;
        let report = self
            .store
            .import_kept(&kept, &self.settings.options, &mut |_| {}, false)?;
        if report.items.is_empty() {
            self.popup = None;
            self.warn(format!(
                "No envelope found in the paste ({} bytes, kept as paste #{}); a [[FROM→TO v1]] banner line starts one.",
                text.len(),
                kept.paste_id
            ));
            return Ok(());
        }
        let mut destinations = Vec::with_capacity(report.items.len());
        for item in &report.items {
            let d = match (&item.outcome, &item.thread) {
                (Outcome::Rejected, _) => "not imported (errors)".to_string(),
                (Outcome::Duplicate, _) => "already stored".to_string(),
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
        // The same extraction the import ran, for what each envelope says.
        let summaries = crate::protocol::extract(text, &self.settings.options)
            .envelopes
            .iter()
            .map(|p| headline(&p.envelope, None))
            .collect();
        self.popup = Some(Popup::Preview(Preview {
            kept,
            report,
            destinations,
            summaries,
            selected: 0,
            bytes: text.len(),
        }));
        Ok(())
    }

    /// `p`: imports what the system clipboard holds, or opens the paste box.
    pub(super) fn paste_from_clipboard(&mut self) -> anyhow::Result<()> {
        match self.clipboard.paste() {
            Some(text) if !text.trim().is_empty() => self.preview_paste("<clipboard>", &text),
            _ => {
                let mut text = TextArea::default();
                text.set_placeholder_text(
                    "Paste here with your terminal (Ctrl-Shift-V, Cmd-V, or the mouse)…",
                );
                self.popup = Some(Popup::PasteBox {
                    text: Box::new(text),
                    note: "The clipboard cannot be read from here (remote session or no display)."
                        .into(),
                });
                Ok(())
            }
        }
    }

    pub(super) fn popup_action(&mut self, action: Action) -> anyhow::Result<()> {
        let Some(popup) = self.popup.as_mut() else {
            return Ok(());
        };
        if action == Action::Back {
            self.popup = None;
            return Ok(());
        }
        match popup {
            Popup::Help { scroll } => {
                let page = inner_height(self.size).saturating_sub(4).max(1) as isize;
                let delta = match action {
                    Action::Up => -1,
                    Action::Down => 1,
                    Action::PageUp => -page,
                    Action::PageDown => page,
                    Action::Top => isize::MIN / 2,
                    Action::Bottom => isize::MAX / 2,
                    Action::Scroll(_, _, d) => 3 * d as isize,
                    _ => 0,
                };
                *scroll = scroll
                    .saturating_add_signed(delta)
                    .min(super::help_len(&self.keymap));
            }
            Popup::Preview(p) => match action {
                Action::Up => p.selected = p.selected.saturating_sub(1),
                Action::Down => p.selected = (p.selected + 1).min(p.report.items.len() - 1),
                Action::Confirm => return self.import_preview(),
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
                    text.input(ev);
                }
                Action::Confirm => {
                    let all = text.lines().join("\n");
                    return self.preview_paste("<paste>", &all);
                }
                _ => {}
            },
            Popup::Command(prompt) => match action {
                Action::Input(ev) => {
                    prompt.edit(&ev);
                }
                Action::Paste(s) => prompt
                    .text
                    .push_str(&strip_controls(&s).0.replace('\n', " ")),
                Action::Open => {
                    let line = std::mem::take(&mut prompt.text);
                    self.popup = None;
                    return self.run_command(&line);
                }
                _ => {}
            },
            Popup::Search(search) => match action {
                Action::Input(_) | Action::Paste(_) => {
                    let changed = match action {
                        Action::Input(ev) => search.prompt.edit(&ev),
                        Action::Paste(s) => {
                            search
                                .prompt
                                .text
                                .push_str(&strip_controls(&s).0.replace('\n', " "));
                            true
                        }
                        _ => false,
                    };
                    if changed {
                        search.run(&self.store, SEARCH_LIMIT);
                    }
                }
                Action::Up => search.selected = search.selected.saturating_sub(1),
                Action::Down => {
                    search.selected = (search.selected + 1).min(search.hits.len().saturating_sub(1))
                }
                Action::Open => {
                    if let Some(hit) = search.hits.get(search.selected).cloned() {
                        self.popup = None;
                        self.reveal(&hit.thread, Some(&hit.message))?;
                        self.focus = super::Pane::Inspector;
                    }
                }
                _ => {}
            },
            Popup::Drafts {
                drafts,
                selected,
                confirm,
            } => match action {
                Action::Up => *selected = selected.saturating_sub(1),
                Action::Down => *selected = (*selected + 1).min(drafts.len().saturating_sub(1)),
                Action::Open => {
                    if let Some(d) = drafts.get(*selected).cloned() {
                        self.popup = None;
                        return self.resume_draft(&d);
                    }
                }
                Action::Discard => {
                    let Some(d) = drafts.get(*selected) else {
                        return Ok(());
                    };
                    if confirm.as_deref() == Some(d.id.as_str()) {
                        let id = d.id.clone();
                        drafts.remove(*selected);
                        *selected = (*selected).min(drafts.len().saturating_sub(1));
                        *confirm = None;
                        let empty = drafts.is_empty();
                        self.store.delete_draft(&id)?;
                        self.info("Draft discarded.");
                        if empty {
                            self.popup = None;
                        }
                    } else {
                        *confirm = Some(d.id.clone());
                        self.warn("Press discard again to delete this draft for good.");
                    }
                }
                _ => {}
            },
        }
        Ok(())
    }

    /// Enter in the preview: imports the kept paste for real.
    fn import_preview(&mut self) -> anyhow::Result<()> {
        let Some(Popup::Preview(p)) = self.popup.take() else {
            return Ok(());
        };
        let report = self
            .store
            .import_kept(&p.kept, &self.settings.options, &mut |_| {}, true)?;
        let (imported, dup, rejected) = (
            report.count(Outcome::Imported),
            report.count(Outcome::Duplicate),
            report.count(Outcome::Rejected),
        );
        let first = report
            .items
            .iter()
            .find(|i| i.outcome != Outcome::Rejected && i.thread.is_some());
        if let Some(item) = first {
            let (thread, message) = (item.thread.clone(), item.message.clone());
            if let Some(t) = thread {
                self.reveal(&t, message.as_deref())?;
            }
        } else {
            self.list.reload(&self.store)?;
        }
        let text = format!("Imported {imported}, {dup} already stored, {rejected} rejected.");
        if rejected > 0 {
            let why = report
                .items
                .iter()
                .find(|i| i.outcome == Outcome::Rejected)
                .and_then(|i| i.diagnostics.iter().find(|d| d.is_error()))
                .map(|d| format!(" First: line {}: {}", d.line, d.message))
                .unwrap_or_default();
            self.warn(format!("{text}{why}"));
        } else {
            self.info(text);
        }
        Ok(())
    }

    /// Runs a `:` command.
    pub(super) fn run_command(&mut self, line: &str) -> anyhow::Result<()> {
        let line = line.trim();
        let (cmd, arg) = line.split_once(' ').unwrap_or((line, ""));
        let arg = arg.trim();
        match cmd {
            "" => {}
            "q" | "quit" => self.quit = true,
            "help" | "h" => self.popup = Some(Popup::Help { scroll: 0 }),
            "drafts" => self.open_drafts()?,
            "new" => self.compose_new()?,
            "reply" => self.compose_reply()?,
            "raw" | "view" => {
                self.inspector.view = self.inspector.view.next();
                self.refresh_inspector();
            }
            "search" | "s" => {
                let mut s = super::popup::Search::default();
                s.prompt.text = arg.to_string();
                s.run(&self.store, SEARCH_LIMIT);
                self.popup = Some(Popup::Search(s));
            }
            "import" | "read" if !arg.is_empty() => {
                let text = std::fs::read(arg).map_err(|e| anyhow::anyhow!("cannot read {arg}: {e}"))?;
                let (text, _) = crate::protocol::decode(&text);
                self.preview_paste(arg, &text)?;
            }
            "open" | "thread" if !arg.is_empty() => {
                if self.store.has_thread(arg)? {
                    self.reveal(arg, None)?;
                } else if let Some(m) = self.store.message(arg)? {
                    self.reveal(&m.thread, Some(arg))?;
                } else {
                    self.error(format!("No thread or message `{arg}`."));
                }
            }
            "export" if !arg.is_empty() => {
                let view = match self.tree.as_ref().map(|t| t.outline.id.clone()) {
                    Some(id) => self.store.thread(&id)?,
                    None => None,
                };
                let Some(view) = view else {
                    self.warn("Open a thread to export.");
                    return Ok(());
                };
                std::fs::write(arg, view.canonical_text())
                    .map_err(|e| anyhow::anyhow!("cannot write {arg}: {e}"))?;
                self.info(format!("Wrote {} envelopes to {arg}.", view.messages.len()));
            }
            other => self.error(format!(
                "Unknown command `:{other}`; commands: quit, help, new, reply, drafts, raw, search TEXT, import FILE, export FILE, open ID."
            )),
        }
        Ok(())
    }
}
