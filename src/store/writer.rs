//! The writing half of an import: threads each prepared envelope and stores it, in the
//! import's transaction.
//!
//! What the writer must know about the stored history it keeps in memory for the transaction
//! where that saves a statement per envelope: the messages waiting for their reply (few; read
//! once), and the parents named by the messages this import stored. No other writer can change
//! the database meanwhile (the transaction is `BEGIN IMMEDIATE`), so these stay true.

use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};

use rusqlite::{OptionalExtension, Transaction, params};
use sha2::{Digest, Sha256};

use super::StoreError;
use super::import::{ImportItem, Outcome, hex};
use super::prepare::{Prepared, fill};
use crate::protocol::{self, Intent};

/// A message id as the in-memory sets keep it: a 64-bit hash, a tenth of the memory of the id
/// and no allocation. The sets only ever decide whether a statement may be skipped, so two
/// ids sharing a hash cost one statement that finds nothing, never a wrong answer.
fn id_key(id: &str) -> u64 {
    let mut h = std::hash::DefaultHasher::new();
    id.hash(&mut h);
    h.finish()
}

/// Per-thread changes gathered during one import, written once at its end.
struct ThreadAcc {
    context: Option<String>,
    participants: Vec<String>,
}

/// The state of one import transaction.
pub(super) struct Run<'t, 'c> {
    tx: &'t Transaction<'c>,
    ids: &'t protocol::IdGenerator,
    paste_id: i64,
    now: String,
    threads: HashMap<String, ThreadAcc>,
    pub items: Vec<ImportItem>,
    /// How often each content digest has been seen in this input.
    repeats: HashMap<String, u32>,
    /// Whether messages were stored before this import began.
    had_messages: bool,
    /// When none were: the ids this import stored (as [`id_key`]s). A message id not in
    /// here is then not stored at all, and its look-up is skipped. (Digests need no such set:
    /// those of one import differ by construction.)
    stored_ids: Option<HashSet<u64>>,
    /// The messages waiting for their reply, so that only a reply to one of them updates it.
    awaiting: HashSet<String>,
    /// Every parent named by a message this import stored: only a message in this set (or
    /// named by a message stored before the import) can have replies waiting to be re-homed.
    named_parents: HashSet<u64>,
}

