//! The SQLite store on temporary database files: migrations, threading of v1.1 and v1.0
//! envelopes, duplicates, rejected envelopes, raw pastes, message status, thread lists, search,
//! and imports of large synthetic transcripts (including one larger than a stored piece).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use crosstalk::ids::IdGenerator;
use crosstalk::protocol::{Options, extract, is_id};
use crosstalk::store::{
    ImportReport, MAX_SEARCH_WORDS, Outcome, RANKED_MATCHES, SCHEMA_VERSION, SearchResults, Store,
    StoreError, ThreadView,
};
use crosstalk::synth::{TranscriptSpec, transcript};
use rusqlite::Connection;
use tempfile::TempDir;

// ---------------------------------------------------------------------------------------------
// Helpers

/// A temporary folder with a database file path in it (the file is created by `Store::open`).
struct Db {
    _dir: TempDir,
    path: PathBuf,
}

impl Db {
    fn new() -> Db {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("crosstalk.db");
        Db { _dir: dir, path }
    }

    fn open(&self) -> Store {
        Store::open(&self.path).unwrap()
    }

    /// A second, raw connection to the same file, for what the API does not expose.
    fn raw(&self) -> Connection {
        Connection::open(&self.path).unwrap()
    }
}

fn opts() -> Options {
    Options::default()
}

fn import(store: &mut Store, text: &str) -> ImportReport {
    store.import_text("<test>", text, &opts()).unwrap()
}

/// `n` fresh ULIDs, in increasing order.
fn ids(n: usize) -> Vec<String> {
    let g = IdGenerator::new();
    (0..n).map(|_| g.next_id()).collect()
}

const SESSION: &str = "2025-10-09T16Z a7f3d1";

/// A v1.1 envelope in thread `thread`.
fn v11(
    banner: (&str, &str),
    thread: &str,
    parent: Option<&str>,
    message: &str,
    intent: &str,
    body: &str,
) -> String {
    let parent = parent.map_or(String::new(), |p| format!("parent: {p}\n"));
    format!(
        "[[{}→{} v1]]\nuser: kalle\nsession: {SESSION}\nthread: {thread}\n{parent}message: {message}\n\
         context: schema migration\nintent: {intent}\nbody: |\n  {body}\nsig: none\n[[END]]\n",
        banner.0, banner.1
    )
}

/// A v1.0 envelope with `intent:` and `body:`.
fn v10(banner: (&str, &str), session: &str, intent: &str, body: &str) -> String {
    format!(
        "[[{}→{} v1]]\nuser: kalle\nsession: {session}\ncontext: naming\nintent: {intent}\n\
         body: |\n  {body}\nsig: none\n[[END]]\n",
        banner.0, banner.1
    )
}

/// A v1.0 `response: |` reply carrying only `session:`.
fn v10_response(banner: (&str, &str), session: &str, body: &str) -> String {
    format!(
        "[[{}→{} v1]]\nsession: {session}\nresponse: |\n  {body}\n[[END]]\n",
        banner.0, banner.1
    )
}

const CC: (&str, &str) = ("CLAUDE", "CHATGPT");
const CB: (&str, &str) = ("CHATGPT", "CLAUDE");

/// (id, parent, depth) of a thread's messages in the order the store gives them.
fn shape(view: &ThreadView) -> Vec<(String, Option<String>, usize)> {
    view.messages
        .iter()
        .map(|m| (m.id.clone(), m.parent.clone(), m.depth))
        .collect()
}

/// Checks that `view` lists its messages in tree order: every message whose parent is in the
/// thread comes after it, one level deeper, and within its parent's subtree.
fn assert_tree_order(view: &ThreadView) {
    let pos: HashMap<&str, usize> = view
        .messages
        .iter()
        .enumerate()
        .map(|(i, m)| (m.id.as_str(), i))
        .collect();
    for (i, m) in view.messages.iter().enumerate() {
        match m.parent.as_deref().and_then(|p| pos.get(p)) {
            Some(&p) => {
                assert!(p < i, "{} listed before its parent", m.id);
                assert_eq!(m.depth, view.messages[p].depth + 1, "depth of {}", m.id);
                // Everything between the parent and this message is deeper than the parent.
                assert!(
                    view.messages[p + 1..i]
                        .iter()
                        .all(|x| x.depth > view.messages[p].depth),
                    "{} is not inside its parent's subtree",
                    m.id
                );
            }
            None => assert_eq!(m.depth, 0, "a root of the thread has depth 0: {}", m.id),
        }
    }
}

fn count(conn: &Connection, sql: &str) -> i64 {
    conn.query_row(sql, [], |r| r.get(0)).unwrap()
}

fn status_of(store: &Store, id: &str) -> String {
    store.message(id).unwrap().unwrap().status
}

fn awaiting(store: &Store, thread: &str) -> bool {
    store
        .threads(1000)
        .unwrap()
        .into_iter()
        .find(|t| t.id == thread)
        .unwrap()
        .awaiting_reply
}

fn file_bytes(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap()
}

// ---------------------------------------------------------------------------------------------
// Migrations

#[test]
fn a_fresh_file_gets_the_current_schema_and_reopens() {
    let db = Db::new();
    {
        let store = db.open();
        assert!(store.integrity_check().unwrap());
    }
    assert!(db.path.exists());
    let version: i64 = count(&db.raw(), "PRAGMA user_version");
    assert_eq!(version, SCHEMA_VERSION);
    let tables: HashSet<String> = db
        .raw()
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    for t in [
        "pastes",
        "paste_pieces",
        "threads",
        "messages",
        "search_changes",
    ] {
        assert!(tables.contains(t), "table {t} missing: {tables:?}");
    }

    // Reopening keeps the version and the data.
    let [t, m] = <[String; 2]>::try_from(ids(2)).unwrap();
    {
        let mut store = db.open();
        let r = import(&mut store, &v11(CC, &t, None, &m, "REQUEST", "hello"));
        assert_eq!(r.count(Outcome::Imported), 1);
    }
    let store = db.open();
    assert_eq!(count(&db.raw(), "PRAGMA user_version"), SCHEMA_VERSION);
    assert_eq!(store.thread(&t).unwrap().unwrap().messages.len(), 1);
    assert!(store.message(&m).unwrap().is_some());
}

#[test]
fn a_folder_that_does_not_exist_is_created() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a/b/crosstalk.db");
    Store::open(&path).unwrap();
    assert!(path.exists());
}

/// A database file as an older crosstalk's user would find it after a newer one wrote it:
/// rollback journal (the SQLite default), a table we do not know, a higher version.
fn newer_database(db: &Db) {
    let conn = db.raw();
    conn.execute_batch("CREATE TABLE future (x); INSERT INTO future VALUES (1);")
        .unwrap();
    conn.pragma_update(None, "user_version", SCHEMA_VERSION + 1)
        .unwrap();
}

fn assert_too_new(db: &Db) {
    match Store::open(&db.path) {
        Err(StoreError::TooNew { found, supported }) => {
            assert_eq!((found, supported), (SCHEMA_VERSION + 1, SCHEMA_VERSION));
        }
        Err(e) => panic!("expected TooNew, got {e}"),
        Ok(_) => panic!("a newer database was opened"),
    }
}

#[test]
fn a_newer_schema_is_refused_and_not_migrated() {
    let db = Db::new();
    newer_database(&db);
    assert_too_new(&db);
    let raw = db.raw();
    assert_eq!(count(&raw, "PRAGMA user_version"), SCHEMA_VERSION + 1);
    let ours = count(
        &raw,
        "SELECT count(*) FROM sqlite_master WHERE name IN ('messages', 'threads', 'pastes')",
    );
    assert_eq!(ours, 0, "the newer database was migrated");
    assert_eq!(count(&raw, "SELECT count(*) FROM future"), 1);
    // Refused again on a second try: nothing was half done.
    drop(raw);
    assert_too_new(&db);
}

#[test]

fn a_refused_newer_database_is_left_byte_for_byte_unchanged() {
    let db = Db::new();
    newer_database(&db);
    let before = file_bytes(&db.path);
    assert_too_new(&db);
    let after = file_bytes(&db.path);
    let changed: Vec<usize> = (0..before.len().max(after.len()))
        .filter(|&i| before.get(i) != after.get(i))
        .collect();
    assert!(changed.is_empty(), "bytes changed at offsets {changed:?}");
}

#[test]
fn a_newer_schema_in_wal_mode_is_refused_and_its_content_kept() {
    // A database a newer crosstalk wrote is already in WAL mode; refusing it must not touch
    // its content either.
    let db = Db::new();
    {
        let conn = db.raw();
        let _: String = conn
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
            .unwrap();
        conn.execute_batch("CREATE TABLE future (x); INSERT INTO future VALUES (1);")
            .unwrap();
        conn.pragma_update(None, "user_version", SCHEMA_VERSION + 5)
            .unwrap();
    }
    let before = file_bytes(&db.path);
    assert!(matches!(
        Store::open(&db.path),
        Err(StoreError::TooNew { found, .. }) if found == SCHEMA_VERSION + 5
    ));
    assert_eq!(file_bytes(&db.path), before);
    assert_eq!(count(&db.raw(), "SELECT count(*) FROM future"), 1);
}

// ---------------------------------------------------------------------------------------------
// v1.1 threading

/// Thread T: A; B and C answer A; D answers B; E answers C. Returns (thread, [A..E], texts).
fn tree_fixture() -> (String, Vec<String>, Vec<String>) {
    let v = ids(6);
    let (t, m) = (v[0].clone(), v[1..].to_vec());
    let texts = vec![
        v11(
            CC,
            &t,
            None,
            &m[0],
            "REQUEST",
            "A: can you review the plan?",
        ),
        v11(CB, &t, Some(&m[0]), &m[1], "RESPOND", "B: yes"),
        v11(
            ("GEMINI", "CLAUDE"),
            &t,
            Some(&m[0]),
            &m[2],
            "RESPOND",
            "C: also yes",
        ),
        v11(CC, &t, Some(&m[1]), &m[3], "REQUEST", "D: which caveats?"),
        v11(CC, &t, Some(&m[2]), &m[4], "ACK", "E: thanks"),
    ];
    (t, m, texts)
}

