//! The thread list's rows, a page at a time, by key: the rows after a row, the rows before
//! it, or the last rows of the list. The list is ordered by `(last_activity, id)`, newest
//! first, which is the index `threads_activity`; a page is read off that index from the row
//! it starts at (or from either end), so reaching the end of 650 000 threads costs a page's
//! rows, not a pass over every row before it.

use rusqlite::ToSql;

use super::browse::{LATEST, ThreadRow, filter_condition};
use crate::store::{StateFilter, Store, StoreError, ThreadSummary};

/// Where a row of the list stands in its order: its last activity and its id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ThreadKey {
    /// `threads.last_activity`.
    pub last_activity: String,
    /// `threads.id`, which orders threads of the same activity time.
    pub id: String,
}

impl ThreadKey {
    /// The key of `row`.
    pub(crate) fn of(row: &ThreadRow) -> ThreadKey {
        ThreadKey {
            last_activity: row.summary.last_activity.clone(),
            id: row.summary.id.clone(),
        }
    }
}

/// Which page of the list to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ThreadPage {
    /// From the first row.
    First,
    /// The rows that follow this one (older activity).
    After(ThreadKey),
    /// The rows just before this one (newer activity), in list order.
    Before(ThreadKey),
    /// The last rows of the list, in list order.
    Last,
}

impl ThreadPage {
    /// The condition on `t` that starts the page, and the order the index is read in
    /// (`DESC` is the list's own order; a page before a row or at the end reads it
    /// backwards, from that row or from the end, and is turned round after).
    fn sql(&self) -> (&'static str, &'static str) {
        match self {
            ThreadPage::First => ("1", "DESC"),
            ThreadPage::After(_) => ("(t.last_activity, t.id) < (?6, ?7)", "DESC"),
            ThreadPage::Before(_) => ("(t.last_activity, t.id) > (?6, ?7)", "ASC"),
            ThreadPage::Last => ("1", "ASC"),
        }
    }

    fn key(&self) -> Option<&ThreadKey> {
        match self {
            ThreadPage::After(k) | ThreadPage::Before(k) => Some(k),
            ThreadPage::First | ThreadPage::Last => None,
        }
    }
}

/// The statement reading a page of the list: `condition` filters the threads, `start` is the
/// page's [`ThreadPage::sql`] condition, `order` its direction (the store's tests read its
/// plan).
pub(super) fn page_sql(
    store: &Store,
    condition: &str,
    state: StateFilter,
    start: &str,
    order: &str,
) -> String {
    let settle = store.can_settle();
    // Each marker is read off the ledger's index by thread and state (`LATEST` one seek per
    // state), or a partial one for missing parents: "awaiting since" follows the intent
    // registry (see `protocol::awaiting`).
    format!(
        "SELECT t.id, t.context, t.participants, t.message_count, t.last_activity,
            (SELECT min(d.sent_at) FROM messages d
              WHERE d.thread_id = t.id AND d.ledger_state IS NOT NULL AND d.ledger_state = 'awaiting'),
            t.seen_at IS NULL OR t.last_activity > t.seen_at,
            (SELECT count(*) FROM drafts d WHERE d.thread_id = t.id)
              + (SELECT count(*) FROM messages d INDEXED BY messages_status
                 WHERE d.status IN ('draft', 'awaiting_reply') AND d.status = 'draft'
                   AND d.thread_id = t.id AND {unsettled}),
            (SELECT count(*) FROM messages d
              WHERE d.thread_id = t.id AND d.ledger_state IS NOT NULL AND d.ledger_state = 'to_relay'),
            (SELECT count(*) FROM messages d
              WHERE d.thread_id = t.id AND d.ledger_state IS NOT NULL AND d.ledger_state = 'to_me'),
            (SELECT count(*) FROM messages d INDEXED BY messages_thread_missing
              WHERE d.thread_id = t.id AND d.missing_parent = 1),
            {LATEST}, {archived_at}
         FROM threads t
         WHERE {condition} AND {state} AND {archived} AND {start}
         ORDER BY t.last_activity {order}, t.id {order} LIMIT ?5",
        state = state.condition(settle),
        unsettled = if settle { "d.settled_at IS NULL" } else { "1" },
        archived_at = if settle { "t.archived_at" } else { "NULL" },
        archived = store.archived_condition(state),
    )
}