impl<'t, 'c> Run<'t, 'c> {
    /// Starts writing into `tx`; `had_messages` says whether the database held any.
    pub fn new(
        tx: &'t Transaction<'c>,
        ids: &'t protocol::IdGenerator,
        paste_id: i64,
        now: String,
        had_messages: bool,
    ) -> Result<Self, StoreError> {
        // Only a message copied out for a reply waits for one: a handful, found by the
        // partial index on status.
        let awaiting = tx
            .prepare("SELECT id FROM messages WHERE status = 'awaiting_reply'")?
            .query_map([], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        Ok(Run {
            tx,
            ids,
            paste_id,
            now,
            threads: HashMap::new(),
            items: Vec::new(),
            repeats: HashMap::new(),
            had_messages,
            stored_ids: (!had_messages).then(HashSet::new),
            awaiting,
            named_parents: HashSet::new(),
        })
    }
}

impl Run<'_, '_> {
    /// Threads and stores one envelope.
    pub fn envelope(&mut self, prep: &mut Prepared) -> Result<(), StoreError> {
        let Prepared {
            parsed: p,
            raw,
            digest,
            filled,
        } = prep;
        if p.has_errors() {
            self.items.push(ImportItem {
                span: p.span,
                outcome: Outcome::Rejected,
                message: None,
                thread: None,
                diagnostics: std::mem::take(&mut p.diagnostics),
            });
            return Ok(());
        }
        // Envelopes with a message id are the same message when the id is; only those
        // without one (v1.0) are recognized by a digest of their canonical text.
        let (duplicate, digest) = match p.envelope.message() {
            Some(id) => match &self.stored_ids {
                Some(stored) if !stored.contains(&id_key(id)) => (None, None),
                _ => (
                    self.existing("SELECT id, thread_id FROM messages WHERE id = ?1", id)?,
                    None,
                ),
            },
            None => {
                // The same text twice in one input (an identical reply later in the session)
                // is two messages: the n-th repeat gets its own digest. Importing the same
                // input again, or a longer copy of it, finds each one again.
                let base = digest.take().unwrap_or_else(|| {
                    hex(&Sha256::digest(protocol::render(&p.envelope).as_bytes()))
                });
                let seen = self.repeats.entry(base.clone()).or_insert(0);
                let digest = if *seen == 0 {
                    base
                } else {
                    hex(&Sha256::digest(format!("{base}#{seen}").as_bytes()))
                };
                *seen += 1;
                let found = if self.had_messages {
                    self.existing(
                        "SELECT id, thread_id FROM messages WHERE digest = ?1",
                        &digest,
                    )?
                } else {
                    None
                };
                (found, Some(digest))
            }
        };
        if let Some((id, thread)) = duplicate {
            self.items.push(ImportItem {
                span: p.span,
                outcome: Outcome::Duplicate,
                message: Some(id),
                thread: Some(thread),
                diagnostics: std::mem::take(&mut p.diagnostics),
            });
            return Ok(());
        }

        let env = &p.envelope;
        let ids_assigned = env.thread().is_none() || env.message().is_none();
        let mut own = None;
        let (thread, message, parent, filled) = match filled.as_ref() {
            // Named thread and message: the worker filled them in already.
            Some(f) => (
                f.env.thread().unwrap_or_default().to_string(),
                f.env.message().unwrap_or_default().to_string(),
                env.parent().map(str::to_string),
                f,
            ),
            None => {
                // v1.0 envelopes (no thread) belong to their session's conversation and answer
                // its latest message; the first of a session starts a thread.
                let latest = match (env.thread(), env.session()) {
                    (None, Some(session)) => self.existing(
                        "SELECT id, thread_id FROM messages WHERE session = ?1
                         ORDER BY seq DESC LIMIT 1",
                        session,
                    )?,
                    _ => None,
                };
                let message = env
                    .message()
                    .map(str::to_string)
                    .unwrap_or_else(|| self.ids.next_id());
                // Without a `thread`, a reply joins the thread of the message it names as
                // parent when that is stored, else its session's.
                let parents_thread = match (env.thread(), env.parent()) {
                    (None, Some(parent)) => self
                        .existing("SELECT id, thread_id FROM messages WHERE id = ?1", parent)?
                        .map(|(_, t)| t),
                    _ => None,
                };
                let thread = match (env.thread(), parents_thread, &latest) {
                    (Some(t), _, _) => t.to_string(),
                    (None, Some(t), _) => t,
                    (None, None, Some((_, t))) => t.clone(),
                    (None, None, None) => message.clone(),
                };
                let parent = env
                    .parent()
                    .map(str::to_string)
                    .or_else(|| latest.map(|(id, _)| id));
                let filled = own.insert(fill(p, &thread, &message, parent.as_deref()));
                (thread, message, parent, &*filled)
            }
        };

        let env = &filled.env;
        self.touch_thread(&thread, env.context(), [&env.banner.from, &env.banner.to])?;
        self.tx
            .prepare_cached(
                "INSERT INTO messages (id, thread_id, parent_id, paste_id, direction, status, sender,
                    recipient, participants, version, user, session, context, intent, intent_raw,
                    body, sig, hash, headers, meta, diagnostics, raw, canonical, digest,
                    ids_assigned, received_at, updated_at)
                 VALUES (?1, ?2, ?3, ?4, 'received', 'received', ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12,
                    ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?24)",
            )?
            .execute(params![
                message,
                thread,
                parent,
                self.paste_id,
                env.banner.from,
                env.banner.to,
                format!("{} {}", env.banner.from, env.banner.to),
                env.banner.version,
                env.user(),
                env.session(),
                env.context(),
                filled.intent.as_ref().map(Intent::as_str),
                p.envelope.intent_raw(),
                env.body,
                env.sig,
                env.hash,
                filled.headers,
                filled.meta,
                filled.diagnostics,
                Some(&*raw).filter(|r| **r != filled.canonical),
                filled.canonical,
                digest,
                ids_assigned,
                self.now,
            ])?;
        if let Some(parent) = &parent {
            if self.awaiting.remove(parent) {
                // The message it answers is answered now.
                self.tx
                    .prepare_cached(
                        "UPDATE messages SET status = 'answered', updated_at = ?2
                         WHERE id = ?1 AND status = 'awaiting_reply'",
                    )?
                    .execute(params![parent, self.now])?;
            }
        }
        let key = id_key(&message);
        if self.named_parents.contains(&key) || self.named_before(&message)? {
            self.rehome_replies(&message, &thread)?;
        }
        if let Some(parent) = parent {
            self.named_parents.insert(id_key(&parent));
        }
        if let Some(stored) = &mut self.stored_ids {
            stored.insert(key);
        }
        self.items.push(ImportItem {
            span: p.span,
            outcome: Outcome::Imported,
            message: Some(message),
            thread: Some(thread),
            diagnostics: std::mem::take(&mut p.diagnostics),
        });
        Ok(())
    }

