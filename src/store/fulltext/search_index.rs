//! The full-text index, in a file of its own beside the database (`<database>-search`).
//!
//! SQLite lets one connection at a time write a file. With the index in the database, a large
//! import's writing thread also indexed every piece it stored: about a sixth of its time, on
//! the one thread that sets the import's pace while the other core had time to spare. In a
//! file of its own the index is written by another connection, on another thread, while the
//! import goes on (see [`indexer`]).
//!
//! A store has two connections: its own, which does not attach the index (its write
//! transactions begin `IMMEDIATE`, which takes the lock of every attached file, and would wait
//! whenever another process indexes), and the index's ([`open`]): the database with the index
//! attached as [`SCHEMA`], which writes only the index and through which searches read both.
//! The second is opened only when first needed (a search, an erasure, an import's indexing):
//! most commands never read the index, and opening it took a fifth of their time. A small
//! import (a paste, a POST to `serve`) is indexed at the next search, or as its store closes.
//!
//! The index is derived data, so it is kept right by catching up rather than by sharing the
//! database's transactions ([`catch_up`]):
//! - the index records which database it indexes (`source`, a random id the database keeps in
//!   `search_source`), the newest message it read (`through_seq`) and the last change it
//!   applied (`changes_through`);
//! - triggers in the database note every message removed, or whose indexed text changed, in
//!   `search_changes`, in the same transaction as the change;
//! - catching up applies the changes noted since, then indexes the messages stored since, in
//!   one transaction of the index's file: a crash leaves it at a whole catch-up, and the next
//!   one goes on from there.
//!
//! A missing index, or one made for another database (a file copied over the database, say),
//! is made again from the messages. Search results never show what is no longer stored even
//! while the index lags: a hit is joined with its message, which must still be there.
//!
//! The index holds no text, only its words (FTS5 `content=''`): the texts are the database's,
//! so the file adds only what the index itself takes.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension, params};

use crate::store::StoreError;

/// The schema name the index's file is attached under.
pub(in crate::store) const SCHEMA: &str = "search";

/// More changes than this at once (a backup restored in place, a large erasure) and the index
/// is made again instead: each change is a look-up and a delete, where a rebuild reads each
/// message once.
const REBUILD_OVER: i64 = 20_000;

/// The index's own tables, in schema `schema`: the full-text table without content (the
/// texts stay in `messages`), whose rows can still be deleted by rowid, and its state.
pub(super) fn create_sql(schema: &str) -> String {
    format!(
        "CREATE VIRTUAL TABLE IF NOT EXISTS {schema}.messages_fts USING fts5(
             body, context, participants,
             content = '', contentless_delete = 1, tokenize = 'unicode61'
         );
         CREATE TABLE IF NOT EXISTS {schema}.search_state (
             one             INTEGER PRIMARY KEY CHECK (one = 1),
             source          TEXT NOT NULL,
             through_seq     INTEGER NOT NULL,
             changes_through INTEGER NOT NULL
         );"
    )
}

/// The index's file for the database at `db`.
pub(crate) fn path_of(db: &Path) -> PathBuf {
    crate::store::beside(db, "-search")
}

/// Attaches the index of the database at `db` (in memory for a database in memory) to
/// `conn` as [`SCHEMA`], creating it if needed. A file there that is no database (damaged,
/// or something else under its name) is replaced: all it can hold is made again.
pub(in crate::store) fn attach(conn: &Connection, db: &Path) -> Result<(), StoreError> {
    match attach_once(conn, db) {
        Err(StoreError::Sqlite(e))
            if e.sqlite_error_code() == Some(rusqlite::ErrorCode::NotADatabase) =>
        {
            let _ = conn.execute_batch("DETACH DATABASE search");
            for suffix in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(crate::store::beside(&path_of(db), suffix));
            }
            attach_once(conn, db)
        }
        r => r,
    }
}

fn attach_once(conn: &Connection, db: &Path) -> Result<(), StoreError> {
    let memory = db == Path::new(":memory:") || db.as_os_str().is_empty();
    let file = if memory {
        ":memory:".to_string()
    } else {
        path_of(db).to_string_lossy().into_owned()
    };
    let existed = !memory && Path::new(&file).exists();
    conn.execute("ATTACH DATABASE ?1 AS search", [&file])?;
    if !memory {
        conn.pragma_update(Some(SCHEMA), "page_size", 16384)?;
        let _: String = conn.query_row("PRAGMA search.journal_mode = WAL", [], |r| r.get(0))?;
        conn.pragma_update(Some(SCHEMA), "synchronous", "NORMAL")?;
        if !existed {
            crate::store::owner_only(&path_of(db));
        }
    }
    conn.execute_batch(&create_sql(SCHEMA))?;
    Ok(())
}