#[test]
fn v11_envelopes_join_their_thread_in_tree_order() {
    let db = Db::new();
    let mut store = db.open();
    let (t, m, texts) = tree_fixture();
    let r = import(&mut store, &texts.join("\nSome chat in between.\n\n"));
    assert_eq!(r.count(Outcome::Imported), 5, "{r:#?}");
    for (item, id) in r.items.iter().zip(&m) {
        assert_eq!(item.message.as_deref(), Some(id.as_str()));
        assert_eq!(item.thread.as_deref(), Some(t.as_str()));
    }
    let threads = store.threads(10).unwrap();
    assert_eq!(threads.len(), 1);
    assert_eq!(threads[0].id, t);
    assert_eq!(threads[0].message_count, 5);
    assert_eq!(threads[0].context.as_deref(), Some("schema migration"));

    let view = store.thread(&t).unwrap().unwrap();
    let expected = [
        (0, None, 0),
        (1, Some(0), 1),
        (3, Some(1), 2),
        (2, Some(0), 1),
        (4, Some(2), 2),
    ]
    .map(|(i, p, d): (usize, Option<usize>, usize)| (m[i].clone(), p.map(|p| m[p].clone()), d));
    assert_eq!(shape(&view), expected);
    assert_tree_order(&view);
    for msg in &view.messages {
        assert_eq!(msg.thread, t);
        assert_eq!(msg.direction, "received");
        assert_eq!(msg.status, "received");
    }
    assert!(
        store
            .thread("01J9J3D3M6A4M3WQX8G1ZQ0S7K")
            .unwrap()
            .is_none()
    );
}

#[test]
fn replies_imported_before_their_parents_are_linked_when_the_parents_arrive() {
    let (t, m, texts) = tree_fixture();

    let in_order = Db::new();
    let mut reference = in_order.open();
    import(&mut reference, &texts.concat());
    let expected = shape(&reference.thread(&t).unwrap().unwrap());

    // Separate imports, children first (siblings keep their relative arrival order).
    let db = Db::new();
    let mut store = db.open();
    for i in [3, 4, 1, 2, 0] {
        let r = import(&mut store, &texts[i]);
        assert_eq!(r.count(Outcome::Imported), 1, "{r:#?}");
    }
    let orphan = store.message(&m[3]).unwrap().unwrap();
    assert_eq!(orphan.parent.as_deref(), Some(m[1].as_str()));
    let view = store.thread(&t).unwrap().unwrap();
    assert_eq!(shape(&view), expected);
    assert_tree_order(&view);
    let threads = store.threads(10).unwrap();
    assert_eq!(threads.len(), 1, "{threads:#?}");
    assert_eq!(threads[0].message_count, 5);

    // One paste in reversed order: the same links and depths; siblings (B, C) by arrival.
    let db = Db::new();
    let mut store = db.open();
    let reversed: Vec<&str> = texts.iter().rev().map(String::as_str).collect();
    let r = import(&mut store, &reversed.concat());
    assert_eq!(r.count(Outcome::Imported), 5, "{r:#?}");
    let view = store.thread(&t).unwrap().unwrap();
    assert_tree_order(&view);
    let got: Vec<_> = shape(&view);
    let order: Vec<&str> = got.iter().map(|(id, _, _)| id.as_str()).collect();
    assert_eq!(
        order,
        [&m[0], &m[2], &m[4], &m[1], &m[3]].map(String::as_str)
    );
    let mut got_sorted = got.clone();
    let mut expected_sorted = expected.clone();
    got_sorted.sort();
    expected_sorted.sort();
    assert_eq!(got_sorted, expected_sorted, "same parents and depths");
    assert_eq!(store.threads(10).unwrap()[0].message_count, 5);
}

/// A question in thread T, and an answer that names it as parent but carries no thread (and a
/// session of its own), plus a v1.0 follow-up in the answer's session.
struct Orphan {
    thread: String,
    question: String,
    answer: String,
    texts: [String; 3],
}

fn orphan_fixture() -> Orphan {
    let v = ids(3);
    let session = "2025-10-09T17Z 0b0b0b";
    Orphan {
        texts: [
            v11(CC, &v[0], None, &v[1], "REQUEST", "question"),
            format!(
                "[[CHATGPT→CLAUDE v1]]\nuser: brother\nsession: {session}\nparent: {}\nmessage: {}\n\
                 intent: RESPOND\nbody: |\n  answer\nsig: none\n[[END]]\n",
                v[1], v[2]
            ),
            v10_response(CC, session, "thanks"),
        ],
        thread: v[0].clone(),
        question: v[1].clone(),
        answer: v[2].clone(),
    }
}

/// The thread ids with (message_count, messages actually in the thread).
fn thread_counts(store: &Store) -> Vec<(String, i64, usize)> {
    let mut out: Vec<_> = store
        .threads(100)
        .unwrap()
        .into_iter()
        .map(|t| {
            let n = store.thread(&t.id).unwrap().unwrap().messages.len();
            (t.id, t.message_count, n)
        })
        .collect();
    out.sort();
    out
}

#[test]
fn a_reply_without_thread_header_moves_to_its_parents_thread_when_the_parent_arrives() {
    let o = orphan_fixture();
    let db = Db::new();
    let mut store = db.open();
    let r = import(&mut store, &format!("{}{}", o.texts[1], o.texts[0]));
    assert_eq!(r.count(Outcome::Imported), 2, "{r:#?}");
    assert_eq!(store.message(&o.answer).unwrap().unwrap().thread, o.thread);
    assert_eq!(thread_counts(&store), [(o.thread.clone(), 2, 2)]);
    let view = store.thread(&o.thread).unwrap().unwrap();
    assert_eq!(
        shape(&view),
        [
            (o.question.clone(), None, 0),
            (o.answer.clone(), Some(o.question.clone()), 1)
        ]
    );
}

#[test]
fn a_moved_reply_reads_back_as_received_with_its_thread_header_as_written() {
    let o = orphan_fixture();
    let db = Db::new();
    let mut store = db.open();
    import(&mut store, &o.texts[1]);
    let before = store.message(&o.answer).unwrap().unwrap();
    assert_ne!(before.thread, o.thread);
    import(&mut store, &o.texts[0]);
    let after = store.message(&o.answer).unwrap().unwrap();
    assert_eq!(after.thread, o.thread);
    // The `thread` header filled in on receipt is kept, though its column changed.
    assert_eq!(after.envelope.thread(), Some(before.thread.as_str()));
    assert_eq!(after.envelope, before.envelope);
    assert_eq!(after.canonical, before.canonical);
    assert_eq!(after.raw, before.raw);
}

#[test]
fn a_reply_moved_by_a_later_import_leaves_no_empty_thread_behind() {
    let o = orphan_fixture();
    let db = Db::new();
    let mut store = db.open();
    import(&mut store, &o.texts[1]);
    import(&mut store, &o.texts[0]);
    assert_eq!(store.message(&o.answer).unwrap().unwrap().thread, o.thread);
    assert_eq!(thread_counts(&store), [(o.thread.clone(), 2, 2)]);
}

#[test]

fn a_reply_moved_to_its_parents_thread_takes_its_replies_along() {
    let o = orphan_fixture();
    for separate in [false, true] {
        let db = Db::new();
        let mut store = db.open();
        if separate {
            for i in [1, 2, 0] {
                import(&mut store, &o.texts[i]);
            }
        } else {
            import(&mut store, &[1, 2, 0].map(|i| o.texts[i].as_str()).concat());
        }
        assert_eq!(
            thread_counts(&store),
            [(o.thread.clone(), 3, 3)],
            "separate imports: {separate}"
        );
        let view = store.thread(&o.thread).unwrap().unwrap();
        assert_eq!(
            view.messages.iter().map(|m| m.depth).collect::<Vec<_>>(),
            [0, 1, 2]
        );
    }
}

#[test]

fn a_reply_without_thread_header_joins_its_stored_parents_thread() {
    // The same tree as when the reply arrives first (see the test above).
    let o = orphan_fixture();
    for separate in [false, true] {
        let db = Db::new();
        let mut store = db.open();
        if separate {
            import(&mut store, &o.texts[0]);
            import(&mut store, &o.texts[1]);
        } else {
            import(&mut store, &format!("{}{}", o.texts[0], o.texts[1]));
        }
        assert_eq!(
            store.message(&o.answer).unwrap().unwrap().thread,
            o.thread,
            "separate imports: {separate}"
        );
        assert_eq!(thread_counts(&store), [(o.thread.clone(), 2, 2)]);
    }
}

// ---------------------------------------------------------------------------------------------
// v1.0 threading