    /// Whether a message stored before this import names `id` as its parent. (The new id is
    /// not stored yet, so such a message is a reply that arrived before its parent.)
    fn named_before(&self, id: &str) -> Result<bool, StoreError> {
        if !self.had_messages {
            return Ok(false);
        }
        Ok(self
            .tx
            .prepare_cached("SELECT 1 FROM messages WHERE parent_id = ?1 LIMIT 1")?
            .query_row([id], |_| Ok(()))
            .optional()?
            .is_some())
    }

    /// Replies to `message` that arrived first, filed under another thread, join `thread`
    /// now, with everything that hangs under them.
    fn rehome_replies(&mut self, message: &str, thread: &str) -> Result<(), StoreError> {
        let moving: Vec<(String, String)> = self
            .tx
            .prepare_cached(
                "WITH RECURSIVE sub(id) AS (
                    SELECT id FROM messages WHERE parent_id = ?1 AND thread_id <> ?2
                    UNION
                    SELECT m.id FROM messages m JOIN sub ON m.parent_id = sub.id
                 )
                 SELECT m.id, m.thread_id FROM messages m JOIN sub ON m.id = sub.id
                 WHERE m.thread_id <> ?2",
            )?
            .query_map(params![message, thread], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_, _>>()?;
        for (id, old) in &moving {
            self.tx
                .prepare_cached("UPDATE messages SET thread_id = ?2 WHERE id = ?1")?
                .execute(params![id, thread])?;
            // The old thread's count is recomputed (and an emptied one removed) at the end.
            self.touch_thread(old, None, [])?;
        }
        Ok(())
    }

    /// Looks up (message id, thread id) with a one-parameter query.
    fn existing(&self, sql: &str, key: &str) -> Result<Option<(String, String)>, StoreError> {
        Ok(self
            .tx
            .prepare_cached(sql)?
            .query_row([key], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?)
    }

    /// Makes sure the thread exists (messages reference it) and notes its new participants.
    fn touch_thread<'a>(
        &mut self,
        id: &str,
        context: Option<&str>,
        participants: impl IntoIterator<Item = &'a String>,
    ) -> Result<(), StoreError> {
        if !self.threads.contains_key(id) {
            self.tx
                .prepare_cached(
                    "INSERT OR IGNORE INTO threads (id, context, created_at, last_activity)
                     VALUES (?1, ?2, ?3, ?3)",
                )?
                .execute(params![id, context, self.now])?;
            let (ctx, parts): (Option<String>, String) = self.tx.query_row(
                "SELECT context, participants FROM threads WHERE id = ?1",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?;
            let participants = serde_json::from_str(&parts).unwrap_or_default();
            self.threads.insert(
                id.to_string(),
                ThreadAcc {
                    context: ctx,
                    participants,
                },
            );
        }
        if let Some(acc) = self.threads.get_mut(id) {
            if acc.context.is_none() {
                acc.context = context.map(str::to_string);
            }
            for p in participants {
                if !acc.participants.contains(p) {
                    acc.participants.push(p.clone());
                }
            }
        }
        Ok(())
    }

    /// Writes each touched thread's count, participants, context and activity time; threads
    /// left empty (their replies moved to the thread of the message they answer) are removed.
    pub fn flush_threads(&mut self) -> Result<(), StoreError> {
        for (id, acc) in &self.threads {
            let n: i64 = self.tx.query_row(
                "SELECT count(*) FROM messages WHERE thread_id = ?1",
                [id],
                |r| r.get(0),
            )?;
            if n == 0 {
                self.tx.execute("DELETE FROM threads WHERE id = ?1", [id])?;
                continue;
            }
            self.tx
                .prepare_cached(
                    "UPDATE threads SET message_count = ?2, participants = ?3,
                        context = coalesce(context, ?4), last_activity = ?5 WHERE id = ?1",
                )?
                .execute(params![
                    id,
                    n,
                    serde_json::to_string(&acc.participants).unwrap_or_default(),
                    acc.context,
                    self.now
                ])?;
        }
        Ok(())
    }
}
