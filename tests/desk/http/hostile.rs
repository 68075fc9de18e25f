//! A real `crosstalk serve` on loopback under hostile requests: odd methods and paths, content
//! types and tokens written every way a client gets them wrong, headers with controls and
//! non-ASCII bytes, bodies cut short or padded. Every request gets an answer; the binding's
//! own statuses come with one valid envelope whose ERROR code agrees with the status; nothing
//! is a server error; and the server still stores a good envelope afterwards.

use crate::helpers::http;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use crosstalk::ids::IdGenerator;
use crosstalk::protocol::{Options, extract};
use http::{PLAIN, Server, envelope, parse_answer, post};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};

#[derive(Debug, Clone)]
struct Request {
    method: &'static str,
    path: String,
    content_type: Option<String>,
    auth: Option<String>,
    extra: Vec<u8>,
    body: Vec<u8>,
    /// Bytes fewer in `Content-Length` than the body has (the rest arrives as junk after the
    /// request).
    short_by: usize,
}

/// A header value or path as clients write it: mostly `usual`, else one of the `odd`
/// spellings as often as each other, else anything matching `free`.
fn written(
    usual: &'static str,
    weight: u32,
    odd: &[&'static str],
    free: &'static str,
) -> impl Strategy<Value = String> {
    prop_oneof![
        weight => Just(usual.to_string()),
        odd.len() as u32 => prop::sample::select(odd.to_vec()).prop_map(str::to_string),
        1 => free,
    ]
}

fn request(good: String) -> impl Strategy<Value = Request> {
    let method = prop_oneof![
        12 => Just("POST"),
        1 => prop::sample::select(vec!["GET", "PUT", "DELETE", "OPTIONS", "P0ST"]),
    ];
    let path = written(
        "/crosstalk/receive",
        18,
        &[
            "/crosstalk/receive?x=1&y=%00",
            "/crosstalk/receive/",
            "//crosstalk//receive",
            "/crosstalk/%72eceive",
            "/crosstalk/../crosstalk/receive",
        ],
        "/[a-z%./]{0,40}",
    );
    let content_type = prop::option::weighted(
        0.9,
        written(
            "text/plain; charset=utf-8",
            3,
            &[
                "TEXT/PLAIN; CHARSET=UTF-8",
                "text/plain;charset=\"utf-8\"",
                "text/plain",
                "text/plain; charset=latin1",
                "application/json",
                "text/plain; charset=utf-8; charset=utf-16",
            ],
            "[ -~]{0,60}",
        ),
    );
    let auth = prop::option::weighted(
        0.85,
        written(
            "Bearer s3cret",
            4,
            &[
                "bearer s3cret",
                "Bearer  s3cret",
                "Bearer s3cret ",
                "Bearer s3creT",
                "Basic czNjcmV0",
                "Bearer",
            ],
            "Bearer [ -~]{0,300}",
        ),
    );
    // Header lines a client should not send: controls, non-ASCII bytes, huge values.
    let extra = prop::collection::vec(
        prop_oneof![
            Just(b"X-Empty:".to_vec()),
            Just(b"X-Bytes: \xff\xfe\x80".to_vec()),
            Just(b"X-Tab: a\tb".to_vec()),
            Just(b"Expect: 100-continue".to_vec()),
            Just(b"Accept-Encoding: gzip, br".to_vec()),
            "X-[a-z]{1,8}: [ -~]{0,200}".prop_map(String::into_bytes),
        ],
        0..4,
    )
    .prop_map(|lines| lines.join(&b"\r\n"[..]));
    let body = prop_oneof![
        4 => Just(good.clone().into_bytes()),
        1 => (0..good.len()).prop_map({
            let good = good.clone();
            move |cut| good.as_bytes()[..cut].to_vec()
        }),
        1 => prop::collection::vec(any::<u8>(), 0..600),
        1 => Just(good.repeat(3).into_bytes()),
        1 => Just(vec![b'x'; 5000]),
    ];
    (
        method,
        path,
        content_type,
        auth,
        extra,
        body,
        prop_oneof![5 => Just(0usize), 1 => 1usize..20],
    )
        .prop_map(
            |(method, path, content_type, auth, extra, body, short_by)| Request {
                method,
                path,
                content_type,
                auth,
                extra,
                body,
                short_by,
            },
        )
}

impl Request {
    fn bytes(&self) -> Vec<u8> {
        let length = self.body.len().saturating_sub(self.short_by);
        let mut r = format!(
            "{} {} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: {length}\r\n",
            self.method, self.path
        )
        .into_bytes();
        if let Some(ct) = &self.content_type {
            r.extend(format!("Content-Type: {ct}\r\n").bytes());
        }
        if let Some(a) = &self.auth {
            r.extend(format!("Authorization: {a}\r\n").bytes());
        }
        if !self.extra.is_empty() {
            r.extend(&self.extra);
            r.extend(b"\r\n");
        }
        r.extend(b"\r\n");
        r.extend(&self.body);
        r
    }
}

/// Sends `bytes` and reads the answer; `None` when the server closed without answering.
fn exchange(addr: std::net::SocketAddr, bytes: &[u8]) -> Option<http::Raw> {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let _ = s.write_all(bytes);
    let mut buf = Vec::new();
    let _ = s.read_to_end(&mut buf);
    // `Expect: 100-continue` gets an interim `100 Continue` head first.
    let mut rest = &buf[..];
    while rest.starts_with(b"HTTP/1.1 100") {
        let end = rest.windows(4).position(|w| w == b"\r\n\r\n")?;
        rest = &rest[end + 4..];
    }
    (!rest.is_empty()).then(|| parse_answer(rest))
}

#[test]
fn hostile_requests_get_an_answer_and_leave_the_server_working() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("srv.db"), http::GUARDED);
    let ids = IdGenerator::new();
    let (_, good) = envelope(&ids, "hostile neighbours");
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(256);
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&request(good), |req| {
            // Whatever the head holds, the client is answered, never left with a closed
            // connection.
            let Some(answer) = exchange(server.addr, &req.bytes()) else {
                return Err(TestCaseError::fail(format!("no answer to {req:?}")));
            };
            prop_assert!(answer.status < 500, "{req:?}\n{answer:?}");
            if matches!(answer.status, 200 | 400 | 401 | 403 | 409 | 413 | 415) {
                let found = extract(&answer.body, &Options::default());
                prop_assert_eq!(found.envelopes.len(), 1, "{:?}\n{:?}", req, answer);
                let env = &found.envelopes[0];
                prop_assert!(!env.has_errors(), "{:?}", env.diagnostics);
                let code = env
                    .envelope
                    .meta_block("error")
                    .and_then(|m| m.get("Code"))
                    .map(str::to_string);
                let want = match answer.status {
                    200 => None,
                    400 | 409 => Some("E-FORMAT"),
                    401 | 403 => Some("E-PERM"),
                    413 => Some("E-TOO-LARGE"),
                    _ => Some("E-UNSUPPORTED"),
                };
                prop_assert_eq!(code.as_deref(), want, "{:?}\n{:?}", req, answer);
            }
            Ok(())
        })
        .unwrap();
    // Still serving: a fresh envelope is acknowledged and stored.
    let (_, fresh) = envelope(&ids, "after the storm");
    let ok = post(
        server.addr,
        PLAIN,
        &["Authorization: Bearer s3cret"],
        &fresh,
    );
    assert_eq!(
        (ok.status, ok.intent().as_deref()),
        (200, Some("ACK")),
        "{ok:?}"
    );
    assert_eq!(server.stop(), 0);
}
