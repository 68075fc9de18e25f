//! The reader on a 1 MB markdown body at 80×24: one frame of scrolling (a key, the update, the
//! redraw) and opening it (the body rendered once for the width), each against drawing the
//! same text unrendered — the body's lines made safe and wrapped to the width once, then a
//! window of them drawn as a plain paragraph, the leanest honest way to page through it.
//!
//! Frames are drawn into ratatui's `TestBackend`: what is measured is the app's own work.

use std::path::PathBuf;
use std::sync::OnceLock;

use crosstalk::app::keymap::Keymap;
use crosstalk::app::{Action, App, Settings};
use crosstalk::clipboard::{Clipboard, ClipboardConfig, Env};
use crosstalk::store::Store;
use divan::{Bencher, black_box};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::Paragraph;

fn main() {
    divan::main();
}

const W: u16 = 80;
const H: u16 = 24;

/// About 1 MB of what models write: headings, paragraphs hard-wrapped at 72 columns, lists,
/// a table and code blocks, repeated.
fn body() -> &'static str {
    static BODY: OnceLock<String> = OnceLock::new();
    BODY.get_or_init(|| {
        let section = "## Step {n}\n\nThe desk keeps every conversation as a tree, and the operator \
carries\neach envelope from one window to the next; **nothing** they pasted is\nlost, and \
`crosstalk check` names the line of each problem.\n\n- build it\n- sign it with the *release* \
key\n- publish\n\n| step | command |\n|---|---|\n| build | `cargo build` |\n\n```rust\nfn main() \
{\n    println!(\"step\");\n}\n```\n\n";
        let (mut out, mut lines, mut n) = (String::new(), 0, 0);
        // As much as one envelope carries, its indentation included.
        while out.len() + 2 * lines < 1_030_000 {
            n += 1;
            let s = section.replace("{n}", &n.to_string());
            lines += s.lines().count();
            out.push_str(&s);
        }
        out
    })
}

/// A database holding one envelope with the body, and its id.
fn database() -> &'static (tempfile::TempDir, PathBuf, String) {
    static DB: OnceLock<(tempfile::TempDir, PathBuf, String)> = OnceLock::new();
    DB.get_or_init(|| {
        let dir = tempfile::tempdir().expect("temporary folder");
        let path = dir.path().join("reader.db");
        let mut store = Store::open(&path).expect("database");
        let id = "01K76Q0Z00000000000000M001".to_string();
        let indented: String = body().lines().map(|l| format!("  {l}\n")).collect();
        let text = format!(
            "[[CLAUDE→HUMAN v1]]\nthread: 01K76Q0Z00000000000000T001\nmessage: {id}\n\
intent: RESPOND\nbody: |\n{indented}sig: none\n[[END]]\n"
        );
        let report = store
            .import_text("bench", &text, &Default::default())
            .expect("import");
        assert_eq!(report.items.len(), 1);
        (dir, path, id)
    })
}

fn app() -> App {
    let (_, path, id) = database();
    let clipboard = Clipboard::new(ClipboardConfig::default(), Env::default(), PathBuf::new());
    let mut app = App::new(
        Store::open(path).expect("open"),
        Keymap::default(),
        Settings::default(),
        clipboard,
        Box::new(std::io::sink()),
        Rect::new(0, 0, W, H),
    )
    .expect("app");
    app.update(Action::Run(format!("open {id}")));
    app
}

fn terminal() -> Terminal<TestBackend> {
    Terminal::new(TestBackend::new(W, H)).expect("terminal")
}

/// The plain lines of the baseline: the body made safe and wrapped to the width.
fn plain_lines(width: usize) -> Vec<String> {
    crosstalk::app::text::safe(body())
        .lines()
        .flat_map(|l| crosstalk::app::text::wrap(l, width))
        .collect()
}

/// One frame of scrolling in the reader: a page down (back to the top past the end), the
/// update and the redraw.
#[divan::bench]
fn reader_scroll_frame(b: Bencher) {
    let mut app = app();
    app.update(Action::Read);
    let mut term = terminal();
    let mut n = 0;
    b.bench_local(|| {
        n += 1;
        app.update(if n % 2000 == 0 {
            Action::Top
        } else {
            Action::PageDown
        });
        term.draw(|f| crosstalk::ui::render(&app, f)).expect("draw");
    });
}

/// The baseline of a frame: a page of the plain lines drawn as a paragraph.
#[divan::bench]
fn unrendered_scroll_frame(b: Bencher) {
    let lines = plain_lines(W as usize);
    let page = H as usize - 6;
    let mut term = terminal();
    let mut top = 0;
    b.bench_local(|| {
        top = (top + page) % lines.len().saturating_sub(page).max(1);
        let shown: Vec<Line> = lines[top..top + page]
            .iter()
            .map(|l| Line::from(l.as_str()))
            .collect();
        term.draw(|f| f.render_widget(Paragraph::new(shown), f.area()))
            .expect("draw");
    });
}

/// Opening the reader on the body: rendered once for the width, and the first frame.
#[divan::bench(sample_count = 10)]
fn reader_open(b: Bencher) {
    let mut app = app();
    let mut term = terminal();
    b.bench_local(|| {
        app.update(Action::Read);
        term.draw(|f| crosstalk::ui::render(&app, f)).expect("draw");
        app.update(Action::Back);
    });
}

/// The baseline of opening: the body made safe and wrapped once, and the first page drawn.
#[divan::bench(sample_count = 10)]
fn unrendered_open(b: Bencher) {
    let mut term = terminal();
    b.bench_local(|| {
        let lines = plain_lines(W as usize);
        let shown: Vec<Line> = lines[..18].iter().map(|l| Line::from(l.as_str())).collect();
        term.draw(|f| f.render_widget(Paragraph::new(shown), f.area()))
            .expect("draw");
        black_box(lines.len())
    });
}
