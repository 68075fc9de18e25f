//! The terminal runtime: sets the terminal up (alternate screen, raw mode, bracketed paste,
//! mouse), turns its events into actions for [`App::update`], draws with [`crate::ui`], and
//! performs the effects that need the terminal itself — suspending for `$EDITOR` and for a
//! command the operator pipes an envelope to.
//!
//! The terminal is restored on every way out: a normal quit, an error, and a panic (the
//! panic hook restores it before the message is printed).

mod burst;
pub mod demo;
mod editor;
mod pipe;

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context as _, anyhow};
use ratatui::crossterm::event::{
    self, DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
    Event, KeyEventKind, MouseButton, MouseEventKind,
};
use ratatui::crossterm::execute;
use ratatui::layout::Rect;

use crate::app::keymap::Keymap;
use crate::app::{Action, App, Effect, Settings};
use crate::clipboard::{Clipboard, Env};
use crate::config::Config;
use crate::protocol::Options;
use crate::store::Store;

/// How the app is started.
pub struct Launch {
    /// The database (`--db`, `$CROSSTALK_DB`, else the default).
    pub db: Option<PathBuf>,
    /// Open a throwaway database seeded with the demo threads.
    pub demo: bool,
    /// The configuration.
    pub config: Config,
}

/// The keymap of the config, with errors located in the config file.
pub fn keymap(config: &Config) -> anyhow::Result<Keymap> {
    let mut items = Vec::new();
    for (scope, table) in &config.keys {
        for (key, action) in table {
            items.push((scope, key, action));
        }
    }
    Keymap::with_overrides(items.iter().map(|(s, k, a)| {
        (
            s.get_ref().as_str(),
            k.get_ref().as_str(),
            a.get_ref().as_str(),
        )
    }))
    .map_err(|errors| {
        use crate::app::keymap::KeymapError as E;
        let mut located: Vec<(usize, String)> = errors
            .into_iter()
            .map(|(i, e)| {
                let (s, k, a) = items[i];
                let span = match e {
                    E::Scope(_) => s.span(),
                    E::Key(..) | E::Typed(..) | E::SentAs(..) | E::NoWayOut(..) => k.span(),
                    E::Action(..) => a.span(),
                };
                (span.start, format!("{}: {e}", config.locate(span)))
            })
            .collect();
        // In the file's order (the tables are read sorted by key).
        located.sort();
        let lines: Vec<String> = located.into_iter().map(|(_, l)| l).collect();
        anyhow!("{}", lines.join("\n"))
    })
}

/// Opens the store, app and terminal, and runs until the operator quits. The exit status:
/// 0, or 128 + the signal's number when a signal ended it (as a shell reports a process the
/// signal killed).
pub fn run(launch: Launch) -> anyhow::Result<u8> {
    let config = launch.config;
    let keymap = keymap(&config)?;
    let data = crate::config::data_dir();
    crate::config::move_state_files();
    init_logging(&crate::config::log_file());
    let (store, label, db_path) = open_store(launch.db, launch.demo)?;
    // 4 MiB of page cache: enough for what is on screen; the import's 32 MiB would make
    // the app hold tens of megabytes after opening one long thread.
    store.limit_cache(4096)?;
    if !std::io::stdout().is_terminal() {
        return Err(anyhow!(
            "the app needs a terminal; for scripts use the subcommands (`crosstalk --help`)"
        ));
    }
    let settings = settings(&config, launch.demo, label, db_path);
    let clipboard = Clipboard::new(config.clipboard.clone(), Env::from_process(), data.clone())
        .own_copies_in(crate::config::own_copies_file());
    tracing::info!("starting on {}", settings.label);

    let stop = stop_signal();
    let mut terminal = ratatui::init();
    install_panic_hook();
    execute!(std::io::stdout(), EnableBracketedPaste, EnableMouseCapture)?;
    let size = terminal.size()?;
    let mut notes = Vec::new();
    let result = App::new(
        store,
        keymap,
        settings,
        clipboard,
        Box::new(std::io::stdout()),
        Rect::new(0, 0, size.width, size.height),
    )
    .and_then(|mut app| {
        app.watch_config = config.watch.clone();
        app.inspector.attachments_dir = config.attachments.dir.clone();
        app.contacts = config.address_book();
        let r = event_loop(&mut terminal, &mut app, &stop);
        // Whatever the database has not taken yet is saved or written to a file, on every
        // way out of the loop.
        notes = app.finish(crate::app::background::pending::QUIT_WAIT);
        r
    });
    let _ = execute!(
        std::io::stdout(),
        DisableMouseCapture,
        DisableBracketedPaste
    );
    ratatui::restore();
    // A note may quote a path or a draft's text, which came partly from an envelope.
    for n in notes {
        eprintln!("{}", crate::sanitize::sanitize(&n));
    }
    result.map(|()| match stop.load(Ordering::Relaxed) {
        0 => 0,
        signal => 128u8.saturating_add(signal as u8),
    })
}

