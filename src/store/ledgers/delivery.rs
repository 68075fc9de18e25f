//! The delivery ledger: for every message, whether the operator must still relay it (received
//! for someone else), answer it (addressed to one of the operator's addresses), or chase its
//! answer (it awaits replies, by the rule in [`crate::protocol::awaiting`]), and whether the
//! message it answers was ever received.
//!
//! The ledger is a few columns of each message's own row (`delivery` is a view of them with
//! the names of the table it once was): a second row per message cost the import a quarter
//! of its time. [`prepare`] computes them before the message's `INSERT` writes them (the
//! import's writer, a composed envelope); the events that change them update them: a reply
//! arriving, a parent arriving after its replies, a copy for the recipient, the operator's
//! addresses changing in the config. The queue (`queue.rs`) and the thread list read them
//! through partial indexes, so asking "what is left to do" never scans the history.

use std::collections::HashSet;

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

use crate::protocol::awaiting::{self, Expectation};
use crate::protocol::{Intent, MetaBlock};
use crate::store::{Store, StoreError, now};

/// A message's place in the ledger, as the inspector shows it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Delivery {
    /// `to_relay`, `to_me`, `awaiting`, or `None` when nothing is left to do.
    pub state: Option<String>,
    /// When the message arrived at this desk (received), or was sent from it (composed:
    /// copied or delivered; until then when it was filed), RFC 3339. Never the time a sender
    /// wrote into its id: that is a claim (see `StoredMessage::claimed_at`).
    pub sent_at: String,
    /// When it was copied for its recipient, and how.
    pub relayed: Option<(String, String)>,
    /// Who must still answer it.
    pub awaiting_from: Vec<String>,
    /// How many answers are still needed.
    pub awaiting_needed: Option<i64>,
    /// Whether the message it answers was never received.
    pub missing_parent: bool,
    /// Addressed to the operator.
    pub to_me: bool,
    /// When and how the operator settled it by hand (`done`, `dismissed`), if they did.
    pub settled: Option<(String, String)>,
    /// For a POLL: each window it goes to, and when and how it was carried there (see
    /// `fanout`). Empty for any other message.
    pub targets: Vec<crate::store::TargetRelay>,
}

/// A message about to be stored, as the ledger needs it.
pub(crate) struct NewMessage<'a> {
    pub id: &'a str,
    pub parent: Option<&'a str>,
    pub received: bool,
    pub sender: &'a str,
    pub recipient: &'a str,
    pub intent: Option<&'a Intent>,
    pub meta: &'a [MetaBlock],
}

/// The ledger's columns of a message about to be stored (its `INSERT` writes them), and what
/// its arrival changes for the message it answers ([`LedgerColumns::after_insert`]).
pub(crate) struct LedgerColumns {
    pub sent_at: String,
    pub recipient_key: String,
    pub to_me: bool,
    /// Who must still answer it (JSON array), and how many answers are still needed.
    pub awaiting_from: Option<String>,
    pub awaiting_needed: Option<i64>,
    pub missing_parent: bool,
    /// The stored parent, as [`ParentRow`] says.
    parent: Option<ParentRow>,
    /// This message counts as an answer ([`awaiting::is_answer`]).
    pub answers: bool,
    /// It asks for an answer (`Intent::expects_response`, or no intent): addressed to the
    /// operator, it is theirs to answer (see `schema::ledger_state`).
    asks: bool,
    /// Composed here, or received from one of the operator's addresses.
    by_operator: bool,
    received: bool,
    /// It is a CLOSE: no further messages are expected in its thread.
    pub closes: bool,
    /// When and how it was relayed as it is stored: a reply from another party follows it
    /// closely in the input ([`LedgerColumns::relayed_ahead`]).
    pub relayed: Option<(String, String)>,
}

/// What a new message's arrival changed in the ledger (see [`LedgerColumns::after_insert`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LedgerChange {
    /// What became of the wait of the message it answers.
    pub wait: ParentWait,
    /// The message it answers was waiting to be relayed and is relayed now: its recipient's
    /// side answered it, so it was evidently carried.
    pub relayed_parent: bool,
    /// Waits of other messages in its thread ended (a CLOSE, or the new owner of a HANDOFF
    /// writing): what is known of their rows is stale.
    pub thread_waits_ended: bool,
}

