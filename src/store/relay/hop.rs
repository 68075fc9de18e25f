//! The relay hop: after the clipboard gained envelopes and they were imported, whether
//! crosstalk vouches for putting one on the clipboard for its recipient, or why not.
//!
//! Only one new envelope, valid, for someone else is relayed by itself. Anything else leaves
//! the clipboard as the operator copied it, with the reason said loudly: the operator must
//! not paste something crosstalk did not vouch for without noticing.
//!
//! A POLL goes to each of its targets' windows (see `fanout`): it is put up for the first
//! target it did not go to yet, and waits to be put up for each of the others in turn. What
//! each window gets (fence, preamble, primer) and whether it goes through a window at all is
//! the delivery's, above the store (`transport::route`); the store gives it the text a copy
//! carries ([`Store::relay_text`]: with this desk's audit hop) and what was carried before.

use rusqlite::OptionalExtension;

use crate::store::{ImportReport, Outcome, Store, StoreError};

/// What a hop does with an import's envelopes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HopDecision {
    /// Put this message up for its recipient.
    Relay(String),
    /// Several new envelopes for others: put up one at a time, on the operator's key.
    Several(Vec<String>),
    /// Leave the clipboard alone, for this reason (a sentence, safe to show).
    Refuse(String),
    /// Nothing new (a copy of something stored): leave the clipboard alone, quietly.
    Nothing,
}

/// Whether anything was carried to recipient ?1 other than message ?2. The first condition is
/// the partial index's (`messages_carried`), word for word, so that SQLite reads that index
/// rather than every message.
const ADDRESSED_BEFORE: &str = "SELECT 1 FROM messages
    WHERE (relayed_at IS NOT NULL OR direction = 'composed')
      AND recipient_key = lower(?1) AND id <> ?2
      AND (relayed_at IS NOT NULL OR (direction = 'composed' AND status <> 'draft'))
    LIMIT 1";

/// Whether a POLL other than message ?2 was carried to target ?1 (as addresses are compared):
/// a POLL's copies go to its targets, not to its banner's recipient (see `fanout`).
const TARGET_BEFORE: &str = "SELECT 1 FROM message_relays
    WHERE target_key = ?1
      AND seq <> coalesce((SELECT seq FROM messages WHERE id = ?2), -1)
    LIMIT 1";

impl Store {
    /// The hop's decision for `report`, the import of one clipboard text.
    pub(crate) fn hop_decision(&self, report: &ImportReport) -> Result<HopDecision, StoreError> {
        let line = |i: &crate::store::ImportItem| i.span.start_line;
        for item in &report.items {
            match item.outcome {
                Outcome::Conflict => {
                    return Ok(HopDecision::Refuse(format!(
                        "the envelope at line {} reuses the id of a stored message with other content (id-conflict)",
                        line(item)
                    )));
                }
                Outcome::Rejected => {
                    let why = (item.diagnostics.iter())
                        .find(|d| d.is_error())
                        .map(|d| {
                            format!(
                                "{}:{}: {} [{}]",
                                d.line,
                                d.column,
                                d.message,
                                d.code.as_str()
                            )
                        })
                        .unwrap_or_else(|| "it has errors".into());
                    return Ok(HopDecision::Refuse(format!(
                        "the envelope at line {} is invalid: {why}",
                        line(item)
                    )));
                }
                _ => {}
            }
            if let Some(d) = item.diagnostics.iter().find(|d| d.is_error()) {
                return Ok(HopDecision::Refuse(format!(
                    "the envelope at line {} has an error: {}:{}: {} [{}]",
                    line(item),
                    d.line,
                    d.column,
                    d.message,
                    d.code.as_str()
                )));
            }
        }
        // New envelopes, and copies of stored ones still waiting to be relayed (pasted into
        // the desk before, or sent from a companion's spool): copying one again means
        // carrying it on. One already relayed is quietly left alone.
        let mut candidates = 0;
        let mut to_relay = Vec::new();
        for item in &report.items {
            let Some(id) = item.message.as_deref() else {
                continue;
            };
            let state = || -> Result<Option<String>, StoreError> {
                Ok(self.delivery(id)?.and_then(|d| d.state))
            };
            match item.outcome {
                Outcome::Imported => {
                    candidates += 1;
                    if state()?.as_deref() == Some("to_relay") {
                        to_relay.push(id.to_string());
                    }
                }
                Outcome::Duplicate if state()?.as_deref() == Some("to_relay") => {
                    candidates += 1;
                    to_relay.push(id.to_string());
                }
                _ => {}
            }
        }
        to_relay.dedup();
        Ok(match (candidates, to_relay.len()) {
            (0, _) => HopDecision::Nothing,
            (1, 1) => HopDecision::Relay(to_relay.remove(0)),
            (1, 0) => HopDecision::Refuse("the envelope is addressed to you (r answers it)".into()),
            (_, 0) => {
                HopDecision::Refuse(format!("{candidates} new envelopes, none for someone else"))
            }
            _ => HopDecision::Several(to_relay),
        })
    }

