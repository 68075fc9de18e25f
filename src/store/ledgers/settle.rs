//! What the operator settles by hand: a queue item done or dismissed (undone again), and a
//! thread archived, as mail clients archive a conversation.
//!
//! The ledger infers most of what is done (a relay from the answer it drew, a wait from the
//! replies or a CLOSE); what it cannot see (a message carried by other means, a question the
//! operator answered in person) the operator settles. A settled message is in no section of
//! the queue (`schema::ledger_state`) until the settling is undone. An archived thread leaves
//! the thread list until something new arrives in it, or the operator brings it back.

use rusqlite::params;
use serde::Serialize;

use crate::store::{Store, StoreError, now};

/// How the operator settled a queue item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Settled {
    /// Done by other means (carried, answered, or its answer got) than the desk saw.
    Done,
    /// Needs nothing more: not to be relayed, answered or chased.
    Dismissed,
    /// Written by the desk as a record (a poll's E-TIMEOUT): in its thread, needing no
    /// sending, so never among the drafts.
    Recorded,
}

impl Settled {
    /// As stored in `settled_how`, and as the CLI names it.
    pub fn as_str(self) -> &'static str {
        match self {
            Settled::Done => "done",
            Settled::Dismissed => "dismissed",
            Settled::Recorded => "recorded",
        }
    }

    /// The stored value read back.
    pub fn parse(s: &str) -> Option<Settled> {
        match s {
            "done" => Some(Settled::Done),
            "dismissed" => Some(Settled::Dismissed),
            "recorded" => Some(Settled::Recorded),
            _ => None,
        }
    }
}

impl Store {
    /// Settles message `id` by hand: it leaves the queue's sections. Returns whether it was
    /// unsettled (a second settling changes nothing, so its time and kind stay the first).
    pub fn settle(&mut self, id: &str, how: Settled) -> Result<bool, StoreError> {
        let id = crate::protocol::id::key(id).into_owned();
        self.write(|store| {
            let tx = store.begin_write()?;
            let n = tx.execute(
                "UPDATE messages SET settled_at = ?2, settled_how = ?3
                 WHERE id = ?1 AND settled_at IS NULL",
                params![id, now(), how.as_str()],
            )?;
            if n == 0 && !exists(&tx, &id)? {
                return Err(StoreError::NoMessage(id.clone()));
            }
            tx.commit()?;
            Ok(n > 0)
        })
    }

    /// Undoes the settling of message `id`: it is back wherever the ledger puts it. Returns
    /// whether it was settled.
    pub fn unsettle(&mut self, id: &str) -> Result<bool, StoreError> {
        let id = crate::protocol::id::key(id).into_owned();
        self.write(|store| {
            let tx = store.begin_write()?;
            let n = tx.execute(
                "UPDATE messages SET settled_at = NULL, settled_how = NULL
                 WHERE id = ?1 AND settled_at IS NOT NULL",
                [&id],
            )?;
            if n == 0 && !exists(&tx, &id)? {
                return Err(StoreError::NoMessage(id.clone()));
            }
            tx.commit()?;
            Ok(n > 0)
        })
    }

    /// Archives thread `id` (`archived`), or brings it back. Returns whether it changed;
    /// [`StoreError::NoThread`] when there is no such thread.
    pub fn archive_thread(&mut self, id: &str, archived: bool) -> Result<bool, StoreError> {
        let id = crate::protocol::id::key(id).into_owned();
        self.write(|store| {
            let tx = store.begin_write()?;
            let n = if archived {
                tx.execute(
                    "UPDATE threads SET archived_at = ?2 WHERE id = ?1 AND archived_at IS NULL",
                    params![id, now()],
                )?
            } else {
                tx.execute(
                    "UPDATE threads SET archived_at = NULL WHERE id = ?1 AND archived_at IS NOT NULL",
                    [&id],
                )?
            };
            let known = (tx.prepare_cached("SELECT 1 FROM threads WHERE id = ?1")?).exists([&id])?;
            if !known {
                return Err(StoreError::NoThread(id.clone()));
            }
            tx.commit()?;
            Ok(n > 0)
        })
    }

    /// When thread `id` was archived, if it is.
    pub fn archived_at(&self, id: &str) -> Result<Option<String>, StoreError> {
        if !self.can_settle() {
            return Ok(None);
        }
        use rusqlite::OptionalExtension;
        Ok(self
            .conn
            .prepare_cached("SELECT archived_at FROM threads WHERE id = ?1")?
            .query_row([id], |r| r.get(0))
            .optional()?
            .flatten())
    }
}

/// Whether message `id` (as ids are stored) exists.
fn exists(tx: &rusqlite::Transaction<'_>, id: &str) -> Result<bool, StoreError> {
    Ok((tx.prepare_cached("SELECT 1 FROM messages WHERE id = ?1")?).exists([id])?)
}
