//! Building an app over a temporary database, without a terminal, for view snapshots and
//! action-driven flows, and reading its drawn screen where an operator looks: the status
//! line, the focused pane, the title's thread count, the inspector's envelope, the list's
//! rows and selection.

use std::io::Write;
use std::sync::{Arc, Mutex};

use crosstalk::app::keymap::Keymap;
use crosstalk::app::{Action, App, Settings};
use crosstalk::clipboard::{Clipboard, ClipboardConfig, Env};
use crosstalk::store::Store;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;

/// Bytes the app wrote to "the terminal" (OSC 52 copies).
#[derive(Clone, Default)]
pub struct Sink(pub Arc<Mutex<Vec<u8>>>);

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// An app, its database directory and what it wrote to the terminal.
pub struct Harness {
    pub app: App,
    pub dir: tempfile::TempDir,
    pub terminal: Sink,
    /// What the app asked of the runtime and a test has not taken yet (the runtime would
    /// have suspended the screen for each).
    pub effects: Vec<crosstalk::app::Effect>,
}

/// Where copies land in tests: with no display and "a terminal", OSC 52 into the sink.
pub fn harness(store: Store, w: u16, h: u16) -> Harness {
    harness_named(store, None, w, h)
}

/// [`harness`] on the database file `db`, which the app knows by its path (files it writes
/// beside it, what it finds there when it starts).
pub fn harness_on(db: &std::path::Path, w: u16, h: u16) -> Harness {
    harness_named(Store::open(db).unwrap(), Some(db.to_path_buf()), w, h)
}

/// [`harness_on`], the app not started yet: a test sets what the runtime would (where the
/// last place is remembered, `[watch]`), then calls `app.start()`.
pub fn harness_unstarted(db: &std::path::Path, w: u16, h: u16) -> Harness {
    build(Store::open(db).unwrap(), Some(db.to_path_buf()), w, h)
}

fn harness_named(store: Store, db_path: Option<std::path::PathBuf>, w: u16, h: u16) -> Harness {
    let mut t = build(store, db_path, w, h);
    t.app.start();
    t
}

fn build(store: Store, db_path: Option<std::path::PathBuf>, w: u16, h: u16) -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let env = Env {
        terminal: true,
        ..Env::default()
    };
    let clipboard = Clipboard::new(ClipboardConfig::default(), env, dir.path().to_path_buf());
    let sink = Sink::default();
    let settings = Settings {
        user: "op".into(),
        from: String::new(),
        fence: vec!["fenced-bot".into()],
        options: Default::default(),
        label: "test.db".into(),
        db_path,
        ..Default::default()
    };
    let mut app = App::new(
        store,
        Keymap::default(),
        settings,
        clipboard,
        Box::new(sink.clone()),
        Rect::new(0, 0, w, h),
    )
    .unwrap();
    // Long before anything in the database: every age reads 0s, so screens are stable.
    app.fixed_now = Some("2000-01-01T00:00:00Z".parse().unwrap());
    app.now = app.fixed_now.unwrap();
    Harness {
        app,
        dir,
        terminal: sink,
        effects: Vec::new(),
    }
}

/// Records each message of `text` (its `message:` lines) as arrived when its id says: the
/// history a test replays, in which a vote or a deadline counts by arrival, not by the id.
pub fn replay_arrivals(store: &mut Store, text: &str) {
    for line in text.lines() {
        if let Some(id) = line.trim().strip_prefix("message: ") {
            if let Some(at) = crosstalk::store::ulid_time(id) {
                store.set_arrival(id, at).unwrap();
            }
        }
    }
}

/// A database file in `dir`.
pub fn store_in(dir: &std::path::Path) -> Store {
    Store::open(&dir.join("t.db")).unwrap()
}

/// The demo threads in a fresh in-memory database.
pub fn demo_store() -> Store {
    let mut s = Store::open_in_memory().unwrap();
    crosstalk::tui::demo::seed(&mut s).unwrap();
    s
}

impl Harness {
    /// Presses a key as the terminal would report it.
    pub fn key(&mut self, code: KeyCode, mods: KeyModifiers) {
        let ev = KeyEvent::new(code, mods);
        if let Some(a) = self.app.key_action(&ev) {
            let effects = self.app.update(a);
            self.effects.extend(effects);
        }
    }

    /// Presses the keys of a key string: each character one key press (`\n` is Enter,
    /// `\t` is Tab).
    pub fn keys(&mut self, s: &str) {
        for c in s.chars() {
            let code = match c {
                '\n' => KeyCode::Enter,
                '\t' => KeyCode::Tab,
                c => KeyCode::Char(c),
            };
            self.key(code, KeyModifiers::NONE);
        }
    }

    /// Ctrl + `c`.
    pub fn ctrl(&mut self, c: char) {
        self.key(KeyCode::Char(c), KeyModifiers::CONTROL);
    }

    /// Applies an action directly.
    pub fn act(&mut self, a: Action) {
        let effects = self.app.update(a);
        self.effects.extend(effects);
    }

