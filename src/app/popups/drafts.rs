//! The drafts list (`D`, `:drafts`): the envelopes being composed and those filed but never
//! copied; Enter resumes a draft or shows a filed envelope in its thread, discard (twice)
//! deletes a draft.

use crate::app::panes::layout::{drafts_area, popup_page};
use crate::app::panes::list_move::{is_move, select};
use crate::app::popups::popup::Popup;
use crate::app::{Action, App};

impl App {
    /// Opens the drafts list.
    pub(in crate::app) fn open_drafts(&mut self) -> anyhow::Result<()> {
        let drafts = self.store.drafts()?;
        let unsent = self.store.unsent_messages(usize::MAX)?;
        if drafts.is_empty() && unsent.is_empty() {
            self.info("No drafts.");
            return Ok(());
        }
        self.popup = Some(Popup::Drafts {
            drafts,
            unsent,
            selected: 0,
            confirm: None,
        });
        Ok(())
    }

    /// The drafts list: Enter resumes a draft or shows a filed envelope, discard (twice) deletes a draft.
    pub(in crate::app) fn drafts_action(&mut self, action: Action) -> anyhow::Result<()> {
        let Some(Popup::Drafts {
            drafts,
            unsent,
            selected,
            confirm,
        }) = self.popup.as_mut()
        else {
            return Ok(());
        };
        match action {
            a if is_move(&a) => {
                let (len, page) = (
                    drafts.len() + unsent.len(),
                    popup_page(drafts_area(self.size)),
                );
                *selected = select(*selected, len, &a, page).unwrap_or(*selected);
            }
            Action::Open => {
                if let Some(d) = drafts.get(*selected).cloned() {
                    self.popup = None;
                    return self.resume_draft(&d);
                }
                // An envelope filed but not copied: shown in its thread, where `y`
                // copies it.
                if let Some(m) = unsent.get(*selected - drafts.len()).cloned() {
                    self.popup = None;
                    self.list.state = crate::store::StateFilter::All;
                    self.reveal(&m.thread, Some(&m.message))?;
                    self.focus = crate::app::Pane::Tree;
                }
            }
            Action::Discard => {
                let Some(d) = drafts.get(*selected) else {
                    self.warn(
                            "This envelope is filed in its thread, not being composed: Enter shows it there, where y copies it and X erases it; x in the queue (Q) dismisses it.",
                        );
                    return Ok(());
                };
                if confirm.as_deref() == Some(d.id.as_str()) {
                    let id = d.id.clone();
                    // Deleted first: a busy database leaves the list as it is.
                    self.store.delete_draft(&id)?;
                    drafts.remove(*selected);
                    *selected = (*selected).min((drafts.len() + unsent.len()).saturating_sub(1));
                    *confirm = None;
                    let empty = drafts.is_empty() && unsent.is_empty();
                    if empty {
                        self.popup = None;
                    }
                    self.drafts_changed()?;
                    self.info("Draft discarded.");
                } else {
                    *confirm = Some(d.id.clone());
                    self.warn("Press discard again to delete this draft for good.");
                }
            }
            _ => {}
        }
        Ok(())
    }
}
