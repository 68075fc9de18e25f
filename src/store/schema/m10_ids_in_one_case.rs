//! Ids stored in one case (schema version 10).
//!
//! Ids are read in either case (docs/PROTOCOL.md §5), so the store keeps each in the form
//! `protocol::id::key` gives it (ULIDs upper case, UUIDs lower case) in every id column, and
//! looks ids up in that form: the same id written in another case is the same message, the
//! same thread and the same parent. The envelope's text keeps its own spelling (a signature
//! covers it): a header whose value differs from its column's is stored with its value (see
//! `texts`).
//!
//! A database written before kept ids as written, so an id in lower case made a thread, a
//! parent and a message of its own. [`normalize`] brings such rows to the stored form: their
//! threads merge with the thread of the same id, replies find their parent. A message whose
//! id is also stored in the other case becomes a conflicting version of that message (its text
//! is kept), as importing it now would make it: one id names one message. A draft whose id
//! another draft has keeps its id as written.

use rusqlite::{OptionalExtension, Transaction, params};

use crate::protocol::id::key;
use crate::store::StoreError;
use crate::store::query::{MESSAGE_COLUMNS, message_from_row};
use crate::store::texts::{HeaderColumns, encode_headers, parse_headers};

/// SQL that is true when column `c` may hold an id not in its stored form: a ULID's length with
/// a lower-case letter, or a UUID's with an upper-case one (`GLOB` is case-sensitive). Rows it
/// selects are looked at in full by [`key`].
fn may_differ(c: &str) -> String {
    format!(
        "((length({c}) = 26 AND {c} GLOB '*[a-z]*') OR (length({c}) = 36 AND {c} GLOB '*[A-F]*'))"
    )
}

/// `Some(new)` when `id` is stored in another form than its key.
fn rekeyed(id: &str) -> Option<String> {
    let k = key(id);
    (k != id).then(|| k.into_owned())
}

/// A message row whose ids may change, with what its `headers` column is read against.
struct Row {
    seq: i64,
    id: String,
    thread: String,
    parent: Option<String>,
    held: [Option<String>; 4],
    headers: String,
}

/// Brings every id column to the stored form; see the module's comment.
pub(super) fn normalize(tx: &Transaction) -> Result<(), StoreError> {
    // The id columns are keys of other tables' references: the checks wait for the commit.
    tx.execute_batch("PRAGMA defer_foreign_keys = ON")?;
    let rows = changing_messages(tx)?;
    for row in &rows {
        rekey_message(tx, row)?;
    }
    let threads: Vec<String> = tx
        .prepare(&format!(
            "SELECT id FROM threads WHERE {}",
            may_differ("id")
        ))?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    rekey_drafts(tx)?;
    for old in threads {
        let Some(new) = rekeyed(&old) else { continue };
        let merged: bool = tx
            .query_row("SELECT 1 FROM threads WHERE id = ?1", [&new], |_| Ok(true))
            .optional()?
            .unwrap_or(false);
        if merged {
            // Its messages went to the thread of the same id above: counts and participants
            // are taken again, and the emptied thread goes.
            crate::store::erase::recount(tx, &new)?;
            crate::store::erase::recount(tx, &old)?;
        } else {
            tx.execute("UPDATE threads SET id = ?2 WHERE id = ?1", [&old, &new])?;
        }
    }
    // Replies that named their parent in another case had it all along.
    tx.execute_batch(
        "UPDATE messages SET missing_parent = 0
         WHERE missing_parent = 1 AND parent_id IN (SELECT id FROM messages)",
    )?;
    Ok(())
}

