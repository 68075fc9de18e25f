//! The operator's history in one SQLite file: pastes as received, threads, and messages
//! linked into trees by `parent`. rusqlite only: no terminal, no clap.
//!
//! Every write runs in a `BEGIN IMMEDIATE` transaction, so two processes writing to one
//! database take turns instead of failing halfway: a writer that finds the database busy asks
//! again every millisecond (up to [`BUSY_TIMEOUT`]), and an import commits in pieces of about
//! [`PIECE_TIME`] with a pause between them, so whoever waits gets in between two pieces.
//!
//! A database whose file, folder or disk does not allow writing is opened read-only: reading
//! works, and every write fails with [`StoreError::ReadOnly`], which names the file.

mod alias;
mod background;
mod backup;
mod browse;
mod changes;
mod checkpointer;
mod conflict;
mod consent;
mod cycle;
mod delivery;
mod erase;
mod fanout;
mod fresh;
mod hop;
mod import;
mod import_summary;
mod keys;
mod lookup;
mod meta_column;
mod paste_text;
mod pieces;
pub mod pii;
mod placement;
mod poll;
mod prepare;
mod query;
mod queue;
mod receipt_id;
mod relay_pii;
mod reply;
mod schema;
mod search;
mod search_index;
mod settle;
mod soundness;
#[cfg(test)]
mod test_support;
mod texts;
mod thread_page;
mod tree;
mod v10_place;
mod writer;

pub use backup::Backup;
pub use browse::{Draft, DraftSave, DraftTaken, ThreadRow};
pub use conflict::MessageVersion;
pub use delivery::{Delivery, ulid_time};
pub use erase::{EARLIER_COPIES, EraseTarget, Erasure};
pub use fanout::{Carried, RelayedTo, TargetRelay};
pub use hop::{HopDecision, Waiting};
pub use import::{ImportItem, ImportReport, Kept, Outcome};
pub use import_summary::ImportSummary;
pub use keys::{Added, KeyRow, KeySource, SignatureCheck, is_trust_alarm};
pub use lookup::{IdMatches, MessageLabel};
pub use paste_text::PasteSummary;
pub use placement::MoveRefused;
pub use poll::{ClosedPoll, MessageMatch, PollView};
pub use query::{StoredMessage, ThreadSummary, ThreadView};
pub use queue::{Queue, QueueRow, QueueSection, Section, StateFilter};
pub use reply::{ReplyParties, reply_envelope, reply_parties};
pub use schema::SCHEMA_VERSION;
pub use search::{MAX_SEARCH_WORDS, MIN_PREFIX_CHARS, RANKED_MATCHES, SearchHit, SearchResults};
pub use settle::Settled;
pub use thread_page::{ThreadKey, ThreadPage};
pub use tree::{ThreadOutline, TreeRow};

use std::cell::{Cell, OnceCell, RefCell};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rusqlite::{Connection, ErrorCode, OpenFlags, Transaction, TransactionBehavior};

use crate::ids::IdGenerator;

/// How long a writer waits for another process's transaction before giving up.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(60);

/// How long an import holds the write lock at most before it commits what it has and lets
/// other writers in. Short enough that the app saving a draft, or a second import, waits a
/// fraction of a second; long enough that committing (and indexing) costs a few percent.
pub const PIECE_TIME: Duration = Duration::from_millis(200);

/// How often a writer waiting for the lock asks again. SQLite's own busy handler sleeps up to
/// 100 ms between attempts, which an import pausing for a few milliseconds between its pieces
/// would nearly always miss: a waiter would starve behind a long import.
const BUSY_POLL: Duration = Duration::from_millis(1);

/// How long an import pauses between two pieces: several [`BUSY_POLL`]s, so a waiting writer
/// notices the lock is free and takes it.
pub(crate) const PIECE_PAUSE: Duration = Duration::from_millis(8);

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
    pub fn is_busy(&self) -> bool {
        match self {
            StoreError::Busy { .. } => true,
            StoreError::Sqlite(e) => is_busy(e),
            _ => false,
        }
    }
}

fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    )
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
    /// The database file (`:memory:` for one in memory), named in errors.
    path: PathBuf,
    /// Why the database cannot be written, when it was opened read-only.
    read_only: Option<String>,
    /// How long a write waits for another writer.
    busy_timeout: Duration,
    /// The full-text index, found when first needed (a search, an erasure, the end of a
    /// large import, the closing of a store that imported): a command that does none of
    /// these (`threads`, `show`, `export`) never opens it.
    index: OnceCell<SearchIndex>,
    /// Messages imported since the index last caught up through this store, indexed at the
    /// next search or as the store closes (see `import_kept_with`).
    unindexed: Cell<bool>,
    /// How far the conflicting versions are searchable (see `search::version_hits`): the
    /// newest version's `seq` put in the table in memory, and how many versions there were.
    versions_searched: Cell<(i64, i64)>,
    /// The schema version as read: [`SCHEMA_VERSION`] but for a database read without
    /// migrating, whose queries leave out what its version has not got (see
    /// [`Store::can_settle`]).
    version: i64,
    /// Opened read-only because the disk is full: a write fails with
    /// [`StoreError::DiskFull`], not [`StoreError::ReadOnly`].
    disk_full: bool,
    /// Whether SQLite's check of the database ran before this store's first write (see
    /// [`Store::check_writable`]).
    checked: Cell<bool>,
    /// Whether that check found the database sound, or a record said it was as a store that
    /// left it sound recorded it (see [`soundness`]).
    sound: Cell<bool>,
    /// Where the records of databases left sound are kept (the state directory's
    /// `checked/`), for a store opened by the binary; `None` (always check) otherwise.
    soundness_records: Option<PathBuf>,
    /// What SQLite found damaged, once a check or a statement found it: nothing more is
    /// written through this store.
    damaged: RefCell<Option<String>>,
}

/// A store that imported messages without indexing them indexes them as it closes, so that
/// the index on disk is current for whoever opens the database next (a reader that may not
/// write it would otherwise make one in memory).
impl Drop for Store {
    fn drop(&mut self) {
        if self.unindexed.get() {
            self.catch_up_search();
        }
        if let Some(dir) = self.soundness_records.take() {
            self.record_soundness(&dir);
        }
    }
}

/// Where a store's full-text index is.
struct SearchIndex {
    /// The schema holding it: its own file ([`search_index::SCHEMA`]); for a database read
    /// without migrating, the index inside an older one (`main`), or one made in memory when
    /// the file is missing or behind, or cannot be made (`temp`).
    schema: &'static str,
    /// The connection that writes and reads the index of a database file: the database with
    /// the index's file attached. Not the store's, whose write transactions (`BEGIN
    /// IMMEDIATE`) would take the index's lock too, and wait whenever another process
    /// indexes. `None` when the store's own connection holds the index (a database in
    /// memory or read-only, an index in memory).
    conn: Option<Connection>,
}

impl SearchIndex {
    /// An index the store's own connection holds in `schema`.
    fn within(schema: &'static str) -> OnceCell<SearchIndex> {
        OnceCell::from(SearchIndex { schema, conn: None })
    }
}

