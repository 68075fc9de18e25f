//! The watch's hop to a contact that takes envelopes over HTTP (`delivery = "http"` and a
//! `url` in the address book): the envelope is posted to it, as the app's hop and `y` post
//! it, instead of being put on the clipboard, and the answer is recorded as `crosstalk send`
//! records it (the message relayed by `http`, the ACK or ERROR stored in the thread).

use std::time::Duration;

use super::Failure;
use crate::contacts::AddressBook;
use crate::protocol::Options;
use crate::store::{ForRecipient, Store};
use crate::transport::http::{client, deliver};

/// How long a post may take before it counts as unanswered (as in the app).
const POST_TIMEOUT: Duration = Duration::from_secs(15);

/// What came of posting a hop's envelope.
#[derive(serde::Serialize)]
pub(super) struct Posted {
    /// How it went: `http`.
    pub over: &'static str,
    /// Whether the peer took it.
    pub accepted: bool,
    /// One line for the operator (before sanitizing: it quotes the peer's answer).
    pub line: String,
}

/// Posts `ready`'s message when its recipient is a contact that takes envelopes over HTTP,
/// with this desk's audit hop (`audit_by`) as the clipboard's text would carry it; `None`
/// for any other recipient, whose text goes on the clipboard. A post that fails leaves the
/// message waiting to be relayed, and the line says how to send it again.
pub(super) fn post_hop(
    store: &mut Store,
    book: &AddressBook,
    ready: &ForRecipient,
    audit_by: Option<&str>,
    opts: &Options,
) -> Result<Option<Posted>, Failure> {
    let Some(contact) = book.find(&ready.to) else {
        return Ok(None);
    };
    let Some(url) = contact.http_url() else {
        return Ok(None);
    };
    let failed = |e: crate::store::StoreError| Failure::usage(e.to_string());
    let Some(m) = store.message(&ready.message).map_err(failed)? else {
        return Ok(None);
    };
    let now = opts.now.unwrap_or_else(jiff::Timestamp::now);
    let (text, _) = store
        .relay_text_and_hop(&m, audit_by, now)
        .map_err(failed)?;
    let name = &contact.name;
    let posted = match client::post(url, &text, contact.token.as_deref(), POST_TIMEOUT) {
        Ok(response) => {
            let done =
                deliver::record_to(store, &ready.message, Some(&ready.to), url, &response, opts)
                    .map_err(failed)?;
            let verb = if done.accepted {
                "Delivered to"
            } else {
                "Refused by"
            };
            Posted {
                over: crate::transport::http::METHOD,
                accepted: done.accepted,
                line: format!("{verb} {name} over HTTP: {}", done.summary()),
            }
        }
        Err(e) => Posted {
            over: crate::transport::http::METHOD,
            accepted: false,
            line: format!(
                "Not delivered to {name} over HTTP: {e}; it stays in the queue to relay (y in the app posts it again)"
            ),
        },
    };
    Ok(Some(posted))
}
