//! The writing half of an import: threads each prepared envelope and stores it, committing
//! in pieces of about [`PIECE_TIME`].
//!
//! What the writer must know about the stored history it keeps in memory where that saves a
//! statement per envelope: the messages waiting for their reply (few; read again for every
//! piece), and the ids and parents named by the messages this import stored. Within a piece no
//! other writer can change the database (its transaction is `BEGIN IMMEDIATE`); between two
//! pieces one may, and a piece that finds messages it did not store stops trusting what it
//! kept about which ids are stored.
//!
//! Where a v1.0 envelope goes and when it is a stored message already is `v10` (its rules
//! are `v10_place`'s).

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::path::Path;
use std::time::{Duration, Instant};

use rusqlite::{Connection, OptionalExtension, params};

use super::prepare::{Filled, Guess, Prepared, fill};
use super::receipt_id::ReceiptIds;
use crate::protocol::Intent;
use crate::store::background::Follower;
use crate::store::delivery::{ParentRow, ParentWait};
use crate::store::import::{ImportItem, Outcome};
use crate::store::{PIECE_PAUSE, PIECE_TIME, StoreError};
use crate::store::{conflict, cycle, fresh, v10_place};
use v10::Place;

mod new_message;
mod v10;

/// A message id as the in-memory sets keep it: a 64-bit hash, a tenth of the memory of the id
/// and no allocation. The sets only ever decide whether a statement may be skipped, so two
/// ids sharing a hash cost one statement that finds nothing, never a wrong answer.
fn id_key(id: &str) -> u64 {
    let mut h = std::hash::DefaultHasher::new();
    id.hash(&mut h);
    h.finish()
}

/// Stores one message: the one `INSERT INTO messages`, which every envelope of an import runs
/// and a reply composed here runs too (`reply`). Its direction, status and canonical text
/// come last (`?35`–`?37`): an import binds `'received'`, `'received'` and no canonical text
/// (its columns render to it), a reply binds its own; a column a caller has no value for is
/// bound its default (`NULL`, or `0` for `ids_assigned` and `parent_inferred`).
pub(in crate::store) const INSERT_MESSAGE: &str =
    "INSERT INTO messages (id, thread_id, parent_id, paste_id,
        sender, recipient, version, user, session, context, intent, intent_raw,
        body, sig, hash, headers, meta, diagnostics, raw, raw_prefix, raw_suffix,
        digest, ids_assigned, received_at, sent_at, recipient_key, to_me,
        awaiting_from, awaiting_needed, missing_parent, ledger_state, parent_inferred,
        relayed_at, relay_method, direction, status, canonical)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,
        ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32, ?33,
        ?34, ?35, ?36, ?37)";

/// The in-memory sets' hasher: their keys are [`id_key`]s, hashes already, so each is its own
/// hash instead of being hashed a second time with SipHash on every look-up.
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only `u64` keys are hashed here; any other input still hashes to its bytes.
        for b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(*b);
        }
    }

    fn write_u64(&mut self, key: u64) {
        self.0 = key;
    }
}

/// A set of [`id_key`]s.
type KeySet = HashSet<u64, std::hash::BuildHasherDefault<KeyHasher>>;

/// Per-thread changes gathered during one piece of an import, written at its end.
struct ThreadAcc {
    context: Option<String>,
    participants: Vec<String>,
    /// Messages added to the thread (less those moved out of it) in this piece. Counts are
    /// kept up to date by adding this, not by counting: counting a thread at every piece
    /// cost a scan of the whole thread per piece, which grows with a long conversation.
    added: i64,
    /// Whether a message moved out of it (it may be empty now).
    left: bool,
    /// Whether the current piece touched it (only those are written at its end).
    dirty: bool,
}

impl ThreadAcc {
    /// `added` messages, with their context and participants.
    fn note<'a>(
        &mut self,
        context: Option<&str>,
        participants: impl IntoIterator<Item = &'a String>,
        added: i64,
    ) {
        self.added += added;
        self.left |= added < 0;
        self.dirty = true;
        if self.context.is_none() {
            self.context = context.map(str::to_string);
        }
        for p in participants {
            if !self.participants.contains(p) {
                self.participants.push(p.clone());
            }
        }
    }
}

