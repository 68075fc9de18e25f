//! The thread list: rows newest activity first, a filter typed by the operator, and the
//! selection. Rows are fetched a page at a time, so opening a database of thousands of
//! threads costs one small query; more are fetched as the selection nears the end.
//!
//! The rows held are a window of the list: either its start and what the operator scrolled
//! down to, or (after `G`) its end and what they scrolled up to. Each page is read from the
//! row next to it (see `store::ThreadPage`), never by counting or re-reading the rows before
//! it, so the end of a list of hundreds of thousands of threads is one page away.

use crate::store::{StateFilter, Store, StoreError, ThreadKey, ThreadPage, ThreadRow};

/// Rows fetched at a time.
pub const PAGE: usize = 200;

/// State of the thread list.
#[derive(Debug, Default)]
pub struct ThreadList {
    /// Rows fetched so far.
    pub rows: Vec<ThreadRow>,
    /// Whether more rows may exist beyond those fetched.
    pub more: bool,
    /// Whether rows exist before the first fetched: the window holds the list's end (after
    /// `G`), and `rows[0]` is not the list's first thread. Then `more` is false.
    pub before: bool,
    /// Index of the selected row.
    pub selected: usize,
    /// First row shown.
    pub offset: usize,
    /// The filter text.
    pub filter: String,
    /// Where the cursor is in the filter, in characters (`None`: at its end).
    pub filter_at: Option<usize>,
    /// The filter's undo and redo, by word.
    pub filter_undo: crate::app::writing::readline::LineUndo,
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
    /// A window at the list's end is fetched again at the end, as many rows as it held.
    pub(crate) fn reload(&mut self, store: &Store) -> Result<(), StoreError> {
        let keep = self.selected_id().map(str::to_string);
        let want = (self.rows.len().max(PAGE)).max(self.selected + 1);
        if self.before {
            self.rows = store.thread_page(&self.filter, self.state, ThreadPage::Last, want)?;
            self.before = self.rows.len() == want;
            self.more = false;
        } else {
            self.rows = store.thread_rows_in(&self.filter, self.state, want)?;
            self.more = self.rows.len() == want;
        }
        let at_end = self.before.then(|| self.rows.len().saturating_sub(1));
        self.selected = keep
            .and_then(|id| self.rows.iter().position(|r| r.summary.id == id))
            .or(at_end)
            .unwrap_or(0);
        self.count(store)
    }

    /// Fetches the first page for a new filter and selects its first row.
    pub(crate) fn refilter(&mut self, store: &Store) -> Result<(), StoreError> {
        self.first_page(store)?;
        self.count(store)
    }

    /// Fetches the list's first page and selects its first row.
    fn first_page(&mut self, store: &Store) -> Result<(), StoreError> {
        self.rows = store.thread_rows_in(&self.filter, self.state, PAGE)?;
        self.more = self.rows.len() == PAGE;
        self.before = false;
        self.selected = 0;
        self.offset = 0;
        Ok(())
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

    /// Moves the selection by `delta` rows (clamped), fetching the next rows when it nears
    /// the end of those fetched, or the rows before them when it nears their start in a
    /// window at the list's end. Past the start of such a window by more than a page (`g`),
    /// the list's first page is fetched again.
    pub(crate) fn move_by(&mut self, delta: isize, store: &Store) -> Result<(), StoreError> {
        let mut target = (self.selected as isize).saturating_add(delta);
        if self.before && target < -(PAGE as isize) {
            return self.first_page(store);
        }
        while self.before && target < (PAGE / 4) as isize {
            let n = self.fetch_before(store)?;
            if n == 0 {
                break;
            }
            target += n as isize;
        }
        let target = usize::try_from(target).unwrap_or(0);
        if self.more && target >= self.rows.len() + PAGE {
            // Further than a page past what is held: the end is what was asked for.
            return self.go_to_bottom(store);
        }
        while self.more && target + PAGE / 4 >= self.rows.len() {
            self.fetch_after(store, PAGE)?;
        }
        self.selected = target.min(self.rows.len().saturating_sub(1));
        Ok(())
    }

    /// Fetches the page before the first row held, keeping the same row selected and the
    /// same rows shown; returns how many rows it added.
    fn fetch_before(&mut self, store: &Store) -> Result<usize, StoreError> {
        let Some(first) = self.rows.first().map(ThreadKey::of) else {
            self.before = false;
            return Ok(0);
        };
        let mut page =
            store.thread_page(&self.filter, self.state, ThreadPage::Before(first), PAGE)?;
        self.before = page.len() == PAGE;
        let n = page.len();
        page.append(&mut self.rows);
        self.rows = page;
        self.selected += n;
        self.offset += n;
        Ok(n)
    }

    /// Fetches up to `want` rows after the last row held.
    fn fetch_after(&mut self, store: &Store, want: usize) -> Result<(), StoreError> {
        let page = match self.rows.last().map(ThreadKey::of) {
            Some(last) => ThreadPage::After(last),
            None => ThreadPage::First,
        };
        let rows = store.thread_page(&self.filter, self.state, page, want)?;
        self.more = rows.len() == want;
        self.rows.extend(rows);
        Ok(())
    }

    /// Selects the last thread. Only the list's last page is fetched (read backwards off
    /// the index from the end): the rows before it are fetched as the operator scrolls up.
    pub(crate) fn go_to_bottom(&mut self, store: &Store) -> Result<(), StoreError> {
        if self.more {
            self.rows = store.thread_page(&self.filter, self.state, ThreadPage::Last, PAGE)?;
            self.before = self.rows.len() == PAGE;
            self.more = false;
            self.offset = 0;
        }
        self.selected = self.rows.len().saturating_sub(1);
        Ok(())
    }

    /// Fetches more rows until thread `id` is among them, the list ends, or `most` rows are
    /// fetched.
    pub(crate) fn fetch_until(
        &mut self,
        id: &str,
        most: usize,
        store: &Store,
    ) -> Result<(), StoreError> {
        while self.more && self.rows.len() < most && !self.rows.iter().any(|r| r.summary.id == id) {
            self.fetch_after(store, PAGE)?;
        }
        Ok(())
    }

    /// Selects the thread `id` when it is among the rows.
    pub(crate) fn select_id(&mut self, id: &str) {
        if let Some(i) = self.rows.iter().position(|r| r.summary.id == id) {
            self.selected = i;
        }
    }

    /// Keeps the selection inside a window of `height` rows.
    pub(crate) fn scroll_into_view(&mut self, height: usize) {
        self.offset = keep_visible(self.selected, self.offset, height, self.rows.len());
    }
}

/// The first visible row that keeps `selected` visible with a margin of two rows, moving the
/// window as little as possible (so a list scrolls line by line, not page by page).
pub(crate) fn keep_visible(selected: usize, offset: usize, height: usize, len: usize) -> usize {
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