impl Store {
    /// A page of at most `limit` rows of the thread list (newest activity first) under
    /// `filter` (every word in the thread's context, participants or id, case-insensitive)
    /// and `state`, in list order, wherever `page` says it starts.
    pub(crate) fn thread_page(
        &self,
        filter: &str,
        state: StateFilter,
        page: ThreadPage,
        limit: usize,
    ) -> Result<Vec<ThreadRow>, StoreError> {
        let (words, condition) = filter_condition(filter);
        let word = |i: usize| words.get(i).cloned().unwrap_or_else(|| "%".into());
        let (start, order) = page.sql();
        let sql = page_sql(self, &condition, state, start, order);
        let (w0, w1, w2, w3) = (word(0), word(1), word(2), word(3));
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let mut params: Vec<&dyn ToSql> = vec![&w0, &w1, &w2, &w3, &limit];
        if let Some(key) = page.key() {
            params.push(&key.last_activity);
            params.push(&key.id);
        }
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let rows = stmt.query_map(&params[..], |r| {
            let participants: String = r.get(2)?;
            let awaiting_since: Option<String> = r.get(5)?;
            Ok(ThreadRow {
                summary: ThreadSummary {
                    id: r.get(0)?,
                    context: r.get(1)?,
                    participants: serde_json::from_str(&participants).unwrap_or_default(),
                    message_count: r.get(3)?,
                    last_activity: r.get(4)?,
                    awaiting_reply: awaiting_since.is_some(),
                    awaiting_since,
                    archived_at: r.get(12)?,
                },
                unread: r.get(6)?,
                drafts: r.get::<_, i64>(7)? as usize,
                to_relay: r.get::<_, i64>(8)? as usize,
                to_me: r.get::<_, i64>(9)? as usize,
                missing_parents: r.get::<_, i64>(10)? as usize,
                latest: r.get(11)?,
                signature_alarms: 0,
            })
        })?;
        let mut rows: Vec<ThreadRow> = rows.collect::<Result<_, _>>()?;
        if order == "ASC" {
            rows.reverse();
        }
        // Alarms are few and only signed messages have a verdict: one pass over those,
        // rather than a look into every thread's messages for every row.
        let alarms = self.signature_alarms_by_thread()?;
        for row in &mut rows {
            row.signature_alarms = alarms.get(&row.summary.id).copied().unwrap_or(0);
        }
        Ok(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_support::query_plan;
    use proptest::prelude::*;
    use rusqlite::params;

    /// A store holding `activity.len()` threads, thread `i` with activity time
    /// `activity[i]` (equal times are ordered by id).
    fn store_with(activity: &[u32]) -> Store {
        let store = Store::open_in_memory().unwrap();
        for (i, t) in activity.iter().enumerate() {
            store
                .conn
                .execute(
                    "INSERT INTO threads (id, context, created_at, last_activity)
                     VALUES (?1, ?2, ?3, ?3)",
                    params![
                        format!("T{i:05}"),
                        if i % 3 == 0 { "blue" } else { "red" },
                        format!("2026-01-01T00:{:02}:{:02}Z", t / 60, t % 60)
                    ],
                )
                .unwrap();
        }
        store
    }

    /// Every thread, in list order, by the straightforward query.
    fn all(store: &Store, filter: &str) -> Vec<String> {
        ids(&store.thread_rows(filter, usize::MAX >> 1).unwrap())
    }

    fn ids(rows: &[ThreadRow]) -> Vec<String> {
        rows.iter().map(|r| r.summary.id.clone()).collect()
    }

    #[test]
    fn every_page_is_read_off_the_activity_index_from_where_it_starts() {
        let store = Store::open_in_memory().unwrap();
        let (_, condition) = filter_condition("");
        for page in [
            ThreadPage::First,
            ThreadPage::After(ThreadKey {
                last_activity: "a".into(),
                id: "b".into(),
            }),
            ThreadPage::Before(ThreadKey {
                last_activity: "a".into(),
                id: "b".into(),
            }),
            ThreadPage::Last,
        ] {
            let (start, order) = page.sql();
            let sql = page_sql(&store, &condition, StateFilter::All, start, order);
            let mut params: Vec<&dyn ToSql> = vec![&"", &"", &"", &"", &1];
            if page.key().is_some() {
                params.extend([&"a" as &dyn ToSql, &"b"]);
            }
            let plan = query_plan(&store.conn, &sql, &params[..]);
            let outer = &plan[0];
            assert!(
                outer.contains("INDEX threads_activity"),
                "{page:?}: {plan:#?}"
            );
            if page.key().is_some() {
                // A range of the index, not a scan of it filtered row by row.
                assert!(outer.starts_with("SEARCH t"), "{page:?}: {plan:#?}");
            }
            assert!(
                !plan.iter().any(|l| l.contains("TEMP B-TREE")),
                "no sort of every thread: {page:?}: {plan:#?}"
            );
        }
    }

    #[test]
    fn the_last_page_and_the_pages_before_it_are_the_list_s_end() {
        let activity: Vec<u32> = (0..30).map(|i| (i * 7) % 11).collect();
        let store = store_with(&activity);
        let list = all(&store, "");
        let last = store
            .thread_page("", StateFilter::All, ThreadPage::Last, 4)
            .unwrap();
        assert_eq!(ids(&last), list[26..]);
        let before = store
            .thread_page(
                "",
                StateFilter::All,
                ThreadPage::Before(ThreadKey::of(&last[0])),
                4,
            )
            .unwrap();
        assert_eq!(ids(&before), list[22..26]);
        // Under a filter, the filtered list's end.
        let blue = all(&store, "blue");
        let last = store
            .thread_page("blue", StateFilter::All, ThreadPage::Last, 3)
            .unwrap();
        assert_eq!(ids(&last), blue[blue.len() - 3..]);
    }

    proptest! {
        /// Read forwards page by page from the start, or backwards from the end, the pages
        /// make up the list the straightforward query gives, ties in activity included.
        #[test]
        fn pages_forwards_and_backwards_make_up_the_whole_list(
            activity in proptest::collection::vec(0u32..20, 0..40),
            size in 1usize..7,
        ) {
            let store = store_with(&activity);
            let list = all(&store, "");
            let mut forwards = Vec::new();
            let mut page = ThreadPage::First;
            loop {
                let rows = store.thread_page("", StateFilter::All, page, size).unwrap();
                forwards.extend(ids(&rows));
                match rows.last() {
                    Some(last) if rows.len() == size => page = ThreadPage::After(ThreadKey::of(last)),
                    _ => break,
                }
            }
            prop_assert_eq!(&forwards, &list);
            let mut backwards = Vec::new();
            let mut page = ThreadPage::Last;
            loop {
                let rows = store.thread_page("", StateFilter::All, page, size).unwrap();
                let mut got = ids(&rows);
                got.append(&mut backwards);
                backwards = got;
                match rows.first() {
                    Some(first) if rows.len() == size => page = ThreadPage::Before(ThreadKey::of(first)),
                    _ => break,
                }
            }
            prop_assert_eq!(&backwards, &list);
        }
    }
}
