//! The consent ledger read from the stored messages: every `meta: privacy` grant and every
//! REVOKE, handed to [`crate::protocol::consent`], which decides what is in force. Computed
//! when asked (one pass over the messages that state consent) rather than kept in a table, so
//! it can never disagree with the messages, an erasure or a change of trust.

use jiff::Timestamp;
use rusqlite::OptionalExtension;

use super::{Store, StoreError};
use crate::protocol::consent::{self, Ledger, Statement};
use crate::protocol::{Intent, MetaBlock};

/// A stored message that states or withdraws consent.
struct Row {
    thread: String,
    message: String,
    time: Timestamp,
    received: Timestamp,
    intent: Option<Intent>,
    meta: Vec<MetaBlock>,
    verified: bool,
}

impl Store {
    /// Every consent the stored messages state, at clock `now`. A REVOKE counts only when
    /// its signature was verified with a trusted key (see [`Store::revoke_verified`]); each
    /// message's time is its id's (else when it was stored), and when it was stored is kept
    /// apart for a REVOKE that takes effect on receipt (`Effective: immediate`).
    pub fn consent_ledger(&self, now: Timestamp) -> Result<Ledger, StoreError> {
        self.consent_ledger_with(now, [])
    }

    /// The ledger as it will read once the `extra` statements (say, an envelope being
    /// composed) are stored too.
    pub fn consent_ledger_with<'a>(
        &self,
        now: Timestamp,
        extra: impl IntoIterator<Item = Statement<'a>>,
    ) -> Result<Ledger, StoreError> {
        // The stored blocks name their namespace (see `meta_column`); the LIKE only narrows
        // the scan, the protocol module reads the blocks themselves.
        let mut stmt = self.conn.prepare_cached(
            "SELECT m.seq, m.thread_id, m.id, m.sent_at, m.received_at, m.intent, m.meta
             FROM messages m
             WHERE m.intent = 'REVOKE' OR m.meta LIKE '%privacy%'
             ORDER BY m.seq",
        )?;
        let raw = stmt.query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, String>(4)?,
                r.get::<_, Option<String>>(5)?,
                r.get::<_, String>(6)?,
            ))
        })?;
        let mut rows = Vec::new();
        for row in raw {
            let (seq, thread, message, time, received, intent, meta) = row?;
            let intent = intent.as_deref().map(Intent::parse);
            let verified = intent == Some(Intent::Revoke) && self.revoke_verified(seq)?;
            rows.push(Row {
                thread,
                time: time.parse().unwrap_or(now),
                received: received.parse().unwrap_or(now),
                message,
                intent,
                meta: super::delivery::meta_blocks(&meta),
                verified,
            });
        }
        let stored = rows.iter().map(|r| Statement {
            thread: &r.thread,
            message: &r.message,
            time: r.time,
            received: r.received,
            intent: r.intent.as_ref(),
            meta: &r.meta,
            verified: r.verified,
        });
        // Not an identity to the borrow checker: it shortens the extra statements' borrows to
        // the rows', which `chain` needs (without it, `rows` would have to outlive `'a`).
        #[allow(clippy::map_identity)]
        let extra = extra.into_iter().map(|s| -> Statement<'_> { s });
        Ok(consent::ledger(stored.chain(extra), now))
    }

    /// Whether the REVOKE stored as `seq` carries a signature verified with a trusted key: its
    /// verdict in the trust store (see `keys`), judged on receipt and again when keys change.
    ///
    /// A valid signature is not enough: the key must be one the operator trusts now and
    /// trusted before the revocation arrived. A `did:key` names its own key and a key
    /// announced in the revocation itself is pinned as it arrives, so anyone could make
    /// either; a key marked changed is in doubt. (Import says the same of each revocation
    /// as it arrives: `unverified-revocation`.)
    fn revoke_verified(&self, seq: i64) -> Result<bool, StoreError> {
        let trusted: Option<i64> = self
            .conn
            .prepare_cached(
                "SELECT 1 FROM signatures s
                 JOIN keys k ON k.pkid = s.pkid
                 JOIN messages m ON m.seq = s.seq
                 WHERE s.seq = ?1 AND s.state = 'verified' AND k.state = 'trusted'
                   AND k.first_seen < m.received_at",
            )?
            .query_row([seq], |r| r.get(0))
            .optional()?;
        Ok(trusted.is_some())
    }
}
