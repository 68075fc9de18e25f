//! The hop over SSH, with the real binary: the desk (`crosstalk serve` with a token, and the
//! app open on the same database in tmux) and, as on the operator's laptop, the companion
//! (`crosstalk watch --to URL` in another tmux session) watching a real X clipboard (Xvfb);
//! `xclip` plays three chat windows, setting the clipboard as a Copy button does and reading
//! it as a paste does.
//!
//! CLAUDE → CHATGPT → GEMINI → CLAUDE, each hop two clipboard operations: every envelope
//! stored once on the desk, threaded, recorded as relayed by the companion (the app shows
//! it live); each recipient's text fenced as its contact says, CHATGPT's preamble first the
//! first time. An invalid copy and a copy of two envelopes leave the clipboard alone and are
//! announced; Enter puts the two up in turn. With the desk down, copies go to the spool and
//! the clipboard is left alone; when the desk is back the spool is sent: the copy still on the
//! clipboard is put up, the older one only stored (copying it again relays it). Nothing is
//! left on the laptop but the (empty) spool.

use crate::helpers::http;
use crate::helpers::tmux;

use std::path::Path;
use std::time::{Duration, Instant};

use tmux::relay::{self, count};
use tmux::xvfb::{Piped, Xvfb, next_json, next_line, spawn_piped};
use tmux::{BIN, Term, sh_quote};

const WAIT: Duration = Duration::from_secs(30);
const TOKEN: &str = "desk-token-7f3a";
const PREFIX: &str = "01KAQ4W5J8Z0000000000000C";
const PREAMBLE: &str = "You are talking to Claude and Gemini through Kalle's relay.";

fn envelope(from: &str, to: &str, n: u8, parent: Option<u8>, body: &str) -> String {
    relay::envelope(PREFIX, "over the tunnel", (from, to), n, parent, body)
}

/// The companion's tmux session, on the test's tmux server.
struct Laptop<'a> {
    t: &'a Term,
}

impl Laptop<'_> {
    fn screen(&self) -> String {
        self.t
            .tmux(&["capture-pane", "-p", "-J", "-S", "-200", "-t", "laptop"])
    }

    /// Waits until the companion's output shows `text` `n` times (earlier lines stay).
    fn wait_for_n(&self, text: &str, n: usize) -> String {
        let start = Instant::now();
        loop {
            let s = self.screen();
            if s.matches(text).count() >= n {
                return s;
            }
            assert!(
                start.elapsed() < WAIT,
                "the companion never said {text:?} ({n}×); its output:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn enter(&self) {
        self.t.tmux(&["send-keys", "-t", "laptop", "Enter"]);
    }
}

/// One hop: the sender's window copies its whole answer, the recipient's gets what the desk
/// returned; `n`: how many hops to `to` the companion has announced by then.
fn hop(x: &Xvfb, l: &Laptop, text: &str, body: &str, to: &str, n: usize) -> String {
    let text = format!("Here is my reply for {to}:\n\n{text}\nTell me what they say.\n");
    x.copy(&text);
    let pasted = x.clipboard_until(&format!("the envelope for {to}"), |c| {
        c != text && c.contains(body)
    });
    l.wait_for_n(&format!("Ready for {to}"), n);
    pasted
}

fn spooled(data: &Path) -> usize {
    std::fs::read_dir(data.join("crosstalk/spool"))
        .map(|d| {
            d.filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().ends_with(".txt"))
                .count()
        })
        .unwrap_or(0)
}

