//! Settling by hand from scripts: `queue done|dismiss|undo ID` and `archive [--undo] THREAD`,
//! with `--json` and the exit codes of the rest of the CLI; `queue` and `threads` list what
//! is left, `threads --archived` what was archived.

use crate::helpers::common;

use std::path::Path;

use common::Run;
use serde_json::{Value, json};

const THREAD: &str = "01J9J3D3M6A4M3WQX8G1ZQ0S7K";
const FIRST: &str = "01J9J3DBC4N7P2Q3R5S7T9V1V2";
const SECOND: &str = "01J9J3DBC4N7P2Q3R5S7T9V1W3";
const OTHER_THREAD: &str = "01J9J3EZ0000000000000000AA";

fn env(thread: &str, message: &str, context: &str) -> String {
    format!(
        "[[CLAUDE→CHATGPT v1]]\nuser: kalle\nthread: {thread}\nmessage: {message}\n\
         context: {context}\nintent: REQUEST\nbody: |\n  Please review.\nsig: none\n[[END]]\n\n"
    )
}

fn run(db: &Path, args: &[&str]) -> Run {
    let mut all = vec!["--db", db.to_str().expect("utf-8 path")];
    all.extend_from_slice(args);
    common::run(&all, "")
}

fn json_of(r: &Run) -> Value {
    assert_eq!(r.code, 0, "{}", r.stderr);
    serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {}\n{}", r.stdout, r.stderr))
}

