//! What a database's files looked like when this desk last left them sound, so that the
//! check before a process's first write ([`crate::store::Store::check_writable`]) is not paid again
//! by the next command when nothing has touched the files since.
//!
//! `PRAGMA quick_check` reads every page: about a quarter of a second for a 100 MB history,
//! more than the rest of a one-paste `crosstalk import`. A script importing one paste at a
//! time would pay it at every call, for files no one else wrote in between. So a store that
//! closes with its database found sound (checked, or checked by an earlier record and written
//! only through SQLite since) records the files' identity and times — inode, size, and the
//! modification and change times to the nanosecond of the database and its log — in the
//! state directory; the next store that finds the files exactly so skips the check. Anything
//! that writes the files meanwhile (another tool, a restore, a damaged copy put in place)
//! changes their change time, which no one but the kernel sets, and the check runs again.
//!
//! What a record cannot see: a write in the same tick of the kernel's clock as the record
//! (a few milliseconds), or damage by the disk itself beneath an unchanged file. The first
//! is a race no operator runs; the second is what SQLite's own checksums of the log and a
//! statement meeting a damaged page (which stops this store's writes) are for.

use std::path::{Path, PathBuf};

/// The files' identity and times, as one line; `None` where they cannot be read (or on a
/// platform without inode numbers), which means "check".
fn fingerprint(db: &Path) -> Option<String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let one = |path: &Path| -> Option<String> {
            match std::fs::metadata(path) {
                Ok(m) if m.len() > 0 => Some(format!(
                    "{}:{} {} {}.{:09} {}.{:09}",
                    m.dev(),
                    m.ino(),
                    m.len(),
                    m.mtime(),
                    m.mtime_nsec(),
                    m.ctime(),
                    m.ctime_nsec()
                )),
                // An empty or missing log holds nothing to check: SQLite makes one at every
                // opening and may truncate it at every closing.
                Ok(_) => Some("none".into()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some("none".into()),
                Err(_) => None,
            }
        };
        let mut wal = db.as_os_str().to_owned();
        wal.push("-wal");
        Some(format!("{} | {}", one(db)?, one(Path::new(&wal))?))
    }
    #[cfg(not(unix))]
    {
        let _ = db;
        None
    }
}

/// The record of `db` in `dir`: named by a digest of the database's full path, so two
/// databases never share one and a path's characters never make a file name.
fn record(dir: &Path, db: &Path) -> Option<PathBuf> {
    use sha2::{Digest, Sha256};
    let full = std::fs::canonicalize(db).ok()?;
    let digest = Sha256::digest(full.as_os_str().as_encoded_bytes());
    let name: String = digest[..12].iter().map(|b| format!("{b:02x}")).collect();
    Some(dir.join(name))
}

/// Whether `db`'s files are exactly as a store that left them sound recorded them in `dir`.
pub(in crate::store) fn known_sound(dir: &Path, db: &Path) -> bool {
    let (Some(record), Some(now)) = (record(dir, db), fingerprint(db)) else {
        return false;
    };
    std::fs::read_to_string(record).is_ok_and(|was| was.trim_end() == now)
}

/// Records `db`'s files as they are now, as sound. Best effort: a record that cannot be
/// written only means the next store checks.
pub(in crate::store) fn remember_sound(dir: &Path, db: &Path) {
    let (Some(record), Some(now)) = (record(dir, db), fingerprint(db)) else {
        return;
    };
    let write = || -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        let mut file = tempfile::NamedTempFile::new_in(dir)?;
        std::io::Write::write_all(&mut file, format!("{now}\n").as_bytes())?;
        file.persist(&record).map_err(|e| e.error)?;
        Ok(())
    };
    let _ = write();
}

