//! The HTTP binding end to end: the real `crosstalk serve` on an ephemeral loopback port,
//! posted to by `crosstalk send` and by raw requests. Every status the binding answers, the
//! token rules, the limits, and a SIGTERM while requests are in flight (the connection limits
//! are in `connections.rs`).

use crate::helpers::http;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crosstalk::ids::IdGenerator;
use crosstalk::store::Store;
use http::{PLAIN, Server, crosstalk, envelope, post, raw};

fn output(cmd: &mut std::process::Command) -> (i32, String, String) {
    let out = cmd.output().expect("run crosstalk");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// How many times `id` is stored in `db` (as a message of its thread).
fn stored(db: &std::path::Path, id: &str) -> usize {
    let store = Store::open(db).unwrap();
    let Some(m) = store.message(id).unwrap() else {
        return 0;
    };
    let thread = store.thread(&m.thread).unwrap().unwrap();
    thread.messages.iter().filter(|x| x.id == id).count()
}

/// A received envelope first copied for a chat window, then sent to the peer's `serve`: the
/// ledger records the delivery the peer took (time and method), not the earlier copy.
#[test]
fn a_delivery_after_a_copy_is_the_relay_on_record() {
    let dir = tempfile::tempdir().unwrap();
    let (srv_db, cli_db) = (dir.path().join("srv.db"), dir.path().join("cli.db"));
    let server = Server::start(&srv_db, &[]);
    let (id, text) = envelope(&IdGenerator::new(), "Copied first, posted later.");
    let file = dir.path().join("e.crosstalk");
    std::fs::write(&file, &text).unwrap();
    let mut cli = Store::open(&cli_db).unwrap();
    cli.import_text("paste", &text, &Default::default())
        .unwrap();
    assert!(cli.mark_relayed(&id, "system clipboard").unwrap());
    let copied = cli.delivery(&id).unwrap().unwrap().relayed.unwrap();
    drop(cli);
    std::thread::sleep(Duration::from_millis(5));
    let mut cmd = crosstalk();
    cmd.arg("--db")
        .arg(&cli_db)
        .args(["send", &server.url])
        .arg(&file);
    let (code, out, err) = output(&mut cmd);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(server.stop(), 0);
    let cli = Store::open(&cli_db).unwrap();
    let (at, how) = cli.delivery(&id).unwrap().unwrap().relayed.unwrap();
    assert_eq!(how, "http");
    assert!(at > copied.0, "{at} after {}", copied.0);
    assert_eq!(stored(&cli_db, &id), 1);
}

#[test]
fn send_round_trip_stores_once_on_both_sides_and_the_ack() {
    let dir = tempfile::tempdir().unwrap();
    let (srv_db, cli_db) = (dir.path().join("srv.db"), dir.path().join("cli.db"));
    let server = Server::start(&srv_db, &[]);
    let ids = IdGenerator::new();
    let (id, text) = envelope(&ids, "Review the rate limiter, please.");
    let file = dir.path().join("e.crosstalk");
    std::fs::write(&file, &text).unwrap();
    let send = |json: bool| {
        let mut cmd = crosstalk();
        cmd.arg("--db")
            .arg(&cli_db)
            .args(["send", &server.url])
            .arg(&file);
        if json {
            cmd.arg("--json");
        }
        output(&mut cmd)
    };
    let (code, out, err) = send(false);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.starts_with(&format!("delivered {id} to {}: ACK", server.url)),
        "{out}"
    );
    // Sent again: the peer knows it (a duplicate, acknowledged the same), nothing doubles.
    let (code, out, _) = send(true);
    assert_eq!(code, 0, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["status"], 200);
    assert_eq!(v["reply_intent"], "ACK");
    let ack = v["reply_id"].as_str().unwrap().to_string();
    assert_eq!(server.stop(), 0);

    assert_eq!(stored(&srv_db, &id), 1);
    assert_eq!(stored(&cli_db, &id), 1);
    let cli = Store::open(&cli_db).unwrap();
    let d = cli.delivery(&id).unwrap().unwrap();
    assert_eq!(d.relayed.map(|(_, how)| how).as_deref(), Some("http"));
    let ack = cli.message(&ack).unwrap().unwrap();
    assert_eq!(ack.parent.as_deref(), Some(id.as_str()));
    assert_eq!(ack.intent.as_deref(), Some("ACK"));
    // The raw input was kept on both sides, as an import keeps it.
    let srv = Store::open(&srv_db).unwrap();
    assert!(
        srv.message(&id)
            .unwrap()
            .unwrap()
            .raw
            .contains("rate limiter")
    );
}