/// Two envelopes to relay in one thread, one in another.
fn database(dir: &Path) -> std::path::PathBuf {
    let db = dir.join("q.db");
    let text = [
        env(THREAD, FIRST, "storage review"),
        env(THREAD, SECOND, "storage review"),
        env(OTHER_THREAD, "01J9J3EZ0000000000000000AB", "naming"),
    ]
    .concat();
    std::fs::write(dir.join("in.crosstalk"), text).unwrap();
    let r = run(&db, &["import", dir.join("in.crosstalk").to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    db
}

/// The message ids the queue lists under `section`.
fn listed(db: &Path, section: &str) -> Vec<String> {
    let q = json_of(&run(db, &["queue", "--json"]));
    (q["sections"].as_array().unwrap().iter())
        .find(|s| s["section"] == section)
        .unwrap()["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["message"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn queue_done_dismiss_and_undo_settle_one_item_and_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let db = database(dir.path());
    // The listing keeps its shape for the scripts that read it.
    let q = json_of(&run(&db, &["queue", "--json", "--limit", "1"]));
    let sections: Vec<&str> = (q["sections"].as_array().unwrap().iter())
        .map(|s| s["section"].as_str().unwrap())
        .collect();
    assert_eq!(
        sections,
        ["to_relay", "to_me", "awaiting", "missing_parent", "drafts"]
    );
    assert_eq!(q["sections"][0]["count"], 3);
    assert_eq!(q["sections"][0]["rows"].as_array().unwrap().len(), 1);

    // `done` by the first characters of an id (the `poll` way): it leaves the queue.
    let r = run(&db, &["queue", "done", &FIRST[..24]]);
    assert_eq!(r.code, 1, "two ids start so: {}", r.stdout);
    assert!(
        r.stderr.contains("starts several message ids"),
        "{}",
        r.stderr
    );
    let r = run(&db, &["queue", "done", &FIRST[..25]]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .starts_with(&format!("{FIRST} done: it leaves the queue (to relay)"))
            && r.stdout
                .contains(&format!("`crosstalk queue undo {FIRST}` brings it back")),
        "{}",
        r.stdout
    );
    assert!(!listed(&db, "to_relay").contains(&FIRST.to_string()));
    // Again: nothing changes, and that is no error; the first settling stands.
    let again = json_of(&run(&db, &["queue", "dismiss", FIRST, "--json"]));
    assert_eq!(again["changed"], false);
    assert_eq!(again["settled"]["how"], "done");
    assert_eq!(again["sections"], json!([]));
    assert_eq!(again["thread"], THREAD);
    let r = run(&db, &["queue", "dismiss", FIRST]);
    assert!(
        r.stdout.contains("was settled already (done"),
        "{}",
        r.stdout
    );

    // `undo` brings it back where the ledger puts it; `--json` before the command works too.
    let undone = json_of(&run(&db, &["queue", "--json", "undo", FIRST]));
    assert_eq!(
        undone,
        json!({"message": FIRST, "thread": THREAD, "changed": true, "settled": null,
               "sections": ["to_relay"]})
    );
    assert!(listed(&db, "to_relay").contains(&FIRST.to_string()));
    let r = run(&db, &["queue", "undo", FIRST]);
    assert_eq!(r.code, 0);
    assert!(
        r.stdout
            .contains("was not settled: nothing to undo; it is in the queue under to relay"),
        "{}",
        r.stdout
    );

    // `dismiss`, in JSON.
    let dismissed = json_of(&run(&db, &["queue", "dismiss", "--json", SECOND]));
    assert_eq!(dismissed["changed"], true);
    assert_eq!(dismissed["settled"]["how"], "dismissed");
    assert!(dismissed["settled"]["at"].as_str().unwrap().contains('T'));
    assert_eq!(listed(&db, "to_relay").len(), 2);
    // The thread's `show --json` is unchanged by settling: the message is still there.
    let show = json_of(&run(&db, &["show", THREAD, "--json"]));
    assert_eq!(show["messages"].as_array().unwrap().len(), 2);
}

#[test]
fn queue_settling_errors_say_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let db = database(dir.path());
    let r = run(&db, &["queue", "done", "01ZZZZ"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("no message `01ZZZZ`")
            && r.stderr
                .contains("`crosstalk queue` lists the items with their ids"),
        "{}",
        r.stderr
    );
    // A draft being composed is no queue item: where it is resumed or discarded is said.
    let reply = run(&db, &["reply", FIRST, "--body", "half a thought"]);
    assert_eq!(reply.code, 0, "{}", reply.stderr);
    let drafts = listed(&db, "drafts");
    assert_eq!(drafts.len(), 1);
    let r = run(&db, &["queue", "dismiss", &drafts[0]]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("is a draft being composed") && r.stderr.contains("`D` in the app"),
        "{}",
        r.stderr
    );
    assert_eq!(listed(&db, "drafts"), drafts);
    // `--limit` is the listing's: given with a command it is a usage error (exit 2).
    let r = run(&db, &["queue", "--limit", "3", "done", FIRST]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("--limit is for listing the queue"),
        "{}",
        r.stderr
    );
    assert_eq!(listed(&db, "to_relay").len(), 3, "nothing settled");
    // A database that is not there is not made.
    let r = run(&dir.path().join("none.db"), &["queue", "done", FIRST]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("no database at"), "{}", r.stderr);
}

#[test]
fn archive_hides_a_thread_from_threads_until_undone_and_keeps_its_queue_items() {
    let dir = tempfile::tempdir().unwrap();
    let db = database(dir.path());
    let r = run(&db, &["archive", &THREAD[..10]]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .starts_with(&format!("archived thread {THREAD} (storage review)"))
            && r.stdout.contains(&format!(
                "`crosstalk archive --undo {THREAD}` brings it back"
            )),
        "{}",
        r.stdout
    );
    // `threads` leaves it out and says so on standard error; `--archived` lists it.
    let threads = run(&db, &["threads", "--json"]);
    let listed_ids: Vec<String> = (json_of(&threads).as_array().unwrap().iter())
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(listed_ids, [OTHER_THREAD]);
    assert!(
        threads
            .stderr
            .contains("1 archived thread not listed; --archived lists it"),
        "{}",
        threads.stderr
    );
    let archived = json_of(&run(&db, &["threads", "--archived", "--json"]));
    assert_eq!(archived.as_array().unwrap().len(), 1);
    assert_eq!(archived[0]["id"], THREAD);
    assert!(archived[0]["archived_at"].is_string());
    let text = run(&db, &["threads", "--archived"]);
    assert!(text.stdout.contains("[archived "), "{}", text.stdout);
    // Its queue items stay.
    assert_eq!(listed(&db, "to_relay").len(), 3);
    // Again: no change, no error.
    let again = json_of(&run(&db, &["archive", THREAD, "--json"]));
    assert_eq!(again["changed"], false);
    assert_eq!(again["archived"], true);
    // Brought back.
    let back = json_of(&run(&db, &["archive", "--undo", THREAD, "--json"]));
    assert_eq!(
        back,
        json!({"thread": THREAD, "context": "storage review", "archived": false,
               "archived_at": null, "changed": true})
    );
    let threads = run(&db, &["threads"]);
    assert!(
        threads.stdout.contains(THREAD) && threads.stderr.is_empty(),
        "{}",
        threads.stderr
    );
    let r = run(&db, &["threads", "--archived"]);
    assert!(r.stdout.contains("no archived threads"), "{}", r.stdout);
    // Every thread archived: `threads` does not say there are none.
    run(&db, &["archive", THREAD]);
    run(&db, &["archive", OTHER_THREAD]);
    let r = run(&db, &["threads"]);
    assert!(
        r.stdout.contains("every thread is archived"),
        "{}",
        r.stdout
    );
    assert!(
        r.stderr.contains("2 archived threads not listed"),
        "{}",
        r.stderr
    );
    // No such thread, or several: exit 1 with what to do.
    let r = run(&db, &["archive", "01ZZ"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("`crosstalk threads` lists them"),
        "{}",
        r.stderr
    );
    let r = run(&db, &["archive", "01J9J3"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("more than one thread id starts with"),
        "{}",
        r.stderr
    );
}
