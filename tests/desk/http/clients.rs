//! The HTTP binding as clients and peers nobody here wrote meet it: `serve` answered by
//! Python's `urllib`, curl and a raw socket that writes its whole request before reading, and
//! `send` against a peer that rate-limits it.

use crate::helpers::http;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::Command;
use std::time::{Duration, Instant};

use http::{GUARDED, Peer, Server, answer};

/// Runs `python3 -c SCRIPT ARGS…`; its standard output, or a panic with its error.
fn python(script: &str, args: &[&str]) -> String {
    let out = Command::new("python3")
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "python3 failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Posts with `urllib` (which writes the whole body before it reads the answer) and prints
/// `STATUS CONNECTION-HEADER` and the answer's body, or `failed: WHY` when there was none.
const URLLIB_POST: &str = r#"
import sys, urllib.request, urllib.error
url, size, chunked, token = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "chunked", sys.argv[4]
body = b"x" * size
data = (body[i:i + 65536] for i in range(0, size, 65536)) if chunked else body
headers = {"Content-Type": "text/plain; charset=utf-8"}
if token:
    headers["Authorization"] = "Bearer " + token
try:
    r = urllib.request.urlopen(urllib.request.Request(url, data=data, headers=headers), timeout=20)
    print(r.status, r.headers.get("Connection"))
    print(r.read().decode())
except urllib.error.HTTPError as e:
    print(e.code, e.headers.get("Connection"))
    print(e.read().decode())
except Exception as e:
    print("failed:", e)
"#;

fn urllib_post(server: &Server, size: usize, chunked: bool, token: &str) -> (String, String) {
    let chunked = if chunked { "chunked" } else { "length" };
    let out = python(
        URLLIB_POST,
        &[&server.url, &size.to_string(), chunked, token],
    );
    let (first, body) = out.split_once('\n').unwrap_or((&out, ""));
    (first.to_string(), body.to_string())
}

/// A body far past `max_body`, sent whole before the answer is read: the client reads the
/// 413 and its ERROR, with a `Content-Length` and chunked, and so it does for a refusal on
/// the request's head (the token) with the body unread.
#[test]
fn urllib_sending_an_oversize_body_whole_reads_the_413() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("srv.db"), GUARDED);
    for chunked in [false, true] {
        for size in [200_000, 4_000_000] {
            let (status, body) = urllib_post(&server, size, chunked, "s3cret");
            assert_eq!(
                status, "413 close",
                "{size} bytes, chunked {chunked}: {body}"
            );
            assert!(body.contains("Code: E-TOO-LARGE"), "{body}");
            assert!(body.contains("[[END]]"), "{body}");
        }
    }
    let (status, body) = urllib_post(&server, 4_000_000, false, "");
    assert_eq!(status, "401 close", "{body}");
    assert!(body.contains("Code: E-PERM"), "{body}");
    // The server is not worse for it: a good envelope is stored.
    let (_, text) = http::envelope(&crosstalk::ids::IdGenerator::new(), "after");
    let answer = http::post(
        server.addr,
        http::PLAIN,
        &["Authorization: Bearer s3cret"],
        &text,
    );
    assert_eq!(answer.status, 200, "{answer:?}");
}

#[test]
fn curl_sending_an_oversize_body_reads_the_413() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("srv.db"), GUARDED);
    let file = dir.path().join("big.txt");
    std::fs::write(&file, vec![b'x'; 3_000_000]).unwrap();
    // As curl sends it (waiting for `100 Continue`), without `Expect:`, and chunked.
    for extra in [
        &[][..],
        &["-H", "Expect:"],
        &["-H", "Transfer-Encoding: chunked"],
    ] {
        let out = Command::new("curl")
            .args([
                "-s",
                "-w",
                "\n%{http_code}",
                "-H",
                "Authorization: Bearer s3cret",
            ])
            .args(["-H", "Content-Type: text/plain; charset=utf-8"])
            .args(extra)
            .arg("--data-binary")
            .arg(format!("@{}", file.display()))
            .arg(&server.url)
            .output()
            .expect("curl runs");
        let out = String::from_utf8_lossy(&out.stdout);
        let (body, status) = out.rsplit_once('\n').unwrap_or(("", &out));
        assert_eq!(status, "413", "{extra:?}: {out}");
        assert!(body.contains("Code: E-TOO-LARGE"), "{extra:?}: {body}");
    }
}

/// Writes `head` and `body` whole, then reads until the server closes: the answer, and how
/// long the connection stayed open after the writing.
fn send_then_read(addr: SocketAddr, head: &str, body: &[u8]) -> (Vec<u8>, Duration) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    s.write_all(head.as_bytes()).unwrap();
    s.write_all(body).expect("the server reads the whole body");
    let written = Instant::now();
    let mut answer = Vec::new();
    s.read_to_end(&mut answer)
        .expect("the connection ends in order, not with a reset");
    (answer, written.elapsed())
}

