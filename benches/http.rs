//! The HTTP binding under load: 10 000 envelopes posted to `serve` by 16 client threads over
//! keep-alive connections, against two baselines measured in the same run:
//!
//! - `import_direct`: the same envelopes imported one by one through the store, no HTTP (what
//!   the server's writer must do at the least);
//! - `minimal_server`: the same requests to an axum handler that only reads the body and
//!   answers 200 (what the HTTP stack costs at the least).
//!
//! `serve_16_clients / import_direct` is the cost of the binding over storing; and
//! `serve_16_clients / minimal_server` how far the store keeps the server from raw HTTP speed.

use std::net::SocketAddr;
use std::sync::mpsc;
use std::time::Duration;

use crosstalk::ids::IdGenerator;
use crosstalk::protocol::{Envelope, Options, render};
use crosstalk::store::Store;
use crosstalk::transport::http::server::{Settings, serve_until};
use divan::Bencher;
use divan::counter::ItemsCount;
use tempfile::TempDir;

/// The allocator the `crosstalk` binary uses (src/main.rs).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const CLIENTS: usize = 16;
const ENVELOPES: usize = 10_000;

fn main() {
    divan::main();
}

/// `ENVELOPES` distinct valid envelopes, each of its own thread.
fn envelopes() -> Vec<String> {
    let ids = IdGenerator::new();
    (0..ENVELOPES)
        .map(|i| {
            let mut e = Envelope::new("CLAUDE", "CHATGPT");
            e.set_header("user", "kalle");
            e.set_header("session", "2026-11-23T19Z bench");
            e.set_header("thread", ids.next_id());
            e.set_header("message", ids.next_id());
            e.set_header("context", "http bench");
            e.set_header("intent", "REQUEST");
            e.body = Some(format!(
                "Envelope {i}: please review the rate limiter design."
            ));
            e.sig = Some("none".into());
            render(&e)
        })
        .collect()
}

/// Posts `envelopes` to `url` from `CLIENTS` threads, each over one keep-alive connection;
/// panics on any status but 200.
fn post_all(url: &str, envelopes: &[String]) {
    let chunk = envelopes.len().div_ceil(CLIENTS);
    std::thread::scope(|s| {
        for part in envelopes.chunks(chunk) {
            s.spawn(move || {
                let agent: ureq::Agent = ureq::Agent::config_builder()
                    .http_status_as_error(false)
                    .timeout_global(Some(Duration::from_secs(120)))
                    .build()
                    .into();
                for text in part {
                    let mut r = agent
                        .post(url)
                        .header("Content-Type", "text/plain; charset=utf-8")
                        .send(text)
                        .expect("an answer");
                    let _ = r.body_mut().read_to_string();
                    assert_eq!(r.status().as_u16(), 200);
                }
            });
        }
    });
}

/// A running server and how to stop it.
struct Running {
    url: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
    _dir: Option<TempDir>,
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn start_serve() -> Running {
    let dir = tempfile::tempdir().expect("temporary folder");
    let store = Store::open(&dir.path().join("serve.db")).expect("database");
    let settings = Settings {
        listen: "127.0.0.1:0".parse().expect("address"),
        token: None,
        max_body: 1 << 20,
        max_header: 16 << 10,
        head_timeout: Duration::from_secs(5),
        request_timeout: Duration::from_secs(30),
        max_connections: 64,
        // All 16 clients come from loopback: the cap is not what is measured.
        max_connections_per_client: 64,
        max_requests: 64,
        rate_per_minute: 0,
        burst: 1,
        desk: None,
        size_limit: 1 << 20,
        book: Default::default(),
        audit_by: None,
        retry_for: Duration::ZERO,
    };
    let (stop, stopped) = tokio::sync::oneshot::channel();
    let (bound_tx, bound_rx) = mpsc::channel();
    let thread = std::thread::spawn(move || {
        serve_until(
            settings,
            store,
            |a| bound_tx.send(a).expect("bound"),
            stopped,
        )
        .expect("serve");
    });
    let addr: SocketAddr = bound_rx.recv().expect("listening");
    Running {
        url: format!("http://{addr}/crosstalk/receive"),
        stop: Some(stop),
        thread: Some(thread),
        _dir: Some(dir),
    }
}

/// An axum handler that reads the body and answers 200: the HTTP stack alone.
fn start_minimal() -> Running {
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let (bound_tx, bound_rx) = mpsc::channel();
    let thread = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async move {
            let app = axum::Router::new().route(
                "/crosstalk/receive",
                axum::routing::post(|body: axum::body::Bytes| async move {
                    divan::black_box(body.len());
                    "ok"
                }),
            );
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("bind");
            bound_tx
                .send(listener.local_addr().expect("address"))
                .expect("bound");
            axum::serve(listener, app)
                .with_graceful_shutdown(async move {
                    let _ = stopped.await;
                })
                .await
                .expect("serve");
        });
    });
    let addr: SocketAddr = bound_rx.recv().expect("listening");
    Running {
        url: format!("http://{addr}/crosstalk/receive"),
        stop: Some(stop),
        thread: Some(thread),
        _dir: None,
    }
}

#[divan::bench(sample_count = 3, sample_size = 1)]
fn serve_16_clients(bencher: Bencher) {
    bencher
        .counter(ItemsCount::new(ENVELOPES))
        .with_inputs(|| (envelopes(), start_serve()))
        .bench_local_values(|(envs, server)| {
            post_all(&server.url, &envs);
            (envs, server)
        });
}

#[divan::bench(sample_count = 3, sample_size = 1)]
fn minimal_server(bencher: Bencher) {
    bencher
        .counter(ItemsCount::new(ENVELOPES))
        .with_inputs(|| (envelopes(), start_minimal()))
        .bench_local_values(|(envs, server)| {
            post_all(&server.url, &envs);
            (envs, server)
        });
}

#[divan::bench(sample_count = 3, sample_size = 1)]
fn import_direct(bencher: Bencher) {
    bencher
        .counter(ItemsCount::new(ENVELOPES))
        .with_inputs(|| {
            let dir = tempfile::tempdir().expect("temporary folder");
            let store = Store::open(&dir.path().join("direct.db")).expect("database");
            (envelopes(), store, dir)
        })
        .bench_local_values(|(envs, mut store, dir)| {
            let opts = Options::default();
            for text in &envs {
                store.import_text("bench", text, &opts).expect("import");
            }
            (envs, store, dir)
        });
}
