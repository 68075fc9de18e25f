//! The store: reads on a realistic history, and import throughput against parsing alone.
//!
//! The history is built once, on first use, from a synthetic transcript of 100 000 envelopes in
//! 5 000 threads (about 70 MB) imported into a temporary database file; building it takes some
//! seconds and is not measured. Its shape (size of the largest thread, hits of the two searched
//! words) is printed to stderr after the benchmarks.
//!
//! `import_10k` (into a fresh database per iteration) and `extract_10k` (the parsing alone, on
//! the same text) sit side by side, so the cost of storing over parsing reads off directly.

use std::path::PathBuf;
use std::sync::OnceLock;

use crosstalk::protocol::did_key::did_key;
use crosstalk::protocol::signature::{SigFormat, sign_envelope, verify_parsed};
use crosstalk::protocol::{Options, extract, render};
use crosstalk::store::{Outcome, Store};
use crosstalk::synth::{TranscriptSpec, transcript};
use divan::counter::{BytesCount, ItemsCount};
use divan::{Bencher, black_box};
use ed25519_dalek::SigningKey;
use tempfile::TempDir;

/// The allocator the `crosstalk` binary uses (src/main.rs), so that what is measured here is
/// what the binary does.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    divan::main();
    // Statics are never dropped: remove the history database here.
    if let Some(h) = HISTORY.get() {
        eprintln!("{}", h.summary);
        let _ = std::fs::remove_dir_all(h.dir.path());
    }
}

/// The database every read benchmark uses, with what they look up in it.
struct History {
    dir: TempDir,
    path: PathBuf,
    /// The thread with the most messages, and how many it has.
    largest: (String, usize),
    /// A word in most messages, and a word in a handful.
    common: &'static str,
    rare: String,
    /// What was built, printed after the benchmarks.
    summary: String,
}

static HISTORY: OnceLock<History> = OnceLock::new();

fn history() -> &'static History {
    HISTORY.get_or_init(|| {
        let start = std::time::Instant::now();
        let dir = tempfile::tempdir().expect("temporary folder");
        let path = dir.path().join("history.db");
        let text = transcript(&TranscriptSpec {
            envelopes: 100_000,
            threads: 5_000,
            seed: 1,
            mangled_percent: 5,
        });
        let mut store = Store::open(&path).expect("open the history");
        let report = store
            .import_text("history", &text, &Options::default())
            .expect("import the history");
        let threads = store.threads(usize::MAX >> 1).expect("threads");
        let (id, count) = threads
            .iter()
            .max_by_key(|t| t.message_count)
            .map(|t| (t.id.clone(), t.message_count as usize))
            .expect("a thread");
        // A banner address ends in a per-thread hex id: a word found in one thread only.
        let rare = threads
            .iter()
            .flat_map(|t| &t.participants)
            .filter_map(|a| a.rsplit_once('/').map(|(_, tail)| tail))
            .find(|tail| tail.len() == 6 && tail.bytes().all(|b| b.is_ascii_hexdigit()))
            .expect("an address with a thread id")
            .to_string();
        let common = "the";
        let hits = |w: &str| store.search_results(w, 1).map_or(0, |r| r.matches);
        let summary = format!(
            "history: {} messages ({} envelopes, {:.1} MB) built in {:.1?}; largest thread \
             {count} messages; `{common}` in {} messages, `{rare}` in {}",
            report.count(Outcome::Imported),
            report.items.len(),
            text.len() as f64 / 1e6,
            start.elapsed(),
            hits(common),
            hits(&rare),
        );
        History {
            dir,
            path,
            largest: (id, count),
            common,
            rare,
            summary,
        }
    })
}

fn open_history() -> Store {
    Store::open(&history().path).expect("open the history")
}

/// The thread list's first page.
#[divan::bench]
fn threads_first_page(b: Bencher) {
    let store = open_history();
    b.bench_local(|| store.threads(black_box(50)).expect("threads").len());
}