/// How the ledger records a relay it inferred from `answerer`'s reply (`answerer` as its
/// envelope names it; cut short, as a column shown in lists).
pub(crate) fn inferred_relay(answerer: &str) -> String {
    let name: String = answerer.trim().chars().take(60).collect();
    format!("inferred from {name}'s reply")
}

/// The timestamp in a ULID message id, when it is one and of a plausible time (after 2000,
/// not in the future by more than a day). What a sender claims, never what the desk acts on.
pub fn ulid_time(id: &str) -> Option<jiff::Timestamp> {
    let ulid = ulid::Ulid::from_string(id.trim()).ok()?;
    let ms = i64::try_from(ulid.timestamp_ms()).ok()?;
    let t = jiff::Timestamp::from_millisecond(ms).ok()?;
    let earliest = jiff::Timestamp::from_second(946_684_800).ok()?;
    let latest = jiff::Timestamp::now().checked_add(jiff::SignedDuration::from_hours(24));
    (t >= earliest && latest.is_ok_and(|l| t <= l)).then_some(t)
}

/// The operator's addresses as the ledger knows them (lower-cased).
pub(crate) fn operator_addresses(conn: &Connection) -> Result<HashSet<String>, StoreError> {
    Ok(conn
        .prepare_cached("SELECT address FROM operator_addresses")?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?)
}

/// How addresses are compared: trimmed and lower-cased.
pub(crate) fn address_key(a: &str) -> String {
    a.trim().to_lowercase()
}

/// What the ledger needs of a stored message that a new one answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ParentRow {
    pub seq: i64,
    /// It awaits replies.
    pub waits: bool,
    /// It is addressed to the operator.
    pub to_me: bool,
    /// It is a POLL (its wait is counted again from its replies).
    pub poll: bool,
    /// Received for someone else and not relayed yet.
    pub to_relay: bool,
    /// Its banner sender, as addresses are compared, hashed ([`party_hash`]): all a reply's
    /// sender is compared with, and the row stays small enough to copy.
    pub sender: u64,
}

/// The hash of a party as addresses are compared (trimmed, lower-cased).
pub(crate) fn party_hash(party: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    address_key(party).hash(&mut h);
    h.finish()
}

/// The parent of a message being stored, by its id: what [`parent_row`] reads. One literal,
/// so the statement cache finds it without a string made for each look-up.
const PARENT_BY_ID: &str = "SELECT seq, awaiting_from IS NOT NULL, to_me, intent,
    ledger_state IS NOT NULL AND ledger_state = 'to_relay', sender FROM messages WHERE id = ?1";

/// A [`ParentRow`] read with [`PARENT_BY_ID`]'s columns.
pub(crate) fn parent_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<ParentRow> {
    // Read where SQLite holds them, not copied out.
    let intent = r.get_ref(3)?.as_str_or_null()?;
    let sender = r.get_ref(5)?.as_str()?;
    Ok(ParentRow {
        seq: r.get(0)?,
        waits: r.get(1)?,
        to_me: r.get(2)?,
        poll: intent.map(Intent::parse) == Some(Intent::Poll),
        to_relay: r.get(4)?,
        sender: party_hash(sender),
    })
}

/// What a new message's arrival did to the wait of the message it answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ParentWait {
    /// Nothing changed (no parent stored, it awaited nothing, or this is no answer).
    Unchanged,
    /// It awaits nothing any more.
    Ended,
    /// Counted again from its stored replies (a POLL): read the row to know.
    Recounted,
}

/// The ledger's columns of a message about to be stored: when it was sent, whether it is
/// addressed to the operator, whom it awaits, and whether the message it answers is stored.
pub(crate) fn prepare(
    conn: &Connection,
    m: &NewMessage<'_>,
    operator: &HashSet<String>,
    stored_at: &str,
) -> Result<LedgerColumns, StoreError> {
    prepare_knowing(conn, m, operator, stored_at, None, None)
}

