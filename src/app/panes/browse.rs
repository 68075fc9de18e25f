//! Actions on the browse screen: moving through threads and messages, folding, the panes,
//! the mouse, and copying envelopes.

use ratatui::crossterm::event::KeyEvent;

use crate::app::panes::layout::{contains, inner_height};
use crate::app::panes::thread_tree::ThreadTree;
use crate::app::popups::popup::{Popup, Prompt, Search};
use crate::app::{Action, App, Pane};

impl App {
    pub(in crate::app) fn browse_action(&mut self, action: Action) -> anyhow::Result<()> {
        self.forget_copy_confirmation(&action);
        match action {
            Action::Quit => self.quit = true,
            Action::Up => self.move_by(-1)?,
            Action::Down => self.move_by(1)?,
            Action::PageUp => self.move_by(-(self.page() as isize))?,
            Action::PageDown => self.move_by(self.page() as isize)?,
            Action::Top => self.move_by(isize::MIN / 2)?,
            Action::Bottom => match self.focus {
                Pane::List => {
                    self.list.go_to_bottom(&self.store)?;
                    self.open_selected_thread(false)?;
                }
                _ => self.move_by(isize::MAX / 2)?,
            },
            Action::Open => match self.focus {
                Pane::List => {
                    self.list.filtering = false;
                    self.open_selected_thread(true)?;
                }
                Pane::Tree => self.focus = Pane::Inspector,
                Pane::Inspector => {}
            },
            Action::Back if self.moving.is_some() => {
                self.moving = None;
                self.info("Not moved.");
            }
            Action::Back => self.back()?,
            Action::NextPane | Action::PrevPane => {
                let order = [Pane::List, Pane::Tree, Pane::Inspector];
                let i = order.iter().position(|p| *p == self.focus).unwrap_or(0);
                let step = if action == Action::NextPane { 1 } else { 2 };
                self.focus = order[(i + step) % 3];
                self.list.filtering = false;
            }
            Action::Collapse | Action::Expand | Action::ToggleBranch | Action::Parent => {
                self.fold(&action)
            }
            Action::Filter => {
                self.focus = Pane::List;
                self.list.filtering = true;
            }
            // Only the open filter takes typed keys (see `App::scope`).
            Action::Input(ev) if self.list.filtering => self.filter_key(ev)?,
            Action::Undo | Action::Redo if self.list.filtering => {
                let list = &mut self.list;
                let (text, at, undo) =
                    (&mut list.filter, &mut list.filter_at, &mut list.filter_undo);
                let stepped = if action == Action::Redo {
                    undo.redo(text, at)
                } else {
                    undo.undo(text, at)
                };
                if stepped {
                    self.list.refilter(&self.store)?;
                    self.open_selected_thread(false)?;
                }
            }
            Action::Paste(text) if self.list.filtering => self.filter_paste(&text)?,
            Action::ToggleHeaders => {
                self.inspector.toggle_headers();
                self.refresh_inspector();
            }
            Action::ToggleRaw => {
                self.inspector.view = self.inspector.view.next();
                self.refresh_inspector();
            }
            Action::NextVersion => self.next_version()?,
            Action::MoveReply => self.move_reply()?,
            Action::Pipe => self.prompt_pipe(false),
            Action::PipeThread => self.prompt_pipe(true),
            Action::Help => self.popup = Some(Popup::help()),
            Action::Search => self.popup = Some(Popup::Search(Search::default())),
            Action::Command => self.popup = Some(Popup::Command(Prompt::default())),
            Action::Drafts => self.open_drafts()?,
            Action::Erase => self.request_erase()?,
            Action::PasteClipboard => self.paste_from_clipboard()?,
            Action::NewEnvelope => self.compose_new()?,
            Action::Reply => self.compose_reply()?,
            Action::Copy => self.copy_selected()?,
            Action::CopyThread => self.copy_thread()?,
            Action::Queue => self.open_queue()?,
            Action::CycleStateFilter => self.cycle_state_filter()?,
            Action::ToggleWatch => self.toggle_watch(),
            Action::RelayNext => self.relay_next()?,
            Action::Archive => self.toggle_archive()?,
            Action::Undo => self.undo_archive()?,
            Action::JumpToArrival => self.jump_to_arrival()?,
            Action::NextToDo => self.next_to_do()?,
            Action::NewConversation => self.start_conversation(),
            Action::Poll => self.open_poll()?,
            Action::SideBySide => self.open_side_by_side()?,
            Action::Read => self.open_reader(),
            Action::ErrorReply => self.pick_error_code(),
            Action::Keys => self.open_keys()?,
            Action::Click(x, y) => self.click(x, y)?,
            Action::Scroll(x, y, dir) => self.scroll_at(x, y, dir)?,
            _ => {}
        }
        Ok(())
    }

