//! Writes the database could not take when asked: another process holds its write lock (a
//! long `crosstalk import`), or the disk is full. The app never waits for the database on a
//! key press; what the operator typed or pasted stays in memory, is retried on the
//! runtime's tick, and is written to a file beside the database when the app ends before
//! the database took it.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::ErrorCode;

use crate::app::{App, Level};
use crate::protocol::Envelope;
use crate::store::StoreError;

/// How long the app's connection waits for another connection's write lock: short enough
/// that a key press never waits noticeably, long enough to ride out a reader's brief lock.
pub(crate) const APP_BUSY_TIMEOUT: Duration = Duration::from_millis(5);

/// How long quitting waits for the database to take drafts still pending.
pub(crate) const QUIT_WAIT: Duration = Duration::from_secs(5);

/// Why the database did not take a write, in words for the status line.
pub fn cause(e: &anyhow::Error) -> String {
    match kind(e) {
        Some(Kind::Busy) => "database busy (another process is writing, e.g. an import)".into(),
        Some(Kind::DiskFull) => "disk full".into(),
        Some(Kind::ReadOnly) => "database is read-only".into(),
        None => format!("{e:#}"),
    }
}

/// Whether `e` is another connection holding the database's lock.
pub(crate) fn is_busy(e: &anyhow::Error) -> bool {
    kind(e) == Some(Kind::Busy)
}

/// The write failures the app answers differently from any other error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Busy,
    DiskFull,
    ReadOnly,
}

/// Reads the kind from the store's own errors (which name the database) or from SQLite's
/// code where an error came through unnamed.
fn kind(e: &anyhow::Error) -> Option<Kind> {
    e.chain().find_map(|c| {
        let code = match c.downcast_ref::<StoreError>() {
            Some(s) if s.is_busy() => return Some(Kind::Busy),
            Some(StoreError::DiskFull { .. }) => return Some(Kind::DiskFull),
            Some(StoreError::ReadOnly { .. }) => return Some(Kind::ReadOnly),
            Some(StoreError::Sqlite(s)) => s.sqlite_error_code(),
            _ => c.downcast_ref::<rusqlite::Error>()?.sqlite_error_code(),
        }?;
        match code {
            ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked => Some(Kind::Busy),
            ErrorCode::DiskFull => Some(Kind::DiskFull),
            ErrorCode::ReadOnly => Some(Kind::ReadOnly),
            _ => None,
        }
    })
}

/// A draft the database has not taken yet: the newest version of one message's draft.
#[derive(Debug, Clone)]
pub struct PendingDraft {
    /// The envelope the form makes.
    pub env: Envelope,
    /// The envelope as it will be copied.
    pub text: String,
    /// The form, as a draft row keeps it.
    pub form: String,
}

impl PendingDraft {
    /// The draft's message id.
    pub fn id(&self) -> &str {
        self.env.message().unwrap_or("")
    }
}

/// Writes `text` to a new file named `<prefix>-<time>.txt`, readable by its owner only:
/// beside the database when that folder takes it, else in the temporary folder. Returns
/// where it went.
pub(crate) fn write_aside(db: Option<&Path>, prefix: &str, text: &str) -> anyhow::Result<PathBuf> {
    let stamp = jiff::Timestamp::now()
        .strftime("%Y%m%dT%H%M%SZ")
        .to_string();
    let beside = db.and_then(Path::parent).map(|d| {
        if d.as_os_str().is_empty() {
            Path::new(".")
        } else {
            d
        }
    });
    let mut errors = Vec::new();
    for dir in beside.into_iter().chain([std::env::temp_dir().as_path()]) {
        match write_new(dir, &format!("{prefix}-{stamp}"), text) {
            Ok(p) => return Ok(p),
            Err(e) => errors.push(format!("{}: {e}", dir.display())),
        }
    }
    Err(anyhow::anyhow!(
        "cannot write the text to a file ({})",
        errors.join("; ")
    ))
}

