//! A real `crosstalk serve` on loopback for tests: started on an ephemeral port (its URL read
//! from its first line of output), stopped with SIGTERM, killed if a test forgets. And raw
//! HTTP requests, for what a well-behaved client would never send.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crosstalk::ids::IdGenerator;
use crosstalk::protocol::{Envelope, Options, extract, render};

/// A running `serve`.
pub struct Server {
    child: Option<Child>,
    /// `http://127.0.0.1:PORT/crosstalk/receive`.
    pub url: String,
    /// The bound address.
    pub addr: SocketAddr,
}

/// A `crosstalk` command that ignores the user's own config and database (tests name theirs).
pub fn crosstalk() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_crosstalk"));
    cmd.env("XDG_CONFIG_HOME", "/nonexistent/crosstalk-test-config")
        .env("XDG_DATA_HOME", "/nonexistent/crosstalk-test-data")
        .env_remove("CROSSTALK_CONFIG")
        .env_remove("CROSSTALK_DB")
        .env_remove("CROSSTALK_TOKEN");
    cmd
}

impl Server {
    /// Starts `serve --listen 127.0.0.1:0 EXTRA…` on `db`; panics if it does not print its
    /// URL within 20 s.
    pub fn start(db: &Path, extra: &[&str]) -> Server {
        Server::start_with(db, "127.0.0.1:0", None, extra)
    }

