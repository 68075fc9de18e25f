//! The relay hop: after the clipboard gained envelopes and they were imported, whether
//! crosstalk vouches for putting one on the clipboard for its recipient, or why not.
//!
//! Only one new envelope, valid, for someone else is relayed by itself. Anything else leaves
//! the clipboard as the operator copied it, with the reason said loudly: the operator must
//! not paste something crosstalk did not vouch for without noticing.

use rusqlite::OptionalExtension;

use super::{ImportReport, Outcome, Store, StoreError};

/// What a hop does with an import's envelopes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HopDecision {
    /// Put this message up for its recipient.
    Relay(String),
    /// Several new envelopes for others: put up one at a time, on the operator's key.
    Several(Vec<String>),
    /// Leave the clipboard alone, for this reason (a sentence, safe to show).
    Refuse(String),
    /// Nothing new (a copy of something stored): leave the clipboard alone, quietly.
    Nothing,
}

impl Store {
    /// The hop's decision for `report`, the import of one clipboard text.
    pub fn hop_decision(&self, report: &ImportReport) -> Result<HopDecision, StoreError> {
        let line = |i: &super::ImportItem| i.span.start_line;
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
        let new: Vec<&str> = (report.items.iter())
            .filter(|i| i.outcome == Outcome::Imported)
            .filter_map(|i| i.message.as_deref())
            .collect();
        if new.is_empty() {
            return Ok(HopDecision::Nothing);
        }
        let mut to_relay = Vec::new();
        for id in &new {
            let state = self.delivery(id)?.and_then(|d| d.state);
            if state.as_deref() == Some("to_relay") {
                to_relay.push(id.to_string());
            }
        }
        Ok(match (new.len(), to_relay.len()) {
            (1, 1) => HopDecision::Relay(to_relay.remove(0)),
            (1, 0) => HopDecision::Refuse("the envelope is addressed to you (r answers it)".into()),
            (_, 0) => HopDecision::Refuse(format!(
                "{} new envelopes, none for someone else",
                new.len()
            )),
            _ => HopDecision::Several(to_relay),
        })
    }

    /// Whether anything was carried to `recipient` before (relayed to it, or composed for it
    /// and copied), other than message `except`: the first envelope a window gets comes with
    /// its contact's preamble.
    pub fn addressed_before(&self, recipient: &str, except: &str) -> Result<bool, StoreError> {
        let found: Option<i64> = self
            .conn
            .prepare_cached(
                "SELECT 1 FROM delivery d JOIN messages m ON m.seq = d.seq
                 WHERE d.recipient_key = lower(?1) AND m.id <> ?2
                   AND (d.relayed_at IS NOT NULL OR (d.received = 0 AND m.status <> 'draft'))
                 LIMIT 1",
            )?
            .query_row(rusqlite::params![recipient, except], |r| r.get(0))
            .optional()?;
        Ok(found.is_some())
    }
}
