//! The store across processes: an import killed midway leaves a whole database that a second
//! run completes, two processes importing into one database at once both succeed, and a
//! writer that waits at most a couple of seconds is never starved by a long import.
//!
//! The child processes are this test binary itself: `crash_child` and `writer_child` do their
//! work only when their environment variable names a database, and pass trivially otherwise.

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crosstalk::ids::IdGenerator;
use crosstalk::protocol::{Options, extract, split_points};
use crosstalk::store::{Outcome, SCHEMA_VERSION, Store};
use crosstalk::synth::{TranscriptSpec, transcript};
use rusqlite::Connection;

/// Set to a database path, `crash_child` imports [`crash_spec`] into it.
const CRASH_ENV: &str = "CROSSTALK_CRASH_CHILD";
/// Set to a database path, `writer_child` imports the transcript of [`WRITER_SEED_ENV`].
const WRITER_ENV: &str = "CROSSTALK_WRITER_CHILD";
const WRITER_SEED_ENV: &str = "CROSSTALK_WRITER_SEED";
/// Printed by the crash child when the import has stored the input and started threading.
const THREADING: &str = "crash-child: threading started";
/// Printed by a writer child when it is done, with when it started and ended.
const RAN: &str = "writer-child: ran (ms since the epoch)";

/// Set to a number of envelopes, `crash_child` imports that many instead of [`crash_spec`]'s.
const CRASH_ENVELOPES_ENV: &str = "CROSSTALK_CRASH_ENVELOPES";

/// About 21 MB: big enough that threading it takes a while, in debug and release builds.
fn crash_spec() -> TranscriptSpec {
    let envelopes = std::env::var(CRASH_ENVELOPES_ENV)
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(30_000);
    TranscriptSpec {
        envelopes,
        threads: 1_500,
        seed: 21,
        mangled_percent: 5,
    }
}

fn writer_spec(seed: u64) -> TranscriptSpec {
    TranscriptSpec {
        envelopes: 4_000,
        threads: 200,
        seed,
        mangled_percent: 5,
    }
}

fn opts() -> Options {
    Options::default()
}

fn count(conn: &Connection, sql: &str) -> i64 {
    conn.query_row(sql, [], |r| r.get(0)).unwrap()
}

/// This test binary, running only the test `name` of this module, with the environment
/// variables `env`.
fn spawn_self(name: &str, env: &[(&str, &str)]) -> Child {
    let mut cmd = crate::helpers::common::this_test(module_path!(), name);
    cmd.args(["--nocapture", "--test-threads=1"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.spawn().unwrap()
}

/// Collects a child's output on a thread, so its pipe never fills.
fn drain(pipe: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut out = String::new();
        if let Some(mut p) = pipe {
            let _ = p.read_to_string(&mut out);
        }
        out
    })
}