    /// Whether anything was carried to `recipient` before (relayed to it, or composed for it
    /// and copied), other than message `except`: the first envelope a window gets comes with
    /// its contact's preamble.
    pub(crate) fn addressed_before(
        &self,
        recipient: &str,
        except: &str,
    ) -> Result<bool, StoreError> {
        let found: Option<i64> = self
            .conn
            .prepare_cached(ADDRESSED_BEFORE)?
            .query_row(rusqlite::params![recipient, except], |r| r.get(0))
            .optional()?;
        if found.is_some() || !self.keeps_target_relays() {
            return Ok(found.is_some());
        }
        let key = crate::store::delivery::address_key(recipient);
        let found: Option<i64> = self
            .conn
            .prepare_cached(TARGET_BEFORE)?
            .query_row(rusqlite::params![key, except], |r| r.get(0))
            .optional()?;
        Ok(found.is_some())
    }
}

impl Store {
    /// The envelope text a copy of `m` carries: its canonical form; with an audit name, an
    /// envelope being relayed (received, for someone else) gets this desk's `meta: audit` hop
    /// appended, which leaves its signature intact.
    pub fn relay_text(
        &self,
        m: &crate::store::StoredMessage,
        audit_by: Option<&str>,
        now: jiff::Timestamp,
    ) -> Result<String, StoreError> {
        Ok(self.relay_text_and_hop(m, audit_by, now)?.0)
    }

    /// [`Store::relay_text`], and whether this desk's audit hop went into it.
    pub(crate) fn relay_text_and_hop(
        &self,
        m: &crate::store::StoredMessage,
        audit_by: Option<&str>,
        now: jiff::Timestamp,
    ) -> Result<(String, bool), StoreError> {
        let by = match audit_by {
            Some(by) if self.gets_hop(m)? => by,
            _ => return Ok((m.carried(), false)),
        };
        let relay = crate::protocol::audit::Relay {
            by,
            received_at: &m.received_at,
            now,
        };
        let text = crate::protocol::carry::carried(&m.raw, &m.canonical, Some(&relay));
        Ok((text, true))
    }

    /// Whether a copy of `m` gets this desk's audit hop: it was received for someone else.
    fn gets_hop(&self, m: &crate::store::StoredMessage) -> Result<bool, StoreError> {
        Ok(m.direction == "received" && self.delivery(&m.id)?.is_some_and(|d| !d.to_me))
    }
}

/// One envelope of a several-envelope copy, waiting to be put up.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Waiting {
    /// The stored message.
    pub message: String,
    /// Its recipient.
    pub to: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_support::query_plan;

    #[test]
    fn whether_a_window_had_an_envelope_before_reads_the_carried_index() {
        let store = Store::open_in_memory().unwrap();
        let plan = query_plan(&store.conn, ADDRESSED_BEFORE, ["x", "y"]);
        assert!(
            plan.iter().any(|l| l.contains("INDEX messages_carried")),
            "{plan:#?}"
        );
        let plan = query_plan(&store.conn, TARGET_BEFORE, ["x", "y"]);
        assert!(
            plan.iter()
                .any(|l| l.contains("INDEX message_relays_target")),
            "{plan:#?}"
        );
    }
}