impl Store {
    /// Opens (creating it and its folders if needed) and migrates the database at `path`.
    ///
    /// A database that exists but cannot be written (a read-only file, folder or mount) is
    /// opened read-only instead: reading works, writes fail with [`StoreError::ReadOnly`].
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let located = |e: StoreError| locate(e, path, None);
        if path.exists() {
            if let Some(why) = unwritable(path) {
                return Self::open_read_only(path, why).map_err(located);
            }
        } else if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            // Folders made for it are the owner's alone, as the database is (below).
            use std::os::unix::fs::DirBuilderExt;
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .map_err(|source| StoreError::CreateDir {
                    path: dir.to_path_buf(),
                    source,
                })?;
        }
        let existed = path.exists();
        let cannot_create = |source: rusqlite::Error| StoreError::CannotCreate {
            path: path.to_path_buf(),
            source,
        };
        // Setting up answers "busy" at once, not after the busy timeout, when another process
        // is setting up the same new database (switching it to WAL, say): tried again until
        // the timeout, as a write would wait.
        let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
        let set_up = loop {
            let conn = match Connection::open(path) {
                Ok(conn) => conn,
                Err(e) if existed => break Err(StoreError::from(e)),
                Err(e) => return Err(cannot_create(e)),
            };
            match Self::setup(conn, path) {
                Err(StoreError::Sqlite(e))
                    if matches!(
                        e.sqlite_error_code(),
                        Some(
                            rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
                        )
                    ) && std::time::Instant::now() < deadline =>
                {
                    std::thread::sleep(Duration::from_millis(20));
                }
                r => break r,
            }
        };
        match set_up {
            Ok(store) if !existed => {
                owner_only(path);
                Ok(store)
            }
            // SQLite cannot make or grow its log and shared memory on a full disk, so even a
            // reader fails: the database is read as it is, and a write says the disk is full.
            Err(e) if existed && path.exists() && is_disk_full(&e, path) => {
                let mut store =
                    Self::open_read_only(path, "the disk is full".into()).map_err(|e| {
                        match is_disk_full(&e, path) {
                            true => StoreError::DiskFull {
                                path: path.to_path_buf(),
                            },
                            false => located(e),
                        }
                    })?;
                store.disk_full = true;
                Ok(store)
            }
            Err(e) if !existed && is_disk_full(&e, path) => Err(StoreError::DiskFull {
                path: path.to_path_buf(),
            }),
            Err(StoreError::Sqlite(e)) if !existed && e.sqlite_error_code().is_some() => {
                Err(cannot_create(e))
            }
            // Writable by permissions, yet refused (a read-only mount, a file made immutable):
            // read what is there.
            Err(e) if path.exists() && is_read_only(&e) => {
                Self::open_read_only(path, "its file system refuses writes".into()).map_err(located)
            }
            r => r.map_err(located),
        }
    }

    /// Opens an existing database for reading only (`None` when there is no file): for
    /// commands that only consult it, such as `check`.
    pub fn open_for_reading(path: &Path) -> Result<Option<Store>, StoreError> {
        if !path.exists() {
            return Ok(None);
        }
        Self::open_read_only(path, "opened for reading only".into())
            .map(Some)
            .map_err(|e| locate(e, path, None))
    }

    /// Opens `path` for reading only, without creating, migrating or changing anything in it.
    /// When even SQLite's shared-memory file cannot be made next to it, the file is read as
    /// immutable (what another process may still be writing is then not seen).
    fn open_read_only(path: &Path, why: String) -> Result<Store, StoreError> {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let uri = |extra: &str| {
            let mut u = url_path(path);
            u.insert_str(0, "file:");
            u.push_str("?mode=ro");
            u.push_str(extra);
            u
        };
        let probe = |conn: &Connection| -> Result<i64, rusqlite::Error> {
            conn.query_row("PRAGMA user_version", [], |r| r.get(0))
                .and_then(|v| {
                    conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
                        .map(|_: i64| v)
                })
        };
        let conn = Connection::open_with_flags(uri(""), flags)?;
        let (conn, version) = match probe(&conn) {
            Ok(v) => (conn, v),
            Err(_) => {
                let conn = Connection::open_with_flags(uri("&immutable=1"), flags)?;
                let v = probe(&conn)?;
                (conn, v)
            }
        };
        schema::refuse_newer(&conn)?;
        if version < schema::READABLE_FROM {
            return Err(StoreError::ReadOnly {
                path: path.to_path_buf(),
                why: format!(
                    "{why}, and it needs upgrading from schema version {version} to {SCHEMA_VERSION} before this crosstalk can read it"
                ),
            });
        }
        conn.busy_timeout(BUSY_TIMEOUT)?;
        // Temporary tables (a search's snippets, an index made in memory) stay in memory.
        conn.pragma_update(None, "temp_store", "MEMORY")?;
        pii::register(&conn)?;
        let index = if version < schema::SEARCH_APART {
            SearchIndex::within("main")
        } else {
            // Found at the first search (see `searched`).
            OnceCell::new()
        };
        Ok(Store::assemble(conn, path, Some(why), version, index))
    }

    /// A database in memory, for tests and throwaway sessions.
    pub fn open_in_memory() -> Result<Store, StoreError> {
        Self::setup(Connection::open_in_memory()?, Path::new(":memory:"))
    }

    fn setup(conn: Connection, path: &Path) -> Result<Store, StoreError> {
        conn.busy_timeout(BUSY_TIMEOUT)?;
        // A database from a newer crosstalk is refused before anything (even the journal
        // mode) is changed in it.
        schema::refuse_newer(&conn)?;
        // 16 KiB pages for a new database (an existing one keeps its size): rows that hold a
        // whole envelope fit a page more often, and the indexes are shallower. A bulk import
        // spends most of its time in SQLite's B-trees; with 4 KiB pages it took about a tenth
        // longer (docs/BENCHMARKS.md). The pragma does nothing to a database that has pages.
        conn.pragma_update(None, "page_size", 16384)?;
        // WAL: readers never block the writer, and a killed writer leaves the file whole.
        let _: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
        // NORMAL is durable against the process dying at any point (WAL keeps every committed
        // transaction); only a power cut can lose the last commits, never corrupt the file.
        // FULL would fsync on every commit, which an operator pasting all day pays for in
        // latency without protection that matters here.
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        // Statement journals (an import's full-text indexing of each piece writes one) and
        // temporary tables in memory: in files, each piece of an import created, wrote and
        // removed one, about 4 % of the import's time.
        conn.pragma_update(None, "temp_store", "MEMORY")?;
        // A 32 MiB page cache: a bulk import writes tens of megabytes in one transaction, and
        // with SQLite's 2 MB default it spills pages to the WAL and reads them back.
        conn.pragma_update(None, "cache_size", -32768)?;
        // The bytes a row leaves behind in its page when it is changed or deleted are zeroed
        // (FAST: only where that costs no extra write). Otherwise every update of a row
        // (a thread's count and time, a message's ledger) leaves its old version, text
        // included, in the page's free space, where erasing the row later does not reach.
        conn.pragma_update(None, "secure_delete", "FAST")?;
        schema::migrate(&conn, BUSY_TIMEOUT, path)?;
        pii::register(&conn)?;
        let index = if path == Path::new(":memory:") {
            search_index::attach(&conn, path)?;
            SearchIndex::within(search_index::SCHEMA)
        } else {
            // Opened when first needed; made from the messages then when missing (the first
            // search after an upgrade), brought up to date when behind.
            OnceCell::new()
        };
        Ok(Store::assemble(conn, path, None, SCHEMA_VERSION, index))
    }

    /// The one place a store is made, from its connection set up: read-only (`why` it
    /// cannot be written) or not, at the schema `version` read, with its index where
    /// found so far. Nothing checked, indexed or recorded yet.
    fn assemble(
        conn: Connection,
        path: &Path,
        read_only: Option<String>,
        version: i64,
        index: OnceCell<SearchIndex>,
    ) -> Store {
        Store {
            conn,
            ids: IdGenerator::new(),
            path: path.to_path_buf(),
            read_only,
            busy_timeout: BUSY_TIMEOUT,
            index,
            unindexed: Cell::new(false),
            versions_searched: Cell::new((0, 0)),
            version,
            disk_full: false,
            checked: Cell::new(false),
            sound: Cell::new(false),
            soundness_records: None,
            damaged: RefCell::new(None),
        }
    }

    /// How long this connection's writes wait for another writer before failing with
    /// [`StoreError::Busy`] (default [`BUSY_TIMEOUT`]). Zero fails at once: a caller that
    /// must not block (a UI saving as the operator types) retries later instead.
    pub fn set_busy_timeout(&mut self, timeout: Duration) -> Result<(), StoreError> {
        self.conn.busy_timeout(timeout)?;
        if let Some(index) = self.index.get().and_then(|i| i.conn.as_ref()) {
            index.busy_timeout(timeout)?;
        }
        self.busy_timeout = timeout;
        Ok(())
    }

    /// Why the database cannot be written, when it was opened read-only.
    pub fn read_only(&self) -> Option<&str> {
        self.read_only.as_deref()
    }

    /// Whether the database keeps queue items settled by hand and archived threads: every
    /// database this crosstalk writes does; one read without migrating from before
    /// [`schema::OBSERVED`] has neither (its threads then read as none archived).
    pub fn can_settle(&self) -> bool {
        self.version >= schema::OBSERVED
    }

    /// Whether the database keeps a POLL's relays per target: every database this crosstalk
    /// writes does; one read without migrating from before [`schema::PER_TARGET`] does not
    /// (its POLLs then read as relayed whole or not at all, as they were recorded).
    pub(crate) fn keeps_target_relays(&self) -> bool {
        self.version >= schema::PER_TARGET
    }

    /// The database file (`:memory:` for a database in memory).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Starts a write transaction (see [`begin_immediate`]).
    pub(crate) fn begin_write(&self) -> Result<Transaction<'_>, StoreError> {
        self.check_writable()?;
        retry_busy(&self.conn, self.busy_timeout, &self.path, || {
            Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)
        })
    }

    /// Keeps, in `dir`, a record of the database's files each time this store closes them
    /// sound, and skips the check before the first write when a record says they are as a
    /// sound store left them (see [`soundness`]). For the binary's stores: a test's stores
    /// check every time.
    pub fn remember_soundness_in(&mut self, dir: PathBuf) {
        if self.read_only.is_none() && self.path != Path::new(":memory:") {
            self.soundness_records = Some(dir);
        }
    }

    /// Closes the database and records its files as sound, when this store checked them
    /// (or honoured a record) and found nothing damaged since. Closed first: the last
    /// connection's closing folds the log into the database, which changes both files.
    fn record_soundness(&mut self, dir: &Path) {
        if !self.sound.get() || self.damaged.borrow().is_some() {
            return;
        }
        let Ok(spare) = Connection::open_in_memory() else {
            return;
        };
        drop(self.index.take());
        if std::mem::replace(&mut self.conn, spare).close().is_ok() {
            soundness::remember_sound(dir, &self.path);
        }
    }

    /// Fails with [`StoreError::ReadOnly`] when the database was opened read-only (with
    /// [`StoreError::DiskFull`] when that was because the disk is full), and with
    /// [`StoreError::Corrupt`] when it is damaged. Before this store's first write, SQLite
    /// checks the database (`PRAGMA quick_check`: every page's structure, about a quarter
    /// of a second per 50 MB) when it is at most [`CHECKED_UP_TO`] bytes: a write into a
    /// damaged database could fail half done, or store what cannot be read back (an import
    /// stores its input before it reads it). A larger database is not checked as a whole;
    /// a statement that meets a damaged page then stops this store's writes. Nor is one
    /// whose files a record says are as a sound store of this desk left them
    /// ([`Store::remember_soundness_in`]): the check is then a cost with nothing to find.
    pub(crate) fn check_writable(&self) -> Result<(), StoreError> {
        if let Some(why) = &self.read_only {
            return Err(match self.disk_full {
                true => StoreError::DiskFull {
                    path: self.path.clone(),
                },
                false => StoreError::ReadOnly {
                    path: self.path.clone(),
                    why: why.clone(),
                },
            });
        }
        if !self.checked.replace(true) && self.path != Path::new(":memory:") {
            let size = std::fs::metadata(&self.path).map_or(0, |m| m.len());
            let known = (self.soundness_records.as_deref())
                .is_some_and(|dir| soundness::known_sound(dir, &self.path));
            if known {
                self.sound.set(true);
            } else if size <= CHECKED_UP_TO {
                let found: String = self
                    .conn
                    .query_row("PRAGMA quick_check(1)", [], |r| r.get(0))
                    .or_else(|e| match e.sqlite_error_code() {
                        Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase) => {
                            Ok(e.to_string())
                        }
                        _ => Err(e),
                    })?;
                if found != "ok" {
                    // `*** in database main ***` and one line per problem: the first, on one line.
                    let first = (found.lines())
                        .find(|l| !l.starts_with("***") && !l.trim().is_empty())
                        .unwrap_or(&found);
                    *self.damaged.borrow_mut() = Some(first.trim().to_string());
                    if let Some(dir) = &self.soundness_records {
                        soundness::forget(dir, &self.path);
                    }
                } else {
                    self.sound.set(true);
                }
            }
        }
        match self.damaged.borrow().as_ref() {
            Some(detail) => Err(StoreError::Corrupt {
                path: self.path.clone(),
                detail: detail.clone(),
            }),
            None => Ok(()),
        }
    }

    /// `e` naming the database, and remembered when it says the database is damaged.
    fn locate_here(&self, e: StoreError) -> StoreError {
        let e = locate(e, &self.path, Some(self.busy_timeout));
        if let StoreError::Corrupt { detail, .. } = &e {
            self.damaged
                .borrow_mut()
                .get_or_insert_with(|| detail.clone());
            if let Some(dir) = &self.soundness_records {
                soundness::forget(dir, &self.path);
            }
        }
        e
    }

    /// Runs a write, turning SQLite's read-only, disk-full and busy errors into ones that
    /// name the database and say what to do.
    pub(crate) fn write<T>(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.check_writable()?;
        let r = f(self);
        r.map_err(|e| self.locate_here(e))
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
fn retry_busy<T>(
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

/// The largest database checked as a whole before a store's first write (see
/// [`Store::check_writable`]): about a second's reading.
pub const CHECKED_UP_TO: u64 = 256 << 20;

/// Below this many bytes free, an I/O error of SQLite's is taken for a full disk: it needs
/// room for a page of its log and for its shared memory (32 KiB) to go on.
const NEARLY_FULL: u64 = 256 << 10;

/// Whether `e` is SQLite failing for want of room on the disk holding `path`: "database or
/// disk is full", or "disk I/O error" there when that file system is (nearly) full, which is
/// how SQLite reports failing to make or grow its shared memory and log files.
fn is_disk_full(e: &StoreError, path: &Path) -> bool {
    let StoreError::Sqlite(e) = e else {
        return false;
    };
    match e.sqlite_error_code() {
        Some(ErrorCode::DiskFull) => true,
        Some(ErrorCode::SystemIoFailure | ErrorCode::CannotOpen) => {
            room_left(path).is_some_and(|free| free < NEARLY_FULL)
        }
        _ => false,
    }
}

/// The bytes free for this user on the file system holding `path` (its folder's, when the
/// file is not there yet).
fn room_left(path: &Path) -> Option<u64> {
    let at = if path.exists() { path } else { folder_of(path) };
    let s = rustix::fs::statvfs(at).ok()?;
    Some(s.f_bavail.saturating_mul(s.f_frsize))
}

/// Names the database in SQLite's read-only, disk-full, busy and damaged-database errors.
fn locate(e: StoreError, path: &Path, timeout: Option<Duration>) -> StoreError {
    if is_disk_full(&e, path) {
        return StoreError::DiskFull {
            path: path.to_path_buf(),
        };
    }
    let StoreError::Sqlite(inner) = &e else {
        return e;
    };
    match inner.sqlite_error_code() {
        Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase) => StoreError::Corrupt {
            path: path.to_path_buf(),
            detail: inner.to_string(),
        },
        Some(ErrorCode::ReadOnly) => StoreError::ReadOnly {
            path: path.to_path_buf(),
            why: "its file, folder or file system refuses writes".into(),
        },
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => StoreError::Busy {
            path: path.to_path_buf(),
            waited: timeout.unwrap_or(BUSY_TIMEOUT),
        },
        _ => e,
    }
}

/// Whether SQLite refused a write because the database or its folder cannot be written.
fn is_read_only(e: &StoreError) -> bool {
    let StoreError::Sqlite(e) = e else {
        return false;
    };
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::ReadOnly | ErrorCode::CannotOpen | ErrorCode::PermissionDenied)
    )
}

