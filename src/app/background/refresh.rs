//! Other processes write to the same database (`crosstalk import` in another terminal,
//! `crosstalk watch`, a second app). On each tick the app asks the store whether anyone else
//! committed ([`Store::data_version`](crate::store::Store::data_version), which costs no
//! disk read when nothing changed) and, when so, reads the list and the open thread again
//! without moving the operator: the same thread and message stay selected, folds and scroll
//! positions are kept.

use std::collections::HashSet;

use crate::app::App;
use crate::app::panes::thread_tree::ThreadTree;
use crate::store::ThreadOutline;

impl App {
    /// How often the runtime sends [`Action::Tick`](crate::app::Action::Tick): every second, more
    /// often while something waits for the database. What the clipboard watch finds does
    /// not wait for a tick: the runtime asks for it between ticks ([`App::watch_has_news`]).
    pub(crate) fn tick_interval(&self) -> std::time::Duration {
        if self.has_pending() || !self.watch_waiting.is_empty() || self.delivering() {
            std::time::Duration::from_millis(250)
        } else {
            std::time::Duration::from_secs(1)
        }
    }

    /// On the tick: reads the screen again when another process changed the database.
    /// A busy or failing read is left for the next tick (the version is only taken once the
    /// screen was read with it).
    pub(in crate::app) fn notice_other_writers(&mut self) {
        let version = match self.store.data_version() {
            Ok(v) => v,
            Err(e) => {
                tracing::debug!("data_version: {e}");
                return;
            }
        };
        match self.data_version {
            None => self.data_version = Some(version),
            Some(seen) if seen == version => {}
            Some(_) => match self.reread_screen() {
                Ok(()) => self.data_version = Some(version),
                Err(e) => tracing::debug!("screen not read again yet: {e:#}"),
            },
        }
    }

    /// Reads the thread list, the open thread and the draft count again, keeping every
    /// selection where it was.
    pub(in crate::app) fn reread_screen(&mut self) -> anyhow::Result<()> {
        let before = self.list.selected_id().map(str::to_string);
        self.list.reload(&self.store)?;
        self.drafts = crate::app::draft_count(&self.store)?;
        let after = self.list.selected_id().map(str::to_string);
        if before != after {
            // The selected thread is gone (another process removed it): show the one the
            // selection fell on.
            return self.open_selected_thread(false);
        }
        let Some(tree) = self.tree.as_ref() else {
            return self.open_selected_thread(false);
        };
        let id = tree.outline.id.clone();
        match self.store.thread_outline(&id)? {
            Some(outline) => {
                let fresh = carry_over(tree, outline);
                self.tree = Some(fresh);
            }
            None => self.tree = None,
        }
        // The selected message's status may have moved (relayed, answered): read it again,
        // keeping the inspector's scroll.
        let scroll = self.inspector.scroll;
        self.current = None;
        self.inspector.built_for = None;
        self.after_tree_move();
        self.inspector.scroll = scroll.min(self.inspector.rows.len().saturating_sub(1));
        Ok(())
    }
}

/// A tree of `outline` that keeps what the operator did in `old`: the same message
/// selected (when it is still there), the same branches folded, the same first row shown.
pub(crate) fn carry_over(old: &ThreadTree, outline: ThreadOutline) -> ThreadTree {
    let selected = old.selected_index().map(|i| old.outline.rows[i].id.clone());
    let folded: HashSet<&str> = old
        .outline
        .rows
        .iter()
        .zip(&old.folded)
        .filter(|(_, f)| **f)
        .map(|(r, _)| r.id.as_str())
        .collect();
    let mut t = ThreadTree::with_indent(outline, old.indent);
    if !folded.is_empty() {
        for (i, r) in t.outline.rows.iter().enumerate() {
            t.folded[i] = folded.contains(r.id.as_str()) && t.replies[i] > 0;
        }
        t.refresh_visible();
    }
    let found = selected.as_deref().is_some_and(|id| t.select_id(id));
    if !found {
        t.selected = old.selected.min(t.visible.len().saturating_sub(1));
    }
    t.offset = old.offset;
    t
}
