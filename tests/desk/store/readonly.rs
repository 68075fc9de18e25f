//! Databases that cannot be written: a read-only file, a read-only folder, a full disk, a
//! damaged file. The commands that only read (threads, show, search, export) work on them
//! (a damaged one as far as its pages can be read); writes fail with an error that names
//! the file and says what to do, and a damaged database is not written at all.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crosstalk::ids::IdGenerator;
use crosstalk::protocol::Options;
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

/// A tmpfs of `size` mounted on `dir` for as long as it lives, when this process may mount
/// one (root, with mount(8) at hand): a disk that really fills, without touching the one the
/// tests run on.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(dir: &Path, size: &str) -> Option<Tmpfs> {
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        mounted.then(|| Tmpfs(dir.to_path_buf()))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

/// Fills the file system holding `dir` to its last byte.
fn fill(dir: &Path) {
    use std::io::Write;
    let mut f = std::fs::File::create(dir.join("filler")).unwrap();
    for size in [1 << 16, 1 << 12, 1 << 9, 1] {
        let block = vec![0u8; size];
        while f.write_all(&block).and_then(|()| f.flush()).is_ok() {}
    }
    let _ = f.sync_all();
}

fn crosstalk(db: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_crosstalk"))
        .arg("--db")
        .arg(db)
        .args(args)
        .env("XDG_CONFIG_HOME", db.parent().unwrap())
        .env("XDG_STATE_HOME", db.parent().unwrap().join("state"))
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

/// Overwrites the start of the page holding the root of the `messages` table.
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

/// At 0 bytes free SQLite cannot make or grow its shared memory and log, and said "disk I/O
/// error" to every command, reads too. Reads now work (the database read as it is), and a
/// write says the disk is full and names the file.
#[test]
fn a_full_disk_is_read_and_writes_say_the_disk_is_full() {
    let (dir, _) = paths();
    let disk = dir.path().join("disk");
    std::fs::create_dir(&disk).unwrap();
    let Some(_mounted) = Tmpfs::mount(&disk, "4m") else {
        println!("skipped: no tmpfs can be mounted here (not root, or no mount(8))");
        return;
    };
    let path = disk.join("history.db");
    let thread = filled(&path, &IdGenerator::new());
    fill(&disk);

    let mut store = Store::open(&path).unwrap_or_else(|e| panic!("open on a full disk: {e}"));
    assert_eq!(store.read_only(), Some("the disk is full"));
    assert_eq!(store.threads(10).unwrap().len(), 1);
    assert_eq!(store.thread(&thread).unwrap().unwrap().messages.len(), 1);
    assert_eq!(store.search("backfill", 10).unwrap().len(), 1);
    let (_, text) = conversation(&IdGenerator::new());
    let e = store
        .import_text("more", &text, &Options::default())
        .expect_err("an import on a full disk succeeded");
    assert!(matches!(e, StoreError::DiskFull { .. }), "{e:?}");
    assert!(
        e.to_string().starts_with(&path.display().to_string()),
        "{e}"
    );
    drop(store);

    // The commands, as the operator runs them.
    for args in [
        vec!["threads"],
        vec!["show", thread.as_str()],
        vec!["search", "backfill"],
        vec!["export", thread.as_str()],
        vec!["keys", "list"],
        vec!["queue"],
        vec!["pastes"],
    ] {
        let out = crosstalk(&path, &args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let input = dir.path().join("more.txt");
    std::fs::write(&input, &text).unwrap();
    let out = crosstalk(&path, &["import", input.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("{}: the disk is full", path.display())),
        "{err}"
    );
}

/// A database whose pages are damaged is checked before the first write: an import refuses
/// before it stores its input (it used to keep the raw paste, then fail with a message
/// naming no file), and the error names the file and the ways back.
#[test]
fn a_damaged_database_is_refused_before_anything_is_written() {
    let (_dir, path) = paths();
    let thread = filled(&path, &IdGenerator::new());
    let pastes = |path: &Path| -> i64 {
        let raw = rusqlite::Connection::open(path).unwrap();
        raw.query_row("SELECT count(*) FROM pastes", [], |r| r.get(0))
            .unwrap()
    };
    let before = pastes(&path);
    damage(&path);

    let mut store = Store::open(&path).unwrap();
    let (_, text) = conversation(&IdGenerator::new());
    let e = store
        .import_text("more", &text, &Options::default())
        .expect_err("an import into a damaged database succeeded");
    assert!(matches!(e, StoreError::Corrupt { .. }), "{e:?}");
    let msg = e.to_string();
    assert!(msg.starts_with(&path.display().to_string()), "{msg}");
    assert!(
        msg.contains("damaged") && msg.contains("crosstalk backup") && msg.contains(".recover"),
        "{msg}"
    );
    // Nor any later write, nor through a new store.
    assert!(matches!(
        store.mark_seen(&thread),
        Err(StoreError::Corrupt { .. })
    ));
    drop(store);
    assert_eq!(
        pastes(&path),
        before,
        "the input was stored in a damaged database"
    );

    // The command names the file, and a read that meets the damage does too.
    let input = path.with_file_name("more.txt");
    std::fs::write(&input, &text).unwrap();
    for args in [
        vec!["import", input.to_str().unwrap()],
        vec!["show", &thread],
    ] {
        let out = crosstalk(&path, &args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(&format!("{}: the database is damaged", path.display())),
            "{args:?}: {err}"
        );
    }
    assert_eq!(pastes(&path), before);
}

/// A command that wrote leaves a record of the database's files as it closes them sound; the
/// next command finds them so and writes without reading every page first. A database
/// changed in between (here: damaged) is checked again and refused.
#[test]
fn the_check_before_writing_runs_again_only_when_the_files_changed() {
    let (dir, path) = paths();
    let records = dir.path().join("state/crosstalk/checked");
    let input = dir.path().join("one.txt");
    std::fs::write(&input, conversation(&IdGenerator::new()).1).unwrap();
    let out = crosstalk(&path, &["import", input.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let recorded = || std::fs::read_dir(&records).map_or(0, |d| d.count());
    assert_eq!(recorded(), 1, "no record of a database left sound");
    std::fs::write(&input, conversation(&IdGenerator::new()).1).unwrap();
    let out = crosstalk(&path, &["import", input.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // Past the clock's tick, so that the damage is a visible change.
    std::thread::sleep(std::time::Duration::from_millis(20));
    damage(&path);
    std::fs::write(&input, conversation(&IdGenerator::new()).1).unwrap();
    let out = crosstalk(&path, &["import", input.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("damaged"), "{err}");
    assert_eq!(recorded(), 0, "the record of a damaged database was kept");
}