#[test]
fn v10_envelopes_thread_by_session_and_reply_to_the_latest_message() {
    let db = Db::new();
    let mut store = db.open();
    let s1 = "2025-10-09T16Z a7f3d1";
    let s2 = "2025-10-09T18:05Z 0c0c0c";
    let text = [
        v10(CC, s1, "QUESTION", "Which name?"),
        v10(("GEMINI", "CLAUDE"), s2, "STATUS", "Other conversation."),
        v10_response(CB, s1, "crosstalk."),
        v10(CC, s1, "ANSWER", "Agreed, crosstalk."),
        v10_response(("CLAUDE", "GEMINI"), s2, "Noted."),
    ]
    .join("\nchat\n\n");
    let r = import(&mut store, &text);
    assert_eq!(r.count(Outcome::Imported), 5, "{r:#?}");
    let msg: Vec<String> = r.items.iter().map(|i| i.message.clone().unwrap()).collect();
    let thr: Vec<String> = r.items.iter().map(|i| i.thread.clone().unwrap()).collect();
    for id in msg.iter().chain(&thr) {
        assert!(
            is_id(id) && ulid::Ulid::from_string(id).is_ok(),
            "{id} is no ULID"
        );
    }
    assert_eq!(
        msg.iter().collect::<HashSet<_>>().len(),
        5,
        "message ids are unique"
    );
    // The first envelope of a session starts a thread; the others join it.
    assert_ne!(thr[0], thr[1]);
    assert_eq!([&thr[2], &thr[3]], [&thr[0], &thr[0]]);
    assert_eq!(thr[4], thr[1]);
    // Each later one answers the latest message of its session.
    let parent = |i: usize| store.message(&msg[i]).unwrap().unwrap().parent;
    assert_eq!(parent(0), None);
    assert_eq!(parent(1), None);
    assert_eq!(parent(2).as_deref(), Some(msg[0].as_str()));
    assert_eq!(parent(3).as_deref(), Some(msg[2].as_str()));
    assert_eq!(parent(4).as_deref(), Some(msg[1].as_str()));

    let view = store.thread(&thr[0]).unwrap().unwrap();
    let depths: Vec<(String, usize)> = view
        .messages
        .iter()
        .map(|m| (m.id.clone(), m.depth))
        .collect();
    assert_eq!(
        depths,
        [
            (msg[0].clone(), 0),
            (msg[2].clone(), 1),
            (msg[3].clone(), 2)
        ]
    );

    // Intents: legacy names mapped (kept as written too); `response:` means RESPOND.
    let raw = db.raw();
    let intents = |id: &str| -> (Option<String>, Option<String>, i64) {
        raw.query_row(
            "SELECT intent, intent_raw, ids_assigned FROM messages WHERE id = ?1",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap()
    };
    let some = |s: &str| Some(s.to_string());
    assert_eq!(intents(&msg[0]), (some("REQUEST"), some("QUESTION"), 1));
    assert_eq!(intents(&msg[1]), (some("BROADCAST"), some("STATUS"), 1));
    assert_eq!(intents(&msg[2]), (some("RESPOND"), None, 1));
    assert_eq!(intents(&msg[3]), (some("RESPOND"), some("ANSWER"), 1));
    assert_eq!(
        store.message(&msg[0]).unwrap().unwrap().intent,
        some("REQUEST")
    );
    assert_eq!(
        store.message(&msg[2]).unwrap().unwrap().intent,
        some("RESPOND")
    );

    // The canonical text carries the ids filled on receipt.
    for i in 0..5 {
        let m = store.message(&msg[i]).unwrap().unwrap();
        assert!(
            m.canonical.contains(&format!("thread: {}\n", thr[i])),
            "{}",
            m.canonical
        );
        assert!(
            m.canonical.contains(&format!("message: {}\n", msg[i])),
            "{}",
            m.canonical
        );
        match &m.parent {
            Some(p) => assert!(
                m.canonical.contains(&format!("parent: {p}\n")),
                "{}",
                m.canonical
            ),
            None => assert!(!m.canonical.contains("parent:"), "{}", m.canonical),
        }
        assert_eq!(m.envelope.thread(), Some(thr[i].as_str()));
        assert_eq!(m.envelope.message(), Some(msg[i].as_str()));
        assert_eq!(m.envelope.parent(), m.parent.as_deref());
    }
    let reply = store.message(&msg[2]).unwrap().unwrap();
    assert!(
        reply.canonical.contains("intent: RESPOND\n"),
        "{}",
        reply.canonical
    );
    // The raw text is kept as received: no ids in it.
    assert!(!reply.raw.contains("thread:"), "{}", reply.raw);
}

#[test]
fn a_v10_reply_in_a_later_paste_continues_the_session() {
    let db = Db::new();
    let mut store = db.open();
    let first = import(&mut store, &v10(CC, SESSION, "QUESTION", "Which name?"));
    let later = import(&mut store, &v10_response(CB, SESSION, "crosstalk."));
    let (m0, t0) = (
        first.items[0].message.clone(),
        first.items[0].thread.clone(),
    );
    assert_eq!(later.items[0].thread, t0);
    let reply = store
        .message(later.items[0].message.as_deref().unwrap())
        .unwrap()
        .unwrap();
    assert_eq!(reply.parent, m0);
    assert_eq!(store.threads(10).unwrap()[0].message_count, 2);
}

// ---------------------------------------------------------------------------------------------
// Duplicates

#[test]
fn reimporting_the_same_text_adds_nothing() {
    let db = Db::new();
    let mut store = db.open();
    let (_, m, texts) = tree_fixture();
    let text = format!(
        "{}\n{}\n{}",
        texts.concat(),
        v10(CC, "2025-10-09T19Z 111111", "QUESTION", "v1.0 question"),
        v10_response(CB, "2025-10-09T19Z 111111", "v1.0 answer")
    );
    let first = import(&mut store, &text);
    assert_eq!(first.count(Outcome::Imported), 7, "{first:#?}");
    let raw = db.raw();
    let counts = |raw: &Connection| {
        (
            count(raw, "SELECT count(*) FROM messages"),
            count(raw, "SELECT count(*) FROM pastes"),
            count(raw, "SELECT count(*) FROM paste_pieces"),
            count(raw, "SELECT sum(message_count) FROM threads"),
            count(raw, "SELECT count(*) FROM threads"),
        )
    };
    let before = counts(&raw);
    assert_eq!(before.0, 7);
    for _ in 0..2 {
        let again = import(&mut store, &text);
        assert_eq!(again.items.len(), 7);
        assert_eq!(again.count(Outcome::Duplicate), 7, "{again:#?}");
        assert_eq!(again.paste_id, first.paste_id, "the same paste is reused");
        // Duplicates name the stored message and thread.
        for (a, b) in first.items.iter().zip(&again.items) {
            assert_eq!((&a.message, &a.thread), (&b.message, &b.thread));
        }
        assert_eq!(counts(&raw), before);
    }
    assert_eq!(first.items[0].message.as_deref(), Some(m[0].as_str()));
}

#[test]
fn the_same_envelopes_wrapped_differently_are_duplicates() {
    // By id for v1.1, by content for v1.0: fences, quotes and CRLF do not make a new message.
    let db = Db::new();
    let mut store = db.open();
    let v = ids(2);
    let a = v11(CC, &v[0], None, &v[1], "REQUEST", "Is this the same?");
    let b = v10(CC, "2025-10-09T20Z 222222", "QUESTION", "And this one?");
    let first = import(&mut store, &format!("{a}\n{b}"));
    assert_eq!(first.count(Outcome::Imported), 2);
    let quoted: String = b.lines().map(|l| format!("> {l}\n")).collect();
    let wrapped = format!(
        "Here it is again:\n```\n{}```\n\n{}",
        a.replace('\n', "\r\n"),
        quoted
    );
    let again = import(&mut store, &wrapped);
    assert_eq!(again.count(Outcome::Duplicate), 2, "{again:#?}");
    assert_eq!(again.items[1].message, first.items[1].message);
    assert_eq!(count(&db.raw(), "SELECT count(*) FROM messages"), 2);
    // A different input is a different paste, kept as received.
    assert_ne!(again.paste_id, first.paste_id);
}

#[test]
fn a_message_id_twice_in_the_first_import_is_one_message() {
    // Into an empty database the import skips looking up ids it has not stored itself: the
    // second copy must still be found.
    let db = Db::new();
    let mut store = db.open();
    let v = ids(2);
    let a = v11(CC, &v[0], None, &v[1], "REQUEST", "Said twice.");
    let b = v10(CC, "2025-10-09T20Z 333333", "QUESTION", "Asked twice.");
    let report = import(
        &mut store,
        &format!("{a}\n{b}\n> {}\n{b}", a.replace('\n', "\n> ")),
    );
    let outcomes: Vec<Outcome> = report.items.iter().map(|i| i.outcome).collect();
    use Outcome::{Duplicate, Imported};
    // The same v1.0 text twice in one input is two messages (a repeated reply).
    assert_eq!(
        outcomes,
        [Imported, Imported, Duplicate, Imported],
        "{report:#?}"
    );
    assert_eq!(report.items[2].message, report.items[0].message);
    assert_eq!(report.items[2].thread, report.items[0].thread);
    assert_eq!(count(&db.raw(), "SELECT count(*) FROM messages"), 3);
}

// ---------------------------------------------------------------------------------------------
// v1.0 envelopes: the same text is the same message only in the same place

const DEPLOY: &str = "2025-10-09T16Z abc123";
const KC: (&str, &str) = ("KALLE", "CLAUDE");
const CK: (&str, &str) = ("CLAUDE", "KALLE");

/// The deploy conversation of v1.0 envelopes: two questions, each answered `Yes.`.
fn deploy() -> [String; 4] {
    [
        v10(KC, DEPLOY, "QUESTION", "Is the build green?"),
        v10_response(CK, DEPLOY, "Yes."),
        v10(KC, DEPLOY, "QUESTION", "Shall I deploy to production now?"),
        v10_response(CK, DEPLOY, "Yes."),
    ]
}

/// Each message's body and the body of the message it answers, in the order of `ids`.
fn bodies_and_parents(store: &Store, ids: &[String]) -> Vec<(String, Option<String>)> {
    let body = |id: &str| {
        let m = store.message(id).unwrap().unwrap();
        (m.envelope.body.unwrap_or_default(), m.parent)
    };
    ids.iter()
        .map(|id| {
            let (b, parent) = body(id);
            (b, parent.map(|p| body(&p).0))
        })
        .collect()
}

fn message_ids(reports: &[ImportReport]) -> Vec<String> {
    reports
        .iter()
        .flat_map(|r| &r.items)
        .map(|i| i.message.clone().unwrap())
        .collect()
}

#[test]
fn a_repeated_v10_reply_to_a_newer_message_is_a_new_message_in_any_paste() {
    let pastes = deploy();
    // Four pastes, one after another, and the same four in one paste: the same tree.
    let apart = Db::new();
    let mut store = apart.open();
    let reports: Vec<ImportReport> = pastes.iter().map(|p| import(&mut store, p)).collect();
    for r in &reports {
        assert_eq!(r.count(Outcome::Imported), 1, "{r:#?}");
    }
    let together = Db::new();
    let mut one = together.open();
    let report = import(&mut one, &pastes.concat());
    assert_eq!(report.count(Outcome::Imported), 4, "{report:#?}");
    let tree = bodies_and_parents(&store, &message_ids(&reports));
    assert_eq!(tree, bodies_and_parents(&one, &message_ids(&[report])));
    let q = |s: &str| Some(s.to_string());
    assert_eq!(
        tree,
        [
            ("Is the build green?".into(), None),
            ("Yes.".into(), q("Is the build green?")),
            ("Shall I deploy to production now?".into(), q("Yes.")),
            ("Yes.".into(), q("Shall I deploy to production now?")),
        ]
    );
    // The second question is answered, in one thread.
    let ids = message_ids(&reports);
    let last = store.message(&ids[3]).unwrap().unwrap();
    assert_eq!(last.parent.as_deref(), Some(ids[2].as_str()));
    let t = store.thread(&last.thread).unwrap().unwrap();
    assert_eq!(t.messages.len(), 4);
}

#[test]
fn a_transcript_pasted_again_or_longer_finds_its_v10_messages() {
    let [q1, yes, q2, _] = deploy();
    let q3 = v10(KC, DEPLOY, "QUESTION", "And the docs?");
    // Stored paste by paste.
    let db = Db::new();
    let mut store = db.open();
    let first: Vec<ImportReport> = deploy().iter().map(|p| import(&mut store, p)).collect();
    let ids = message_ids(&first);
    // The whole conversation in one paste, wrapped otherwise: the same messages.
    let again = import(
        &mut store,
        &format!("From the chat:\n{}", deploy().concat()),
    );
    assert_eq!(again.count(Outcome::Duplicate), 4, "{again:#?}");
    assert_eq!(message_ids(&[again]), ids);
    // The session's last messages and a new one, as a chat window scrolled to them shows
    // them: what it shares with the stored end is found, the rest answers the last found.
    let window = format!("{q2}\n> {}", format!("{yes}{q3}").replace('\n', "\n> "));
    let r = import(&mut store, &window);
    let outcomes: Vec<Outcome> = r.items.iter().map(|i| i.outcome).collect();
    use Outcome::{Duplicate, Imported};
    assert_eq!(outcomes, [Duplicate, Duplicate, Imported], "{r:#?}");
    assert_eq!(message_ids(std::slice::from_ref(&r))[..2], ids[2..]);
    let new = store.message(r.items[2].message.as_deref().unwrap());
    assert_eq!(
        new.unwrap().unwrap().parent.as_deref(),
        Some(ids[3].as_str())
    );
    // The last message pasted again, alone: the same message, not an answer to itself.
    let r = import(&mut store, &format!("again:\n{q3}"));
    assert_eq!(r.count(Duplicate), 1, "{r:#?}");
    // The first question pasted again, and the whole conversation: found from its start.
    let r = import(&mut store, &format!("once more:\n{q1}"));
    assert_eq!(r.count(Duplicate), 1, "{r:#?}");
    let r = import(&mut store, &format!("{}{q3}", deploy().concat()));
    assert_eq!(r.count(Duplicate), 5, "{r:#?}");
    // A paste imported again right away is the session's end pasted again; once the session
    // has moved on, its words are new messages, as a `Yes.` pasted alone after a newer
    // question is.
    let two = format!("{yes}\n{q2}");
    let r = import(&mut store, &two);
    assert_eq!(r.count(Imported), 2, "a new exchange: {r:#?}");
    let r = import(&mut store, &two);
    assert_eq!(r.count(Duplicate), 2, "the same paste: {r:#?}");
    import(&mut store, &v10(KC, DEPLOY, "QUESTION", "And the tests?"));
    let r = import(&mut store, &two);
    assert_eq!(r.count(Imported), 2, "after a newer question: {r:#?}");
    assert_eq!(count(&db.raw(), "SELECT count(*) FROM messages"), 10);
}

#[test]
fn words_that_begin_like_the_sessions_end_but_go_elsewhere_are_new_messages() {
    let db = Db::new();
    let mut store = db.open();
    let ids = message_ids(&[import(&mut store, &deploy().concat())]);
    // `Shall I deploy…?` is the message before the latest, but what follows it here is not
    // the latest: a new question and answer, after the latest, held until that is known.
    let no = v10_response(CK, DEPLOY, "No.");
    let other = v10(
        ("GEMINI", "CHATGPT"),
        "2025-10-09T20Z 444444",
        "QUESTION",
        "Meanwhile?",
    );
    let r = import(&mut store, &format!("{}{other}{no}", deploy()[2]));
    let outcomes: Vec<Outcome> = r.items.iter().map(|i| i.outcome).collect();
    assert_eq!(outcomes, [Outcome::Imported; 3], "{r:#?}");
    let m = |i: usize| {
        store
            .message(r.items[i].message.as_deref().unwrap())
            .unwrap()
            .unwrap()
    };
    assert_eq!(m(0).parent.as_deref(), Some(ids[3].as_str()));
    assert_eq!(m(2).parent, r.items[0].message);
    assert_eq!(m(1).parent, None);
    // Items are reported in input order, each naming its own message.
    assert!(
        r.items
            .windows(2)
            .all(|w| w[0].span.start_line < w[1].span.start_line)
    );
    assert_eq!(count(&db.raw(), "SELECT count(*) FROM messages"), 7);
}

/// SHA-256 in hex, as the store writes digests.
fn sha256_hex(text: &str) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn v10_messages_stored_under_text_digests_are_still_found() {
    // Databases written before places counted hold the digest of the text alone, and of
    // `text#n` for the n-th repeat in one input.
    let db = Db::new();
    let mut store = db.open();
    let transcript = deploy().concat();
    let first = import(&mut store, &transcript);
    drop(store);
    let raw = db.raw();
    let mut seen: HashMap<String, u32> = HashMap::new();
    for (item, text) in first.items.iter().zip(deploy()) {
        let env = &extract(&text, &opts()).envelopes[0].envelope;
        let base = sha256_hex(&crosstalk::protocol::render(env));
        let n = seen.entry(base.clone()).or_insert(0);
        let old = if *n == 0 {
            base.clone()
        } else {
            sha256_hex(&format!("{base}#{n}"))
        };
        *n += 1;
        raw.execute(
            "UPDATE messages SET digest = ?1 WHERE id = ?2",
            [&old, item.message.as_ref().unwrap()],
        )
        .unwrap();
    }
    let mut store = db.open();
    let again = import(&mut store, &format!("Pasted again:\n{transcript}"));
    assert_eq!(again.count(Outcome::Duplicate), 4, "{again:#?}");
    assert_eq!(message_ids(&[again]), message_ids(&[first]));
    // A later `Yes.` to a newer question is new there too.
    let q3 = v10(KC, DEPLOY, "QUESTION", "And the docs?");
    import(&mut store, &q3);
    let r = import(&mut store, &deploy()[1]);
    assert_eq!(r.count(Outcome::Imported), 1, "{r:#?}");
    assert_eq!(count(&raw, "SELECT count(*) FROM messages"), 6);
}

// ---------------------------------------------------------------------------------------------
// Rejected envelopes and raw pastes

#[test]
fn an_envelope_with_errors_is_rejected_and_the_others_imported() {
    let db = Db::new();
    let mut store = db.open();
    let v = ids(4);
    let good1 = v11(CC, &v[0], None, &v[1], "REQUEST", "first");
    let bad = v11(
        CB,
        "not-a-thread-id",
        Some(&v[1]),
        &v[2],
        "RESPOND",
        "bad thread id",
    );
    let good2 = v11(CB, &v[0], Some(&v[1]), &v[3], "RESPOND", "third");
    let text = format!("{good1}\nchat\n{bad}\nmore chat\n{good2}");
    let r = import(&mut store, &text);
    let outcomes: Vec<Outcome> = r.items.iter().map(|i| i.outcome).collect();
    assert_eq!(
        outcomes,
        [Outcome::Imported, Outcome::Rejected, Outcome::Imported]
    );
    let rejected = &r.items[1];
    assert_eq!((&rejected.message, &rejected.thread), (&None, &None));
    let bad_id: Vec<_> = rejected
        .diagnostics
        .iter()
        .filter(|d| d.is_error() && d.code.as_str() == "bad-id")
        .collect();
    assert_eq!(bad_id.len(), 1, "{:#?}", rejected.diagnostics);
    // The bad-id diagnostic points at the thread line of the second envelope.
    let thread_line = text
        .lines()
        .position(|l| l == "thread: not-a-thread-id")
        .unwrap() as u32
        + 1;
    assert_eq!(bad_id[0].line, thread_line);
    assert_eq!(rejected.span.start_line, thread_line - 3);

    assert!(store.message(&v[2]).unwrap().is_none());
    assert!(store.thread("not-a-thread-id").unwrap().is_none());
    let threads = store.threads(10).unwrap();
    assert_eq!(threads.len(), 1);
    assert_eq!(threads[0].message_count, 2);
    let view = store.thread(&v[0]).unwrap().unwrap();
    assert_eq!(view.messages.len(), 2);
    assert!(view.messages.iter().all(|m| m.id != v[2]));
    assert_eq!(count(&db.raw(), "SELECT count(*) FROM messages"), 2);
}

/// The stored bytes of a paste, its pieces joined in order.
fn paste_bytes(raw: &Connection, paste: i64) -> Vec<u8> {
    raw.prepare("SELECT bytes, zstd FROM paste_pieces WHERE paste_id = ?1 ORDER BY seq")
        .unwrap()
        .query_map([paste], |r| {
            Ok((r.get::<_, Vec<u8>>(0)?, r.get::<_, bool>(1)?))
        })
        .unwrap()
        .map(|piece| match piece.unwrap() {
            (bytes, true) => zstd::stream::decode_all(bytes.as_slice()).unwrap(),
            (bytes, false) => bytes,
        })
        .collect::<Vec<_>>()
        .concat()
}

/// The stored text of a paste, its pieces joined in order.
fn paste_text(raw: &Connection, paste: i64) -> (String, String, i64, i64) {
    let text = String::from_utf8(paste_bytes(raw, paste)).expect("the paste is UTF-8");
    let (source, bytes): (String, i64) = raw
        .query_row(
            "SELECT source, bytes FROM pastes WHERE id = ?1",
            [paste],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let pieces = count(
        raw,
        &format!("SELECT count(*) FROM paste_pieces WHERE paste_id = {paste}"),
    );
    (text, source, bytes, pieces)
}

#[test]
fn the_raw_paste_is_kept_even_when_nothing_parses() {
    let db = Db::new();
    let mut store = db.open();
    let text = "Kalle: here is what came back\n\n[[ not a banner\nbody: |\n  nothing\n\nthe end, no envelope\n";
    let r = store.import_text("clipboard", text, &opts()).unwrap();
    assert!(r.items.is_empty());
    assert!(
        r.diagnostics
            .iter()
            .any(|d| d.code.as_str() == "no-envelope"),
        "{:#?}",
        r.diagnostics
    );
    let raw = db.raw();
    let (stored, source, bytes, _) = paste_text(&raw, r.paste_id);
    assert_eq!(stored, text);
    assert_eq!(source, "clipboard");
    assert_eq!(bytes, text.len() as i64);
    assert_eq!(count(&raw, "SELECT count(*) FROM messages"), 0);
    assert_eq!(count(&raw, "SELECT count(*) FROM threads"), 0);

    // The same paste again is not stored twice.
    let again = store.import_text("clipboard", text, &opts()).unwrap();
    assert_eq!(again.paste_id, r.paste_id);
    assert_eq!(count(&raw, "SELECT count(*) FROM pastes"), 1);

    // An empty paste is kept too (as an empty paste).
    let empty = store.import_text("clipboard", "", &opts()).unwrap();
    assert!(empty.items.is_empty());
    assert_eq!(paste_text(&raw, empty.paste_id).0, "");
}

#[test]
fn a_large_paste_without_envelopes_is_kept_whole_in_pieces() {
    // Over 8 MiB of chat without a single envelope, with multi-byte characters throughout.
    let db = Db::new();
    let mut store = db.open();
    let line = "Zusammenfassung für das Team — der Plan steht, der Termin noch nicht. ✓\n";
    let text = line.repeat(9 * 1024 * 1024 / line.len() + 1000);
    assert!(text.len() > 9 << 20);
    let r = store
        .import_reader("big.txt", &mut text.as_bytes(), &opts(), &mut |_| {})
        .unwrap();
    assert!(r.items.is_empty());
    let (stored, _, bytes, pieces) = paste_text(&db.raw(), r.paste_id);
    assert!(pieces >= 2, "stored in {pieces} piece(s)");
    assert_eq!(bytes, text.len() as i64);
    assert!(stored == text, "stored text differs from the input");
}

#[test]
fn input_that_is_not_utf8_is_kept_byte_for_byte_and_still_imported() {
    let db = Db::new();
    let mut store = db.open();
    let [t, m] = <[String; 2]>::try_from(ids(2)).unwrap();
    let mut input =
        b"Kalle: pasted from a Latin-1 terminal: caf\xe9, \xff\xfe, a lone \xc3\n".to_vec();
    input.extend_from_slice(v11(CC, &t, None, &m, "REQUEST", "hello").as_bytes());
    input.extend_from_slice(b"trailing \x80\x80 bytes and no final newline \xf0\x9f");
    let r = store
        .import_reader("latin1.txt", &mut &input[..], &opts(), &mut |_| {})
        .unwrap();
    assert_eq!(r.count(Outcome::Imported), 1, "{r:#?}");
    assert!(
        r.diagnostics
            .iter()
            .any(|d| d.code.as_str() == "invalid-utf8" && d.line == 1),
        "{:#?}",
        r.diagnostics
    );
    let raw = db.raw();
    assert_eq!(paste_bytes(&raw, r.paste_id), input);
    assert_eq!(
        count(
            &raw,
            &format!("SELECT bytes FROM pastes WHERE id = {}", r.paste_id)
        ),
        input.len() as i64
    );
    // The same bytes again are the same paste; one byte different is another.
    let again = store
        .import_reader("latin1.txt", &mut &input[..], &opts(), &mut |_| {})
        .unwrap();
    assert_eq!(again.paste_id, r.paste_id);
    assert_eq!(again.count(Outcome::Duplicate), 1);
    let mut other = input.clone();
    *other.last_mut().unwrap() = 0xa0;
    let r2 = store
        .import_reader("latin1.txt", &mut &other[..], &opts(), &mut |_| {})
        .unwrap();
    assert_ne!(r2.paste_id, r.paste_id);
    assert_eq!(paste_bytes(&raw, r2.paste_id), other);
}

#[test]
fn invalid_utf8_across_several_stored_pieces_is_kept_and_parsed_like_one_decode() {
    // Over 8 MiB, so the input is stored in more than one piece; bytes that are not UTF-8 on
    // every line, and envelopes on both sides of the first cut.
    let db = Db::new();
    let mut store = db.open();
    let v = ids(2 * 2 + 1);
    let mut input = Vec::new();
    input.extend_from_slice(v11(CC, &v[0], None, &v[1], "REQUEST", "first").as_bytes());
    let line = b"chatter \xe9\xe8 caf\xc3\xa9 \xff and more chatter to fill the line\n";
    while input.len() < 9 << 20 {
        input.extend_from_slice(line);
    }
    input.extend_from_slice(v11(CB, &v[0], Some(&v[1]), &v[2], "RESPOND", "second").as_bytes());
    let r = store
        .import_reader("big.txt", &mut &input[..], &opts(), &mut |_| {})
        .unwrap();
    assert_eq!(r.count(Outcome::Imported), 2, "{:#?}", r.diagnostics);
    let raw = db.raw();
    assert!(count(&raw, "SELECT count(*) FROM paste_pieces") >= 2);
    assert!(
        paste_bytes(&raw, r.paste_id) == input,
        "stored bytes differ"
    );
    let lossy = String::from_utf8_lossy(&input);
    let whole = extract(&lossy, &opts());
    assert_eq!(whole.envelopes.len(), r.items.len());
    for (p, item) in whole.envelopes.iter().zip(&r.items) {
        assert_eq!(p.span, item.span);
    }
}

#[test]
fn a_damaged_stored_piece_stops_the_import_with_an_error_that_names_the_paste() {
    // Two pieces, an envelope in each; the second piece's compressed bytes are damaged after
    // the input was kept. Pieces are decompressed off the writing thread: the error must still
    // reach the caller, and nothing of the damaged piece is stored.
    let db = Db::new();
    let mut store = db.open();
    let v = ids(4);
    let mut input = v11(CC, &v[0], None, &v[1], "REQUEST", "first");
    let line = "chatter between the two envelopes, long enough to fill a piece of the input\n";
    while input.len() < 9 << 20 {
        input.push_str(line);
    }
    input.push_str(&v11(CB, &v[0], Some(&v[1]), &v[2], "RESPOND", "second"));
    let kept = store.keep_text("big.txt", &input).unwrap();
    let raw = db.raw();
    raw.execute(
        "UPDATE paste_pieces SET bytes = x'28b52ffd00', zstd = 1 WHERE paste_id = ?1 AND seq = 1",
        [kept.paste_id],
    )
    .unwrap();
    let err = store
        .import_kept(&kept, &opts(), &mut |_| {}, true)
        .unwrap_err();
    assert!(
        err.to_string()
            .contains(&format!("stored paste {} (damaged)", kept.paste_id)),
        "{err}"
    );
    let second = format!("SELECT count(*) FROM messages WHERE id = '{}'", v[2]);
    assert_eq!(count(&raw, &second), 0);
    // The store is usable afterwards.
    let r = import(
        &mut store,
        &v11(CC, &v[0], Some(&v[1]), &v[3], "RESPOND", "again"),
    );
    assert_eq!(r.count(Outcome::Imported), 1, "{:#?}", r.items);
}

#[test]
fn pastes_stored_as_text_by_an_older_schema_migrate_to_bytes() {
    let db = Db::new();
    drop(db.open());
    // Put the database back to schema 2, where pieces were text.
    let raw = db.raw();
    raw.execute_batch(
        "CREATE TABLE paste_chunks (
            paste_id INTEGER NOT NULL REFERENCES pastes(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL, text TEXT NOT NULL, PRIMARY KEY (paste_id, seq)
         ) WITHOUT ROWID;
         DROP TABLE paste_pieces;
         INSERT INTO pastes (id, source, received_at, bytes, digest)
            VALUES (7, 'old', '2026-01-01T00:00:00.000000Z', 13, 'x');
         INSERT INTO paste_chunks VALUES (7, 0, 'Grüße, '), (7, 1, 'ok ✓');
         DROP VIEW delivery;
         DROP TABLE operator_addresses;
         PRAGMA user_version = 2;",
    )
    .unwrap();
    drop(raw);
    let store = db.open();
    assert!(store.integrity_check().unwrap());
    let raw = db.raw();
    assert_eq!(count(&raw, "PRAGMA user_version"), SCHEMA_VERSION);
    assert_eq!(paste_bytes(&raw, 7), "Grüße, ok ✓".as_bytes());
    let left: i64 = count(
        &raw,
        "SELECT count(*) FROM sqlite_master WHERE name = 'paste_chunks'",
    );
    assert_eq!(left, 0);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]
    /// Whatever the bytes, the stored paste gives them back exactly.
    #[test]
    fn any_bytes_are_stored_exactly(
        input in proptest::collection::vec(
            proptest::prop_oneof![
                proptest::prelude::any::<u8>(),
                proptest::strategy::Just(b'\n'),
                proptest::strategy::Just(0xffu8),
            ],
            0..2048,
        )
    ) {
        let db = Db::new();
        let mut store = db.open();
        let r = store
            .import_reader("bytes", &mut &input[..], &opts(), &mut |_| {})
            .unwrap();
        proptest::prop_assert_eq!(paste_bytes(&db.raw(), r.paste_id), input.clone());
        let invalid = std::str::from_utf8(&input).is_err();
        let reported = r.diagnostics.iter().any(|d| d.code.as_str() == "invalid-utf8");
        proptest::prop_assert_eq!(invalid, reported);
    }
}

// ---------------------------------------------------------------------------------------------
// Drafts and status

#[test]
fn a_draft_reply_carries_the_headers_of_a_reply() {
    let db = Db::new();
    let mut store = db.open();
    let cases = [
        ("REQUEST", "RESPOND"),
        ("POLL", "RESPOND"),
        ("ESCALATE", "RESPOND"),
        ("HANDOFF", "RESPOND"),
        // What only tells is acknowledged, not answered with a question.
        ("RESPOND", "ACK"),
        ("BROADCAST", "ACK"),
        ("ACK", "ACK"),
        ("CLOSE", "ACK"),
    ];
    for (intent, expected) in cases {
        let v = ids(2);
        let (t, m) = (&v[0], &v[1]);
        let r = import(
            &mut store,
            &v11(
                ("claude://session/abc", "CHATGPT"),
                t,
                None,
                m,
                intent,
                "original",
            ),
        );
        assert_eq!(r.count(Outcome::Imported), 1, "{intent}: {r:#?}");
        let original = store.message(m).unwrap().unwrap();
        let draft = store
            .create_reply(m, "human://mira", None, "my answer", "mira")
            .unwrap();

        assert_eq!(draft.direction, "composed", "{intent}");
        assert_eq!(draft.status, "draft", "{intent}");
        assert_ne!(&draft.id, m);
        assert!(is_id(&draft.id), "{}", draft.id);
        assert_eq!(&draft.thread, t);
        assert_eq!(draft.parent.as_deref(), Some(m.as_str()));
        assert_eq!(draft.intent.as_deref(), Some(expected), "reply to {intent}");
        let e = &draft.envelope;
        // The desk writes, to the sender: never as CHATGPT, which did not write it.
        assert_eq!(e.banner.from, "human://mira");
        assert_eq!(e.banner.to, "claude://session/abc");
        assert_eq!(e.banner.version, original.envelope.banner.version);
        assert_eq!(e.thread(), Some(t.as_str()));
        assert_eq!(e.parent(), Some(m.as_str()));
        assert_eq!(e.message(), Some(draft.id.as_str()));
        assert_eq!(e.session(), original.envelope.session());
        assert_eq!(e.context(), original.envelope.context());
        assert_eq!(e.intent_raw(), Some(expected));
        assert_eq!(e.user(), Some("mira"));
        assert_eq!(e.body.as_deref(), Some("my answer"));
        assert!(draft.canonical.contains(&format!("parent: {m}\n")));

        // The draft is part of the thread, under the original.
        let view = store.thread(t).unwrap().unwrap();
        assert_eq!(view.messages.len(), 2);
        assert_eq!(view.messages[1].id, draft.id);
        assert_eq!(view.messages[1].depth, 1);
        let summary = store
            .threads(100)
            .unwrap()
            .into_iter()
            .find(|s| &s.id == t)
            .unwrap();
        assert_eq!(summary.message_count, 2);
        assert!(summary.participants.contains(&"human://mira".to_string()));
    }

    // An explicit intent wins; an unknown parent is an error.
    let v = ids(2);
    import(&mut store, &v11(CC, &v[0], None, &v[1], "REQUEST", "q"));
    let d = store
        .create_reply(&v[1], "kalle", Some("ACK"), "ok", "kalle")
        .unwrap();
    assert_eq!(d.intent.as_deref(), Some("ACK"));
    assert!(matches!(
        store.create_reply("01J9J3D3M6A4M3WQX8G1ZQ0S7K", "kalle", None, "x", "kalle"),
        Err(StoreError::NoMessage(_))
    ));
}

/// A follow-up to the operator's own message goes the same way, in the operator's name, and
/// asks: it is not an answer written as the other party, nor one to the desk itself.
#[test]
fn a_follow_up_to_ones_own_message_keeps_its_direction() {
    let db = Db::new();
    let mut store = db.open();
    let v = ids(2);
    import(&mut store, &v11(CC, &v[0], None, &v[1], "REQUEST", "q"));
    let mine = store
        .create_reply(&v[1], "kalle", None, "an answer", "kalle")
        .unwrap();
    assert_eq!(
        (
            mine.envelope.banner.from.as_str(),
            mine.envelope.banner.to.as_str()
        ),
        ("kalle", "CLAUDE")
    );
    let follow_up = store
        .create_reply(&mine.id, "kalle", None, "and more", "kalle")
        .unwrap();
    assert_eq!(
        (
            follow_up.envelope.banner.from.as_str(),
            follow_up.envelope.banner.to.as_str()
        ),
        ("kalle", "CLAUDE")
    );
    assert_eq!(follow_up.intent.as_deref(), Some("REQUEST"));
    assert_eq!(follow_up.parent.as_deref(), Some(mine.id.as_str()));
}

#[test]
fn a_draft_reply_to_a_v10_message_continues_its_session() {
    let db = Db::new();
    let mut store = db.open();
    let r = import(&mut store, &v10(CC, SESSION, "QUESTION", "Which name?"));
    let (m, t) = (
        r.items[0].message.clone().unwrap(),
        r.items[0].thread.clone().unwrap(),
    );
    let draft = store
        .create_reply(&m, "BROTHER", None, "crosstalk", "brother")
        .unwrap();
    assert_eq!(
        draft.intent.as_deref(),
        Some("RESPOND"),
        "QUESTION is a REQUEST"
    );
    assert_eq!(draft.thread, t);
    assert_eq!(draft.envelope.session(), Some(SESSION));
    assert_eq!(draft.envelope.context(), Some("naming"));
    assert_eq!(draft.envelope.banner.from, "BROTHER");
    assert_eq!(draft.envelope.banner.to, "CLAUDE");
}

#[test]
fn an_awaited_message_is_answered_when_its_reply_arrives() {
    let db = Db::new();
    let mut store = db.open();
    let raw = db.raw();
    let v = ids(4);
    let (t, a) = (&v[0], &v[1]);
    import(
        &mut store,
        &v11(CB, t, None, a, "REQUEST", "Please review."),
    );
    // A REQUEST relayed between two AIs awaits its answer (before it is relayed, it is to
    // relay).
    assert!(!awaiting(&store, t));
    assert!(store.mark_relayed(a, "test").unwrap());
    assert!(awaiting(&store, t));
    let summary = store.threads(10).unwrap().remove(0);
    assert!(summary.awaiting_since.is_some());
    let draft = store
        .create_reply(a, "kalle", None, "Reviewed.", "kalle")
        .unwrap();
    assert_eq!(draft.status, "draft");
    // The operator's reply answers it; the reply (a RESPOND) awaits nothing itself.
    assert!(!awaiting(&store, t));

    // The operator copied the draft out.
    raw.execute(
        "UPDATE messages SET status = 'awaiting_reply' WHERE id = ?1",
        [&draft.id],
    )
    .unwrap();

    // Something else in the thread does not answer it.
    import(&mut store, &v11(CB, t, Some(a), &v[2], "ACK", "unrelated"));
    // (A RESPOND copied out awaits no reply: it reads sent.)
    assert_eq!(status_of(&store, &draft.id), "sent");

    // Its reply does.
    let r = import(
        &mut store,
        &v11(CB, t, Some(&draft.id), &v[3], "RESPOND", "Thanks."),
    );
    assert_eq!(r.count(Outcome::Imported), 1);
    assert_eq!(status_of(&store, &draft.id), "answered");
    assert_eq!(status_of(&store, &v[3]), "received");
    assert!(!awaiting(&store, t));
    let summary = store.threads(10).unwrap().remove(0);
    assert!(summary.awaiting_since.is_none());
}

#[test]
fn an_awaited_message_is_answered_by_a_v10_reply_in_its_session() {
    let db = Db::new();
    let mut store = db.open();
    let r = import(&mut store, &v10(CB, SESSION, "QUESTION", "Which name?"));
    let (m, t) = (
        r.items[0].message.clone().unwrap(),
        r.items[0].thread.clone().unwrap(),
    );
    let draft = store
        .create_reply(&m, "kalle", None, "crosstalk?", "kalle")
        .unwrap();
    db.raw()
        .execute(
            "UPDATE messages SET status = 'awaiting_reply' WHERE id = ?1",
            [&draft.id],
        )
        .unwrap();
    let r = import(&mut store, &v10_response(CB, SESSION, "Yes, crosstalk."));
    let reply = store
        .message(r.items[0].message.as_deref().unwrap())
        .unwrap()
        .unwrap();
    assert_eq!(reply.parent.as_deref(), Some(draft.id.as_str()));
    assert_eq!(status_of(&store, &draft.id), "answered");
    assert!(!awaiting(&store, &t));
}

// ---------------------------------------------------------------------------------------------
// Thread list and search

#[test]
fn threads_are_listed_newest_activity_first_with_participants_and_counts() {
    let db = Db::new();
    let mut store = db.open();
    let v = ids(8);
    let (x, y, z) = (&v[0], &v[1], &v[2]);
    import(&mut store, &v11(CC, x, None, &v[3], "REQUEST", "x1"));
    std::thread::sleep(std::time::Duration::from_millis(5));
    import(
        &mut store,
        &format!(
            "{}{}",
            v11(("GEMINI", "CLAUDE"), y, None, &v[4], "REQUEST", "y1"),
            v11(CC, y, Some(&v[4]), &v[5], "RESPOND", "y2")
        ),
    );
    std::thread::sleep(std::time::Duration::from_millis(5));
    import(&mut store, &v11(CC, z, None, &v[6], "BROADCAST", "z1"));
    let list = store.threads(10).unwrap();
    let order: Vec<&str> = list.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(order, [z, y, x].map(String::as_str));
    assert_eq!(
        list.iter().map(|t| t.message_count).collect::<Vec<_>>(),
        [1, 2, 1]
    );
    assert_eq!(list[1].participants, ["GEMINI", "CLAUDE", "CHATGPT"]);
    assert_eq!(list[2].participants, ["CLAUDE", "CHATGPT"]);
    assert!(
        list.windows(2)
            .all(|w| w[0].last_activity >= w[1].last_activity)
    );
    assert_eq!(store.threads(2).unwrap().len(), 2);
    assert!(store.threads(0).unwrap().is_empty());

    // New activity in the oldest thread moves it to the top; a new participant is appended.
    std::thread::sleep(std::time::Duration::from_millis(5));
    import(
        &mut store,
        &v11(("GEMINI", "CLAUDE"), x, Some(&v[3]), &v[7], "RESPOND", "x2"),
    );
    let list = store.threads(10).unwrap();
    assert_eq!(list[0].id, *x);
    assert_eq!(list[0].message_count, 2);
    assert_eq!(list[0].participants, ["CLAUDE", "CHATGPT", "GEMINI"]);
    assert_eq!(list[0].context.as_deref(), Some("schema migration"));
    assert!(!list[0].awaiting_reply);
}

fn search_fixture() -> (Db, Store, Vec<String>) {
    let db = Db::new();
    let mut store = db.open();
    let v = ids(5);
    let t = &v[0];
    let envs = [
        format!(
            "[[CLAUDE→CHATGPT v1]]\nthread: {t}\nmessage: {}\ncontext: incident review\nintent: REQUEST\n\
             body: |\n  The backfill of the orders table ran overnight without trouble.\nsig: none\n[[END]]\n",
            v[1]
        ),
        format!(
            "[[CHATGPT→CLAUDE v1]]\nthread: {t}\nparent: {}\nmessage: {}\ncontext: quarterly numbers\n\
             intent: RESPOND\nbody: |\n  Backfill, backfill, backfill: the backfill dominates the plan.\nsig: none\n[[END]]\n",
            v[1], v[2]
        ),
        format!(
            "[[GEMINI→CLAUDE v1]]\nthread: {t}\nparent: {}\nmessage: {}\ncontext: naming\nintent: RESPOND\n\
             body: |\n  Zusammenfassung für das Team: unrelated words only.\nsig: none\n[[END]]\n",
            v[1], v[3]
        ),
    ];
    let r = import(&mut store, &envs.concat());
    assert_eq!(r.count(Outcome::Imported), 3, "{r:#?}");
    (db, store, v)
}

#[test]
fn search_finds_bodies_and_contexts_best_first_with_snippets() {
    let (_db, store, v) = search_fixture();
    // By body, best match first: the message that is all about the backfill.
    let hits = store.search("backfill", 10).unwrap();
    let found: Vec<&str> = hits.iter().map(|h| h.message.as_str()).collect();
    assert_eq!(found, [&v[2], &v[1]].map(String::as_str), "{hits:#?}");
    assert!(hits[0].rank <= hits[1].rank);
    assert!(hits.iter().all(|h| h.thread == v[0]));
    for h in &hits {
        assert!(
            h.snippet.to_lowercase().contains("[backfill]"),
            "snippet {:?}",
            h.snippet
        );
    }
    assert_eq!(hits[1].context.as_deref(), Some("incident review"));
    // Case does not matter; non-ASCII words are found.
    assert_eq!(store.search("BACKFILL", 10).unwrap().len(), 2);
    let hits = store.search("für", 10).unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].message, v[3]);
    // By context only.
    let hits = store.search("quarterly", 10).unwrap();
    assert_eq!(hits.len(), 1, "{hits:#?}");
    assert_eq!(hits[0].message, v[2]);
    assert!(
        hits[0].snippet.contains("[quarterly]"),
        "{:?}",
        hits[0].snippet
    );
    // By participant.
    let hits = store.search("gemini", 10).unwrap();
    assert_eq!(hits.len(), 1);
    // Every word must occur; the limit is kept.
    assert_eq!(store.search("backfill overnight", 10).unwrap().len(), 1);
    assert_eq!(store.search("backfill nowhere", 10).unwrap().len(), 0);
    assert_eq!(store.search("backfill", 1).unwrap().len(), 1);
    assert!(store.search("", 10).unwrap().is_empty());
    assert!(store.search("   ", 10).unwrap().is_empty());
}