/// Forgets what was recorded of `db`: it was found damaged.
pub(in crate::store) fn forget(dir: &Path, db: &Path) {
    if let Some(record) = record(dir, db) {
        let _ = std::fs::remove_file(record);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_holds_while_the_files_are_untouched_and_not_after_a_write() {
        let dir = tempfile::tempdir().unwrap();
        let (records, db) = (dir.path().join("checked"), dir.path().join("a.db"));
        std::fs::write(&db, b"pages").unwrap();
        assert!(!known_sound(&records, &db), "known before any record");
        remember_sound(&records, &db);
        assert!(known_sound(&records, &db));

        // Another writer: same size, but the change time moves (the kernel sets it). Waiting
        // out the clock's tick is what makes the change visible to any stat.
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(&db, b"PAGES").unwrap();
        assert!(!known_sound(&records, &db), "a rewritten file still known");

        remember_sound(&records, &db);
        assert!(known_sound(&records, &db));
        // A log that appears with content is a change too; an empty one is not.
        let wal = dir.path().join("a.db-wal");
        std::fs::write(&wal, b"").unwrap();
        assert!(
            known_sound(&records, &db),
            "an empty log made the record stale"
        );
        std::fs::write(&wal, b"frames").unwrap();
        assert!(!known_sound(&records, &db), "a log with frames went unseen");

        remember_sound(&records, &db);
        forget(&records, &db);
        assert!(!known_sound(&records, &db));
    }

    /// Damages the page holding the root of the `messages` table.
    fn damage(path: &Path) {
        use std::io::{Seek, SeekFrom, Write};
        let raw = rusqlite::Connection::open(path).unwrap();
        let root: i64 = raw
            .query_row(
                "SELECT rootpage FROM sqlite_master WHERE name = 'messages'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        let page: i64 = raw
            .pragma_query_value(None, "page_size", |r| r.get(0))
            .unwrap();
        drop(raw);
        let mut f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
        f.seek(SeekFrom::Start(((root - 1) * page) as u64)).unwrap();
        f.write_all(&[0xde; 64]).unwrap();
    }

    /// A store that wrote leaves a record as it closes; a store that finds the files so
    /// skips the check (shown by a record made to match damaged files: it is trusted), and
    /// one that finds them changed checks and refuses, forgetting the record.
    #[test]
    fn a_store_left_sound_spares_the_next_its_check_and_a_change_brings_it_back() {
        use crate::protocol::Options;
        use crate::store::{Store, StoreError};
        let dir = tempfile::tempdir().unwrap();
        let (records, db) = (dir.path().join("checked"), dir.path().join("h.db"));
        let text = include_str!("../../../assets/examples/v11-request.crosstalk");
        let mut store = Store::open(&db).unwrap();
        store.remember_soundness_in(records.clone());
        store.import_text("t", text, &Options::default()).unwrap();
        drop(store);
        assert!(
            known_sound(&records, &db),
            "no record left by a sound store"
        );

        // Past the clock's tick, so that the damage is a visible change.
        std::thread::sleep(std::time::Duration::from_millis(20));
        damage(&db);
        assert!(
            !known_sound(&records, &db),
            "damage left the record standing"
        );
        let mut store = Store::open(&db).unwrap();
        store.remember_soundness_in(records.clone());
        assert!(matches!(
            store.check_writable(),
            Err(StoreError::Corrupt { .. })
        ));
        drop(store);
        assert!(!records.read_dir().unwrap().any(|_| true), "record kept");

        // A record that matches is trusted: the check is what it spares.
        remember_sound(&records, &db);
        let mut store = Store::open(&db).unwrap();
        store.remember_soundness_in(records.clone());
        assert!(
            store.check_writable().is_ok(),
            "a matching record was not trusted"
        );
        // Without records, the same files are checked.
        let store = Store::open(&db).unwrap();
        assert!(matches!(
            store.check_writable(),
            Err(StoreError::Corrupt { .. })
        ));
    }

    #[test]
    fn two_databases_keep_two_records() {
        let dir = tempfile::tempdir().unwrap();
        let records = dir.path().join("checked");
        let (a, b) = (dir.path().join("a.db"), dir.path().join("b.db"));
        std::fs::write(&a, b"a").unwrap();
        std::fs::write(&b, b"b").unwrap();
        remember_sound(&records, &a);
        assert!(known_sound(&records, &a));
        assert!(!known_sound(&records, &b));
        assert!(!known_sound(&records, &dir.path().join("missing.db")));
    }
}