/// Why an existing database cannot be written, judged from permissions (SQLite needs to
/// write the file, and to create its `-wal` and `-shm` files next to it).
/// The folder a file named `path` is in: its parent, or the current folder for a bare name
/// (whose parent is the empty path). Where files beside it are made and renamed into place.
pub fn folder_of(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

fn unwritable(path: &Path) -> Option<String> {
    let writable = |p: &Path| {
        std::fs::metadata(p)
            .map(|m| !m.permissions().readonly())
            .unwrap_or(false)
    };
    if !writable(path) {
        return Some("the file is not writable".into());
    }
    let dir = folder_of(path);
    // The folder: the permission bits say too little (another owner, ACLs), so try.
    let probe = dir.join(format!(
        ".{}.crosstalk-probe-{}",
        path.file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default(),
        std::process::id()
    ));
    match std::fs::File::create(&probe) {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            None
        }
        // SQLite's files exist already (another process has it open): it can go on
        // using them.
        Err(_) if shm_exists(path) => None,
        Err(e) => Some(format!("its folder is not writable: {e}")),
    }
}

fn shm_exists(path: &Path) -> bool {
    beside(path, "-shm").exists() && beside(path, "-wal").exists()
}

/// Every file a database at `path` may have: `path` followed by each of these. SQLite's own
/// beside the database (its log, shared memory and journal), the full-text index's file
/// (`search_index`) and SQLite's own beside that.
pub const DATABASE_FILES: [&str; 8] = [
    "",
    "-wal",
    "-shm",
    "-journal",
    "-search",
    "-search-wal",
    "-search-shm",
    "-search-journal",
];