/// The thread with the most messages, loaded and put in tree order.
#[divan::bench]
fn load_largest_thread(b: Bencher) {
    let store = open_history();
    let (id, count) = &history().largest;
    b.counter(ItemsCount::new(*count)).bench_local(|| {
        store
            .thread(black_box(id))
            .expect("thread")
            .expect("largest thread")
            .messages
            .len()
    });
}

/// A page of 20 results for a word found in most messages (the newest `RANKED_MATCHES` of
/// them are ranked).
#[divan::bench]
fn search_common_word(b: Bencher) {
    let store = open_history();
    let word = history().common;
    b.bench_local(|| store.search(black_box(word), 20).expect("search").len());
}

/// A page of results for a word found in one thread only.
#[divan::bench]
fn search_rare_word(b: Bencher) {
    let store = open_history();
    let word = &history().rare;
    b.bench_local(|| store.search(black_box(word), 20).expect("search").len());
}

/// The common word given once and 400 times: a repeated word is looked for once, so the two
/// cost the same (each repeat cost another pass over its matches before).
#[divan::bench(args = [1, 400])]
fn search_repeated_word(b: Bencher, repeats: usize) {
    let store = open_history();
    let query = vec![history().common; repeats].join(" ");
    b.bench_local(|| store.search(black_box(&query), 20).expect("search").len());
}

const IMPORT_ENVELOPES: usize = 10_000;

fn import_text() -> &'static str {
    static TEXT: OnceLock<String> = OnceLock::new();
    TEXT.get_or_init(|| {
        transcript(&TranscriptSpec {
            envelopes: IMPORT_ENVELOPES,
            threads: IMPORT_ENVELOPES / 20,
            seed: 2,
            mangled_percent: 5,
        })
    })
}

/// Importing 10 000 envelopes (about 7 MB) into a fresh in-memory database: storing the
/// input, parsing, threading, indexing.
#[divan::bench(sample_count = 10, sample_size = 1)]
fn import_10k(b: Bencher) {
    import_all(b, import_text());
}

/// The same import into a fresh database file.
#[divan::bench(sample_count = 10, sample_size = 1)]
fn import_10k_file(b: Bencher) {
    let text = import_text();
    b.counter(BytesCount::of_str(text))
        .counter(ItemsCount::new(IMPORT_ENVELOPES))
        .with_inputs(|| {
            let dir = tempfile::tempdir().expect("temporary folder");
            let store = Store::open(&dir.path().join("import.db")).expect("store");
            (dir, store)
        })
        .bench_local_values(|(dir, mut store)| {
            let report = store
                .import_text("bench", black_box(text), &Options::default())
                .expect("import");
            (dir, store, report)
        });
}

/// Envelopes imported one at a time, as `crosstalk serve` stores each POST.
const ONE_AT_A_TIME: usize = 200;

/// The first `ONE_AT_A_TIME` envelopes of the import transcript, each its own text.
fn single_envelopes() -> &'static Vec<String> {
    static TEXTS: OnceLock<Vec<String>> = OnceLock::new();
    TEXTS.get_or_init(|| {
        extract(import_text(), &Options::default())
            .envelopes
            .into_iter()
            .take(ONE_AT_A_TIME)
            .map(|p| render(&p.envelope))
            .collect()
    })
}

/// 200 envelopes imported one at a time into a database file (each input kept, threaded,
/// committed): what `serve` does per request. Compare with `insert_200_one_at_a_time_plain`.
#[divan::bench(sample_count = 5, sample_size = 1)]
fn import_200_one_at_a_time(b: Bencher) {
    let texts = single_envelopes();
    b.counter(ItemsCount::new(ONE_AT_A_TIME))
        .with_inputs(|| {
            let dir = tempfile::tempdir().expect("temporary folder");
            let store = Store::open(&dir.path().join("one.db")).expect("store");
            (dir, store)
        })
        .bench_local_values(|(dir, mut store)| {
            for text in texts {
                store
                    .import_text("bench", black_box(text), &Options::default())
                    .expect("import");
            }
            // Closing counts: it checkpoints the log, and indexes what was not indexed yet.
            drop(store);
            dir
        });
}

