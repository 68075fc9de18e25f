//! A copy of the whole database, taken while it is in use.
//!
//! `export --all` writes what each message is now, which is what a reader wants back; it
//! leaves out what only the database holds (the raw pastes, conflicting versions, aliases of
//! replaced ids, the trust store, the delivery ledger, drafts). A backup must hold it all.
//! SQLite's `VACUUM INTO` writes a consistent snapshot of every table to a new file from one
//! read transaction: in WAL mode no writer waits for it and it waits for none, so the app and
//! imports go on while it runs, and the copy is compact (no free pages).

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};

use crate::store::{Store, StoreError};

/// What a backup wrote.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Backup {
    /// The copy.
    pub path: PathBuf,
    /// Its size in bytes.
    pub bytes: u64,
    /// Messages in it.
    pub messages: i64,
    /// Threads in it.
    pub threads: i64,
    /// Raw pastes in it.
    pub pastes: i64,
}

impl Store {
    /// Writes a copy of the whole database to `path` (0600), replacing a file there only
    /// with `replace`. The copy is written beside `path` and renamed into place once synced,
    /// so an interrupted backup never leaves half a database under its name.
    pub fn backup_to(&self, path: &Path, replace: bool) -> Result<Backup, StoreError> {
        let write_error = |error| StoreError::Write {
            path: path.to_path_buf(),
            error,
        };
        if !replace && path.exists() {
            return Err(StoreError::Exists {
                path: path.to_path_buf(),
            });
        }
        let dir = crate::store::folder_of(path);
        // An empty file is a valid target for `VACUUM INTO`; made by `tempfile`, it is
        // readable by its owner only, and removed if anything below fails.
        let tmp = tempfile::Builder::new()
            .prefix(".crosstalk-backup-")
            .tempfile_in(dir)
            .map_err(write_error)?;
        let target = tmp.path().to_str().ok_or_else(|| {
            write_error(std::io::Error::other(
                "its folder's name is not UTF-8, which SQLite cannot be given",
            ))
        })?;
        self.conn.execute("VACUUM INTO ?1", [target])?;
        tmp.as_file().sync_all().map_err(write_error)?;
        let counts = counts(tmp.path())?;
        let bytes = tmp.as_file().metadata().map_err(write_error)?.len();
        let persisted = match replace {
            true => tmp.persist(path),
            false => tmp.persist_noclobber(path),
        };
        persisted.map_err(|e| match e.error.kind() {
            std::io::ErrorKind::AlreadyExists => StoreError::Exists {
                path: path.to_path_buf(),
            },
            _ => write_error(e.error),
        })?;
        // The rename is durable once the folder is synced; a folder that cannot be opened
        // for that (some file systems) still holds the renamed file.
        if let Ok(d) = std::fs::File::open(dir) {
            let _ = d.sync_all();
        }
        let (messages, threads, pastes) = counts;
        Ok(Backup {
            path: path.to_path_buf(),
            bytes,
            messages,
            threads,
            pastes,
        })
    }
}

/// Messages, threads and pastes in the copy at `path`, read from the copy itself: a copy that
/// cannot be opened and read is an error, not a backup.
fn counts(path: &Path) -> Result<(i64, i64, i64), StoreError> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    Ok(conn.query_row(
        "SELECT (SELECT count(*) FROM messages), (SELECT count(*) FROM threads),
                (SELECT count(*) FROM pastes)",
        [],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Options;

    const ENVELOPE: &str = "[[CLAUDE\u{2192}CHATGPT v1.1]]\nuser: kalle\nthread: 01K0000000000000000000000A\nmessage: 01K0000000000000000000000B\nintent: REQUEST\nbody: |\n  hello\nsig: none\n[[END]]\n";

    #[test]
    fn a_backup_holds_every_table_and_refuses_to_replace_unless_asked() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("a.db")).unwrap();
        store
            .import_text("t", ENVELOPE, &Options::default())
            .unwrap();
        // What no export holds: a conflicting version of the message.
        let other = ENVELOPE.replace("hello", "hello, changed");
        store.import_text("t", &other, &Options::default()).unwrap();
        let copy = dir.path().join("copy.db");
        let b = store.backup_to(&copy, false).unwrap();
        assert_eq!((b.messages, b.threads, b.pastes), (1, 1, 2));
        assert_eq!(b.bytes, std::fs::metadata(&copy).unwrap().len());
        let raw = Connection::open(&copy).unwrap();
        let versions: i64 = raw
            .query_row("SELECT count(*) FROM message_versions", [], |r| r.get(0))
            .unwrap();
        assert_eq!(versions, 1);
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&copy).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        // Not replaced unless asked; replaced when asked.
        let err = store.backup_to(&copy, false).unwrap_err();
        assert!(err.to_string().contains("--force"), "{err}");
        store
            .import_text("t", &ENVELOPE.replace("0B", "0C"), &Options::default())
            .unwrap();
        let b = store.backup_to(&copy, true).unwrap();
        assert_eq!(b.messages, 2);
        // Nothing is left behind beside it.
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(".crosstalk-backup-"))
            .collect();
        assert!(names.is_empty(), "{names:?}");
    }

    #[test]
    fn a_backup_is_taken_while_another_writer_holds_the_database() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.db");
        let mut store = Store::open(&path).unwrap();
        store
            .import_text("t", ENVELOPE, &Options::default())
            .unwrap();
        let writer = Connection::open(&path).unwrap();
        writer
            .execute_batch("BEGIN IMMEDIATE; DELETE FROM messages;")
            .unwrap();
        // The copy is the committed state: the writer's uncommitted delete is not in it.
        let b = store.backup_to(&dir.path().join("copy.db"), false).unwrap();
        assert_eq!(b.messages, 1);
        writer.execute_batch("ROLLBACK").unwrap();
    }
}