#[test]
fn a_companion_relays_through_the_desk_and_spools_while_it_is_down() {
    let Some(x) = Xvfb::start() else { return };
    let Some(t) = Term::new() else { return };
    let desk_config = t.path("config.toml");
    std::fs::write(
        &desk_config,
        format!(
            "[operator]\naddresses = [\"kalle\"]\n\n\
             [[contacts]]\nname = \"CHATGPT\"\nfence = true\npreamble = \"{PREAMBLE}\"\n\n\
             [[contacts]]\nname = \"GEMINI\"\n\n[[contacts]]\nname = \"CLAUDE\"\n"
        ),
    )
    .unwrap();
    // The desk: serve with a token, and the app open on the same database.
    let serve = http::Server::start_with(
        &t.db,
        "127.0.0.1:0",
        Some(&desk_config),
        &["--token", TOKEN],
    );
    let listen = serve.addr.to_string();
    let desk_url = format!("http://{listen}");
    // Over SSH the desk has no display: only the companion sees a clipboard.
    t.start(160, 36, &[]);
    t.wait_for("Threads");

    // The laptop: its own data directory and config, the companion in a session of its own.
    let laptop = t.path("laptop");
    let data = laptop.join("data");
    std::fs::create_dir_all(&data).unwrap();
    let laptop_config = laptop.join("config.toml");
    std::fs::write(&laptop_config, "[watch]\ninterval_ms = 100\n").unwrap();
    let cmd = format!(
        "exec env -u SSH_TTY -u SSH_CONNECTION -u TMUX HOME={home} XDG_DATA_HOME={data} \
         XDG_CONFIG_HOME={home} CROSSTALK_CONFIG={cfg} DISPLAY={display} LANG=C.UTF-8 \
         sh -c 'trap : INT; \"$@\"; echo \"companion exited with status $?\"' sh \
         {bin} watch --to {url} --token {token}",
        home = sh_quote(laptop.to_str().unwrap()),
        data = sh_quote(data.to_str().unwrap()),
        cfg = sh_quote(laptop_config.to_str().unwrap()),
        display = x.display,
        bin = sh_quote(BIN),
        url = sh_quote(&desk_url),
        token = TOKEN,
    );
    t.tmux(&[
        "new-session",
        "-d",
        "-s",
        "laptop",
        "-x",
        "200",
        "-y",
        "50",
        &cmd,
    ]);
    let l = Laptop { t: &t };
    l.wait_for_n("companion of", 1);

    // CLAUDE → CHATGPT: the preamble first, the envelope fenced.
    let first = envelope("CLAUDE", "CHATGPT", 1, None, "Which cache should we use?");
    let pasted = hop(&x, &l, &first, "Which cache should we use?", "CHATGPT", 1);
    assert!(pasted.starts_with(PREAMBLE), "{pasted}");
    assert!(
        pasted.contains("\n\n```\n[[CLAUDE→CHATGPT v1]]\n"),
        "{pasted}"
    );
    // The desk's app shows the hop live.
    t.wait_for("over the tunnel");

    // CHATGPT → GEMINI, GEMINI → CLAUDE: no fence, no preamble.
    let second = envelope("CHATGPT", "GEMINI", 2, Some(1), "Redis; Gemini, agree?");
    let pasted = hop(&x, &l, &second, "Redis; Gemini, agree?", "GEMINI", 1);
    assert!(pasted.starts_with("[[CHATGPT→GEMINI v1]]\n"), "{pasted}");
    let third = envelope("GEMINI", "CLAUDE", 3, Some(2), "Agreed, with a TTL.");
    let pasted = hop(&x, &l, &third, "Agreed, with a TTL.", "CLAUDE", 1);
    assert!(pasted.starts_with("[[GEMINI→CLAUDE v1]]\n"), "{pasted}");

    // An invalid envelope: the clipboard keeps it, the companion says why.
    relay::an_invalid_copy_stays_on_the_clipboard(&x, |text| l.wait_for_n(text, 1));

    // Two envelopes in one copy: left alone; Enter puts each up in turn.
    let fourth = envelope(
        "CLAUDE",
        "GEMINI",
        4,
        Some(3),
        "Gemini, write the TTL down.",
    );
    let fifth = envelope("CLAUDE", "CHATGPT", 5, Some(3), "ChatGPT, write the code.");
    let both = format!("{fourth}\n{fifth}");
    x.copy(&both);
    let s = l.wait_for_n("2 envelopes for others in one copy", 1);
    assert!(s.contains("Enter puts up the first (for GEMINI)"), "{s}");
    // The companion says so once it has acted on the copy, any copy it makes included: the
    // clipboard read now is what it left.
    assert_eq!(x.clipboard_until("a read", |c| !c.is_empty()), both);
    l.enter();
    let pasted = x.clipboard_until("the first of two", |c| c.contains("write the TTL down"));
    assert!(pasted.starts_with("[[CLAUDE→GEMINI v1]]\n"), "{pasted}");
    l.wait_for_n("Enter puts up the next (1 left)", 1);
    l.enter();
    let pasted = x.clipboard_until("the second of two", |c| c.contains("write the code"));
    // Fenced, and no preamble: CHATGPT has had an envelope before.
    assert!(
        pasted.starts_with("```\n[[CLAUDE→CHATGPT v1]]\n"),
        "{pasted}"
    );
    l.wait_for_n("Ready for CHATGPT", 2);

    // The desk goes down: two copies are spooled, the clipboard left alone.
    assert_eq!(serve.stop(), 0);
    let sixth = envelope("CHATGPT", "CLAUDE", 6, Some(5), "Code is in the gist.");
    x.copy(&format!("Done:\n\n{sixth}"));
    l.wait_for_n("Desk unreachable", 1);
    let seventh = envelope("GEMINI", "CLAUDE", 7, Some(4), "TTL written down: 300 s.");
    let seventh = format!("Noted.\n\n{seventh}\nAnything else?\n");
    x.copy(&seventh);
    l.wait_for_n("Desk unreachable", 2);
    assert_eq!(spooled(&data), 2);
    assert_eq!(x.clipboard_until("a read", |c| !c.is_empty()), seventh);

    // Back on the same port: the older copy is only stored, the one still on the clipboard
    // is put up.
    let serve = http::Server::start_with(&t.db, &listen, Some(&desk_config), &["--token", TOKEN]);
    let start = Instant::now();
    let pasted = loop {
        let c = x.clipboard();
        if c != seventh && c.contains("TTL written down") {
            break c;
        }
        assert!(
            start.elapsed() < WAIT,
            "the spooled copy for CLAUDE was never put up; the companion said:\n{}",
            l.screen()
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(pasted.starts_with("[[GEMINI→CLAUDE v1]]\n"), "{pasted}");
    l.wait_for_n("Sent a spooled copy to the desk", 1);
    assert_eq!(spooled(&data), 0);
    let relayed = |n: u8| {
        count(
            &t.db,
            &format!(
                "SELECT count(*) FROM delivery d JOIN messages m ON m.seq = d.seq \
                 WHERE m.id = '01KAQ4W5J8Z0000000000000C{n}' AND d.relayed_at IS NOT NULL \
                 AND d.relay_method = 'companion'"
            ),
        )
    };
    assert_eq!(
        relayed(6),
        0,
        "stored, not relayed: something else was copied since"
    );
    assert_eq!(relayed(7), 1);
    // Copying the stored one again relays it (at once: the companion's own copy is never
    // put back over it).
    let pasted = hop(&x, &l, &sixth, "Code is in the gist.", "CLAUDE", 3);
    assert!(pasted.starts_with("[[CHATGPT→CLAUDE v1]]\n"), "{pasted}");
    assert_eq!(relayed(6), 1);

    // No loop: seven messages stored once, all relayed by the companion; one thread.
    relay::stored_once_threaded_and_relayed(&t.db, 7, "relay_method = 'companion'");
    // The desk's app shows how they were relayed.
    t.keys(&["Enter"]);
    t.wait_for("by companion");

    // Ctrl-C: the companion says what it did; the laptop holds nothing but the empty spool.
    t.tmux(&["send-keys", "-t", "laptop", "C-c"]);
    // A shell around the companion says how it ended (Ctrl-C reaches both; the shell's trap
    // lets it wait). Under load tmux was seen to leave the exited companion unreaped and its
    // pane alive for over 30 s, so the pane's own "dead" status is not what the test waits for.
    let s = l.wait_for_n("companion exited with status 0", 1);
    assert!(s.contains("7 hop(s) through the desk"), "{s}");
    let mut left: Vec<String> = walk(&data);
    left.sort();
    assert_eq!(left, ["crosstalk", "crosstalk/spool"], "{left:?}");
    assert_eq!(serve.stop(), 0);
    t.keys(&["q"]);
    assert_eq!(t.wait_exit(), 0);
}

/// Every path under `dir`, relative.
fn walk(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().filter_map(Result::ok) {
            let p = e.path();
            out.push(p.strip_prefix(dir).unwrap().to_string_lossy().into_owned());
            if p.is_dir() {
                todo.push(p);
            }
        }
    }
    out
}

/// Waits for a companion's first line on standard error, which it writes once it watches the
/// clipboard: a copy made after it is news to it.
fn companion_started(err: &std::sync::mpsc::Receiver<String>) {
    let line = next_line(err, "the companion to start watching");
    assert!(line.contains("watching the clipboard"), "{line}");
}

/// The companion for a script (`--json`): started while the desk is down, a copy is spooled
/// (a `note` says so) and sent when the desk comes up on its port, then put on the clipboard
/// (the answer's `hop` and how it was copied); a wrong token ends it with exit 2, the copy
/// kept in the spool.
#[test]
fn a_scripted_companion_spools_until_the_desk_is_up_and_stops_on_a_wrong_token() {
    use std::process::Stdio;
    let Some(x) = Xvfb::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("c.toml");
    std::fs::write(&config, "[watch]\ninterval_ms = 100\n").unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
        .port();
    let listen = format!("127.0.0.1:{port}");
    let companion = |token: &str| {
        spawn_piped(
            x.crosstalk(dir.path(), &config)
                .args(["watch", "--json", "--to", &format!("http://{listen}")])
                .args(["--token", token])
                .stdin(Stdio::null()),
        )
    };
    let Piped {
        mut child,
        out,
        err,
    } = companion(TOKEN);
    companion_started(&err);
    let text = format!(
        "Reply:\n{}",
        envelope("CLAUDE", "GEMINI", 1, None, "Spooled first.")
    );
    x.copy(&text);
    let note = next_json(&out, "the spool note");
    assert!(
        note["note"]
            .as_str()
            .unwrap()
            .contains("kept in the spool (1 waiting)"),
        "{note}"
    );
    let desk_db = dir.path().join("desk.db");
    let serve = http::Server::start_with(&desk_db, &listen, None, &["--token", TOKEN]);
    let line = next_json(&out, "the spooled copy, sent");
    assert_eq!(line["hop"]["decision"], "relay", "{line}");
    assert_eq!(line["hop"]["ready"]["to"], "GEMINI", "{line}");
    assert_eq!(line["copied"], "system clipboard", "{line}");
    let pasted = x.clipboard_until("the envelope for GEMINI", |c| {
        c.starts_with("[[CLAUDE→GEMINI")
    });
    assert!(pasted.contains("Spooled first."), "{pasted}");
    let _ = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    let status = child.wait().unwrap();
    assert!(
        status.success(),
        "{status}: {:?}",
        err.try_iter().collect::<Vec<_>>()
    );

    // A wrong token: exit 2, the copy kept for a companion with the right one.
    // Its output is read to the end, as a script would (see `Piped`).
    let Piped {
        mut child,
        out: _out,
        err,
    } = companion("wrong");
    companion_started(&err);
    x.copy(&format!(
        "Reply:\n{}",
        envelope("GEMINI", "CLAUDE", 2, Some(1), "Kept.")
    ));
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            start.elapsed() < WAIT,
            "the companion kept running with a wrong token"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(2));
    assert_eq!(spooled(dir.path()), 1);
    assert_eq!(serve.stop(), 0);
}

