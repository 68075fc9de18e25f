//! The HTTP binding with the real app in tmux: `y` on an envelope for a contact with
//! `delivery = "http"` posts it to a `crosstalk serve` on loopback (the other side stores it,
//! the status line says ACK), and an envelope a `serve` receives into the app's own database
//! shows up in the open app within seconds.

use crate::helpers::http;
use crate::helpers::tmux;

use crosstalk::ids::IdGenerator;
use crosstalk::store::Store;
use tmux::Term;

#[test]
fn y_delivers_over_http_and_a_served_envelope_appears_live() {
    let Some(t) = Term::new() else { return };
    let peer_db = t.path("peer.db");
    let peer = http::Server::start(&peer_db, &["--token", "peer-token"]);
    std::fs::write(
        t.path("config.toml"),
        format!(
            "[[contacts]]\nname = \"CHATGPT\"\ndelivery = \"http\"\nurl = \"{0}\"\ntoken = \"peer-token\"\n\n\
             [[contacts]]\nname = \"CLAUDE\"\ndelivery = \"http\"\nurl = \"{0}\"\ntoken = \"peer-token\"\n",
            peer.url
        ),
    )
    .unwrap();
    let ids = IdGenerator::new();
    let (id, text) = http::envelope(&ids, "Carried over HTTP.");
    let file = t.path("one.crosstalk");
    std::fs::write(&file, text).unwrap();
    t.import(&[&file]);
    t.start(120, 36, &[]);
    t.wait_for("http test");
    t.keys(&["Enter"]);
    t.wait_for("Carried over HTTP.");
    t.keys(&["y"]);
    t.wait_for("Delivered to CHATGPT over HTTP: ACK");
    assert_eq!(peer.stop(), 0);
    assert!(
        Store::open(&peer_db)
            .unwrap()
            .message(&id)
            .unwrap()
            .is_some()
    );

    // A serve on the app's own database: what it receives appears in the open app.
    let own = http::Server::start(&t.db, &[]);
    let (_, text) = http::envelope(&ids, "Arrived while the app was open.");
    let mut e = crosstalk::protocol::extract(&text, &Default::default())
        .envelopes
        .remove(0)
        .envelope;
    e.set_header("context", "live over http");
    let file = t.path("two.crosstalk");
    std::fs::write(&file, crosstalk::protocol::render(&e)).unwrap();
    let out = http::crosstalk()
        .arg("--db")
        .arg(t.path("sender.db"))
        .args(["send", &own.url])
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    t.wait_for("live over http");
    assert_eq!(own.stop(), 0);
}
