//! Erasure on temporary database files: a thread, a message, unused raw pastes; what stays,
//! and that an erased word is gone from every byte of the database, its log and its index.

use std::path::{Path, PathBuf};

use crosstalk::ids::IdGenerator;
use crosstalk::protocol::Options;
use crosstalk::store::{EraseTarget, Erasure, Store};
use proptest::prelude::*;
use rusqlite::Connection;
use tempfile::TempDir;

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
}

fn ids(n: usize) -> Vec<String> {
    let g = IdGenerator::new();
    (0..n).map(|_| g.next_id()).collect()
}

fn env(thread: &str, parent: Option<&str>, message: &str, body: &str) -> String {
    let parent = parent.map_or(String::new(), |p| format!("parent: {p}\n"));
    format!(
        "[[CLAUDE→CHATGPT v1]]\nuser: kalle\nsession: 2025-10-09T16Z a7f3d1\nthread: {thread}\n\
         {parent}message: {message}\ncontext: erasure\nintent: REQUEST\nbody: |\n  {body}\n\
         sig: none\n[[END]]\n"
    )
}

fn import(store: &mut Store, text: &str) {
    store
        .import_text("<test>", text, &Options::default())
        .unwrap();
}

/// Every byte SQLite keeps for the database: the file, its log and its shared memory, and the
/// same of the full-text index's file beside it.
fn all_bytes(path: &Path) -> Vec<u8> {
    let mut bytes = Vec::new();
    for suffix in crosstalk::store::DATABASE_FILES {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        if let Ok(b) = std::fs::read(PathBuf::from(p)) {
            bytes.extend(b);
        }
    }
    bytes
}

fn contains(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}