/// What the ledger works out of a message from the message alone, with neither the database
/// nor the operator's addresses: an import's parsing thread works it out ahead of the writer
/// (see `prepare::Filled`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Ahead {
    recipient_key: String,
    sender_key: String,
    /// Whom it awaits (a JSON array) and how many answers, when it awaits any.
    waits: Option<(String, i64)>,
}

/// [`Ahead`] of `m`.
pub(crate) fn ahead(m: &NewMessage<'_>) -> Ahead {
    // Composed messages wait only once copied (see `Store::mark_copied`).
    let waits = if m.received {
        awaiting::expectation(m.intent, m.recipient, m.meta)
            .and_then(|e| awaiting::outstanding(&e, m.recipient, &[]))
    } else {
        None
    };
    Ahead {
        recipient_key: address_key(m.recipient),
        sender_key: address_key(m.sender),
        waits: waits.map(|w| {
            (
                serde_json::to_string(&w.from).unwrap_or_default(),
                w.needed as i64,
            )
        }),
    }
}

/// [`prepare`], given the parent's row when the caller knows it (an import keeps those of the
/// messages it stored; see `writer`), so that only an unknown parent is looked up, and
/// [`Ahead`] when it was worked out already.
pub(crate) fn prepare_knowing(
    conn: &Connection,
    m: &NewMessage<'_>,
    operator: &HashSet<String>,
    stored_at: &str,
    known: Option<ParentRow>,
    ahead_of_time: Option<&Ahead>,
) -> Result<LedgerColumns, StoreError> {
    let worked_out;
    let Ahead {
        recipient_key,
        sender_key,
        waits,
    } = match ahead_of_time {
        Some(a) => a,
        None => {
            worked_out = ahead(m);
            &worked_out
        }
    };
    let to_me = m.received && operator.contains(recipient_key);
    let parent = match m.parent {
        Some(_) if known.is_some() => known,
        Some(p) => conn
            .prepare_cached(PARENT_BY_ID)?
            .query_row([p], parent_row)
            .optional()?,
        None => None,
    };
    Ok(LedgerColumns {
        // When the desk saw it: what a model wrote into the id is no evidence of when.
        sent_at: stored_at.to_string(),
        to_me,
        awaiting_from: waits.as_ref().map(|w| w.0.clone()),
        awaiting_needed: waits.as_ref().map(|w| w.1),
        // A message naming itself is not waiting for anything to arrive.
        missing_parent: m.parent.is_some_and(|p| p != m.id) && parent.is_none(),
        parent,
        answers: awaiting::is_answer(m.intent),
        asks: m.intent.is_none_or(Intent::expects_response),
        by_operator: !m.received || operator.contains(sender_key),
        received: m.received,
        recipient_key: recipient_key.clone(),
        relayed: None,
        closes: m.intent == Some(&Intent::Close),
    })
}