/// The files [`write_aside`] left beside the database under `prefix`, oldest first (their
/// names carry the time).
pub(crate) fn written_aside(db: Option<&Path>, prefix: &str) -> Vec<PathBuf> {
    let Some(dir) = db.and_then(Path::parent) else {
        return Vec::new();
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                        n.starts_with(&format!("{prefix}-")) && n.ends_with(".txt")
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found
}

/// A new file `dir/<stem>.txt` (or `<stem>-2.txt`, …), mode 0600, holding `text`. A file
/// left half written (disk full) is removed.
fn write_new(dir: &Path, stem: &str, text: &str) -> std::io::Result<PathBuf> {
    let mut n = 1;
    loop {
        let name = if n == 1 {
            format!("{stem}.txt")
        } else {
            format!("{stem}-{n}.txt")
        };
        let path = dir.join(name);
        let mut opts = std::fs::OpenOptions::new();
        opts.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
        match opts.open(&path) {
            Ok(mut f) => {
                let written = f.write_all(text.as_bytes()).and_then(|()| f.sync_all());
                return match written {
                    Ok(()) => Ok(path),
                    Err(e) => {
                        drop(f);
                        let _ = std::fs::remove_file(&path);
                        Err(e)
                    }
                };
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 100 => n += 1,
            Err(e) => return Err(e),
        }
    }
}

impl App {
    /// Whether something waits for the database (the runtime then ticks more often).
    pub fn has_pending(&self) -> bool {
        !self.pending_drafts.is_empty()
            || !self.pending_seen.is_empty()
            || !self.pending_copied.is_empty()
            || self.stale
            || matches!(&self.popup, Some(crate::app::Popup::Preview(p)) if p.unsaved.is_some())
    }

    /// Keeps `draft` to be saved later (replacing an older version of the same draft).
    pub(in crate::app) fn keep_pending(&mut self, draft: PendingDraft) {
        self.pending_drafts.retain(|d| d.id() != draft.id());
        self.pending_drafts.push(draft);
    }

    /// The runtime's tick: retries what the database did not take, and reads again what
    /// could not be read.
    pub(in crate::app) fn retry_pending(&mut self) {
        let mut saved = 0;
        while let Some(d) = self.pending_drafts.first() {
            match self.store.save_draft(&d.env, &d.text, &d.form) {
                Ok(at) => {
                    let d = self.pending_drafts.remove(0);
                    if let Some(c) = self.composer.as_mut() {
                        if c.form.message == d.id() {
                            c.saved_at = Some(at);
                            c.unsaved = None;
                        }
                    }
                    saved += 1;
                }
                Err(e) => {
                    let why = cause(&e.into());
                    if let Some(c) = self.composer.as_mut() {
                        if c.unsaved.is_some() {
                            c.unsaved = Some(why);
                        }
                    }
                    break;
                }
            }
        }
        if saved > 0 {
            // A retried save may be a draft's first: its ✎ and the count appear now.
            if let Err(e) = self.drafts_changed() {
                tracing::debug!("draft markers not refreshed yet: {e:#}");
            }
        }
        if saved > 0 && self.pending_drafts.is_empty() {
            self.info(if saved == 1 {
                "Draft saved (the database is free again).".to_string()
            } else {
                format!("{saved} drafts saved (the database is free again).")
            });
        }
        while let Some(id) = self.pending_seen.first() {
            if self.store.mark_seen(id).is_err() {
                break;
            }
            self.pending_seen.remove(0);
        }
        let copied = self.pending_copied.len();
        while let Some(id) = self.pending_copied.first() {
            if self.store.mark_copied(id).is_err() {
                break;
            }
            self.pending_copied.remove(0);
            let _ = self.recount_drafts();
        }
        if copied > 0 && self.pending_copied.is_empty() {
            // The list's awaiting-reply markers follow.
            self.stale = true;
        }
        if self.stale {
            match self.list.reload(&self.store) {
                Ok(()) => {
                    self.stale = false;
                    if self.status.0 != Level::Info || self.status.1.starts_with("Database busy") {
                        self.info("The database is free again; the list is current.");
                    }
                }
                Err(e) => {
                    let e = anyhow::Error::from(e);
                    if !is_busy(&e) {
                        self.stale = false;
                        self.error(format!("{e:#}"));
                    }
                }
            }
        }
        if let Err(e) = self.retry_unsaved_paste() {
            tracing::warn!("retrying the paste: {e:#}");
        }
    }

    /// Before the app ends: where it was is remembered for the next start (see `resume`);
    /// drafts still pending get a bounded wait for the database, then go to files; an
    /// unsaved paste goes to a file. Returns what the operator must be told
    /// (printed after the terminal is restored).
    pub fn finish(&mut self, wait: Duration) -> Vec<String> {
        self.remember_place();
        let mut notes = Vec::new();
        if !self.pending_drafts.is_empty() {
            // One wait for all of them, not one per draft.
            let deadline = std::time::Instant::now() + wait;
            for d in std::mem::take(&mut self.pending_drafts) {
                let left = deadline.saturating_duration_since(std::time::Instant::now());
                let _ = self.store.set_busy_timeout(left);
                let Err(e) = self.store.save_draft(&d.env, &d.text, &d.form) else {
                    continue;
                };
                let why = cause(&e.into());
                match write_aside(self.settings.db_path.as_deref(), "crosstalk-draft", &d.text) {
                    Ok(p) => notes.push(format!(
                        "crosstalk: draft {} not saved in the database ({why}); written to {}",
                        d.id(),
                        p.display()
                    )),
                    Err(e) => notes.push(format!(
                        "crosstalk: draft {} not saved in the database ({why}) and {e:#}; its text:\n{}",
                        d.id(),
                        d.text
                    )),
                }
            }
            let _ = self.store.set_busy_timeout(APP_BUSY_TIMEOUT);
        }
        if let Some(crate::app::Popup::Preview(p)) = &mut self.popup {
            if let Some(u) = p.unsaved.as_mut() {
                if u.file.is_none() {
                    match write_aside(self.settings.db_path.as_deref(), "crosstalk-paste", &u.text)
                    {
                        Ok(path) => {
                            notes.push(format!(
                                "crosstalk: the paste was not saved in the database ({}); written to {}",
                                u.cause,
                                path.display()
                            ));
                            u.file = Some(path);
                        }
                        Err(e) => notes.push(format!(
                            "crosstalk: the paste was not saved in the database ({}) and {e:#}",
                            u.cause
                        )),
                    }
                }
            }
        }
        notes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_aside_are_private_and_never_overwrite() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("x.db");
        let a = write_aside(Some(&db), "crosstalk-paste", "one").unwrap();
        let b = write_aside(Some(&db), "crosstalk-paste", "two").unwrap();
        assert_ne!(a, b);
        assert_eq!(a.parent(), Some(dir.path()));
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "one");
        assert_eq!(std::fs::read_to_string(&b).unwrap(), "two");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(&a).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        // A folder that does not exist: the temporary folder takes it.
        let c = write_aside(Some(&dir.path().join("gone/x.db")), "crosstalk-test", "3").unwrap();
        assert!(c.starts_with(std::env::temp_dir()), "{}", c.display());
        std::fs::remove_file(c).unwrap();
    }

    #[test]
    fn causes_are_named() {
        let busy = rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
            None,
        );
        let e = anyhow::Error::from(StoreError::from(busy));
        assert!(is_busy(&e));
        assert!(cause(&e).starts_with("database busy"));
        let full = rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_FULL),
            None,
        );
        let e = anyhow::Error::from(StoreError::from(full));
        assert!(!is_busy(&e));
        assert_eq!(cause(&e), "disk full");
    }
}
