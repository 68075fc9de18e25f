//! The relay hop: after the clipboard gained envelopes and they were imported, whether
//! crosstalk vouches for putting one on the clipboard for its recipient, or why not.
//!
//! Only one new envelope, valid, for someone else is relayed by itself. Anything else leaves
//! the clipboard as the operator copied it, with the reason said loudly: the operator must
//! not paste something crosstalk did not vouch for without noticing.
//!
//! A POLL goes to each of its targets' windows (see `fanout`): it is put up for the first
//! target it did not go to yet, and waits to be put up for each of the others in turn, each
//! copy made for its window (fence, preamble, audit hop) as any relay is.

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
    pub fn addressed_before(&self, recipient: &str, except: &str) -> Result<bool, StoreError> {
        let found: Option<i64> = self
            .conn
            .prepare_cached(ADDRESSED_BEFORE)?
            .query_row(rusqlite::params![recipient, except], |r| r.get(0))
            .optional()?;
        if found.is_some() || !self.keeps_target_relays() {
            return Ok(found.is_some());
        }
        let key = super::delivery::address_key(recipient);
        let found: Option<i64> = self
            .conn
            .prepare_cached(TARGET_BEFORE)?
            .query_row(rusqlite::params![key, except], |r| r.get(0))
            .optional()?;
        Ok(found.is_some())
    }
}

/// How this desk writes an envelope for the window it goes to: the address book (fence and
/// preamble per contact) and the audit hop it adds when configured. The app, `crosstalk
/// watch` and `crosstalk serve` (for a companion on another machine) all build the same text
/// from it.
#[derive(Debug, Clone, Copy)]
pub struct Carrier<'a> {
    /// Contacts: who wants a fence, who gets a preamble first.
    pub book: &'a crate::contacts::AddressBook,
    /// With `[relay] audit`: the name this desk signs its hops with.
    pub audit_by: Option<&'a str>,
    /// The time a hop says the envelope was passed on.
    pub now: jiff::Timestamp,
    /// The primer goes before the envelope (after the contact's preamble), whether or not the
    /// window had one before: the first envelope of a new conversation (`N`), which teaches
    /// every window it goes to.
    pub primer: bool,
}

impl<'a> Carrier<'a> {
    /// A carrier whose hops say they passed the envelope on now.
    pub fn now(book: &'a crate::contacts::AddressBook, audit_by: Option<&'a str>) -> Self {
        Carrier {
            book,
            audit_by,
            now: jiff::Timestamp::now(),
            primer: false,
        }
    }
}

/// Which of a POLL's targets a copy is for, when it has several.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Turn {
    /// The target's place among them, from 1, in the order the POLL lists them.
    pub n: usize,
    /// How many targets the POLL goes to.
    pub of: usize,
}

/// The text a recipient's window gets, and how it was made.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ForRecipient {
    /// The stored message.
    pub message: String,
    /// The banner's recipient.
    pub to: String,
    /// What goes on the clipboard, ready to paste.
    pub text: String,
    /// Whether the envelope is in a markdown fence.
    pub fenced: bool,
    /// Whether the contact's preamble comes first (nothing was carried to it before).
    pub preamble: bool,
    /// Whether this desk's `meta: audit` hop was added.
    pub audit: bool,
    /// For a POLL to several targets: which one this copy is for (`to` names it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<Turn>,
}

impl Store {
    /// The envelope text a copy of `m` carries: its canonical form; with an audit name, an
    /// envelope being relayed (received, for someone else) gets this desk's `meta: audit` hop
    /// appended, which leaves its signature intact.
    pub fn relay_text(
        &self,
        m: &super::StoredMessage,
        audit_by: Option<&str>,
        now: jiff::Timestamp,
    ) -> Result<String, StoreError> {
        Ok(self.relay_text_and_hop(m, audit_by, now)?.0)
    }

