//! The full-text index in its own file: made again when missing or another database's,
//! brought up to changes made without it, written while a large import goes on, and read
//! without being written.

use std::path::Path;

use rusqlite::Connection;

use super::*;
use crate::ids::IdGenerator;
use crate::protocol::Options;
use crate::store::Store;
use crate::synth::{TranscriptSpec, transcript};

fn envelope(thread: &str, message: &str, body: &str) -> String {
    format!(
        "[[CLAUDE→GEMINI v1]]\nuser: kalle\nsession: 2025-10-09T16Z a7f3d1\nthread: {thread}\n\
         message: {message}\ncontext: index\nintent: INFORM\nbody: |\n  {body}\nsig: none\n\
         [[END]]\n"
    )
}

/// A store at `path` holding one message for each body, in order; their ids.
fn store_with(path: &Path, bodies: &[&str]) -> (Store, Vec<String>) {
    let mut store = Store::open(path).unwrap();
    let ids = IdGenerator::new();
    let thread = ids.next_id();
    let mut made = Vec::new();
    for body in bodies {
        let id = ids.next_id();
        store
            .import_text("<test>", &envelope(&thread, &id, body), &Options::default())
            .unwrap();
        made.push(id);
    }
    (store, made)
}

/// Imports one more message into the thread of stored message `beside`; its id.
fn add_beside(store: &mut Store, beside: &str, body: &str) -> String {
    let thread = store.message(beside).unwrap().unwrap().thread;
    let id = IdGenerator::new().next_id();
    store
        .import_text("<test>", &envelope(&thread, &id, body), &Options::default())
        .unwrap();
    id
}

/// The messages a search for `word` finds.
fn found(store: &Store, word: &str) -> Vec<String> {
    let mut ids: Vec<String> = store
        .search(word, 50)
        .unwrap()
        .into_iter()
        .map(|h| h.message)
        .collect();
    ids.sort();
    ids
}

/// How many rows of the index file beside `db` hold `word` (read directly, so that what the
/// join with the messages leaves out still counts).
fn indexed(db: &Path, word: &str) -> i64 {
    let c = Connection::open(path_of(db)).unwrap();
    c.query_row(
        "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH ?1",
        [format!("\"{word}\"")],
        |r| r.get(0),
    )
    .unwrap()
}

#[test]
fn a_missing_index_is_made_again_from_the_messages() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db");
    let (store, ids) = store_with(&db, &["Periwinkle harbour.", "Otherword only."]);
    assert_eq!(found(&store, "periwinkle"), vec![ids[0].clone()]);
    drop(store);
    std::fs::remove_file(path_of(&db)).unwrap();

    let store = Store::open(&db).unwrap();
    assert_eq!(found(&store, "periwinkle"), vec![ids[0].clone()]);
    assert_eq!(found(&store, "otherword"), vec![ids[1].clone()]);
    assert_eq!(indexed(&db, "harbour"), 1);
}

#[test]
fn a_small_import_is_indexed_at_the_next_search_or_as_the_store_closes() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db");
    let (mut store, ids) = store_with(&db, &["Firstsmallword here."]);
    assert!(!path_of(&db).exists(), "nothing indexed at the import");
    assert_eq!(found(&store, "firstsmallword"), ids);

    let next = add_beside(&mut store, &ids[0], "Secondsmallword here.");
    assert_eq!(indexed(&db, "secondsmallword"), 0, "not at the import");
    drop(store);
    assert_eq!(indexed(&db, "secondsmallword"), 1, "as the store closed");

    // A reader that may not write the index finds it current, and reads its file.
    let store = Store::open_for_reading(&db).unwrap().unwrap();
    assert_eq!(store.searched().0, SCHEMA);
    assert_eq!(found(&store, "secondsmallword"), vec![next]);
}

#[test]
fn a_damaged_index_file_is_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db");
    let (store, ids) = store_with(&db, &["Scrambledword here."]);
    drop(store);
    std::fs::write(path_of(&db), vec![0x5a; 40_000]).unwrap();

    let store = Store::open(&db).unwrap();
    assert_eq!(found(&store, "scrambledword"), ids);
}

#[test]
fn without_a_file_for_the_index_the_store_searches_one_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db");
    // Something no index can be made in, under its name.
    std::fs::create_dir(path_of(&db)).unwrap();
    let (mut store, ids) = store_with(&db, &["Nofileword here."]);
    assert_eq!(store.searched().0, "temp");
    assert_eq!(found(&store, "nofileword"), ids);
    let next = add_beside(&mut store, &ids[0], "Laterword too.");
    assert_eq!(found(&store, "laterword"), vec![next]);
    assert!(store.search_index_check().unwrap());
}

#[test]
fn the_index_of_another_database_is_not_read_as_this_ones() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.db"), dir.path().join("b.db"));
    let (store_a, _) = store_with(&a, &["Amberline wording.", "Amberline twice."]);
    let (store_b, ids_b) = store_with(&b, &["Bluestone wording."]);
    drop((store_a, store_b));
    // The same message numbers, other texts: an index copied over another database's.
    std::fs::copy(path_of(&a), path_of(&b)).unwrap();

    let store = Store::open(&b).unwrap();
    assert!(found(&store, "amberline").is_empty());
    assert_eq!(indexed(&b, "amberline"), 0);
    assert_eq!(found(&store, "bluestone"), ids_b);
    assert_eq!(found(&store, "wording"), ids_b);
}

