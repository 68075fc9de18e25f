//! What the operator's screens ask of the store beyond the CLI's queries: thread rows with
//! unread markers and a filter, "seen" marks, copies that start waiting for a reply, and
//! drafts saved as they are typed.

use rusqlite::{OptionalExtension, params};

use crate::protocol::Envelope;
use crate::store::{Store, StoreError, ThreadSummary, now};

/// One row of the thread list.
#[derive(Debug, Clone)]
pub struct ThreadRow {
    /// What `threads` reports.
    pub summary: ThreadSummary,
    /// Activity since the operator last opened the thread.
    pub unread: bool,
    /// Drafts being composed in this thread.
    pub drafts: usize,
    /// Messages received for someone else and not relayed yet.
    pub to_relay: usize,
    /// Messages addressed to the operator and not answered yet.
    pub to_me: usize,
    /// Messages whose parent was never received (missed relays).
    pub missing_parents: usize,
    /// When the thread's newest message arrived or was sent (see `Delivery::sent_at`).
    pub latest: Option<String>,
    /// Signatures that failed or whose key changed: the alarms the operator must not miss.
    pub signature_alarms: usize,
}

/// An envelope being composed.
#[derive(Debug, Clone, PartialEq)]
pub struct Draft {
    /// The message id it will be sent with.
    pub id: String,
    /// Its thread.
    pub thread: String,
    /// The message it answers.
    pub parent: Option<String>,
    /// The envelope the fields render to.
    pub envelope: String,
    /// The composer's fields exactly as typed (JSON owned by the app).
    pub form: String,
    /// When it was last saved.
    pub updated_at: String,
}

/// The latest message time in thread `t`: the largest of the latest per state, each the last
/// entry of its part of the index of messages by (thread, ledger state, time), so a long thread costs
/// four seeks rather than a pass over its rows.
pub(crate) const LATEST: &str = "(SELECT max(s) FROM (
    SELECT max(sent_at) AS s FROM messages WHERE thread_id = t.id AND ledger_state IS NULL
    UNION ALL SELECT max(sent_at) FROM messages WHERE thread_id = t.id AND ledger_state = 'to_relay'
    UNION ALL SELECT max(sent_at) FROM messages WHERE thread_id = t.id AND ledger_state = 'to_me'
    UNION ALL SELECT max(sent_at) FROM messages WHERE thread_id = t.id AND ledger_state = 'awaiting'))";

impl Store {
    /// Threads newest activity first, at most `limit`; with a non-empty `filter`, only those
    /// whose context, participants or id contain every word of it (case-insensitive).
    pub fn thread_rows(&self, filter: &str, limit: usize) -> Result<Vec<ThreadRow>, StoreError> {
        self.thread_rows_in(filter, crate::store::StateFilter::All, limit)
    }

    /// [`Store::thread_rows`], only threads with a message in the delivery state `state`.
    pub fn thread_rows_in(
        &self,
        filter: &str,
        state: crate::store::StateFilter,
        limit: usize,
    ) -> Result<Vec<ThreadRow>, StoreError> {
        self.thread_page(filter, state, crate::store::ThreadPage::First, limit)
    }

