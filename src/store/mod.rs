//! The operator's history in one SQLite file: pastes as received, threads, and messages
//! linked into trees by `parent`. rusqlite only: no terminal, no clap.
//!
//! Every write runs in a `BEGIN IMMEDIATE` transaction, so two processes importing into one
//! database take turns (each waits up to [`BUSY_TIMEOUT`]) instead of failing halfway.

mod browse;
mod import;
mod lookup;
mod prepare;
mod query;
mod reply;
mod schema;
mod search;
mod tree;
mod writer;

pub use browse::{Draft, ThreadRow};
pub use import::{ImportItem, ImportReport, Kept, Outcome};
pub use lookup::{IdMatches, MessageLabel};
pub use query::{StoredMessage, ThreadSummary, ThreadView};
pub use reply::reply_envelope;
pub use schema::SCHEMA_VERSION;
pub use search::{RANKED_MATCHES, SearchHit, SearchResults};
pub use tree::{ThreadOutline, TreeRow};

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::Connection;

use crate::protocol::IdGenerator;

/// How long a writer waits for another process's transaction before giving up.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(60);

/// What went wrong with the database; messages say what to do.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// SQLite refused an operation.
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// The database was written by a newer crosstalk.
    #[error(
        "the database has schema version {found}, newer than this crosstalk understands ({supported}); upgrade crosstalk, or use another database with --db"
    )]
    TooNew {
        /// Version found in the file.
        found: i64,
        /// Newest version this binary writes.
        supported: i64,
    },
    /// The database's folder could not be created.
    #[error("cannot create `{path}`: {source}")]
    CreateDir {
        /// The folder.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// Reading an input failed.
    #[error("cannot read {source_name}: {error}")]
    Read {
        /// Name of the input.
        source_name: String,
        /// The I/O error.
        error: std::io::Error,
    },
    /// A stored row could not be decoded (the database was edited by hand, or is damaged).
    #[error("stored message `{id}` is damaged: {why}")]
    Damaged {
        /// The message id.
        id: String,
        /// What could not be read.
        why: String,
    },
    /// No message with this id.
    #[error("no message `{0}` in the database; `crosstalk threads` and `crosstalk show` list them")]
    NoMessage(String),
}

/// The default database: `crosstalk.db` in the platform data directory
/// (`$XDG_DATA_HOME/crosstalk/` on Linux).
pub fn default_path() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "crosstalk").map(|d| d.data_dir().join("crosstalk.db"))
}

/// An open database.
pub struct Store {
    conn: Connection,
    ids: IdGenerator,
}

impl Store {
    /// Opens (creating it and its folders if needed) and migrates the database at `path`.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| StoreError::CreateDir {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        Self::setup(Connection::open(path)?)
    }

    /// A database in memory, for tests and throwaway sessions.
    pub fn open_in_memory() -> Result<Store, StoreError> {
        Self::setup(Connection::open_in_memory()?)
    }

    fn setup(mut conn: Connection) -> Result<Store, StoreError> {
        conn.busy_timeout(BUSY_TIMEOUT)?;
        // A database from a newer crosstalk is refused before anything (even the journal
        // mode) is changed in it.
        schema::refuse_newer(&conn)?;
        // WAL: readers never block the writer, and a killed writer leaves the file whole.
        let _: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
        // NORMAL is durable against the process dying at any point (WAL keeps every committed
        // transaction); only a power cut can lose the last commits, never corrupt the file.
        // FULL would fsync on every commit, which an operator pasting all day pays for in
        // latency without protection that matters here.
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        // A 32 MiB page cache: a bulk import writes tens of megabytes in one transaction, and
        // with SQLite's 2 MB default it spills pages to the WAL and reads them back.
        conn.pragma_update(None, "cache_size", -32768)?;
        schema::migrate(&mut conn)?;
        Ok(Store {
            conn,
            ids: IdGenerator::new(),
        })
    }

    /// Sets how long a statement waits for another connection's write lock before failing
    /// with "database is locked" (opening sets [`BUSY_TIMEOUT`]). The app sets a few
    /// milliseconds, so that a key press never waits on another process's import.
    pub fn set_busy_timeout(&self, timeout: Duration) -> Result<(), StoreError> {
        self.conn.busy_timeout(timeout)?;
        Ok(())
    }

    /// Lets the file grow by at most `pages` more pages (`PRAGMA max_page_count`) for this
    /// connection: a write that needs more fails as it would on a full disk ("database or
    /// disk is full"). For rehearsing that case.
    pub fn limit_growth(&self, pages: u64) -> Result<(), StoreError> {
        let count: u64 = self.conn.query_row("PRAGMA page_count", [], |r| r.get(0))?;
        let _: u64 = self.conn.query_row(
            &format!("PRAGMA max_page_count = {}", count + pages),
            [],
            |r| r.get(0),
        )?;
        Ok(())
    }

    /// Whether the database passes SQLite's own consistency check.
    pub fn integrity_check(&self) -> Result<bool, StoreError> {
        let r: String = self
            .conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))?;
        Ok(r == "ok")
    }
}

/// Adds the messages stored after `seq` to the full-text index, in one statement.
pub(crate) fn index_since(conn: &Connection, seq: i64) -> Result<(), StoreError> {
    conn.execute(
        "INSERT INTO messages_fts (rowid, body, context, participants)
         SELECT seq, body, context, participants FROM messages WHERE seq > ?1",
        [seq],
    )?;
    Ok(())
}

/// The `headers` and `meta` columns of an envelope: JSON `[[key, value], ...]` and
/// `[{"namespace", "entries"}, ...]`, in the order received (query.rs reads them back).
pub(crate) fn envelope_json(env: &crate::protocol::Envelope) -> (String, String) {
    let headers: Vec<[&str; 2]> = env
        .headers
        .iter()
        .map(|h| [h.key.as_str(), h.value.as_str()])
        .collect();
    let meta: Vec<serde_json::Value> = env
        .meta
        .iter()
        .map(|m| serde_json::json!({"namespace": m.namespace, "entries": m.entries}))
        .collect();
    (
        serde_json::to_string(&headers).unwrap_or_default(),
        serde_json::to_string(&meta).unwrap_or_default(),
    )
}

/// The current time as RFC 3339 with a fixed six-digit fraction, so that stored times sort
/// correctly as text.
pub(crate) fn now() -> String {
    jiff::fmt::temporal::DateTimePrinter::new()
        .precision(Some(6))
        .timestamp_to_string(&jiff::Timestamp::now())
}
