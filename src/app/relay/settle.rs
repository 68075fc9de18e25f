//! What the operator settles by hand, as in a mail client: in the queue (`Q`) a row is marked
//! done (carried, answered or got by other means than the desk saw) or dismissed (needs
//! nothing more), and `u` brings back the last one, again and again, newest first (mutt's
//! undelete, aerc's undo); in the thread list `a` archives a thread (or brings an archived one
//! back) and `U` undoes that.
//!
//! The undo lists live in the app, not in the popup: closing the queue to look at a thread and
//! opening it again still undoes. What was settled in an earlier run (or by `crosstalk queue`)
//! is brought back with `crosstalk queue undo ID`. Archiving hides a thread and settles none of
//! its queue items: they stay in `Q`.

use crate::app::keymap::Scope;
use crate::app::popups::popup::Popup;
use crate::app::relay::queue::QUEUE_LIMIT;
use crate::app::text::safe_line;
use crate::app::{Action, App, Pane};
use crate::store::{QueueRow, Section, Settled, StoreError};

/// A queue item settled in this run, for `u`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettledHere {
    /// The message.
    pub message: String,
    /// How it names itself on the status line (`REQUEST A→B: first line`), safe to print.
    pub label: String,
}

/// A thread archived (or brought back) in this run, for `U`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchivedHere {
    /// The thread.
    pub thread: String,
    /// Whether it was archived (else brought back).
    pub archived: bool,
}

impl App {
    /// A key of `action` in `scope` as the status line names it: a letter where it has one
    /// (`x` rather than `Del`), else its first key, else the action's config name when a
    /// config left it none; so a hint never names a key that does nothing.
    pub(in crate::app) fn key_name(&self, scope: Scope, action: &Action) -> String {
        let keys = (self.keymap.bindings(scope).iter())
            .find(|(a, _)| a == action)
            .map(|(_, keys)| keys.as_slice())
            .unwrap_or_default();
        let letter = keys.iter().find(|k| {
            k.mods.is_empty() && matches!(k.code, ratatui::crossterm::event::KeyCode::Char(_))
        });
        letter
            .or(keys.first())
            .map(|k| k.to_string())
            .unwrap_or_else(|| action.to_string())
    }

    /// `d` / `x` in the queue: settles the selected row, which leaves every section at once;
    /// the selection stays where it was, on the row that took its place. A draft being
    /// composed is refused with where to go: dismissing it here would lose typed text without
    /// a word, so it is discarded in `D`, where discarding asks twice.
    pub(in crate::app) fn settle_selected(&mut self, how: Settled) -> anyhow::Result<()> {
        let Some(Popup::Queue(view)) = self.popup.as_ref() else {
            return Ok(());
        };
        let Some(row) = view.queue.rows().nth(view.selected).map(|(_, r)| r.clone()) else {
            self.info("The queue is empty: nothing to settle.");
            return Ok(());
        };
        let verb = match how {
            Settled::Done => "marked done",
            _ => "dismissed",
        };
        if row.unsent_draft {
            let open = self.key_name(Scope::Queue, &Action::Open);
            let drafts = self.key_name(Scope::Browse, &Action::Drafts);
            let discard = self.key_name(Scope::Drafts, &Action::Discard);
            self.warn(format!(
                "A draft being composed is not {verb} here, so its text is not lost: {open} resumes it; {drafts} lists the drafts, where {discard} discards one."
            ));
            return Ok(());
        }
        let label = row_label(&row);
        let changed = match self.store.settle(&row.message, how) {
            Ok(changed) => changed,
            Err(StoreError::NoMessage(_)) => {
                self.reread_queue(None)?;
                self.warn(format!(
                    "{label} is gone (erased meanwhile): the queue is read again."
                ));
                return Ok(());
            }
            Err(e) => return Err(e.into()),
        };
        self.reread_queue(None)?;
        self.reread_screen()?;
        if !changed {
            self.info(format!(
                "{label} was settled already (elsewhere): the queue is read again."
            ));
            return Ok(());
        }
        // Short enough for one line of 80 columns: the popup leaves two.
        let undo = self.key_name(Scope::Queue, &Action::Undo);
        let verb = match how {
            Settled::Done => "Marked done",
            _ => "Dismissed",
        };
        self.info(format!("{verb}: {label} — {undo} undoes."));
        self.queue_undo.push(SettledHere {
            message: row.message,
            label,
        });
        Ok(())
    }

    /// `u` in the queue: brings back the last item settled in this run (each press the one
    /// before), selected where the ledger puts it again.
    pub(in crate::app) fn undo_settle(&mut self) -> anyhow::Result<()> {
        let Some(item) = self.queue_undo.pop() else {
            let done = self.key_name(Scope::Queue, &Action::Done);
            let dismiss = self.key_name(Scope::Queue, &Action::Dismiss);
            self.info(format!(
                "Nothing settled here to undo: {done} marks the selected row done, {dismiss} dismisses it (`crosstalk queue undo ID` brings back one settled before)."
            ));
            return Ok(());
        };
        let changed = match self.store.unsettle(&item.message) {
            Ok(changed) => changed,
            Err(StoreError::NoMessage(_)) => {
                self.reread_queue(None)?;
                self.warn(format!(
                    "{} is gone (erased meanwhile): nothing to bring back.",
                    item.label
                ));
                return Ok(());
            }
            Err(e) => {
                // Not undone (a busy database): the next press tries it again.
                self.queue_undo.push(item);
                return Err(e.into());
            }
        };
        self.reread_queue(Some(&item.message))?;
        self.reread_screen()?;
        let sections = self
            .store
            .queue_sections(&item.message)?
            .unwrap_or_default();
        let line = match (changed, sections.as_slice()) {
            (false, _) => format!(
                "{} was not settled any more (undone elsewhere).",
                item.label
            ),
            (true, []) => format!(
                "Undone: {}; it is in no section now (the ledger sees nothing left to do).",
                item.label
            ),
            (true, s) => format!("Back under {}: {}.", section_names(s), item.label),
        };
        self.info(line);
        Ok(())
    }