/// The baseline: the same 200 envelopes as text rows in a plain indexed table of a WAL
/// database file, one transaction each (the leanest way to store each as it arrives).
#[divan::bench(sample_count = 5, sample_size = 1)]
fn insert_200_one_at_a_time_plain(b: Bencher) {
    let texts = single_envelopes();
    b.counter(ItemsCount::new(ONE_AT_A_TIME))
        .with_inputs(|| {
            let dir = tempfile::tempdir().expect("temporary folder");
            let conn = rusqlite::Connection::open(dir.path().join("plain.db")).expect("db");
            conn.execute_batch(
                "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;
                 CREATE TABLE m (seq INTEGER PRIMARY KEY, id TEXT UNIQUE, text TEXT);",
            )
            .expect("schema");
            (dir, conn)
        })
        .bench_local_values(|(dir, mut conn)| {
            for (i, text) in texts.iter().enumerate() {
                let tx = conn.transaction().expect("begin");
                tx.execute(
                    "INSERT INTO m (id, text) VALUES (?1, ?2)",
                    rusqlite::params![i.to_string(), black_box(text)],
                )
                .expect("insert");
                tx.commit().expect("commit");
            }
            drop(conn);
            dir
        });
}

/// The same 10 000 envelopes in canonical form twice: each signed (`ed25519:`, its key id a
/// `did:key`, so the import verifies every one without a key added first), and unsigned
/// (`sig: none`). Only the `sig:` line differs.
fn signed_texts() -> &'static (String, String) {
    static TEXTS: OnceLock<(String, String)> = OnceLock::new();
    TEXTS.get_or_init(|| {
        let key = SigningKey::from_bytes(&[7; 32]);
        let pkid = did_key(&key.verifying_key());
        let (mut signed, mut unsigned) = (String::new(), String::new());
        for p in extract(import_text(), &Options::default()).envelopes {
            let mut env = p.envelope;
            env.sig = Some("none".into());
            env.hash = None;
            unsigned.push_str(&render(&env));
            sign_envelope(&mut env, &key, SigFormat::Ed25519, &pkid);
            signed.push_str(&render(&env));
        }
        (signed, unsigned)
    })
}

fn import_all(b: Bencher, text: &'static str) {
    b.counter(BytesCount::of_str(text))
        .counter(ItemsCount::new(IMPORT_ENVELOPES))
        .with_inputs(|| Store::open_in_memory().expect("in-memory store"))
        .bench_local_values(|mut store| {
            let report = store
                .import_text("bench", black_box(text), &Options::default())
                .expect("import");
            (store, report)
        });
}

/// Importing the 10 000 envelopes signed: each signature verified on receipt and its
/// verdict stored. Compare with `import_10k_unsigned`, the same envelopes with `sig: none`.
#[divan::bench(sample_count = 10, sample_size = 1)]
fn import_10k_signed(b: Bencher) {
    import_all(b, &signed_texts().0);
}

/// The signatures alone: verifying each of the 10 000 parsed envelopes with its key (the
/// texts tried in order, as `verify` does), nothing stored; the least the import can spend.
#[divan::bench(sample_count = 10, sample_size = 1)]
fn verify_10k(b: Bencher) {
    let text = &signed_texts().0;
    let parsed = extract(text, &Options::default()).envelopes;
    let key = SigningKey::from_bytes(&[7; 32]).verifying_key();
    b.counter(ItemsCount::new(parsed.len())).bench_local(|| {
        parsed
            .iter()
            .filter(|p| verify_parsed(p, black_box(text), &key).is_ok())
            .count()
    });
}

