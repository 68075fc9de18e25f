//! The thread list: rows newest activity first, a filter typed by the operator, and the
//! selection. Rows are fetched a page at a time, so opening a database of thousands of
//! threads costs one small query; more are fetched as the selection nears the end.

use crate::store::{StateFilter, Store, StoreError, ThreadRow};

/// Rows fetched at a time.
pub const PAGE: usize = 200;

/// State of the thread list.
#[derive(Debug, Default)]
pub struct ThreadList {
    /// Rows fetched so far.
    pub rows: Vec<ThreadRow>,
    /// Whether more rows may exist beyond those fetched.
    pub more: bool,
    /// Index of the selected row.
    pub selected: usize,
    /// First row shown.
    pub offset: usize,
    /// The filter text.
    pub filter: String,
    /// Whether typed characters go to the filter.
    pub filtering: bool,
    /// Only threads with a message in this delivery state (`s` cycles it).
    pub state: StateFilter,
    /// With a state filter: how many threads it lists and how many there are ("3 of 12"),
    /// counted whole, however many rows are fetched.
    pub counts: Option<(usize, usize)>,
}

impl ThreadList {
    /// Fetches the first page again (after an import, a filter change), keeping the
    /// selected thread selected when it is still there.
    pub fn reload(&mut self, store: &Store) -> Result<(), StoreError> {
        let keep = self.selected_id().map(str::to_string);
        let want = (self.rows.len().max(PAGE)).max(self.selected + 1);
        self.rows = store.thread_rows_in(&self.filter, self.state, want)?;
        self.more = self.rows.len() == want;
        self.selected = keep
            .and_then(|id| self.rows.iter().position(|r| r.summary.id == id))
            .unwrap_or(0);
        self.count(store)
    }

    /// Fetches the first page for a new filter and selects its first row.
    pub fn refilter(&mut self, store: &Store) -> Result<(), StoreError> {
        self.rows = store.thread_rows_in(&self.filter, self.state, PAGE)?;
        self.more = self.rows.len() == PAGE;
        self.selected = 0;
        self.offset = 0;
        self.count(store)
    }

    /// Counts what the state filter shows, when one is on (the counts are read with the rows,
    /// so the title never disagrees with them).
    fn count(&mut self, store: &Store) -> Result<(), StoreError> {
        self.counts = match self.state {
            StateFilter::All => None,
            _ => Some(store.thread_counts(&self.filter, self.state)?),
        };
        Ok(())
    }

    /// The selected thread's id.
    pub fn selected_id(&self) -> Option<&str> {
        self.rows.get(self.selected).map(|r| r.summary.id.as_str())
    }

    /// Moves the selection by `delta` rows (clamped), fetching more rows when it nears the
    /// end of those fetched.
    pub fn move_by(&mut self, delta: isize, store: &Store) -> Result<(), StoreError> {
        let target = self.selected.saturating_add_signed(delta);
        if self.more && target + PAGE / 4 >= self.rows.len() {
            let want = (target + 1).max(self.rows.len()) + PAGE;
            self.rows = store.thread_rows_in(&self.filter, self.state, want)?;
            self.more = self.rows.len() == want;
        }
        self.selected = target.min(self.rows.len().saturating_sub(1));
        Ok(())
    }

    /// Selects the last thread (fetching them all: the operator asked for the end).
    pub fn to_bottom(&mut self, store: &Store) -> Result<(), StoreError> {
        if self.more {
            self.rows = store.thread_rows_in(&self.filter, self.state, usize::MAX >> 1)?;
            self.more = false;
        }
        self.selected = self.rows.len().saturating_sub(1);
        Ok(())
    }

    /// Fetches more rows until thread `id` is among them, the list ends, or `most` rows are
    /// fetched.
    pub fn fetch_until(&mut self, id: &str, most: usize, store: &Store) -> Result<(), StoreError> {
        while self.more && self.rows.len() < most && !self.rows.iter().any(|r| r.summary.id == id) {
            let want = self.rows.len() + PAGE;
            self.rows = store.thread_rows_in(&self.filter, self.state, want)?;
            self.more = self.rows.len() == want;
        }
        Ok(())
    }

    /// Selects the thread `id` when it is among the rows.
    pub fn select_id(&mut self, id: &str) {
        if let Some(i) = self.rows.iter().position(|r| r.summary.id == id) {
            self.selected = i;
        }
    }

    /// Keeps the selection inside a window of `height` rows.
    pub fn scroll_into_view(&mut self, height: usize) {
        self.offset = keep_visible(self.selected, self.offset, height, self.rows.len());
    }
}

/// The first visible row that keeps `selected` visible with a margin of two rows, moving the
/// window as little as possible (so a list scrolls line by line, not page by page).
pub fn keep_visible(selected: usize, offset: usize, height: usize, len: usize) -> usize {
    if height == 0 {
        return selected;
    }
    let margin = 2.min(height.saturating_sub(1) / 2);
    let mut offset = offset.min(len.saturating_sub(1));
    if selected < offset + margin {
        offset = selected.saturating_sub(margin);
    } else if selected + margin >= offset + height {
        offset = selected + margin + 1 - height;
    }
    offset.min(len.saturating_sub(height))
}

#[cfg(test)]
mod tests {
    use super::keep_visible;

    #[test]
    fn window_moves_line_by_line_with_a_margin() {
        assert_eq!(keep_visible(0, 0, 10, 100), 0);
        assert_eq!(keep_visible(7, 0, 10, 100), 0);
        assert_eq!(keep_visible(8, 0, 10, 100), 1);
        assert_eq!(keep_visible(99, 0, 10, 100), 90);
        assert_eq!(keep_visible(91, 90, 10, 100), 89);
        assert_eq!(keep_visible(3, 0, 10, 4), 0);
        assert_eq!(keep_visible(5, 0, 0, 10), 5);
    }
}
