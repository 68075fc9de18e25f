//! The migrations to texts kept once (`texts`, version 6) and to leaner rows (version 7): a
//! database written with the schema before them reads back every message the same after.

use rusqlite::{Connection, params};

use super::*;
use crate::protocol::{Envelope, Options};
use crate::store::{Store, StoredMessage};
use crate::synth::{TranscriptSpec, transcript};

/// `headers`, `raw`, `raw_prefix`, `raw_suffix` of a message row.
type TextColumns = (Option<String>, Option<String>, Option<i64>, Option<i64>);

/// The ids of every message of `store`, in arrival order.
fn message_ids(store: &Store) -> Vec<String> {
    store
        .conn
        .prepare("SELECT id FROM messages ORDER BY seq")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// Every message of `store`, in arrival order.
fn messages(store: &Store) -> Vec<StoredMessage> {
    let ids = message_ids(store);
    ids.iter()
        .map(|id| store.message(id).unwrap().unwrap())
        .collect()
}

/// The `headers` column as the schema before `texts` wrote it: every value.
fn full_headers(env: &Envelope) -> String {
    let headers: Vec<[&str; 2]> = env
        .headers
        .iter()
        .map(|h| [h.key.as_str(), h.value.as_str()])
        .collect();
    serde_json::to_string(&headers).unwrap()
}

/// What searching `store` finds for a few words, as (message, snippet) pairs.
fn searches(store: &Store) -> Vec<Vec<(String, String)>> {
    ["the", "backfill", "zusammenfassung", "session", "review"]
        .iter()
        .map(|q| {
            store
                .search(q, 50)
                .unwrap()
                .into_iter()
                .map(|h| (h.message, h.snippet))
                .collect()
        })
        .collect()
}

/// A database at `version` (5 or 6) holding what `new` holds, written as that schema wrote it:
/// for 5, full headers, the canonical text always, the received one when it differs; for 6,
/// that database migrated by version 6's own step (which is what version 6 wrote on import:
/// JSON headers with the thread's value, `participants` and `updated_at` stored).
fn old_copy_at(new: &Store, path: &std::path::Path, version: i64) {
    old_copy(new, path);
    if version == TEXTS_VERSION {
        let old = Connection::open(path).unwrap();
        let tx =
            rusqlite::Transaction::new_unchecked(&old, rusqlite::TransactionBehavior::Immediate)
                .unwrap();
        tx.execute_batch(MIGRATIONS[TEXTS_VERSION as usize - 1])
            .unwrap();
        after(TEXTS_VERSION, &tx).unwrap();
        tx.pragma_update(None, "user_version", TEXTS_VERSION)
            .unwrap();
        tx.commit().unwrap();
    }
}

/// A database at version [`TEXTS_VERSION`] − 1 holding what `new` holds, written as that
/// schema wrote it: full headers, the canonical text always, the received one when it differs.
fn old_copy(new: &Store, path: &std::path::Path) {
    let old = Connection::open(path).unwrap();
    for sql in &MIGRATIONS[..TEXTS_VERSION as usize - 1] {
        old.execute_batch(sql).unwrap();
    }
    old.pragma_update(None, "user_version", TEXTS_VERSION - 1)
        .unwrap();
    old.execute("ATTACH ?1 AS new", [new.path().to_string_lossy()])
        .unwrap();
    let columns = "seq, id, thread_id, parent_id, paste_id, direction, status, sender, recipient,
        participants, version, user, session, context, intent, intent_raw, body, sig, hash,
        meta, diagnostics, digest, ids_assigned, received_at, updated_at";
    // Older schemas stored `updated_at` always (a copy of `received_at` until a change).
    let values = columns.replace("updated_at", "coalesce(updated_at, received_at)");
    old.execute_batch(&format!(
        "INSERT INTO pastes SELECT * FROM new.pastes;
         INSERT INTO threads SELECT id, context, participants, message_count, created_at,
            last_activity, seen_at FROM new.threads;
         INSERT INTO messages ({columns}, headers, canonical)
            SELECT {values}, '', '' FROM new.messages;
         INSERT INTO delivery (seq, thread_id, sent_at, recipient_key, received, to_me,
            relayed_at, relay_method, answered_at, awaiting_from, awaiting_needed, missing_parent)
            SELECT seq, thread_id, sent_at, recipient_key, received, to_me, relayed_at,
            relay_method, answered_at, awaiting_from, awaiting_needed, missing_parent
            FROM new.delivery;
         INSERT INTO signatures SELECT * FROM new.signatures;
         INSERT INTO messages_fts(messages_fts) VALUES ('rebuild');"
    ))
    .unwrap();
    // Pieces were stored as they are.
    let pieces: Vec<(i64, i64)> = old
        .prepare("SELECT paste_id, seq FROM new.paste_pieces")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    for (paste, seq) in pieces {
        let bytes = crate::store::pieces::read(&new.conn, paste, seq).unwrap();
        old.execute(
            "INSERT INTO paste_pieces (paste_id, seq, bytes) VALUES (?1, ?2, ?3)",
            params![paste, seq, bytes],
        )
        .unwrap();
    }
    for m in messages(new) {
        old.execute(
            "UPDATE messages SET headers = ?2, canonical = ?3, raw = ?4 WHERE id = ?1",
            params![
                m.id,
                full_headers(&m.envelope),
                m.canonical,
                Some(&m.raw).filter(|r| **r != m.canonical)
            ],
        )
        .unwrap();
    }
    old.execute_batch("DETACH new").unwrap();
}

/// A reply imported before the message it answers (so it moves to that message's thread),
/// in two imports.
fn moved_reply() -> [String; 2] {
    let ids = crate::ids::IdGenerator::default();
    let (thread, question, answer) = (ids.next_id(), ids.next_id(), ids.next_id());
    [
        format!(
            "[[CHATGPT→CLAUDE v1]]\nuser: brother\nsession: 2025-10-09T17Z 0b0b0b\n\
             parent: {question}\nmessage: {answer}\nintent: RESPOND\nbody: |\n  answer\n\
             sig: none\n[[END]]\n"
        ),
        format!(
            "[[CLAUDE→CHATGPT v1]]\nuser: kalle\nsession: 2025-10-09T17Z 0a0a0a\n\
             thread: {thread}\nmessage: {question}\nintent: REQUEST\nbody: |\n  question\n\
             sig: none\n[[END]]\n"
        ),
    ]
}

/// What the thread list, the queue and the ledger say, as text. A POLL's relays per target
/// are left out: they came with version 15, and a database before it has none to carry over.
fn ledger(store: &Store) -> (String, String, Vec<String>) {
    let ids = message_ids(store);
    (
        format!("{:?}", store.thread_rows("", 1000).unwrap()),
        format!("{:?}", store.queue(1000).unwrap()),
        ids.iter()
            .map(|id| {
                let mut d = store.delivery(id).unwrap();
                if let Some(d) = d.as_mut() {
                    d.targets.iter_mut().for_each(|t| t.relayed = None);
                }
                format!("{d:?}")
            })
            .collect(),
    )
}

#[test]
fn a_database_before_texts_kept_once_or_leaner_rows_reads_back_the_same_after_migrating() {
    let dir = tempfile::tempdir().unwrap();
    let new_path = dir.path().join("new.db");
    let mut new = Store::open(&new_path).unwrap();
    let spec = TranscriptSpec {
        envelopes: 400,
        threads: 20,
        seed: 11,
        mangled_percent: 40,
    };
    new.import_text("test", &transcript(&spec), &Options::default())
        .unwrap();
    for text in moved_reply() {
        new.import_text("test", &text, &Options::default()).unwrap();
    }
    let expected = messages(&new);
    assert_eq!(expected.len(), 402);
    new.mark_relayed(&expected[3].id, "test").unwrap();
    // The synthetic history has every kind: received texts that differ from the canonical
    // one (v1.0 envelopes get ids, mangled ones are repaired) and that do not, and a reply
    // whose `thread` header is not its thread any more.
    assert!(expected.iter().any(|m| m.raw != m.canonical));
    assert!(expected.iter().any(|m| m.raw == m.canonical));
    let moved = &expected[400];
    assert_ne!(moved.envelope.thread(), Some(moved.thread.as_str()));
    let found = searches(&new);
    assert!(found.iter().any(|hits| !hits.is_empty()));
    let listed = ledger(&new);

    for from in [TEXTS_VERSION - 1, TEXTS_VERSION] {
        let old_path = dir.path().join(format!("old-{from}.db"));
        old_copy_at(&new, &old_path, from);
        let migrated = Store::open(&old_path).unwrap();
        let version: i64 = migrated
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(version, SCHEMA_VERSION);
        let got = messages(&migrated);
        assert_eq!(got.len(), expected.len());
        for (g, e) in got.iter().zip(&expected) {
            assert_eq!(g.envelope, e.envelope, "{}", e.id);
            assert_eq!(g.canonical, e.canonical, "{}", e.id);
            assert_eq!(g.raw, e.raw, "{}", e.id);
            assert_eq!(
                (&g.thread, &g.parent, &g.status, &g.diagnostics),
                (&e.thread, &e.parent, &e.status, &e.diagnostics)
            );
        }
        assert_eq!(searches(&migrated), found, "from version {from}");
        assert_eq!(ledger(&migrated), listed, "from version {from}");
        check_migrated(&migrated, &new);
    }
}

/// What a migrated database holds beyond the messages: the paste, and rows in the form a
/// fresh import writes.
fn check_migrated(migrated: &Store, new: &Store) {
    // The input as received reads back the same, and is kept compressed.
    let paste: i64 = migrated
        .conn
        .query_row("SELECT min(id) FROM pastes", [], |r| r.get(0))
        .unwrap();
    assert_eq!(
        migrated.paste_text(paste).unwrap(),
        new.paste_text(paste).unwrap()
    );
    // Every piece compression makes smaller; a short one of random ids may not get smaller,
    // and is kept as it is.
    let plain: Vec<(i64, i64)> = migrated
        .conn
        .prepare("SELECT paste_id, seq FROM paste_pieces WHERE zstd = 0")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    for (paste, seq) in plain {
        let bytes = crate::store::pieces::read(&migrated.conn, paste, seq).unwrap();
        assert!(
            !crate::store::pieces::pack(&bytes).1,
            "paste {paste} piece {seq} ({} bytes) is kept uncompressed",
            bytes.len()
        );
    }
    let compressed: i64 = migrated
        .conn
        .query_row(
            "SELECT count(*) FROM paste_pieces WHERE zstd = 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(compressed > 0);
    // Stored once: no canonical text is kept, and the old column is gone.
    let kept: i64 = migrated
        .conn
        .query_row(
            "SELECT count(*) FROM messages WHERE canonical IS NOT NULL",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(kept, 0);
    assert!(
        migrated
            .conn
            .prepare("SELECT canonical_full FROM messages")
            .is_err()
    );
    // And the new rows are what an import into the new schema writes.
    let same = |sql: &str| -> Vec<TextColumns> {
        let read = |s: &Store| {
            s.conn
                .prepare(sql)
                .unwrap()
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
                .unwrap()
                .collect::<Result<Vec<_>, _>>()
                .unwrap()
        };
        assert_eq!(read(migrated), read(new));
        read(new)
    };
    same("SELECT headers, raw, raw_prefix, raw_suffix FROM messages ORDER BY seq");
    same("SELECT participants, meta, NULL, NULL FROM messages ORDER BY seq");
    same("SELECT updated_at, diagnostics, NULL, NULL FROM messages ORDER BY seq");
    // The schema is the one a fresh database gets (columns in another order aside).
    let schema = |s: &Store| -> Vec<String> {
        let mut rows: Vec<String> = s
            .conn
            .prepare(
                "SELECT type || ' ' || name || ' ' || coalesce(sql, '') FROM sqlite_schema
                 WHERE name NOT IN ('messages') ORDER BY name",
            )
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        rows.extend(
            s.conn
                .prepare(
                    "SELECT name || ' ' || type || ' ' || \"notnull\" || ' ' || hidden
                     FROM pragma_table_xinfo('messages') ORDER BY name",
                )
                .unwrap()
                .query_map([], |r| r.get(0))
                .unwrap()
                .collect::<Result<Vec<String>, _>>()
                .unwrap(),
        );
        rows
    };
    assert_eq!(schema(migrated), schema(new));
}

#[test]
fn a_canonical_text_its_columns_do_not_render_to_is_kept_whole() {
    let dir = tempfile::tempdir().unwrap();
    let (new_path, old_path) = (dir.path().join("new.db"), dir.path().join("old.db"));
    let mut new = Store::open(&new_path).unwrap();
    let spec = TranscriptSpec {
        envelopes: 5,
        threads: 1,
        seed: 3,
        mangled_percent: 0,
    };
    new.import_text("test", &transcript(&spec), &Options::default())
        .unwrap();
    old_copy(&new, &old_path);
    // A canonical text edited by hand (or written by some older binary), and a row whose
    // headers cannot be read: both keep their texts as they are.
    let old = Connection::open(&old_path).unwrap();
    old.execute_batch(
        "UPDATE messages SET canonical = canonical || 'x', raw = 'edited' WHERE seq = 1;
         UPDATE messages SET headers = 'not json' WHERE seq = 2;",
    )
    .unwrap();
    let (edited, damaged): (String, String) = old
        .query_row(
            "SELECT (SELECT canonical FROM messages WHERE seq = 1),
                    (SELECT id FROM messages WHERE seq = 2)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    drop(old);
    let migrated = Store::open(&old_path).unwrap();
    let first: String = migrated
        .conn
        .query_row("SELECT id FROM messages WHERE seq = 1", [], |r| r.get(0))
        .unwrap();
    let m = migrated.message(&first).unwrap().unwrap();
    assert_eq!(m.canonical, edited);
    assert_eq!(m.raw, "edited");
    assert!(matches!(
        migrated.message(&damaged),
        Err(crate::store::StoreError::Damaged { .. })
    ));
}

/// Version 15 adds the relays per target: a database at version 14 — a POLL still to relay,
/// one relayed whole as 14 recorded it — reads its ledger the same after migrating, and
/// relays the first POLL per target from then on; one set back to 14 by hand, which has the
/// table already, keeps its rows.
#[test]
fn a_database_before_relays_per_target_migrates_with_its_ledger() {
    let dir = tempfile::tempdir().unwrap();
    let new_path = dir.path().join("new.db");
    let mut new = Store::open(&new_path).unwrap();
    let ids = crate::ids::IdGenerator::default();
    let (thread, waiting, relayed) = (ids.next_id(), ids.next_id(), ids.next_id());
    let poll = |id: &str| {
        format!(
            "[[CLAUDE→POLL v1]]\nuser: kalle\nthread: {thread}\nmessage: {id}\nintent: POLL\n\
             meta: routing\nTargets: [\"chatgpt://t/x\", \"gemini://g\"]\nbody: |\n  A or B?\n\
             sig: none\n[[END]]\n"
        )
    };
    for id in [&waiting, &relayed] {
        new.import_text("test", &poll(id), &Options::default())
            .unwrap();
    }
    new.mark_relayed(&relayed, "OSC 52").unwrap();
    let listed = ledger(&new);

    let old_path = dir.path().join("old.db");
    let old = Connection::open(&old_path).unwrap();
    migrate_to(&old, PER_TARGET - 1);
    crate::store::test_support::copy_rows(
        &old,
        &new_path,
        &["pastes", "paste_pieces", "threads", "messages"],
    );
    assert!(old.prepare("SELECT 1 FROM message_relays").is_err());
    drop(old);

    let mut migrated = Store::open(&old_path).unwrap();
    assert_eq!(migrated.version, SCHEMA_VERSION);
    assert_eq!(ledger(&migrated), listed);
    // The one relayed whole stays relayed; the other goes to each target in turn.
    let d = migrated.delivery(&relayed).unwrap().unwrap();
    assert_eq!(d.relayed.map(|r| r.1).as_deref(), Some("OSC 52"));
    assert!(d.targets.iter().all(|t| t.relayed.is_none()));
    migrated
        .mark_relayed_to(&waiting, "chatgpt://t/x", "OSC 52")
        .unwrap();
    assert_eq!(
        migrated
            .delivery(&waiting)
            .unwrap()
            .unwrap()
            .state
            .as_deref(),
        Some("to_relay")
    );
    drop(migrated);

    // Set back by hand: the migration runs again over the table it made, which keeps its rows.
    let raw = Connection::open(&old_path).unwrap();
    raw.pragma_update(None, "user_version", PER_TARGET - 1)
        .unwrap();
    drop(raw);
    let again = Store::open(&old_path).unwrap();
    assert_eq!(again.version, SCHEMA_VERSION);
    let targets = again.delivery(&waiting).unwrap().unwrap().targets;
    assert_eq!(
        targets
            .iter()
            .map(|t| (t.target.as_str(), t.relayed.is_some()))
            .collect::<Vec<_>>(),
        [("chatgpt://t/x", true), ("gemini://g", false)]
    );
}

/// Which intents ask for an answer reaches the schema from `Intent::expects_response` alone:
/// the trigger names exactly those, and a database whose trigger a build with another list
/// wrote (here: one leaving out HANDOFF) is brought to this build's rule, rows included, as it
/// is opened — no migration written by hand.
#[test]
fn the_queue_asks_the_intents_that_ask_and_follows_them_when_they_change() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rule.db");
    let mut store = Store::open(&path).unwrap();
    let text = include_str!("../../../assets/examples/v11-request.crosstalk");
    store.import_text("t", text, &Options::default()).unwrap();
    let trigger = |conn: &Connection| -> String {
        conn.query_row(
            "SELECT sql FROM sqlite_master WHERE name = 'messages_ledger_state'",
            [],
            |r| r.get(0),
        )
        .unwrap()
    };
    let sql = trigger(&store.conn);
    for i in Intent::CORE {
        let named = sql.contains(&format!("'{}'", i.as_str()));
        assert_eq!(named, i.expects_response(), "{i} in {sql}");
    }
    drop(store);

    let older = ledger_state().replace(", 'HANDOFF'", "");
    assert_ne!(older, ledger_state());
    let raw = Connection::open(&path).unwrap();
    raw.execute_batch(&format!(
        "DROP TRIGGER messages_ledger_state;
         CREATE TRIGGER messages_ledger_state
         AFTER UPDATE OF direction, to_me, relayed_at, answered_at, awaiting_from, settled_at
         ON messages
         BEGIN
             UPDATE messages SET ledger_state = {older}
             WHERE seq = new.seq AND ledger_state IS NOT {older};
         END;
         UPDATE messages SET intent = 'HANDOFF', direction = 'received', to_me = 1,
             answered_at = NULL, settled_at = NULL, awaiting_from = NULL;"
    ))
    .unwrap();
    let state = |conn: &Connection| -> Option<String> {
        conn.query_row("SELECT ledger_state FROM messages", [], |r| r.get(0))
            .unwrap()
    };
    assert_eq!(state(&raw), None, "the older rule did not take");
    drop(raw);

    let store = Store::open(&path).unwrap();
    assert_eq!(state(&store.conn).as_deref(), Some("to_me"));
    assert!(trigger(&store.conn).contains(&ledger_state()));
}
