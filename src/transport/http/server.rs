//! `crosstalk serve`: the HTTP binding's receiving end.
//!
//! tokio runs only in here. Each connection accepted holds one of `max_connections` slots
//! ([`super::slots`]; at most `max_connections_per_client` for one client), and is served by
//! hyper's HTTP/1 with a header size limit and a head timeout, its requests routed by axum. A
//! connection that finds no slot is answered `503` with `Retry-After` at once
//! ([`super::turn_away`]) instead of waiting in the listen backlog; when all are taken, the
//! one that has waited longest for a request head gives its slot up. At most `max_requests`
//! requests are read and served at once (each holds its body); one more is answered `503`
//! when its head is in. Only one thread writes:
//! a dedicated writer owns the [`Store`] and answers requests in arrival order, so handlers
//! never block the runtime on SQLite and two requests never compete for the database's lock
//! (another process still may: the store waits for it, see `store/importing/writer.rs`).
//!
//! On SIGINT or SIGTERM the server stops accepting, lets every request in flight finish (its
//! envelope stored and its answer sent), then lets the writer finish what it was handed and
//! joins it: every envelope acknowledged is committed, and none is half-written because each
//! import commits in transactions.

use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Extension, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use axum::routing::post;
use http_body_util::BodyExt;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::sync::{Semaphore, oneshot};
use tower::ServiceExt;

use super::hop::{HOP_PATH, NEXT_PATH, json_refusal};
use super::linger;
use super::receive::{Answer, Desk, refusal};
use super::slots::{Admission, Slots};
use super::{RECEIVE_PATH, is_plain_utf8};
use crate::ids::IdGenerator;
use crate::store::Store;

/// The smallest read buffer hyper accepts; a smaller header limit is raised to it.
const MIN_HEADER_LIMIT: usize = 8192;

/// How `serve` listens, and its limits.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Address and port (port 0: any free one, printed once bound).
    pub listen: SocketAddr,
    /// The bearer token requests must carry; required when `listen` is not loopback.
    pub token: Option<String>,
    /// Largest request body, in bytes.
    pub max_body: usize,
    /// Largest request head (request line and headers), in bytes (at least 8 KiB).
    pub max_header: usize,
    /// How long a client has to send its whole request head (request line and headers),
    /// from the moment it connects or its last answer was sent.
    pub head_timeout: Duration,
    /// How long a client has to send its body, once its head is in.
    pub request_timeout: Duration,
    /// Connections held at once.
    pub max_connections: usize,
    /// Connections one client (an IPv4 address, an IPv6 /64) holds at once.
    pub max_connections_per_client: usize,
    /// Requests read and served at once (each holds its body, up to `max_body`, in memory).
    pub max_requests: usize,
    /// Requests a minute per client address (0: no limit), and how many at once.
    pub rate_per_minute: u32,
    /// The rate limit's burst.
    pub burst: u32,
    /// The address ACK and ERROR replies come from (the operator's own).
    pub desk: Option<String>,
    /// The protocol's size limit for one envelope.
    pub size_limit: usize,
    /// The address book: how a companion's hops are written for their recipients.
    pub book: crate::contacts::AddressBook,
    /// With `[relay] audit`: the name of this desk's hops.
    pub audit_by: Option<String>,
    /// How long a hop delivered straight to a contact waits out a busy peer (`[send]
    /// retry_for`).
    pub retry_for: Duration,
}

/// Why `serve` could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// Listening beyond loopback without a token.
    #[error(
        "refusing to listen on {0} without a token: anyone who can reach it could write to your database; set one with --token, $CROSSTALK_TOKEN or [serve] token, or listen on 127.0.0.1"
    )]
    TokenRequired(SocketAddr),
    /// The address could not be bound.
    #[error("cannot listen on {addr}: {source}; choose another address or port with --listen")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// The runtime or the writer thread could not be started.
    #[error("cannot start the server: {0}")]
    Start(std::io::Error),
}