/// Attaches the index of the database at `db` for reading, when it exists and is the index
/// of this database as it is now (`Ok(false)` otherwise: nothing is attached).
pub(super) fn attach_for_reading(conn: &Connection, db: &Path) -> Result<bool, StoreError> {
    let file = path_of(db);
    if !file.exists() {
        return Ok(false);
    }
    let uri = format!("file:{}?mode=ro", crate::store::url_path(&file));
    if conn
        .execute("ATTACH DATABASE ?1 AS search", [&uri])
        .is_err()
    {
        return Ok(false);
    }
    let current = match (state(conn, SCHEMA), wanted(conn)) {
        (Ok(Some(s)), Ok(w)) => s.holds(&w),
        _ => false,
    };
    if !current {
        conn.execute_batch("DETACH DATABASE search")?;
    }
    Ok(current)
}

/// What the index says it holds.
struct State {
    source: String,
    through_seq: i64,
    changes_through: i64,
}

impl State {
    /// Whether the index holds the database as it is.
    fn holds(&self, w: &Wanted) -> bool {
        self.source == w.source
            && self.through_seq == w.newest
            && self.changes_through >= w.last_change
    }
}

/// What the database holds: its id, its newest message and its last change noted.
struct Wanted {
    source: String,
    newest: i64,
    last_change: i64,
}

fn state(conn: &Connection, schema: &str) -> Result<Option<State>, StoreError> {
    Ok(conn
        .query_row(
            &format!("SELECT source, through_seq, changes_through FROM {schema}.search_state"),
            [],
            |r| {
                Ok(State {
                    source: r.get(0)?,
                    through_seq: r.get(1)?,
                    changes_through: r.get(2)?,
                })
            },
        )
        .optional()?)
}

fn wanted(conn: &Connection) -> Result<Wanted, StoreError> {
    Ok(Wanted {
        source: conn.query_row("SELECT id FROM main.search_source", [], |r| r.get(0))?,
        newest: conn.query_row("SELECT coalesce(max(seq), 0) FROM main.messages", [], |r| {
            r.get(0)
        })?,
        last_change: conn.query_row(
            "SELECT coalesce(max(n), 0) FROM main.search_changes",
            [],
            |r| r.get(0),
        )?,
    })
}

/// Brings the index in schema `schema` up to the database: the changes noted since it last
/// caught up, then the messages stored since. One transaction of the index's file; the
/// database is only read. Does nothing, at the cost of three look-ups, when there is nothing
/// to do. Whether changes noted were applied (and may be forgotten).
pub(super) fn catch_up(conn: &Connection, schema: &str) -> Result<bool, StoreError> {
    if let Some(s) = state(conn, schema)?
        && s.holds(&wanted(conn)?)
    {
        return Ok(false);
    }
    let tx = rusqlite::Transaction::new_unchecked(conn, rusqlite::TransactionBehavior::Deferred)?;
    // The index's lock first, before the database is read: another catching up (another
    // process, the import's indexer) finishes first, and this one then reads a database at
    // least as new as what that one indexed.
    tx.execute(
        &format!(
            "INSERT INTO {schema}.search_state (one, source, through_seq, changes_through)
             VALUES (1, '', 0, 0) ON CONFLICT (one) DO NOTHING"
        ),
        [],
    )?;
    let s = state(&tx, schema)?.unwrap_or(State {
        source: String::new(),
        through_seq: 0,
        changes_through: 0,
    });
    let w = wanted(&tx)?;
    if s.holds(&w) {
        tx.commit()?;
        return Ok(false);
    }
    let changes = w.last_change - s.changes_through;
    let mut through = s.through_seq;
    if s.source != w.source || changes > REBUILD_OVER {
        // Another database's index, or one so far behind that reading every message is
        // cheaper than applying each change.
        tx.execute(
            &format!("INSERT INTO {schema}.messages_fts (messages_fts) VALUES ('delete-all')"),
            [],
        )?;
        through = 0;
    } else if changes > 0 {
        apply_changes(&tx, schema, s.changes_through, through)?;
    }
    tx.execute(
        &format!(
            "INSERT INTO {schema}.messages_fts (rowid, body, context, participants)
             SELECT seq, body, context, participants FROM main.messages
             WHERE seq > ?1 AND seq <= ?2"
        ),
        params![through, w.newest],
    )?;
    tx.execute(
        &format!(
            "UPDATE {schema}.search_state SET source = ?1, through_seq = ?2, changes_through = ?3"
        ),
        params![w.source, w.newest, w.last_change],
    )?;
    tx.commit()?;
    Ok(w.last_change > s.changes_through)
}

