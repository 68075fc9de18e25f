//! The hop over HTTP, for a desk on another machine: a companion (`crosstalk watch --to URL`
//! on the operator's laptop) posts what the laptop's clipboard gained, and the desk answers
//! with what to put on that clipboard — the same decision and the same text `crosstalk watch`
//! makes locally ([`crate::transport::route::plan`]). An envelope for a contact that takes
//! envelopes straight (over HTTP) is delivered by the desk, and the answer says so: the
//! companion leaves its clipboard alone.
//!
//! - `POST /crosstalk/hop` with the copied text (`text/plain; charset=utf-8`): the desk keeps
//!   it raw, imports it, and answers `200` with a [`HopAnswer`] in JSON. With `?carry=0` the
//!   text is only stored (a spooled copy sent after the operator copied something else): the
//!   answer says what a hop would have done, and nothing is marked relayed.
//! - `POST /crosstalk/hop/next` with a message id: that message ready for its recipient (one
//!   of a several-envelope copy, put up on the operator's key).
//!
//! Both need the desk's token, whatever address it listens on: the answer is text the
//! operator pastes into a chat window unread.

use serde::{Deserialize, Serialize};

use super::receive::{Answer, Desk};
use crate::store::ImportSummary;
use crate::store::StoreError;
use crate::transport::route::{self, Carrier, HopPlan};

/// Where a companion posts what it copied.
pub const HOP_PATH: &str = "/crosstalk/hop";

/// Where a companion asks for the next envelope of a several-envelope copy.
pub(crate) const NEXT_PATH: &str = "/crosstalk/hop/next";

/// The answers' type.
pub const JSON: &str = "application/json";

/// How the ledger records an envelope relayed through a companion.
pub(crate) const RELAY_METHOD: &str = "companion";

/// What the desk answers a companion.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HopAnswer {
    /// What to do with the clipboard.
    pub hop: HopPlan,
    /// Whether the desk recorded the envelope as relayed (the companion puts it up).
    pub carried: bool,
    /// What the import did (absent for `/hop/next`).
    #[serde(default)]
    pub arrival: Option<ImportSummary>,
}

/// A refusal in JSON: `{"error": {"code", "reason"}}`, and `limit` for a 413.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HopError {
    /// The spec's error code (`E-PERM`, `E-RATE`, …).
    pub code: String,
    /// A sentence for the operator.
    pub reason: String,
    /// With `E-TOO-LARGE`: the most bytes the desk takes, so that a companion can say how
    /// far off a copy is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u64>,
}

#[derive(Serialize, Deserialize)]
struct ErrorBody {
    error: HopError,
}

/// A refusal answered to a companion: status, code and reason in JSON.
pub(crate) fn json_refusal(status: u16, code: &str, reason: &str) -> Answer {
    json_error(
        status,
        HopError {
            code: code.into(),
            reason: reason.into(),
            limit: None,
        },
    )
}

/// The 413 answered to a companion whose copy is past `limit` bytes.
pub(crate) fn json_too_large(reason: &str, limit: u64) -> Answer {
    json_error(
        413,
        HopError {
            code: "E-TOO-LARGE".into(),
            reason: reason.into(),
            limit: Some(limit),
        },
    )
}

fn json_error(status: u16, error: HopError) -> Answer {
    let body = ErrorBody { error };
    Answer {
        status,
        body: serde_json::to_string(&body).unwrap_or_default(),
        stored: None,
        content_type: JSON,
    }
}

/// The refusal in a non-200 answer's JSON body, when it holds one.
pub fn parse_refusal(body: &str) -> Option<HopError> {
    serde_json::from_str::<ErrorBody>(body)
        .ok()
        .map(|b| b.error)
}

impl Desk {
    /// `POST /crosstalk/hop`: keeps `body` (from `peer`) raw, imports it, and answers what the
    /// companion does with its clipboard; with `carry`, a relayed envelope is recorded as
    /// relayed by the companion.
    pub fn hop(&mut self, peer: &str, body: &[u8], carry: bool) -> Answer {
        let text = String::from_utf8_lossy(body);
        let mut opts = self.opts.clone();
        opts.now = Some(jiff::Timestamp::now());
        let source = format!("companion {peer}");
        let imported = self
            .store
            .keep_text(&source, &text)
            .and_then(|kept| self.store.import_kept(&kept, &opts, &mut |_| {}, true));
        let report = match imported {
            Ok(r) => r,
            Err(e) => return failed(&e),
        };
        let carrier = Carrier::now(&self.book, self.audit_by.as_deref());
        let hop = match route::plan(&self.store, &report, &carrier) {
            Ok(h) => h,
            Err(e) => return failed(&e),
        };
        self.answer(hop, carry, Some(ImportSummary::of(&report)))
    }