/// Counts that must always agree, whatever was erased.
fn assert_consistent(path: &Path) {
    let c = Connection::open(path).unwrap();
    let ok: String = c
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
    let mut index = path.as_os_str().to_owned();
    index.push("-search");
    c.execute(
        "ATTACH ?1 AS search",
        [PathBuf::from(index).to_string_lossy()],
    )
    .unwrap();
    c.execute_batch("INSERT INTO search.messages_fts(messages_fts) VALUES ('integrity-check')")
        .expect("the full-text index is whole");
    let rows = |sql: &str| -> Vec<i64> {
        c.prepare(sql)
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    assert_eq!(
        rows("SELECT rowid FROM search.messages_fts ORDER BY rowid"),
        rows("SELECT seq FROM messages ORDER BY seq"),
        "the full-text index holds the messages stored, and no other"
    );
    let wrong: i64 = c
        .query_row(
            "SELECT count(*) FROM threads t WHERE message_count <>
               (SELECT count(*) FROM messages m WHERE m.thread_id = t.id)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(wrong, 0, "thread counts match their messages");
    let homeless: i64 = c
        .query_row(
            "SELECT count(*) FROM messages m WHERE NOT EXISTS
               (SELECT 1 FROM threads t WHERE t.id = m.thread_id)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(homeless, 0, "every message has its thread");
    let dangling: i64 = c
        .query_row(
            "SELECT count(*) FROM messages m WHERE paste_id IS NOT NULL AND NOT EXISTS
               (SELECT 1 FROM pastes p WHERE p.id = m.paste_id)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(dangling, 0, "no message names a removed paste");
}

#[test]
fn erasing_a_thread_removes_its_words_from_every_byte_and_keeps_the_other_thread() {
    let db = Db::new();
    let mut store = Store::open(&db.path).unwrap();
    let v = ids(5);
    // One paste carries both threads: erasing one must not lose the other's text.
    let paste = format!(
        "{}\n{}\n{}",
        env(
            &v[0],
            None,
            &v[0],
            "Zanzibarquokka lives at 12 Quay Street."
        ),
        env(&v[0], Some(&v[0]), &v[1], "Zanzibarquokka replied."),
        env(&v[2], None, &v[2], "Keepsakeword stays."),
    );
    import(&mut store, &paste);
    import(
        &mut store,
        &env(&v[0], Some(&v[1]), &v[3], "A later Zanzibarquokka."),
    );
    assert_eq!(store.search("Zanzibarquokka", 10).unwrap().len(), 3);

    let plan = store
        .erase_plan(&EraseTarget::Thread(v[0].clone()))
        .unwrap()
        .unwrap();
    assert_eq!(
        plan,
        Erasure {
            messages: 3,
            threads: 1,
            pastes: 2,
            sharing_pastes: 1,
            drafts: 0,
            orphaned_replies: 0,
        }
    );
    let done = store.erase(&EraseTarget::Thread(v[0].clone())).unwrap();
    assert_eq!(done, Some(plan));
    assert!(store.thread(&v[0]).unwrap().is_none());
    assert!(store.search("Zanzibarquokka", 10).unwrap().is_empty());
    let kept = store
        .thread(&v[2])
        .unwrap()
        .expect("the other thread stays");
    assert_eq!(kept.messages.len(), 1);
    assert!(kept.messages[0].canonical.contains("Keepsakeword stays."));
    assert_eq!(store.search("Keepsakeword", 10).unwrap().len(), 1);
    drop(store);
    let bytes = all_bytes(&db.path);
    assert!(
        !contains(&bytes, "Zanzibarquokka") && !contains(&bytes, "zanzibarquokka"),
        "the erased word is still somewhere in the database files"
    );
    assert!(contains(&bytes, "Keepsakeword"));
    assert_consistent(&db.path);
}

/// A thread stored among many others, its rows changed after they were written (the thread's
/// count and time at the end of each piece of the import, the request's wait when its answer
/// came): erasing it leaves none of its words in the free space those changes left, in the
/// pages still in use or in the free ones.
#[test]
fn erasing_a_thread_among_many_leaves_no_old_version_of_its_rows() {
    let db = Db::new();
    let mut store = Store::open(&db.path).unwrap();
    let history = crosstalk::synth::transcript(&crosstalk::synth::TranscriptSpec {
        envelopes: 3_000,
        threads: 150,
        ..crosstalk::synth::TranscriptSpec::default()
    });
    let v = ids(3);
    let request = env(&v[0], None, &v[0], "Quillfeatherword asks a question.")
        .replace("context: erasure", "context: Xylophonectxword");
    let answer = env(&v[0], Some(&v[0]), &v[1], "Quillfeatherword answers it.")
        .replace("CLAUDE→CHATGPT", "CHATGPT→CLAUDE")
        .replace("intent: REQUEST", "intent: RESPOND");
    import(&mut store, &request);
    // Imports after it merge the full-text index's segments, freeing the pages of the old
    // ones, which list its words.
    let envelopes: Vec<&str> = history.split_inclusive("[[END]]\n").collect();
    for part in envelopes.chunks(300) {
        import(&mut store, &part.concat());
    }
    import(&mut store, &answer);
    assert_eq!(store.search("Quillfeatherword", 10).unwrap().len(), 2);
    store
        .erase(&EraseTarget::Thread(v[0].clone()))
        .unwrap()
        .unwrap();
    drop(store);
    let bytes = all_bytes(&db.path);
    for word in ["Quillfeatherword", "quillfeatherword", "Xylophonectxword"] {
        assert!(
            !contains(&bytes, word),
            "`{word}` is still in the database files"
        );
    }
    assert_consistent(&db.path);
}

#[test]
fn erasing_a_message_keeps_its_replies_and_recounts_the_thread() {
    let db = Db::new();
    let mut store = Store::open(&db.path).unwrap();
    let v = ids(3);
    import(&mut store, &env(&v[0], None, &v[0], "root"));
    import(
        &mut store,
        &env(&v[0], Some(&v[0]), &v[1], "Middlewordsecret"),
    );
    import(&mut store, &env(&v[0], Some(&v[1]), &v[2], "leaf"));
    let done = store
        .erase(&EraseTarget::Message(v[1].clone()))
        .unwrap()
        .unwrap();
    assert_eq!(done.messages, 1);
    assert_eq!(done.threads, 0);
    assert_eq!(done.orphaned_replies, 1);
    let t = store.thread(&v[0]).unwrap().unwrap();
    let left: Vec<&str> = t.messages.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(left, [v[0].as_str(), v[2].as_str()]);
    let summary = store.threads(10).unwrap();
    assert_eq!(summary[0].message_count, 2);
    assert!(store.message(&v[1]).unwrap().is_none());
    drop(store);
    assert!(!contains(&all_bytes(&db.path), "Middlewordsecret"));
    assert_consistent(&db.path);
}

#[test]
fn erasing_the_last_message_removes_the_thread_and_unknown_ids_change_nothing() {
    let db = Db::new();
    let mut store = Store::open(&db.path).unwrap();
    let v = ids(1);
    import(&mut store, &env(&v[0], None, &v[0], "alone"));
    assert_eq!(
        store.erase(&EraseTarget::Message("01NOPE".into())).unwrap(),
        None
    );
    assert_eq!(
        store.erase(&EraseTarget::Thread("01NOPE".into())).unwrap(),
        None
    );
    let done = store
        .erase(&EraseTarget::Message(v[0].clone()))
        .unwrap()
        .unwrap();
    assert_eq!(done.threads, 1);
    assert!(store.threads(10).unwrap().is_empty());
    assert_consistent(&db.path);
}

#[test]
fn unused_pastes_go_and_pastes_with_messages_stay() {
    let db = Db::new();
    let mut store = Store::open(&db.path).unwrap();
    let v = ids(1);
    import(
        &mut store,
        "Prose with no envelope at all: Nothingburgerword.",
    );
    import(&mut store, &env(&v[0], None, &v[0], "kept"));
    let done = store.erase(&EraseTarget::UnusedPastes).unwrap().unwrap();
    assert_eq!(done.pastes, 1);
    assert_eq!(done.messages, 0);
    assert_eq!(store.threads(10).unwrap().len(), 1);
    drop(store);
    let c = Connection::open(&db.path).unwrap();
    let pastes: i64 = c
        .query_row("SELECT count(*) FROM pastes", [], |r| r.get(0))
        .unwrap();
    assert_eq!(pastes, 1);
    drop(c);
    assert!(!contains(&all_bytes(&db.path), "Nothingburgerword"));
    assert_consistent(&db.path);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(24)
    ))]

    /// Threads of random shapes arriving in random pastes, then random erasures: the
    /// database stays consistent, and each plan says exactly what the erasure did.
    #[test]
    fn random_erasures_keep_the_database_consistent(
        shape in proptest::collection::vec((0usize..3, 0usize..4, 0usize..3), 1..14),
        erasures in proptest::collection::vec((any::<bool>(), 0usize..14), 1..6),
    ) {
        let db = Db::new();
        let mut store = Store::open(&db.path).unwrap();
        let v = ids(shape.len() + 3);
        let threads = [&v[shape.len()], &v[shape.len() + 1], &v[shape.len() + 2]];
        let mut made: Vec<(String, String)> = Vec::new();
        let mut paste = String::new();
        for (i, (thread, parent, cut)) in shape.iter().enumerate() {
            let thread = threads[*thread].clone();
            let parent = made
                .iter()
                .filter(|(_, t)| *t == thread)
                .nth(*parent)
                .map(|(m, _)| m.clone());
            paste.push_str(&env(&thread, parent.as_deref(), &v[i], &format!("word{i}")));
            made.push((v[i].clone(), thread));
            if *cut == 0 {
                import(&mut store, &paste);
                paste.clear();
            }
        }
        if !paste.is_empty() {
            import(&mut store, &paste);
        }
        for (thread, pick) in erasures {
            let target = if thread {
                EraseTarget::Thread(made[pick % made.len()].1.clone())
            } else {
                EraseTarget::Message(made[pick % made.len()].0.clone())
            };
            let plan = store.erase_plan(&target).unwrap();
            let done = store.erase(&target).unwrap();
            prop_assert_eq!(plan, done);
        }
        drop(store);
        assert_consistent(&db.path);
    }
}

/// A conflicting version and a fresh-id alias belong to their message: erasing the thread
/// leaves neither their text nor their ids behind.
#[test]
fn erasing_a_thread_takes_its_conflicting_versions_and_aliases() {
    let db = Db::new();
    let mut store = Store::open(&db.path).unwrap();
    let v = ids(2);
    import(
        &mut store,
        &env(&v[0], None, &v[0], "The first Quillowmarsh."),
    );
    // Same id, other text: kept beside the stored message as a conflicting version.
    import(
        &mut store,
        &env(&v[0], None, &v[0], "A rewritten Quillowmarsh."),
    );
    assert_eq!(store.version_count(&v[0]).unwrap(), 1);
    // An invalid id, imported fresh: the original is kept as an alias.
    let bad = "01HZX3NQ7YUUUU000000000000";
    store
        .import_reader_with(
            "<test>",
            &mut env(&v[0], Some(&v[0]), bad, "Quillowmarsh under a fresh id.").as_bytes(),
            &Options::default(),
            &mut |_| {},
            true,
        )
        .unwrap();
    assert!(store.resolve_alias(bad).unwrap().is_some());

    store.erase(&EraseTarget::Thread(v[0].clone())).unwrap();
    assert_eq!(store.version_count(&v[0]).unwrap(), 0);
    assert!(store.resolve_alias(bad).unwrap().is_none());
    drop(store);
    let bytes = all_bytes(&db.path);
    assert!(!contains(&bytes, "Quillowmarsh") && !contains(&bytes, "quillowmarsh"));
    assert!(!contains(&bytes, bad));
    assert_consistent(&db.path);
}
