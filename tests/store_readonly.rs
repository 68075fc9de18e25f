//! Databases that cannot be written: a read-only file, a read-only folder, a full disk. The
//! commands that only read (threads, show, search, export) work on them; writes fail with an
//! error that names the file and says what to do.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crosstalk::protocol::{IdGenerator, Options};
use crosstalk::store::{Outcome, Store, StoreError};

fn conversation(ids: &IdGenerator) -> (String, String) {
    let (t, m) = (ids.next_id(), ids.next_id());
    let text = format!(
        "[[CLAUDE→CHATGPT v1]]\nthread: {t}\nmessage: {m}\ncontext: storage review\n\
         intent: REQUEST\nbody: |\n  Is the backfill done?\n[[END]]\n"
    );
    (t, text)
}

/// A database holding one thread, closed; returns the thread's id.
fn filled(path: &Path, ids: &IdGenerator) -> String {
    let (t, text) = conversation(ids);
    let mut store = Store::open(path).unwrap();
    let r = store
        .import_text("fixture", &text, &Options::default())
        .unwrap();
    assert_eq!(r.count(Outcome::Imported), 1);
    t
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Whether this process can still create files in `dir` (root ignores permissions).
fn can_write_in(dir: &Path) -> bool {
    let probe = dir.join("probe");
    let ok = std::fs::write(&probe, b"x").is_ok();
    let _ = std::fs::remove_file(&probe);
    ok
}

/// Reading works; every kind of write fails with a read-only error naming `path`.
fn assert_reads_but_refuses_writes(path: &Path, thread: &str) {
    let mut store = Store::open(path).unwrap_or_else(|e| panic!("open read-only: {e}"));
    assert!(store.read_only().is_some());
    assert_eq!(store.threads(10).unwrap().len(), 1);
    let view = store.thread(thread).unwrap().unwrap();
    assert_eq!(view.messages.len(), 1);
    assert_eq!(store.search("backfill", 10).unwrap().len(), 1);

    let ids = IdGenerator::new();
    let (_, text) = conversation(&ids);
    let errors = [
        store
            .import_text("more", &text, &Options::default())
            .map(|_| ()),
        store.mark_seen(thread),
        store.delete_draft("x"),
        store
            .create_reply(&view.messages[0].id, "kalle", None, "reply", "kalle")
            .map(|_| ()),
        store
            .erase(&crosstalk::store::EraseTarget::Thread(thread.to_string()))
            .map(|_| ()),
    ];
    for e in errors {
        let e = e.expect_err("a write to a read-only database succeeded");
        assert!(matches!(e, StoreError::ReadOnly { .. }), "{e:?}");
        let msg = e.to_string();
        assert!(msg.starts_with(&path.display().to_string()), "{msg}");
        assert!(
            msg.contains("read-only") && msg.contains("writable"),
            "{msg}"
        );
    }
    drop(store);
}

fn paths() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.db");
    (dir, path)
}

#[test]
fn a_read_only_file_is_read_and_writes_are_refused_with_its_name() {
    let (_dir, path) = paths();
    let thread = filled(&path, &IdGenerator::new());
    let before = std::fs::read(&path).unwrap();
    chmod(&path, 0o444);
    assert_reads_but_refuses_writes(&path, &thread);
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "the file was changed"
    );
    chmod(&path, 0o644);
    // Writable again, it is written again.
    let mut store = Store::open(&path).unwrap();
    assert!(store.read_only().is_none());
    store.mark_seen(&thread).unwrap();
}

#[test]
fn a_read_only_folder_is_read_and_writes_are_refused_with_its_name() {
    let (dir, path) = paths();
    let thread = filled(&path, &IdGenerator::new());
    chmod(dir.path(), 0o555);
    if can_write_in(dir.path()) {
        chmod(dir.path(), 0o755);
        println!("skipped: this process writes in a read-only folder (it runs as root)");
        return;
    }
    // Closed cleanly, the database has no `-wal` or `-shm` next to it, and none can be
    // made: it is read as it is.
    assert_reads_but_refuses_writes(&path, &thread);
    chmod(dir.path(), 0o755);
}

#[test]
fn a_missing_database_in_a_read_only_folder_names_the_folder() {
    let (dir, _) = paths();
    let sub = dir.path().join("locked");
    std::fs::create_dir(&sub).unwrap();
    chmod(&sub, 0o555);
    if can_write_in(&sub) {
        chmod(&sub, 0o755);
        println!("skipped: this process writes in a read-only folder (it runs as root)");
        return;
    }
    let path = sub.join("new.db");
    let e = Store::open(&path).err().expect("a database was created");
    chmod(&sub, 0o755);
    let msg = e.to_string();
    assert!(msg.starts_with(&path.display().to_string()), "{msg}");
    assert!(
        msg.contains("cannot create") && msg.contains("writable"),
        "{msg}"
    );
    assert!(!path.exists());
}

#[test]
fn a_newer_database_that_is_read_only_is_still_refused() {
    let (_dir, path) = paths();
    filled(&path, &IdGenerator::new());
    let raw = rusqlite::Connection::open(&path).unwrap();
    raw.pragma_update(None, "user_version", 99).unwrap();
    drop(raw);
    chmod(&path, 0o444);
    let e = Store::open(&path)
        .err()
        .expect("a newer database was opened");
    assert!(matches!(e, StoreError::TooNew { found: 99, .. }), "{e:?}");
}