/// What a run of the server did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    /// Requests answered with an ACK.
    pub acknowledged: u64,
    /// Requests answered with an ERROR.
    pub refused: u64,
    /// Connections answered 503 before any request was read: no slot was free for them (or
    /// for their client), or they gave theirs up waiting for a head.
    pub turned_away: u64,
}

/// One request's body for the writer, and where its answer goes.
struct Job {
    kind: Kind,
    peer: String,
    body: Bytes,
    reply: oneshot::Sender<Answer>,
}

/// Which endpoint a request came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// The binding's `/crosstalk/receive`: an envelope, answered by ACK or ERROR.
    Receive,
    /// A companion's copy (see [`super::hop`]); `carry`: record the relay.
    Hop { carry: bool },
    /// A companion asks for the next envelope of a several-envelope copy.
    Next,
}

impl Kind {
    /// Answered in JSON (a companion), not with an envelope.
    fn json(self) -> bool {
        self != Kind::Receive
    }
}

/// What every handler shares.
struct Shared {
    token: Option<String>,
    max_body: usize,
    request_timeout: Duration,
    /// Requests being read and served.
    requests: Semaphore,
    rate: super::rate::RateLimit,
    retry_after: u64,
    desk: Option<String>,
    ids: IdGenerator,
    /// Taken at shutdown, so the writer sees the end of its queue.
    jobs: Mutex<Option<mpsc::Sender<Job>>>,
    acknowledged: AtomicU64,
    refused: AtomicU64,
    turned_away: AtomicU64,
}

/// The client's address, put on each request by the connection that carried it.
#[derive(Clone, Copy)]
struct Peer(SocketAddr);

/// Checks the token rule before anything is bound.
pub fn check(settings: &Settings) -> Result<(), ServeError> {
    if settings.token.is_none() && !is_loopback(settings.listen.ip()) {
        return Err(ServeError::TokenRequired(settings.listen));
    }
    Ok(())
}

fn is_loopback(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_loopback(),
        IpAddr::V6(v6) => v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v| v.is_loopback()),
    }
}

/// Serves until SIGINT or SIGTERM. `on_bound` is told the address once listening.
pub fn serve(
    settings: Settings,
    store: Store,
    on_bound: impl FnOnce(SocketAddr),
) -> Result<Summary, ServeError> {
    run_with(settings, store, on_bound, |_| async {
        let _ = shutdown_signal().await;
    })
}

/// Serves until `stop` is sent (or dropped): for benchmarks and tests in one process.
pub fn serve_until(
    settings: Settings,
    store: Store,
    on_bound: impl FnOnce(SocketAddr),
    stop: oneshot::Receiver<()>,
) -> Result<Summary, ServeError> {
    run_with(settings, store, on_bound, |_| async {
        let _ = stop.await;
    })
}

fn run_with<F: Future<Output = ()> + Send>(
    settings: Settings,
    store: Store,
    on_bound: impl FnOnce(SocketAddr),
    stop: impl FnOnce(()) -> F,
) -> Result<Summary, ServeError> {
    check(&settings)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("crosstalk-serve")
        .build()
        .map_err(ServeError::Start)?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(settings.listen)
            .await
            .map_err(|source| ServeError::Bind {
                addr: settings.listen,
                source,
            })?;
        let bound = listener.local_addr().map_err(ServeError::Start)?;
        on_bound(bound);
        run(settings, store, listener, stop(())).await
    })
}

