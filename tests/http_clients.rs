//! The HTTP binding as clients and peers nobody here wrote meet it: `serve` answered by
//! Python's `urllib`, curl and a raw socket that writes its whole request before reading, and
//! `send` against a peer that rate-limits it.

mod http;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::Command;
use std::time::{Duration, Instant};

use http::{GUARDED, Server};

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
    let (_, text) = http::envelope(&crosstalk::protocol::IdGenerator::new(), "after");
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