    /// [`Server::start`] on `listen` (to come back on the same port), reading `config`.
    pub fn start_with(db: &Path, listen: &str, config: Option<&Path>, extra: &[&str]) -> Server {
        let mut cmd = crosstalk();
        if let Some(config) = config {
            cmd.env("CROSSTALK_CONFIG", config);
        }
        let mut child = cmd
            .arg("--db")
            .arg(db)
            .args(["serve", "--listen", listen])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn serve");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = match rx.recv_timeout(Duration::from_secs(20)) {
            Ok(l) => l,
            Err(_) => {
                let _ = child.kill();
                panic!("serve printed no URL within 20 s");
            }
        };
        let url = line.trim().to_string();
        let addr = url
            .trim_start_matches("http://")
            .split('/')
            .next()
            .and_then(|a| a.parse().ok())
            .unwrap_or_else(|| panic!("not a URL: {url:?}"));
        Server {
            child: Some(child),
            url,
            addr,
        }
    }

    /// The process id, to signal it.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().map(Child::id).unwrap_or(0)
    }

    /// How many sockets the server holds open (its listener among them), read from
    /// `/proc`: each connection it admits holds two (hyper's and the spare it answers on when
    /// the connection gives its slot up), one it has let go none.
    pub fn sockets(&self) -> usize {
        let fds = std::fs::read_dir(format!("/proc/{}/fd", self.pid())).expect("serve's fds");
        fds.filter_map(Result::ok)
            .filter(|fd| {
                std::fs::read_link(fd.path())
                    .is_ok_and(|to| to.to_string_lossy().starts_with("socket:"))
            })
            .count()
    }

    /// Waits (at most 20 s) until the server holds `n` sockets (see [`Server::sockets`]).
    pub fn wait_sockets(&self, n: usize, what: &str) {
        let start = Instant::now();
        while self.sockets() != n {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "{what}: serve holds {} sockets, not {n}",
                self.sockets()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Sends SIGTERM without waiting.
    pub fn terminate(&self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.pid().to_string()])
            .status()
            .expect("kill");
        assert!(status.success());
    }

    /// Sends SIGTERM and waits (at most 30 s) for the exit status.
    pub fn stop(mut self) -> i32 {
        self.terminate();
        let mut child = self.child.take().expect("running");
        let start = Instant::now();
        loop {
            if let Some(status) = child.try_wait().expect("wait") {
                return status.code().unwrap_or(-1);
            }
            if start.elapsed() > Duration::from_secs(30) {
                let _ = child.kill();
                panic!("serve did not stop within 30 s of SIGTERM");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// A raw HTTP exchange's answer.
#[derive(Debug)]
pub struct Raw {
    pub status: u16,
    pub head: String,
    pub body: String,
}

impl Raw {
    /// The ERROR code of the envelope in the body.
    pub fn code(&self) -> Option<String> {
        let found = extract(&self.body, &Options::default());
        let env = &found.envelopes.first()?.envelope;
        env.meta_block("error")?.get("Code").map(str::to_string)
    }

    /// The intent of the envelope in the body.
    pub fn intent(&self) -> Option<String> {
        let found = extract(&self.body, &Options::default());
        found
            .envelopes
            .first()?
            .envelope
            .intent_raw()
            .map(str::to_string)
    }

    /// A header's value (case-insensitive name).
    pub fn header(&self, name: &str) -> Option<String> {
        self.head.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim()
                .eq_ignore_ascii_case(name)
                .then(|| v.trim().to_string())
        })
    }
}

/// Writes `request` as is on a new connection and reads the whole answer (the request should
/// say `Connection: close`).
pub fn raw(addr: SocketAddr, request: &[u8]) -> Raw {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let _ = s.write_all(request);
    let mut buf = Vec::new();
    let _ = s.read_to_end(&mut buf);
    parse_answer(&buf)
}

/// Splits an HTTP/1.1 answer (with `Content-Length`) into status, head and body.
pub fn parse_answer(buf: &[u8]) -> Raw {
    let text = String::from_utf8_lossy(buf).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {text:?}"));
    Raw {
        status,
        head: head.to_string(),
        body: body.to_string(),
    }
}

/// A POST of `body` with `content_type` and extra header lines.
pub fn post(addr: SocketAddr, content_type: Option<&str>, headers: &[&str], body: &str) -> Raw {
    let mut req = format!(
        "POST /crosstalk/receive HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    if let Some(ct) = content_type {
        req.push_str(&format!("Content-Type: {ct}\r\n"));
    }
    for h in headers {
        req.push_str(h);
        req.push_str("\r\n");
    }
    req.push_str("\r\n");
    req.push_str(body);
    raw(addr, req.as_bytes())
}

/// A desk that applies every check: a bearer token (`s3cret`), a body limit of 4 000 bytes,
/// and no rate limit (so that only what a test sends decides the answers).
pub const GUARDED: &[&str] = &[
    "--token",
    "s3cret",
    "--max-body",
    "4000",
    "--rate-per-minute",
    "0",
];

/// The content type the binding asks for.
pub const PLAIN: Option<&str> = Some("text/plain; charset=utf-8");

/// A valid v1.1 REQUEST with fresh ids and `body`.
pub fn envelope(ids: &IdGenerator, body: &str) -> (String, String) {
    let mut e = Envelope::new("CLAUDE", "CHATGPT");
    let id = ids.next_id();
    e.set_header("user", "kalle");
    e.set_header("session", "2026-11-23T19Z test");
    e.set_header("thread", ids.next_id());
    e.set_header("message", &id);
    e.set_header("context", "http test");
    e.set_header("intent", "REQUEST");
    e.body = Some(body.to_string());
    e.sig = Some("none".into());
    (id, render(&e))
}

/// A peer on loopback that reads each request whole, then answers it with the next of
/// `answers` (`STATUS` and header lines; the last again once they run out) and closes.
pub struct Peer {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    requests: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl Peer {
    /// Starts answering on an ephemeral port.
    pub fn start(answers: Vec<Box<dyn Fn() -> String + Send>>) -> Peer {
        use std::sync::atomic::Ordering;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let requests = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let count = std::sync::Arc::clone(&requests);
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(mut conn) = conn else { continue };
                let n = count.fetch_add(1, Ordering::SeqCst);
                read_request(&mut conn);
                let head = answers[n.min(answers.len() - 1)]();
                let body = "slow down\n";
                let _ = write!(
                    conn,
                    "HTTP/1.1 {head}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        Peer { url, requests }
    }

    /// How many requests it has answered (or is answering).
    pub fn requests(&self) -> usize {
        self.requests.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// Reads a request's head and its `Content-Length` body.
pub fn read_request(conn: &mut TcpStream) {
    conn.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 8192];
    let body_at = loop {
        if let Some(at) = seen.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        match conn.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => seen.extend_from_slice(&buf[..n]),
        }
    };
    let head = String::from_utf8_lossy(&seen[..body_at]).to_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    while seen.len() < body_at + length {
        match conn.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => seen.extend_from_slice(&buf[..n]),
        }
    }
}

/// An answer that is always `head`.
pub fn answer(head: &'static str) -> Box<dyn Fn() -> String + Send> {
    Box::new(move || head.to_string())
}

/// Connections from a chosen local address: every 127.x.y.z is this machine's, so tests on
/// loopback can play clients at as many addresses as they like.
pub struct Dialer {
    runtime: tokio::runtime::Runtime,
}

impl Dialer {
    pub fn new() -> Dialer {
        Dialer {
            runtime: tokio::runtime::Builder::new_current_thread()
                .enable_io()
                .build()
                .expect("a runtime to connect with"),
        }
    }

    /// A blocking connection from `from` (any port) to `to`.
    pub fn connect(&self, from: std::net::IpAddr, to: SocketAddr) -> std::io::Result<TcpStream> {
        self.runtime.block_on(async {
            let socket = tokio::net::TcpSocket::new_v4()?;
            socket.bind(SocketAddr::new(from, 0))?;
            let stream = socket.connect(to).await?.into_std()?;
            stream.set_nonblocking(false)?;
            Ok(stream)
        })
    }
}

/// [`post`] with `Connection: close` from `from`, the time it took to be answered with it.
pub fn post_from(
    dialer: &Dialer,
    from: &str,
    addr: SocketAddr,
    headers: &[&str],
    body: &str,
) -> (Raw, Duration) {
    let start = Instant::now();
    let mut s = dialer
        .connect(from.parse().expect("an address"), addr)
        .expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut req = format!(
        "POST /crosstalk/receive HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\n",
        body.len()
    );
    for h in headers {
        req.push_str(h);
        req.push_str("\r\n");
    }
    req.push_str("\r\n");
    req.push_str(body);
    let _ = s.write_all(req.as_bytes());
    let mut buf = Vec::new();
    let _ = s.read_to_end(&mut buf);
    (parse_answer(&buf), start.elapsed())
}