#[test]
fn every_error_status_answers_an_error_envelope() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("srv.db");
    let server = Server::start(&db, http::GUARDED);
    let ids = IdGenerator::new();
    let auth = "Authorization: Bearer s3cret";
    let (_, good) = envelope(&ids, "fine");
    let (bad, bad_id) = envelope(&ids, "bad id");
    let bad_id = bad_id.replace(&bad, "not-an-id");

    let ok = post(server.addr, PLAIN, &[auth], &good);
    assert_eq!(
        (ok.status, ok.intent().as_deref()),
        (200, Some("ACK")),
        "{ok:?}"
    );
    assert_eq!(
        ok.header("content-type").as_deref(),
        Some("text/plain; charset=utf-8")
    );

    let cases: Vec<(&str, http::Raw, u16, &str)> = vec![
        (
            "no token",
            post(server.addr, PLAIN, &[], &good),
            401,
            "E-PERM",
        ),
        (
            "wrong token",
            post(server.addr, PLAIN, &["Authorization: Bearer s3creT"], &good),
            403,
            "E-PERM",
        ),
        (
            "json",
            post(server.addr, Some("application/json"), &[auth], &good),
            415,
            "E-UNSUPPORTED",
        ),
        (
            "no content type",
            post(server.addr, None, &[auth], &good),
            415,
            "E-UNSUPPORTED",
        ),
        (
            "a content coding",
            post(server.addr, PLAIN, &[auth, "Content-Encoding: gzip"], &good),
            415,
            "E-UNSUPPORTED",
        ),
        (
            "too large",
            post(
                server.addr,
                PLAIN,
                &[auth],
                &good.replace("fine", &"x".repeat(5000)),
            ),
            413,
            "E-TOO-LARGE",
        ),
        (
            "no envelope",
            post(server.addr, PLAIN, &[auth], "just text"),
            400,
            "E-FORMAT",
        ),
        (
            "two envelopes",
            post(
                server.addr,
                PLAIN,
                &[auth],
                &format!("{}\n{}", envelope(&ids, "a").1, envelope(&ids, "b").1),
            ),
            400,
            "E-FORMAT",
        ),
        (
            "invalid envelope",
            post(server.addr, PLAIN, &[auth], &bad_id),
            400,
            "E-FORMAT",
        ),
        (
            "same id, other content",
            post(
                server.addr,
                PLAIN,
                &[auth],
                &good.replace("fine", "changed"),
            ),
            409,
            "E-FORMAT",
        ),
    ];
    for (what, answer, status, code) in &cases {
        assert_eq!(answer.status, *status, "{what}: {answer:?}");
        assert_eq!(answer.code().as_deref(), Some(*code), "{what}: {answer:?}");
        assert_eq!(answer.intent().as_deref(), Some("ERROR"), "{what}");
    }
    assert_eq!(
        cases[0].1.header("www-authenticate").as_deref(),
        Some("Bearer")
    );
    // The invalid envelope's diagnostics are in the ERROR's body.
    let invalid = &cases.iter().find(|c| c.0 == "invalid envelope").unwrap().1;
    assert!(invalid.body.contains("line "), "{invalid:?}");

    // A chunked body with no length to refuse it by is cut off at the limit too.
    let chunk = "y".repeat(3000);
    let chunked = format!(
        "POST /crosstalk/receive HTTP/1.1\r\nHost: x\r\nConnection: close\r\n{auth}\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n{n:x}\r\n{chunk}\r\n{n:x}\r\n{chunk}\r\n0\r\n\r\n",
        n = chunk.len()
    );
    let answer = raw(server.addr, chunked.as_bytes());
    assert_eq!(
        (answer.status, answer.code().as_deref()),
        (413, Some("E-TOO-LARGE"))
    );

    // Only the one envelope acknowledged was stored (the invalid one's raw text is kept, as
    // import keeps it, but no message).
    assert_eq!(server.stop(), 0);
    let store = Store::open(&db).unwrap();
    assert_eq!(store.threads(100).unwrap().len(), 1);
}

