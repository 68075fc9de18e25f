//! What went wrong with the database, as the operator is told it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::ErrorCode;

use super::locate;

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
    /// A new database file could not be created.
    #[error(
        "{path}: cannot create the database ({source}); make its folder writable, or name another file with --db",
        path = path.display()
    )]
    CannotCreate {
        /// The database file.
        path: PathBuf,
        /// What SQLite said.
        source: rusqlite::Error,
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
    /// No thread with this id.
    #[error("no thread `{0}` in the database; `crosstalk threads` lists them")]
    NoThread(String),
    /// A write to a database that cannot be written.
    #[error(
        "{path}: the database is read-only ({why}); reading it works, but to change it make the file and its folder writable, or copy it somewhere writable and name the copy with --db",
        path = path.display()
    )]
    ReadOnly {
        /// The database file.
        path: PathBuf,
        /// Why it cannot be written.
        why: String,
    },
    /// The disk (or the database's size limit) is full.
    #[error(
        "{path}: the disk is full; free some space and try again (what was committed before is kept, and an import run again completes where it stopped)",
        path = path.display()
    )]
    DiskFull {
        /// The database file.
        path: PathBuf,
    },
    /// SQLite found damaged pages in the database (or the file is not a database at all).
    #[error(
        "{path}: the database is damaged ({detail}), so nothing is written to it; restore a backup (a copy made by `crosstalk backup`: put it in place of this file with the app closed, or name it with --db), or save what SQLite can still read with `sqlite3 {path} .recover | sqlite3 recovered.db` and use --db recovered.db",
        path = path.display()
    )]
    Corrupt {
        /// The database file.
        path: PathBuf,
        /// What SQLite said, or what its check found first.
        detail: String,
    },
    /// Another writer held the database longer than this one would wait.
    #[error(
        "{path}: another program kept the database busy for {secs:.1} s; try again when it is done",
        path = path.display(),
        secs = waited.as_secs_f64()
    )]
    Busy {
        /// The database file.
        path: PathBuf,
        /// How long this writer waited.
        waited: Duration,
    },
    /// A file a copy of the database would replace.
    #[error(
        "{path} exists; name another file, or pass --force to replace it",
        path = path.display()
    )]
    Exists {
        /// The file.
        path: PathBuf,
    },
    /// A file beside the database could not be written.
    #[error("cannot write {path}: {error}", path = path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// What the system said.
        error: std::io::Error,
    },
    /// A search with more distinct words than are searched for.
    #[error(
        "the search has {words} different words; at most {max} are searched for at once: remove some"
    )]
    TooManyWords {
        /// Distinct words in the query.
        words: usize,
        /// The most that are searched for.
        max: usize,
    },
}

impl StoreError {
    /// This error naming the database at `path` when it is one of SQLite's that do not say
    /// which file they are about (read-only, disk full, busy, damaged).
    pub fn located(self, path: &Path) -> StoreError {
        locate(self, path, None)
    }

    /// Whether another writer held the database (the write may simply be tried again).
    pub(crate) fn is_busy(&self) -> bool {
        match self {
            StoreError::Busy { .. } => true,
            StoreError::Sqlite(e) => is_busy(e),
            _ => false,
        }
    }
}

pub(in crate::store) fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    )
}