    /// [`Store::relay_text`], and whether this desk's audit hop went into it.
    pub fn relay_text_and_hop(
        &self,
        m: &super::StoredMessage,
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
    fn gets_hop(&self, m: &super::StoredMessage) -> Result<bool, StoreError> {
        Ok(m.direction == "received" && self.delivery(&m.id)?.is_some_and(|d| !d.to_me))
    }

    /// What `m`'s recipient's window gets: the envelope as [`Store::relay_text`] writes it,
    /// in the contact's fence, preceded by the contact's preamble when nothing was carried to
    /// that recipient before.
    pub fn for_recipient(
        &self,
        m: &super::StoredMessage,
        carrier: &Carrier<'_>,
    ) -> Result<ForRecipient, StoreError> {
        self.for_target(m, &m.envelope.banner.to, carrier)
    }

    /// What the window of `to` gets of `m` (its recipient, or one of a POLL's targets): as
    /// [`Store::for_recipient`], by `to`'s contact (matched by name or address) and what was
    /// carried to `to` before.
    pub fn for_target(
        &self,
        m: &super::StoredMessage,
        to: &str,
        carrier: &Carrier<'_>,
    ) -> Result<ForRecipient, StoreError> {
        let (envelope, audit) = self.relay_text_and_hop(m, carrier.audit_by, carrier.now)?;
        let contact = carrier.book.find(to);
        let fenced = carrier.book.fenced(to);
        let first = if carrier.primer {
            Some(crate::primer::primer_prefix(contact))
        } else {
            let preamble =
                (contact.and_then(|c| c.preamble.as_deref())).filter(|p| !p.trim().is_empty());
            match preamble {
                Some(p) if !self.addressed_before(to, &m.id)? => Some(p.to_string()),
                _ => None,
            }
        };
        let body = if fenced {
            crate::contacts::fence(&envelope)
        } else {
            envelope
        };
        let text = match &first {
            Some(p) => format!("{}\n\n{body}", p.trim_end()),
            None => body,
        };
        let turn = match self.fanout(&m.id)? {
            Some(targets) if targets.len() > 1 => (targets.iter())
                .position(|t| crate::protocol::awaiting::same_party(&t.target, to))
                .map(|i| Turn {
                    n: i + 1,
                    of: targets.len(),
                }),
            _ => None,
        };
        Ok(ForRecipient {
            message: m.id.clone(),
            to: to.to_string(),
            text,
            fenced,
            // The primer starts with the preamble, when the contact has one.
            preamble: first.is_some(),
            audit,
            turn,
        })
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

/// What a hop does, with what it needs to do it: the same whether the clipboard is this
/// machine's (`crosstalk watch`) or a companion's on another one (the desk answers it this).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "decision", rename_all = "lowercase")]
pub enum Hop {
    /// Put this text on the clipboard.
    Relay {
        /// The envelope as its recipient's window gets it.
        ready: ForRecipient,
        /// The same message for the other windows it goes to (a POLL's other targets), each
        /// put up on request after this one.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        next: Vec<Waiting>,
    },
    /// Several envelopes for others: leave the clipboard alone; each is put up on request.
    Several {
        /// In the copy's order.
        waiting: Vec<Waiting>,
    },
    /// Leave the clipboard alone, for this reason (a sentence; it may quote the envelope, so
    /// it is sanitized where it is shown).
    Refuse {
        /// Why.
        reason: String,
    },
    /// Nothing new to carry (a copy of something stored and relayed).
    Nothing,
}

impl Store {
    /// The hop for `report`, the import of one clipboard text, with the recipient's text
    /// ready when it relays. Records nothing: the caller marks the message relayed once the
    /// text is on its way ([`Store::mark_relayed`]).
    pub fn hop(&self, report: &ImportReport, carrier: &Carrier<'_>) -> Result<Hop, StoreError> {
        Ok(match self.hop_decision(report)? {
            HopDecision::Relay(id) => match self.put_up_text(&id, carrier)? {
                Some(hop) => hop,
                None => Hop::Nothing,
            },
            HopDecision::Several(ids) => {
                let mut waiting = Vec::with_capacity(ids.len());
                for id in ids {
                    waiting.extend(self.waiting_for(&id)?);
                }
                Hop::Several { waiting }
            }
            HopDecision::Refuse(reason) => Hop::Refuse { reason },
            HopDecision::Nothing => Hop::Nothing,
        })
    }

    /// Message `id` ready for its recipient, when it is stored and for someone else; a
    /// refusal saying why not otherwise, `None` when no such message is stored. A POLL is
    /// ready for the first of its targets it did not go to yet, the others in `next`.
    pub fn put_up_text(&self, id: &str, carrier: &Carrier<'_>) -> Result<Option<Hop>, StoreError> {
        self.put_up_to(id, None, carrier)
    }

    /// [`Store::put_up_text`] for the window of `to` (one of a POLL's targets) when given.
    pub fn put_up_to(
        &self,
        id: &str,
        to: Option<&str>,
        carrier: &Carrier<'_>,
    ) -> Result<Option<Hop>, StoreError> {
        let Some(m) = self.message(id)? else {
            return Ok(None);
        };
        if self.delivery(id)?.is_some_and(|d| d.to_me) {
            return Ok(Some(Hop::Refuse {
                reason: "the envelope is addressed to you (r answers it)".into(),
            }));
        }
        if let Some(why) = self.pii_held(&m, carrier.now)? {
            return Ok(Some(Hop::Refuse {
                reason: format!("{why}; copy it by hand if it may go"),
            }));
        }
        let (to, next) = match to {
            Some(to) => (to.to_string(), Vec::new()),
            None => {
                let mut waiting = self.waiting_for(id)?.into_iter();
                let first = waiting.next().map(|w| w.to);
                (
                    first.unwrap_or_else(|| m.envelope.banner.to.clone()),
                    waiting.collect(),
                )
            }
        };
        Ok(Some(Hop::Relay {
            ready: self.for_target(&m, &to, carrier)?,
            next,
        }))
    }
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