/// The state of one import.
pub(in crate::store) struct Run<'c> {
    conn: &'c Connection,
    /// When committing in pieces: how long to wait for the lock again, and the database.
    pieces: Option<(Duration, &'c Path)>,
    /// When the current piece began.
    piece_started: Instant,
    /// The largest message `seq` this import committed last.
    last_seq: i64,
    /// SQLite's `data_version` after this import's last commit: another connection's commit
    /// (a message added or removed) changes it.
    data_version: i64,
    paste_id: i64,
    now: String,
    threads: HashMap<String, ThreadAcc>,
    pub items: Vec<ImportItem>,
    /// For each session met in this input, the message its last envelope was (stored, or
    /// found stored), that message's thread and its parties: the next v1.0 envelope of the
    /// session answers it, unless it is a third party's (see `v10_place`). Its thread is kept
    /// as replies move (`rehome_replies`), so that placing the next one needs no look-up;
    /// `None` once another writer may have changed it (the message is then read again).
    sessions: HashMap<String, v10::SessionLast>,
    /// The sessions no envelope of the last piece came in: only their last message's id is
    /// kept (see [`Run::idle_sessions`]).
    idle: HashMap<String, String>,
    /// Whether messages were stored before this import began (or by others since).
    had_messages: bool,
    /// When none were: the ids this import stored (as [`id_key`]s). A message id not in
    /// here is then not stored at all, and its look-up is skipped.
    stored_ids: Option<KeySet>,
    /// Likewise, the digests of the v1.0 envelopes this import stored.
    stored_digests: Option<KeySet>,
    /// Per session, the envelopes opening it in this input while they may be the session's
    /// end pasted again (see `v10_place::Tail`).
    tails: HashMap<String, v10_place::Tail>,
    /// The messages waiting for their reply, so that only a reply to one of them updates it.
    awaiting: HashSet<String>,
    /// Every parent named by a message this import stored: only a message in this set (or
    /// named by a message stored before the import) can have replies waiting to be re-homed.
    named_parents: KeySet,
    /// Whether envelopes rejected only for invalid ids get fresh ones (see `fresh`).
    pub fresh_ids: bool,
    /// The ids made on receipt for this paste's envelopes.
    receipt: ReceiptIds,
    /// The operator's addresses, for the delivery ledger's "addressed to me".
    operator: HashSet<String>,
    /// The trust store's keys, for judging signatures and pinning announced keys.
    trust: crate::store::keys::PinnedKeys,
    /// Copies each committed piece into the database while the next is written; started at
    /// the first piece's end, so a paste of a few envelopes never starts it.
    checkpointer: Option<Follower>,
    /// Writes the full-text index of each committed piece while the next is written (see
    /// `search_index`); started with the checkpointer.
    indexer: Option<Follower>,
    /// What the ledger reads of a parent, for the messages this piece stored: a reply nearly
    /// always follows its parent closely, and looking each parent up was 5 % of an import's
    /// time. Kept as this writer changes those rows (see `store_one`), and forgotten at every
    /// piece's end, as another writer may change them between two pieces.
    parents: HashMap<String, ParentRow>,
    /// Threads holding a HANDOFF that waits for its new owner to write (see
    /// `LedgerColumns::after_insert`): read at every piece's start, kept as this writer stores them.
    handoffs: HashMap<String, HashSet<String>>,
    /// [`INSERT_MESSAGE`], prepared once: taking it from the connection's statement cache
    /// hashed and compared its 600 characters on the way out and again on the way back, for
    /// every envelope.
    insert: rusqlite::Statement<'c>,
}