fn head(length: usize) -> String {
    format!(
        "POST /crosstalk/receive HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer s3cret\r\nContent-Type: text/plain\r\nContent-Length: {length}\r\n\r\n"
    )
}

#[test]
fn a_raw_client_that_sends_everything_then_reads_gets_the_413() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("srv.db"), GUARDED);
    let body = vec![b'x'; 4_000_000];
    let (answer, _) = send_then_read(server.addr, &head(body.len()), &body);
    let answer = http::parse_answer(&answer);
    assert_eq!(
        (answer.status, answer.code().as_deref()),
        (413, Some("E-TOO-LARGE"))
    );
    assert_eq!(answer.header("connection").as_deref(), Some("close"));
}

/// The rest of a refused body is read only within bounds: a client that stops sending is
/// cut off at the body's deadline (`--request-timeout`), one that declares more than the
/// bound at once; either has the answer first.
#[test]
fn a_refused_body_is_read_no_longer_than_its_deadline_and_no_further_than_the_bound() {
    let dir = tempfile::tempdir().unwrap();
    let mut args = GUARDED.to_vec();
    args.extend(["--request-timeout", "1"]);
    let server = Server::start(&dir.path().join("srv.db"), &args);
    // Promises 1 MB, sends 10 kB, then waits.
    let (answer, open) = send_then_read(server.addr, &head(1_000_000), &[b'x'; 10_000]);
    assert_eq!(http::parse_answer(&answer).status, 413);
    assert!(open < Duration::from_secs(5), "open {open:?} after 1 s");

    let server = Server::start(&dir.path().join("srv2.db"), GUARDED);
    // Promises more than is ever read: closed with the answer, not after the 10 s a body
    // gets.
    let (answer, open) = send_then_read(server.addr, &head(100_000_000), b"");
    assert_eq!(http::parse_answer(&answer).status, 413);
    assert!(open < Duration::from_secs(5), "open {open:?}");
}

/// `crosstalk send URL FILE EXTRA…` on `db`: exit status, stdout, stderr.
fn send(
    db: &std::path::Path,
    url: &str,
    file: &std::path::Path,
    extra: &[&str],
) -> (i32, String, String) {
    let out = http::crosstalk()
        .arg("--db")
        .arg(db)
        .args(["send", url])
        .arg(file)
        .args(extra)
        .output()
        .expect("run crosstalk send");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn envelope_file(dir: &std::path::Path, body: &str) -> (String, std::path::PathBuf) {
    let (id, text) = http::envelope(&crosstalk::ids::IdGenerator::new(), body);
    let file = dir.join(format!("{id}.crosstalk"));
    std::fs::write(&file, text).unwrap();
    (id, file)
}

/// A real `serve` whose rate the client is over answers 429 with `Retry-After: 3`; `send`
/// says so, waits, posts again and is delivered.
#[test]
fn send_waits_out_a_429_from_serve_and_is_delivered() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(
        &dir.path().join("srv.db"),
        &["--rate-per-minute", "20", "--burst", "1"],
    );
    // The one request the burst allows.
    let (_, text) = http::envelope(&crosstalk::ids::IdGenerator::new(), "first");
    assert_eq!(http::post(server.addr, http::PLAIN, &[], &text).status, 200);
    let (id, file) = envelope_file(dir.path(), "second");
    let cli = dir.path().join("cli.db");
    let (code, out, err) = send(&cli, &server.url, &file, &["--json"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        err.contains("answered 429 (too many requests) and asks to wait 3 s; posting again in 3 s (try 2, 27 s of --retry-for left)"),
        "{err}"
    );
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (v["status"].as_u64(), v["tries"].as_u64()),
        (Some(200), Some(2))
    );
    assert_eq!(v["waited_seconds"].as_f64(), Some(3.0));
    // Only the last answer is recorded: the message relayed, its ACK stored, no E-RATE.
    let store = crosstalk::store::Store::open(&cli).unwrap();
    assert_eq!(
        store.delivery(&id).unwrap().unwrap().relayed.unwrap().1,
        "http"
    );
    let thread = store.message(&id).unwrap().unwrap().thread;
    let thread = store.thread(&thread).unwrap().unwrap();
    let intents: Vec<_> = thread.messages.iter().map(|m| m.intent.clone()).collect();
    assert_eq!(intents, [Some("REQUEST".into()), Some("ACK".into())]);
    assert_eq!(server.stop(), 0);
}