/// The text of a conflicting version (another text pasted under a stored id) is found too,
/// marked as that version; an erased message takes its versions out of the results.
#[test]
fn search_finds_conflicting_versions_marked_as_such() {
    let (_db, mut store, v) = search_fixture();
    let other = format!(
        "[[CLAUDE→CHATGPT v1]]\nthread: {}\nmessage: {}\ncontext: incident review\n\
         intent: REQUEST\nbody: |\n  The cutover of the ledger happened at dawn.\nsig: none\n[[END]]\n",
        v[0], v[1]
    );
    let r = import(&mut store, &other);
    assert_eq!(r.count(Outcome::Conflict), 1, "{r:#?}");
    let hits = store.search("cutover", 10).unwrap();
    assert_eq!(hits.len(), 1, "{hits:#?}");
    assert_eq!(hits[0].message, v[1]);
    assert_eq!(hits[0].version, Some(1));
    assert!(
        hits[0].snippet.contains("[cutover]"),
        "{:?}",
        hits[0].snippet
    );
    // The stored text's hits come first and say they are the stored text.
    let hits = store.search("backfill", 10).unwrap();
    assert!(hits.iter().all(|h| h.version.is_none()), "{hits:#?}");
    // A second version is found as the second, also in a search as typed.
    let third = other.replace("cutover of the ledger", "cutover of the archive");
    assert_eq!(import(&mut store, &third).count(Outcome::Conflict), 1);
    let r = store.search_as_typed("cutov", 10).unwrap();
    let mut versions: Vec<Option<usize>> = r.hits.iter().map(|h| h.version).collect();
    versions.sort();
    assert_eq!(versions, [Some(1), Some(2)]);
    assert_eq!(r.matches, 2);
    // Erased with its message, a version is found no more.
    store
        .erase(&crosstalk::store::EraseTarget::Message(v[1].clone()))
        .unwrap();
    assert!(store.search("cutover", 10).unwrap().is_empty());
}