/// Baseline of `import_10k_signed`: the same envelopes unsigned.
#[divan::bench(sample_count = 10, sample_size = 1)]
fn import_10k_unsigned(b: Bencher) {
    import_all(b, &signed_texts().1);
}

/// Baseline: parsing the same text alone (`extract`), nothing stored.
#[divan::bench(sample_count = 10, sample_size = 1)]
fn extract_10k(b: Bencher) {
    let text = import_text();
    b.counter(BytesCount::of_str(text))
        .counter(ItemsCount::new(IMPORT_ENVELOPES))
        .bench_local(|| {
            extract(black_box(text), &Options::default())
                .envelopes
                .len()
        });
}

/// A database holding one conversation of 5 000 messages, the long-thread case.
fn long_thread() -> &'static (TempDir, PathBuf, String) {
    static LONG: OnceLock<(TempDir, PathBuf, String)> = OnceLock::new();
    LONG.get_or_init(|| {
        let dir = tempfile::tempdir().expect("temporary folder");
        let path = dir.path().join("long.db");
        let text = transcript(&TranscriptSpec {
            envelopes: 5_000,
            threads: 1,
            seed: 3,
            mangled_percent: 0,
        });
        let mut store = Store::open(&path).expect("open");
        store
            .import_text("long", &text, &Options::default())
            .expect("import");
        let t = store.threads(1).expect("threads");
        let id = t[0].id.clone();
        assert!(t[0].message_count >= 4_900, "{}", t[0].message_count);
        (dir, path, id)
    })
}

/// Loading a 5 000-message thread and putting it in tree order.
#[divan::bench]
fn load_5000_message_thread(b: Bencher) {
    let (_, path, id) = long_thread();
    let store = Store::open(path).expect("open");
    b.counter(ItemsCount::new(5_000usize)).bench_local(|| {
        store
            .thread(black_box(id))
            .expect("thread")
            .expect("the thread")
            .messages
            .len()
    });
}

/// The operator's queue on the 100 000-envelope history: five sections of 50 rows, each
/// counted up to its cap. Every envelope of the history is to relay (no operator address is
/// set), so the "to relay" section is the largest one a history can have.
#[divan::bench]
fn queue_sections(b: Bencher) {
    let store = open_history();
    b.bench_local(|| store.queue(black_box(50)).expect("queue").sections.len());
}

/// Baseline for `queue_sections`: a lean query of the same store, one message by id.
#[divan::bench]
fn lean_message_lookup(b: Bencher) {
    let store = open_history();
    let id = &history().largest.0;
    b.bench_local(|| store.has_thread(black_box(id)).expect("lookup"));
}

/// The tree's outline of the 5 000-message thread: one light row per message, with the PII
/// badge asked of SQLite for every body.
#[divan::bench]
fn outline_5000_message_thread(b: Bencher) {
    let (_, path, id) = long_thread();
    let store = Store::open(path).expect("open");
    b.counter(ItemsCount::new(5_000usize)).bench_local(|| {
        store
            .thread_outline(black_box(id))
            .expect("outline")
            .expect("the thread")
            .rows
            .len()
    });
}

/// The baseline for the outline: the same rows' columns in one plain SELECT, without the
/// ledger, the verdicts, the tree order or the PII badge.
#[divan::bench]
fn outline_5000_plain_select(b: Bencher) {
    let (_, path, id) = long_thread();
    let conn = rusqlite::Connection::open(path).expect("open");
    b.counter(ItemsCount::new(5_000usize)).bench_local(|| {
        let mut stmt = conn
            .prepare_cached(
                "SELECT id, parent_id, intent, sender, recipient, substr(body, 1, 400), status,
                        received_at FROM messages WHERE thread_id = ?1 ORDER BY seq",
            )
            .expect("prepare");
        let rows = stmt
            .query_map([black_box(id)], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, Option<String>>(1)?,
                    r.get::<_, Option<String>>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, String>(4)?,
                    r.get::<_, Option<String>>(5)?,
                    r.get::<_, String>(6)?,
                    r.get::<_, String>(7)?,
                ))
            })
            .expect("query")
            .collect::<Result<Vec<_>, _>>()
            .expect("rows");
        rows.len()
    });
}