#[test]
fn a_client_over_its_rate_gets_429_with_retry_after() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(
        &dir.path().join("srv.db"),
        &["--rate-per-minute", "1", "--burst", "3"],
    );
    let ids = IdGenerator::new();
    let statuses: Vec<http::Raw> = (0..5)
        .map(|i| post(server.addr, PLAIN, &[], &envelope(&ids, &format!("n{i}")).1))
        .collect();
    let codes: Vec<u16> = statuses.iter().map(|r| r.status).collect();
    assert_eq!(codes, [200, 200, 200, 429, 429]);
    assert_eq!(statuses[3].code().as_deref(), Some("E-RATE"));
    assert_eq!(statuses[3].header("retry-after").as_deref(), Some("60"));
}

#[test]
fn send_reports_a_refusal_with_exit_1_and_stores_the_error() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("srv.db"), &["--token", "right"]);
    let cli_db = dir.path().join("cli.db");
    let (id, text) = envelope(&IdGenerator::new(), "hello");
    let file = dir.path().join("e.crosstalk");
    std::fs::write(&file, text).unwrap();
    let (code, out, err) = output(
        crosstalk()
            .arg("--db")
            .arg(&cli_db)
            .args(["send", &server.url, "--token", "wrong", "--json"])
            .arg(&file),
    );
    assert_eq!(code, 1, "{out}{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (v["status"].as_u64(), v["error_code"].as_str()),
        (Some(403), Some("E-PERM"))
    );
    let store = Store::open(&cli_db).unwrap();
    assert!(
        store
            .message(v["reply_id"].as_str().unwrap())
            .unwrap()
            .is_some()
    );
    // Not delivered: still to relay, not relayed.
    assert_eq!(store.delivery(&id).unwrap().unwrap().relayed, None);

    // With the right token from the environment it goes through.
    let (code, out, _) = output(
        crosstalk()
            .env("CROSSTALK_TOKEN", "right")
            .arg("--db")
            .arg(&cli_db)
            .args(["send", &server.url])
            .arg(&file),
    );
    assert_eq!(code, 0, "{out}");

    // Nothing listening: exit 2, the envelope kept.
    let url = server.url.clone();
    server.stop();
    let (code, _, err) = output(
        crosstalk()
            .arg("--db")
            .arg(&cli_db)
            .args(["send", &url])
            .arg(&file),
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no answer from"), "{err}");
    // Other text under a stored message's id: not sent, and said so (the text is kept as a
    // conflicting version, as import keeps it).
    let stored = std::fs::read_to_string(&file).unwrap();
    let changed = stored.replacen("body: |\n  ", "body: |\n  changed ", 1);
    assert_ne!(changed, stored);
    std::fs::write(&file, &changed).unwrap();
    let (code, _, err) = output(
        crosstalk()
            .arg("--db")
            .arg(&cli_db)
            .args(["send", &url])
            .arg(&file),
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("is stored with other text"), "{err}");
    // Two envelopes are not one request: exit 1, nothing posted.
    std::fs::write(
        &file,
        format!(
            "{}\n{}",
            envelope(&IdGenerator::new(), "a").1,
            envelope(&IdGenerator::new(), "b").1
        ),
    )
    .unwrap();
    let (code, _, err) = output(
        crosstalk()
            .arg("--db")
            .arg(&cli_db)
            .args(["send", &url])
            .arg(&file),
    );
    assert_eq!(code, 1, "{err}");
}