#[test]
fn search_does_not_interpret_fts_syntax() {
    let (_db, store, _) = search_fixture();
    for q in [
        "\"",
        "\"\"",
        "*",
        "back*",
        "AND(",
        "AND",
        "OR",
        "NOT",
        "-",
        "-backfill",
        "backfill -",
        "NEAR(backfill plan)",
        "body:backfill",
        "^backfill",
        "(",
        ")",
        "{body}",
        "a\"b",
        "'",
        ":",
        "+",
        "backfill\" OR \"x",
    ] {
        if let Err(e) = store.search(q, 10) {
            panic!("query {q:?} failed: {e}");
        }
    }
    // Quotes inside a word are matched as text, not as syntax.
    assert_eq!(store.search("\"backfill\"", 10).unwrap().len(), 2);
    assert_eq!(store.search("backfill OR nowhere", 10).unwrap().len(), 0);
}

/// While a query is typed (the app's `/`) its last word also finds the words it begins; the
/// CLI's search, given the whole query, matches whole words only.
#[test]
fn a_search_as_typed_finds_the_words_its_last_word_begins() {
    let (_db, store, v) = search_fixture();
    let found =
        |r: SearchResults| -> Vec<String> { r.hits.into_iter().map(|h| h.message).collect() };
    assert!(store.search("backfill overn", 10).unwrap().is_empty());
    let typed = store.search_as_typed("backfill overn", 10).unwrap();
    assert_eq!(typed.matches, 1);
    assert_eq!(found(typed), [v[1].clone()]);
    assert_eq!(store.search_as_typed("BACKF", 10).unwrap().matches, 2);
    assert_eq!(store.search_as_typed("back", 10).unwrap().matches, 2);
    // Only the last word: an earlier one is a whole word.
    assert_eq!(
        store.search_as_typed("back overnight", 10).unwrap().matches,
        0
    );
    // A space after it finishes the word.
    assert_eq!(
        store
            .search_as_typed("backfill overn ", 10)
            .unwrap()
            .matches,
        0
    );
    // A single letter is looked for as a word (a prefix of one letter begins most words).
    assert_eq!(store.search_as_typed("backfill o", 10).unwrap().matches, 0);
    // The prefix is still quoted: no FTS syntax gets through.
    for q in [
        "\"",
        "*",
        "back*",
        "NEAR(",
        "backfill OR",
        "backfill\" OR \"x",
        "-",
        "ab\"",
        "{body}",
    ] {
        if let Err(e) = store.search_as_typed(q, 10) {
            panic!("query {q:?} failed: {e}");
        }
    }
    // `OR` is a word begun, as any other: `orders`.
    assert_eq!(store.search_as_typed("backfill OR", 10).unwrap().matches, 1);
}

