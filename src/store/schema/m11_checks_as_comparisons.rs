//! CHECK constraints written as comparisons instead of IN lists (schema version 11).
//!
//! SQLite checks `status IN ('draft', 'awaiting_reply', 'answered', 'received')` (a list of
//! more than two values) by building a temporary B-tree of the list for every row it writes,
//! and freeing it again. For an import that was about a tenth of all the work done, the
//! largest single cost of storing a message (see docs/BENCHMARKS.md). The same rule written
//! as `status = 'draft' OR status = 'awaiting_reply' OR …` is checked with four comparisons.
//!
//! SQLite cannot alter a CHECK constraint, and rebuilding `messages` to change one would copy
//! every row and index. The rule admits exactly the values it admitted before, so no stored
//! row can break it, and the tables' definitions are edited in place, the way SQLite's
//! documentation of ALTER TABLE describes for removing a CHECK constraint: in the migration's
//! transaction, with `writable_schema`, and with the schema version bumped so that every
//! connection reads the definitions again. Each edited table is read back before the
//! transaction commits: an edit SQLite could not parse fails the migration, and nothing of it
//! is kept.

use rusqlite::{OptionalExtension, Transaction};

use crate::store::StoreError;

/// The constraints rewritten: table, column and the values the column admits, as the
/// migrations that made the tables wrote them.
const LISTS: &[(&str, &str, &[&str])] = &[
    (
        "messages",
        "status",
        &["draft", "awaiting_reply", "answered", "received"],
    ),
    (
        "signatures",
        "state",
        &["verified", "unknown", "bad", "changed"],
    ),
    (
        "keys",
        "source",
        &["manual", "announcement", "dns", "did_key"],
    ),
    ("keys", "state", &["trusted", "changed", "revoked"]),
];

/// The constraint as an IN list, as the table was created with it.
fn as_list(column: &str, values: &[&str]) -> String {
    let quoted: Vec<String> = values.iter().map(|v| format!("'{v}'")).collect();
    format!("CHECK ({column} IN ({}))", quoted.join(", "))
}

/// The same constraint as comparisons.
fn as_comparisons(column: &str, values: &[&str]) -> String {
    let compared: Vec<String> = values.iter().map(|v| format!("{column} = '{v}'")).collect();
    format!("CHECK ({})", compared.join(" OR "))
}

/// `sql` (a table's definition) with each of `table`'s listed constraints as comparisons.
fn rewritten(table: &str, sql: &str) -> String {
    LISTS.iter().filter(|(t, _, _)| *t == table).fold(
        sql.to_string(),
        |sql, (_, column, values)| {
            sql.replace(&as_list(column, values), &as_comparisons(column, values))
        },
    )
}

/// Rewrites the listed constraints of the tables in `tx`'s database (see the module's
/// comment). A table already rewritten, or not there, is left as it is.
pub(super) fn rewrite(tx: &Transaction) -> Result<(), StoreError> {
    let mut tables: Vec<&str> = LISTS.iter().map(|(t, _, _)| *t).collect();
    tables.dedup();
    let mut edits = Vec::new();
    for table in tables {
        let sql: Option<String> = tx
            .query_row(
                "SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?1",
                [table],
                |r| r.get(0),
            )
            .optional()?;
        if let Some(sql) = sql {
            let new = rewritten(table, &sql);
            if new != sql {
                edits.push((table, new));
            }
        }
    }
    if edits.is_empty() {
        return Ok(());
    }
    let version: i64 = tx.query_row("PRAGMA schema_version", [], |r| r.get(0))?;
    tx.pragma_update(None, "writable_schema", true)?;
    let edited = (|| {
        for (table, sql) in &edits {
            tx.execute(
                "UPDATE sqlite_schema SET sql = ?2 WHERE type = 'table' AND name = ?1",
                [table, sql.as_str()],
            )?;
        }
        tx.pragma_update(None, "schema_version", version + 1)
    })();
    // RESET: off, and this connection parses the definitions again (the bumped version makes
    // the others do so; this one took the new version as its own).
    tx.execute_batch("PRAGMA writable_schema = RESET")?;
    edited?;
    // Read back: a definition SQLite cannot parse fails here, before anything is committed.
    for (table, _) in &edits {
        tx.prepare(&format!("SELECT * FROM {table} LIMIT 0"))?;
    }
    Ok(())
}

