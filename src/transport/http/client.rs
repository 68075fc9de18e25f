//! Posting an envelope: blocking (ureq), so the CLI needs no runtime and the app calls it
//! from a thread of its own.

use std::time::Duration;

use super::{CONTENT_TYPE, RECEIVE_PATH};

/// Largest answer read back: an ACK or ERROR envelope is small, and a hop answer carries one
/// envelope ready to paste (JSON-escaped, with a preamble); anything larger is not one.
const MAX_ANSWER: u64 = 16 << 20;

/// Bodies larger than this are sent with `Expect: 100-continue`: the peer that refuses one by
/// its length (413) says so before the body is sent. Without it a body past what the peer
/// reads of a refused one (`serve` reads 16 MiB, see `linger`) meets a closed connection, and
/// the client sees a broken pipe instead of the 413 that says what to change. Smaller bodies
/// go at once (as curl does it, from 1 MiB).
const EXPECT_CONTINUE_FROM: usize = 1 << 20;

/// What the peer answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// HTTP status.
    pub status: u16,
    /// The body (an ACK or ERROR envelope from a crosstalk peer).
    pub body: String,
    /// The `Retry-After` header as sent, when there was one (see [`super::retry`]).
    pub retry_after: Option<String>,
}

/// Why nothing was answered.
#[derive(Debug, thiserror::Error)]
pub enum PostError {
    /// The URL is not one this client can post to.
    #[error("`{url}` is not an http:// URL: {why}")]
    BadUrl {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        why: String,
    },
    /// Connecting, sending or reading failed.
    #[error("no answer from {url}: {why}")]
    Failed {
        /// The URL posted to.
        url: String,
        /// What went wrong.
        why: String,
    },
}

/// The URL to post to: `url` as given when it names a path, else with the binding's
/// `/crosstalk/receive` appended (so `http://host:8787` works as a contact's `url`).
pub(crate) fn receive_url(url: &str) -> Result<String, PostError> {
    let url = url.trim();
    let bad = |why: &str| PostError::BadUrl {
        url: url.to_string(),
        why: why.to_string(),
    };
    let rest = if let Some(rest) = strip_scheme(url, "http://") {
        rest
    } else if strip_scheme(url, "https://").is_some() {
        return Err(bad(
            "this build posts plain HTTP only; put a TLS proxy in front of the peer and post to it over loopback, or use http://",
        ));
    } else {
        return Err(bad("it must start with http://"));
    };
    if rest.is_empty() || rest.starts_with('/') {
        return Err(bad("it names no host"));
    }
    Ok(if rest.trim_end_matches('/').contains('/') {
        url.to_string()
    } else {
        format!("{}{RECEIVE_PATH}", url.trim_end_matches('/'))
    })
}

fn strip_scheme<'a>(url: &'a str, scheme: &str) -> Option<&'a str> {
    url.get(..scheme.len())
        .filter(|s| s.eq_ignore_ascii_case(scheme))
        .map(|_| &url[scheme.len()..])
}

/// Posts `envelope` to `url` with `token` as bearer token, waiting at most `timeout` for the
/// whole exchange. Any status is an answer (the body says why); only no answer is an error.
pub fn post(
    url: &str,
    envelope: &str,
    token: Option<&str>,
    timeout: Duration,
) -> Result<Response, PostError> {
    post_to(&receive_url(url)?, envelope, token, timeout)
}

/// Posts `text` as plain text to exactly `url` (no path added), as [`post`] does.
pub fn post_to(
    url: &str,
    text: &str,
    token: Option<&str>,
    timeout: Duration,
) -> Result<Response, PostError> {
    let failed = |why: String| PostError::Failed {
        url: url.to_string(),
        why,
    };
    let agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(timeout))
        // A redirect would carry the token elsewhere: never followed.
        .max_redirects(0)
        .build()
        .new_agent();
    let mut request = agent.post(url).header("Content-Type", CONTENT_TYPE);
    if let Some(token) = token.filter(|t| !t.is_empty()) {
        request = request.header("Authorization", &format!("Bearer {token}"));
    }
    if text.len() > EXPECT_CONTINUE_FROM {
        request = request.header("Expect", "100-continue");
    }
    let mut response = request.send(text).map_err(|e| failed(e.to_string()))?;
    let status = response.status().as_u16();
    let retry_after = response
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    // Bytes that are not UTF-8 read as U+FFFD: an answer that is not text is still the
    // peer's answer, and its status says whether the envelope was taken.
    let body = response
        .body_mut()
        .with_config()
        .limit(MAX_ANSWER)
        .read_to_vec()
        .map_err(|e| {
            failed(format!(
                "the answer (status {status}) could not be read: {e}"
            ))
        })?;
    let body = String::from_utf8_lossy(&body).into_owned();
    Ok(Response {
        status,
        body,
        retry_after,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        assert_eq!(
            receive_url("http://127.0.0.1:8787").unwrap(),
            "http://127.0.0.1:8787/crosstalk/receive"
        );
        assert_eq!(
            receive_url("http://127.0.0.1:8787/").unwrap(),
            "http://127.0.0.1:8787/crosstalk/receive"
        );
        assert_eq!(
            receive_url("HTTP://h/other/path").unwrap(),
            "HTTP://h/other/path"
        );
        assert!(matches!(
            receive_url("https://h"),
            Err(PostError::BadUrl { .. })
        ));
        assert!(matches!(
            receive_url("ftp://h"),
            Err(PostError::BadUrl { .. })
        ));
        assert!(matches!(
            receive_url("http://"),
            Err(PostError::BadUrl { .. })
        ));
    }

    /// A peer that takes the envelope and answers with bytes that are not UTF-8 has answered:
    /// its status stands, its text reads with U+FFFD.
    #[test]
    fn an_answer_that_is_not_text_is_an_answer() {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let peer = std::thread::spawn(move || {
            let (mut conn, _) = listener.accept().unwrap();
            conn.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            let mut seen = Vec::new();
            let mut buf = [0u8; 4096];
            // The request's head and its one-byte body.
            while !seen.ends_with(b"\r\n\r\nx") {
                let n = conn.read(&mut buf).unwrap_or(0);
                if n == 0 {
                    break;
                }
                seen.extend_from_slice(&buf[..n]);
            }
            conn.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\nConnection: close\r\n\r\nok\xff\n",
            )
            .unwrap();
        });
        let r = post(
            &format!("http://127.0.0.1:{port}"),
            "x",
            None,
            Duration::from_secs(5),
        )
        .expect("an answer");
        peer.join().unwrap();
        assert_eq!((r.status, r.body.as_str()), (200, "ok\u{fffd}\n"));
    }

    #[test]
    fn no_answer_is_an_error() {
        // A port just bound and released: nothing listens there.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .unwrap();
        let r = post(
            &format!("http://127.0.0.1:{port}"),
            "x",
            None,
            Duration::from_secs(2),
        );
        assert!(matches!(r, Err(PostError::Failed { .. })), "{r:?}");
    }
}