#[test]
fn a_repeated_word_is_searched_for_once_and_too_many_words_are_refused() {
    let (_db, store, v) = search_fixture();
    let ids_of = |q: &str| -> Vec<(String, String)> {
        store
            .search(q, 10)
            .unwrap()
            .into_iter()
            .map(|h| (h.message, h.snippet))
            .collect()
    };
    let once = ids_of("backfill plan");
    assert_eq!(once.len(), 1);
    assert_eq!(once[0].0, v[2]);
    // The same words repeated, in other cases, find the same messages the same way.
    let repeated = format!("{} PLAN Plan", "backfill Backfill ".repeat(200));
    assert_eq!(ids_of(&repeated), once);
    let r = store.search_results(&repeated, 10).unwrap();
    assert_eq!(r.matches, 1);

    // Up to the limit of different words a query is searched; beyond it, refused.
    let words: Vec<String> = (0..MAX_SEARCH_WORDS).map(|i| format!("w{i}")).collect();
    assert!(store.search(&words.join(" "), 10).unwrap().is_empty());
    let too_many = format!("{} one-more", words.join(" "));
    match store.search(&too_many, 10) {
        Err(e @ StoreError::TooManyWords { .. }) => {
            assert!(e.to_string().contains("remove some"), "{e}")
        }
        other => panic!("{other:?}"),
    }
    // ... counting each different word once.
    let repeats = format!("{} {}", words.join(" "), words.join(" "));
    assert!(store.search(&repeats, 10).is_ok());
}

