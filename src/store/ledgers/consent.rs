//! The consent ledger read from the stored messages: every `meta: privacy` grant and every
//! REVOKE, handed to [`crate::protocol::consent`], which decides what is in force. Computed
//! when asked (one pass over the messages that state consent) rather than kept in a table, so
//! it can never disagree with the messages, an erasure or a change of trust.

use std::collections::HashSet;

use jiff::Timestamp;
use rusqlite::OptionalExtension;

use crate::protocol::consent::{self, Ledger, Record, Statement};
use crate::protocol::{Intent, MetaBlock};
use crate::store::{Store, StoreError};

/// A stored message that states or withdraws consent.
struct Row {
    seq: i64,
    thread: String,
    message: String,
    time: Timestamp,
    received: Timestamp,
    intent: Option<Intent>,
    meta: Vec<MetaBlock>,
    verified: bool,
}

/// Messages that may state or withdraw consent. The stored blocks name their namespace (see
/// `meta_column`); the LIKE only narrows the scan, the protocol module reads the blocks.
const STATES: &str = "SELECT m.seq, m.thread_id, m.id, m.sent_at, m.received_at, m.intent, m.meta
     FROM messages m WHERE (m.intent = 'REVOKE' OR m.meta LIKE '%privacy%')";

/// The messages that may name a consent id: both keys that do (`Consent-ID` and
/// `Original-Consent-ID`, see `protocol::consent::named_ids`) hold these bytes, in either form
/// of the `meta` column. Written as the `messages_consent_ids` index's own condition, so that
/// SQLite reads that index instead of every message.
const NAMES_AN_ID: &str = "instr(m.meta, 'Consent-ID') > 0";

/// The statements whose META holds one of the needles of `?1` (see [`needles`]), in order.
fn naming_ids() -> String {
    format!(
        "{STATES} AND {NAMES_AN_ID} AND EXISTS (SELECT 1 FROM json_each(?1) j
                                                WHERE instr(m.meta, j.value) > 0)
         ORDER BY m.seq"
    )
}

/// Rounds of following consent ids from one thread (see [`Store::consent_for_thread`]) before
/// the whole ledger is read instead: each round reads every message that names a consent id
/// once, and a chain of transfers this long is no conversation's.
const MAX_ROUNDS: usize = 4;

/// The most consent ids looked for in one round; more (an envelope can name thousands) and
/// the whole ledger is read instead, since each row is searched for each id.
const MAX_IDS: usize = 64;

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
        let rows = self.statement_rows(&format!("{STATES} ORDER BY m.seq"), [], now)?;
        Ok(consent::ledger(
            statements(&rows).chain(shorten(extra)),
            now,
        ))
    }

    /// The consent in force for `thread` at clock `now`, as [`Store::consent_ledger`] would
    /// answer it once the `extra` statements (say, an envelope being composed) are stored
    /// too: what relaying or sending personal data in that thread asks, on every copy.
    ///
    /// Only the statements that can bear on it are read: the thread's own (by its index),
    /// then those naming a consent id they name, and so on through transfers. A thread that
    /// names no consent id costs an index look-up instead of a pass over every message; each
    /// step through ids reads only the messages that name one (by their own index).
    pub fn consent_for_thread<'a>(
        &self,
        thread: &str,
        now: Timestamp,
        extra: impl IntoIterator<Item = Statement<'a>>,
    ) -> Result<Option<Record>, StoreError> {
        let extra: Vec<Statement<'a>> = extra.into_iter().collect();
        let mut rows = self.statement_rows(
            &format!("{STATES} AND m.thread_id = ?1 ORDER BY m.seq"),
            [thread],
            now,
        )?;
        let mut seen: HashSet<i64> = rows.iter().map(|r| r.seq).collect();
        let mut asked: HashSet<String> = HashSet::new();
        let mut next: Vec<String> = (extra.iter().flat_map(|s| consent::named_ids(s.meta)))
            .chain(rows.iter().flat_map(|r| consent::named_ids(&r.meta)))
            .map(str::to_string)
            .collect();
        let mut rounds = 0;
        loop {
            next.retain(|id| asked.insert(id.clone()));
            if next.is_empty() {
                break;
            }
            rounds += 1;
            if rounds > MAX_ROUNDS || next.len() > MAX_IDS {
                rows = self.statement_rows(&format!("{STATES} ORDER BY m.seq"), [], now)?;
                break;
            }
            let found = self.statement_rows(&naming_ids(), [needles(&next)], now)?;
            next.clear();
            for r in found {
                if seen.insert(r.seq) {
                    next.extend(consent::named_ids(&r.meta).map(str::to_string));
                    rows.push(r);
                }
            }
        }
        let ledger = consent::ledger(statements(&rows).chain(shorten(extra)), now);
        Ok(ledger.for_thread(thread).cloned())
    }

    /// The messages `sql` (a [`STATES`] query) selects, read as statements.
    fn statement_rows(
        &self,
        sql: &str,
        params: impl rusqlite::Params,
        now: Timestamp,
    ) -> Result<Vec<Row>, StoreError> {
        let mut stmt = self.conn.prepare_cached(sql)?;
        let raw = stmt.query_map(params, |r| {
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
                seq,
                thread,
                time: time.parse().unwrap_or(now),
                received: received.parse().unwrap_or(now),
                message,
                intent,
                meta: super::delivery::meta_blocks(&meta),
                verified,
            });
        }
        Ok(rows)
    }

    /// Whether the REVOKE stored as `seq` carries a signature verified with a trusted key: its
    /// verdict in the trust store (see `keys`), judged on receipt and again when keys change.
    ///
    /// A valid signature is not enough: the key must be one the operator trusts now and
    /// trusted before the revocation's signature arrived (with it, or on a signed copy
    /// imported later, as `unverified-revocation` advises). A `did:key` names its own key and a key
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
                   AND k.first_seen < coalesce(m.signed_at, m.received_at)",
            )?
            .query_row([seq], |r| r.get(0))
            .optional()?;
        Ok(trusted.is_some())
    }
}