/// A copy for a contact that takes envelopes over HTTP, through a companion: the desk posts
/// it to that peer itself (a real `serve`), the companion's JSON line says it was delivered
/// and leaves the laptop's clipboard as the operator copied it; the desk records it relayed
/// by `http`, and the peer holds it.
#[test]
fn a_companion_leaves_the_clipboard_alone_when_the_desk_delivers_over_http() {
    use std::process::Stdio;
    let Some(x) = Xvfb::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let peer_db = dir.path().join("peer.db");
    let peer = http::Server::start(&peer_db, &["--token", "peer-token"]);
    let desk_config = dir.path().join("desk.toml");
    std::fs::write(
        &desk_config,
        format!(
            "[operator]\naddresses = [\"kalle\"]\n\n[[contacts]]\nname = \"GEMINI\"\n\
             delivery = \"http\"\nurl = \"{}\"\ntoken = \"peer-token\"\n",
            peer.url
        ),
    )
    .unwrap();
    let desk_db = dir.path().join("desk.db");
    let desk = http::Server::start_with(
        &desk_db,
        "127.0.0.1:0",
        Some(&desk_config),
        &["--token", TOKEN],
    );
    let config = dir.path().join("c.toml");
    std::fs::write(&config, "[watch]\ninterval_ms = 100\n").unwrap();
    let Piped {
        mut child,
        out,
        err,
    } = spawn_piped(
        x.crosstalk(dir.path(), &config)
            .args(["watch", "--json", "--to", &desk.url, "--token", TOKEN])
            .stdin(Stdio::null()),
    );
    companion_started(&err);
    let text = format!(
        "Reply:\n{}",
        envelope("CLAUDE", "GEMINI", 1, None, "Straight to the peer.")
    );
    x.copy(&text);
    let line = next_json(&out, "the delivered hop");
    assert_eq!(line["hop"]["decision"], "delivered", "{line}");
    assert_eq!(
        line["hop"]["done"]["line"], "Delivered to GEMINI over HTTP: ACK",
        "{line}"
    );
    assert!(line.get("copied").is_none(), "{line}");
    // The line is written after the companion acted: the clipboard is still the copy.
    assert_eq!(x.clipboard(), text);
    let id = format!("{PREFIX}1");
    let relayed = crosstalk::store::Store::open(&desk_db)
        .unwrap()
        .delivery(&id)
        .unwrap()
        .and_then(|d| d.relayed)
        .map(|(_, how)| how);
    assert_eq!(relayed.as_deref(), Some("http"));
    assert_eq!(
        count(
            &peer_db,
            &format!("SELECT count(*) FROM messages WHERE id = '{id}'")
        ),
        1
    );
    let _ = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    assert!(child.wait().unwrap().success());
    assert_eq!(desk.stop(), 0);
    assert_eq!(peer.stop(), 0);
}