#[test]
fn a_word_in_more_messages_than_are_ranked_finds_the_best_of_the_newest() {
    let db = Db::new();
    let mut store = db.open();
    let (older, newer) = (10, RANKED_MATCHES);
    let v = ids(1 + older + newer);
    let text: String = v[1..]
        .iter()
        .enumerate()
        .map(|(i, id)| {
            // The oldest messages are the most relevant by BM25 (the word, over and over).
            let body = if i < older {
                "everywhere everywhere everywhere everywhere oldtimer"
            } else {
                "everywhere among many other words in a longer message"
            };
            v11(CC, &v[0], None, id, "REQUEST", body)
        })
        .collect();
    assert_eq!(
        import(&mut store, &text).count(Outcome::Imported),
        older + newer
    );

    let r = store.search_results("everywhere", 20).unwrap();
    assert_eq!(r.matches, older + newer);
    assert_eq!(r.ranked_newest, Some(RANKED_MATCHES));
    assert_eq!(r.hits.len(), 20);
    let oldest: HashSet<&String> = v[1..=older].iter().collect();
    assert!(
        r.hits.iter().all(|h| !oldest.contains(&h.message)),
        "only the newest matches are ranked: {:#?}",
        &r.hits[..3]
    );
    assert!(r.hits.windows(2).all(|w| w[0].rank <= w[1].rank));

    // A word in fewer messages is ranked in full, best first.
    let r = store.search_results("oldtimer everywhere", 20).unwrap();
    assert_eq!(
        (r.matches, r.ranked_newest, r.hits.len()),
        (older, None, older)
    );
    let r = store.search_results("everywhere", 5).unwrap();
    assert_eq!(r.hits.len(), 5);
    assert_eq!(store.search("everywhere", 5).unwrap().len(), 5);
}

