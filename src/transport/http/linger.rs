//! A lingering close: when `serve` answers a request before reading all of its body (refused
//! on its head, or cut off past `max_body`), it reads the rest of the body and throws it away
//! before the connection closes, as nginx (`lingering_close`) and Apache do.
//!
//! Why: a socket closed with bytes still unread in its receive buffer is answered with a
//! reset, not an orderly end (RFC 1122 §4.2.2.13, as Linux and the BSDs do it). A client
//! that writes its whole body before it reads the answer, as Python's `urllib` and most
//! small clients do, then fails on its next write (broken pipe) or loses the answer already
//! in its own buffer to the reset (connection reset): it never sees the 413 that says what
//! to change. curl escapes it only by waiting for `100 Continue` first.
//!
//! Bounded, so that it opens no new way to hold the server: at most [`LINGER_BYTES`], and no
//! longer than the body's own deadline (the `request_timeout` a body is read within anyway).
//! The connection keeps its slot meanwhile, so `max_connections` still bounds how many
//! connections there are, and none lasts longer than one whose body was read. A body
//! declared larger than the bound is not read at all: its sender would be cut off anyway.

use axum::body::Body;
use http_body_util::BodyExt;
use tokio::time::Instant;

/// The most of a refused body read and thrown away: more than a body `serve` takes, so a
/// transcript pasted whole a few times over still gets its 413.
pub(crate) const LINGER_BYTES: u64 = 16 << 20;

/// Whether the rest of a body is worth reading: `declared` is its `Content-Length`, `read`
/// what was read of it already. Without a length (chunked) it is read up to the bound.
pub(crate) fn worth_it(declared: Option<u64>, read: u64) -> bool {
    declared.is_none_or(|n| n.saturating_sub(read) <= LINGER_BYTES)
}

/// How a lingering read ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lingered {
    /// The body ended (or the client closed): the connection closes in order.
    Drained(u64),
    /// More than [`LINGER_BYTES`], or the body broke off: the connection is cut.
    GaveUp(u64),
    /// The deadline came first: the connection is cut.
    TimedOut,
}

/// Reads `body` to its end and throws it away, up to [`LINGER_BYTES`] and until `deadline`.
/// Dropping the body then lets the connection close: after its end, in order; before it,
/// with the reset this is meant to avoid, but only for a client past the bounds.
pub async fn discard(mut body: Body, deadline: Instant) -> Lingered {
    let read = async {
        let mut n = 0u64;
        while let Some(frame) = body.frame().await {
            let Ok(frame) = frame else {
                return Lingered::GaveUp(n);
            };
            if let Some(data) = frame.data_ref() {
                n = n.saturating_add(data.len() as u64);
                if n > LINGER_BYTES {
                    return Lingered::GaveUp(n);
                }
            }
        }
        Lingered::Drained(n)
    };
    tokio::time::timeout_at(deadline, read)
        .await
        .unwrap_or(Lingered::TimedOut)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_body_past_the_bound_is_not_read() {
        assert!(worth_it(None, 0));
        assert!(worth_it(Some(LINGER_BYTES), 0));
        assert!(worth_it(Some(LINGER_BYTES + 10), 10));
        assert!(!worth_it(Some(LINGER_BYTES + 11), 10));
    }

    #[tokio::test]
    async fn reads_to_the_end_within_the_bounds() {
        let soon = Instant::now() + Duration::from_secs(5);
        let body = Body::from(vec![b'x'; 100_000]);
        assert_eq!(discard(body, soon).await, Lingered::Drained(100_000));
        let body = Body::from(vec![b'x'; LINGER_BYTES as usize + 1]);
        assert_eq!(
            discard(body, soon).await,
            Lingered::GaveUp(LINGER_BYTES + 1)
        );
    }

    #[tokio::test]
    async fn a_body_that_never_ends_is_given_up_at_the_deadline() {
        let now = Instant::now();
        assert_eq!(
            discard(Body::new(Endless), now + Duration::from_millis(50)).await,
            Lingered::TimedOut
        );
    }

    /// A body whose next bytes never come.
    struct Endless;

    impl axum::body::HttpBody for Endless {
        type Data = axum::body::Bytes;
        type Error = std::convert::Infallible;

        fn poll_frame(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<Option<Result<hyper::body::Frame<Self::Data>, Self::Error>>> {
            std::task::Poll::Pending
        }
    }
}
