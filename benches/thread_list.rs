//! The thread list of a database of 650 000 threads: `G` (the list's end), `g` (its start),
//! a page down deep into the list and a state filter, each an `App::update` plus a redraw at
//! 120×40, against the leanest SQL that reads the same last page (the baseline, in the same
//! run), and the way `G` fetched the end before (every row up to it).
//!
//! The database is built once on first use (some seconds, not measured): 2 000 threads
//! imported from a synthetic transcript (messages in every delivery state, so that a state
//! filter has matches) and 648 000 more inserted as rows of `threads`, each with its own
//! activity time, older than the imported ones.

use std::path::PathBuf;
use std::sync::OnceLock;

use crosstalk::app::keymap::Keymap;
use crosstalk::app::panes::thread_list::PAGE;
use crosstalk::app::{Action, App, Settings};
use crosstalk::clipboard::{Clipboard, ClipboardConfig, Env};
use crosstalk::protocol::Options;
use crosstalk::store::{StateFilter, Store};
use crosstalk::synth::{TranscriptSpec, transcript};
use divan::{Bencher, black_box};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;
use tempfile::TempDir;

/// The allocator the `crosstalk` binary uses (src/main.rs).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Threads in the database.
const THREADS: usize = 650_000;
/// Of which imported with their messages.
const IMPORTED: usize = 2_000;

fn main() {
    divan::main();
    if let Some(h) = DB.get() {
        let _ = std::fs::remove_dir_all(h.dir.path());
    }
}

struct Db {
    dir: TempDir,
    path: PathBuf,
}

static DB: OnceLock<Db> = OnceLock::new();

fn db() -> &'static Db {
    DB.get_or_init(|| {
        let start = std::time::Instant::now();
        let dir = tempfile::tempdir().expect("temporary folder");
        let path = dir.path().join("threads.db");
        let mut store = Store::open(&path).expect("database");
        let text = transcript(&TranscriptSpec {
            envelopes: 4 * IMPORTED,
            threads: IMPORTED,
            seed: 3,
            mangled_percent: 0,
        });
        store
            .import_text("threads", &text, &Options::default())
            .expect("import");
        drop(store);
        let conn = rusqlite::Connection::open(&path).expect("open");
        conn.execute_batch(&format!(
            "BEGIN;
             WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {more})
             INSERT INTO threads (id, context, participants, message_count, created_at,
                                  last_activity)
             SELECT printf('01J0000000%016d', i), 'thread ' || i, '[\"A\",\"B\"]', 1, t, t
             FROM (SELECT i, strftime('%Y-%m-%dT%H:%M:%fZ', 1700000000 + i * 7, 'unixepoch')
                   AS t FROM n);
             COMMIT;",
            more = THREADS - IMPORTED
        ))
        .expect("threads");
        let n: i64 = conn
            .query_row("SELECT count(*) FROM threads", [], |r| r.get(0))
            .expect("count");
        assert_eq!(n as usize, THREADS);
        eprintln!("built {THREADS} threads in {:.1?}", start.elapsed());
        Db { dir, path }
    })
}

fn app() -> App {
    let clipboard = Clipboard::new(ClipboardConfig::default(), Env::default(), PathBuf::new());
    let mut app = App::new(
        Store::open(&db().path).expect("open"),
        Keymap::default(),
        Settings::default(),
        clipboard,
        Box::new(std::io::sink()),
        Rect::new(0, 0, 120, 40),
    )
    .expect("app");
    app.start();
    app
}

fn draw(app: &App, term: &mut Terminal<TestBackend>) {
    term.draw(|f| crosstalk::ui::render(app, f)).expect("draw");
}

/// `G` on a list showing its first page: the last thread selected, opened and drawn.
#[divan::bench(sample_count = 20)]
fn end_key(b: Bencher) {
    let mut term = Terminal::new(TestBackend::new(120, 40)).expect("terminal");
    b.with_inputs(app).bench_local_refs(|app| {
        app.update(Action::Bottom);
        draw(app, &mut term);
        black_box(app.list.selected)
    });
}

/// The baseline: the leanest query for the same last page, the ids and columns of its rows
/// off the same index, read backwards from the end.
#[divan::bench(sample_count = 20)]
fn end_page_sql(b: Bencher) {
    let conn = rusqlite::Connection::open(&db().path).expect("open");
    b.bench_local(|| {
        let mut stmt = conn
            .prepare_cached(
                "SELECT id, context, participants, message_count, last_activity FROM threads
                 ORDER BY last_activity ASC, id ASC LIMIT ?1",
            )
            .expect("prepare");
        let rows: Vec<(String, Option<String>, String, i64, String)> = stmt
            .query_map([PAGE as i64], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
            })
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("rows");
        black_box(rows)
    });
}

/// How the list reached its end before: every row fetched up to it.
#[divan::bench(sample_count = 2, sample_size = 1)]
fn end_by_every_row(b: Bencher) {
    let store = Store::open(&db().path).expect("open");
    b.bench_local(|| {
        let rows = store
            .thread_rows_in("", StateFilter::All, usize::MAX >> 1)
            .expect("rows");
        black_box(rows.len())
    });
}

/// `g` after `G`: the first thread again.
#[divan::bench(sample_count = 20)]
fn start_key_after_end(b: Bencher) {
    let mut term = Terminal::new(TestBackend::new(120, 40)).expect("terminal");
    let at_end = || {
        let mut app = app();
        app.update(Action::Bottom);
        app
    };
    b.with_inputs(at_end).bench_local_refs(|app| {
        app.update(Action::Top);
        draw(app, &mut term);
        black_box(app.list.selected)
    });
}

/// One page down, 20 000 threads into the list (reached with page downs first).
#[divan::bench(sample_count = 20)]
fn page_down_deep(b: Bencher) {
    let mut term = Terminal::new(TestBackend::new(120, 40)).expect("terminal");
    let deep = || {
        let mut app = app();
        while app.list.selected < 20_000 {
            app.update(Action::PageDown);
        }
        app
    };
    b.with_inputs(deep).bench_local_refs(|app| {
        app.update(Action::PageDown);
        draw(app, &mut term);
        black_box(app.list.selected)
    });
}

/// `G` under the state filter "to relay" (`s`), which only imported threads match.
#[divan::bench(sample_count = 10)]
fn end_key_filtered(b: Bencher) {
    let mut term = Terminal::new(TestBackend::new(120, 40)).expect("terminal");
    let filtered = || {
        let mut app = app();
        app.update(Action::CycleStateFilter);
        app
    };
    b.with_inputs(filtered).bench_local_refs(|app| {
        app.update(Action::Bottom);
        draw(app, &mut term);
        black_box(app.list.selected)
    });
}
