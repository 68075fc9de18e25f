//! Moving a reply the desk placed: a v1.0 envelope names no parent, so the desk files it under
//! the message before it in its session (see `v10_place`). That is a guess, and a conversation
//! of three can defeat it (a reply pasted late, a window that answered an older message). The
//! operator then moves it to the message it answers, and what depends on its place follows:
//! its thread (with everything below it), its text's `parent:`, and the waits of the message
//! it left and the one it joined.
//!
//! Only a place the desk inferred can be moved: a parent the envelope names itself is its
//! sender's word (and, signed, what its signature covers).

use rusqlite::{OptionalExtension, params};

use crate::store::texts::{self, HeaderColumns};
use crate::store::{Store, StoreError};

/// Why a reply was not moved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MoveRefused {
    /// Its envelope names its parent itself.
    #[error("its envelope names its parent itself; only a place the desk inferred can be moved")]
    Named,
    /// The new parent is the message, or answers it (the tree would loop).
    #[error("a message cannot answer itself or one of its own replies")]
    Loop,
    /// It answers that message already.
    #[error("it answers that message already")]
    Already,
}

impl Store {
    /// Whether message `id`'s parent was inferred by the desk (and may be moved).
    pub fn parent_inferred(&self, id: &str) -> Result<bool, StoreError> {
        if !self.can_settle() {
            return Ok(false);
        }
        Ok(self
            .conn
            .prepare_cached("SELECT parent_inferred FROM messages WHERE id = ?1")?
            .query_row([&*crate::protocol::id::key(id)], |r| r.get(0))
            .optional()?
            .unwrap_or(false))
    }

    /// Moves message `id`, whose parent the desk inferred, to answer `parent`: into the new
    /// parent's thread with everything below it, its text's `parent:` and the ledger's waits
    /// following. Returns why not when it may not be moved.
    pub fn move_reply(
        &mut self,
        id: &str,
        parent: &str,
    ) -> Result<Result<(), MoveRefused>, StoreError> {
        let id = crate::protocol::id::key(id).into_owned();
        let parent = crate::protocol::id::key(parent).into_owned();
        let Some(m) = self.message(&id)? else {
            return Err(StoreError::NoMessage(id));
        };
        let Some(target) = self.message(&parent)? else {
            return Err(StoreError::NoMessage(parent));
        };
        if !self.parent_inferred(&id)? {
            return Ok(Err(MoveRefused::Named));
        }
        if m.parent.as_deref() == Some(parent.as_str()) {
            return Ok(Err(MoveRefused::Already));
        }
        if parent == id || super::cycle::closes_cycle(&self.conn, &id, &parent)? {
            return Ok(Err(MoveRefused::Loop));
        }
        self.write(|store| {
            let tx = store.begin_write()?;
            let old_parent = m.parent.clone();
            // Its text as it will read: the new parent (and thread) filled in.
            let mut env = m.envelope.clone();
            env.set_header("parent", parent.as_str());
            env.set_header("thread", target.thread.as_str());
            let canonical = crate::protocol::render(&env);
            let edit = texts::raw_edit(&m.raw, &canonical);
            let headers = moved_headers(&tx, &id, &m, &target.thread, &parent)?;
            tx.prepare_cached(
                "UPDATE messages SET parent_id = ?2, thread_id = ?9, headers = coalesce(?3, headers),
                    canonical = ?4, raw = ?5, raw_prefix = ?6, raw_suffix = ?7,
                    missing_parent = 0, updated_at = ?8
                 WHERE id = ?1",
            )?
            .execute(params![
                id,
                parent,
                headers,
                texts::kept_canonical(&env, &canonical),
                edit.text,
                edit.prefix,
                edit.suffix,
                crate::store::now(),
                target.thread
            ])?;
            if target.thread != m.thread {
                // Everything below it joins the new parent's thread with it.
                move_below(&tx, &id, &m.thread, &target.thread)?;
            }
            // The message it left may wait again, the one it joined may wait no more.
            for p in old_parent.iter().chain([&parent]) {
                let seq: Option<i64> = tx
                    .query_row("SELECT seq FROM messages WHERE id = ?1", [p], |r| r.get(0))
                    .optional()?;
                if let Some(seq) = seq {
                    crate::store::delivery::recompute_awaiting(&tx, seq)?;
                }
            }
            tx.commit()?;
            Ok(Ok(()))
        })
    }
}

/// The stored headers of message `m` (id `id`) as they are to read once it answers `parent`
/// in thread `thread`; `None` when they cannot be read (the column is then kept as it is).
/// The stored headers leave out what columns hold: read with the columns as they are,
/// written with the new thread and parent.
fn moved_headers(
    tx: &rusqlite::Connection,
    id: &str,
    m: &crate::store::StoredMessage,
    thread: &str,
    parent: &str,
) -> Result<Option<String>, StoreError> {
    type Held = (
        String,
        Option<String>,
        Option<String>,
        Option<String>,
        Option<String>,
    );
    let (stored, user, session, context, intent): Held = tx.query_row(
        "SELECT headers, user, session, context, intent_raw FROM messages WHERE id = ?1",
        [id],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
    )?;
    let read = HeaderColumns {
        message: Some(id),
        thread: Some(&m.thread),
        parent: m.parent.as_deref(),
        user: user.as_deref(),
        session: session.as_deref(),
        context: context.as_deref(),
        intent: intent.as_deref(),
    };
    Ok(texts::parse_headers(&stored, &read).ok().map(|mut h| {
        for header in &mut h {
            match header.key.as_str() {
                "thread" => header.value = thread.to_string(),
                "parent" => header.value = parent.to_string(),
                _ => {}
            }
        }
        if !h.iter().any(|x| x.key == "parent") {
            let at = h.iter().position(|x| x.key == "message").unwrap_or(h.len());
            h.insert(
                at,
                crate::protocol::Header {
                    key: "parent".into(),
                    value: parent.to_string(),
                },
            );
        }
        texts::encode_headers(
            &h,
            &HeaderColumns {
                thread: Some(thread),
                parent: Some(parent),
                ..read
            },
        )
    }))
}

/// Everything below message `id` moves with it from thread `from` to thread `to`: the
/// threads' counts follow, and `from` goes when nothing is left in it.
fn move_below(tx: &rusqlite::Connection, id: &str, from: &str, to: &str) -> Result<(), StoreError> {
    let moving: Vec<String> = tx
        .prepare_cached(
            "WITH RECURSIVE sub(id) AS (
                SELECT id FROM messages WHERE parent_id = ?1
                UNION
                SELECT r.id FROM messages r JOIN sub ON r.parent_id = sub.id
             )
             SELECT id FROM sub",
        )?
        .query_map([id], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    for moved in &moving {
        texts::rehome(tx, moved, to)?;
    }
    for thread in [from, to] {
        tx.execute(
            "UPDATE threads SET message_count =
                 (SELECT count(*) FROM messages WHERE thread_id = ?1)
             WHERE id = ?1",
            [thread],
        )?;
    }
    tx.execute(
        "DELETE FROM threads WHERE id = ?1 AND message_count = 0",
        [from],
    )?;
    Ok(())
}
