//! What a posted body becomes, decided over the store and nothing else: no sockets here, so
//! the rules are tested without a server and the server's writer thread only calls
//! [`Desk::receive`].

use crate::ids::IdGenerator;
use crate::protocol::ack::{ack_envelope, sender_for};
use crate::protocol::address::check_address;
use crate::protocol::error_envelope::error_envelope;
use crate::protocol::{self, Code, Diagnostic, Envelope, Options};
use crate::store::{Outcome, Store, StoreError};

/// An answer: the HTTP status and the envelope that is its body.
#[derive(Debug, Clone)]
pub struct Answer {
    /// HTTP status code.
    pub status: u16,
    /// The ACK or ERROR envelope, rendered.
    pub body: String,
    /// The stored message id, when the envelope was stored (ACKs and conflicts).
    pub stored: Option<String>,
    /// The body's type: an envelope ([`super::CONTENT_TYPE`]) or, to a companion, JSON.
    pub content_type: &'static str,
}

/// The receiving desk: the store, who acknowledges, and the ids of replies.
pub struct Desk {
    pub(super) store: Store,
    desk: Option<String>,
    ids: IdGenerator,
    pub(super) opts: Options,
    /// Contacts, for the text a companion puts up (fence, preamble).
    pub(super) book: crate::contacts::AddressBook,
    /// With `[relay] audit`: the name of this desk's hops.
    pub(super) audit_by: Option<String>,
    /// How long a hop delivered straight to its recipient waits out a busy peer.
    pub(super) retry_for: std::time::Duration,
}

impl Desk {
    /// A desk over `store`; `desk` is the address its replies come from (the operator's
    /// first configured address), `size_limit` the protocol's envelope limit.
    pub fn new(store: Store, desk: Option<String>, size_limit: usize) -> Self {
        Desk {
            store,
            desk,
            ids: IdGenerator::new(),
            opts: Options {
                size_limit,
                now: None,
            },
            book: Default::default(),
            audit_by: None,
            retry_for: crate::transport::http::retry::DEFAULT_RETRY_FOR,
        }
    }

    /// How envelopes relayed through a companion are written for their recipients: the
    /// address book and the audit name (see [`crate::transport::route::Carrier`]).
    pub fn with_carrier(
        mut self,
        book: crate::contacts::AddressBook,
        audit_by: Option<String>,
    ) -> Self {
        self.book = book;
        self.audit_by = audit_by;
        self
    }

    /// How long a hop delivered straight to its recipient waits out a peer that asks to be
    /// sent again (`[send] retry_for`).
    pub(crate) fn waiting_out(mut self, retry_for: std::time::Duration) -> Self {
        self.retry_for = retry_for;
        self
    }

    /// Stores `body` (received from `peer`) through the import path and answers it.
    ///
    /// A body must hold exactly one envelope: one with none or several is refused (400) and
    /// not stored, since the sender still has it and no single ACK could answer it. One
    /// envelope is imported as `crosstalk import` would (the raw body kept first): imported,
    /// a duplicate or a signed copy is acknowledged (so a retried POST is answered the same);
    /// rejected is 400 (or 413 when too large) with its diagnostics; an id already stored with
    /// other content is 409.
    pub fn receive(&mut self, peer: &str, body: &[u8]) -> Answer {
        self.opts.now = Some(jiff::Timestamp::now());
        let text = String::from_utf8_lossy(body);
        let found = protocol::extract(&text, &self.opts);
        let original = found.envelopes.first().map(|p| p.envelope.clone());
        if found.envelopes.len() != 1 {
            let (reason, diagnostics) = match found.envelopes.len() {
                0 => (
                    "No envelope found in the body".to_string(),
                    found.diagnostics,
                ),
                n => (
                    format!("One envelope per request; the body holds {n}"),
                    Vec::new(),
                ),
            };
            return self.error(400, original.as_ref(), "E-FORMAT", &reason, &diagnostics);
        }
        let source = format!("http {peer}");
        let report =
            match self
                .store
                .import_reader(&source, &mut &body[..], &self.opts, &mut |_| {})
            {
                Ok(r) => r,
                Err(e) => return self.store_failed(original.as_ref(), &e),
            };
        let Some(item) = report.items.first() else {
            return self.error(
                400,
                original.as_ref(),
                "E-FORMAT",
                "No envelope found in the body",
                &report.diagnostics,
            );
        };
        match item.outcome {
            Outcome::Imported | Outcome::Duplicate | Outcome::Signed => {
                let id = item.message.clone().unwrap_or_default();
                let stored = self.store.message(&id).ok().flatten();
                let env = stored
                    .map(|m| m.envelope)
                    .or(original)
                    .unwrap_or_else(|| Envelope::new("UNKNOWN", "SYSTEM"));
                let ack = ack_envelope(&env, &id, self.desk.as_deref(), super::METHOD, &self.ids);
                Answer {
                    status: 200,
                    body: protocol::render(&ack),
                    stored: Some(id),
                    content_type: super::CONTENT_TYPE,
                }
            }
            Outcome::Rejected => {
                let too_large = item.diagnostics.iter().any(|d| d.code == Code::TooLarge);
                let (status, code) = if too_large {
                    (413, "E-TOO-LARGE")
                } else {
                    (400, "E-FORMAT")
                };
                let reason = protocol::error_envelope::default_reason(code).unwrap_or("Error");
                self.error(status, original.as_ref(), code, reason, &item.diagnostics)
            }
            Outcome::Conflict => {
                let mut answer = self.error(
                    409,
                    original.as_ref(),
                    "E-FORMAT",
                    "Its message id is already stored with other content (kept as a version)",
                    &item.diagnostics,
                );
                answer.stored = item.message.clone();
                answer
            }
        }
    }

    fn store_failed(&self, original: Option<&Envelope>, e: &StoreError) -> Answer {
        if e.is_busy() {
            return self.error(
                503,
                original,
                "E-RATE",
                "The receiving desk's database is busy; send again later",
                &[],
            );
        }
        tracing::error!("serve: storing a received envelope failed: {e}");
        self.error(
            500,
            original,
            "E-ROUTE",
            "The receiving desk could not store the envelope; send again later",
            &[],
        )
    }

    fn error(
        &self,
        status: u16,
        original: Option<&Envelope>,
        code: &str,
        reason: &str,
        diagnostics: &[Diagnostic],
    ) -> Answer {
        error_answer(
            self.desk.as_deref(),
            status,
            original,
            code,
            reason,
            diagnostics,
            &self.ids,
        )
    }
}

/// An ERROR answer that names no envelope: the request was refused before its body was read
/// (token, rate, size, content type, time).
pub fn refusal(
    desk: Option<&str>,
    status: u16,
    code: &str,
    reason: &str,
    ids: &IdGenerator,
) -> Answer {
    error_answer(desk, status, None, code, reason, &[], ids)
}

fn error_answer(
    desk: Option<&str>,
    status: u16,
    original: Option<&Envelope>,
    code: &str,
    reason: &str,
    diagnostics: &[Diagnostic],
    ids: &IdGenerator,
) -> Answer {
    let mut env = error_envelope(original, code, Some(reason), diagnostics, ids);
    // From the desk when one is configured; else as the ERROR reply is built (the original's
    // recipient, or SYSTEM).
    if let Some(o) = original {
        env.banner.from = sender_for(o, desk);
    } else if let Some(d) = desk.filter(|d| check_address(d).is_ok()) {
        env.banner.from = d.to_string();
    }
    Answer {
        status,
        body: protocol::render(&env),
        stored: None,
        content_type: super::CONTENT_TYPE,
    }
}