    /// `POST /crosstalk/hop/next`: message `id` (the body) ready for its recipient, recorded
    /// as relayed; a POLL for the next of its targets it did not go to yet (the companion asks
    /// once per target, in the order the hop's `next` listed them).
    pub fn put_up(&mut self, body: &[u8]) -> Answer {
        let id = String::from_utf8_lossy(body).trim().to_string();
        let carrier = Carrier::now(&self.book, self.audit_by.as_deref());
        match route::put_up(&self.store, &id, None, &carrier) {
            Ok(Some(hop)) => self.answer(hop, true, None),
            Ok(None) => json_refusal(
                404,
                "E-FORMAT",
                "No such message on this desk: send the message id the hop answer listed",
            ),
            Err(e) => failed(&e),
        }
    }

    /// Answers `hop`; with `carry`, records the relay the companion makes, or first delivers
    /// it straight when the recipient takes envelopes so (the desk waits for that answer).
    fn answer(&mut self, hop: HopPlan, carry: bool, arrival: Option<ImportSummary>) -> Answer {
        let mut carried = false;
        let hop = if carry {
            let carrier =
                Carrier::now(&self.book, self.audit_by.as_deref()).waiting_out(self.retry_for);
            // The peer's answer is read as of this hop (`self.opts` holds the last receive's time).
            let opts = crate::protocol::Options {
                now: Some(carrier.now),
                ..self.opts.clone()
            };
            match route::carry_direct(&mut self.store, hop, &carrier, &opts, &mut |_| {}) {
                Ok(hop) => hop,
                Err(e) => return failed(&e),
            }
        } else {
            hop
        };
        if carry && let HopPlan::Relay { ready, .. } = &hop {
            match (self.store).mark_relayed_to(&ready.message, &ready.to, RELAY_METHOD) {
                Ok(_) => carried = true,
                Err(e) => return failed(&e),
            }
        }
        let answer = HopAnswer {
            hop,
            carried,
            arrival,
        };
        Answer {
            status: 200,
            body: serde_json::to_string(&answer).unwrap_or_default(),
            stored: None,
            content_type: JSON,
        }
    }
}

fn failed(e: &StoreError) -> Answer {
    if e.is_busy() {
        return json_refusal(
            503,
            "E-RATE",
            "The desk's database is busy; the companion sends it again",
        );
    }
    tracing::error!("serve: a companion's hop failed: {e}");
    json_refusal(
        500,
        "E-ROUTE",
        "The desk could not store the copy; the companion keeps it and sends it again",
    )
}

/// The hop URL for a desk given as `http://host:port` (any path the user gave that ends in
/// one of the binding's paths is replaced).
pub(crate) fn hop_url(desk: &str) -> Result<String, super::client::PostError> {
    let base = super::client::receive_url(desk)?;
    let base = base
        .strip_suffix(super::RECEIVE_PATH)
        .or_else(|| base.strip_suffix(NEXT_PATH))
        .or_else(|| base.strip_suffix(HOP_PATH))
        .unwrap_or(&base)
        .trim_end_matches('/');
    Ok(format!("{base}{HOP_PATH}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        for given in [
            "http://127.0.0.1:8787",
            "http://127.0.0.1:8787/",
            "http://127.0.0.1:8787/crosstalk/receive",
            "http://127.0.0.1:8787/crosstalk/hop",
        ] {
            assert_eq!(
                hop_url(given).unwrap(),
                "http://127.0.0.1:8787/crosstalk/hop",
                "{given}"
            );
        }
        assert!(hop_url("https://h").is_err());
    }

    #[test]
    fn refusals_read_back() {
        let a = json_refusal(403, "E-PERM", "The token is not accepted");
        assert_eq!(a.content_type, JSON);
        let e = parse_refusal(&a.body).unwrap();
        assert_eq!(
            (e.code.as_str(), e.reason.as_str()),
            ("E-PERM", "The token is not accepted")
        );
        assert!(parse_refusal("[[A→B v1]]").is_none());
        assert_eq!(e.limit, None);
        let big = parse_refusal(&json_too_large("too large", 1000).body).unwrap();
        assert_eq!((big.code.as_str(), big.limit), ("E-TOO-LARGE", Some(1000)));
    }
}
