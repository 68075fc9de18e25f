//! `crosstalk serve`'s connections: the head timeout (for the whole head, however it
//! trickles in), each client's share of the slots, the longest waiting giving its slot up,
//! and 503 at once — never a wait in the listen backlog — past the connection and request
//! limits.
//!
//! Then the real `crosstalk serve` (its default limits, a token) while 1 000 connections hold on
//! without ever finishing a request: half send a partial head and stop, half trickle theirs a
//! byte at a time, and each one the server closes is opened again. A client that sends its
//! request as it connects is still served within 1 s; from the flooding address itself it
//! is answered within 1 s too (served, or 503 with `Retry-After`), never parked.
//!
//! Every 127.x.y.z reaches loopback, so the flood comes either from one address, where the
//! per-client cap meets it, or from 1 000: those the default slots hold all at once, and
//! over fewer slots the connection waiting longest for its head gives its slot to the
//! newcomer.

use crate::helpers::http;

use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use crosstalk::ids::IdGenerator;
use http::{Dialer, Server, envelope, post_from};

const FLOOD: usize = 1000;
/// `[serve] max_connections_per_client`'s default.
const PER_CLIENT: usize = 64;
const GOAL: Duration = Duration::from_secs(1);
const TOKEN: &str = "Authorization: Bearer s3cret";

/// One test at a time: a flood shares two cores and the file limit with whatever runs beside
/// it, and these tests measure time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Files this process needs open: the flood, and some for the harness and the server's pipes.
fn raise_file_limit() {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let want = FLOOD as u64 + 200;
    let limit = getrlimit(Resource::Nofile);
    if limit.current.is_none_or(|c| c >= want) {
        return;
    }
    let maximum = limit.maximum.map(|m| m.max(want));
    // Raising the hard limit takes root (as on CI); the soft one up to it does not.
    let raised = setrlimit(
        Resource::Nofile,
        Rlimit {
            current: Some(want),
            maximum,
        },
    )
    .or_else(|_| {
        setrlimit(
            Resource::Nofile,
            Rlimit {
                current: Some(want),
                maximum: limit.maximum,
            },
        )
    });
    if let Err(e) = raised {
        panic!(
            "this test holds {FLOOD} connections and needs {want} open files, but the limit is {:?} (hard {:?}): {e}; raise it with `ulimit -n {want}`",
            limit.current, limit.maximum
        );
    }
}

/// Held connections: what they do, from where, and how many the server closed.
struct Flood {
    stop: Arc<AtomicBool>,
    /// Connections opened so far.
    opened: Arc<AtomicUsize>,
    /// Connections the server answered or closed (each opened again when renewing).
    closed: Arc<AtomicUsize>,
    /// Ticks done: each trickled a byte on every connection that trickles and looked at all.
    ticks: Arc<AtomicUsize>,
    thread: Option<JoinHandle<()>>,
}

#[derive(Clone, Copy)]
enum Holds {
    /// A partial head, then nothing.
    Partial,
    /// A head a byte at a time, every tick.
    Trickle,
}

/// A held connection.
struct Held {
    from: IpAddr,
    holds: Holds,
    stream: Option<TcpStream>,
}

const TICK: Duration = Duration::from_millis(250);

impl Held {
    fn open(&mut self, dialer: &Dialer, to: SocketAddr, opened: &AtomicUsize) {
        self.stream = dialer.connect(self.from, to).ok().and_then(|mut s| {
            s.write_all(b"POST /crosstalk/receive HTTP/1.1\r\nHost: x\r\nX-Pad: ")
                .ok()?;
            s.set_nonblocking(true).ok()?;
            opened.fetch_add(1, Ordering::Relaxed);
            Some(s)
        });
    }

    /// One tick: trickles a byte; says whether the server has closed (or answered) it.
    fn closed(&mut self) -> bool {
        let Some(s) = &mut self.stream else {
            return true;
        };
        if let Holds::Trickle = self.holds {
            let _ = s.write(b"a");
        }
        let mut buf = [0u8; 1024];
        match s.read(&mut buf) {
            Err(e) if e.kind() == ErrorKind::WouldBlock => false,
            // An answer (503, 408) or the end: either way the connection is done.
            _ => true,
        }
    }
}