/// What the companion finds in its spool when it starts, the desk up with a `max_body` of
/// 4000: a link planted there to a file outside holding an envelope, its own copy, one past
/// the desk's limit, and half a copy a crash left. Only its own copy reaches the desk; the
/// link is named with where it points and left as it is, never read; the copy too large is
/// named with its size and the limit and moved beside the spool, kept; the half copy is
/// removed.
#[cfg(unix)]
#[test]
fn a_companion_sends_only_its_own_copies_and_keeps_what_the_desk_refuses() {
    use crosstalk::transport::spool::Spool;
    use std::process::Stdio;
    let Some(x) = Xvfb::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("c.toml");
    std::fs::write(&config, "[watch]\ninterval_ms = 100\n").unwrap();
    let spool = Spool::new(dir.path().join("crosstalk/spool"));
    let mine = format!(
        "Reply:\n{}",
        envelope("CLAUDE", "GEMINI", 1, None, "Spooled by me.")
    );
    spool.push(&mine).unwrap();
    let big = envelope("CLAUDE", "GEMINI", 2, Some(1), &"far too long ".repeat(500));
    let big_path = spool.push(&big).unwrap();
    let outside = dir.path().join("notes-elsewhere.txt");
    let secret = "SECRET FROM OUTSIDE THE SPOOL";
    std::fs::write(&outside, envelope("CLAUDE", "GEMINI", 3, None, secret)).unwrap();
    // Named to sort first: it is met before the spool's own copies.
    let planted = spool.dir().join("00000000000000000000000000.txt");
    std::os::unix::fs::symlink(&outside, &planted).unwrap();
    let half = spool.dir().join(".01KAQ4W5J8Z00000000000000.tmp");
    let file = std::fs::File::create(&half).unwrap();
    file.set_modified(std::time::SystemTime::now() - Duration::from_secs(3600))
        .unwrap();
    drop(file);

    let desk_db = dir.path().join("desk.db");
    let serve = http::Server::start_with(
        &desk_db,
        "127.0.0.1:0",
        None,
        &["--token", TOKEN, "--max-body", "4000"],
    );
    let Piped {
        mut child,
        out,
        err,
    } = spawn_piped(
        x.crosstalk(dir.path(), &config)
            .args(["watch", "--json", "--to", &format!("http://{}", serve.addr)])
            .args(["--token", TOKEN])
            .stdin(Stdio::null()),
    );
    let expected = [
        format!(
            "Not sent: {} in the spool is a symbolic link to {}, not followed",
            planted.display(),
            outside.display()
        ),
        format!("Removed {}: half of a copy", half.display()),
        "Sent a spooled copy to the desk".to_string(),
        format!(
            "The desk refused the spooled copy {} ({} bytes; the desk takes at most 4000)",
            big_path.display(),
            big.len()
        ),
    ];
    let mut notes = Vec::new();
    while !expected
        .iter()
        .all(|e| notes.iter().any(|n: &String| n.contains(e.as_str())))
    {
        let line = next_json(&out, &format!("the notes {expected:#?}; so far {notes:#?}"));
        if let Some(note) = line["note"].as_str() {
            notes.push(note.to_string());
        }
    }
    let set_aside = spool.aside().join(big_path.file_name().unwrap());
    assert!(
        notes
            .iter()
            .any(|n| n.contains(&format!("kept in {}", set_aside.display()))),
        "{notes:#?}"
    );
    let _ = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    let status = child.wait().unwrap();
    let said: Vec<String> = err.try_iter().collect();
    assert!(status.success(), "{status}: {said:?}");
    let stopped = said.iter().find(|l| l.contains("stopped;")).unwrap();
    assert!(
        stopped.contains("1 copies the desk refused kept in")
            && stopped.contains("1 files in the spool that it did not write, never sent"),
        "{said:?}"
    );
    assert_eq!(serve.stop(), 0);

    // On the desk: only the companion's own copy, raw and imported; nothing of the file
    // outside, nothing of the copy refused.
    assert_eq!(count(&desk_db, "SELECT count(*) FROM messages"), 1);
    assert_eq!(
        count(
            &desk_db,
            &format!("SELECT count(*) FROM messages WHERE id = '{PREFIX}1'")
        ),
        1
    );
    assert_eq!(
        count(&desk_db, "SELECT count(*) FROM pastes"),
        1,
        "one paste: the copy sent"
    );
    assert_eq!(
        count(&desk_db, "SELECT bytes FROM pastes"),
        mine.len() as i64
    );
    let export = std::process::Command::new(BIN)
        .args(["--db", desk_db.to_str().unwrap(), "export", "--all"])
        .output()
        .unwrap();
    assert!(export.status.success());
    assert!(!String::from_utf8_lossy(&export.stdout).contains(secret));
    // On the laptop: the link as it was, the refused copy kept whole, the half copy gone.
    assert_eq!(std::fs::read_link(&planted).unwrap(), outside);
    assert_eq!(std::fs::read_to_string(&set_aside).unwrap(), big);
    assert!(!big_path.exists() && !half.exists());
    assert_eq!(spooled(dir.path()), 1, "the planted link, still there");
}