/// The file SQLite keeps beside database `path` under `suffix` (`-wal`, `-shm`, `-journal`).
pub fn beside(path: &Path, suffix: &str) -> std::path::PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(suffix);
    p.into()
}

/// `path` as the path of a `file:` URI (`%`, `?` and `#` escaped).
fn url_path(path: &Path) -> String {
    let mut out = String::new();
    for c in path.to_string_lossy().chars() {
        match c {
            '%' => out.push_str("%25"),
            '?' => out.push_str("%3f"),
            '#' => out.push_str("%23"),
            c => out.push(c),
        }
    }
    out
}

impl Store {
    /// The full-text index: the schema holding it, and the connection it is read and written
    /// through. Found at the first call (see `find_index`).
    pub(crate) fn searched(&self) -> (&'static str, &Connection) {
        let index = self.index.get_or_init(|| self.find_index());
        (index.schema, index.conn.as_ref().unwrap_or(&self.conn))
    }

    /// The index of a database file: its own file, attached to a connection of its own; for a
    /// read-only store, attached to the store's connection when the file is there and current.
    /// Otherwise (missing or behind and this process may not write it, or no file can be made
    /// beside the database) one in memory, for as long as the store is open, made from the
    /// messages by the next catching up.
    fn find_index(&self) -> SearchIndex {
        let why = if self.read_only.is_some() {
            match search_index::attach_for_reading(&self.conn, &self.path) {
                Ok(true) => {
                    return SearchIndex {
                        schema: search_index::SCHEMA,
                        conn: None,
                    };
                }
                Ok(false) => "missing or behind, and read-only".to_string(),
                Err(e) => e.to_string(),
            }
        } else {
            match search_index::open(&self.path, self.busy_timeout) {
                Ok(conn) => {
                    return SearchIndex {
                        schema: search_index::SCHEMA,
                        conn: Some(conn),
                    };
                }
                Err(e) => e.to_string(),
            }
        };
        tracing::debug!(
            "{}: search index kept in memory: {why}",
            self.path.display()
        );
        // Should even this fail, searching says so: its table is missing.
        if let Err(e) = self.conn.execute_batch(&search_index::create_sql("temp")) {
            tracing::debug!("{}: no search index in memory: {e}", self.path.display());
        }
        SearchIndex {
            schema: "temp",
            conn: None,
        }
    }

