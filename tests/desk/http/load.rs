//! Load on the real `crosstalk serve`: 16 client threads posting at once over keep-alive
//! connections. None is lost and each is stored exactly once: every request is acknowledged,
//! the database holds exactly the messages posted, and posting a sample again stores nothing
//! new.
//!
//! 640 posts here keep the test to about 10 s on two cores in a debug build (about 13 ms a
//! request there); the 10 000-post run is `cargo bench --bench http` (docs/BENCHMARKS.md).

use crate::helpers::http;

use std::sync::Arc;
use std::time::Duration;

use crosstalk::ids::IdGenerator;
use crosstalk::store::Store;
use http::{Server, envelope};

const CLIENTS: usize = 16;
const PER_CLIENT: usize = 40;

#[test]
fn posts_from_sixteen_clients_are_all_stored_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("srv.db");
    let server = Server::start(&db, &["--rate-per-minute", "0", "--max-connections", "32"]);
    let url = server.url.clone();
    let ids = Arc::new(IdGenerator::new());
    let clients: Vec<_> = (0..CLIENTS)
        .map(|c| {
            let (url, ids) = (url.clone(), ids.clone());
            std::thread::spawn(move || {
                let agent: ureq::Agent = ureq::Agent::config_builder()
                    .http_status_as_error(false)
                    .timeout_global(Some(Duration::from_secs(60)))
                    .build()
                    .into();
                let mut sent = Vec::with_capacity(PER_CLIENT);
                for i in 0..PER_CLIENT {
                    let (id, text) = envelope(&ids, &format!("client {c} envelope {i}"));
                    let mut r = agent
                        .post(&url)
                        .header("Content-Type", "text/plain; charset=utf-8")
                        .send(&text)
                        .expect("an answer");
                    let body = r.body_mut().read_to_string().unwrap();
                    assert_eq!(r.status().as_u16(), 200, "{body}");
                    assert!(body.contains(&format!("parent: {id}")), "{body}");
                    sent.push((id, text));
                }
                sent
            })
        })
        .collect();
    let sent: Vec<(String, String)> = clients
        .into_iter()
        .flat_map(|c| c.join().unwrap())
        .collect();
    assert_eq!(sent.len(), CLIENTS * PER_CLIENT);
    // A sample sent again: acknowledged, not stored twice.
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    for (_, text) in sent.iter().step_by(50) {
        let r = agent
            .post(&url)
            .header("Content-Type", "text/plain; charset=utf-8")
            .send(text)
            .unwrap();
        assert_eq!(r.status().as_u16(), 200);
    }
    assert_eq!(server.stop(), 0);
    let store = Store::open(&db).unwrap();
    let threads = store.threads(usize::MAX).unwrap();
    assert_eq!(
        threads.len(),
        CLIENTS * PER_CLIENT,
        "one thread per envelope"
    );
    for (id, _) in sent.iter().step_by(7) {
        let m = store.message(id).unwrap().expect("stored");
        let t = store.thread(&m.thread).unwrap().unwrap();
        assert_eq!(t.messages.len(), 1, "{id} stored once");
    }
}