/// The database the app opens: a throwaway one seeded for `demo`, else `db`, `$CROSSTALK_DB`
/// or the platform's default; with the name the app shows for it, and its path.
fn open_store(db: Option<PathBuf>, demo: bool) -> anyhow::Result<(Store, String, Option<PathBuf>)> {
    Ok(if demo {
        let mut store = Store::open_in_memory()?;
        demo::seed(&mut store)?;
        (store, "demo (throwaway database)".to_string(), None)
    } else {
        let path = db
            .or_else(|| std::env::var_os("CROSSTALK_DB").map(PathBuf::from))
            .or_else(crate::store::default_path)
            .ok_or_else(|| anyhow!("no home directory for the database; pass --db PATH"))?;
        let mut store =
            Store::open(&path).with_context(|| format!("opening {}", path.display()))?;
        store.remember_soundness_in(crate::config::state_dir().join("checked"));
        (store, path.display().to_string(), Some(path))
    })
}

/// What the app is told of `config`, its database (`label`, `db_path`) and whether it is
/// the `demo`, whose conversations and desk have their own operator.
fn settings(config: &Config, demo: bool, label: String, db_path: Option<PathBuf>) -> Settings {
    Settings {
        user: config
            .compose
            .user
            .clone()
            .unwrap_or_else(crate::config::default_user),
        from: config.compose.from.clone().unwrap_or_default(),
        fence: config
            .recipients
            .iter()
            .filter(|(_, r)| r.fence)
            .map(|(n, _)| n.clone())
            .collect(),
        options: Options {
            size_limit: config.protocol.size_limit,
            now: None,
        },
        label,
        db_path,
        // The demo's conversations have their own operator, whatever the config says.
        operator: Some(if demo {
            demo::OPERATOR.iter().map(|a| a.to_string()).collect()
        } else {
            config.operator.addresses.clone()
        }),
        copy_on_import: config.relay.copy_on_import,
        audit_by: config.audit_name(),
        signing: config.signing.clone(),
        send: config.send.clone(),
        ui: config.ui,
        // The demo's desk is its own operator too.
        desk: if demo {
            demo::OPERATOR[0].to_string()
        } else {
            config.desk_address()
        },
        editor_first: config.compose.editor_first,
        // A throwaway database has no place to come back to.
        place_file: (!demo)
            .then(|| crate::config::state_dir().join(crate::app::panes::resume::FILE)),
    }
}

/// The number of the signal that asked the app to end (0: none yet): SIGTERM (`kill`, a shutdown), SIGHUP (the
/// terminal or SSH connection went away). Caught, so the loop ends the way `q` does: drafts
/// saved, the terminal's screen, mouse and cursor given back. Killed by the default action, the
/// terminal was left in the alternate screen with mouse reporting on.
fn stop_signal() -> Arc<AtomicUsize> {
    let stop = Arc::new(AtomicUsize::new(0));
    for signal in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGHUP] {
        if let Err(e) = signal_hook::flag::register_usize(signal, stop.clone(), signal as usize) {
            tracing::warn!("signal {signal} not caught: {e}");
        }
    }
    stop
}

/// Restores mouse and paste modes before ratatui's own hook restores the screen.
fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let _ = execute!(
            std::io::stdout(),
            DisableMouseCapture,
            DisableBracketedPaste
        );
        tracing::error!("panic: {info}");
        previous(info);
    }));
}

/// While the clipboard is watched, how often the loop asks whether the watch found something.
const WATCH_SLICE: Duration = Duration::from_millis(15);

/// A wait of whole milliseconds and a little more, for crossterm's event source: it waits in
/// whole milliseconds (`poll(2)`), rounding what is left down, and then asks again with zero
/// until the time is up, so a wait of 14.99 ms spun for its last millisecond. Watching, that
/// was every slice: 4 % of a core while idle. With the few microseconds above the
/// milliseconds, the one `poll` that waits outlasts them and no spinning follows.
fn without_spin(wait: Duration) -> Duration {
    Duration::from_millis(u64::try_from(wait.as_millis()).unwrap_or(u64::MAX))
        + Duration::from_micros(20)
}

/// How long the loop waits for another event before drawing the ones it took. Not zero: the
/// event source crossterm is built with here (`use-dev-tty`, see Cargo.toml) answers a wait
/// of zero without looking at the events it has already read from the terminal, so a burst
/// of keys would cost a frame per key.
const DRAIN: Duration = Duration::from_millis(1);

/// The most events read in one burst before they are acted on (a megabyte of pasted text).
const MAX_BURST: usize = 1 << 20;

/// How long the rest of an unbracketed paste may keep the app waiting between its pieces
/// (an SSH connection delivers a long paste in several).
const PASTE_GAP: Duration = Duration::from_millis(50);