impl<'c> Run<'c> {
    /// Starts writing in the transaction open on `conn`; with `pieces`, commits and begins a
    /// new one every [`PIECE_TIME`] (see [`Run::piece_boundary`]).
    pub(crate) fn new(
        conn: &'c Connection,
        paste_id: i64,
        now: String,
        pieces: Option<(Duration, &'c Path)>,
    ) -> Result<Self, StoreError> {
        let first_seq = max_seq(conn)?;
        Ok(Run {
            conn,
            pieces,
            piece_started: Instant::now(),
            last_seq: first_seq,
            data_version: data_version(conn)?,
            paste_id,
            now,
            threads: HashMap::new(),
            items: Vec::new(),
            sessions: HashMap::new(),
            idle: HashMap::new(),
            had_messages: first_seq > 0,
            stored_ids: (first_seq == 0).then(KeySet::default),
            stored_digests: (first_seq == 0).then(KeySet::default),
            tails: HashMap::new(),
            awaiting: awaiting(conn)?,
            named_parents: KeySet::default(),
            fresh_ids: false,
            receipt: ReceiptIds::for_paste(conn, paste_id)?,
            operator: crate::store::delivery::operator_addresses(conn)?,
            trust: crate::store::keys::PinnedKeys::load(conn)?,
            checkpointer: None,
            indexer: None,
            parents: HashMap::new(),
            handoffs: waiting_handoffs(conn)?,
            insert: conn.prepare(INSERT_MESSAGE)?,
        })
    }
}

#[cfg(test)]
thread_local! {
    /// How many of the worker's guesses the writer on this thread took.
    static GUESSES_TAKEN: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Whether `g` is what the writer would have filled in itself at the guessed place: every
/// test import checks each guess it takes.
fn guessed_right(p: &crate::protocol::Parsed, raw: &str, g: &super::prepare::Guess) -> bool {
    let mut own = fill(p, &g.thread, &g.message, g.parent.as_deref());
    own.raw_edit = Some(crate::store::texts::raw_edit(raw, &own.canonical));
    own == g.filled
}

impl Run<'_> {
    /// What the worker guesses v1.0 envelopes' places with (see `prepare::Guesser`).
    pub(crate) fn guesser(&self) -> super::prepare::Guesser {
        super::prepare::Guesser::new(self.receipt.clone())
    }
}

/// SQLite's count of the commits other connections made to the database (see
/// [`Run::data_version`]).
fn data_version(conn: &Connection) -> Result<i64, StoreError> {
    Ok(conn.query_row("PRAGMA data_version", [], |r| r.get(0))?)
}

/// The largest message `seq` stored (0 when none is).
fn max_seq(conn: &Connection) -> Result<i64, StoreError> {
    Ok(
        conn.query_row("SELECT coalesce(max(seq), 0) FROM messages", [], |r| {
            r.get(0)
        })?,
    )
}

const AWAITING: &str = "SELECT id FROM messages WHERE status IN ('draft', 'awaiting_reply')
    AND status = 'awaiting_reply'";

/// The messages waiting for their reply. Only a message copied out for a reply waits for
/// one: a handful, found by the partial index on status. The query repeats the index's own
/// condition: SQLite uses a partial index only for a query whose WHERE contains that
/// condition, and without it this scanned every stored message, once per import (which made
/// importing many small pastes slower the more the database held) and now once per piece.
fn awaiting(conn: &Connection) -> Result<HashSet<String>, StoreError> {
    Ok(conn
        .prepare_cached(AWAITING)?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?)
}

/// The threads holding a HANDOFF that still waits: a handful, off the ledger's index of
/// waiting messages.
fn waiting_handoffs(conn: &Connection) -> Result<HashMap<String, HashSet<String>>, StoreError> {
    let mut out: HashMap<String, HashSet<String>> = HashMap::new();
    let mut stmt = conn.prepare_cached(
        "SELECT thread_id, recipient_key FROM messages
         WHERE ledger_state IS NOT NULL AND ledger_state = 'awaiting' AND intent = 'HANDOFF'",
    )?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        out.entry(r.get(0)?).or_default().insert(r.get(1)?);
    }
    Ok(out)
}

/// Whether a message stored with `intent` (waiting, with `waits`) is a HANDOFF that waits.
fn handoff_waits(intent: Option<&Intent>, waits: bool) -> bool {
    waits && intent == Some(&Intent::Handoff)
}

impl Run<'_> {
    /// After an envelope: when the piece has held the database for [`PIECE_TIME`], commits
    /// it, pauses for [`PIECE_PAUSE`] so that a waiting writer gets the lock, and begins the
    /// next.
    pub(crate) fn piece_boundary(&mut self) -> Result<(), StoreError> {
        let Some((timeout, path)) = self.pieces else {
            return Ok(());
        };
        if self.piece_started.elapsed() < PIECE_TIME {
            return Ok(());
        }
        self.end_piece()?;
        self.conn.execute_batch("COMMIT")?;
        self.data_version = data_version(self.conn)?;
        if self.checkpointer.is_none() {
            self.checkpointer = crate::store::checkpointer::start(path);
        }
        if let Some(c) = &self.checkpointer {
            c.committed();
        }
        if self.indexer.is_none() {
            self.indexer = crate::store::search_index::indexer(path, timeout);
        }
        if let Some(i) = &self.indexer {
            i.committed();
        }
        std::thread::sleep(PIECE_PAUSE);
        crate::store::begin_immediate(self.conn, timeout, path)?;
        let now = max_seq(self.conn)?;
        if now != self.last_seq || data_version(self.conn)? != self.data_version {
            // Another writer stored or removed messages meanwhile: ids not stored by this
            // import may be stored now, and digests and parents must be looked up.
            self.had_messages = true;
            self.stored_ids = None;
            self.stored_digests = None;
            // And the threads' participants and contexts are read again, as is what each
            // session's last message is now.
            self.threads.clear();
            self.forget_session_threads();
            // And which threads hold a HANDOFF that waits (this writer keeps the set for its
            // own; another's may have added or ended some).
            self.handoffs = waiting_handoffs(self.conn)?;
        }
        self.parents.clear();
        self.last_seq = now;
        self.awaiting = awaiting(self.conn)?;
        self.trust = crate::store::keys::PinnedKeys::load(self.conn)?;
        self.piece_started = Instant::now();
        Ok(())
    }

    /// Completes the current piece: thread counts and participants. The caller commits; the
    /// full-text index of the piece is written by the search index's follower (or after the
    /// import).
    pub(crate) fn end_piece(&mut self) -> Result<(), StoreError> {
        self.flush_threads()?;
        self.idle_sessions();
        self.last_seq = max_seq(self.conn)?;
        Ok(())
    }
}