/// A thread of the history that states consent, the one a copy of it asks about.
fn consent_thread(store: &Store) -> String {
    let ledger = store
        .consent_ledger(jiff::Timestamp::now())
        .expect("ledger");
    let record = ledger.records.first().expect("a consent in the history");
    record.threads[0].clone()
}

/// What `y` on a message holding personal data asks: the consent in force for its thread,
/// read from the statements that bear on it.
#[divan::bench]
fn consent_for_one_thread(b: Bencher) {
    let store = open_history();
    let thread = consent_thread(&store);
    let now = jiff::Timestamp::now();
    b.bench_local(|| {
        store
            .consent_for_thread(black_box(&thread), now, [])
            .expect("consent")
            .is_some()
    });
}

/// A copy of the history with one consent given in a thread of its own and transferred to
/// another thread, which names it by id: the copy's path and the second thread.
fn transferred_consent() -> &'static (TempDir, PathBuf, String) {
    static COPY: OnceLock<(TempDir, PathBuf, String)> = OnceLock::new();
    COPY.get_or_init(|| {
        let dir = tempfile::tempdir().expect("temporary folder");
        let path = dir.path().join("consent.db");
        let source = Store::open(&history().path).expect("open the history");
        source.backup_to(&path, false).expect("copy the history");
        drop(source);
        let (given, taken) = ("01KBENCH00000000000000000A", "01KBENCH00000000000000000B");
        let envelope = |thread: &str, message: &str, privacy: &str| {
            format!(
                "[[CLAUDE→CHATGPT v1]]\nuser: kalle\nsession: 2025-10-09T16Z a7f3d1\n\
                 thread: {thread}\nmessage: {message}\ncontext: consent\nintent: HANDOFF\n\n\
                 meta: privacy\nPII: present\n{privacy}\nbody: |\n  text\nsig: none\n[[END]]\n"
            )
        };
        let text = envelope(
            given,
            "01KBENCH0000000000000000M1",
            "Consent: explicit_yes_2025-10-09T16:00Z\nConsent-ID: bench-consent-1",
        ) + &envelope(
            taken,
            "01KBENCH0000000000000000M2",
            "Consent: explicit_yes_2025-10-09T16:05Z\nConsent-ID: bench-consent-2\n\
             Original-Consent-ID: bench-consent-1",
        );
        let mut store = Store::open(&path).expect("open the copy");
        let report = store
            .import_text("consent", &text, &Options::default())
            .expect("import");
        assert_eq!(report.count(Outcome::Imported), 2, "{report:?}");
        (dir, path, taken.to_string())
    })
}

/// `y` in a thread whose consent was transferred from another: its statements name consent
/// ids, which are followed to the statements naming them elsewhere in the history.
#[divan::bench]
fn consent_through_a_transferred_id(b: Bencher) {
    let (_, path, thread) = transferred_consent();
    let store = Store::open(path).expect("open");
    let now = jiff::Timestamp::now();
    assert!(
        store
            .consent_for_thread(thread, now, [])
            .expect("consent")
            .is_some_and(|r| r.explicit)
    );
    b.bench_local(|| {
        store
            .consent_for_thread(black_box(thread), now, [])
            .expect("consent")
            .is_some()
    });
}

/// The same answer from the whole ledger, as it was read before: every statement of the
/// history.
#[divan::bench(sample_count = 20)]
fn consent_for_one_thread_from_the_whole_ledger(b: Bencher) {
    let store = open_history();
    let thread = consent_thread(&store);
    let now = jiff::Timestamp::now();
    b.bench_local(|| {
        store
            .consent_ledger(now)
            .expect("ledger")
            .for_thread(black_box(&thread))
            .is_some()
    });
}