/// The rows as the protocol module reads them.
fn statements(rows: &[Row]) -> impl Iterator<Item = Statement<'_>> {
    rows.iter().map(|r| Statement {
        thread: &r.thread,
        message: &r.message,
        time: r.time,
        received: r.received,
        intent: r.intent.as_ref(),
        meta: &r.meta,
        verified: r.verified,
    })
}

/// `extra` with its borrows shortened to the rows', which `chain` needs (without it, the
/// rows would have to outlive `'a`). Not an identity to the borrow checker.
#[allow(clippy::map_identity)]
fn shorten<'r, 'a: 'r>(
    extra: impl IntoIterator<Item = Statement<'a>>,
) -> impl Iterator<Item = Statement<'r>> {
    extra.into_iter().map(|s| -> Statement<'r> { s })
}

/// What to look for in the `meta` column for `ids` (a JSON array for `json_each`): each id as
/// written, and as the JSON form of the column escapes it where that differs. A match only
/// narrows the rows read; the protocol module decides what they say.
fn needles(ids: &[String]) -> String {
    let mut all: Vec<String> = Vec::with_capacity(ids.len() * 2);
    for id in ids {
        all.push(id.clone());
        let quoted = serde_json::to_string(id).unwrap_or_default();
        let escaped = quoted
            .strip_prefix('"')
            .and_then(|q| q.strip_suffix('"'))
            .unwrap_or_default();
        if escaped != id {
            all.push(escaped.to_string());
        }
    }
    serde_json::to_string(&all).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use rusqlite::params;

    use super::*;
    use crate::protocol::Options;

    /// Following consent ids reads the messages that name one, by their index, not every
    /// message: the query holds the index's condition as written.
    #[test]
    fn ids_are_followed_through_the_index_of_messages_naming_one() {
        let store = Store::open_in_memory().unwrap();
        let plan =
            crate::store::test_support::query_plan(&store.conn, &naming_ids(), ["[]"]).join("\n");
        assert!(plan.contains("USING INDEX messages_consent_ids"), "{plan}");
    }

    /// An envelope in `thread` stating `meta` (`Key: value` lines of `meta: privacy`).
    fn envelope(thread: &str, message: &str, intent: &str, meta: &str) -> String {
        format!(
            "[[CLAUDE→CHATGPT v1]]\nuser: kalle\nsession: 2025-10-09T16Z a7f3d1\n\
             thread: {thread}\nmessage: {message}\ncontext: consent\nintent: {intent}\n\n\
             meta: privacy\n{meta}\nbody: |\n  text\nsig: none\n[[END]]\n"
        )
    }

    /// A consent id that JSON escapes is still followed where the `meta` column holds the
    /// JSON form (as databases from before the compact form do).
    #[test]
    fn ids_are_followed_into_the_json_form_of_the_meta_column() {
        let (a, b) = ("01K0000000000000000000000A", "01K0000000000000000000000B");
        let mut store = Store::open_in_memory().unwrap();
        let text = envelope(
            a,
            "01K7000000000000000000000A",
            "REQUEST",
            "Consent: explicit_no\nConsent-ID: c\"1\\x",
        ) + &envelope(
            b,
            "01K7000000000000000000000B",
            "HANDOFF",
            "Consent: transferred_with_approval\nOriginal-Consent-ID: c\"1\\x",
        );
        store.import_text("t", &text, &Options::default()).unwrap();
        let rows: Vec<(i64, String)> = (store.conn.prepare("SELECT seq, meta FROM messages"))
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        for (seq, meta) in rows {
            let blocks = super::super::delivery::meta_blocks(&meta);
            let json: Vec<serde_json::Value> = (blocks.iter())
                .map(|m| serde_json::json!({"namespace": m.namespace, "entries": m.entries}))
                .collect();
            let json = serde_json::to_string(&json).unwrap();
            assert!(json.contains(r#"c\"1\\x"#), "{json}");
            (store.conn)
                .execute(
                    "UPDATE messages SET meta = ?2 WHERE seq = ?1",
                    params![seq, json],
                )
                .unwrap();
        }
        let now = Timestamp::now();
        let scoped = store.consent_for_thread(b, now, []).unwrap().unwrap();
        // Transferred from a refusal: not explicit, which only the original in the other
        // thread tells.
        assert!(!scoped.explicit, "{scoped:?}");
        assert_eq!(
            Some(&scoped),
            store.consent_ledger(now).unwrap().for_thread(b)
        );
    }
}