    /// A warning about personal data holds for the very next copy only: moving on, or
    /// anything else but `action` being a copy (or time passing), asks again (consent may have
    /// changed meanwhile).
    fn forget_copy_confirmation(&mut self, action: &Action) {
        if !matches!(
            action,
            Action::Copy | Action::CopyThread | Action::Tick | Action::Resize(..)
        ) && self.relay_pii_confirmed.take().is_some()
            && self.status.1.starts_with("Not copied:")
        {
            // The line said the next press copies: no longer so.
            self.info("Copy not confirmed: y asks again.");
        }
    }

    /// Back: out of the filter (cleared) in the list, else to the pane before.
    fn back(&mut self) -> anyhow::Result<()> {
        if self.list.filtering || !self.list.filter.is_empty() && self.focus == Pane::List {
            self.list.filtering = false;
            self.list.filter.clear();
            self.list.refilter(&self.store)?;
            self.open_selected_thread(false)?;
        } else {
            self.focus = match self.focus {
                Pane::Inspector => Pane::Tree,
                _ => Pane::List,
            };
        }
        Ok(())
    }

    /// Folding and climbing the tree (`action` one of Collapse, Expand, ToggleBranch,
    /// Parent), which takes the focus from the list.
    fn fold(&mut self, action: &Action) {
        if let Some(t) = self.tree.as_mut() {
            match action {
                Action::Collapse => t.collapse(),
                Action::Expand => t.expand(),
                Action::ToggleBranch => t.toggle(),
                _ => t.go_to_parent(),
            }
            if self.focus == Pane::List {
                self.focus = Pane::Tree;
            }
            self.after_tree_move();
        }
    }

    /// A key typed into the open filter; a control or alt chord bound to nothing is not text.
    fn filter_key(&mut self, ev: KeyEvent) -> anyhow::Result<()> {
        self.focus = Pane::List;
        let list = &mut self.list;
        let (text, at, undo) = (&mut list.filter, &mut list.filter_at, &mut list.filter_undo);
        if !crate::app::writing::readline::edit_line(text, at, &mut self.kill, undo, &ev) {
            return Ok(());
        }
        self.list.refilter(&self.store)?;
        self.open_selected_thread(false)
    }

    /// A paste into the open filter is text too: its first line (a filter is one line; the
    /// line break a copied id often ends with is not part of it), without control characters.
    fn filter_paste(&mut self, text: &str) -> anyhow::Result<()> {
        self.focus = Pane::List;
        let first = text.lines().next().unwrap_or_default();
        let list = &mut self.list;
        crate::app::writing::readline::insert_line(&mut list.filter, &mut list.filter_at, first);
        self.list.refilter(&self.store)?;
        self.open_selected_thread(false)
    }

    /// The keys popup, with a word on how to add one when there is none.
    fn open_keys(&mut self) -> anyhow::Result<()> {
        let keys = self.store.keys()?;
        if keys.is_empty() {
            self.info("No keys yet: `crosstalk keys add` or a key announcement adds one.");
        }
        self.popup = Some(Popup::Keys { keys, scroll: 0 });
        Ok(())
    }

    /// A click at (`x`, `y`): focuses the pane under it and selects the row clicked (in the
    /// inspector, a click on the folded headers unfolds them).
    fn click(&mut self, x: u16, y: u16) -> anyhow::Result<()> {
        let areas = self.areas();
        if contains(areas.list, x, y) {
            self.focus = Pane::List;
            let row = (y.saturating_sub(areas.list.y + 1)) as usize + self.list.offset;
            if y > areas.list.y && row < self.list.rows.len() {
                self.list.selected = row;
                self.open_selected_thread(false)?;
            }
        } else if contains(areas.tree, x, y) {
            self.focus = Pane::Tree;
            if let Some(t) = self.tree.as_mut() {
                let row = (y.saturating_sub(areas.tree.y + 1)) as usize + t.offset;
                if y > areas.tree.y && row < t.visible.len() {
                    t.selected = row;
                }
            }
            self.after_tree_move();
        } else if contains(areas.inspector, x, y) {
            self.focus = Pane::Inspector;
            let row = (y.saturating_sub(areas.inspector.y + 1)) as usize + self.inspector.scroll;
            let on_fold = y > areas.inspector.y
                && self.inspector.rows.get(row).map(|r| r.kind)
                    == Some(crate::app::panes::inspector::RowKind::Folded);
            if on_fold {
                self.inspector.toggle_headers();
                self.refresh_inspector();
            }
        }
        Ok(())
    }

    /// The wheel turned (`dir`) over (`x`, `y`): the pane under it scrolls, three rows a step.
    fn scroll_at(&mut self, x: u16, y: u16, dir: i8) -> anyhow::Result<()> {
        let areas = self.areas();
        let delta = 3 * dir as isize;
        if contains(areas.inspector, x, y) {
            let h = inner_height(areas.inspector);
            self.inspector.scroll_by(delta, h);
        } else if contains(areas.tree, x, y) {
            if let Some(t) = self.tree.as_mut() {
                t.move_by(delta);
            }
            self.after_tree_move();
        } else if contains(areas.list, x, y) {
            self.list.move_by(delta, &self.store)?;
            self.open_selected_thread(false)?;
        }
        Ok(())
    }