/// The opcodes of the program SQLite compiles `sql` to (compiled, not run: its parameters
/// stay unbound). What the tests of this and of the import's INSERT look for an
/// `OpenEphemeral` in.
#[cfg(test)]
pub(in crate::store) fn opcodes(conn: &rusqlite::Connection, sql: &str) -> Vec<String> {
    let mut stmt = conn.prepare(&format!("EXPLAIN {sql}")).unwrap();
    let unbound = vec![rusqlite::types::Null; stmt.parameter_count()];
    stmt.query_map(rusqlite::params_from_iter(unbound), |r| r.get(1))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

#[cfg(test)]
mod tests {
    use rusqlite::{Connection, params};

    use super::*;
    use crate::protocol::Options;
    use crate::store::Store;
    use crate::synth::{TranscriptSpec, transcript};

    #[test]
    fn a_list_becomes_the_same_values_compared_one_by_one() {
        assert_eq!(
            as_list("state", &["trusted", "changed", "revoked"]),
            "CHECK (state IN ('trusted', 'changed', 'revoked'))"
        );
        assert_eq!(
            as_comparisons("state", &["trusted", "changed", "revoked"]),
            "CHECK (state = 'trusted' OR state = 'changed' OR state = 'revoked')"
        );
        // Only the named table's constraints: `signatures` and `keys` both have a `state`.
        let sql = "CREATE TABLE keys (state TEXT NOT NULL CHECK (state IN ('verified', \
                   'unknown', 'bad', 'changed')))";
        assert_eq!(rewritten("keys", sql), sql);
        assert!(rewritten("signatures", sql).contains("state = 'bad' OR"));
    }

    /// Whether writing a row of each listed table builds a temporary B-tree.
    fn writes_build_a_tree(conn: &Connection) -> Vec<&'static str> {
        LISTS
            .iter()
            .filter(|(table, column, _)| {
                let sql = format!("INSERT INTO {table} ({column}) VALUES ('x')");
                opcodes(conn, &sql).iter().any(|op| op == "OpenEphemeral")
            })
            .map(|(table, _, _)| *table)
            .collect()
    }

    /// `conn`'s definitions put back as schema versions before 11 wrote them.
    fn set_back(conn: &Connection) {
        let tx =
            Transaction::new_unchecked(conn, rusqlite::TransactionBehavior::Immediate).unwrap();
        let version: i64 = tx
            .query_row("PRAGMA schema_version", [], |r| r.get(0))
            .unwrap();
        tx.pragma_update(None, "writable_schema", true).unwrap();
        for (table, column, values) in LISTS {
            tx.execute(
                "UPDATE sqlite_schema SET sql = replace(sql, ?2, ?3)
                 WHERE type = 'table' AND name = ?1",
                params![
                    table,
                    as_comparisons(column, values),
                    as_list(column, values)
                ],
            )
            .unwrap();
        }
        tx.pragma_update(None, "schema_version", version + 1)
            .unwrap();
        tx.execute_batch("PRAGMA writable_schema = RESET").unwrap();
        tx.pragma_update(None, "user_version", 10).unwrap();
        tx.commit().unwrap();
    }

    /// Every stored message, as `show --json` would give it.
    fn messages(store: &Store) -> Vec<String> {
        let ids: Vec<String> = store
            .conn
            .prepare("SELECT id FROM messages ORDER BY seq")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        ids.iter()
            .map(|id| serde_json::to_string(&store.message(id).unwrap().unwrap()).unwrap())
            .collect()
    }

    /// Whether `value` may be written to `table.column` (in a savepoint, rolled back).
    fn admits(conn: &Connection, table: &str, column: &str, value: &str) -> bool {
        conn.execute_batch("SAVEPOINT probe").unwrap();
        let ok = conn
            .execute(&format!("UPDATE {table} SET {column} = ?1"), [value])
            .is_ok();
        conn.execute_batch("ROLLBACK TO probe; RELEASE probe")
            .unwrap();
        ok
    }

    #[test]
    fn a_new_database_stores_a_row_without_a_temporary_tree() {
        let store = Store::open_in_memory().unwrap();
        assert_eq!(writes_build_a_tree(&store.conn), Vec::<&str>::new());
    }

    #[test]
    fn a_database_with_the_lists_is_rewritten_and_keeps_every_row_and_rule() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.db");
        let mut store = Store::open(&path).unwrap();
        let spec = TranscriptSpec {
            envelopes: 60,
            threads: 6,
            seed: 5,
            mangled_percent: 30,
        };
        store
            .import_text("test", &transcript(&spec), &Options::default())
            .unwrap();
        // A row in each table the lists constrain.
        store
            .conn
            .execute_batch(
                "INSERT INTO signatures (seq, pkid, state, detail)
                    SELECT min(seq), 'k', 'bad', '' FROM messages;
                 INSERT INTO keys (pkid, public_key, source, state, first_seen, last_seen)
                    VALUES ('k', 'AAAA', 'manual', 'trusted', 'now', 'now');",
            )
            .unwrap();
        let before = messages(&store);
        assert_eq!(before.len(), 60);
        set_back(&store.conn);
        drop(store);
        let old = Connection::open(&path).unwrap();
        assert_eq!(
            writes_build_a_tree(&old),
            ["messages", "signatures", "keys", "keys"]
        );
        drop(old);

        // Read-only, it is read as it is: nothing changed that reading meets.
        let mode = |m| {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(m)).unwrap()
        };
        mode(0o444);
        let read_only = Store::open(&path).unwrap();
        assert!(read_only.read_only().is_some());
        assert_eq!(messages(&read_only), before);
        drop(read_only);
        mode(0o644);

        let store = Store::open(&path).unwrap();
        let version: i64 = store
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(version, crate::store::schema::SCHEMA_VERSION);
        // The migrating connection and a new one both read the new definitions.
        assert_eq!(writes_build_a_tree(&store.conn), Vec::<&str>::new());
        assert_eq!(
            writes_build_a_tree(&Connection::open(&path).unwrap()),
            Vec::<&str>::new()
        );
        assert_eq!(messages(&store), before);
        let check: String = store
            .conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(check, "ok");
        // Each column admits what it admitted, and nothing else.
        for (table, column, values) in LISTS {
            for value in *values {
                assert!(
                    admits(&store.conn, table, column, value),
                    "{table}.{column} {value}"
                );
            }
            for value in ["", "other", "DRAFT", "trusted "] {
                assert!(
                    !admits(&store.conn, table, column, value),
                    "{table}.{column} {value}"
                );
            }
        }
        // Opening it again changes nothing more.
        drop(store);
        let again = Store::open(&path).unwrap();
        assert_eq!(messages(&again), before);
    }
}