/// Waits for `child` at most `cap`, killing it when the time is up.
fn wait_capped(child: &mut Child, cap: Duration) -> Option<ExitStatus> {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        if start.elapsed() > cap {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn wal(db: &Path) -> PathBuf {
    let mut p = db.as_os_str().to_owned();
    p.push("-wal");
    PathBuf::from(p)
}

/// Size and modification time of a file, if it exists.
fn stat(path: &Path) -> Option<(u64, std::time::SystemTime)> {
    let m = std::fs::metadata(path).ok()?;
    Some((m.len(), m.modified().ok()?))
}

// ---------------------------------------------------------------------------------------------
// Children

#[test]
fn crash_child() {
    let Some(path) = std::env::var_os(CRASH_ENV) else {
        return;
    };
    let text = transcript(&crash_spec());
    let mut store = Store::open(Path::new(&path)).unwrap();
    // Progress counts the stored bytes up to the input's size, then the threaded bytes from
    // the start again: the first smaller figure means threading has begun.
    let (mut last, mut threading) = (0, false);
    store
        .import_reader("crash.txt", &mut text.as_bytes(), &opts(), &mut |n| {
            if n < last && !threading {
                threading = true;
                println!("{THREADING}");
                let _ = std::io::Write::flush(&mut std::io::stdout());
            }
            last = n;
        })
        .unwrap();
    println!("crash-child: import finished");
}

#[test]
fn writer_child() {
    let Some(path) = std::env::var_os(WRITER_ENV) else {
        return;
    };
    let seed: u64 = std::env::var(WRITER_SEED_ENV).unwrap().parse().unwrap();
    let text = transcript(&writer_spec(seed));
    let start = unix_ms();
    let mut store = Store::open(Path::new(&path)).unwrap();
    // Several inputs with pauses between them, so the two writers take turns.
    for (i, range) in split_points(&text, 4).into_iter().enumerate() {
        if i > 0 {
            std::thread::sleep(Duration::from_millis(100));
        }
        let r = store
            .import_text(&format!("writer {seed} part {i}"), &text[range], &opts())
            .unwrap();
        assert!(r.count(Outcome::Imported) > 0);
    }
    assert!(store.integrity_check().unwrap());
    println!("{RAN} {start} {}", unix_ms());
}

fn unix_ms() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis()
}

/// When a writer child says it ran (milliseconds since the epoch, from and to).
fn ran(out: &str) -> Option<(u128, u128)> {
    let rest = out.split(RAN).nth(1)?;
    let mut words = rest.split_whitespace().map(str::parse::<u128>);
    Some((words.next()?.ok()?, words.next()?.ok()?))
}

// ---------------------------------------------------------------------------------------------
// Parents

#[test]
fn a_killed_import_leaves_a_whole_database_and_rerunning_completes_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("crash.db");
    let db_str = db.to_str().unwrap();
    let mut child = spawn_self("crash_child", &[(CRASH_ENV, db_str)]);

    // Watch for the child's word that threading began.
    let (tx, rx) = mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut seen = Vec::new();
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if line.contains(THREADING) {
                let _ = tx.send(());
            }
            seen.push(line);
        }
        seen.join("\n")
    });
    let stderr = drain(child.stderr.take());

    // Kill it once threading has begun and the write-ahead log is being written to, i.e. in
    // the middle of the import's big transaction.
    let start = Instant::now();
    let mut wal_at_threading = None;
    let killed = loop {
        if let Some(status) = child.try_wait().unwrap() {
            let (out, err) = (reader.join().unwrap(), stderr.join().unwrap());
            panic!(
                "the child finished ({status}) before it could be killed; make crash_spec \
                 bigger\nstdout:\n{out}\nstderr:\n{err}"
            );
        }
        if start.elapsed() > Duration::from_secs(30) {
            child.kill().unwrap();
            break false;
        }
        if wal_at_threading.is_none() && rx.try_recv().is_ok() {
            wal_at_threading = Some(stat(&wal(&db)));
        }
        if let Some(then) = &wal_at_threading {
            let now = stat(&wal(&db));
            let db_size = stat(&db).map_or(0, |(n, _)| n);
            if now.is_some() && now != *then && db_size > 0 {
                child.kill().unwrap();
                break true;
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let status = child.wait().unwrap();
    let (out, err) = (reader.join().unwrap(), stderr.join().unwrap());
    assert!(
        killed,
        "no write activity within 30 s\nstdout:\n{out}\nstderr:\n{err}"
    );
    assert!(!status.success(), "{status}");
    assert!(!out.contains("import finished"), "killed too late:\n{out}");
    assert!(
        wal(&db).exists(),
        "a killed writer leaves its write-ahead log"
    );

    // The database is whole; the input was kept; the pieces the import committed are whole:
    // every thread's count agrees with its messages, and the full-text index with both.
    let text = transcript(&crash_spec());
    let mut store = Store::open(&db).unwrap();
    assert!(store.integrity_check().unwrap());
    let raw = Connection::open(&db).unwrap();
    assert_eq!(count(&raw, "SELECT count(*) FROM pastes"), 1);
    assert_eq!(
        count(&raw, "SELECT bytes FROM pastes"),
        text.len() as i64,
        "the stored input is complete"
    );
    let before = count(&raw, "SELECT count(*) FROM messages");
    assert_eq!(
        count(&raw, "SELECT coalesce(sum(message_count), 0) FROM threads"),
        before
    );
    assert_eq!(
        count(
            &raw,
            "SELECT count(*) FROM threads t WHERE message_count <>
                (SELECT count(*) FROM messages m WHERE m.thread_id = t.id)"
        ),
        0
    );
    assert!(
        store.search_index_check().unwrap(),
        "the full-text index differs from the messages the killed import committed"
    );

    // Running the import again completes it, without storing anything twice.
    let r = store
        .import_reader("crash.txt", &mut text.as_bytes(), &opts(), &mut |_| {})
        .unwrap();
    let extracted = extract(&text, &opts());
    assert_eq!(r.items.len(), extracted.envelopes.len());
    for (item, p) in r.items.iter().zip(&extracted.envelopes) {
        let expected: &[Outcome] = if p.has_errors() {
            &[Outcome::Rejected]
        } else {
            &[Outcome::Imported, Outcome::Duplicate]
        };
        assert!(expected.contains(&item.outcome), "{item:#?}");
    }
    let kept = extracted
        .envelopes
        .iter()
        .filter(|p| !p.has_errors())
        .count();
    assert_eq!(
        r.count(Outcome::Imported) + r.count(Outcome::Duplicate),
        kept
    );
    let distinct: HashSet<&str> = r
        .items
        .iter()
        .filter_map(|i| i.message.as_deref())
        .collect();
    let messages = count(&raw, "SELECT count(*) FROM messages");
    assert_eq!(messages as usize, distinct.len());
    // Exactly what was missing was imported: the messages the killed run committed are
    // duplicates now, and nothing else is.
    assert_eq!(messages, before + r.count(Outcome::Imported) as i64);
    assert!(
        r.count(Outcome::Imported) > 0,
        "the killed run was complete"
    );
    assert_eq!(
        count(&raw, "SELECT count(*) FROM pastes"),
        1,
        "the input is kept once"
    );
    assert_eq!(
        count(&raw, "SELECT sum(message_count) FROM threads"),
        messages
    );
    assert!(store.integrity_check().unwrap());
    assert!(
        store.search_index_check().unwrap(),
        "the full-text index differs from the messages"
    );

    // A third run finds everything there.
    let again = store
        .import_reader("crash.txt", &mut text.as_bytes(), &opts(), &mut |_| {})
        .unwrap();
    assert_eq!(again.count(Outcome::Imported), 0);
    assert_eq!(count(&raw, "SELECT count(*) FROM messages"), messages);
}

#[test]
fn two_processes_import_into_one_database_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("shared.db");
    let db_str = db.to_str().unwrap();
    let seeds = [31u64, 32];
    // Both start on a database that does not exist yet: they also race to create it.
    let mut children: Vec<Child> = seeds
        .iter()
        .map(|seed| {
            spawn_self(
                "writer_child",
                &[(WRITER_ENV, db_str), (WRITER_SEED_ENV, &seed.to_string())],
            )
        })
        .collect();
    let outputs: Vec<_> = children
        .iter_mut()
        .map(|c| (drain(c.stdout.take()), drain(c.stderr.take())))
        .collect();
    let statuses: Vec<_> = children
        .iter_mut()
        .map(|c| wait_capped(c, Duration::from_secs(180)))
        .collect();
    let mut spans = Vec::new();
    for ((status, (out, err)), seed) in statuses.into_iter().zip(outputs).zip(seeds) {
        let (out, err) = (out.join().unwrap(), err.join().unwrap());
        assert!(
            status.is_some_and(|s| s.success()),
            "writer {seed}: {status:?}\nstdout:\n{out}\nstderr:\n{err}"
        );
        let span = ran(&out).unwrap_or_else(|| panic!("writer {seed} did not run:\n{out}"));
        spans.push(span);
    }
    // They did run at the same time.
    assert!(
        spans[0].0 < spans[1].1 && spans[1].0 < spans[0].1,
        "the writers ran one after the other: {spans:?}"
    );

    // The database holds both transcripts, exactly as each imported alone.
    let store = Store::open(&db).unwrap();
    assert!(store.integrity_check().unwrap());
    let raw = Connection::open(&db).unwrap();
    let mut expected = 0;
    for seed in seeds {
        let text = transcript(&writer_spec(seed));
        // The same inputs as the writer, one after the other, on a database of their own
        // (content digests of v1.0 envelopes depend on how the text is cut into inputs).
        let mut alone = Store::open_in_memory().unwrap();
        for range in split_points(&text, 4) {
            let r = alone.import_text("alone", &text[range], &opts()).unwrap();
            expected += r.count(Outcome::Imported) as i64;
        }
        // Every message that came with its own id is there, in its thread.
        for p in extract(&text, &opts()).envelopes {
            let (Some(id), Some(thread), false) =
                (p.envelope.message(), p.envelope.thread(), p.has_errors())
            else {
                continue;
            };
            let m = store.message(id).unwrap();
            assert_eq!(
                m.map(|m| m.thread).as_deref(),
                Some(thread),
                "seed {seed}: {id}"
            );
        }
    }
    assert_eq!(count(&raw, "SELECT count(*) FROM messages"), expected);
    assert_eq!(
        count(&raw, "SELECT sum(message_count) FROM threads"),
        expected
    );
    // And took turns: neither stored all its inputs before the other began.
    assert_eq!(count(&raw, "SELECT count(*) FROM pastes"), 8);
    let sources: Vec<String> = raw
        .prepare("SELECT source FROM pastes ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let stored = |seed: u64| -> Vec<usize> {
        let prefix = format!("writer {seed} ");
        (0..sources.len())
            .filter(|&i| sources[i].starts_with(&prefix))
            .collect()
    };
    let (a, b) = (stored(seeds[0]), stored(seeds[1]));
    assert!(
        a[0] < b[b.len() - 1] && b[0] < a[a.len() - 1],
        "one writer stored all its inputs before the other began: {sources:?}"
    );
    assert!(
        store.search_index_check().unwrap(),
        "the full-text index differs from the messages"
    );
    assert_eq!(count(&raw, "PRAGMA user_version"), SCHEMA_VERSION);
}

#[test]
fn a_writer_that_waits_two_seconds_gets_in_while_a_long_import_runs() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("busy.db");
    let db_str = db.to_str().unwrap();
    drop(Store::open(&db).unwrap());
    // Long enough for several writes however fast the import is: an optimized build threads
    // 30 000 envelopes in about a second, a handful of pieces.
    let envelopes = if cfg!(debug_assertions) {
        "30000"
    } else {
        "90000"
    };
    let mut child = spawn_self(
        "crash_child",
        &[(CRASH_ENV, db_str), (CRASH_ENVELOPES_ENV, envelopes)],
    );
    let (tx, rx) = mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut seen = Vec::new();
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if line.contains(THREADING) {
                let _ = tx.send(());
            }
            seen.push(line);
        }
        seen.join("\n")
    });
    let stderr = drain(child.stderr.take());
    let threading = rx.recv_timeout(Duration::from_secs(120)).is_ok();

    // While the other process threads its envelopes, write one envelope after another
    // with a busy timeout of two seconds (an import held the lock for its whole input before).
    let mut store = Store::open(&db).unwrap();
    store.set_busy_timeout(Duration::from_secs(2)).unwrap();
    let ids = IdGenerator::new();
    // Every other write is a draft saved in one transaction: how long it took is how long
    // one wait for the lock took.
    let draft_text = format!(
        "[[CLAUDE→CHATGPT v1]]\nthread: {}\nmessage: {}\nintent: INFORM\nbody: |\n  draft\n[[END]]\n",
        ids.next_id(),
        ids.next_id()
    );
    let draft = extract(&draft_text, &opts()).envelopes.remove(0).envelope;
    let (mut writes, mut slowest, mut slowest_draft) = (0usize, Duration::ZERO, Duration::ZERO);
    let mut failure = None;
    while threading && child.try_wait().unwrap().is_none() {
        let (t, m) = (ids.next_id(), ids.next_id());
        let env = format!(
            "[[CLAUDE→CHATGPT v1]]\nthread: {t}\nmessage: {m}\nintent: INFORM\nbody: |\n  \
             written while another process imports\n[[END]]\n"
        );
        if writes % 2 == 1 {
            let start = Instant::now();
            let saved = store.save_draft(&draft, &draft_text, "{}");
            let took = start.elapsed();
            if let Err(e) = saved {
                failure = Some(format!("draft {writes} failed after {took:?}: {e}"));
                break;
            }
            slowest_draft = slowest_draft.max(took);
            writes += 1;
            continue;
        }
        let start = Instant::now();
        let r = store.import_text("second writer", &env, &opts());
        let took = start.elapsed();
        match r {
            Ok(r) => assert_eq!(r.count(Outcome::Imported), 1, "{r:#?}"),
            Err(e) => {
                failure = Some(format!("write {writes} failed after {took:?}: {e}"));
                break;
            }
        }
        slowest = slowest.max(took);
        writes += 1;
        std::thread::sleep(Duration::from_millis(5));
    }
    let status = wait_capped(&mut child, Duration::from_secs(300));
    let (out, err) = (reader.join().unwrap(), stderr.join().unwrap());
    assert!(
        threading,
        "the import never began threading\nstdout:\n{out}\nstderr:\n{err}"
    );
    if let Some(f) = failure {
        panic!("{f} (while the other process imported)");
    }
    assert!(
        status.is_some_and(|s| s.success()) && out.contains("import finished"),
        "{status:?}\nstdout:\n{out}\nstderr:\n{err}"
    );
    println!(
        "{writes} writes during the import; the slowest import took {slowest:?}, the slowest \
         draft (one transaction) {slowest_draft:?}"
    );
    assert!(
        writes >= 5,
        "the import ended before the second writer wrote much ({writes} writes)"
    );

    // Both are stored, consistently.
    assert!(store.integrity_check().unwrap());
    let raw = Connection::open(&db).unwrap();
    assert_eq!(
        count(
            &raw,
            "SELECT count(*) FROM messages m JOIN pastes p ON p.id = m.paste_id
             WHERE p.source = 'second writer'"
        ),
        writes.div_ceil(2) as i64
    );
    assert_eq!(
        count(&raw, "SELECT sum(message_count) FROM threads"),
        count(&raw, "SELECT count(*) FROM messages")
    );
    assert!(
        store.search_index_check().unwrap(),
        "the full-text index differs from the messages"
    );
}