    /// The one effect the app asked for since the last taken, taken.
    pub fn take_effect(&mut self) -> Option<crosstalk::app::Effect> {
        assert!(self.effects.len() <= 1, "more than one: {:?}", self.effects);
        self.effects.pop()
    }

    /// The screen as drawn, with styles.
    pub fn buffer(&self) -> ratatui::buffer::Buffer {
        let (w, h) = (self.app.size.width, self.app.size.height);
        let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
        term.draw(|f| crosstalk::ui::render(&self.app, f)).unwrap();
        term.backend().buffer().clone()
    }

    /// The screen as text, one line per row.
    pub fn screen(&self) -> String {
        let (w, h) = (self.app.size.width, self.app.size.height);
        let buf = self.buffer();
        let mut out = String::new();
        for y in 0..h {
            let mut line = String::new();
            for x in 0..w {
                line.push_str(buf[(x, y)].symbol());
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }

    /// The status line as drawn, without the watch mark: the bottom row, and the hint row
    /// above it too when a long status took it (its rows joined by a space). What the
    /// terminal's width cut off is not here: the line ends in ` :messages` then.
    pub fn status_line(&self) -> String {
        let buf = self.buffer();
        let rows: Vec<String> = self.status_rows(&buf).map(|y| row_text(&buf, y)).collect();
        let mark = WATCH_MARK.trim();
        let rows: Vec<&str> = rows
            .iter()
            .map(|r| r.trim_start().strip_prefix(mark).unwrap_or(r).trim())
            .filter(|r| !r.is_empty())
            .collect();
        rows.join(" ")
    }

    /// How the status line says how it went, read from the colour of its text (info is
    /// dim, a warning yellow, an error red), as an operator sees it; an empty line warns of
    /// nothing, so it reads as info.
    pub fn status_level(&self) -> crosstalk::app::Level {
        use crosstalk::app::Level;
        use ratatui::style::Color;
        let buf = self.buffer();
        let y = self.status_rows(&buf).next().unwrap();
        let skip = if row_text(&buf, y).starts_with(WATCH_MARK) {
            WATCH_MARK.chars().count() as u16
        } else {
            0
        };
        let first = (skip..self.app.size.width)
            .map(|x| &buf[(x, y)])
            .find(|c| c.symbol() != " ");
        match first.map(|c| c.fg) {
            Some(Color::Red) => Level::Error,
            Some(Color::Yellow) => Level::Warn,
            _ => Level::Info,
        }
    }

    /// The rows the status takes: the bottom one, and the hint row above it when that holds
    /// no hints (a hint starts with its key on a grey ground) but the status's first line.
    fn status_rows(&self, buf: &ratatui::buffer::Buffer) -> std::ops::Range<u16> {
        let h = self.app.size.height;
        let hints = h - 2;
        let taken = row_text(buf, hints).starts_with(WATCH_MARK)
            || buf[(0, hints)].bg != ratatui::style::Color::Gray;
        if taken { hints..h } else { h - 1..h }
    }

    /// The pane the screen marks as focused: the one whose title starts with `▶`.
    pub fn focused_pane(&self) -> crosstalk::app::Pane {
        use crosstalk::app::Pane;
        let buf = self.buffer();
        let areas = crosstalk::app::panes::layout::Areas::new(self.app.size);
        let panes = [
            (Pane::List, areas.list),
            (Pane::Tree, areas.tree),
            (Pane::Inspector, areas.inspector),
        ];
        let marked: Vec<Pane> = (panes.into_iter())
            .filter(|(_, a)| buf[(a.x + 1, a.y)].symbol() == "▶")
            .map(|(p, _)| p)
            .collect();
        match marked[..] {
            [p] => p,
            _ => panic!("{} panes marked focused:\n{}", marked.len(), self.screen()),
        }
    }

    /// How many threads the title bar says the list holds (`— N threads`; a list with
    /// more to page in says `N+`, which this refuses).
    pub fn thread_count(&self) -> usize {
        let screen = self.screen();
        let title = screen.lines().next().unwrap_or_default();
        // ` crosstalk — <database> — N threads[ (filtered)][ — …]`
        let count = title.split(" — ").nth(2).and_then(|part| {
            let part = part.strip_suffix(" (filtered)").unwrap_or(part);
            let n = part
                .strip_suffix(" threads")
                .or(part.strip_suffix(" thread"))?;
            n.parse().ok()
        });
        count.unwrap_or_else(|| panic!("no thread count in the title:\n{screen}"))
    }

    /// The id of the envelope the inspector shows (its `message` field, in the fields view
    /// or the canonical text), if that row is in sight.
    pub fn shown_message_id(&self) -> Option<String> {
        let buf = self.buffer();
        let pane = crosstalk::app::panes::layout::Areas::new(self.app.size).inspector;
        (pane.y + 1..pane.bottom().saturating_sub(1)).find_map(|y| {
            let row: String = (pane.x + 1..pane.right().saturating_sub(1))
                .map(|x| buf[(x, y)].symbol())
                .collect();
            let rest = row.strip_prefix("message")?;
            let id = rest
                .strip_prefix(':')
                .unwrap_or(rest)
                .split_whitespace()
                .next()?;
            Some(id.to_string())
        })
    }

    /// Whether the screen is the composer's (its title names the envelope being written)
    /// rather than the threads' (the title names the database).
    pub fn composing(&self) -> bool {
        let screen = self.screen();
        let title = screen.lines().next().unwrap_or_default();
        if title.starts_with(" New envelope") || title.starts_with(" Reply to") {
            return true;
        }
        assert!(
            title.starts_with(" crosstalk — "),
            "neither the composer nor the threads:\n{screen}"
        );
        false
    }

    /// The thread list's selected row as drawn (the one in reverse video from its first
    /// cell), inside the pane's borders, blanks at its ends dropped.
    pub fn selected_thread_row(&self) -> String {
        use ratatui::style::Modifier;
        let buf = self.buffer();
        let pane = crosstalk::app::panes::layout::Areas::new(self.app.size).list;
        let inside = pane.x + 1..pane.right().saturating_sub(1);
        let row = (pane.y + 1..pane.bottom().saturating_sub(1))
            .find(|&y| buf[(pane.x + 1, y)].modifier.contains(Modifier::REVERSED));
        let row = row.unwrap_or_else(|| panic!("no thread row selected:\n{}", self.screen()));
        let text: String = inside.map(|x| buf[(x, row)].symbol()).collect();
        text.trim().to_string()
    }

    /// The thread list's rows as drawn, inside the pane's borders, top first: each starts
    /// with its unread mark (`●`) or a blank.
    pub fn thread_rows(&self) -> Vec<String> {
        let buf = self.buffer();
        let pane = crosstalk::app::panes::layout::Areas::new(self.app.size).list;
        (pane.y + 1..pane.bottom().saturating_sub(1))
            .map(|y| {
                let row: String = (pane.x + 1..pane.right().saturating_sub(1))
                    .map(|x| buf[(x, y)].symbol())
                    .collect();
                row.trim_end().to_string()
            })
            .take_while(|row| !row.is_empty())
            .collect()
    }

    /// Whether the status line starts with the mark that the clipboard watch is on.
    pub fn watch_mark_shown(&self) -> bool {
        let buf = self.buffer();
        let y = self.status_rows(&buf).next().unwrap();
        row_text(&buf, y).starts_with(WATCH_MARK)
    }

    /// The text the app sent as OSC 52 copies, decoded, in order.
    pub fn copies(&self) -> Vec<String> {
        use base64::Engine;
        let bytes = self.terminal.0.lock().unwrap().clone();
        let text = String::from_utf8_lossy(&bytes).to_string();
        text.split("\x1b]52;c;")
            .skip(1)
            .map(|s| {
                let b64 = s.split('\x07').next().unwrap();
                String::from_utf8(
                    base64::engine::general_purpose::STANDARD
                        .decode(b64)
                        .unwrap(),
                )
                .unwrap()
            })
            .collect()
    }
}

/// What starts the status line while the clipboard watch is on.
const WATCH_MARK: &str = " ◉ watching ";

/// Row `y` of `buf` as text, trailing blanks dropped.
fn row_text(buf: &ratatui::buffer::Buffer, y: u16) -> String {
    let line: String = (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect();
    line.trim_end().to_string()
}

/// The app's clipboard read from `file` (with `cat`, as `[clipboard] paste_command` reads
/// one), copies still going as OSC 52 into the sink; `W` starts the watch, and this returns
/// once its first look is done (what `file` holds then is not new).
pub fn watch_file(t: &mut Harness, file: &std::path::Path) {
    if !file.exists() {
        std::fs::write(file, "").unwrap();
    }
    t.app.clipboard = Clipboard::new(
        ClipboardConfig {
            paste_command: Some(format!("cat '{}'", file.display())),
            ..Default::default()
        },
        Env {
            terminal: true,
            ..Env::default()
        },
        t.dir.path().to_path_buf(),
    );
    t.app.watch_config.interval_ms = 50;
    t.act(Action::ToggleWatch);
    assert!(t.watch_mark_shown(), "{:?}", t.status_line());
    let status = |a: &App| a.status.1.starts_with("Watching the clipboard");
    tick_until(t, "the watch's first look", status);
}

/// Ticks (as the runtime does between key presses) until `done` holds, at most 10 s.
pub fn tick_until(t: &mut Harness, what: &str, done: impl Fn(&App) -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !done(&t.app) {
        assert!(
            std::time::Instant::now() < deadline,
            "{what} did not happen within 10 s; status: {:?}",
            t.app.status
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
        t.act(Action::Tick);
    }
}

/// Copies `text` to the clipboard the watch reads (`file`, see [`watch_file`]) and ticks
/// until message `id` is stored.
pub fn copy_watched(t: &mut Harness, file: &std::path::Path, text: &str, id: &str) {
    std::fs::write(file, text).unwrap();
    let stored = |a: &App| a.store.message(id).ok().flatten().is_some();
    tick_until(t, &format!("the import of {id}"), stored);
}