async fn run(
    settings: Settings,
    store: Store,
    listener: tokio::net::TcpListener,
    stop: impl Future<Output = ()>,
) -> Result<Summary, ServeError> {
    let (jobs, writer) = start_writer(&settings, store)?;
    let shared = shared_state(&settings, jobs);
    let router = Router::new()
        .route(RECEIVE_PATH, post(receive))
        .route(HOP_PATH, post(hop))
        .route(NEXT_PATH, post(hop_next))
        .with_state(Arc::clone(&shared));
    let graceful = GracefulShutdown::new();
    let slots = Slots::new(
        settings.max_connections,
        settings.max_connections_per_client,
    );
    // Connections being answered 503 hold a file each until they close: no more of them at
    // once than there are slots; past that each is answered and closed without waiting.
    let turning_away = Arc::new(Semaphore::new(settings.max_connections.max(1)));
    let mut http = hyper::server::conn::http1::Builder::new();
    // One deadline for the whole head, started when the connection is ready for a request
    // (new, or kept alive after an answer): bytes trickled in do not extend it.
    http.timer(TokioTimer::new())
        .header_read_timeout(settings.head_timeout)
        .max_buf_size(settings.max_header.max(MIN_HEADER_LIMIT));
    tokio::pin!(stop);
    loop {
        let (stream, peer) = tokio::select! {
            r = listener.accept() => match r {
                Ok(a) => a,
                Err(e) => {
                    // Out of file descriptors and the like: wait instead of spinning.
                    tracing::warn!("serve: accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut stop => break,
        };
        let slot = match slots.admit(peer.ip(), Instant::now()) {
            Admission::Admitted(slot) => slot,
            Admission::ClientFull => {
                turn_away(&shared, &turning_away, stream, peer, Busy::Client);
                continue;
            }
            Admission::Full => {
                turn_away(&shared, &turning_away, stream, peer, Busy::Full);
                continue;
            }
        };
        let conn = Connection {
            router: router.clone(),
            shared: Arc::clone(&shared),
            turning_away: Arc::clone(&turning_away),
        };
        conn.serve(stream, peer, slot, &http, &graceful);
    }
    drop(listener);
    // Requests in flight finish; idle connections close. A client that keeps a request open
    // past its timeout is cut off by the head and body timeouts, so this ends.
    let grace = settings.head_timeout + settings.request_timeout * 2 + Duration::from_secs(5);
    if tokio::time::timeout(grace, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("serve: connections still open after {grace:?}; closing them");
    }
    let sender = shared.jobs.lock().ok().and_then(|mut j| j.take());
    drop(sender);
    drop(router);
    // What the writer was handed is stored before the process ends.
    let _ = tokio::task::spawn_blocking(move || writer.join()).await;
    Ok(Summary {
        acknowledged: shared.acknowledged.load(Ordering::Relaxed),
        refused: shared.refused.load(Ordering::Relaxed),
        turned_away: shared.turned_away.load(Ordering::Relaxed),
    })
}

/// The one thread that writes the database: every request's job, in arrival order, answered
/// back on the job's channel.
fn start_writer(
    settings: &Settings,
    store: Store,
) -> Result<(mpsc::Sender<Job>, std::thread::JoinHandle<()>), ServeError> {
    let (jobs, queue) = mpsc::channel::<Job>();
    let mut desk = Desk::new(store, settings.desk.clone(), settings.size_limit)
        .with_carrier(settings.book.clone(), settings.audit_by.clone())
        .waiting_out(settings.retry_for);
    let writer = std::thread::Builder::new()
        .name("crosstalk-serve-writer".into())
        .spawn(move || {
            for job in queue {
                let answer = match job.kind {
                    Kind::Receive => desk.receive(&job.peer, &job.body),
                    Kind::Hop { carry } => desk.hop(&job.peer, &job.body, carry),
                    Kind::Next => desk.put_up(&job.body),
                };
                // The client may have gone: its envelope is stored all the same.
                let _ = job.reply.send(answer);
            }
        })
        .map_err(ServeError::Start)?;
    Ok((jobs, writer))
}

/// What every request's handler shares: the limits, the counts, the writer's queue.
fn shared_state(settings: &Settings, jobs: mpsc::Sender<Job>) -> Arc<Shared> {
    Arc::new(Shared {
        token: settings.token.clone(),
        max_body: settings.max_body,
        request_timeout: settings.request_timeout,
        requests: Semaphore::new(settings.max_requests.max(1)),
        rate: super::rate::RateLimit::new(settings.rate_per_minute, settings.burst),
        retry_after: 60u64
            .checked_div(u64::from(settings.rate_per_minute))
            .unwrap_or(1)
            .max(1),
        desk: settings.desk.clone(),
        ids: IdGenerator::new(),
        jobs: Mutex::new(Some(jobs)),
        acknowledged: AtomicU64::new(0),
        refused: AtomicU64::new(0),
        turned_away: AtomicU64::new(0),
    })
}

/// One admitted connection's handles: the router, the shared state, the turning-away limit.
struct Connection {
    router: Router,
    shared: Arc<Shared>,
    turning_away: Arc<Semaphore>,
}

impl Connection {
    /// Serves the admitted connection from `peer` on a task of its own, holding `slot` until
    /// it closes; when it has to give its slot up (see `slots`), it is answered 503 on a
    /// second handle of its socket.
    fn serve(
        self,
        stream: tokio::net::TcpStream,
        peer: SocketAddr,
        slot: super::slots::Slot,
        http: &hyper::server::conn::http1::Builder,
        graceful: &GracefulShutdown,
    ) {
        // A second handle on the socket, to answer on it should the connection have to give
        // its slot up (hyper owns the first and closes it when dropped).
        let (stream, spare) = match split_off_spare(stream) {
            Ok(pair) => pair,
            Err(e) => {
                tracing::warn!("serve: a connection from {peer} could not be set up: {e}");
                return;
            }
        };
        let Connection {
            router,
            shared,
            turning_away,
        } = self;
        let conn_state = slot.conn();
        let service = hyper::service::service_fn(move |mut req: hyper::Request<_>| {
            req.extensions_mut().insert(Peer(peer));
            let serving = conn_state.serving();
            let answered = router.clone().oneshot(req);
            async move {
                let response = answered.await;
                drop(serving);
                response
            }
        });
        let conn = graceful.watch(http.serve_connection(TokioIo::new(stream), service));
        tokio::spawn(async move {
            let evicted = tokio::select! {
                _ = conn => false,
                () = slot.evicted() => true,
            };
            drop(slot);
            if evicted {
                tracing::debug!("serve: {peer} gave its slot up, waiting for a head");
                // Non-blocking already: the two handles share the socket's flags.
                if let Some(Ok(spare)) = spare.map(tokio::net::TcpStream::from_std) {
                    turn_away(&shared, &turning_away, spare, peer, Busy::Evicted);
                }
            }
        });
    }
}

/// Why a connection is turned away.
#[derive(Debug, Clone, Copy)]
enum Busy {
    /// Its client holds its share of the slots.
    Client,
    /// Every slot is taken by a request being served.
    Full,
    /// It gave its slot up to a newcomer, having waited longest for its request head.
    Evicted,
}

/// Answers `stream` 503 with `Retry-After` and closes it, on a task of its own; at once, with
/// what the socket takes without waiting, when too many are being turned away already.
fn turn_away(
    s: &Shared,
    permits: &Arc<Semaphore>,
    stream: tokio::net::TcpStream,
    peer: SocketAddr,
    why: Busy,
) {
    let permit = Arc::clone(permits).try_acquire_owned();
    let reason = match why {
        Busy::Client => {
            "This desk serves as many connections from your address as it takes from one; close one, or send again later (see Retry-After)"
        }
        Busy::Full => {
            "This desk serves as many connections as it takes; send again later (see Retry-After)"
        }
        Busy::Evicted => {
            "This connection sent no request in time while the desk was full, and made room for another; send the request again as you connect (see Retry-After)"
        }
    };
    let body = refusal(s.desk.as_deref(), 503, "E-RATE", reason, &s.ids).body;
    let bytes = super::turn_away::answer(s.retry_after, &body);
    s.turned_away.fetch_add(1, Ordering::Relaxed);
    let Ok(permit) = permit else {
        tracing::debug!("serve: {peer} turned away at once: too many being turned away");
        super::turn_away::answer_at_once(stream, &bytes);
        return;
    };
    tokio::spawn(async move {
        let ended = super::turn_away::answer_and_close(stream, &bytes).await;
        tracing::debug!("serve: {peer} turned away ({why:?}): {ended:?}");
        drop(permit);
    });
}

/// `stream`, and a second handle on its socket (`None` when the system has no file left for
/// one: the connection is then closed unanswered should it be evicted). The second is handed
/// to the runtime only when it is used, once hyper's handle is gone.
fn split_off_spare(
    stream: tokio::net::TcpStream,
) -> std::io::Result<(tokio::net::TcpStream, Option<std::net::TcpStream>)> {
    let std_stream = stream.into_std()?;
    let spare = std_stream.try_clone().ok();
    Ok((tokio::net::TcpStream::from_std(std_stream)?, spare))
}

/// SIGINT (Ctrl-C) or SIGTERM.
async fn shutdown_signal() -> std::io::Result<()> {
    #[cfg(unix)]
    {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
        tokio::select! {
            r = tokio::signal::ctrl_c() => r,
            _ = term.recv() => Ok(()),
        }
    }
    #[cfg(not(unix))]
    {
        tokio::signal::ctrl_c().await
    }
}

async fn receive(
    State(s): State<Arc<Shared>>,
    Extension(Peer(peer)): Extension<Peer>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    handle(s, Kind::Receive, peer, headers, body).await
}

/// `/crosstalk/hop`; `?carry=0` stores without recording a relay.
async fn hop(
    State(s): State<Arc<Shared>>,
    Extension(Peer(peer)): Extension<Peer>,
    uri: axum::http::Uri,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let carry = !(uri.query().unwrap_or(""))
        .split('&')
        .any(|p| matches!(p, "carry=0" | "carry=false" | "carry=no"));
    handle(s, Kind::Hop { carry }, peer, headers, body).await
}

/// `/crosstalk/hop/next`.
async fn hop_next(
    State(s): State<Arc<Shared>>,
    Extension(Peer(peer)): Extension<Peer>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    handle(s, Kind::Next, peer, headers, body).await
}

async fn handle(
    s: Arc<Shared>,
    kind: Kind,
    peer: SocketAddr,
    headers: HeaderMap,
    body: Body,
) -> Response {
    // One deadline for the body, whether it is read or, after an early answer, thrown away.
    let deadline = tokio::time::Instant::now() + s.request_timeout;
    let (answer, unread) = match admit(&s, kind, peer, &headers) {
        Err(refused) => (refused, Some((body, 0))),
        // Each request read holds its body: only `max_requests` at once.
        Ok(()) => match s.requests.try_acquire() {
            Err(_) => (busy(&s, kind), Some((body, 0))),
            Ok(reading) => {
                let done = match read_body(&s, kind, body, deadline).await {
                    Ok(body) => (process(&s, kind, peer, body).await, None),
                    Err((refused, unread)) => (refused, unread),
                };
                drop(reading);
                done
            }
        },
    };
    if answer.status == 200 {
        s.acknowledged.fetch_add(1, Ordering::Relaxed);
    } else {
        s.refused.fetch_add(1, Ordering::Relaxed);
    }
    let mut response = respond(&s, answer);
    if let Some((body, read)) = unread {
        // Answered before the body was read through: the connection ends with this answer,
        // and the rest of the body is read first, so that the client gets to read the
        // answer (see `linger`).
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
        if linger::worth_it(declared_length(&headers), read) {
            tokio::spawn(async move {
                let how = linger::discard(body, deadline).await;
                tracing::debug!("serve: the rest of a refused body from {peer}: {how:?}");
            });
        }
    }
    response
}

/// The checks on a request's head, cheapest first: rate, token, content type, declared
/// length. The body is read only when they pass.
fn admit(s: &Shared, kind: Kind, peer: SocketAddr, headers: &HeaderMap) -> Result<(), Answer> {
    let refuse = |status, code, reason: &str| refuse(s, kind, status, code, reason);
    if !s.rate.allow(peer.ip(), Instant::now()) {
        return Err(refuse(
            429,
            "E-RATE",
            "Rate limit exceeded; send again later (see Retry-After)",
        ));
    }
    // A companion gets text the operator pastes unread: never without a token, even on
    // loopback, where any local user could post.
    if kind.json() && s.token.is_none() {
        return Err(refuse(
            403,
            "E-PERM",
            "This desk relays for a companion only with a token: start it with `crosstalk serve --token TOKEN` and give the companion the same token",
        ));
    }
    if let Some(token) = &s.token {
        match bearer(headers) {
            None => {
                return Err(refuse(
                    401,
                    "E-PERM",
                    "A token is required: send it as `Authorization: Bearer TOKEN`",
                ));
            }
            Some(given) if !same_token(given, token) => {
                return Err(refuse(403, "E-PERM", "The token is not accepted"));
            }
            Some(_) => {}
        }
    }
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if !is_plain_utf8(content_type) {
        return Err(refuse(
            415,
            "E-UNSUPPORTED",
            "Send the envelope as `Content-Type: text/plain; charset=utf-8`",
        ));
    }
    // A body in a content coding this desk does not undo (gzip, …) would be stored as the
    // coded bytes, read as text.
    let coded = headers
        .get_all(header::CONTENT_ENCODING)
        .iter()
        .flat_map(|v| v.to_str().unwrap_or("?").split(','))
        .any(|coding| !coding.trim().eq_ignore_ascii_case("identity"));
    if coded {
        return Err(refuse(
            415,
            "E-UNSUPPORTED",
            "Send the envelope without a content coding (no `Content-Encoding`, or `identity`)",
        ));
    }
    if declared_length(headers).is_some_and(|n| n > s.max_body as u64) {
        return Err(too_large(s, kind));
    }
    Ok(())
}

/// The body, read within the size limit by `deadline`; else the refusal, with the rest of a
/// body cut off past the limit (and how much of it was read) to be thrown away.
async fn read_body(
    s: &Shared,
    kind: Kind,
    body: Body,
    deadline: tokio::time::Instant,
) -> Result<Bytes, (Answer, Option<(Body, u64)>)> {
    match tokio::time::timeout_at(deadline, read_limited(body, s.max_body)).await {
        // A client too slow for its deadline (or whose body broke off, below) is not read
        // any further: its connection closes with the answer.
        Err(_) => Err((
            refuse(
                s,
                kind,
                408,
                "E-TIMEOUT",
                "The body did not arrive in time; send it again",
            ),
            None,
        )),
        Ok(Err(ReadError::TooLarge(rest, read))) => Err((too_large(s, kind), Some((rest, read)))),
        Ok(Err(ReadError::Broken)) => Err((
            refuse(s, kind, 400, "E-FORMAT", "The body could not be read"),
            None,
        )),
        Ok(Ok(body)) => Ok(body),
    }
}

/// A refusal as the endpoint answers one: an ERROR envelope, or JSON to a companion.
fn refuse(s: &Shared, kind: Kind, status: u16, code: &str, reason: &str) -> Answer {
    if kind.json() {
        json_refusal(status, code, reason)
    } else {
        refusal(s.desk.as_deref(), status, code, reason, &s.ids)
    }
}

/// The 503 for a request that finds `max_requests` being read and served.
fn busy(s: &Shared, kind: Kind) -> Answer {
    refuse(
        s,
        kind,
        503,
        "E-RATE",
        "This desk is serving as many requests as it takes at once; send again later (see Retry-After)",
    )
}

/// The 413 for a body past `max_body` (to a companion with the limit as a number too).
fn too_large(s: &Shared, kind: Kind) -> Answer {
    let reason = format!(
        "The body exceeds the {} bytes this desk accepts",
        s.max_body
    );
    if kind.json() {
        super::hop::json_too_large(&reason, s.max_body as u64)
    } else {
        refuse(s, kind, 413, "E-TOO-LARGE", &reason)
    }
}

/// The request's `Content-Length`, when it has a valid one.
fn declared_length(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
}

/// Hands the body to the writer and waits for its answer.
async fn process(s: &Shared, kind: Kind, peer: SocketAddr, body: Bytes) -> Answer {
    let (reply, answer) = oneshot::channel();
    let job = Job {
        kind,
        peer: peer.to_string(),
        body,
        reply,
    };
    let sent = match s.jobs.lock() {
        Ok(jobs) => jobs.as_ref().is_some_and(|j| j.send(job).is_ok()),
        Err(_) => false,
    };
    let unavailable = || {
        let reason = "The receiving desk is shutting down; send again later";
        if kind.json() {
            json_refusal(503, "E-ROUTE", reason)
        } else {
            refusal(s.desk.as_deref(), 503, "E-ROUTE", reason, &s.ids)
        }
    };
    if !sent {
        return unavailable();
    }
    answer.await.unwrap_or_else(|_| unavailable())
}

enum ReadError {
    /// Past the limit: the rest of the body, and how much of it was read.
    TooLarge(Body, u64),
    Broken,
}

/// Reads the body frame by frame, stopping as soon as it passes `limit` (a chunked body has
/// no length to refuse it by up front).
async fn read_limited(mut body: Body, limit: usize) -> Result<Bytes, ReadError> {
    let mut buf = Vec::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|_| ReadError::Broken)?;
        if let Ok(data) = frame.into_data() {
            if buf.len() + data.len() > limit {
                let read = (buf.len() + data.len()) as u64;
                return Err(ReadError::TooLarge(body, read));
            }
            buf.extend_from_slice(&data);
        }
    }
    Ok(Bytes::from(buf))
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?.trim();
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

/// Compares in time independent of where the tokens differ, so the token cannot be guessed
/// character by character from response times.
fn same_token(given: &str, expected: &str) -> bool {
    let (a, b) = (given.as_bytes(), expected.as_bytes());
    let mut diff = a.len() ^ b.len();
    for (i, &x) in b.iter().enumerate() {
        diff |= usize::from(x ^ a.get(i).copied().unwrap_or(0));
    }
    diff == 0
}

fn respond(s: &Shared, answer: Answer) -> Response {
    let status = StatusCode::from_u16(answer.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = Response::new(Body::from(answer.body));
    *response.status_mut() = status;
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(answer.content_type),
    );
    match answer.status {
        401 => {
            h.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        429 | 503 => {
            h.insert(header::RETRY_AFTER, HeaderValue::from(s.retry_after));
        }
        _ => {}
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_compare_whole() {
        assert!(same_token("secret", "secret"));
        assert!(!same_token("secre", "secret"));
        assert!(!same_token("secretx", "secret"));
        assert!(!same_token("", "secret"));
        assert!(!same_token("Secret", "secret"));
    }

    #[test]
    fn loopback_needs_no_token_anything_else_does() {
        let base = Settings {
            listen: "127.0.0.1:0".parse().unwrap(),
            token: None,
            max_body: 1,
            max_header: 1,
            head_timeout: Duration::from_secs(1),
            request_timeout: Duration::from_secs(1),
            max_connections: 1,
            max_connections_per_client: 1,
            max_requests: 1,
            rate_per_minute: 0,
            burst: 1,
            desk: None,
            size_limit: 1,
            book: Default::default(),
            audit_by: None,
            retry_for: Duration::ZERO,
        };
        assert!(check(&base).is_ok());
        for addr in ["[::1]:0", "127.0.0.2:80"] {
            let s = Settings {
                listen: addr.parse().unwrap(),
                ..base.clone()
            };
            assert!(check(&s).is_ok(), "{addr}");
        }
        for addr in ["0.0.0.0:0", "[::]:0", "192.0.2.1:80"] {
            let s = Settings {
                listen: addr.parse().unwrap(),
                ..base.clone()
            };
            assert!(
                matches!(check(&s), Err(ServeError::TokenRequired(_))),
                "{addr}"
            );
            let s = Settings {
                token: Some("t".into()),
                ..s
            };
            assert!(check(&s).is_ok(), "{addr}");
        }
    }
}