    /// Brings the full-text index up to the database (see `search_index`): the store's own
    /// index file, or for a read-only store the index it made in memory. The changes applied
    /// are then forgotten, without waiting for another writer (the next time will do).
    pub(crate) fn catch_up_search(&self) {
        self.unindexed.set(false);
        let (schema, index) = self.searched();
        // A read-only store may write only an index in memory: the file it reads is current
        // (or it would not read it), and an older database's inside one cannot be written.
        if self.read_only.is_some() && schema != "temp" {
            return;
        }
        match search_index::catch_up(index, schema) {
            // Only the index file applies changes for everyone: one in memory leaves them.
            Ok(true) if self.read_only.is_none() && schema == search_index::SCHEMA => {
                let waits = self.conn.busy_timeout(Duration::ZERO);
                search_index::prune_changes(index, &self.conn, schema);
                if waits.is_ok() {
                    let _ = self.conn.busy_timeout(self.busy_timeout);
                }
            }
            Ok(_) => {}
            Err(e) => tracing::debug!(
                "{}: search index not brought up to date: {e}",
                self.path.display()
            ),
        }
    }
}

/// The `headers` and `meta` columns of an envelope: its headers (a value that `cols` holds
/// left out, see `texts::encode_headers`) and its META blocks (see `meta_column`), in the
/// order received (query.rs reads them back).
pub(crate) fn envelope_columns(
    env: &crate::protocol::Envelope,
    cols: &texts::HeaderColumns<'_>,
) -> (String, String) {
    (
        texts::encode_headers(&env.headers, cols),
        meta_column::encode(&env.meta),
    )
}

