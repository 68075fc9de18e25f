//! Erasing from the app: `X` on a thread (list) or a message (tree, inspector) says exactly
//! what would go — messages, raw pastes, drafts, and what stays — and erases only when the
//! operator answers `y`. The rules of what goes live in `store::erase`.

use crate::app::popups::popup::Popup;
use crate::app::{Action, App, Pane};
use crate::store::{EraseTarget, Erasure};

/// The question the erase popup asks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EraseConfirm {
    /// What goes when the operator says yes.
    pub target: EraseTarget,
    /// The thread or message, in words safe to print (sanitized by the view).
    pub name: String,
    /// What the erasure would remove.
    pub plan: Erasure,
}

impl App {
    /// The erase confirmation: the erase key again erases for good.
    pub(in crate::app) fn erase_popup_action(&mut self, action: Action) -> anyhow::Result<()> {
        let Some(Popup::Erase(ask)) = self.popup.as_mut() else {
            return Ok(());
        };
        {
            if action == Action::Erase {
                let ask = ask.clone();
                return self.confirm_erase(ask);
            }
        }
        Ok(())
    }

    /// `X`: asks before erasing the selected thread (list focused) or message.
    pub(in crate::app) fn request_erase(&mut self) -> anyhow::Result<()> {
        let (target, name) = match self.focus {
            Pane::List => {
                let Some(row) = self.list.rows.get(self.list.selected) else {
                    self.warn("No thread selected to erase.");
                    return Ok(());
                };
                // A thread without context is named by its id, as `:open` takes it.
                let name = match row.summary.context.as_deref().map(str::trim) {
                    Some(context) if !context.is_empty() => format!("thread “{context}”"),
                    _ => format!("thread {}", crate::app::text::short_id(&row.summary.id)),
                };
                (EraseTarget::Thread(row.summary.id.clone()), name)
            }
            Pane::Tree | Pane::Inspector => {
                let Some(m) = self.selected_message() else {
                    self.warn("No message selected to erase.");
                    return Ok(());
                };
                let headline = crate::app::text::headline(&m.envelope, m.intent.as_deref());
                (
                    EraseTarget::Message(m.id.clone()),
                    format!("message {headline}"),
                )
            }
        };
        let Some(plan) = self.store.erase_plan(&target)? else {
            self.warn("Already gone: it was erased or never stored.");
            return Ok(());
        };
        self.popup = Some(Popup::Erase(EraseConfirm { target, name, plan }));
        Ok(())
    }

    /// `y` in the erase popup: erases, then shows what is left.
    pub(in crate::app) fn confirm_erase(&mut self, ask: EraseConfirm) -> anyhow::Result<()> {
        self.popup = None;
        let open = self.tree.as_ref().map(|t| t.outline.id.clone());
        let parent = self.selected_message().and_then(|m| m.parent.clone());
        let Some(done) = self.store.erase(&ask.target)? else {
            self.warn("Nothing erased: it was already gone.");
            return Ok(());
        };
        self.drafts_changed()?;
        self.current = None;
        match (&ask.target, open) {
            (EraseTarget::Message(_), Some(thread)) if self.store.has_thread(&thread)? => {
                self.reveal(&thread, parent.as_deref())?;
            }
            _ => {
                self.list.selected = self
                    .list
                    .selected
                    .min(self.list.rows.len().saturating_sub(1));
                self.tree = None;
                self.focus = Pane::List;
                self.open_selected_thread(false)?;
            }
        }
        self.refresh_inspector();
        self.info(format!("Erased: {}.", done.describe()));
        Ok(())
    }
}