/// Applies the changes noted after `after` to an index holding the messages up to
/// `through`: each message changed or removed leaves the index, and comes back with its text
/// as it is now when it is still stored (a message stored after `through` is indexed with the
/// rest). A removed message's `seq` may be given to the next message stored: that message is
/// then the one indexed under it.
fn apply_changes(
    tx: &Connection,
    schema: &str,
    after: i64,
    through: i64,
) -> Result<(), StoreError> {
    let seqs: Vec<i64> = tx
        .prepare("SELECT DISTINCT seq FROM main.search_changes WHERE n > ?1 AND seq <= ?2")?
        .query_map(params![after, through], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    let mut remove = tx.prepare(&format!(
        "DELETE FROM {schema}.messages_fts WHERE rowid = ?1"
    ))?;
    let mut add = tx.prepare(&format!(
        "INSERT INTO {schema}.messages_fts (rowid, body, context, participants)
         SELECT seq, body, context, participants FROM main.messages WHERE seq = ?1"
    ))?;
    for seq in seqs {
        remove.execute([seq])?;
        add.execute([seq])?;
    }
    Ok(())
}

/// Forgets, through the database's own connection `store`, the changes the index in schema
/// `schema` of `index` has applied: they are needed no more. Only tidying: another writer
/// holding the database leaves them for the next time.
pub(super) fn prune_changes(index: &Connection, store: &Connection, schema: &str) {
    if let Ok(Some(s)) = state(index, schema) {
        let _ = store.execute(
            "DELETE FROM main.search_changes WHERE n <= ?1",
            [s.changes_through],
        );
    }
}

impl crate::store::Store {
    /// Whether the full-text index a search reads, brought up to date as a search does,
    /// holds every stored message's words where they are and nothing else: the same words at
    /// the same places as an index made now from the messages. For checking a database (its
    /// cost grows with the history).
    pub fn search_index_check(&self) -> Result<bool, StoreError> {
        self.catch_up_search();
        let (s, conn) = self.searched();
        if conn
            .execute(
                &format!("INSERT INTO {s}.messages_fts(messages_fts) VALUES ('integrity-check')"),
                [],
            )
            .is_err()
        {
            return Ok(false);
        }
        conn.execute_batch(&format!(
            "DROP TABLE IF EXISTS temp.search_check;
             CREATE VIRTUAL TABLE temp.search_check USING fts5(
                 body, context, participants, tokenize = 'unicode61'
             );
             INSERT INTO temp.search_check (rowid, body, context, participants)
                 SELECT seq, body, context, participants FROM main.messages;
             DROP TABLE IF EXISTS temp.search_check_have;
             DROP TABLE IF EXISTS temp.search_check_want;
             CREATE VIRTUAL TABLE temp.search_check_have
                 USING fts5vocab({s}, messages_fts, instance);
             CREATE VIRTUAL TABLE temp.search_check_want
                 USING fts5vocab(temp, search_check, instance);"
        ))?;
        let differ: i64 = conn.query_row(
            "SELECT (SELECT count(*) FROM (
                         SELECT term, doc, col, offset FROM temp.search_check_have
                         EXCEPT SELECT term, doc, col, offset FROM temp.search_check_want))
                  + (SELECT count(*) FROM (
                         SELECT term, doc, col, offset FROM temp.search_check_want
                         EXCEPT SELECT term, doc, col, offset FROM temp.search_check_have))",
            [],
            |r| r.get(0),
        )?;
        conn.execute_batch(
            "DROP TABLE temp.search_check_have; DROP TABLE temp.search_check_want;
             DROP TABLE temp.search_check;",
        )?;
        Ok(differ == 0)
    }
}

/// Starts the thread that indexes a large import's pieces as they are committed, with a
/// connection of its own, so that the importing thread does not (see `background::Follower`).
/// What it has not indexed is indexed when the import is done.
pub(in crate::store) fn indexer(
    path: &Path,
    busy_timeout: Duration,
) -> Option<crate::store::background::Follower> {
    crate::store::background::Follower::start(
        "search index",
        path,
        move |path| open(path, busy_timeout),
        |conn| catch_up(conn, SCHEMA).map(|_| ()),
    )
}

/// A connection that reads the database at `path` and writes only its index (attached as
/// [`SCHEMA`]): it never begins a transaction that locks the database for writing.
pub(super) fn open(path: &Path, busy_timeout: Duration) -> Result<Connection, StoreError> {
    // CREATE: an attached file is opened with the connection's flags, and the index's file
    // may not exist yet (the database does: its own connection made it).
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(busy_timeout)?;
    conn.pragma_update(None, "temp_store", "MEMORY")?;
    // As the importing connection's: a piece's index merges with the segments before it,
    // which SQLite's 2 MB default would read back from the file.
    conn.pragma_update(None, "cache_size", -32768)?;
    conn.pragma_update(None, "secure_delete", "FAST")?;
    attach(&conn, path)?;
    Ok(conn)
}

#[cfg(test)]
#[path = "search_index_tests.rs"]
mod tests;