/// Makes a database this process just created, and the log and shared memory SQLite made
/// beside it, readable by their owner only: the conversations are the operator's, as backups,
/// exports and keys are (SQLite gives a log it makes later the database's mode). Done after
/// SQLite made the file, not before it: another process may be creating the same database
/// at the same moment, and an empty file made ahead of SQLite changed how they took turns.
fn owner_only(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    for p in ["", "-wal", "-shm"].map(|suffix| beside(path, suffix)) {
        if p.exists() {
            if let Err(e) = std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)) {
                tracing::debug!("{}: mode not set: {e}", p.display());
            }
        }
    }
}

/// The current time as RFC 3339 with a fixed six-digit fraction, so that stored times sort
/// correctly as text.
pub(crate) fn now() -> String {
    jiff::fmt::temporal::DateTimePrinter::new()
        .precision(Some(6))
        .timestamp_to_string(&jiff::Timestamp::now())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Options;

    /// A new database, its log and the folders made for it are the owner's alone.
    #[test]
    fn a_new_database_is_readable_by_its_owner_only() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("made/for/it/c.db");
        let mut store = Store::open(&path).unwrap();
        let text = include_str!("../../assets/examples/v11-request.crosstalk");
        store.import_text("t", text, &Options::default()).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(&dir.path().join("made/for/it/c.db-wal")), 0o600);
        assert_eq!(mode(&dir.path().join("made/for/it")), 0o700);
        assert_eq!(mode(&dir.path().join("made")), 0o700);
    }

    fn envelopes(ids: &IdGenerator, n: usize) -> String {
        let t = ids.next_id();
        (0..n)
            .map(|i| {
                format!(
                    "[[CLAUDE→CHATGPT v1]]\nthread: {t}\nmessage: {}\nintent: INFORM\nbody: |\n  \
                     {i} {}\n[[END]]\n",
                    ids.next_id(),
                    "filler words to take some room ".repeat(20)
                )
            })
            .collect()
    }

    fn page_size(store: &Store) -> i64 {
        store
            .conn
            .query_row("PRAGMA page_size", [], |r| r.get(0))
            .unwrap()
    }

    #[test]
    fn a_new_database_has_16_kib_pages_and_an_existing_one_keeps_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new.db");
        let ids = IdGenerator::new();
        let text = envelopes(&ids, 50);
        let mut store = Store::open(&path).unwrap();
        assert_eq!(page_size(&store), 16384);
        store
            .import_text("test", &text, &Options::default())
            .unwrap();
        drop(store);
        let store = Store::open(&path).unwrap();
        assert_eq!(page_size(&store), 16384);
        assert_eq!(
            store.thread_rows("", 10).unwrap()[0].summary.message_count,
            50
        );

        // A database made with SQLite's default pages (as earlier versions made them): the
        // pragma must neither fail nor change it, and it reads and writes as before.
        let old = dir.path().join("old.db");
        let conn = Connection::open(&old).unwrap();
        conn.execute_batch("CREATE TABLE t (x); DROP TABLE t;")
            .unwrap();
        drop(conn);
        let mut store = Store::open(&old).unwrap();
        assert_eq!(page_size(&store), 4096);
        store
            .import_text("test", &text, &Options::default())
            .unwrap();
        assert_eq!(
            store.thread_rows("", 10).unwrap()[0].summary.message_count,
            50
        );
    }

    #[test]
    fn a_full_disk_names_the_database_and_says_to_free_space() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("full.db");
        let mut store = Store::open(&path).unwrap();
        let ids = IdGenerator::new();
        let opts = Options::default();
        store
            .import_text("first", &envelopes(&ids, 10), &opts)
            .unwrap();
        // The database may not grow: the disk is as good as full.
        let pages: i64 = store
            .conn
            .query_row("PRAGMA page_count", [], |r| r.get(0))
            .unwrap();
        let _: i64 = store
            .conn
            .query_row(&format!("PRAGMA max_page_count = {pages}"), [], |r| {
                r.get(0)
            })
            .unwrap();
        let big = envelopes(&ids, 2000);
        let e = store.import_text("big", &big, &opts).unwrap_err();
        assert!(matches!(e, StoreError::DiskFull { .. }), "{e:?}");
        let msg = e.to_string();
        assert!(msg.starts_with(&path.display().to_string()), "{msg}");
        assert!(msg.contains("free some space"), "{msg}");
        assert!(store.integrity_check().unwrap());

        // With room again, the same import goes through.
        let _: i64 = store
            .conn
            .query_row("PRAGMA max_page_count = 1000000", [], |r| r.get(0))
            .unwrap();
        let r = store.import_text("big", &big, &opts).unwrap();
        assert_eq!(r.count(crate::store::Outcome::Imported), 2000);
    }

    #[test]
    fn a_write_that_waits_longer_than_its_timeout_says_the_database_was_busy() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("busy.db");
        let mut a = Store::open(&path).unwrap();
        let b = Store::open(&path).unwrap();
        b.conn.execute_batch("BEGIN IMMEDIATE").unwrap();
        a.set_busy_timeout(Duration::from_millis(50)).unwrap();
        let e = a.mark_seen("t").unwrap_err();
        assert!(e.is_busy(), "{e:?}");
        assert!(
            e.to_string().starts_with(&path.display().to_string()),
            "{e}"
        );
        // A zero timeout fails at once.
        a.set_busy_timeout(Duration::ZERO).unwrap();
        let start = Instant::now();
        assert!(a.mark_seen("t").unwrap_err().is_busy());
        assert!(start.elapsed() < Duration::from_secs(1));
        b.conn.execute_batch("COMMIT").unwrap();
        a.mark_seen("t").unwrap();
    }
}