fn event_loop(
    terminal: &mut ratatui::DefaultTerminal,
    app: &mut App,
    stop: &AtomicUsize,
) -> anyhow::Result<()> {
    terminal.draw(|f| crate::ui::render(app, f))?;
    app.start();
    let mut last_tick = Instant::now();
    let mut redraw = true;
    loop {
        if stop.load(Ordering::Relaxed) != 0 {
            return Ok(());
        }
        if redraw {
            terminal.draw(|f| crate::ui::render(app, f))?;
        }
        redraw = true;
        // Ages on screen ("3m") move on even when nothing happens; what the database did
        // not take (it was busy) is retried more often, and the clipboard watch asks at its
        // own pace. The tick also comes while keys keep arriving, so other processes'
        // imports show up during a long scroll too.
        let tick = app.tick_interval();
        let wait = tick.saturating_sub(last_tick.elapsed());
        // While watching, the wait is cut in slices so a copy the watch found is taken at
        // once, not at the next tick: a hop is then the watch's interval, not twice it.
        let slice = if app.watching() {
            wait.min(WATCH_SLICE)
        } else {
            wait
        };
        if wait.is_zero() || !event::poll(without_spin(slice))? {
            if slice < wait && !app.watch_has_news() {
                // A slice with nothing: no tick, no frame.
                redraw = false;
                continue;
            }
            last_tick = Instant::now();
            let effects = app.update(Action::Tick);
            perform_all(terminal, app, effects, stop)?;
            continue;
        }
        // Take every event already waiting before drawing again: a held key or a burst of
        // wheel events costs one frame, not one per event; and a burst that is pasted text
        // (a terminal without bracketed paste) is one paste, not keys.
        let mut burst = vec![event::read()?];
        while burst.len() < MAX_BURST && event::poll(DRAIN)? {
            burst.push(event::read()?);
        }
        if let Some(mut text) = burst::pasted_text(&burst) {
            // The rest of a paste that arrives in pieces joins it while it is text.
            let mut after = None;
            while text.len() < MAX_BURST * 4 && event::poll(PASTE_GAP)? {
                let ev = event::read()?;
                match burst::typed(&ev) {
                    Some(c) => text.push(c),
                    None => {
                        after = Some(ev);
                        break;
                    }
                }
            }
            burst = after.into_iter().collect();
            let effects = app.update(Action::Paste(text));
            perform_all(terminal, app, effects, stop)?;
        }
        for ev in burst {
            if app.quit {
                break;
            }
            if let Some(action) = action_of(app, ev) {
                let effects = app.update(action);
                perform_all(terminal, app, effects, stop)?;
            }
        }
        if app.quit {
            return Ok(());
        }
    }
}

/// Performs `effects` in order, and what their results ask next (rarely anything) in turn.
fn perform_all(
    terminal: &mut ratatui::DefaultTerminal,
    app: &mut App,
    mut effects: Vec<Effect>,
    stop: &AtomicUsize,
) -> anyhow::Result<()> {
    while !effects.is_empty() {
        let effect = effects.remove(0);
        effects.extend(perform(terminal, app, effect, stop)?);
    }
    Ok(())
}

/// Performs what the app asked of the terminal, and hands the app the result; returns what
/// the app asks next.
fn perform(
    terminal: &mut ratatui::DefaultTerminal,
    app: &mut App,
    effect: Effect,
    stop: &AtomicUsize,
) -> anyhow::Result<Vec<Effect>> {
    let next = match effect {
        Effect::EditBody(body) => match editor::edit(terminal, &body) {
            Ok(text) => app.update(Action::EditedBody(text)),
            Err(e) => {
                app.error(format!("$EDITOR: {e:#}"));
                Vec::new()
            }
        },
        Effect::EditPaste(text) => match editor::edit(terminal, &text) {
            Ok(text) => app.update(Action::EditedPaste(text)),
            Err(e) => {
                app.error(format!("$EDITOR: {e:#}; the paste is unchanged"));
                Vec::new()
            }
        },
        Effect::Pipe(request) => {
            let (ok, line) = pipe::run(terminal, &request, stop);
            app.update(Action::Piped(ok, line))
        }
    };
    terminal.clear()?;
    Ok(next)
}

/// The action a terminal event asks for.
fn action_of(app: &App, ev: Event) -> Option<Action> {
    match ev {
        Event::Key(k) if k.kind != KeyEventKind::Release => app.key_action(&k),
        Event::Paste(s) => Some(Action::Paste(s)),
        Event::Resize(w, h) => Some(Action::Resize(w, h)),
        Event::Mouse(m) => match m.kind {
            MouseEventKind::Down(MouseButton::Left) => Some(Action::Click(m.column, m.row)),
            MouseEventKind::ScrollUp => Some(Action::Scroll(m.column, m.row, -1)),
            MouseEventKind::ScrollDown => Some(Action::Scroll(m.column, m.row, 1)),
            _ => None,
        },
        _ => None,
    }
}

/// Logs go to `file` (`crosstalk.log` in the state directory), never to the screen.
fn init_logging(file: &Path) {
    if let Some(dir) = file.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let Ok(file) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)
    else {
        return;
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("CROSSTALK_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false)
        .with_writer(std::sync::Mutex::new(file))
        .try_init();
}
