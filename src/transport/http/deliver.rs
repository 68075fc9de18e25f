//! What a delivery over HTTP leaves in the store: the message marked as carried (relayed by
//! `http`, or a composed one copied and now awaiting its reply) once the peer took it, and the
//! peer's answer, ACK or ERROR, imported into the thread like any received envelope.

use crate::protocol::namespaces;
use serde::Serialize;

use super::client::Response;
use crate::protocol::{self, Options};
use crate::store::{Outcome, Store, StoreError};

/// What came of posting one stored message.
#[derive(Debug, Clone, Serialize)]
pub struct Delivered {
    /// The message posted.
    pub message: String,
    /// The URL it was posted to.
    pub url: String,
    /// The HTTP status answered.
    pub status: u16,
    /// Whether the peer took it (200).
    pub accepted: bool,
    /// The answer's intent as written (`ACK`, `ERROR`), when it held an envelope.
    pub reply_intent: Option<String>,
    /// An ERROR's code (`E-PERM`) and reason.
    pub error_code: Option<String>,
    /// An ERROR's reason.
    pub reason: Option<String>,
    /// The id the answer was stored under.
    pub reply_id: Option<String>,
}

impl Delivered {
    /// One line for a status bar or a terminal: `ACK`, or the error and its reason (as sent
    /// by the peer: make it safe before showing it).
    pub fn summary(&self) -> String {
        match (&self.error_code, &self.reason) {
            _ if self.accepted => self.reply_intent.clone().unwrap_or_else(|| "200".into()),
            (Some(code), Some(reason)) => format!("{} {code}: {reason}", self.status),
            (Some(code), None) => format!("{} {code}", self.status),
            _ => format!("status {} without an ERROR envelope", self.status),
        }
    }
}

/// Records the answer `response` to posting stored message `message` to `url`.
pub fn record(
    store: &mut Store,
    message: &str,
    url: &str,
    response: &Response,
    opts: &Options,
) -> Result<Delivered, StoreError> {
    record_to(store, message, None, url, response, opts)
}

/// [`record`] for a post to the window of `to`, one of a POLL's targets: the POLL went to
/// that target only (see `store::fanout`), the others still wait for theirs.
pub(crate) fn record_to(
    store: &mut Store,
    message: &str,
    to: Option<&str>,
    url: &str,
    response: &Response,
    opts: &Options,
) -> Result<Delivered, StoreError> {
    let accepted = response.status == 200;
    let poll_target = match to {
        Some(to) if store.fanout(message)?.is_some() => Some(to),
        _ => None,
    };
    if accepted && let Some(to) = poll_target {
        store.mark_relayed_to(message, to, super::METHOD)?;
        store.mark_copied(message)?;
    } else if accepted && !store.mark_delivered(message, super::METHOD)? {
        // Not a received message waiting to be relayed: one the operator composed, which now
        // waits for its reply as a copied one does.
        store.mark_copied(message)?;
    }
    let found = protocol::extract(&response.body, opts);
    let reply = found.envelopes.first().map(|p| &p.envelope);
    let error = reply.and_then(|e| e.meta_block(namespaces::ERROR));
    let mut reply_id = None;
    if !found.envelopes.is_empty() {
        let report = store.import_text(&format!("http answer {url}"), &response.body, opts)?;
        reply_id = report
            .items
            .iter()
            .find(|i| {
                matches!(
                    i.outcome,
                    Outcome::Imported | Outcome::Duplicate | Outcome::Signed
                )
            })
            .and_then(|i| i.message.clone());
    }
    Ok(Delivered {
        message: message.to_string(),
        url: url.to_string(),
        status: response.status,
        accepted,
        reply_intent: reply.and_then(|e| e.intent_raw()).map(str::to_string),
        error_code: error.and_then(|m| m.get("Code")).map(str::to_string),
        reason: error.and_then(|m| m.get("Reason")).map(str::to_string),
        reply_id,
    })
}
