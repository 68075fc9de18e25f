//! Erasure: removing a thread, a message or unused raw pastes for good — the operator's
//! answer to "delete what you hold about me".
//!
//! A message's text lives in three places: its row, the full-text index, and the raw paste
//! it arrived in (which may hold other envelopes too). Erasing a message removes all three:
//! the pastes it came from are deleted whole, and the other messages of those pastes keep
//! their own text (row and canonical form) but lose the link to a raw copy. Deleted rows are
//! overwritten with zeros (`PRAGMA secure_delete`), the full-text index is merged so no
//! segment still lists the erased words, and the write-ahead log is truncated, so the words
//! do not linger in free pages or old page images.
//!
//! Replies to an erased message stay (they are other people's messages); they keep naming
//! their parent and are shown without it. Drafts answering an erased message stay too (the
//! operator's own words); erasing a thread removes its drafts.

use rusqlite::{Transaction, params};

use crate::store::{Store, StoreError};

/// What an erasure cannot reach, said wherever one is asked for or reported: the copies the
/// operator made before it. A backup (`crosstalk backup`) is a whole database of its own and
/// an export (`crosstalk export`, a mail or file written out) a file of its own; neither is
/// changed by erasing here.
pub(crate) const EARLIER_COPIES: &str = "Backups and exports made before this still hold the erased text: delete or replace those copies too";

/// What an erasure removes (or, from [`Store::erase_plan`], would remove).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Erasure {
    /// Messages removed.
    pub messages: usize,
    /// Threads removed (a thread goes when its last message goes).
    pub threads: usize,
    /// Raw pastes removed.
    pub pastes: usize,
    /// Messages of other threads or replies that arrived in the same pastes: they stay, but
    /// their raw copy goes with the paste.
    pub sharing_pastes: usize,
    /// Drafts removed.
    pub drafts: usize,
    /// Replies to the erased messages that stay, shown without their parent.
    pub orphaned_replies: usize,
}

impl Erasure {
    /// "3 messages, 2 raw pastes (1 other message keeps its text but loses its raw copy), …"
    pub(crate) fn describe(&self) -> String {
        let e = self;
        let n = |count: usize, one: &str, many: &str| {
            format!("{count} {}", if count == 1 { one } else { many })
        };
        let mut parts = vec![
            n(e.messages, "message", "messages"),
            n(e.pastes, "raw paste", "raw pastes"),
        ];
        if e.threads > 0 {
            parts.push(n(e.threads, "thread", "threads"));
        }
        if e.drafts > 0 {
            parts.push(n(e.drafts, "draft", "drafts"));
        }
        let mut text = parts.join(", ");
        if e.sharing_pastes > 0 {
            text.push_str(&format!(
                "; {} arrived in the same pastes and keep their text but lose their raw copy",
                n(e.sharing_pastes, "other message", "other messages")
            ));
        }
        if e.orphaned_replies > 0 {
            text.push_str(&if e.orphaned_replies == 1 {
                "; 1 reply stays, shown without its parent".to_string()
            } else {
                format!(
                    "; {} replies stay, shown without their parent",
                    e.orphaned_replies
                )
            });
        }
        text
    }
}

/// What to erase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EraseTarget {
    /// A thread with every message, its drafts and its raw pastes.
    Thread(String),
    /// One message and its raw pastes.
    Message(String),
    /// Raw pastes no stored message came from (cancelled previews, pastes without
    /// envelopes, pastes whose messages were all deleted). A paste in which envelopes are
    /// found stays even so: its envelopes were rejected, and it is their only copy (erase it
    /// by its id, [`EraseTarget::Paste`]).
    UnusedPastes,
    /// One raw paste, whatever it holds; the messages that came from it keep their text.
    Paste(i64),
}

impl EraseTarget {
    /// The target with its id as stored (`protocol::id::key`): an id typed in another case
    /// names the same thread or message.
    fn keyed(&self) -> EraseTarget {
        let key = |id: &str| crate::protocol::id::key(id).into_owned();
        match self {
            EraseTarget::Thread(id) => EraseTarget::Thread(key(id)),
            EraseTarget::Message(id) => EraseTarget::Message(key(id)),
            other => other.clone(),
        }
    }
}

impl Store {
    /// What erasing `target` would remove, without removing anything; `None` when the
    /// thread or message does not exist.
    pub fn erase_plan(&self, target: &EraseTarget) -> Result<Option<Erasure>, StoreError> {
        let tx = self.conn.unchecked_transaction()?;
        let plan = plan(&tx, &target.keyed())?;
        // Read only: the transaction is rolled back when dropped.
        Ok(plan)
    }

