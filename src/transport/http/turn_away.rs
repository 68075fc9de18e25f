//! A connection turned away: `serve` has no slot for it (see [`super::slots`]), or took its
//! slot back, so it is answered `503` with `Retry-After` and closed, without hyper and without
//! parsing what it sent — a client waits for nothing, and a flood of them costs little.
//!
//! The answer is written first and the sending side shut, so the client reads it at once;
//! then what the client sent is read and thrown away before the socket closes: a socket
//! closed with bytes unread is reset, and a client that writes its whole request before
//! reading (most do) would lose the answer to the reset (the lingering close of
//! [`super::linger`], much shorter here). The reading stops when the client closes, after
//! [`DRAIN_BYTES`], once nothing came for [`QUIET`] (a client that sent its request has sent
//! it by then; one that sends nothing is let go soon), or after [`DRAIN_TIME`] in all.
//!
//! How many connections are being turned away at once is bounded by the server; past that
//! bound the answer is still written, if the socket takes it at once, and the connection
//! closed right away ([`answer_at_once`]).

use std::future::poll_fn;
use std::pin::Pin;
use std::time::Duration;

use tokio::io::AsyncWrite;
use tokio::net::TcpStream;

/// The most of a turned-away client's request read before the socket closes.
pub(crate) const DRAIN_BYTES: usize = 64 * 1024;

/// How long a turned-away connection is kept open, all told.
pub(crate) const DRAIN_TIME: Duration = Duration::from_secs(1);

/// How long nothing may come from a turned-away client before its connection is closed.
pub(crate) const QUIET: Duration = Duration::from_millis(250);

/// How a turned-away connection ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ended {
    /// Answered, and the client closed its side after `n` bytes.
    Closed(usize),
    /// Answered; the client sent more than [`DRAIN_BYTES`] and was cut off.
    CutOff(usize),
    /// Answered; nothing came from the client for [`QUIET`] after `n` bytes.
    Quiet(usize),
    /// The socket failed (the client reset it, say).
    Failed,
    /// [`DRAIN_TIME`] passed first.
    TimedOut,
}

/// The raw `503` answer: `body` (an ERROR envelope) with `Retry-After: retry_after`.
pub fn answer(retry_after: u64, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: {}\r\nretry-after: {retry_after}\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
        super::CONTENT_TYPE,
        body.len()
    )
    .into_bytes()
}

/// Writes `answer` on `stream`, shuts its sending side, reads what the client sent (within
/// the bounds above) and closes it.
pub(crate) async fn answer_and_close(mut stream: TcpStream, answer: &[u8]) -> Ended {
    let exchange = async {
        let mut left = answer;
        while !left.is_empty() {
            stream.writable().await?;
            match stream.try_write(left) {
                Ok(n) => left = &left[n..],
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
        }
        poll_fn(|cx| Pin::new(&mut stream).poll_shutdown(cx)).await?;
        let mut buf = [0u8; 4096];
        let mut read = 0usize;
        loop {
            if tokio::time::timeout(QUIET, stream.readable())
                .await
                .is_err()
            {
                return Ok(Ended::Quiet(read));
            }
            match stream.try_read(&mut buf) {
                Ok(0) => return Ok(Ended::Closed(read)),
                Ok(n) => {
                    read += n;
                    if read > DRAIN_BYTES {
                        return Ok(Ended::CutOff(read));
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
        }
    };
    match tokio::time::timeout(DRAIN_TIME, exchange).await {
        Ok(Ok(ended)) => ended,
        Ok(Err(_)) => Ended::Failed,
        Err(_) => Ended::TimedOut,
    }
}

/// Reads what the client sent so far (up to [`DRAIN_BYTES`]), writes what of `answer` the
/// socket takes without waiting, and closes it: for when too many connections are being
/// turned away to give this one a task. Nothing waits, so nothing here can be held; a client
/// whose request was in (as it is when a client writes it as it connects) reads the answer
/// before the end, with nothing unread to reset the connection.
pub(crate) fn answer_at_once(stream: TcpStream, answer: &[u8]) {
    let mut buf = [0u8; 4096];
    let mut read = 0usize;
    while read <= DRAIN_BYTES {
        match stream.try_read(&mut buf) {
            Ok(n) if n > 0 => read += n,
            _ => break,
        }
    }
    let _ = stream.try_write(answer);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    /// A client that wrote its whole request reads the answer and its end, then closes;
    /// one that writes nothing and never closes is let go after the drain time.
    #[tokio::test]
    async fn answers_reads_what_was_sent_and_closes() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let client = std::thread::spawn(move || {
            let mut s = std::net::TcpStream::connect(addr).unwrap();
            s.write_all(b"POST / HTTP/1.1\r\ncontent-length: 5\r\n\r\nhello")
                .unwrap();
            s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            let mut got = Vec::new();
            s.read_to_end(&mut got).unwrap();
            got
        });
        let (stream, _) = listener.accept().await.unwrap();
        let bytes = answer(1, "busy\n");
        let ended = answer_and_close(stream, &bytes).await;
        let got = tokio::task::spawn_blocking(move || client.join().unwrap())
            .await
            .unwrap();
        assert_eq!(got, bytes);
        assert!(String::from_utf8_lossy(&got).contains("\r\nretry-after: 1\r\n"));
        assert!(matches!(ended, Ended::Closed(n) if n > 0), "{ended:?}");

        let silent = std::thread::spawn(move || {
            let s = std::net::TcpStream::connect(addr).unwrap();
            std::thread::sleep(DRAIN_TIME * 2);
            drop(s);
        });
        let (stream, _) = listener.accept().await.unwrap();
        let start = std::time::Instant::now();
        assert_eq!(answer_and_close(stream, &bytes).await, Ended::Quiet(0));
        assert!(start.elapsed() < DRAIN_TIME, "{:?}", start.elapsed());
        tokio::task::spawn_blocking(move || silent.join().unwrap())
            .await
            .unwrap();
    }
}