// ---------------------------------------------------------------------------------------------
// Large synthetic transcripts

/// Checks the store's counts against the messages it returns.
fn assert_consistent(store: &Store, raw: &Connection) {
    assert!(store.integrity_check().unwrap());
    let threads = store.threads(1_000_000).unwrap();
    assert_eq!(
        threads.len() as i64,
        count(raw, "SELECT count(*) FROM threads")
    );
    let mut total = 0;
    for t in &threads {
        let view = store.thread(&t.id).unwrap().unwrap();
        assert_eq!(
            t.message_count,
            view.messages.len() as i64,
            "thread {}",
            t.id
        );
        assert!(t.message_count > 0, "empty thread {}", t.id);
        assert_tree_order(&view);
        total += t.message_count;
    }
    assert_eq!(total, count(raw, "SELECT count(*) FROM messages"));
    // A reply and its parent, when both are stored, share a thread.
    let split = count(
        raw,
        "SELECT count(*) FROM messages c JOIN messages p ON p.id = c.parent_id
         WHERE p.thread_id <> c.thread_id",
    );
    assert_eq!(split, 0, "replies filed apart from their parents");
    // The full-text index matches the table: every message indexed once.
    assert!(
        store.search_index_check().unwrap(),
        "the full-text index differs from the messages"
    );
}

#[test]
fn a_large_mangled_transcript_imports_consistently() {
    let spec = TranscriptSpec {
        envelopes: 5_000,
        threads: 250,
        seed: 11,
        mangled_percent: 5,
    };
    let text = transcript(&spec);
    let extracted = extract(&text, &opts());
    assert_eq!(extracted.envelopes.len(), 5_000);

    let db = Db::new();
    let mut store = db.open();
    let mut progress = Vec::new();
    let r = store
        .import_reader("synth.txt", &mut text.as_bytes(), &opts(), &mut |n| {
            progress.push(n)
        })
        .unwrap();
    let (imported, duplicate, rejected) = (
        r.count(Outcome::Imported),
        r.count(Outcome::Duplicate),
        r.count(Outcome::Rejected),
    );
    assert_eq!(imported + duplicate + rejected, extracted.envelopes.len());
    assert_eq!(r.items.len(), extracted.envelopes.len());
    let with_errors = extracted
        .envelopes
        .iter()
        .filter(|p| p.has_errors())
        .count();
    assert_eq!(rejected, with_errors);
    assert!(imported > 4_900, "{imported} imported");
    assert_eq!(progress.last(), Some(&(text.len() as u64)));

    let raw = db.raw();
    assert_eq!(
        count(&raw, "SELECT count(*) FROM messages") as usize,
        imported
    );
    // Every envelope that is not rejected names a stored message in a stored thread.
    for item in r.items.iter().filter(|i| i.outcome != Outcome::Rejected) {
        let m = store.message(item.message.as_deref().unwrap()).unwrap();
        assert_eq!(m.map(|m| m.thread), item.thread);
    }
    assert_consistent(&store, &raw);
    drop(store);

    // Reopened, a second import of the same transcript adds nothing.
    let mut store = db.open();
    let again = store
        .import_reader("synth.txt", &mut text.as_bytes(), &opts(), &mut |_| {})
        .unwrap();
    assert_eq!(again.count(Outcome::Imported), 0);
    assert_eq!(again.count(Outcome::Duplicate), imported + duplicate);
    assert_eq!(
        count(&raw, "SELECT count(*) FROM messages") as usize,
        imported
    );
    assert_eq!(count(&raw, "SELECT count(*) FROM pastes"), 1);
}

#[test]
fn an_input_larger_than_a_stored_piece_imports_like_one_extraction() {
    let spec = TranscriptSpec {
        envelopes: 15_000,
        threads: 750,
        seed: 5,
        mangled_percent: 5,
    };
    let text = transcript(&spec);
    assert!(text.len() > 8 << 20, "{} bytes", text.len());
    let extracted = extract(&text, &opts());

    let db = Db::new();
    let mut store = db.open();
    let r = store
        .import_reader("synth.txt", &mut text.as_bytes(), &opts(), &mut |_| {})
        .unwrap();
    let raw = db.raw();
    let pieces = count(
        &raw,
        &format!(
            "SELECT count(*) FROM paste_pieces WHERE paste_id = {}",
            r.paste_id
        ),
    );
    assert!(pieces >= 2, "{pieces} piece(s)");
    assert_eq!(paste_text(&raw, r.paste_id).0, text);

    // The same envelopes at the same places, with the same findings at the same lines.
    assert_eq!(r.items.len(), extracted.envelopes.len());
    for (item, p) in r.items.iter().zip(&extracted.envelopes) {
        assert_eq!(item.span, p.span);
        assert_eq!(item.diagnostics, p.diagnostics, "envelope at {:?}", p.span);
        assert_eq!(item.outcome == Outcome::Rejected, p.has_errors());
    }
    assert_eq!(
        r.items.last().map(|i| i.span),
        extracted.envelopes.last().map(|p| p.span)
    );
    let outside: Vec<_> = extracted
        .diagnostics
        .iter()
        .filter(|d| d.code.as_str() != "no-envelope")
        .collect();
    assert_eq!(r.diagnostics.iter().collect::<Vec<_>>(), outside);
    assert_consistent(&store, &raw);

    // The same text imported as two inputs, cut after an `[[END]]` line near the middle,
    // gives the same messages and threads.
    let mid = text.len() / 2 + text[text.len() / 2..].find("\n[[END]]\n").unwrap() + 9;
    let halves = Db::new();
    let mut other = halves.open();
    let a = other
        .import_text("first half", &text[..mid], &opts())
        .unwrap();
    let b = other
        .import_text("second half", &text[mid..], &opts())
        .unwrap();
    assert_eq!(a.items.len() + b.items.len(), r.items.len());
    let other_raw = halves.raw();
    let received = |raw: &Connection| -> HashSet<(String, String, Option<String>)> {
        raw.prepare("SELECT id, thread_id, parent_id FROM messages WHERE ids_assigned = 0")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    assert_eq!(received(&raw), received(&other_raw));
    for sql in [
        "SELECT count(*) FROM messages",
        "SELECT count(*) FROM threads",
        "SELECT count(*) FROM messages WHERE parent_id IS NULL",
    ] {
        assert_eq!(count(&raw, sql), count(&other_raw, sql), "{sql}");
    }
}

#[test]
fn an_unreadable_input_is_an_error_and_stores_nothing() {
    struct Failing(usize);
    impl std::io::Read for Failing {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.0 == 0 {
                return Err(std::io::Error::other("disk on fire"));
            }
            let n = self.0.min(buf.len());
            // Lines of 64 bytes, so that a large input is cut into pieces.
            for (i, b) in buf[..n].iter_mut().enumerate() {
                *b = if i % 64 == 63 { b'\n' } else { b'x' };
            }
            self.0 -= n;
            Ok(n)
        }
    }
    let db = Db::new();
    let mut store = db.open();
    let raw = db.raw();
    // Failing within the first piece, after it, and after two.
    for size in [1000, 9 << 20, 17 << 20] {
        let err = store
            .import_reader("broken", &mut Failing(size), &opts(), &mut |_| {})
            .unwrap_err();
        assert!(matches!(err, StoreError::Read { .. }), "{err}");
        assert_eq!(count(&raw, "SELECT count(*) FROM pastes"), 0, "{size}");
        assert_eq!(
            count(&raw, "SELECT count(*) FROM paste_pieces"),
            0,
            "{size}"
        );
    }
    // The store is still usable.
    let v = ids(2);
    let r = import(&mut store, &v11(CC, &v[0], None, &v[1], "REQUEST", "x"));
    assert_eq!(r.count(Outcome::Imported), 1);
    assert_eq!(count(&raw, "SELECT count(*) FROM pastes"), 1);
}

#[test]
fn a_database_set_back_to_an_earlier_version_by_hand_opens_again() {
    for version in 4..=7 {
        let db = Db::new();
        drop(db.open());
        let raw = db.raw();
        raw.pragma_update(None, "user_version", version).unwrap();
        drop(raw);
        let store = db.open();
        assert!(store.integrity_check().unwrap(), "version {version}");
        assert_eq!(count(&db.raw(), "PRAGMA user_version"), SCHEMA_VERSION);
    }
}