    /// Erases `target` (see the module's documentation for what goes and what stays).
    /// Returns what was removed, or `None` when the thread or message does not exist.
    pub fn erase(&mut self, target: &EraseTarget) -> Result<Option<Erasure>, StoreError> {
        self.write(|store| {
            store
                .conn
                .pragma_update(None, "secure_delete", "ON")
                .map_err(StoreError::from)?;
            let result = store.erase_securely(&target.keyed());
            // Back to what everything else this connection writes uses (see `Store::setup`).
            let _ = store.conn.pragma_update(None, "secure_delete", "FAST");
            result
        })
    }

    fn erase_securely(&mut self, target: &EraseTarget) -> Result<Option<Erasure>, StoreError> {
        let tx = self.begin_write()?;
        let Some(plan) = plan(&tx, target)? else {
            return Ok(None);
        };
        apply(&tx, target)?;
        tx.commit()?;
        // The conflicting versions searched in memory go too, whatever was erased: the next
        // search reads the versions left.
        self.forget_version_search();
        // The full-text index lets the erased messages go (search results leave them out
        // already: a hit must join a stored message); merging rewrites its segments without
        // their words (the old segments' pages are zeroed as they are freed), and the
        // checkpoint drops the old page images from the logs. All of it only tidies up, so
        // another process holding a lock is not an error: the words go at its next catching
        // up, merge and checkpoint.
        self.catch_up_search();
        let (s, index) = self.searched();
        let _ = index.execute_batch(&format!(
            "INSERT INTO {s}.messages_fts(messages_fts) VALUES ('optimize')"
        ));
        let _ = scrub_free_pages(&self.conn, "main");
        let _ = scrub_free_pages(index, s);
        for conn in [&self.conn, index] {
            let _ = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
        }
        Ok(Some(plan))
    }
}

/// The most bytes of zeros one row takes when free pages are scrubbed: well under SQLite's
/// limit on a value's length (a billion bytes).
const SCRUB_ROW: i64 = 256 << 20;

/// Overwrites the file's free pages with zeros. Pages freed before the erasure (by the
/// full-text index's merges, or while nothing zeroed them) may still hold words erased now.
/// SQLite gives free pages out first: a table of zeros as large as they are takes them all,
/// and dropping it (with `secure_delete` on) frees them again, zeroed. Tidying only, like the
/// merge before it.
fn scrub_free_pages(conn: &rusqlite::Connection, schema: &str) -> Result<(), StoreError> {
    let free: i64 = conn.query_row(&format!("PRAGMA {schema}.freelist_count"), [], |r| r.get(0))?;
    if free == 0 {
        return Ok(());
    }
    let page: i64 = conn.query_row(&format!("PRAGMA {schema}.page_size"), [], |r| r.get(0))?;
    // Deferred: its first statement locks only the file it writes (the index's connection
    // has the database attached too).
    let tx = rusqlite::Transaction::new_unchecked(conn, rusqlite::TransactionBehavior::Deferred)?;
    tx.execute_batch(&format!("CREATE TABLE {schema}.erase_scrub (zeros BLOB)"))?;
    let mut left = free * page;
    while left > 0 {
        let n = left.min(SCRUB_ROW);
        tx.execute(
            &format!("INSERT INTO {schema}.erase_scrub VALUES (zeroblob(?1))"),
            [n],
        )?;
        left -= n;
    }
    tx.execute_batch(&format!("DROP TABLE {schema}.erase_scrub"))?;
    tx.commit()?;
    Ok(())
}

/// The messages `target` erases.
fn messages_of(tx: &Transaction, target: &EraseTarget) -> Result<Vec<String>, StoreError> {
    let (sql, key) = match target {
        EraseTarget::Thread(id) => ("SELECT id FROM messages WHERE thread_id = ?1", id),
        EraseTarget::Message(id) => ("SELECT id FROM messages WHERE id = ?1", id),
        EraseTarget::UnusedPastes | EraseTarget::Paste(_) => return Ok(Vec::new()),
    };
    let mut stmt = tx.prepare(sql)?;
    let ids = stmt.query_map([key], |r| r.get(0))?;
    Ok(ids.collect::<Result<_, _>>()?)
}