/// The desk down and the spool unusable (its folder a link to somewhere else; a full disk
/// fails it the same way): the companion says so as it starts, then that each copy could not
/// be spooled and why; it writes nothing there and goes on watching.
#[cfg(unix)]
#[test]
fn a_copy_that_cannot_be_spooled_is_named_and_the_companion_goes_on() {
    use std::process::Stdio;
    let Some(x) = Xvfb::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("c.toml");
    std::fs::write(&config, "[watch]\ninterval_ms = 100\n").unwrap();
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::create_dir_all(dir.path().join("crosstalk")).unwrap();
    let spool = dir.path().join("crosstalk/spool");
    std::os::unix::fs::symlink(&elsewhere, &spool).unwrap();
    // Nothing listens on the port: every post fails to connect.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
        .port();
    let Piped {
        mut child,
        out,
        err,
    } = spawn_piped(
        x.crosstalk(dir.path(), &config)
            .args([
                "watch",
                "--json",
                "--to",
                &format!("http://127.0.0.1:{port}"),
            ])
            .args(["--token", TOKEN])
            .stdin(Stdio::null()),
    );
    // Said once as it starts (not again each time the spool is tried).
    let first = next_json(&out, "the note that the spool cannot be read");
    assert!(
        first["note"]
            .as_str()
            .is_some_and(|n| n.starts_with(&format!(
                "The spool {} cannot be read: {} is a symbolic link",
                spool.display(),
                spool.display()
            ))),
        "{first}"
    );
    companion_started(&err);
    let copy = |n: u8| {
        x.copy(&format!(
            "Reply:\n{}",
            envelope("CLAUDE", "GEMINI", n, None, "Nowhere to go.")
        ))
    };
    copy(1);
    let note = next_json(&out, "the note that the copy could not be spooled");
    let note = note["note"].as_str().unwrap_or_default().to_string();
    assert!(
        note.contains(&format!(
            "the copy could not be spooled in {}",
            spool.display()
        )) && note.contains("is a symbolic link, not a folder of this user's")
            && note.contains("It is still on your clipboard"),
        "{note}"
    );
    // Still watching: the next copy is met the same way.
    copy(2);
    let again = next_json(&out, "the second copy's note");
    assert!(
        again["note"]
            .as_str()
            .is_some_and(|n| n.contains("could not be spooled")),
        "{again}"
    );
    assert_eq!(child.try_wait().unwrap(), None, "the companion is running");
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    let _ = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    assert!(child.wait().unwrap().success());
}
