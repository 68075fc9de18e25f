//! The app on a large history: the first frame against an empty database, and a key press
//! on a 10 000-message thread (update + redraw at 120×40).
//!
//! The history — 100 000 envelopes in 5 000 threads plus one thread of 10 000 messages,
//! about 77 MB of transcript — is built once on first use into a temporary database (some
//! seconds, not measured). Frames are drawn into ratatui's `TestBackend`, so what is measured
//! is the app's own work: opening the database, querying what is on screen, laying it out.

use std::path::PathBuf;
use std::sync::OnceLock;

use crosstalk::app::keymap::Keymap;
use crosstalk::app::{Action, App, Settings};
use crosstalk::clipboard::{Clipboard, ClipboardConfig, Env};
use crosstalk::protocol::Options;
use crosstalk::store::Store;
use crosstalk::synth::{TranscriptSpec, transcript};
use divan::{Bencher, black_box};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;
use tempfile::TempDir;

fn main() {
    divan::main();
    if let Some(h) = HISTORY.get() {
        let _ = std::fs::remove_dir_all(h.dir.path());
    }
}

struct History {
    dir: TempDir,
    empty: PathBuf,
    full: PathBuf,
    /// The 10 000-message thread.
    long: String,
}

static HISTORY: OnceLock<History> = OnceLock::new();

fn history() -> &'static History {
    HISTORY.get_or_init(|| {
        let dir = tempfile::tempdir().expect("temporary folder");
        let empty = dir.path().join("empty.db");
        let full = dir.path().join("full.db");
        Store::open(&empty).expect("empty database");
        let mut store = Store::open(&full).expect("full database");
        let opts = Options::default();
        let text = transcript(&TranscriptSpec::default());
        store.import_text("history", &text, &opts).expect("import");
        let long = transcript(&TranscriptSpec {
            envelopes: 10_000,
            threads: 1,
            seed: 7,
            mangled_percent: 0,
        });
        store.import_text("long", &long, &opts).expect("import");
        let long = store
            .threads(usize::MAX >> 1)
            .expect("threads")
            .into_iter()
            .max_by_key(|t| t.message_count)
            .expect("a thread");
        assert!(long.message_count >= 10_000, "{}", long.message_count);
        History {
            dir,
            empty,
            full,
            long: long.id,
        }
    })
}

fn app(path: &std::path::Path) -> App {
    let clipboard = Clipboard::new(ClipboardConfig::default(), Env::default(), PathBuf::new());
    App::new(
        Store::open(path).expect("open"),
        Keymap::default(),
        Settings::default(),
        clipboard,
        Box::new(std::io::sink()),
        Rect::new(0, 0, 120, 40),
    )
    .expect("app")
}

fn draw(app: &App, term: &mut Terminal<TestBackend>) {
    term.draw(|f| crosstalk::ui::render(app, f)).expect("draw");
}

/// Open the database, build the app, draw the first frame (the thread list; the runtime
/// opens the newest thread right after it).
#[divan::bench(args = ["empty", "100k"])]
fn first_frame(b: Bencher, db: &str) {
    let h = history();
    let path = if db == "empty" { &h.empty } else { &h.full };
    b.bench_local(|| {
        let app = app(path);
        let mut term = Terminal::new(TestBackend::new(120, 40)).expect("terminal");
        draw(&app, &mut term);
        black_box(app.list.rows.len())
    });
}

/// The first frame and then the second, with the newest thread — here the 10 000-message
/// one — open in the tree.
#[divan::bench(args = ["empty", "100k"])]
fn first_two_frames(b: Bencher, db: &str) {
    let h = history();
    let path = if db == "empty" { &h.empty } else { &h.full };
    b.bench_local(|| {
        let mut app = app(path);
        let mut term = Terminal::new(TestBackend::new(120, 40)).expect("terminal");
        draw(&app, &mut term);
        app.start();
        draw(&app, &mut term);
        black_box(app.list.rows.len())
    });
}

/// One key press (j, then k on the next iteration) in the 10 000-message thread's tree:
/// update and redraw.
#[divan::bench]
fn key_press_in_10k_thread(b: Bencher) {
    let h = history();
    let mut app = app(&h.full);
    app.update(Action::Run(format!("open {}", h.long)));
    assert_eq!(
        app.tree.as_ref().map(|t| t.outline.rows.len()),
        Some(10_000)
    );
    app.update(Action::Top);
    let mut term = Terminal::new(TestBackend::new(120, 40)).expect("terminal");
    let mut down = true;
    b.bench_local(|| {
        app.update(if down { Action::Down } else { Action::Up });
        down = !down;
        draw(&app, &mut term);
    });
}

/// Opening the 10 000-message thread from the list (load, tree, inspector, draw).
#[divan::bench]
fn open_10k_thread(b: Bencher) {
    let h = history();
    let mut app = app(&h.full);
    let mut term = Terminal::new(TestBackend::new(120, 40)).expect("terminal");
    b.bench_local(|| {
        app.tree = None;
        app.update(Action::Run(format!("open {}", h.long)));
        draw(&app, &mut term);
    });
}