/// Creates the temporary tables `erase_messages` and `erase_pastes` holding what `target`
/// removes.
fn mark(tx: &Transaction, target: &EraseTarget) -> Result<(), StoreError> {
    tx.execute_batch(
        "CREATE TEMP TABLE IF NOT EXISTS erase_messages (id TEXT PRIMARY KEY);
         CREATE TEMP TABLE IF NOT EXISTS erase_pastes (id INTEGER PRIMARY KEY);
         DELETE FROM erase_messages; DELETE FROM erase_pastes;",
    )?;
    for id in messages_of(tx, target)? {
        tx.execute(
            "INSERT OR IGNORE INTO erase_messages (id) VALUES (?1)",
            [id],
        )?;
    }
    match target {
        EraseTarget::UnusedPastes => {
            tx.execute(
                "INSERT INTO erase_pastes (id) SELECT p.id FROM pastes p
                 WHERE NOT EXISTS (SELECT 1 FROM messages m WHERE m.paste_id = p.id)
                 AND NOT EXISTS (SELECT 1 FROM message_versions v WHERE v.paste_id = p.id)",
                [],
            )?;
            // A paste whose envelopes were rejected (found with errors, none stored) is all
            // that is left of them, so it is not unused. (One whose envelopes were all
            // duplicates, or a preview that was cancelled, is.)
            let ids: Vec<i64> = tx
                .prepare("SELECT id FROM erase_pastes")?
                .query_map([], |r| r.get(0))?
                .collect::<Result<_, _>>()?;
            for id in ids {
                let text = crate::store::paste_text::text_of(tx, id)?;
                let opts = crate::protocol::Options::default();
                let found = crate::protocol::extract(&text, &opts).envelopes;
                if found.iter().any(crate::protocol::Parsed::has_errors) {
                    tx.execute("DELETE FROM erase_pastes WHERE id = ?1", [id])?;
                }
            }
            0
        }
        EraseTarget::Paste(id) => {
            tx.execute("INSERT OR IGNORE INTO erase_pastes (id) VALUES (?1)", [id])?
        }
        _ => tx.execute(
            "INSERT OR IGNORE INTO erase_pastes (id) SELECT DISTINCT m.paste_id FROM messages m
             JOIN erase_messages e ON e.id = m.id WHERE m.paste_id IS NOT NULL
             UNION SELECT v.paste_id FROM message_versions v
             JOIN erase_messages e ON e.id = v.message_id WHERE v.paste_id IS NOT NULL",
            [],
        )?,
    };
    Ok(())
}

fn count(tx: &Transaction, sql: &str, key: Option<&str>) -> Result<usize, StoreError> {
    let n: i64 = match key {
        Some(k) => tx.query_row(sql, [k], |r| r.get(0))?,
        None => tx.query_row(sql, [], |r| r.get(0))?,
    };
    Ok(n as usize)
}

fn plan(tx: &Transaction, target: &EraseTarget) -> Result<Option<Erasure>, StoreError> {
    let exists = match target {
        EraseTarget::Thread(id) => {
            count(tx, "SELECT count(*) FROM threads WHERE id = ?1", Some(id))? > 0
        }
        EraseTarget::Message(id) => {
            count(tx, "SELECT count(*) FROM messages WHERE id = ?1", Some(id))? > 0
        }
        EraseTarget::UnusedPastes => true,
        EraseTarget::Paste(id) => {
            tx.query_row("SELECT count(*) FROM pastes WHERE id = ?1", [id], |r| {
                r.get::<_, i64>(0)
            })? > 0
        }
    };
    if !exists {
        return Ok(None);
    }
    mark(tx, target)?;
    let messages = count(tx, "SELECT count(*) FROM erase_messages", None)?;
    let pastes = count(tx, "SELECT count(*) FROM erase_pastes", None)?;
    let sharing_pastes = count(
        tx,
        "SELECT count(*) FROM messages m JOIN erase_pastes p ON p.id = m.paste_id
         WHERE m.id NOT IN (SELECT id FROM erase_messages)",
        None,
    )?;
    let orphaned_replies = count(
        tx,
        "SELECT count(*) FROM messages m JOIN erase_messages e ON e.id = m.parent_id
         WHERE m.id NOT IN (SELECT id FROM erase_messages)",
        None,
    )?;
    let (threads, drafts) = match target {
        EraseTarget::Thread(id) => (
            1,
            count(
                tx,
                "SELECT count(*) FROM drafts WHERE thread_id = ?1",
                Some(id),
            )?,
        ),
        EraseTarget::Message(id) => {
            let thread: String =
                tx.query_row("SELECT thread_id FROM messages WHERE id = ?1", [id], |r| {
                    r.get(0)
                })?;
            let others = count(
                tx,
                "SELECT count(*) FROM messages WHERE thread_id = ?1",
                Some(&thread),
            )?;
            let drafts = count(
                tx,
                "SELECT count(*) FROM drafts WHERE thread_id = ?1",
                Some(&thread),
            )?;
            // The thread goes with its last message, unless a draft still belongs to it.
            (usize::from(others == 1 && drafts == 0), 0)
        }
        EraseTarget::UnusedPastes | EraseTarget::Paste(_) => (0, 0),
    };
    Ok(Some(Erasure {
        messages,
        threads,
        pastes,
        sharing_pastes,
        drafts,
        orphaned_replies,
    }))
}