impl LedgerColumns {
    /// The queue's section the message starts in, as `schema::ledger_state` (by which a
    /// trigger keeps `ledger_state` afterwards) says for a message not relayed or answered yet.
    pub(crate) fn state(&self) -> Option<&'static str> {
        if self.received && !self.to_me && self.relayed.is_none() {
            Some("to_relay")
        } else if self.to_me && self.asks {
            Some("to_me")
        } else if self.awaiting_from.is_some() {
            Some("awaiting")
        } else {
            None
        }
    }

    /// The message is stored relayed, at `now`: `by` (another party) answers it a little later
    /// in the same input, so it was evidently carried (as [`LedgerColumns::after_insert`] infers
    /// when the reply is stored, without updating the row it has just written). Only for a
    /// message to relay: one for the operator is not theirs to carry.
    pub(crate) fn relayed_ahead(&mut self, by: &str, now: &str) {
        if self.received && !self.to_me {
            self.relayed = Some((now.to_string(), inferred_relay(by)));
        }
    }

    /// What the message's arrival changes for the others, once it is stored as `seq` in
    /// `thread`: the wait of the one it answers, whether that one was evidently relayed (a
    /// received reply from another party than its sender answers it), and, for a CLOSE, every
    /// wait of the thread (the spec: "no further messages expected"). With `handoffs`, a
    /// HANDOFF of the thread addressed to this message's sender stops waiting: its new owner
    /// writes in the thread (the caller passes it only for threads with such a wait, so an
    /// import looks only where one may end).
    pub(crate) fn after_insert(
        &self,
        conn: &Connection,
        stored_at: &str,
        thread: &str,
        seq: i64,
        handoffs: bool,
        sender: &str,
    ) -> Result<LedgerChange, StoreError> {
        let mut arrival = LedgerChange {
            wait: ParentWait::Unchanged,
            relayed_parent: false,
            thread_waits_ended: false,
        };
        if self.closes {
            // Those still to relay too: a POLL not carried to every target yet waits for
            // its answers all the same (see `fanout`).
            let n = conn
                .prepare_cached(
                    "UPDATE messages SET awaiting_from = NULL, awaiting_needed = NULL
                     WHERE thread_id = ?1 AND ledger_state IS NOT NULL
                       AND ledger_state IN ('awaiting', 'to_relay')
                       AND awaiting_from IS NOT NULL AND seq <> ?2",
                )?
                .execute(params![thread, seq])?;
            arrival.thread_waits_ended = n > 0;
        } else if handoffs {
            let n = conn
                .prepare_cached(
                    "UPDATE messages SET awaiting_from = NULL, awaiting_needed = NULL
                     WHERE thread_id = ?1 AND ledger_state IS NOT NULL
                       AND ledger_state = 'awaiting' AND intent = 'HANDOFF'
                       AND recipient_key = ?2 AND seq < ?3",
                )?
                .execute(params![thread, address_key(sender), seq])?;
            arrival.thread_waits_ended = n > 0;
        }
        let Some(parent) = &self.parent else {
            return Ok(arrival);
        };
        // A reply that is no answer changes no wait. An answer ends the wait of a message
        // awaiting one answer from anyone; only a POLL counts its targets again.
        if parent.waits && self.answers && !self.closes {
            if parent.poll {
                recompute_awaiting(conn, parent.seq)?;
                arrival.wait = ParentWait::Recounted;
            } else {
                conn.prepare_cached(
                    "UPDATE messages SET awaiting_from = NULL, awaiting_needed = NULL
                     WHERE seq = ?1",
                )?
                .execute([parent.seq])?;
                arrival.wait = ParentWait::Ended;
            }
        } else if parent.waits && self.closes {
            arrival.wait = ParentWait::Ended;
        }
        if parent.to_me && self.by_operator {
            conn.prepare_cached(
                "UPDATE messages SET answered_at = ?2 WHERE seq = ?1 AND answered_at IS NULL",
            )?
            .execute(params![parent.seq, stored_at])?;
        }
        if parent.to_relay && self.received && party_hash(sender) != parent.sender {
            // A POLL goes to each target's window: the reply shows only its sender's had it.
            if parent.poll {
                let relayed = super::fanout::inferred(conn, parent.seq, sender, stored_at)?;
                arrival.relayed_parent = relayed == Some(true);
                return Ok(arrival);
            }
            // Its state as `schema::ledger_state` reads it once relayed (it was to relay, so
            // not the operator's), written with the relay: the row and its indexes change
            // once, and the trigger that keeps the state finds nothing left to do. An import
            // of a transcript relays nearly every message it stores this way.
            let n = conn
                .prepare_cached(
                    "UPDATE messages SET relayed_at = ?2, relay_method = ?3,
                        ledger_state = CASE WHEN settled_at IS NULL AND awaiting_from IS NOT NULL
                                       THEN 'awaiting' END
                     WHERE seq = ?1 AND relayed_at IS NULL",
                )?
                .execute(params![parent.seq, stored_at, inferred_relay(sender)])?;
            arrival.relayed_parent = n > 0;
        }
        Ok(arrival)
    }
}

