//! The v1.0 digest unique only where there is one (schema version 13).
//!
//! `messages.digest` was declared `TEXT UNIQUE`, so SQLite kept an index of it with an entry
//! for every message, although only envelopes that came without a message id have a digest:
//! every other message added a NULL to it, one more B-tree insert per message on the import's
//! writing thread (see docs/BENCHMARKS.md). A partial unique index (`WHERE digest IS NOT
//! NULL`) holds the same rule for the rows it is about, and the look-ups by digest use it.
//!
//! SQLite cannot drop a column's UNIQUE, and rebuilding `messages` to do so would copy every
//! row and index (with foreign keys to cascade). Instead, in the migration's transaction: the
//! partial index is made; the table's definition is edited without the word `UNIQUE`, and the
//! automatic index it had is renamed into a plain index on `digest` (its entries are exactly
//! a plain index's: the digest and the row's id), both with `writable_schema`, the schema
//! version bumped so that every connection reads them again; then that plain index is dropped.
//! A definition not as this schema wrote it (edited by hand) is left as it is: the rule holds
//! either way.

use rusqlite::{OptionalExtension, Transaction};

use crate::store::StoreError;

/// The column as migration 1 wrote it, and as it is after.
const BEFORE: &str = "digest       TEXT UNIQUE,";
const AFTER: &str = "digest       TEXT,";

/// The name SQLite gave the column's index: the second UNIQUE of the table (`id` is the first).
const AUTOMATIC: &str = "sqlite_autoindex_messages_2";

/// Makes `messages.digest` unique where present only (see the module's comment).
pub(super) fn where_present(tx: &Transaction) -> Result<(), StoreError> {
    tx.execute_batch(
        "CREATE UNIQUE INDEX IF NOT EXISTS messages_digest ON messages(digest)
             WHERE digest IS NOT NULL;",
    )?;
    let sql: Option<String> = tx
        .query_row(
            "SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = 'messages'",
            [],
            |r| r.get(0),
        )
        .optional()?;
    let indexed: Vec<String> = tx
        .prepare(&format!(
            "SELECT name FROM pragma_index_info('{AUTOMATIC}')"
        ))?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    let Some(sql) = sql.filter(|s| s.matches(BEFORE).count() == 1) else {
        return Ok(());
    };
    if indexed != ["digest"] {
        return Ok(());
    }
    let version: i64 = tx.query_row("PRAGMA schema_version", [], |r| r.get(0))?;
    tx.pragma_update(None, "writable_schema", true)?;
    let edited = (|| {
        tx.execute(
            "UPDATE sqlite_schema SET sql = ?1 WHERE type = 'table' AND name = 'messages'",
            [sql.replacen(BEFORE, AFTER, 1)],
        )?;
        tx.execute(
            "UPDATE sqlite_schema SET name = 'messages_digest_before',
                 sql = 'CREATE INDEX messages_digest_before ON messages(digest)'
             WHERE type = 'index' AND name = ?1",
            [AUTOMATIC],
        )?;
        tx.pragma_update(None, "schema_version", version + 1)
    })();
    // RESET: off, and this connection parses the definitions again.
    tx.execute_batch("PRAGMA writable_schema = RESET")?;
    edited?;
    tx.execute_batch("DROP INDEX messages_digest_before")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use rusqlite::Connection;

    use crate::protocol::Options;
    use crate::store::Store;

    /// The names of the automatic indexes of `messages` and of its digest indexes.
    fn digest_indexes(conn: &Connection) -> Vec<String> {
        conn.prepare(
            "SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'messages'
               AND (name LIKE 'sqlite_autoindex%' OR name LIKE '%digest%') ORDER BY name",
        )
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
    }

    #[test]
    fn only_messages_with_a_digest_enter_its_index_and_it_stays_unique() {
        let store = Store::open_in_memory().unwrap();
        let names: Vec<String> = digest_indexes(&store.conn);
        assert_eq!(names, ["messages_digest", "sqlite_autoindex_messages_1"]);
        let sql: String = store
            .conn
            .query_row(
                "SELECT sql FROM sqlite_schema WHERE name = 'messages'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert!(
            sql.contains(super::AFTER) && !sql.contains(super::BEFORE),
            "{sql}"
        );

        let mut store = store;
        let v10 = "[[A→B v1]]\nsession: s\nbody: |\n  Same words.\n[[END]]\n";
        let v11 = "[[A→B v1]]\nthread: 01J9J3D3M6A4M3WQX8G1ZQ0S7K\n\
                   message: 01J9J3D3M6A4M3WQX8G1ZQ0S7M\nbody: |\n  Hello.\n[[END]]\n";
        for text in [v10, v11, v10, v11] {
            store
                .import_text("<test>", text, &Options::default())
                .unwrap();
        }
        let (rows, digests): (i64, i64) = store
            .conn
            .query_row("SELECT count(*), count(digest) FROM messages", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .unwrap();
        assert_eq!(
            (rows, digests),
            (2, 1),
            "each once, the v1.0 one by its digest"
        );
        let entries: i64 = store
            .conn
            .query_row(
                "SELECT count(*) FROM messages INDEXED BY messages_digest
                 WHERE digest IS NOT NULL",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(entries, 1);
        let twice = store.conn.execute(
            "INSERT INTO messages SELECT * FROM messages WHERE digest IS NOT NULL",
            [],
        );
        assert!(twice.is_err(), "a digest is still unique");
        let check: String = store
            .conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(check, "ok");
    }

    #[test]
    fn a_database_with_messages_is_converted_whole() {
        let dir = tempfile::tempdir().unwrap();
        let new_path = dir.path().join("new.db");
        let text = crate::synth::transcript(&crate::synth::TranscriptSpec {
            envelopes: 300,
            threads: 10,
            seed: 3,
            mangled_percent: 20,
        });
        let mut new = Store::open(&new_path).unwrap();
        new.import_text("<test>", &text, &Options::default())
            .unwrap();
        let counts = |c: &Connection| -> (i64, i64) {
            c.query_row("SELECT count(*), count(digest) FROM messages", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .unwrap()
        };
        let stored = counts(&new.conn);
        assert!(stored.1 > 0 && stored.1 < stored.0, "{stored:?}");

        // The same rows in a database as version 12 left it: the column unique.
        let old_path = dir.path().join("old.db");
        let old = Connection::open(&old_path).unwrap();
        crate::store::schema::migrate_to(&old, crate::store::schema::DIGEST_WHERE_PRESENT - 1);
        crate::store::test_support::copy_rows(
            &old,
            &new_path,
            &["pastes", "paste_pieces", "threads", "messages"],
        );
        assert_eq!(
            digest_indexes(&old),
            ["sqlite_autoindex_messages_1", "sqlite_autoindex_messages_2"]
        );
        drop(old);

        let mut migrated = Store::open(&old_path).unwrap();
        assert_eq!(
            digest_indexes(&migrated.conn),
            ["messages_digest", "sqlite_autoindex_messages_1"]
        );
        assert!(migrated.integrity_check().unwrap());
        assert_eq!(counts(&migrated.conn), stored);
        // Every v1.0 envelope is still found by its digest: importing again adds nothing.
        let again = migrated
            .import_text("<test>", &text, &Options::default())
            .unwrap();
        assert_eq!(
            again.count(crate::store::Outcome::Imported),
            0,
            "{:?}",
            again
                .items
                .iter()
                .find(|i| i.outcome == crate::store::Outcome::Imported)
        );
        assert_eq!(counts(&migrated.conn), stored);
    }
}
