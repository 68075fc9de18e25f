//! The spec's HTTP binding: `POST /crosstalk/receive` with the envelope as
//! `text/plain; charset=utf-8`, answered by an ACK or an ERROR envelope (the status codes and
//! limits are documented in `docs/PROTOCOL.md`).
//!
//! - [`receive`] decides, synchronously and over a [`crate::store::Store`], what a request's
//!   body becomes: stored and acknowledged, or refused with which ERROR.
//! - [`server`] is `crosstalk serve`: tokio + hyper + axum, with its limits, and a single
//!   writer thread that owns the store; [`linger`] reads what is left of a body it answered
//!   early, so the client gets to read the answer. [`slots`] decides which connections it
//!   holds (per client, and who gives a slot up when all are taken), [`turn_away`] answers
//!   the others `503` at once, and [`open_files`] raises the process's file limit to match.
//! - [`client`] posts an envelope (blocking), [`retry`] posts it again when the peer asks to
//!   be sent again later, and [`deliver`] records what came of it.

pub mod client;
pub mod deliver;
pub mod hop;
pub mod linger;
pub mod open_files;
pub mod rate;
pub mod receive;
pub mod retry;
pub mod server;
pub mod slots;
pub mod turn_away;

/// The path envelopes are posted to.
pub(crate) const RECEIVE_PATH: &str = "/crosstalk/receive";

/// The one content type requests and answers carry.
pub(crate) const CONTENT_TYPE: &str = "text/plain; charset=utf-8";

/// The transport's name in the delivery ledger and in `X-Delivery`.
pub(crate) const METHOD: &str = "http";

/// Whether a `Content-Type` header value is plain text in UTF-8: `text/plain` with no
/// charset (UTF-8 is then assumed, as RFC 8259-era clients send) or `charset=utf-8`, in any
/// case and spacing.
pub(crate) fn is_plain_utf8(content_type: &str) -> bool {
    let mut parts = content_type.split(';').map(str::trim);
    if !parts
        .next()
        .is_some_and(|m| m.eq_ignore_ascii_case("text/plain"))
    {
        return false;
    }
    parts.all(|p| match p.split_once('=') {
        Some((k, v)) if k.trim().eq_ignore_ascii_case("charset") => {
            let v = v.trim().trim_matches('"');
            v.eq_ignore_ascii_case("utf-8") || v.eq_ignore_ascii_case("utf8")
        }
        _ => p.is_empty() || p.contains('='),
    })
}

#[cfg(test)]
mod tests {
    use super::is_plain_utf8;

    #[test]
    fn content_types() {
        for ok in [
            "text/plain; charset=utf-8",
            "text/plain",
            "TEXT/PLAIN;charset=\"UTF-8\"",
            "text/plain; charset=utf-8; format=flowed",
        ] {
            assert!(is_plain_utf8(ok), "{ok}");
        }
        for bad in [
            "application/json",
            "text/plain; charset=latin1",
            "text/html; charset=utf-8",
            "",
        ] {
            assert!(!is_plain_utf8(bad), "{bad}");
        }
    }
}