#[test]
fn changes_made_while_the_index_was_not_attached_reach_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db");
    let (store, ids) = store_with(
        &db,
        &[
            "Gonewordalpha leaves.",
            "Oldwordbeta changes.",
            "Lastwordgamma goes.",
        ],
    );
    drop(store);
    // Another program's hand on the database alone: the triggers note what it changes.
    let raw = Connection::open(&db).unwrap();
    raw.execute_batch(&format!(
        "DELETE FROM messages WHERE id = '{}';
         UPDATE messages SET body = 'Newworddelta came.' WHERE id = '{}';
         DELETE FROM messages WHERE id = '{}';",
        ids[0], ids[1], ids[2]
    ))
    .unwrap();
    drop(raw);
    assert_eq!(indexed(&db, "gonewordalpha"), 1, "not applied yet");

    let mut store = Store::open(&db).unwrap();
    assert_eq!(
        indexed(&db, "gonewordalpha"),
        1,
        "opening alone applies nothing"
    );
    for gone in ["gonewordalpha", "oldwordbeta", "lastwordgamma"] {
        assert!(found(&store, gone).is_empty(), "{gone}");
        assert_eq!(indexed(&db, gone), 0, "{gone}");
    }
    assert_eq!(found(&store, "newworddelta"), vec![ids[1].clone()]);

    // The newest message was removed: the next one stored takes its number, and the index
    // holds it under that number, with its own words only.
    let next = add_beside(&mut store, &ids[1], "Freshwordepsilon.");
    assert_eq!(found(&store, "freshwordepsilon"), vec![next]);
    assert_eq!(indexed(&db, "lastwordgamma"), 0);
    let changes: i64 = store
        .conn
        .query_row("SELECT count(*) FROM search_changes", [], |r| r.get(0))
        .unwrap();
    assert_eq!(changes, 0, "changes applied are forgotten");
}

#[test]
fn a_large_import_is_indexed_while_it_is_stored() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db");
    let mut store = Store::open(&db).unwrap();
    let text = transcript(&TranscriptSpec {
        envelopes: 6000,
        threads: 60,
        seed: 5,
        mangled_percent: 0,
    });
    // Watches the index's file from another connection while the import runs.
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watch = {
        let (done, file) = (done.clone(), path_of(&db));
        std::thread::spawn(move || {
            let c = Connection::open(file).unwrap();
            let mut seen = Vec::new();
            while !done.load(std::sync::atomic::Ordering::Acquire) {
                let through: Option<i64> = c
                    .query_row("SELECT through_seq FROM search_state", [], |r| r.get(0))
                    .ok();
                seen.extend(through.filter(|t| seen.last() != Some(t)));
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            seen
        })
    };
    let report = store
        .import_text("<test>", &text, &Options::default())
        .unwrap();
    done.store(true, std::sync::atomic::Ordering::Release);
    let seen = watch.join().unwrap();
    let stored = report.items.len() as i64;
    assert!(stored >= 5800, "{stored}");
    let newest: i64 = store
        .conn
        .query_row("SELECT max(seq) FROM messages", [], |r| r.get(0))
        .unwrap();
    assert!(
        seen.iter().any(|&t| t > 0 && t < newest),
        "pieces were indexed before the import ended: {seen:?} of {newest}"
    );
    let state: (i64, i64) = store
        .searched().1
        .query_row(
            "SELECT through_seq, (SELECT count(*) FROM search.messages_fts) FROM search.search_state",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let messages: i64 = store
        .conn
        .query_row("SELECT count(*) FROM messages", [], |r| r.get(0))
        .unwrap();
    assert_eq!(state, (newest, messages), "every message indexed once");
}

#[test]
fn a_database_read_without_its_index_searches_one_made_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db");
    let (store, ids) = store_with(&db, &["Readonlyword here."]);
    drop(store);
    std::fs::remove_file(path_of(&db)).unwrap();

    let store = Store::open_for_reading(&db).unwrap().unwrap();
    assert!(
        store.index.get().is_none(),
        "looked for at the first search only"
    );
    assert_eq!(found(&store, "readonlyword"), ids);
    assert_eq!(store.searched().0, "temp");
    assert!(!path_of(&db).exists(), "reading makes no file");

    // With its index there and current (made again by a search), that one is read.
    drop(store);
    let store = Store::open(&db).unwrap();
    assert!(
        !path_of(&db).exists(),
        "opening alone leaves the index alone"
    );
    assert_eq!(found(&store, "readonlyword"), ids);
    drop(store);
    let store = Store::open_for_reading(&db).unwrap().unwrap();
    assert_eq!(store.searched().0, SCHEMA);
    assert_eq!(found(&store, "readonlyword"), ids);
}

#[test]
fn an_older_database_read_without_migrating_searches_the_index_inside_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db");
    let (store, ids) = store_with(&db, &["Olderschemaword here.", "Another one."]);
    drop(store);
    std::fs::remove_file(path_of(&db)).unwrap();
    // As version 11 kept it: the index inside, kept by triggers.
    let raw = Connection::open(&db).unwrap();
    raw.execute_batch(&format!(
        "DROP TRIGGER search_change_delete; DROP TRIGGER search_change_update;
         DROP TABLE search_changes; DROP TABLE search_source;
         CREATE VIRTUAL TABLE messages_fts USING fts5(
             body, context, participants,
             content = 'messages', content_rowid = 'seq', tokenize = 'unicode61'
         );
         INSERT INTO messages_fts(messages_fts) VALUES ('rebuild');
         PRAGMA user_version = {};",
        crate::store::schema::SEARCH_APART - 1
    ))
    .unwrap();
    drop(raw);

    let store = Store::open_for_reading(&db).unwrap().unwrap();
    assert_eq!(store.searched().0, "main");
    let hits = store.search("olderschemaword", 5).unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].message, ids[0]);
    assert_eq!(hits[0].snippet, "[Olderschemaword] here.");
}