/// What the stored history holds of an envelope about to be stored (see [`Run::seen`]).
enum Seen {
    /// Nothing: it is a new message, stored (when it has no message id) under this digest.
    New(Option<String>),
    /// The stored message of this id in this thread: a duplicate.
    Duplicate(String, String),
    /// Settled without a new row (its signature added, a conflicting version kept), or held
    /// (`None`) as the start of a tail.
    Settled(Option<ImportItem>),
}

/// The ids a new message is stored under, as [`Run::name`] found them, with what its row
/// says of how they were found.
struct NewIds {
    thread: String,
    message: String,
    parent: Option<String>,
    /// For an envelope without a message id, the digest of its text at its place.
    digest: Option<String>,
    /// Its thread or message id was made here.
    assigned: bool,
}

/// The item of an envelope settled as `outcome`, as the stored message and thread `stored`
/// when there is one; its diagnostics are taken from `p`.
fn item(
    p: &mut crate::protocol::Parsed,
    outcome: Outcome,
    stored: Option<(String, String)>,
) -> ImportItem {
    let (message, thread) = stored.unzip();
    ImportItem {
        span: p.span,
        outcome,
        message,
        thread,
        diagnostics: std::mem::take(&mut p.diagnostics),
    }
}

impl Run<'_> {
    /// Threads and stores the envelope at `index` in the input, and says what became of it;
    /// `None` when it is held, with `may_hold`, as the start of a tail (see `v10_place`).
    ///
    /// In four steps, each its own function: ids repaired, a rejected envelope reported, a
    /// stored copy recognized ([`Run::seen`]), and a new message stored ([`Run::store_new`]).
    fn store_one(
        &mut self,
        prep: &mut Prepared,
        index: usize,
        may_hold: bool,
    ) -> Result<Option<ImportItem>, StoreError> {
        let fresh_message = self.repair_ids(prep, index)?;
        if prep.parsed.has_errors() {
            if let Some(marked) = prep.marks.as_deref() {
                self.unmark(marked, &prep.parsed.envelope.banner.from)?;
            }
            return Ok(Some(item(&mut prep.parsed, Outcome::Rejected, None)));
        }
        // Where an envelope without named ids goes: a v1.0 envelope is a stored message only
        // if it would go where that message is.
        let place = match prep.filled {
            Some(_) => None,
            None => Some(self.place(&prep.parsed.envelope)?),
        };
        match self.seen(prep, index, may_hold, place.as_ref())? {
            Seen::New(digest) => self.store_new(prep, index, place, digest, fresh_message),
            Seen::Duplicate(id, thread) => {
                let p = &mut prep.parsed;
                self.note_session(&p.envelope, &id, &thread);
                Ok(Some(item(p, Outcome::Duplicate, Some((id, thread)))))
            }
            Seen::Settled(item) => Ok(item),
        }
    }

    /// Replaces invalid ids named before (or, when asked, any) before anything else, and says
    /// whether the message id is one made here. The envelope's index in the input is what its
    /// ids made on receipt derive from.
    fn repair_ids(&mut self, prep: &mut Prepared, index: usize) -> Result<bool, StoreError> {
        let repaired = fresh::repair(
            self.conn,
            &|purpose| self.receipt.id(index, purpose),
            self.paste_id,
            &self.now,
            self.fresh_ids,
            &mut prep.parsed,
        )?;
        if repaired.changed {
            // What the worker filled in was for the ids as received.
            prep.filled = None;
            prep.guess = None;
            // The ids given may be stored: they are looked up.
            self.stored_ids = None;
        }
        Ok(repaired.fresh_message)
    }

    /// What the stored history holds of the envelope already. Envelopes with a message id are
    /// the same message when the id is; only those without one (v1.0) are recognized by
    /// their text and place (see `v10_place`).
    fn seen(
        &mut self,
        prep: &mut Prepared,
        index: usize,
        may_hold: bool,
        place: Option<&Place>,
    ) -> Result<Seen, StoreError> {
        let stored = match prep.parsed.envelope.message_key() {
            Some(id) => match &self.stored_ids {
                Some(stored) if !stored.contains(&id_key(&id)) => None,
                _ => conflict::stored(self.conn, &id)?,
            },
            None => return self.v10_seen(prep, index, may_hold, place),
        };
        match stored {
            None => Ok(Seen::New(None)),
            Some(s) => self.stored_copy(prep, s),
        }
    }

    /// What becomes of an envelope whose message id is stored as `s`: the same message (a
    /// duplicate, or signed now), or another under the same id (a conflict).
    fn stored_copy(
        &mut self,
        prep: &mut Prepared,
        s: conflict::Stored,
    ) -> Result<Seen, StoreError> {
        let (p, raw) = (&mut prep.parsed, &prep.raw);
        let canonical = conflict::candidate(p, prep.filled.as_ref(), &s);
        match conflict::compare(&s.canonical, &canonical) {
            conflict::Copy::SignsStored => {
                // The same message, signed now: its text takes the signature and the signature
                // is judged like any other.
                let seq = conflict::add_signature(self.conn, &s.id, p, raw, &canonical, &self.now)?;
                let notes = self.trust.record(self.conn, seq, p, raw, &self.now)?;
                self.note_session(&p.envelope, &s.id, &s.thread);
                let mut item = item(p, Outcome::Signed, Some((s.id, s.thread)));
                item.diagnostics.extend(notes);
                Ok(Seen::Settled(Some(item)))
            }
            conflict::Copy::Other => {
                // Same id, other content: kept beside the stored message, and reported as the
                // error it is.
                let diagnostics = serde_json::to_string(&p.diagnostics).unwrap_or_default();
                let kept = conflict::keep_version(
                    self.conn,
                    &s.id,
                    self.paste_id,
                    raw,
                    &canonical,
                    &diagnostics,
                    &self.now,
                )?;
                let conflict = conflict::diagnostic(p.span.start_line, &s, Some(kept));
                let mut item = item(p, Outcome::Conflict, Some((s.id, s.thread)));
                item.diagnostics.insert(0, conflict);
                Ok(Seen::Settled(Some(item)))
            }
            // A copy changed on the way (a gateway's block, hops, whitespace, a signature a
            // chat dropped) is the same message: a duplicate.
            _ => Ok(Seen::Duplicate(s.id, s.thread)),
        }
    }

    /// What the stored history holds of a v1.0 envelope (no message id), recognized by its
    /// text digest at `place`; held as the start of a tail when only the envelopes after it
    /// can tell.
    fn v10_seen(
        &mut self,
        prep: &mut Prepared,
        index: usize,
        may_hold: bool,
        place: Option<&Place>,
    ) -> Result<Seen, StoreError> {
        let p = &prep.parsed;
        let base = (prep.digest.take()).unwrap_or_else(|| v10_place::text_digest(&p.envelope));
        let parent = place.and_then(|pl| pl.parent.as_deref());
        // The digest it is stored under, as the worker worked it out when it guessed this
        // place.
        let placed = match prep.guess.as_deref() {
            Some(g) if g.parent.as_deref() == parent => {
                debug_assert_eq!(g.placed, v10_place::placed(&base, parent));
                g.placed.clone()
            }
            _ => v10_place::placed(&base, parent),
        };
        let mut found = self.v10_stored(&p.envelope, &base, parent, &placed)?;
        // The first of its session in this input, answering the session's latest message: it
        // may begin the session's end pasted again, which only the envelopes after it tell.
        if let (None, true, Some(_), Some(session)) = (
            &found,
            may_hold && self.opens_session(&p.envelope),
            parent,
            p.envelope.session(),
        ) {
            let first = Prepared {
                answered_by: prep.answered_by.clone(),
                marks: prep.marks.clone(),
                parsed: p.clone(),
                raw: prep.raw.clone(),
                digest: Some(base.clone()),
                filled: None,
                guess: None,
            };
            if let Some(tail) = v10_place::Tail::start(self.conn, session, &base, (first, index))? {
                if tail.may_grow() {
                    self.tails.insert(session.to_string(), tail);
                    return Ok(Seen::Settled(None));
                }
                // The latest message itself, pasted again.
                found = (tail.settle().found.into_iter())
                    .next()
                    .map(|(_, _, s)| (s.id, s.thread));
            }
        }
        Ok(match found {
            Some((id, thread)) => Seen::Duplicate(id, thread),
            None => Seen::New(Some(placed)),
        })
    }

    /// Takes back the relay stored ahead of time for message `id` (see `prepare::Answers`):
    /// the reply of `by` that marked it was not stored under it.
    fn unmark(&mut self, id: &str, by: &str) -> Result<(), StoreError> {
        // The trigger that keeps `ledger_state` puts it back to relay.
        let n = self
            .conn
            .prepare_cached(
                "UPDATE messages SET relayed_at = NULL, relay_method = NULL
                 WHERE id = ?1 AND relayed_at = ?2 AND relay_method = ?3",
            )?
            .execute(params![
                id,
                self.now,
                crate::store::delivery::inferred_relay(by)
            ])?;
        if n > 0 {
            if let Some(row) = self.parents.get_mut(id) {
                row.to_relay = true;
            }
        }
        Ok(())
    }

    /// Whether a message stored before this import names `id` as its parent. (The new id is
    /// not stored yet, so such a message is a reply that arrived before its parent.)
    fn named_before(&self, id: &str) -> Result<bool, StoreError> {
        if !self.had_messages {
            return Ok(false);
        }
        Ok(self
            .conn
            .prepare_cached("SELECT 1 FROM messages WHERE parent_id = ?1 LIMIT 1")?
            .query_row([id], |_| Ok(()))
            .optional()?
            .is_some())
    }

    /// Replies to `message` that arrived first, filed under another thread, join `thread`
    /// now, with everything that hangs under them.
    fn rehome_replies(&mut self, message: &str, thread: &str) -> Result<(), StoreError> {
        let moving: Vec<(String, String)> = self
            .conn
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
            crate::store::texts::rehome(self.conn, id, thread)?;
            self.session_message_moved(id, thread);
            // The old thread's count goes down (an emptied one is removed at the piece's end).
            self.touch_thread(old, None, [], -1)?;
            self.touch_thread(thread, None, [], 1)?;
        }
        Ok(())
    }

    /// Looks up (message id, thread id) with a one-parameter query.
    fn existing(&self, sql: &str, key: &str) -> Result<Option<(String, String)>, StoreError> {
        Ok(self
            .conn
            .prepare_cached(sql)?
            .query_row([key], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?)
    }

    /// Makes sure the thread exists (messages reference it), notes its new participants and
    /// `added` messages.
    fn touch_thread<'a>(
        &mut self,
        id: &str,
        context: Option<&str>,
        participants: impl IntoIterator<Item = &'a String>,
        added: i64,
    ) -> Result<(), StoreError> {
        // Nearly always known: one look-up, not one to ask and one to change.
        if let Some(acc) = self.threads.get_mut(id) {
            acc.note(context, participants, added);
            return Ok(());
        }
        self.conn
            .prepare_cached(
                "INSERT OR IGNORE INTO threads (id, context, created_at, last_activity)
                 VALUES (?1, ?2, ?3, ?3)",
            )?
            .execute(params![id, context, self.now])?;
        // Cached: an import of many threads prepared it once per thread.
        let (ctx, parts): (Option<String>, String) = self
            .conn
            .prepare_cached("SELECT context, participants FROM threads WHERE id = ?1")?
            .query_row([id], |r| Ok((r.get(0)?, r.get(1)?)))?;
        let mut acc = ThreadAcc {
            context: ctx,
            participants: serde_json::from_str(&parts).unwrap_or_default(),
            added: 0,
            left: false,
            dirty: false,
        };
        acc.note(context, participants, added);
        self.threads.insert(id.to_string(), acc);
        Ok(())
    }

    /// Writes the count, participants, context and activity time of each thread the piece
    /// touched; threads left empty (their replies moved to the thread of the message they
    /// answer) are removed. What is known of the threads this piece touched is kept for the
    /// next piece (a long conversation's thread is not read again at every piece); the others
    /// are forgotten, and read again if an envelope comes back to them. Keeping every thread
    /// the input met made an input of many threads hold each one's participants to its end,
    /// and walk all of them at every piece's end.
    fn flush_threads(&mut self) -> Result<(), StoreError> {
        let mut emptied = Vec::new();
        for (id, acc) in self.threads.iter_mut().filter(|(_, a)| a.dirty) {
            self.conn
                .prepare_cached(
                    // A message arriving in an archived thread brings it back, as mail does.
                    "UPDATE threads SET message_count = message_count + ?2, participants = ?3,
                        context = coalesce(context, ?4), last_activity = ?5,
                        archived_at = CASE WHEN ?2 > 0 THEN NULL ELSE archived_at END
                     WHERE id = ?1",
                )?
                .execute(params![
                    id,
                    acc.added,
                    serde_json::to_string(&acc.participants).unwrap_or_default(),
                    acc.context,
                    self.now
                ])?;
            if acc.left
                && self.conn.execute(
                    "DELETE FROM threads WHERE id = ?1 AND message_count <= 0",
                    [id],
                )? > 0
            {
                emptied.push(id.clone());
            }
            acc.added = 0;
            acc.left = false;
        }
        for id in emptied {
            self.threads.remove(&id);
        }
        self.threads.retain(|_, acc| std::mem::take(&mut acc.dirty));
        if self.threads.capacity() > 4 * self.threads.len().max(64) {
            self.threads.shrink_to_fit();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plan SQLite picks for `sql`, one line per step.
    fn plan(conn: &Connection, sql: &str) -> String {
        crate::store::test_support::query_plan(conn, sql, []).join("\n")
    }

    #[test]
    fn the_look_ups_of_every_piece_use_an_index() {
        let store = crate::store::Store::open_in_memory().unwrap();
        let conn = &store.conn;
        let awaiting = plan(conn, AWAITING);
        assert!(awaiting.contains("INDEX messages_status"), "{awaiting}");
        let max = plan(conn, "SELECT coalesce(max(seq), 0) FROM messages");
        assert!(!max.contains("SCAN"), "{max}");
    }

    /// A v1.0 reply of `from` in `session`.
    fn v10(from: &str, to: &str, session: &str, body: &str) -> String {
        format!("[[{from}→{to} v1]]\nsession: {session}\nresponse: |\n  {body}\n[[END]]\n")
    }

    /// Imports `text` and says what became of each envelope and how many guesses were taken.
    fn import(store: &mut crate::store::Store, text: &str) -> (Vec<String>, usize) {
        let before = GUESSES_TAKEN.with(|n| n.get());
        let report = store
            .import_text("t", text, &crate::protocol::Options::default())
            .unwrap();
        let outcomes = (report.items.iter())
            .map(|i| format!("{:?}", i.outcome))
            .collect();
        (outcomes, GUESSES_TAKEN.with(|n| n.get()) - before)
    }

    /// A session's last message, known to the writer without a look-up, is read again when
    /// another writer removed it between two pieces: the next envelope of the session
    /// answers the session's latest message as it is then, not one that is gone.
    #[test]
    fn a_session_s_last_message_removed_between_pieces_is_not_answered() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.db");
        let mut store = crate::store::Store::open(&path).unwrap();
        // Two sessions in turn: the message removed is one session's last, not the newest
        // stored, so only the database's count of others' commits tells.
        let text: String = (0..4000)
            .map(|i| v10("A", "B", ["s1", "s2"][i % 2], &format!("line {i}")))
            .collect();
        let other = std::thread::spawn({
            let path = path.clone();
            move || {
                let raw = rusqlite::Connection::open(&path).unwrap();
                raw.busy_timeout(std::time::Duration::from_secs(30))
                    .unwrap();
                // Once the first piece is committed, the last message of the session whose
                // envelope was not the last stored goes.
                let count = |raw: &rusqlite::Connection| -> i64 {
                    raw.query_row("SELECT count(*) FROM messages", [], |r| r.get(0))
                        .unwrap_or(0)
                };
                let start = std::time::Instant::now();
                while count(&raw) == 0 && start.elapsed().as_secs() < 60 {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
                raw.query_row(
                    "DELETE FROM messages WHERE seq = (SELECT max(seq) FROM messages
                         WHERE session <> (SELECT session FROM messages ORDER BY seq DESC
                                           LIMIT 1))
                     RETURNING seq",
                    [],
                    |r| r.get::<_, i64>(0),
                )
                .unwrap()
            }
        });
        let report = store
            .import_text("t", &text, &crate::protocol::Options::default())
            .unwrap();
        let removed = other.join().unwrap();
        assert_eq!(report.items.len(), 4000);
        let (newest, orphans): (i64, i64) = store
            .conn
            .query_row(
                "SELECT max(seq), (SELECT count(*) FROM messages m WHERE parent_id IS NOT NULL
                     AND NOT EXISTS (SELECT 1 FROM messages p WHERE p.id = m.parent_id))
                 FROM messages",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        assert!(
            removed < newest,
            "removed while the import went on: {removed} of {newest}"
        );
        assert_eq!(orphans, 0, "no envelope answers the removed message");
    }

    /// The worker fills v1.0 envelopes in ahead of the writer at the place it guesses; the
    /// writer takes every guess that holds (each checked against its own filling-in by a
    /// debug assertion) and fills in the others itself.
    #[test]
    fn the_worker_s_guesses_are_taken_where_they_hold() {
        let mut store = crate::store::Store::open_in_memory().unwrap();
        let mut text = String::new();
        for i in 0..6 {
            text.push_str(&v10("A", "B", "s1", &format!("one {i}")));
            text.push_str(&v10("C", "D", "s2", &format!("two {i}")));
        }
        // Into an empty database every place is known from the input: all twelve are taken.
        let (outcomes, taken) = import(&mut store, &text);
        assert_eq!(outcomes, vec!["Imported"; 12]);
        assert_eq!(taken, 12);
        let tree = |s: &crate::store::Store| {
            s.conn
                .prepare("SELECT body, thread_id, parent_id IS NULL FROM messages ORDER BY seq")
                .unwrap()
                .query_map([], |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, bool>(2)?,
                    ))
                })
                .unwrap()
                .collect::<Result<Vec<_>, _>>()
                .unwrap()
        };
        let rows = tree(&store);
        let roots: Vec<&str> = (rows.iter().filter(|r| r.2))
            .map(|r| r.0.as_str())
            .collect();
        assert_eq!(roots, ["one 0", "two 0"]);
        // The same input again: every envelope is the stored message it repeats. The guesses
        // (new messages) do not hold and none is taken.
        let (outcomes, taken) = import(&mut store, &text);
        assert_eq!(outcomes, vec!["Duplicate"; 12]);
        assert_eq!(taken, 0);
        // A session continued into a database that holds it: its first envelope answers the
        // stored latest, which only the writer reads, and the rest follow it (the worker
        // guessed a new thread). The writer places them all itself, the same way.
        let more: String = (6..9)
            .map(|i| v10("A", "B", "s1", &format!("one {i}")))
            .collect();
        let (outcomes, taken) = import(&mut store, &more);
        assert_eq!(outcomes, vec!["Imported"; 3]);
        assert_eq!(taken, 0);
        // A new session into the same database: guessed right from its first envelope.
        let new: String = (0..3)
            .map(|i| v10("E", "F", "s3", &format!("three {i}")))
            .collect();
        let (outcomes, taken) = import(&mut store, &new);
        assert_eq!(outcomes, vec!["Imported"; 3]);
        assert_eq!(taken, 3);
        let rows = tree(&store);
        assert_eq!(rows.len(), 18);
        assert!(
            rows.iter()
                .filter(|r| r.0.starts_with("one"))
                .all(|r| r.1 == rows[0].1)
        );
    }

    /// An input whose every envelope is its own thread and session: what the writer keeps of
    /// threads and sessions in full is only what the current and the last piece touched, and
    /// a session seen earlier keeps its last message's id alone. (Kept whole to the input's
    /// end, every thread's participants and every session's recent messages made memory grow
    /// by a kilobyte and more per envelope, and every piece's end walk all of them.)
    #[test]
    fn what_the_writer_keeps_per_thread_and_session_is_bounded_by_the_piece() {
        let mut store = crate::store::Store::open_in_memory().unwrap();
        let paste = store.keep_text("t", "").unwrap().paste_id;
        let conn = &store.conn;
        conn.execute_batch("BEGIN").unwrap();
        let mut run = Run::new(conn, paste, crate::store::now(), None).unwrap();
        let text: String = (0..600)
            .map(|i| match i % 2 {
                0 => v10("A", "B", &format!("s{i}"), "hi"),
                _ => format!(
                    "[[C→D v1]]\nsession: t{i}\nthread: 01J9J3D3M6A4M3WQX8G1Z{i:05}\n\
                     message: 01J9J3D3M6A4M3WQX8G2Z{i:05}\nintent: REQUEST\nbody: |\n  hi\n\
                     [[END]]\n"
                ),
            })
            .collect();
        let opts = crate::protocol::Options::default();
        let parsed = crate::protocol::Extractor::with_first_line(&text, 1, opts);
        for (i, p) in parsed.enumerate() {
            let mut prep = super::super::prepare::prepare(p, &text);
            run.envelope(&mut prep).unwrap();
            if i % 100 == 99 {
                run.end_piece().unwrap();
            }
            assert!(
                run.threads.len() <= 200,
                "{i}: {} threads",
                run.threads.len()
            );
            assert!(
                run.sessions.len() <= 200,
                "{i}: {} sessions",
                run.sessions.len()
            );
        }
        run.finish().unwrap();
        run.end_piece().unwrap();
        assert_eq!(run.sessions.len() + run.idle.len(), 600);
        assert!(run.items.iter().all(|i| i.outcome == Outcome::Imported));
        let threads: i64 = conn
            .query_row(
                "SELECT count(*) FROM threads WHERE message_count = 1",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(threads, 600);
    }

    /// A CHECK of a value against a list of more than two makes SQLite build and free a
    /// temporary B-tree for every row; it was a tenth of an import's work (see `schema::m11_checks_as_comparisons`).
    #[test]
    fn storing_a_message_builds_no_temporary_tree() {
        let store = crate::store::Store::open_in_memory().unwrap();
        let ops =
            crate::store::schema::m11_checks_as_comparisons::opcodes(&store.conn, INSERT_MESSAGE);
        assert!(ops.iter().any(|op| op == "Insert"), "{ops:?}");
        assert!(!ops.iter().any(|op| op == "OpenEphemeral"), "{ops:?}");
    }
}
