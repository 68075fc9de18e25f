//! The files of a database as the disk has them: whether they can be written, whether the
//! disk is full, the names SQLite gives the files beside it, and errors that name the file.

use std::path::Path;
use std::time::Duration;

use rusqlite::ErrorCode;

use crate::store::{BUSY_TIMEOUT, StoreError};

/// The largest database checked as a whole before a store's first write (see
/// [`Store::check_writable`]): about a second's reading.
pub(crate) const CHECKED_UP_TO: u64 = 256 << 20;

/// Below this many bytes free, an I/O error of SQLite's is taken for a full disk: it needs
/// room for a page of its log and for its shared memory (32 KiB) to go on.
pub(in crate::store) const NEARLY_FULL: u64 = 256 << 10;

/// Whether `e` is SQLite failing for want of room on the disk holding `path`: "database or
/// disk is full", or "disk I/O error" there when that file system is (nearly) full, which is
/// how SQLite reports failing to make or grow its shared memory and log files.
pub(in crate::store) fn is_disk_full(e: &StoreError, path: &Path) -> bool {
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
pub(in crate::store) fn room_left(path: &Path) -> Option<u64> {
    let at = if path.exists() { path } else { folder_of(path) };
    let s = rustix::fs::statvfs(at).ok()?;
    Some(s.f_bavail.saturating_mul(s.f_frsize))
}

/// Names the database in SQLite's read-only, disk-full, busy and damaged-database errors.
pub(in crate::store) fn locate(
    e: StoreError,
    path: &Path,
    timeout: Option<Duration>,
) -> StoreError {
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
pub(in crate::store) fn is_read_only(e: &StoreError) -> bool {
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
pub(crate) fn folder_of(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

pub(in crate::store) fn unwritable(path: &Path) -> Option<String> {
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

pub(in crate::store) fn shm_exists(path: &Path) -> bool {
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
pub(in crate::store) fn url_path(path: &Path) -> String {
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

/// Makes a database this process just created, and the log and shared memory SQLite made
/// beside it, readable by their owner only: the conversations are the operator's, as backups,
/// exports and keys are (SQLite gives a log it makes later the database's mode). Done after
/// SQLite made the file, not before it: another process may be creating the same database
/// at the same moment, and an empty file made ahead of SQLite changed how they took turns.
pub(in crate::store) fn owner_only(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    for p in ["", "-wal", "-shm"].map(|suffix| beside(path, suffix)) {
        if p.exists() {
            if let Err(e) = std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)) {
                tracing::debug!("{}: mode not set: {e}", p.display());
            }
        }
    }
}