/// A message arrived after replies naming it: those replies no longer miss their parent, the
/// message's own wait counts them, and one received from another party than its sender shows
/// it was carried already (see [`LedgerColumns::after_insert`]).
pub(crate) fn parent_arrived(
    conn: &Connection,
    seq: i64,
    id: &str,
    now: &str,
) -> Result<(), StoreError> {
    conn.prepare_cached(
        "UPDATE messages SET missing_parent = 0 WHERE parent_id = ?1 AND missing_parent = 1",
    )?
    .execute([id])?;
    if poll_to_relay(conn, seq)? {
        // A POLL: each of its targets that answered had it, and only those.
        let answerers: Vec<String> = conn
            .prepare_cached(
                "SELECT r.sender FROM messages m JOIN messages r ON r.parent_id = m.id
                 WHERE m.seq = ?1 AND r.direction = 'received'
                   AND lower(trim(r.sender)) <> lower(trim(m.sender))
                 ORDER BY r.seq",
            )?
            .query_map([seq], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        for answerer in answerers {
            super::fanout::inferred(conn, seq, &answerer, now)?;
        }
        return recompute_awaiting(conn, seq);
    }
    let answerer: Option<String> = conn
        .prepare_cached(
            "SELECT r.sender FROM messages m JOIN messages r ON r.parent_id = m.id
             WHERE m.seq = ?1 AND m.direction = 'received' AND m.to_me = 0
               AND m.relayed_at IS NULL AND r.direction = 'received'
               AND lower(trim(r.sender)) <> lower(trim(m.sender))
             ORDER BY r.seq LIMIT 1",
        )?
        .query_row([seq], |r| r.get(0))
        .optional()?;
    if let Some(answerer) = answerer {
        conn.prepare_cached(
            "UPDATE messages SET relayed_at = ?2, relay_method = ?3
             WHERE seq = ?1 AND relayed_at IS NULL",
        )?
        .execute(params![seq, now, inferred_relay(&answerer)])?;
    }
    recompute_awaiting(conn, seq)
}

/// Whether message `seq` is a POLL received for someone else and not relayed yet.
fn poll_to_relay(conn: &Connection, seq: i64) -> Result<bool, StoreError> {
    let found: Option<i64> = conn
        .prepare_cached(
            "SELECT 1 FROM messages WHERE seq = ?1 AND intent = 'POLL'
               AND direction = 'received' AND to_me = 0 AND relayed_at IS NULL",
        )?
        .query_row([seq], |r| r.get(0))
        .optional()?;
    Ok(found.is_some())
}

/// Computes again who message `seq` still awaits, from its intent and every stored reply.
/// A composed message not copied yet awaits nothing.
pub(crate) fn recompute_awaiting(conn: &Connection, seq: i64) -> Result<(), StoreError> {
    /// What the wait is computed from: id, intent, recipient, meta, direction, status, and
    /// whether something later in the thread ended it.
    type Row = (String, Option<String>, String, String, String, String, bool);
    let row: Option<Row> = conn
        .prepare_cached(
            // A CLOSE later in its thread ends every wait there; a HANDOFF's ends once its
            // new owner (its recipient) writes in the thread after it.
            "SELECT m.id, m.intent, m.recipient, m.meta, m.direction, m.status,
                    EXISTS (SELECT 1 FROM messages l WHERE l.thread_id = m.thread_id
                        AND l.seq > m.seq AND (l.intent = 'CLOSE' OR (m.intent = 'HANDOFF'
                            AND lower(trim(l.sender)) = m.recipient_key)))
             FROM messages m WHERE m.seq = ?1",
        )?
        .query_row([seq], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
                r.get(6)?,
            ))
        })
        .optional()?;
    let Some((id, intent, recipient, meta, direction, status, ended)) = row else {
        return Ok(());
    };
    let waits = if (direction == "composed" && status == "draft") || ended {
        None
    } else {
        let intent = intent.as_deref().map(Intent::parse);
        match awaiting::expectation(intent.as_ref(), &recipient, &meta_blocks(&meta)) {
            Some(e) => {
                let deadline = crate::protocol::poll::deadline(&meta_blocks(&meta));
                outstanding_now(conn, &e, &id, &recipient, deadline)?
            }
            None => None,
        }
    };
    conn.prepare_cached(
        "UPDATE messages SET awaiting_from = ?2, awaiting_needed = ?3 WHERE seq = ?1",
    )?
    .execute(params![
        seq,
        waits
            .as_ref()
            .map(|w| serde_json::to_string(&w.from).unwrap_or_default()),
        waits.as_ref().map(|w| w.needed as i64),
    ])?;
    Ok(())
}

