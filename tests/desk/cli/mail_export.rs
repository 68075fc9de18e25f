//! `export --format eml|mbox` through the real binary, read back by mail software nobody here
//! wrote (Python's `email` and `mailbox` packages): each message's Date, Message-ID,
//! In-Reply-To and References as mail clients thread by them, a thread of several messages
//! never written as one `.eml`, and a mailbox Python reads and writes again that imports as
//! the same envelopes.

use crate::helpers::common;

use std::path::Path;
use std::process::Command;

use common::Run;
use serde_json::Value;

fn run(db: &Path, args: &[&str]) -> Run {
    let mut all = vec!["--db", db.to_str().expect("utf-8 path")];
    all.extend_from_slice(args);
    common::run(&all, "")
}

fn import(db: &Path, text: &str) {
    let r = common::run(
        &["--db", db.to_str().expect("utf-8 path"), "import", "-"],
        text,
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
}

/// `python3 -c script args…`'s standard output; the test fails, saying why, when there is no
/// Python or the script fails.
fn python(script: &str, args: &[&str]) -> String {
    let out = Command::new("python3")
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .expect("python3 runs (this test reads exported mail with Python's email package)");
    assert!(
        out.status.success(),
        "python3 failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Prints, for each mail in the files named (`.eml` files, or one mailbox after `--mbox`), a
/// JSON object of the headers threading reads, as Python's email package parses them.
const HEADERS: &str = r#"
import email, email.policy, email.utils, json, mailbox, sys

def fields(msg):
    date = email.utils.parsedate_to_datetime(msg["Date"])
    refs = (msg.get("References") or "").split()
    return {
        "message_id": str(msg["Message-ID"]).strip(),
        "in_reply_to": msg["In-Reply-To"] and str(msg["In-Reply-To"]).strip(),
        "references": refs,
        "date": int(date.timestamp()),
        "body": msg.get_content(),
    }

if sys.argv[1] == "--mbox":
    box = mailbox.mbox(sys.argv[2], factory=None, create=False)
    msgs = [email.message_from_bytes(m.as_bytes(), policy=email.policy.default) for m in box]
else:
    msgs = []
    for path in sys.argv[1:]:
        with open(path, "rb") as f:
            msgs.append(email.message_from_binary_file(f, policy=email.policy.default))
print(json.dumps([fields(m) for m in msgs]))
"#;

/// Reads the mailbox in `argv[1]` and writes its messages to a new mailbox `argv[2]`, as a
/// mail client moving them to another folder does.
const REWRITE: &str = r#"
import mailbox, sys
old = mailbox.mbox(sys.argv[1], create=False)
new = mailbox.mbox(sys.argv[2])
for m in old:
    new.add(m)
new.flush()
print(len(new))
"#;

const THREAD: &str = "01K0000000000000000000000A";

fn env(message: &str, parent: Option<&str>, body: &str) -> String {
    let parent = parent.map_or(String::new(), |p| format!("parent: {p}\n"));
    format!(
        "[[CLAUDE→CHATGPT v1.1]]\nthread: {THREAD}\n{parent}message: {message}\n\
         context: mail threads\nintent: REQUEST\nbody: |\n  {body}\nsig: none\n[[END]]\n\n"
    )
}

/// A thread as chats write one: A, B answering A, C answering B, D answering A; then the
/// operator's reply to C, composed at this desk (as the app files it) at `composed`: the
/// time of the ULID the desk gives it, which is earlier than when it is filed (on being
/// copied out).
fn thread(db: &Path, composed: jiff::Timestamp) -> Value {
    let ids = ["01K0000000000000000000000A", "01K0000000000000000000000B"];
    let text = [
        env(ids[0], None, "root, café"),
        env(ids[1], Some(ids[0]), "second"),
        env("01K0000000000000000000000C", Some(ids[1]), "third"),
        env("01K0000000000000000000000D", Some(ids[0]), "a branch"),
    ]
    .concat();
    import(db, &text);
    let ms = u64::try_from(composed.as_millisecond()).unwrap();
    let mine = ulid::Ulid::from_parts(ms, 42).to_string();
    let reply = env(&mine, Some("01K0000000000000000000000C"), "composed here")
        .replace("CLAUDE→CHATGPT", "CHATGPT→CLAUDE");
    let opts = crosstalk::protocol::Options::default();
    let envelope = crosstalk::protocol::extract(&reply, &opts).envelopes[0]
        .envelope
        .clone();
    let mut store = crosstalk::store::Store::open(db).unwrap();
    store.store_composed(&envelope, "draft").unwrap();
    drop(store);
    let r = run(db, &["show", THREAD, "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    serde_json::from_str(&r.stdout).unwrap()
}

fn mid(id: &str) -> String {
    format!("<{id}@crosstalk.invalid>")
}

/// Seconds since the epoch of an RFC 3339 time.
fn seconds(t: &str) -> i64 {
    t.parse::<jiff::Timestamp>().unwrap().as_second()
}

/// What each stored message's mail must say: Message-ID, In-Reply-To, References (the
/// ancestors, root first) and Date (arrival for a received message, its ULID's time for one
/// composed here).
fn expected(show: &Value) -> Vec<Value> {
    let messages = show["messages"].as_array().unwrap();
    let parent_of = |id: &str| {
        messages
            .iter()
            .find(|m| m["message"] == id)
            .and_then(|m| m["parent"].as_str())
            .map(str::to_string)
    };
    messages
        .iter()
        .map(|m| {
            let id = m["message"].as_str().unwrap();
            let mut chain = Vec::new();
            let mut at = parent_of(id);
            while let Some(p) = at {
                chain.insert(0, mid(&p));
                at = parent_of(&p);
            }
            let date = match m["direction"].as_str() {
                Some("composed") => {
                    let ms = ulid::Ulid::from_string(id).unwrap().timestamp_ms();
                    i64::try_from(ms / 1000).unwrap()
                }
                _ => seconds(m["received_at"].as_str().unwrap()),
            };
            serde_json::json!({
                "message_id": mid(id),
                "in_reply_to": m["parent"].as_str().map(mid),
                "references": chain,
                "date": date,
            })
        })
        .collect()
}

/// Only the threading headers of what Python read.
fn threading(read: &Value) -> Vec<Value> {
    (read.as_array().unwrap().iter())
        .map(|m| {
            serde_json::json!({
                "message_id": m["message_id"],
                "in_reply_to": m["in_reply_to"],
                "references": m["references"],
                "date": m["date"],
            })
        })
        .collect()
}

#[test]
fn exported_mail_threads_as_pythons_email_package_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let composed_at = jiff::Timestamp::now() - jiff::SignedDuration::from_hours(24);
    let show = thread(&db, composed_at);
    let want = expected(&show);
    assert_eq!(want.len(), 5);
    // Tree order: A, B, C, the reply to C, D.
    let composed = &show["messages"].as_array().unwrap()[3];
    assert_eq!(composed["direction"], "composed", "{show:#}");
    let chain = [
        "01K0000000000000000000000A",
        "01K0000000000000000000000B",
        "01K0000000000000000000000C",
    ];
    assert_eq!(want[3]["references"], serde_json::json!(chain.map(mid)));
    // A composed message's Date is when it was written, not when it was filed.
    assert_eq!(want[3]["date"], serde_json::json!(composed_at.as_second()));
    assert_ne!(
        want[3]["date"],
        serde_json::json!(seconds(composed["received_at"].as_str().unwrap()))
    );
    // A received message's Date is its arrival, not the time its sender's id claims (July 2025).
    let claimed = ulid::Ulid::from_string(THREAD).unwrap().timestamp_ms() / 1000;
    assert_ne!(want[0]["date"], serde_json::json!(claimed));

    // One .eml per message.
    let split = dir.path().join("split");
    let r = run(
        &db,
        &[
            "export",
            THREAD,
            "--format",
            "eml",
            "--split",
            split.to_str().unwrap(),
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let files: Vec<String> = want
        .iter()
        .map(|w| {
            let id = w["message_id"].as_str().unwrap();
            let id = id
                .trim_matches(['<', '>'])
                .trim_end_matches("@crosstalk.invalid");
            split.join(format!("{id}.eml")).display().to_string()
        })
        .collect();
    let args: Vec<&str> = files.iter().map(String::as_str).collect();
    let read: Value = serde_json::from_str(&python(HEADERS, &args)).unwrap();
    assert_eq!(threading(&read), want);

    // One mailbox: the same headers, in tree order, each body the envelope.
    let mbox = dir.path().join("t.mbox");
    let r = run(&db, &["export", THREAD, "-o", mbox.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let read: Value =
        serde_json::from_str(&python(HEADERS, &["--mbox", mbox.to_str().unwrap()])).unwrap();
    assert_eq!(threading(&read), want);
    let bodies: Vec<&str> = (read.as_array().unwrap().iter())
        .map(|m| m["body"].as_str().unwrap())
        .collect();
    assert!(bodies[0].contains("  root, café\n"), "{}", bodies[0]);
    assert!(
        bodies[3].starts_with("[[CHATGPT→CLAUDE v1.1]]\n"),
        "{}",
        bodies[3]
    );

    // Moved by Python to another mailbox and imported into a new database: the same
    // envelopes, the same thread.
    let moved = dir.path().join("moved.mbox");
    let n = python(REWRITE, &[mbox.to_str().unwrap(), moved.to_str().unwrap()]);
    assert_eq!(n.trim(), "5");
    let again = dir.path().join("again.db");
    let r = run(&again, &["import", moved.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("5 imported"), "{}", r.stdout);
    let canon = |db: &Path| run(db, &["export", THREAD]).stdout;
    assert_eq!(canon(&again), canon(&db));
}

#[test]
fn a_deep_thread_references_its_root_and_nearest_ancestors() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("d.db");
    let id = |i: usize| format!("01K0000000000000000000{i:04}");
    let text: String = (0..30)
        .map(|i| {
            let parent = (i > 0).then(|| id(i - 1));
            env(&id(i), parent.as_deref(), &format!("reply {i}")).replace(THREAD, &id(0))
        })
        .collect();
    import(&db, &text);
    let mbox = dir.path().join("d.mbox");
    let r = run(&db, &["export", &id(0), "-o", mbox.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let read: Value =
        serde_json::from_str(&python(HEADERS, &["--mbox", mbox.to_str().unwrap()])).unwrap();
    let last = &read[29];
    assert_eq!(last["message_id"], mid(&id(29)));
    let refs: Vec<String> = (last["references"].as_array().unwrap().iter())
        .map(|r| r.as_str().unwrap().to_string())
        .collect();
    // The root, then the 19 nearest: 10 to 28.
    let want: Vec<String> = std::iter::once(mid(&id(0)))
        .chain((10..29).map(|i| mid(&id(i))))
        .collect();
    assert_eq!(refs, want);
    assert_eq!(last["in_reply_to"], mid(&id(28)));
}

#[test]
fn a_thread_of_several_messages_is_never_one_eml() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    thread(&db, jiff::Timestamp::now());
    let hint = "use `--split DIR` for one .eml per message, or `--format mbox`";
    let said = format!("thread {THREAD} has 5 messages, and an .eml file holds one message");
    // Standard output: nothing written, and why.
    let r = run(&db, &["export", THREAD, "--format", "eml"]);
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
    assert!(r.stderr.contains(&said), "{}", r.stderr);
    assert!(r.stderr.contains(hint), "{}", r.stderr);
    // A file: by format or by name, nothing written.
    let eml = dir.path().join("t.eml");
    for args in [
        vec!["export", THREAD, "-o", eml.to_str().unwrap()],
        vec![
            "export",
            THREAD,
            "--format",
            "eml",
            "-o",
            eml.to_str().unwrap(),
        ],
        vec!["export", "--all", "--format", "eml"],
    ] {
        let r = run(&db, &args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stdout);
        assert!(r.stderr.contains(hint), "{args:?}: {}", r.stderr);
        assert!(!eml.exists(), "{args:?}");
    }
    // A mailbox never goes under an .eml name either.
    let r = run(
        &db,
        &[
            "export",
            THREAD,
            "--format",
            "mbox",
            "-o",
            eml.to_str().unwrap(),
        ],
    );
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("name the file .mbox"), "{}", r.stderr);
    assert!(!eml.exists());
    // Mail to a file named .mbox is a mailbox, whichever mail format was asked for.
    let mbox = dir.path().join("t.mbox");
    let r = run(
        &db,
        &[
            "export",
            THREAD,
            "--format",
            "eml",
            "-o",
            mbox.to_str().unwrap(),
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let text = std::fs::read_to_string(&mbox).unwrap();
    assert_eq!(
        text.matches("\nFrom crosstalk@crosstalk.invalid ").count() + 1,
        5
    );
}

#[test]
fn a_thread_of_one_message_is_one_eml_on_standard_output_too() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("o.db");
    import(&db, &env(THREAD, None, "alone"));
    let r = run(&db, &["export", THREAD, "--format", "eml"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stdout.starts_with("From "), "{}", r.stdout);
    let file = dir.path().join("one.eml");
    std::fs::write(&file, &r.stdout).unwrap();
    let read: Value = serde_json::from_str(&python(HEADERS, &[file.to_str().unwrap()])).unwrap();
    assert_eq!(read[0]["message_id"], mid(THREAD));
    assert_eq!(read[0]["in_reply_to"], Value::Null);
    assert_eq!(read[0]["references"], serde_json::json!([]));
    // The whole database, when it holds that one message.
    let r = run(&db, &["export", "--all", "--format", "eml"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains(&format!("Message-ID: {}", mid(THREAD))));
}