    /// Rows in a page of the focused pane.
    fn page(&self) -> usize {
        let a = self.areas();
        let pane = match self.focus {
            Pane::List => a.list,
            Pane::Tree => a.tree,
            Pane::Inspector => a.inspector,
        };
        inner_height(pane).saturating_sub(1).max(1)
    }

    fn move_by(&mut self, delta: isize) -> anyhow::Result<()> {
        match self.focus {
            Pane::List => {
                self.list.move_by(delta, &self.store)?;
                self.open_selected_thread(false)?;
            }
            Pane::Tree => {
                if let Some(t) = self.tree.as_mut() {
                    t.move_by(delta);
                }
                self.after_tree_move();
            }
            Pane::Inspector => {
                let h = inner_height(self.areas().inspector);
                self.inspector.scroll_by(delta, h);
            }
        }
        Ok(())
    }

    /// Keeps the tree's selection in view and shows it in the inspector.
    pub(in crate::app) fn after_tree_move(&mut self) {
        let h = inner_height(self.areas().tree);
        if let Some(t) = self.tree.as_mut() {
            t.offset = crate::app::panes::thread_list::keep_visible(
                t.selected,
                t.offset,
                h,
                t.visible.len(),
            );
        }
        self.refresh_inspector();
    }

    /// Loads the selected thread into the tree (and focuses it when `focus`). A thread
    /// already open is not reloaded; `mark` records it as seen.
    pub(in crate::app) fn open_selected_thread(&mut self, focus: bool) -> anyhow::Result<()> {
        let h = inner_height(self.areas().list);
        self.list.scroll_into_view(h);
        let Some(id) = self.list.selected_id().map(str::to_string) else {
            self.tree = None;
            self.refresh_inspector();
            return Ok(());
        };
        if self.tree.as_ref().map(|t| t.outline.id.as_str()) != Some(id.as_str()) {
            self.load_thread(&id, None)?;
        }
        if focus {
            self.focus = Pane::Tree;
            self.mark_seen(&id)?;
        }
        Ok(())
    }

    /// Loads thread `id` and selects `message` in it (else its last message).
    pub(in crate::app) fn load_thread(
        &mut self,
        id: &str,
        message: Option<&str>,
    ) -> anyhow::Result<()> {
        match self.store.thread_outline(id)? {
            Some(outline) => {
                let mut t = ThreadTree::with_indent(outline, self.settings.ui.tree_indent);
                let found = message.is_some_and(|m| t.select_id(m));
                if !found {
                    t.selected = t.visible.len().saturating_sub(1);
                }
                self.tree = Some(t);
            }
            None => self.tree = None,
        }
        // Freshly loaded: the selected message is read again too (its status may have moved).
        self.current = None;
        self.after_tree_move();
        Ok(())
    }

    /// Records that the operator looked at thread `id` (its unread marker goes).
    pub(in crate::app) fn mark_seen(&mut self, id: &str) -> anyhow::Result<()> {
        if let Some(row) = self.list.rows.iter_mut().find(|r| r.summary.id == id) {
            if row.unread {
                row.unread = false;
                // A busy database takes the mark on a later tick; the marker is gone now.
                if let Err(e) = self.store.mark_seen(id) {
                    let e = anyhow::Error::from(e);
                    if !crate::app::background::pending::is_busy(&e) {
                        return Err(e);
                    }
                    self.pending_seen.push(id.to_string());
                }
            }
        }
        Ok(())
    }

    /// Shows thread `id` with `message` selected: the list jumps to it (clearing a filter
    /// that hides it) and the tree gets the focus.
    pub(in crate::app) fn reveal(&mut self, id: &str, message: Option<&str>) -> anyhow::Result<()> {
        self.list.reload(&self.store)?;
        if !self.list.rows.iter().any(|r| r.summary.id == id) {
            self.list.filter.clear();
            self.list.refilter(&self.store)?;
        }
        // An archived thread is listed only with the archived threads: shown there, so the
        // list's selection is the thread open in the tree.
        if !self.list.rows.iter().any(|r| r.summary.id == id)
            && self.store.archived_at(id)?.is_some()
        {
            self.list.state = crate::store::StateFilter::Archived;
            self.list.refilter(&self.store)?;
            let back = self.key_name(crate::app::keymap::Scope::Browse, &Action::Archive);
            self.info(format!(
                "This thread is archived (shown with the archived threads): {back} brings it back."
            ));
        }
        self.list.select_id(id);
        self.load_thread(id, message)?;
        let h = inner_height(self.areas().list);
        self.list.scroll_into_view(h);
        self.focus = Pane::Tree;
        self.mark_seen(id)?;
        Ok(())
    }
}