/// Who message `id` still awaits, from the replies stored under it. A response after a
/// POLL's `deadline` is late: as in the tally (`protocol::poll`), it answers nothing, so a
/// poll past its deadline without its quorum still awaits until it is closed.
fn outstanding_now(
    conn: &Connection,
    e: &Expectation,
    id: &str,
    recipient: &str,
    deadline: Option<jiff::Timestamp>,
) -> Result<Option<awaiting::Outstanding>, StoreError> {
    let rows: Vec<(String, Option<Intent>, String)> = conn
        .prepare_cached("SELECT sender, intent, sent_at FROM messages WHERE parent_id = ?1")?
        .query_map([id], |r| {
            let intent: Option<String> = r.get(1)?;
            Ok((r.get(0)?, intent.as_deref().map(Intent::parse), r.get(2)?))
        })?
        .collect::<Result<_, _>>()?;
    let replies: Vec<(String, Option<Intent>)> = rows
        .into_iter()
        .filter(|(_, intent, arrived)| {
            // Only a POLL has a deadline; the time is read only then. It is when the reply
            // arrived, whatever its id says.
            deadline.is_none_or(|_| {
                let time = crate::protocol::validate::parse_time(arrived);
                !crate::protocol::poll::is_late(intent.as_ref(), time, deadline)
            })
        })
        .map(|(sender, intent, _)| (sender, intent))
        .collect();
    Ok(awaiting::outstanding(e, recipient, &replies))
}

/// The `meta` column (see `meta_column`) read back; what cannot be read is left out (in the
/// JSON form older databases hold, block by block).
pub(crate) fn meta_blocks(stored: &str) -> Vec<MetaBlock> {
    if !stored.starts_with('[') {
        return crate::store::meta_column::parse(stored).unwrap_or_default();
    }
    let Ok(serde_json::Value::Array(blocks)) = serde_json::from_str(stored) else {
        return Vec::new();
    };
    blocks
        .iter()
        .filter_map(|b| {
            let namespace = b.get("namespace")?.as_str()?.to_string();
            let entries = b
                .get("entries")?
                .as_array()?
                .iter()
                .filter_map(|e| {
                    let pair = e.as_array()?;
                    Some((
                        pair.first()?.as_str()?.to_string(),
                        pair.get(1)?.as_str()?.to_string(),
                    ))
                })
                .collect();
            Some(MetaBlock { namespace, entries })
        })
        .collect()
}

impl Store {
    /// Makes the ledger's "addressed to me" follow `addresses` (the config's
    /// `[operator] addresses`). Nothing is written when they are what the ledger already knows,
    /// or when the database is read-only (it then keeps the addresses it was last given).
    /// Returns whether anything changed.
    pub fn set_operator_addresses(&mut self, addresses: &[String]) -> Result<bool, StoreError> {
        let want: HashSet<String> = addresses
            .iter()
            .map(|a| address_key(a))
            .filter(|a| !a.is_empty())
            .collect();
        if operator_addresses(&self.conn)? == want || self.read_only.is_some() {
            return Ok(false);
        }
        self.write(|store| {
            let tx = store.begin_write()?;
            tx.execute("DELETE FROM operator_addresses", [])?;
            for a in &want {
                tx.execute("INSERT INTO operator_addresses (address) VALUES (?1)", [a])?;
            }
            tx.execute(
                "UPDATE messages SET to_me = direction = 'received' AND recipient_key IN
                    (SELECT address FROM operator_addresses)
                 WHERE to_me <> (direction = 'received' AND recipient_key IN
                    (SELECT address FROM operator_addresses))",
                [],
            )?;
            tx.commit()?;
            Ok(true)
        })
    }

    /// Records that message `id` was copied for its recipient by `method` (as the copy chain
    /// reported it). Returns whether it was waiting to be relayed.
    pub fn mark_relayed(&mut self, id: &str, method: &str) -> Result<bool, StoreError> {
        self.write(|store| {
            let tx = store.begin_write()?;
            let n = tx.execute(
                "UPDATE messages SET relayed_at = ?2, relay_method = ?3
                 WHERE id = ?1 AND direction = 'received' AND to_me = 0 AND relayed_at IS NULL",
                params![id, now(), method],
            )?;
            tx.commit()?;
            Ok(n > 0)
        })
    }

