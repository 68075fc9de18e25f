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
//!
//! This module is the [`Store`] type, its constructor and the facade: the rooms below keep the
//! store's jobs apart — `schema` (versions, migrations), `importing` (text in, threads out),
//! `threading` (where a received message belongs, under which id), `read` (the history read
//! back), `fulltext` (search), `ledgers` (delivery, queue, consent, keys, polls), `relay` (what
//! goes out) and `maintenance` (the files, backups, erasure) — and the rest of the crate names
//! what they make as `crate::store::Thing`.

mod busy;
mod error;
mod fulltext;
mod importing;
mod ledgers;
mod maintenance;
mod read;
mod relay;
mod schema;
#[cfg(test)]
mod test_support;
mod threading;

// The facade: what the rest of the crate, the binary and the tests name, as `crate::store::Thing`.
pub(crate) use busy::{BUSY_TIMEOUT, PIECE_TIME};
pub use error::StoreError;
pub(crate) use fulltext::SearchHit;
pub use fulltext::{MAX_SEARCH_WORDS, RANKED_MATCHES, SearchResults};
pub(crate) use importing::{ImportItem, ImportSummary};
pub use importing::{ImportReport, Kept, Outcome};
pub(crate) use ledgers::{
    Added, KeyRow, PollView, QueueRow, SignatureCheck, TargetRelay, is_trust_alarm,
};
pub use ledgers::{
    Carried, Delivery, KeySource, MessageMatch, Queue, Section, Settled, StateFilter, ulid_time,
};
pub(crate) use maintenance::{CHECKED_UP_TO, EARLIER_COPIES, folder_of};
pub use maintenance::{DATABASE_FILES, EraseTarget, Erasure, beside};
pub use read::{Draft, StoredMessage, ThreadView};
pub(crate) use read::{
    DraftSave, DraftTaken, MessageLabel, ThreadKey, ThreadOutline, ThreadPage, ThreadRow,
    ThreadSummary,
};
pub use relay::reply_envelope;
pub(crate) use relay::{HopDecision, Waiting, reply_parties};
pub use schema::SCHEMA_VERSION;
pub use threading::MoveRefused;

pub(crate) use busy::{PIECE_PAUSE, begin_immediate};
#[cfg(test)]
pub(crate) use read::TreeRow;
pub(crate) use read::envelope_columns;

// The modules the rooms share, named from the store (`crate::store::texts`, `super::delivery`).
use busy::retry_busy;
use error::is_busy;
use fulltext::{SearchIndex, search_index};
use importing::{import, pieces, prepare, writer};
use ledgers::{delivery, keys};
use maintenance::{
    background, checkpointer, erase, is_disk_full, is_read_only, locate, owner_only, soundness,
    unwritable, url_path,
};
use read::{meta_column, paste_text, pii, query, texts};
use relay::hop;
use threading::{alias, conflict, cycle, fresh, v10_place};

use std::cell::{Cell, OnceCell, RefCell};
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, ErrorCode, OpenFlags, Transaction, TransactionBehavior};

use crate::ids::IdGenerator;

/// The default database: `crosstalk.db` in the platform data directory
/// (`$XDG_DATA_HOME/crosstalk/` on Linux).
pub(crate) fn default_path() -> Option<PathBuf> {
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
    pub(crate) fn open_for_reading(path: &Path) -> Result<Option<Store>, StoreError> {
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
    pub(crate) fn can_settle(&self) -> bool {
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
    pub(crate) fn remember_soundness_in(&mut self, dir: PathBuf) {
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
    use std::time::Instant;

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