    /// Reads the open queue again after a change: the row of `select` selected when it is
    /// listed, else the same place (the row after one that left, or the last).
    fn reread_queue(&mut self, select: Option<&str>) -> anyhow::Result<()> {
        let queue = self.store.queue(QUEUE_LIMIT)?;
        let Some(Popup::Queue(view)) = self.popup.as_mut() else {
            return Ok(());
        };
        let len = queue.rows().count();
        let at = select.and_then(|id| queue.rows().position(|(_, r)| r.message == id));
        view.selected = at.unwrap_or(view.selected).min(len.saturating_sub(1));
        view.queue = queue;
        Ok(())
    }

    /// `a`: archives the selected thread (the list's, or the open one when the tree or the
    /// inspector has the focus), or brings it back when it is archived.
    pub(in crate::app) fn toggle_archive(&mut self) -> anyhow::Result<()> {
        let open = self.tree.as_ref().map(|t| t.outline.id.clone());
        let listed = self.list.selected_id().map(str::to_string);
        let thread = match self.focus {
            Pane::List => listed.or(open),
            _ => open.or(listed),
        };
        let Some(thread) = thread else {
            self.info("No thread to archive.");
            return Ok(());
        };
        let archived = self.store.archived_at(&thread)?.is_some();
        if self.set_archived(&thread, !archived)? {
            self.archive_undo.push(ArchivedHere {
                thread,
                archived: !archived,
            });
        }
        Ok(())
    }

    /// `U` in the thread list: undoes the last archiving or bringing back of this run.
    pub(in crate::app) fn undo_archive(&mut self) -> anyhow::Result<()> {
        let Some(step) = self.archive_undo.pop() else {
            let archive = self.key_name(Scope::Browse, &Action::Archive);
            self.info(format!(
                "Nothing archived here to undo: {archive} archives the selected thread."
            ));
            return Ok(());
        };
        match self.set_archived(&step.thread, !step.archived) {
            Ok(_) => Ok(()),
            Err(e) if matches!(e.downcast_ref(), Some(StoreError::NoThread(_))) => {
                self.warn("That thread is gone (erased meanwhile): nothing to undo.");
                Ok(())
            }
            Err(e) => {
                // Not undone (a busy database): the next press tries it again.
                self.archive_undo.push(step);
                Err(e)
            }
        }
    }

    /// Archives thread `id` (`archive`) or brings it back, then shows the list without it or
    /// with it: a thread that left, the row after it selected (the row that took its place);
    /// a thread that came into the list, selected. Says what happened and how to undo it.
    /// Whether it changed.
    fn set_archived(&mut self, id: &str, archive: bool) -> anyhow::Result<bool> {
        let label = self.thread_label(id)?;
        let changed = self.store.archive_thread(id, archive)?;
        let index = self.list.selected;
        self.list.reload(&self.store)?;
        if self.list.rows.iter().any(|r| r.summary.id == id) {
            self.list.select_id(id);
        } else {
            self.list.selected = index.min(self.list.rows.len().saturating_sub(1));
        }
        self.focus = Pane::List;
        self.open_selected_thread(false)?;
        let undo = self.key_name(Scope::Browse, &Action::Undo);
        let line = match (changed, archive) {
            (false, true) => format!("{label} was archived already."),
            (false, false) => format!("{label} is not archived."),
            (true, true) => {
                let states = self.key_name(Scope::Browse, &Action::CycleStateFilter);
                let back = self.key_name(Scope::Browse, &Action::Archive);
                let queue = self.key_name(Scope::Browse, &Action::Queue);
                format!(
                    "Archived {label}; its queue items stay in {queue}. {undo} undoes; {states} cycles to the archived threads, where {back} brings it back."
                )
            }
            (true, false) => format!("{label} is back in the thread list: {undo} undoes."),
        };
        self.info(line);
        Ok(changed)
    }

    /// How the status line names thread `id`: its context in quotes, else its id; safe to
    /// print.
    fn thread_label(&self, id: &str) -> anyhow::Result<String> {
        let listed = (self.list.rows.iter())
            .find(|r| r.summary.id == id)
            .map(|r| r.summary.context.clone());
        let open = (self.tree.as_ref())
            .filter(|t| t.outline.id == id)
            .map(|t| t.outline.context.clone());
        let context = match listed.or(open) {
            Some(c) => c,
            None => self.store.thread_outline(id)?.and_then(|o| o.context),
        };
        Ok(match context.filter(|c| !c.trim().is_empty()) {
            Some(c) => format!("“{}”", safe_line(c.trim())),
            None => format!("thread {}", safe_line(id)),
        })
    }
}

/// How the status line names a queue row: `REQUEST A→B: first line`, safe to print.
fn row_label(r: &QueueRow) -> String {
    let text = format!(
        "{} {}→{}: {}",
        r.intent.as_deref().unwrap_or("-"),
        r.from,
        r.to,
        r.first_line
    );
    crate::app::text::truncate(&safe_line(&text), 48)
}

/// Sections as a sentence names them: `to relay`, `to relay and missing parent`.
fn section_names(s: &[Section]) -> String {
    let names: Vec<&str> = s.iter().map(|s| s.title()).collect();
    names.join(" and ")
}
