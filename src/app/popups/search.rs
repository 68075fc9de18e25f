//! The search popup: the query searched as it is typed, the hits, and opening one.

use crate::app::popups::popup::Popup;
use crate::app::{Action, App};

/// The search results asked for at a time.
pub(in crate::app) const SEARCH_LIMIT: usize = 200;

impl App {
    /// The search popup's keys: the query searched as it is typed, Enter opens a hit.
    pub(in crate::app) fn search_action(&mut self, action: Action) -> anyhow::Result<()> {
        let Some(Popup::Search(search)) = self.popup.as_mut() else {
            return Ok(());
        };
        match action {
            Action::Input(_) | Action::Paste(_) | Action::Undo | Action::Redo => {
                let changed = match action {
                    Action::Undo | Action::Redo => search.prompt.step(action == Action::Redo),
                    Action::Input(ev) => search.prompt.edit(&ev, &mut self.kill),
                    Action::Paste(s) => {
                        search.prompt.insert(&s);
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
                    self.focus = crate::app::Pane::Inspector;
                    // A conflicting version found: that text on screen.
                    if let Some(n) = hit.version {
                        self.show_found_version(&hit.message, n)?;
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }
}