impl Flood {
    /// Opens `FLOOD` connections to `to` from `sources` in turn, and keeps them open (opening
    /// again each one the server closes) until dropped. Returns once all were opened.
    fn start(to: SocketAddr, sources: Vec<IpAddr>, renew: bool) -> Flood {
        let stop = Arc::new(AtomicBool::new(false));
        let opened = Arc::new(AtomicUsize::new(0));
        let closed = Arc::new(AtomicUsize::new(0));
        let ticks = Arc::new(AtomicUsize::new(0));
        let (ready_tx, ready) = std::sync::mpsc::channel();
        let thread = {
            let (stop, opened, closed, ticks) =
                (stop.clone(), opened.clone(), closed.clone(), ticks.clone());
            std::thread::spawn(move || {
                let dialer = Dialer::new();
                let mut held: Vec<Held> = (0..FLOOD)
                    .map(|i| Held {
                        from: sources[i % sources.len()],
                        holds: if i % 2 == 0 {
                            Holds::Partial
                        } else {
                            Holds::Trickle
                        },
                        stream: None,
                    })
                    .collect();
                for h in &mut held {
                    h.open(&dialer, to, &opened);
                }
                let _ = ready_tx.send(());
                while !stop.load(Ordering::Relaxed) {
                    for h in &mut held {
                        if h.stream.is_some() && h.closed() {
                            closed.fetch_add(1, Ordering::Relaxed);
                            h.stream = None;
                            if renew {
                                h.open(&dialer, to, &opened);
                            }
                        }
                    }
                    ticks.fetch_add(1, Ordering::Relaxed);
                    // The pace of the trickle, not a wait for anything.
                    std::thread::sleep(TICK);
                }
            })
        };
        ready.recv().expect("the flood started");
        Flood {
            stop,
            opened,
            closed,
            ticks,
            thread: Some(thread),
        }
    }

    /// (open now, answered or closed by the server so far).
    fn counts(&self) -> (usize, usize) {
        let closed = self.closed.load(Ordering::Relaxed);
        let opened = self.opened.load(Ordering::Relaxed);
        (opened.saturating_sub(closed), closed)
    }

