//! Taking turns with other writers: every write runs in a `BEGIN IMMEDIATE` transaction, and a
//! writer that finds the database busy asks again every millisecond (up to [`BUSY_TIMEOUT`]);
//! an import commits in pieces of about [`PIECE_TIME`] with a pause between them, so whoever
//! waits gets in between two pieces.

use std::path::Path;
use std::time::{Duration, Instant};

use rusqlite::Connection;

use super::{StoreError, is_busy};

/// How long a writer waits for another process's transaction before giving up.
pub(crate) const BUSY_TIMEOUT: Duration = Duration::from_secs(60);

/// How long an import holds the write lock at most before it commits what it has and lets
/// other writers in. Short enough that the app saving a draft, or a second import, waits a
/// fraction of a second; long enough that committing (and indexing) costs a few percent.
pub(crate) const PIECE_TIME: Duration = Duration::from_millis(200);

/// How often a writer waiting for the lock asks again. SQLite's own busy handler sleeps up to
/// 100 ms between attempts, which an import pausing for a few milliseconds between its pieces
/// would nearly always miss: a waiter would starve behind a long import.
pub(in crate::store) const BUSY_POLL: Duration = Duration::from_millis(1);

/// How long an import pauses between two pieces: several [`BUSY_POLL`]s, so a waiting writer
/// notices the lock is free and takes it.
pub(crate) const PIECE_PAUSE: Duration = Duration::from_millis(8);

/// Begins an immediate (write) transaction on `conn`, asking again every [`BUSY_POLL`] while
/// another writer holds the lock, for up to `timeout`.
pub(crate) fn begin_immediate(
    conn: &Connection,
    timeout: Duration,
    path: &Path,
) -> Result<(), StoreError> {
    retry_busy(conn, timeout, path, || {
        conn.execute_batch("BEGIN IMMEDIATE")
    })
}

/// Runs `attempt` until it does not fail with SQLITE_BUSY, or `timeout` has passed. SQLite's
/// own busy handler is off meanwhile (see [`BUSY_POLL`] for why).
pub(in crate::store) fn retry_busy<T>(
    conn: &Connection,
    timeout: Duration,
    path: &Path,
    mut attempt: impl FnMut() -> rusqlite::Result<T>,
) -> Result<T, StoreError> {
    let start = Instant::now();
    conn.busy_timeout(Duration::ZERO)?;
    let r = loop {
        match attempt() {
            Err(e) if is_busy(&e) => {
                let waited = start.elapsed();
                if waited >= timeout {
                    break Err(StoreError::Busy {
                        path: path.to_path_buf(),
                        waited,
                    });
                }
                std::thread::sleep(BUSY_POLL);
            }
            r => break r.map_err(StoreError::from),
        }
    };
    conn.busy_timeout(timeout)?;
    r
}