    /// How many threads [`Store::thread_rows_in`] lists for `filter` and `state` (all of them,
    /// however many it is asked for), and how many threads there are: the state filter's
    /// "3 of 12".
    pub fn thread_counts(
        &self,
        filter: &str,
        state: crate::store::StateFilter,
    ) -> Result<(usize, usize), StoreError> {
        let (words, condition) = filter_condition(filter);
        let word = |i: usize| words.get(i).cloned().unwrap_or_else(|| "%".into());
        let sql = format!(
            "SELECT (SELECT count(*) FROM threads t WHERE {condition} AND {state} AND {archived}),
                    (SELECT count(*) FROM threads)",
            state = state.condition(self.can_settle()),
            archived = self.archived_condition(state),
        );
        let (shown, all): (i64, i64) = self
            .conn
            .prepare_cached(&sql)?
            .query_row(params![word(0), word(1), word(2), word(3)], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })?;
        Ok((shown as usize, all as usize))
    }

    /// The condition on thread `t` that it is shown under `state`: archived threads only
    /// under [`StateFilter::Archived`](crate::store::StateFilter::Archived), the others elsewhere.
    pub(super) fn archived_condition(&self, state: crate::store::StateFilter) -> &'static str {
        match (state, self.can_settle()) {
            (_, false) => "1",
            (crate::store::StateFilter::Archived, true) => "t.archived_at IS NOT NULL",
            (_, true) => "t.archived_at IS NULL",
        }
    }

    /// Caps SQLite's page cache at `kib` KiB. Imports want a large one (see `Store::open`);
    /// the app, which reads a screenful at a time, keeps its memory small with a smaller one.
    pub(crate) fn limit_cache(&self, kib: u32) -> Result<(), StoreError> {
        self.conn
            .pragma_update(None, "cache_size", -i64::from(kib))?;
        Ok(())
    }

    /// A new message or thread id (ULID, increasing within this process).
    pub fn new_id(&self) -> String {
        self.ids.next_id()
    }

    /// Whether a thread with this id is stored.
    pub fn has_thread(&self, id: &str) -> Result<bool, StoreError> {
        Ok(self
            .conn
            .prepare_cached("SELECT 1 FROM threads WHERE id = ?1")?
            .query_row([id], |_| Ok(()))
            .optional()?
            .is_some())
    }

    /// Records that the operator has seen everything in `thread` so far.
    pub fn mark_seen(&mut self, thread: &str) -> Result<(), StoreError> {
        self.write(|store| {
            let tx = store.begin_write()?;
            tx.execute(
                "UPDATE threads SET seen_at = last_activity WHERE id = ?1",
                [thread],
            )?;
            Ok(tx.commit()?)
        })
    }

    /// Records that a composed message was copied to be carried to its recipient: from now
    /// on it waits for a reply (until an imported envelope names it as parent). Received
    /// messages and messages already answered keep their status. Returns whether it changed.
    pub fn mark_copied(&mut self, message: &str) -> Result<bool, StoreError> {
        self.write(|store| {
            let tx = store.begin_write()?;
            // Sent now: its time is when it left the desk, not when it was filed.
            let n = tx.execute(
                "UPDATE messages SET status = 'awaiting_reply', updated_at = ?2, sent_at = ?2
                 WHERE id = ?1 AND direction = 'composed' AND status = 'draft'",
                params![message, now()],
            )?;
            if n > 0 {
                // It awaits what its intent asks for (an ACK copied out awaits nothing).
                let seq: i64 =
                    tx.query_row("SELECT seq FROM messages WHERE id = ?1", [message], |r| {
                        r.get(0)
                    })?;
                crate::store::delivery::recompute_awaiting(&tx, seq)?;
            }
            tx.commit()?;
            Ok(n > 0)
        })
    }

    /// Saves (creates or replaces) a draft; returns the time it was saved.
    pub fn save_draft(
        &mut self,
        env: &Envelope,
        envelope_text: &str,
        form: &str,
    ) -> Result<String, StoreError> {
        let row = DraftRow::of(env)?;
        self.write(|store| {
            let tx = store.begin_write()?;
            let at = row.upsert(&tx, envelope_text, form)?;
            tx.commit()?;
            Ok(at)
        })
    }

    /// Saves a draft that this window last saved at `last` (`None`: never), unless another
    /// window changed it since or filed its message id: then nothing is written, and the
    /// caller keeps its text under a new id, so neither window's text is lost and no two
    /// envelopes go out under one id. A draft that is gone (discarded or erased elsewhere) is
    /// saved again.
    pub(crate) fn save_draft_checked(
        &mut self,
        env: &Envelope,
        envelope_text: &str,
        form: &str,
        last: Option<&str>,
    ) -> Result<DraftSave, StoreError> {
        let row = DraftRow::of(env)?;
        self.write(|store| {
            let tx = store.begin_write()?;
            let filed =
                (tx.prepare_cached("SELECT 1 FROM messages WHERE id = ?1")?).exists([&row.id])?;
            if filed {
                return Ok(DraftSave::Taken(DraftTaken::Filed));
            }
            let saved: Option<String> = tx
                .prepare_cached("SELECT updated_at FROM drafts WHERE id = ?1")?
                .query_row([&row.id], |r| r.get(0))
                .optional()?;
            if saved.as_ref().is_some_and(|at| last != Some(at.as_str())) {
                return Ok(DraftSave::Taken(DraftTaken::Changed));
            }
            let at = row.upsert(&tx, envelope_text, form)?;
            tx.commit()?;
            Ok(match (saved, last) {
                (None, Some(_)) => DraftSave::Restored(at),
                _ => DraftSave::Saved(at),
            })
        })
    }

    /// Every draft, most recently saved first.
    pub fn drafts(&self) -> Result<Vec<Draft>, StoreError> {
        self.drafts_answering(None)
    }

    /// The drafts answering `parent`, most recently saved first.
    pub fn drafts_for(&self, parent: &str) -> Result<Vec<Draft>, StoreError> {
        self.drafts_answering(Some(parent))
    }

    fn drafts_answering(&self, parent: Option<&str>) -> Result<Vec<Draft>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT id, thread_id, parent_id, envelope, form, updated_at FROM drafts
             WHERE ?1 IS NULL OR parent_id = ?1 ORDER BY updated_at DESC, id DESC",
        )?;
        let rows = stmt.query_map([parent], |r| {
            Ok(Draft {
                id: r.get(0)?,
                thread: r.get(1)?,
                parent: r.get(2)?,
                envelope: r.get(3)?,
                form: r.get(4)?,
                updated_at: r.get(5)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Deletes a draft (after it was sent, or when the operator discards it).
    pub fn delete_draft(&mut self, id: &str) -> Result<(), StoreError> {
        self.write(|store| {
            let tx = store.begin_write()?;
            tx.execute(
                "DELETE FROM drafts WHERE id = ?1",
                [crate::protocol::id::key(id)],
            )?;
            Ok(tx.commit()?)
        })
    }

    /// Turns a draft into a stored message (status `draft` until [`Store::mark_copied`]
    /// records that it was copied) and drops the draft row.
    pub fn file_composed(&mut self, env: &Envelope) -> Result<(), StoreError> {
        self.store_composed(env, "draft")?;
        if let Some(id) = env.message_key() {
            let id = &*id;
            self.delete_draft(id)?;
            // Signed with the operator's key ([signing]): marked like any signed message.
            if env
                .sig
                .as_deref()
                .is_some_and(|s| !s.eq_ignore_ascii_case("none"))
            {
                self.judge_message(id)?;
            }
        }
        if let Some(thread) = env.thread_key() {
            self.mark_seen(&thread)?;
        }
        Ok(())
    }
}

/// What [`Store::save_draft_checked`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DraftSave {
    /// Saved, at this time.
    Saved(String),
    /// Saved again, at this time: another window had discarded or erased it (with its
    /// thread) since this one last saved it.
    Restored(String),
    /// Not saved: the id is another window's now.
    Taken(DraftTaken),
}

/// Why a draft's id is no longer this window's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DraftTaken {
    /// Another window saved the draft since this one last did.
    Changed,
    /// A message with the draft's id was filed (copied from another window).
    Filed,
}

/// A draft's ids, as stored.
struct DraftRow {
    id: String,
    thread: String,
    parent: Option<String>,
}

impl DraftRow {
    fn of(env: &Envelope) -> Result<DraftRow, StoreError> {
        let (Some(id), Some(thread)) = (env.message_key(), env.thread_key()) else {
            return Err(StoreError::Damaged {
                id: env.message().unwrap_or("?").to_string(),
                why: "a draft needs `thread` and `message` ids".into(),
            });
        };
        Ok(DraftRow {
            id: id.into_owned(),
            thread: thread.into_owned(),
            parent: env.parent_key().map(|p| p.into_owned()),
        })
    }

    /// Creates or replaces the draft; returns the time it was saved.
    fn upsert(
        &self,
        tx: &rusqlite::Transaction,
        text: &str,
        form: &str,
    ) -> Result<String, StoreError> {
        let time = now();
        tx.prepare_cached(
            "INSERT INTO drafts (id, thread_id, parent_id, envelope, form, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT(id) DO UPDATE SET thread_id = ?2, parent_id = ?3, envelope = ?4,
                form = ?5, updated_at = ?6",
        )?
        .execute(params![self.id, self.thread, self.parent, text, form, time])?;
        Ok(time)
    }
}

/// Per thread, how many of its messages have a bad signature or one by a changed key.
const SIGNATURE_ALARMS: &str = "SELECT m.thread_id, count(*)
    FROM signatures s CROSS JOIN messages m ON m.seq = s.seq
    WHERE s.state IN ('bad', 'changed') GROUP BY m.thread_id";

impl Store {
    /// Per thread, how many of its messages have a bad signature or one by a changed key.
    pub(super) fn signature_alarms_by_thread(
        &self,
    ) -> Result<std::collections::HashMap<String, usize>, StoreError> {
        // CROSS JOIN keeps signatures the outer loop: left to itself SQLite scanned every
        // message by thread (to group without sorting) and looked each one up.
        let mut stmt = self.conn.prepare_cached(SIGNATURE_ALARMS)?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as usize)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

/// The words of a thread filter as LIKE patterns (up to four), and the SQL condition on
/// thread `t` that matches them as `?1` to `?4`. The filter is typed a key at a time, so a
/// fixed statement shape keeps it in the prepared-statement cache; without words the
/// condition is always true and the rows come straight off the activity index.
pub(super) fn filter_condition(filter: &str) -> (Vec<String>, String) {
    let words: Vec<String> = filter
        .split_whitespace()
        .take(4)
        .map(|w| {
            let mut pattern = String::from("%");
            for c in w.chars() {
                if matches!(c, '\\' | '%' | '_') {
                    pattern.push('\\');
                }
                pattern.push(c);
            }
            pattern.push('%');
            pattern
        })
        .collect();
    let haystack = "(coalesce(t.context, '') || ' ' || t.participants || ' ' || t.id)";
    let condition = if words.is_empty() {
        "?1 = ?2 AND ?3 = ?4".to_string()
    } else {
        (1..=4)
            .map(|i| format!("{haystack} LIKE ?{i} ESCAPE '\\'"))
            .collect::<Vec<_>>()
            .join(" AND ")
    };
    (words, condition)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_support::query_plan;

    #[test]
    fn signature_alarms_read_the_signatures_not_every_message() {
        let store = Store::open_in_memory().unwrap();
        let plan = query_plan(&store.conn, SIGNATURE_ALARMS, []);
        assert_eq!(plan[0], "SCAN s", "{plan:#?}");
        assert!(plan[1].contains("INTEGER PRIMARY KEY"), "{plan:#?}");
    }

    #[test]
    fn the_thread_lists_markers_are_read_off_the_ledgers_index_by_thread() {
        let store = Store::open_in_memory().unwrap();
        let sql = format!(
            "SELECT {LATEST},
                (SELECT count(*) FROM messages d
                  WHERE d.thread_id = t.id AND d.ledger_state IS NOT NULL AND d.ledger_state = 'to_relay'),
                (SELECT min(d.sent_at) FROM messages d
                  WHERE d.thread_id = t.id AND d.ledger_state IS NOT NULL AND d.ledger_state = 'awaiting'),
                (SELECT count(*) FROM messages d INDEXED BY messages_thread_missing
                  WHERE d.thread_id = t.id AND d.missing_parent = 1)
             FROM threads t"
        );
        let plan = query_plan(&store.conn, &sql, []);
        // Every count and date is read off the index alone, never the message rows.
        let ledger: Vec<&String> = plan.iter().filter(|l| l.contains("messages")).collect();
        assert_eq!(ledger.len(), 7, "{plan:#?}");
        for line in &ledger[..6] {
            assert!(
                line.contains("COVERING INDEX messages_thread (thread_id=? AND ledger_state=?)"),
                "{plan:#?}"
            );
        }
        assert!(
            ledger[6].contains("COVERING INDEX messages_thread_missing (thread_id=?)"),
            "{plan:#?}"
        );
    }
}