/// Removes what [`mark`] marked (it ran in the same transaction, from [`plan`]).
fn apply(tx: &Transaction, target: &EraseTarget) -> Result<(), StoreError> {
    let thread_of_message: Option<String> = match target {
        EraseTarget::Message(id) => Some(tx.query_row(
            "SELECT thread_id FROM messages WHERE id = ?1",
            [id],
            |r| r.get(0),
        )?),
        _ => None,
    };
    tx.execute_batch(
        "UPDATE messages SET paste_id = NULL
            WHERE paste_id IN (SELECT id FROM erase_pastes)
            AND id NOT IN (SELECT id FROM erase_messages);
         DELETE FROM message_versions WHERE message_id IN (SELECT id FROM erase_messages);
         DELETE FROM id_aliases WHERE kind = 'message' AND id IN (SELECT id FROM erase_messages);
         DELETE FROM messages WHERE id IN (SELECT id FROM erase_messages);
         DELETE FROM paste_pieces WHERE paste_id IN (SELECT id FROM erase_pastes);
         DELETE FROM pastes WHERE id IN (SELECT id FROM erase_pastes);",
    )?;
    match target {
        EraseTarget::Thread(id) => {
            tx.execute("DELETE FROM drafts WHERE thread_id = ?1", [id])?;
            tx.execute(
                "DELETE FROM id_aliases WHERE kind = 'thread' AND id = ?1",
                [id],
            )?;
            tx.execute("DELETE FROM threads WHERE id = ?1", [id])?;
        }
        EraseTarget::Message(_) => {
            if let Some(thread) = thread_of_message {
                recount(tx, &thread)?;
            }
        }
        EraseTarget::UnusedPastes | EraseTarget::Paste(_) => {}
    }
    Ok(())
}

/// Brings a thread's count, participants and last activity back in line with the messages
/// it still has; removes it when none and no draft is left.
pub(in crate::store) fn recount(tx: &Transaction, thread: &str) -> Result<(), StoreError> {
    let left = count(
        tx,
        "SELECT count(*) FROM messages WHERE thread_id = ?1",
        Some(thread),
    )?;
    let drafts = count(
        tx,
        "SELECT count(*) FROM drafts WHERE thread_id = ?1",
        Some(thread),
    )?;
    if left == 0 && drafts == 0 {
        tx.execute(
            "DELETE FROM id_aliases WHERE kind = 'thread' AND id = ?1",
            [thread],
        )?;
        tx.execute("DELETE FROM threads WHERE id = ?1", [thread])?;
        return Ok(());
    }
    let mut participants: Vec<String> = Vec::new();
    let mut stmt =
        tx.prepare("SELECT sender, recipient FROM messages WHERE thread_id = ?1 ORDER BY seq")?;
    let rows = stmt.query_map([thread], |r| {
        Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
    })?;
    for row in rows {
        let (from, to) = row?;
        for p in [from, to] {
            if !participants.contains(&p) {
                participants.push(p);
            }
        }
    }
    tx.execute(
        "UPDATE threads SET message_count = ?2, participants = ?3,
            last_activity = coalesce(
                (SELECT max(received_at) FROM messages WHERE thread_id = ?1), last_activity)
         WHERE id = ?1",
        params![
            thread,
            left as i64,
            serde_json::to_string(&participants).unwrap_or_else(|_| "[]".into())
        ],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pages freed with their text (a table dropped while nothing zeroed them) hold zeros
    /// once scrubbed, and the database is whole.
    #[test]
    fn free_pages_are_scrubbed_to_zeros() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("scrub.db");
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(
            "PRAGMA secure_delete = OFF;
             CREATE TABLE kept (t TEXT);
             INSERT INTO kept VALUES ('stays');
             CREATE TABLE gone (t TEXT);",
        )
        .unwrap();
        for i in 0..2_000 {
            conn.execute(
                "INSERT INTO gone VALUES (?1)",
                [format!("Marmaladeword{i} ").repeat(20)],
            )
            .unwrap();
        }
        conn.execute_batch("DROP TABLE gone").unwrap();
        let free: i64 = conn
            .query_row("PRAGMA freelist_count", [], |r| r.get(0))
            .unwrap();
        assert!(free > 10, "{free}");
        let holds = || {
            let bytes = std::fs::read(&path).unwrap();
            bytes.windows(13).any(|w| w == b"Marmaladeword")
        };
        assert!(holds(), "the dropped text is in the free pages before");
        conn.pragma_update(None, "secure_delete", "ON").unwrap();
        scrub_free_pages(&conn, "main").unwrap();
        assert!(!holds(), "the dropped text is gone after");
        let ok: String = conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(ok, "ok");
        let kept: String = conn
            .query_row("SELECT t FROM kept", [], |r| r.get(0))
            .unwrap();
        assert_eq!(kept, "stays");
        let table: i64 = conn
            .query_row(
                "SELECT count(*) FROM sqlite_schema WHERE name = 'erase_scrub'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(table, 0);
    }
}