/// A 429 without `Retry-After` is tried again after a second; one with an HTTP-date after
/// the time it names.
#[test]
fn send_backs_off_without_retry_after_and_waits_until_a_date() {
    let dir = tempfile::tempdir().unwrap();
    let peer = Peer::start(vec![
        answer("429 Too Many Requests"),
        Box::new(|| {
            let at = std::time::SystemTime::now() + Duration::from_secs(2);
            format!(
                "429 Too Many Requests\r\nRetry-After: {}",
                httpdate::fmt_http_date(at)
            )
        }),
        answer("200 OK"),
    ]);
    let (_, file) = envelope_file(dir.path(), "hello");
    let (code, out, err) = send(&dir.path().join("cli.db"), &peer.url, &file, &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(peer.requests(), 3);
    assert!(
        err.contains("answered 429 (too many requests) without saying how long to wait; posting again in 1 s (try 2"),
        "{err}"
    );
    // The date is 1 or 2 s away by the time it is read (it is in whole seconds).
    assert!(err.contains("and asks to wait "), "{err}");
    assert!(err.contains("(try 3, "), "{err}");
    assert!(out.starts_with("delivered "), "{out}");
}

#[test]
fn send_gives_up_on_a_peer_that_keeps_answering_429() {
    let dir = tempfile::tempdir().unwrap();
    let peer = Peer::start(vec![answer("429 Too Many Requests\r\nRetry-After: 1")]);
    let (id, file) = envelope_file(dir.path(), "hello");
    let cli = dir.path().join("cli.db");
    let (code, out, err) = send(&cli, &peer.url, &file, &["--retry-for", "2"]);
    assert_eq!(code, 1, "{out}{err}");
    assert_eq!(peer.requests(), 3);
    assert_eq!(err.matches("posting again in 1 s").count(), 2, "{err}");
    assert!(
        err.contains("still answered 429 (too many requests) after 3 tries and 2 s of waiting and asks to wait 1 s (until "),
        "{err}"
    );
    assert!(
        err.contains("more than --retry-for 2 allows; the envelope is stored: `crosstalk send` it again later, or with a longer --retry-for"),
        "{err}"
    );
    assert!(out.starts_with("refused "), "{out}");
    let store = crosstalk::store::Store::open(&cli).unwrap();
    assert_eq!(store.delivery(&id).unwrap().unwrap().relayed, None);
}

/// A wait asked for beyond `--retry-for` is not waited at all: `send` says until when the
/// peer asked it to wait and how to allow it.
#[test]
fn a_wait_past_retry_for_gives_up_at_once_and_says_until_when() {
    let dir = tempfile::tempdir().unwrap();
    let peer = Peer::start(vec![answer("429 Too Many Requests\r\nRetry-After: 120")]);
    let (_, file) = envelope_file(dir.path(), "hello");
    let cli = dir.path().join("cli.db");
    let (code, out, err) = send(&cli, &peer.url, &file, &["--json"]);
    assert_eq!(code, 1, "{out}{err}");
    assert_eq!(peer.requests(), 1);
    assert!(
        err.contains("answered 429 (too many requests) and asks to wait 120 s (until "),
        "{err}"
    );
    assert!(
        err.contains("longer than --retry-for 30 allows; the envelope is stored: `crosstalk send` it again then, or with --retry-for 120"),
        "{err}"
    );
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (v["status"].as_u64(), v["tries"].as_u64()),
        (Some(429), Some(1))
    );
    let at: jiff::Timestamp = v["retry_at"].as_str().unwrap().parse().unwrap();
    let ahead = at.duration_since(jiff::Timestamp::now()).as_secs();
    assert!((100..=121).contains(&ahead), "{ahead}");
    // With nothing to wait allowed, the first answer stands.
    let peer = Peer::start(vec![answer("429 Too Many Requests")]);
    let (code, _, err) = send(&cli, &peer.url, &file, &["--retry-for", "0"]);
    assert_eq!((code, peer.requests()), (1, 1), "{err}");
    assert!(err.contains("--retry-for 0 allows"), "{err}");
}

/// Our own client, posting a copy far past what `serve` reads of a refused body (16 MiB),
/// reads the 413 (and, from the hop endpoint, the desk's limit) instead of a broken pipe:
/// it asks `Expect: 100-continue` first, so the body is never sent.
#[test]
fn our_client_posting_past_the_bound_reads_the_413_and_the_limit() {
    use crosstalk::transport::http::{client, hop};
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("srv.db"), GUARDED);
    let huge = "x".repeat(20 << 20);
    let base = format!("http://{}", server.addr);
    let start = Instant::now();
    let r = client::post_to(
        &format!("{base}{}", hop::HOP_PATH),
        &huge,
        Some("s3cret"),
        Duration::from_secs(20),
    )
    .expect("an answer, not a broken pipe");
    assert_eq!(r.status, 413, "{r:?}");
    let e = hop::parse_refusal(&r.body).expect("JSON");
    assert_eq!((e.code.as_str(), e.limit), ("E-TOO-LARGE", Some(4000)));
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    let r = client::post(&base, &huge, Some("s3cret"), Duration::from_secs(20))
        .expect("an answer, not a broken pipe");
    assert_eq!(r.status, 413, "{r:?}");
    assert!(r.body.contains("E-TOO-LARGE"), "{}", r.body);
}
