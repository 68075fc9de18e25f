//! Copying the write-ahead log into the database while a long import goes on.
//!
//! An import commits in pieces with SQLite's own checkpoints turned off (each would sync the
//! database file on the importing thread, at every piece), and copied the whole log into the
//! database once at its end: for 100 000 envelopes a log of 150 MB, a fifth of the import's
//! time spent after the last envelope was stored, with nothing else to do. Here a second
//! connection, on its own thread, copies what each piece committed while the next piece is
//! written (a PASSIVE checkpoint never waits for, and never blocks, the writer or a reader).
//! The checkpoint at the import's end then has only the last piece or two left to copy.
//!
//! The log itself still grows with the import: SQLite writes it again from its beginning only
//! when a transaction begins with every frame copied, and the next piece begins a few
//! milliseconds after a commit, while the copy of that piece is still under way (a
//! 100 000-envelope import leaves a log of about 170 MB, removed when the import closes the
//! database). Waiting for the copy at every piece would cost the writer more than the larger
//! file does (see docs/BENCHMARKS.md).
//!
//! Only ever an optimization: when the second connection cannot be opened or a checkpoint
//! fails, the log is copied at the end as before.

use std::path::Path;

use rusqlite::{Connection, OpenFlags};

use super::background::Follower;

/// Starts the thread copying the log, woken after each committed piece (see [`Follower`]).
pub(in crate::store) fn start(path: &Path) -> Option<Follower> {
    Follower::start("checkpoint", path, open, checkpoint)
}

/// The second connection: it only ever checkpoints, so it runs no migration and holds no
/// transaction (a reader would keep the log from starting again).
fn open(path: &Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    // As the importing connection: the database file is synced when a checkpoint has copied
    // the log into it, the log itself is not synced again.
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    Ok(conn)
}

/// Copies what the log holds and no reader still needs.
fn checkpoint(conn: &Connection) -> rusqlite::Result<()> {
    conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pieces committed on one connection are copied into the database by the checkpointer's
    /// while the first keeps writing; when each copy is done before the next piece begins,
    /// the log starts again and stays small.
    #[test]
    fn the_log_is_copied_while_pieces_are_committed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.db");
        let conn = Connection::open(&path).unwrap();
        let _: String = conn
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
            .unwrap();
        conn.pragma_update(None, "wal_autocheckpoint", 0).unwrap();
        conn.execute_batch("CREATE TABLE t (x BLOB)").unwrap();
        let wal = dir.path().join("c.db-wal");
        let piece = |conn: &Connection| {
            conn.execute_batch("BEGIN IMMEDIATE").unwrap();
            for _ in 0..50 {
                conn.execute("INSERT INTO t VALUES (zeroblob(16000))", [])
                    .unwrap();
            }
            conn.execute_batch("COMMIT").unwrap();
        };
        // Without it, the log holds every piece.
        for _ in 0..4 {
            piece(&conn);
        }
        let grown = std::fs::metadata(&wal).unwrap().len();
        assert!(grown > 3 * 50 * 16000, "{grown}");
        conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .unwrap();

        let c = start(&path).expect("a file database");
        for n in 1..=8 {
            piece(&conn);
            c.committed();
            // Each piece waits for the copy of the one before (an import does not: see the
            // module's comment).
            let waited = std::time::Instant::now();
            while c.done() < n && waited.elapsed() < std::time::Duration::from_secs(20) {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            assert_eq!(c.done(), n, "checkpoint {n} ran");
        }
        drop(c);
        let size = std::fs::metadata(&wal).unwrap().len();
        assert!(
            size < grown / 2,
            "log {size} bytes after 8 pieces, {grown} after 4"
        );
        let rows: i64 = conn
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(rows, 600);
    }

    #[test]
    fn none_for_a_database_in_memory() {
        assert!(start(Path::new(":memory:")).is_none());
    }
}