    /// Records that message `id` was delivered by `method` and taken by its recipient (a peer
    /// answered a POST with 200). As [`Store::mark_relayed`] for a message waiting to be
    /// relayed; one relayed before another way (copied for a chat window) gets this delivery
    /// as its record instead, time and method: the one its recipient confirmed. Returns
    /// whether it was waiting to be relayed.
    pub fn mark_delivered(&mut self, id: &str, method: &str) -> Result<bool, StoreError> {
        self.write(|store| {
            let tx = store.begin_write()?;
            let waiting: Option<bool> = tx
                .query_row(
                    "SELECT relayed_at IS NULL FROM messages
                     WHERE id = ?1 AND direction = 'received' AND to_me = 0",
                    [id],
                    |r| r.get(0),
                )
                .optional()?;
            if waiting.is_some() {
                tx.execute(
                    "UPDATE messages SET relayed_at = ?2, relay_method = ?3 WHERE id = ?1",
                    params![id, now(), method],
                )?;
            }
            tx.commit()?;
            Ok(waiting == Some(true))
        })
    }

    /// Records that message `id` arrived (or, composed, was sent) at `at`, not when it was
    /// stored: for a demo or a test that replays a history whose times it knows. The times
    /// shown and the deadlines judged follow; its thread keeps its place in the list (by when
    /// the desk last stored something in it). Returns whether the message is stored.
    pub fn set_arrival(&mut self, id: &str, at: jiff::Timestamp) -> Result<bool, StoreError> {
        let id = crate::protocol::id::key(id).into_owned();
        let at = jiff::fmt::temporal::DateTimePrinter::new()
            .precision(Some(6))
            .timestamp_to_string(&at);
        self.write(|store| {
            let tx = store.begin_write()?;
            let n = tx.execute(
                "UPDATE messages SET received_at = ?2, sent_at = ?2 WHERE id = ?1",
                params![id, at],
            )?;
            // Whether it came before its POLL's deadline depends on when it arrived.
            let parent: Option<i64> = tx
                .query_row(
                    "SELECT p.seq FROM messages m JOIN messages p ON p.id = m.parent_id
                     WHERE m.id = ?1",
                    [&id],
                    |r| r.get(0),
                )
                .optional()?;
            if let Some(seq) = parent {
                recompute_awaiting(&tx, seq)?;
            }
            tx.commit()?;
            Ok(n > 0)
        })
    }

    /// The ledger of message `id` (its row's ledger columns; a POLL's relays per target).
    pub fn delivery(&self, id: &str) -> Result<Option<Delivery>, StoreError> {
        let mut found = self
            .conn
            .prepare_cached(&format!(
                "SELECT ledger_state, sent_at, relayed_at, relay_method, awaiting_from,
                            awaiting_needed, missing_parent, to_me, {settled}, seq,
                            intent IS NOT NULL AND intent = 'POLL'
                     FROM messages WHERE id = ?1",
                settled = if self.can_settle() {
                    "settled_at, settled_how"
                } else {
                    "NULL, NULL"
                }
            ))?
            .query_row([id], |r| {
                let at: Option<String> = r.get(2)?;
                let how: Option<String> = r.get(3)?;
                let from: Option<String> = r.get(4)?;
                let delivery = Delivery {
                    state: r.get(0)?,
                    sent_at: r.get(1)?,
                    relayed: at.zip(how),
                    awaiting_from: from
                        .and_then(|f| serde_json::from_str(&f).ok())
                        .unwrap_or_default(),
                    awaiting_needed: r.get(5)?,
                    missing_parent: r.get(6)?,
                    to_me: r.get(7)?,
                    settled: r.get::<_, Option<String>>(8)?.zip(r.get(9)?),
                    targets: Vec::new(),
                };
                let poll: bool = r.get(11)?;
                Ok((delivery, poll.then_some(r.get::<_, i64>(10)).transpose()?))
            })
            .optional()?;
        if let Some((delivery, Some(seq))) = found.as_mut() {
            let rows = self.keeps_target_relays();
            delivery.targets = super::fanout::read(&self.conn, *seq, rows)?.unwrap_or_default();
        }
        Ok(found.map(|(d, _)| d))
    }
}