#[test]
fn beyond_loopback_a_token_is_required_to_start() {
    let dir = tempfile::tempdir().unwrap();
    let (code, _, err) = output(crosstalk().arg("--db").arg(dir.path().join("x.db")).args([
        "serve",
        "--listen",
        "0.0.0.0:0",
    ]));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("refusing to listen on 0.0.0.0:0 without a token"),
        "{err}"
    );
    assert!(
        !dir.path().join("x.db").exists(),
        "refused before the database was made"
    );
}

#[test]
fn header_and_time_limits() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(
        &dir.path().join("srv.db"),
        &["--request-timeout", "1", "--head-timeout", "1"],
    );
    // A head past the header limit.
    let big = format!("X-Filler: {}", "z".repeat(64 * 1024));
    let answer = post(server.addr, PLAIN, &[&big], "x");
    assert_eq!(answer.status, 431, "{answer:?}");
    // A body promised and never sent: 408 once the request time is up.
    let start = Instant::now();
    let mut s = std::net::TcpStream::connect(server.addr).unwrap();
    use std::io::{Read, Write};
    s.write_all(b"POST /crosstalk/receive HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\nonly this")
        .unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut buf = [0u8; 4096];
    let n = s.read(&mut buf).unwrap();
    let answer = http::parse_answer(&buf[..n]);
    assert_eq!(
        (answer.status, answer.code().as_deref()),
        (408, Some("E-TIMEOUT"))
    );
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    // Headers never finished: the connection is closed.
    let mut s = std::net::TcpStream::connect(server.addr).unwrap();
    s.write_all(b"POST /crosstalk/receive HTTP/1.1\r\nHost: x\r\n")
        .unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let start = Instant::now();
    let _ = s.read(&mut buf);
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn sigterm_with_requests_in_flight_loses_no_acknowledged_envelope() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("srv.db");
    let server = Server::start(&db, &["--rate-per-minute", "0"]);
    let addr = server.addr;
    let acked: Arc<Mutex<Vec<String>>> = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let ids = Arc::new(IdGenerator::new());
    let clients: Vec<_> = (0..8)
        .map(|_| {
            let (acked, stop, ids) = (acked.clone(), stop.clone(), ids.clone());
            std::thread::spawn(move || {
                // Bounded: at most 400 requests per client, and none once a refusal came.
                for i in 0..400 {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let (id, text) = envelope(&ids, &format!("in flight {i}"));
                    let Ok(mut s) = std::net::TcpStream::connect(addr) else {
                        break;
                    };
                    use std::io::{Read, Write};
                    let req = format!(
                        "POST /crosstalk/receive HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n{text}",
                        text.len()
                    );
                    let _ = s.set_read_timeout(Some(Duration::from_secs(30)));
                    if s.write_all(req.as_bytes()).is_err() {
                        break;
                    }
                    let mut buf = Vec::new();
                    let _ = s.read_to_end(&mut buf);
                    if buf.starts_with(b"HTTP/1.1 200") {
                        acked.lock().unwrap().push(id);
                    } else {
                        break;
                    }
                }
            })
        })
        .collect();
    // Wait for traffic, then SIGTERM in the middle of it.
    let start = Instant::now();
    while acked.lock().unwrap().len() < 40 && start.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(server.stop(), 0, "serve exits cleanly on SIGTERM");
    stop.store(true, Ordering::Relaxed);
    for c in clients {
        c.join().unwrap();
    }
    let acked = acked.lock().unwrap().clone();
    assert!(acked.len() >= 40, "{}", acked.len());
    let store = Store::open(&db).unwrap();
    assert!(store.integrity_check().unwrap());
    for id in &acked {
        let m = store.message(id).unwrap();
        assert!(m.is_some(), "acknowledged {id} is not stored");
    }
    // Every stored message is whole: in its thread, exactly once, its text intact.
    for row in store.threads(10_000).unwrap() {
        let t = store.thread(&row.id).unwrap().unwrap();
        assert_eq!(t.messages.len(), 1);
        assert!(t.messages[0].canonical.ends_with("[[END]]\n"));
    }
}