    /// Waits (at most 30 s) until the flood has done `n` ticks.
    fn ticked(&self, n: usize) {
        let start = std::time::Instant::now();
        while self.ticks.load(Ordering::Relaxed) < n {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "the flood did not tick {n} times"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits (at most 30 s) until the server has answered or closed `n` connections: the
    /// flood is then met by the limits under test.
    fn answered_at_least(&self, n: usize) {
        let start = std::time::Instant::now();
        while self.counts().1 < n {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "the server answered only {:?} of the flood",
                self.counts()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Flood {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn guarded_server(dir: &std::path::Path, extra: &[&str]) -> Server {
    let mut args = vec!["--token", "s3cret", "--rate-per-minute", "0"];
    args.extend_from_slice(extra);
    Server::start(&dir.join("srv.db"), &args)
}

/// A POST from `from` with the token, and how long its answer took.
fn legitimate(
    server: &Server,
    dialer: &Dialer,
    from: &str,
    ids: &IdGenerator,
) -> (http::Raw, Duration) {
    let (_, text) = envelope(ids, "through the crowd");
    post_from(dialer, from, server.addr, &[TOKEN], &text)
}

/// Posts from `from` `times` times a tick apart while the flood goes on: each served (an
/// ACK) within the goal.
fn served_while_flooded(server: &Server, from: &str, times: usize, what: &str) {
    let (ids, dialer) = (IdGenerator::new(), Dialer::new());
    for _ in 0..times {
        let (answer, took) = legitimate(server, &dialer, from, &ids);
        assert_eq!(
            (answer.status, answer.intent().as_deref()),
            (200, Some("ACK")),
            "{answer:?}"
        );
        assert!(took < GOAL, "served after {took:?}");
        eprintln!("{what}: served from {from} in {took:?}");
        std::thread::sleep(TICK);
    }
}

/// Loopback addresses 127.3.x.y, `n` of them.
fn addresses(n: usize) -> Vec<IpAddr> {
    (0..n)
        .map(|i| IpAddr::V4(Ipv4Addr::new(127, 3, (i / 250) as u8, (i % 250) as u8 + 1)))
        .collect()
}

#[test]
fn a_flood_from_one_address_keeps_no_one_else_out() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    raise_file_limit();
    let dir = tempfile::tempdir().unwrap();
    let server = guarded_server(dir.path(), &[]);
    let flood = Flood::start(server.addr, vec![IpAddr::V4(Ipv4Addr::LOCALHOST)], true);
    // Those past the address's share were answered (and are opened again and again).
    flood.answered_at_least(FLOOD - PER_CLIENT);
    served_while_flooded(&server, "127.0.0.2", 3, "one address floods");
    // The flooding address itself: answered at once, served when one of its own idle
    // connections makes room, else told when to come back.
    let (ids, dialer) = (IdGenerator::new(), Dialer::new());
    for _ in 0..3 {
        let (answer, took) = legitimate(&server, &dialer, "127.0.0.1", &ids);
        match answer.status {
            200 => assert_eq!(answer.intent().as_deref(), Some("ACK"), "{answer:?}"),
            503 => {
                assert_eq!(answer.code().as_deref(), Some("E-RATE"), "{answer:?}");
                assert_eq!(answer.header("retry-after").as_deref(), Some("1"));
            }
            _ => panic!("{answer:?}"),
        }
        assert!(took < GOAL, "answered after {took:?}");
        eprintln!(
            "one address floods: answered {} from it in {took:?}",
            answer.status
        );
    }
    let (_, closed) = flood.counts();
    eprintln!("one address floods: {closed} connections answered or closed by the server");
    drop(flood);
    assert_eq!(server.stop(), 0);
}

#[test]
fn a_thousand_addresses_holding_connections_keep_no_one_out() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    raise_file_limit();
    let dir = tempfile::tempdir().unwrap();
    // The default slots, and a head timeout longer than the test: none is closed on time.
    let server = guarded_server(dir.path(), &["--head-timeout", "60"]);
    let flood = Flood::start(server.addr, addresses(FLOOD), true);
    // Every one trickled or sat for two ticks.
    flood.ticked(2);
    served_while_flooded(&server, "127.0.0.2", 5, "a thousand addresses hold");
    // All held at once: the default slots are more than the flood.
    let (open, closed) = flood.counts();
    assert_eq!((open, closed), (FLOOD, 0));
    eprintln!("a thousand addresses hold: {open} held open");
    drop(flood);
    assert_eq!(server.stop(), 0);
}

#[test]
fn a_thousand_addresses_over_fewer_slots_make_room_for_a_newcomer() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    raise_file_limit();
    let dir = tempfile::tempdir().unwrap();
    let server = guarded_server(dir.path(), &["--max-connections", "256"]);
    // Held, not opened again: a flood that opens a slot's worth of connections every
    // `YOUNG` (100 ms) keeps every slot too young to give up, and newcomers are answered
    // 503 at once (see src/transport/http/slots.rs).
    let flood = Flood::start(server.addr, addresses(FLOOD), false);
    // Every connection past the slots was answered; the last 256 in are held past `YOUNG`.
    flood.answered_at_least(FLOOD - 256);
    // What is waited for is age itself (past `YOUNG`), so a wait of a set time is the way.
    std::thread::sleep(TICK);
    served_while_flooded(
        &server,
        "127.0.0.2",
        5,
        "a thousand addresses over 256 slots",
    );
    // Each newcomer took the slot of one waiting longest.
    let (open, closed) = flood.counts();
    assert!(closed > FLOOD - 256, "{closed}");
    eprintln!(
        "a thousand addresses over 256 slots: {open} open, {closed} answered or closed by the server"
    );
    drop(flood);
    assert_eq!(server.stop(), 0);
}

/// A connection that sent a complete head promising `Content-Length: 100` and one byte of
/// it: a request being read, which holds its slot and a request's place.
fn reading(from: &str, addr: SocketAddr) -> TcpStream {
    let mut s = Dialer::new()
        .connect(from.parse().unwrap(), addr)
        .expect("connect");
    s.write_all(
        b"POST /crosstalk/receive HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\nx",
    )
    .unwrap();
    s
}

/// Reads a connection's answer (the server ends it).
fn answer_on(mut s: TcpStream) -> http::Raw {
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut buf = Vec::new();
    let _ = s.read_to_end(&mut buf);
    http::parse_answer(&buf)
}

/// Posts a fresh envelope from `from`, without a token.
fn post_plain(addr: SocketAddr, from: &str) -> (http::Raw, Duration) {
    let (_, text) = envelope(&IdGenerator::new(), "at the door");
    post_from(&Dialer::new(), from, addr, &[], &text)
}

fn assert_busy(answer: &http::Raw, reason: &str) {
    assert_eq!(
        (answer.status, answer.code().as_deref()),
        (503, Some("E-RATE")),
        "{answer:?}"
    );
    assert_eq!(
        answer.header("retry-after").as_deref(),
        Some("1"),
        "{answer:?}"
    );
    assert!(answer.body.contains(reason), "{answer:?}");
}

#[test]
fn a_head_sent_a_byte_at_a_time_loses_its_slot_at_the_head_timeout() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(
        &dir.path().join("srv.db"),
        &["--head-timeout", "2", "--request-timeout", "30"],
    );
    let mut trickle = TcpStream::connect(server.addr).unwrap();
    let silent = TcpStream::connect(server.addr).unwrap();
    let start = std::time::Instant::now();
    trickle
        .write_all(b"POST /crosstalk/receive HTTP/1.1\r\nX-Pad: ")
        .unwrap();
    trickle.set_nonblocking(true).unwrap();
    // A byte every 200 ms: were the timeout a wait between bytes, this would last forever.
    let closed_after = loop {
        std::thread::sleep(Duration::from_millis(200));
        let _ = trickle.write(b"a");
        match trickle.read(&mut [0u8; 64]) {
            Err(e) if e.kind() == ErrorKind::WouldBlock => {}
            // The end, a reset or an answer: the connection is done.
            _ => break start.elapsed(),
        }
        assert!(start.elapsed() < Duration::from_secs(10), "still open");
    };
    assert!(
        closed_after >= Duration::from_millis(1800) && closed_after < Duration::from_millis(3500),
        "closed after {closed_after:?}, the head timeout being 2 s"
    );
    // One that sent nothing at all is closed on the same deadline.
    silent
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let _ = (&silent).read(&mut [0u8; 64]);
    assert!(
        start.elapsed() < Duration::from_millis(3500),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(server.stop(), 0);
}

#[test]
fn past_the_connections_every_one_reading_a_request_a_newcomer_is_answered_503_at_once() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(
        &dir.path().join("srv.db"),
        &["--max-connections", "2", "--request-timeout", "30"],
    );
    let idle = server.sockets();
    let held = [
        reading("127.0.0.1", server.addr),
        reading("127.0.0.3", server.addr),
    ];
    server.wait_sockets(idle + 4, "both admitted");
    // Admitted is not enough: each must have had its head read, or it could give its slot up
    // to the newcomer. Nothing outside the server shows that a head was read (the body's
    // first byte is read with it, and the server says nothing until it has the rest), so a
    // bounded wait is the only way.
    std::thread::sleep(Duration::from_millis(300));
    let (answer, took) = post_plain(server.addr, "127.0.0.2");
    assert_busy(&answer, "as many connections as it takes");
    assert!(took < GOAL, "answered after {took:?}");
    // One of them done: the next is served.
    drop(held);
    server.wait_sockets(idle, "both let go");
    let (answer, _) = post_plain(server.addr, "127.0.0.2");
    assert_eq!(answer.status, 200, "{answer:?}");
    assert_eq!(server.stop(), 0);
}

#[test]
fn when_all_are_taken_the_connection_waiting_longest_for_a_head_makes_room() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(
        &dir.path().join("srv.db"),
        &["--max-connections", "1", "--head-timeout", "30"],
    );
    // One connection holds the only slot, sending nothing.
    let before = server.sockets();
    let idle = TcpStream::connect(server.addr).unwrap();
    server.wait_sockets(before + 2, "the idle one admitted");
    // Admitted, and it must be older than `YOUNG` (100 ms) to give its slot up: age is waited
    // for by the clock.
    std::thread::sleep(Duration::from_millis(300));
    let (answer, took) = post_plain(server.addr, "127.0.0.2");
    assert_eq!(answer.status, 200, "{answer:?}");
    assert!(took < GOAL, "served after {took:?}");
    // The idle one was told why it lost its slot.
    assert_busy(&answer_on(idle), "made room for another");
    assert_eq!(server.stop(), 0);
}

#[test]
fn one_address_holds_its_share_of_the_connections() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(
        &dir.path().join("srv.db"),
        &[
            "--max-connections-per-client",
            "2",
            "--request-timeout",
            "30",
            "--head-timeout",
            "30",
        ],
    );
    // Two requests being read from 127.0.0.1: its share. A third from it is answered at
    // once; one from elsewhere is served.
    let none = server.sockets();
    let held = [
        reading("127.0.0.1", server.addr),
        reading("127.0.0.1", server.addr),
    ];
    server.wait_sockets(none + 4, "both admitted");
    // Admitted is not enough: each must have had its head read, or it could give its slot up
    // to the newcomer. Nothing outside the server shows that a head was read (the body's
    // first byte is read with it, and the server says nothing until it has the rest), so a
    // bounded wait is the only way.
    std::thread::sleep(Duration::from_millis(300));
    let (answer, took) = post_plain(server.addr, "127.0.0.1");
    assert_busy(&answer, "from your address");
    assert!(took < GOAL, "answered after {took:?}");
    let (answer, took) = post_plain(server.addr, "127.0.0.2");
    assert_eq!(answer.status, 200, "{answer:?}");
    assert!(took < GOAL, "served after {took:?}");
    drop(held);
    server.wait_sockets(none, "the held ones let go");
    // Two idle connections from 127.0.0.1: the older makes room for its own newcomer.
    let idle = [
        TcpStream::connect(server.addr).unwrap(),
        TcpStream::connect(server.addr).unwrap(),
    ];
    server.wait_sockets(none + 4, "both idle ones admitted");
    // Admitted, and it must be older than `YOUNG` (100 ms) to give its slot up: age is waited
    // for by the clock.
    std::thread::sleep(Duration::from_millis(300));
    let (answer, took) = post_plain(server.addr, "127.0.0.1");
    assert_eq!(answer.status, 200, "{answer:?}");
    assert!(took < GOAL, "served after {took:?}");
    drop(idle);
    assert_eq!(server.stop(), 0);
}

#[test]
fn past_the_requests_read_at_once_a_request_is_answered_503_at_once() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(
        &dir.path().join("srv.db"),
        &["--max-requests", "1", "--request-timeout", "30"],
    );
    let none = server.sockets();
    let held = reading("127.0.0.1", server.addr);
    server.wait_sockets(none + 2, "the held one admitted");
    // Admitted is not enough: its request must be being read, which nothing outside the
    // server shows (the body's first byte is read with the head, and the server says nothing
    // until it has the rest), so a bounded wait is the only way.
    std::thread::sleep(Duration::from_millis(300));
    let (answer, took) = post_plain(server.addr, "127.0.0.2");
    assert_busy(&answer, "as many requests as it takes");
    assert!(took < GOAL, "answered after {took:?}");
    // Once the connection is let go, its request no longer holds a place.
    drop(held);
    server.wait_sockets(none, "the held one let go");
    let (answer, _) = post_plain(server.addr, "127.0.0.2");
    assert_eq!(answer.status, 200, "{answer:?}");
    assert_eq!(server.stop(), 0);
}