fn changing_messages(tx: &Transaction) -> Result<Vec<Row>, StoreError> {
    let sql = format!(
        "SELECT seq, id, thread_id, parent_id, user, session, context, intent_raw, headers
         FROM messages WHERE {} OR {} OR {} ORDER BY seq",
        may_differ("id"),
        may_differ("thread_id"),
        may_differ("parent_id")
    );
    let mut stmt = tx.prepare(&sql)?;
    let rows = stmt.query_map([], |r| {
        Ok(Row {
            seq: r.get(0)?,
            id: r.get(1)?,
            thread: r.get(2)?,
            parent: r.get(3)?,
            held: [r.get(4)?, r.get(5)?, r.get(6)?, r.get(7)?],
            headers: r.get(8)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

fn rekey_message(tx: &Transaction, row: &Row) -> Result<(), StoreError> {
    let mut id = row.id.clone();
    if let Some(new) = rekeyed(&row.id) {
        let taken: Option<i64> = tx
            .query_row("SELECT seq FROM messages WHERE id = ?1", [&new], |r| {
                r.get(0)
            })
            .optional()?;
        if taken.is_some() {
            return keep_as_version(tx, row, &new);
        }
        id = new;
    }
    let thread = key(&row.thread).into_owned();
    let parent = row.parent.as_deref().map(|p| key(p).into_owned());
    if id == row.id && thread == row.thread && parent == row.parent {
        return Ok(());
    }
    let [user, session, context, intent] = row.held.each_ref().map(Option::as_deref);
    let mut cols = HeaderColumns {
        message: Some(&row.id),
        thread: Some(&row.thread),
        parent: row.parent.as_deref(),
        user,
        session,
        context,
        intent,
    };
    let headers = parse_headers(&row.headers, &cols).map_err(|why| StoreError::Damaged {
        id: row.id.clone(),
        why: format!("its stored headers cannot be read: {why}"),
    })?;
    cols.message = Some(&id);
    cols.thread = Some(&thread);
    cols.parent = parent.as_deref();
    tx.execute(
        "UPDATE messages SET id = ?2, thread_id = ?3, parent_id = ?4, headers = ?5
         WHERE seq = ?1",
        params![row.seq, id, thread, parent, encode_headers(&headers, &cols)],
    )?;
    if id != row.id {
        tx.execute(
            "UPDATE message_versions SET message_id = ?2 WHERE message_id = ?1",
            [&row.id, &id],
        )?;
    }
    // A thread first seen under this spelling gets its row under the stored one below.
    Ok(())
}

/// A message stored under the same id as `key` written in another case: one id names one
/// message now, so it becomes a conflicting version of the message stored under `key` (its
/// text kept as received, `V` shows it), as importing it now would make it, and its row goes.
/// Nothing of its text is lost; what the ledger said of it alone (relayed, answered) is.
fn keep_as_version(tx: &Transaction, row: &Row, key: &str) -> Result<(), StoreError> {
    use sha2::{Digest, Sha256};
    let sql = format!("SELECT {MESSAGE_COLUMNS} FROM messages WHERE seq = ?1");
    let twin = tx.query_row(&sql, [row.seq], message_from_row)??;
    let sql = format!("SELECT {MESSAGE_COLUMNS} FROM messages WHERE id = ?1");
    let kept = tx.query_row(&sql, [key], message_from_row)??;
    let (paste, diagnostics): (Option<i64>, String) = tx.query_row(
        "SELECT paste_id, diagnostics FROM messages WHERE seq = ?1",
        [row.seq],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    if twin.canonical != kept.canonical {
        let digest = crate::store::import::hex(&Sha256::digest(twin.canonical.as_bytes()));
        tx.execute(
            "INSERT OR IGNORE INTO message_versions
                (message_id, paste_id, raw, canonical, digest, diagnostics, received_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                key,
                paste,
                Some(&twin.raw).filter(|r| **r != twin.canonical),
                twin.canonical,
                digest,
                diagnostics,
                twin.received_at
            ],
        )?;
    }
    // Its own versions go with it to the message it joins (one of a text already there is
    // that text again).
    tx.execute(
        "UPDATE OR IGNORE message_versions SET message_id = ?2 WHERE message_id = ?1",
        [&row.id, key],
    )?;
    tx.execute(
        "DELETE FROM message_versions WHERE message_id = ?1",
        [&row.id],
    )?;
    tx.execute("DELETE FROM messages WHERE seq = ?1", [row.seq])?;
    crate::store::erase::recount(tx, &row.thread)?;
    Ok(())
}

/// Drafts' threads, parents and ids (a draft's id stays as written if another draft has it).
fn rekey_drafts(tx: &Transaction) -> Result<(), StoreError> {
    let rows: Vec<(String, String, Option<String>)> = tx
        .prepare(&format!(
            "SELECT id, thread_id, parent_id FROM drafts WHERE {} OR {} OR {}",
            may_differ("id"),
            may_differ("thread_id"),
            may_differ("parent_id")
        ))?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<Result<_, _>>()?;
    for (id, thread, parent) in rows {
        let parent = parent.as_deref().map(|p| key(p).into_owned());
        tx.execute(
            "UPDATE drafts SET thread_id = ?2, parent_id = ?3 WHERE id = ?1",
            params![id, key(&thread), parent],
        )?;
        if let Some(new) = rekeyed(&id) {
            tx.execute(
                "UPDATE drafts SET id = ?2 WHERE id = ?1
                 AND NOT EXISTS (SELECT 1 FROM drafts WHERE id = ?2)",
                [&id, &new],
            )?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{self, Options};
    use crate::store::{Outcome, Store};

    const THREAD: &str = "01J9J3D3M6A4M3WQX8G1ZQ0S7K";
    const ASK: &str = "01J9J3D9C2V8M4P1R6S8T9V0V1";
    const ANSWER: &str = "01J9J3DBC4N7P2Q3R5S7T9V1V2";

    fn envelope(thread: &str, parent: Option<&str>, message: &str, body: &str) -> String {
        let parent = parent.map_or(String::new(), |p| format!("parent: {p}\n"));
        format!(
            "[[CLAUDE→CHATGPT v1.1]]\nthread: {thread}\n{parent}message: {message}\n\
             intent: REQUEST\nbody: |\n  {body}\nsig: none\n[[END]]\n"
        )
    }

    fn lower(s: &str) -> String {
        s.to_ascii_lowercase()
    }

    fn outcome(store: &mut Store, text: &str) -> Outcome {
        let report = store.import_text("t", text, &Options::default()).unwrap();
        report.items[0].outcome
    }

    fn column(store: &Store, sql: &str, id: &str) -> i64 {
        store.conn.query_row(sql, [id], |r| r.get(0)).unwrap()
    }

    #[test]
    fn an_id_in_another_case_is_the_same_thread_parent_and_message() {
        let mut store = Store::open_in_memory().unwrap();
        let ask = envelope(THREAD, None, ASK, "Which port?");
        assert_eq!(outcome(&mut store, &ask), Outcome::Imported);
        let answer = envelope(&lower(THREAD), Some(&lower(ASK)), &lower(ANSWER), "8080.");
        assert_eq!(outcome(&mut store, &answer), Outcome::Imported);

        assert_eq!(store.thread_rows("", 10).unwrap().len(), 1);
        let stored = store
            .message(ANSWER)
            .unwrap()
            .expect("found by its stored id");
        assert_eq!(
            (stored.thread.as_str(), stored.parent.as_deref()),
            (THREAD, Some(ASK))
        );
        let missing = "SELECT missing_parent FROM messages WHERE id = ?1";
        assert_eq!(column(&store, missing, ANSWER), 0);
        // The text keeps its spelling, and the id is found however it is typed.
        assert_eq!(stored.envelope.message(), Some(lower(ANSWER).as_str()));
        assert_eq!(stored.raw, answer);
        assert!(store.message(&lower(ANSWER)).unwrap().is_some());

        // Imported again as written: a duplicate. With its ids in the other case: the same
        // message still (ids mean what they name, in either case), no conflicting version.
        assert_eq!(outcome(&mut store, &answer), Outcome::Duplicate);
        let ask_lower = envelope(&lower(THREAD), None, &lower(ASK), "Which port?");
        assert_eq!(outcome(&mut store, &ask_lower), Outcome::Duplicate);
        assert_eq!(store.version_count(ASK).unwrap(), 0);
        let ask_changed = envelope(&lower(THREAD), None, &lower(ASK), "Which host?");
        assert_eq!(outcome(&mut store, &ask_changed), Outcome::Conflict);
        assert_eq!(
            column(&store, "SELECT count(*) FROM messages WHERE ?1 = ?1", ""),
            2
        );
    }

    #[test]
    fn an_id_written_in_lower_case_keeps_its_signature() {
        let key = ed25519_dalek::SigningKey::from_bytes(&[3; 32]);
        let text = envelope(&lower(THREAD), None, &lower(ASK), "Signed.");
        let mut env = protocol::extract(&text, &Options::default()).envelopes[0]
            .envelope
            .clone();
        protocol::signature::sign_envelope(
            &mut env,
            &key,
            protocol::signature::SigFormat::Ed25519,
            "k1",
        );
        let signed = protocol::render(&env);
        let mut store = Store::open_in_memory().unwrap();
        assert_eq!(outcome(&mut store, &signed), Outcome::Imported);
        let stored = store.message(ASK).unwrap().unwrap();
        assert_eq!(stored.canonical, signed);
        let parsed = &protocol::extract(&stored.canonical, &Options::default()).envelopes[0];
        protocol::signature::verify_parsed(parsed, &stored.canonical, &key.verifying_key())
            .expect("the stored text is what was signed");
    }

    /// Makes `store` what a database before version 10 held: each id column as the envelope
    /// wrote it, a thread per spelling.
    fn as_written_before(store: &Store) {
        let conn = &store.conn;
        let ids: Vec<String> = (conn.prepare("SELECT id FROM messages").unwrap())
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        for id in ids {
            let m = store.message(&id).unwrap().unwrap();
            let e = &m.envelope;
            let (message, thread) = (e.message().unwrap(), e.thread().unwrap());
            let cols = HeaderColumns {
                message: Some(message),
                thread: Some(thread),
                parent: e.parent(),
                user: e.user(),
                session: e.session(),
                context: e.context(),
                intent: e.intent_raw(),
            };
            conn.execute(
                "INSERT OR IGNORE INTO threads (id, created_at, last_activity)
                 VALUES (?1, '2026-01-01', '2026-01-01')",
                [thread],
            )
            .unwrap();
            conn.execute(
                "UPDATE messages SET id = ?2, thread_id = ?3, parent_id = ?4, headers = ?5,
                     missing_parent = ?4 IS NOT NULL
                         AND ?4 NOT IN (SELECT id FROM messages WHERE id != ?1)
                 WHERE id = ?1",
                params![
                    id,
                    message,
                    thread,
                    e.parent(),
                    encode_headers(&e.headers, &cols)
                ],
            )
            .unwrap();
        }
        conn.execute_batch(
            "UPDATE threads SET message_count =
                 (SELECT count(*) FROM messages WHERE thread_id = threads.id);
             PRAGMA user_version = 9;",
        )
        .unwrap();
    }

    #[test]
    fn a_database_that_kept_ids_as_written_gets_one_case() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.db");
        let ask = envelope(THREAD, None, ASK, "Which port?");
        let answer = envelope(&lower(THREAD), Some(&lower(ASK)), &lower(ANSWER), "8080.");
        // A second message whose id differs from the question's only in case: stored beside
        // it before, it becomes a version of the question.
        let other = "01J9J3DFFFFFFFFFFFFFFFFFFF";
        let twin = envelope(THREAD, None, other, "Another text.");
        let mut texts;
        {
            let mut store = Store::open(&path).unwrap();
            for text in [&ask, &answer, &twin] {
                assert_eq!(outcome(&mut store, text), Outcome::Imported);
            }
            texts = [ASK, ANSWER, other].map(|id| store.message(id).unwrap().unwrap().raw);
            as_written_before(&store);
            store
                .conn
                .execute(
                    "UPDATE messages SET id = ?2 WHERE id = ?1",
                    [other, &lower(ASK)],
                )
                .unwrap();
            // (Its text names the id its column holds, as such a database wrote it.)
            texts[2] = texts[2].replace(other, &lower(ASK));
            let threads = "SELECT count(*) FROM threads WHERE ?1 = ?1";
            assert_eq!(column(&store, threads, ""), 2, "one thread per spelling");
        }
        let store = Store::open(&path).unwrap();
        assert_eq!(store.thread_rows("", 10).unwrap().len(), 1);
        let thread = store.thread(THREAD).unwrap().unwrap();
        assert_eq!(thread.messages.len(), 2);
        let answer = store.message(ANSWER).unwrap().unwrap();
        assert_eq!(answer.parent.as_deref(), Some(ASK));
        let missing = "SELECT missing_parent FROM messages WHERE id = ?1";
        assert_eq!(column(&store, missing, ANSWER), 0);
        // Every text reads back as it was received: the messages', and the twin's as the
        // question's conflicting version; no row is left under the other spelling.
        let rows = "SELECT count(*) FROM messages WHERE id = ?1";
        assert_eq!(column(&store, rows, &lower(ASK)), 0);
        let version: String = (store.conn)
            .query_row(
                "SELECT coalesce(raw, canonical) FROM message_versions WHERE message_id = ?1",
                [ASK],
                |r| r.get(0),
            )
            .unwrap();
        let read = [
            store.message(ASK).unwrap().unwrap().raw,
            store.message(ANSWER).unwrap().unwrap().raw,
            version,
        ];
        assert_eq!(read, texts);
    }
}
