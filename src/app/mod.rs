//! The operator's app without a terminal: state, the [`Action`] vocabulary and one
//! [`App::update`] that applies them. Views read an `&App` and change nothing; the runtime
//! (`crate::tui`) turns terminal events into actions and performs the few effects that need
//! the terminal itself (suspending for `$EDITOR`).
//!
//! Errors from the store never end the app: they become the status line, and whatever the
//! operator pasted or typed was saved before the step that failed.
//!
//! Rooms: `panes` (the three panes of the browse screen and what they show), `popups` (each
//! popup with its keys), `command` (the `:` command line), `writing` (the composer and
//! copying what it wrote), `relay` (the hop, deliveries under way, the queue, settling) and
//! `background` (the watch, other processes' writes, writes still pending). Here: the `App`
//! and its `update`, the `Action` vocabulary and the keymap, the status line, text made safe.

pub mod action;
pub mod background;
pub mod command;
pub mod keymap;
pub mod panes;
pub mod pipe;
pub mod popups;
pub mod reading;
pub mod relay;
mod status;
pub mod text;
pub mod writing;

use std::io::Write;

use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::Rect;

pub use action::Action;
use keymap::{Keymap, Scope};
use panes::inspector::Inspector;
use panes::thread_list::ThreadList;
use panes::thread_tree::ThreadTree;
use popups::popup::Popup;
use writing::composer::Composer;

use crate::clipboard::Clipboard;
use crate::protocol::Options;
use crate::store::Store;

/// The focused pane of the browse screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pane {
    /// Threads.
    List,
    /// The open thread's tree.
    Tree,
    /// The selected envelope.
    Inspector,
}

/// How the status line reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Something done.
    Info,
    /// Done, with a caveat.
    Warn,
    /// Not done.
    Error,
}

/// Settings the app takes from the config file.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// The `user` header of envelopes the operator writes.
    pub user: String,
    /// The sender name new envelopes start with (empty: typed each time).
    pub from: String,
    /// Recipients (by name, case-insensitive) whose copies are wrapped in a markdown fence.
    pub fence: Vec<String>,
    /// How envelopes are read.
    pub options: Options,
    /// Shown in the title bar (the database, or "demo").
    pub label: String,
    /// The database file (`None` in memory): what the database cannot take is written
    /// beside it.
    pub db_path: Option<std::path::PathBuf>,
    /// The operator's own addresses (`[operator] addresses`); `None` keeps those the
    /// database was last given.
    pub operator: Option<Vec<String>>,
    /// Copy a single new envelope for someone else right after its import.
    pub copy_on_import: bool,
    /// With `[relay] audit`: the name relayed copies record their `meta: audit` hop under.
    pub audit_by: Option<String>,
    /// Sign composed envelopes before copying them (`[signing]`).
    pub signing: crate::config::SigningConfig,
    /// How long a delivery over HTTP waits out a peer that asks to be sent again (`[send]`).
    pub send: crate::config::SendConfig,
    /// Who the desk writes as in its own name (`Config::desk_address`); empty: `human://`
    /// and `user`.
    pub desk: String,
    /// Where the app remembers the thread and filters it had when it quit, to reopen them
    /// (`None`: not remembered, as for the demo; see `resume`).
    pub place_file: Option<std::path::PathBuf>,
    /// `[compose] editor_first`: a new envelope's or a reply's composer opens `$EDITOR` at
    /// once.
    pub editor_first: bool,
    /// How the screens read (`[ui]`): the tree's indentation, when an awaited reply is late.
    pub ui: crate::config::UiConfig,
}

impl Settings {
    /// Who the desk writes as in its own name: a reply (`r`), an ERROR (`E`), a poll's close.
    pub fn desk(&self) -> String {
        if self.desk.trim().is_empty() {
            format!("human://{}", self.user.trim())
        } else {
            self.desk.trim().to_string()
        }
    }
}

/// What the app asks of the runtime, returned by [`App::update`]: the effects that need the
/// terminal itself, which the app cannot perform while the runtime draws on it. The runtime
/// suspends the screen, does it, and tells the app how it went with an action
/// ([`Action::EditedBody`], [`Action::EditedPaste`], [`Action::Piped`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Edit the composer's body in `$EDITOR`.
    EditBody(String),
    /// Edit a paste in `$EDITOR` before it is previewed again.
    EditPaste(String),
    /// Run a command with an envelope or a thread on its input.
    Pipe(pipe::PipeRequest),
}

/// The whole state of the app.
pub struct App {
    /// The database.
    pub store: Store,
    /// Keys in force.
    pub keymap: Keymap,
    /// Settings from the config.
    pub settings: Settings,
    /// The one clipboard handle.
    pub clipboard: Clipboard,
    /// Where OSC 52 copies are written: the terminal.
    pub terminal_out: Box<dyn Write>,
    /// The thread list.
    pub list: ThreadList,
    /// The open thread.
    pub tree: Option<ThreadTree>,
    /// The inspector.
    pub inspector: Inspector,
    /// The selected message, whole (the tree holds only what its lines show).
    pub current: Option<crate::store::StoredMessage>,
    /// The focused pane.
    pub focus: Pane,
    /// The composer, when composing.
    pub composer: Option<Composer>,
    /// The open popup.
    pub popup: Option<Popup>,
    /// The status line (set through `set_status`, which counts what is said).
    pub status: (Level, String),
    /// How many messages the status line was given, so that one action's message is told
    /// apart from a message left by an earlier one (see `status`).
    said: u64,
    /// What the status line said, for `:messages`.
    pub messages: popups::messages::MessageLog,
    /// The terminal size.
    pub size: Rect,
    /// Set when the app should end.
    pub quit: bool,
    /// What the action being applied asks of the runtime, handed over by [`App::update`].
    effects: Vec<Effect>,
    /// The last command piped to, offered again by `|`.
    pub last_pipe: Option<String>,
    /// The time ages are measured against (refreshed at each update).
    pub now: jiff::Timestamp,
    /// A fixed "now" for reproducible screens (tests, snapshots); the clock when `None`.
    pub fixed_now: Option<jiff::Timestamp>,
    /// The commands run on the command line, recalled with ↑ (`C-p`).
    command_history: command::history::History,
    /// Drafts the database did not take yet (busy or full), retried on each tick.
    pub pending_drafts: Vec<background::pending::PendingDraft>,
    /// Threads seen whose mark the database did not take yet.
    pub pending_seen: Vec<String>,
    /// Messages copied whose "awaiting reply" the database did not take yet.
    pub pending_copied: Vec<String>,
    /// A read found the database busy: the list shows the last data read until a tick
    /// reads it again.
    pub stale: bool,
    /// Drafts in the database, counted each time one is created or deleted so the title
    /// bar, the list's ✎ markers and `D` agree (a new envelope's draft has no thread row).
    pub drafts: usize,
    /// The selected message's place in the delivery ledger.
    pub delivery: Option<crate::store::Delivery>,
    /// The selected message's signature verdict (`None`: unsigned).
    pub signature: Option<crate::store::SignatureCheck>,
    /// How the last copy left the app (the copy chain's report), for the relay ledger.
    pub last_copy: Option<crate::clipboard::Method>,
    /// A reply the desk placed that the operator is moving (`M` on it; `M` on the message it
    /// answers places it, `Esc` leaves it where it was).
    pub moving: Option<String>,
    /// The database's `data_version` when the screen was last read: another process's
    /// commit changes it, and the tick then reads the screen again (see `refresh`).
    pub data_version: Option<i64>,
    /// The clipboard watch, while on (`W`).
    pub watch: Option<crate::clipboard::watch::Poller>,
    /// How the clipboard is watched (`[watch]` in the config).
    pub watch_config: crate::clipboard::watch::WatchConfig,
    /// Watched text the database did not take yet (busy), offered again on the tick.
    pub watch_waiting: Vec<String>,
    /// Copies still to put up, one per `>`: a POLL's next targets, the envelopes of one
    /// clipboard copy for their recipients.
    pub hop_next: Vec<crate::store::Waiting>,
    /// An envelope for the operator the watch brought while they were busy elsewhere (the
    /// composer, a popup): `J` opens it (see `arrival`).
    pub arrival: Option<background::arrival::Arrival>,
    /// The received message (or `thread ID`) a first `y` (`Y`) was warned about (personal data
    /// without explicit consent, see `Store::pii_held`): a second `y` (`Y`) right after copies
    /// it; any other action forgets it.
    pub relay_pii_confirmed: Option<String>,
    /// What the readline keys killed last (`C-k`, `C-w`, …), which `C-y` yanks: one buffer
    /// for every text box, as readline has one kill ring.
    pub kill: String,
    /// The address book (`[[contacts]]`): names typed in the composer, `N`'s list.
    pub contacts: crate::contacts::AddressBook,
    /// Deliveries straight to contacts (over HTTP), until their answers are recorded.
    pub under_way: Vec<relay::under_way::Sending>,
    /// Queue items settled in this run, newest last: `u` in the queue brings them back.
    pub queue_undo: Vec<relay::settle::SettledHere>,
    /// Threads archived or brought back in this run, newest last: `U` undoes them.
    pub archive_undo: Vec<relay::settle::ArchivedHere>,
}

impl App {
    /// An app over `store`, showing its threads.
    pub fn new(
        mut store: Store,
        keymap: Keymap,
        settings: Settings,
        clipboard: Clipboard,
        terminal_out: Box<dyn Write>,
        size: Rect,
    ) -> anyhow::Result<App> {
        // Never wait on another process's write lock on a key press: what the database
        // does not take at once is kept and retried on the tick (see `pending`).
        store.set_busy_timeout(background::pending::APP_BUSY_TIMEOUT)?;
        // Until the config's address book is set: the recipients fenced by name.
        let contacts = crate::contacts::AddressBook {
            contacts: Vec::new(),
            fenced_recipients: settings.fence.clone(),
        };
        let mut app = App {
            store,
            keymap,
            settings,
            clipboard,
            terminal_out,
            list: ThreadList::default(),
            tree: None,
            inspector: Inspector::default(),
            current: None,
            focus: Pane::List,
            composer: None,
            popup: None,
            status: (Level::Info, String::new()),
            said: 0,
            messages: popups::messages::MessageLog::default(),
            size,
            quit: false,
            effects: Vec::new(),
            last_pipe: None,
            now: jiff::Timestamp::now(),
            fixed_now: None,
            command_history: command::history::History::default(),
            pending_drafts: Vec::new(),
            pending_seen: Vec::new(),
            pending_copied: Vec::new(),
            stale: false,
            drafts: 0,
            delivery: None,
            signature: None,
            last_copy: None,
            moving: None,
            data_version: None,
            watch: None,
            watch_config: Default::default(),
            watch_waiting: Vec::new(),
            hop_next: Vec::new(),
            arrival: None,
            relay_pii_confirmed: None,
            kill: String::new(),
            contacts,
            under_way: Vec::new(),
            queue_undo: Vec::new(),
            archive_undo: Vec::new(),
        };
        app.data_version = app.store.data_version().ok();
        // The ledger's "addressed to me" follows the config; a busy database keeps the
        // addresses it knew, and says so.
        if let Some(addresses) = app.settings.operator.clone() {
            if let Err(e) = app.store.set_operator_addresses(&addresses) {
                app.warn(format!("operator addresses not applied yet: {e}"));
            }
        }
        app.list.reload(&app.store)?;
        app.drafts = draft_count(&app.store)?;
        if app.list.rows.is_empty() {
            app.info("Empty database. Paste an envelope (or press p), n for a new one, ? for help; try `crosstalk --demo`.");
        } else {
            let drafts = app.drafts;
            // "From before" only of a database file, which an earlier run may have left them
            // in: a database in memory (the demo's) is as new as this run, its drafts seeded.
            if drafts > 0 && app.settings.db_path.is_some() {
                app.info(format!("{drafts} draft(s) kept from before: D lists them."));
            } else if drafts > 0 {
                app.info(format!("{drafts} draft(s) not sent yet: D lists them."));
            }
        }
        // Drafts an earlier run wrote beside the database because it was busy when the app
        // ended: named, so their text is not forgotten there.
        let aside =
            background::pending::written_aside(app.settings.db_path.as_deref(), "crosstalk-draft");
        if let Some(newest) = aside.last() {
            app.warn(format!(
                "{} draft(s) were written to files when the database was busy, the newest {}: open it in $EDITOR, or paste its text into a new draft (n), then delete the file.",
                aside.len(),
                newest.display()
            ));
        }
        // What the app says as it starts is kept too: the first action may move on and clear
        // the line before `update` would note it.
        app.messages.note(&app.status, app.now);
        Ok(app)
    }

    /// Whether a paste goes into something open that takes text: the composer, the paste
    /// box, the search or command prompt, the open thread filter, the new conversation's
    /// context.
    fn takes_typed_text(&self) -> bool {
        self.composer.is_some()
            || (self.popup.is_none() && self.list.filtering)
            || matches!(
                &self.popup,
                Some(Popup::PasteBox { .. } | Popup::Search(_) | Popup::Command(_))
            )
            || matches!(&self.popup, Some(Popup::Conversation(c)) if c.context.is_some())
    }

    /// Opens the thread the app had open when it last quit on this database, with its filters
    /// (see `resume`), else the selected one, in the tree pane; then starts watching the
    /// clipboard when `[watch] on_start` asks for it. The runtime calls it right after the
    /// first frame, so the list is on screen before the thread (possibly a very long one) is
    /// read.
    pub fn start(&mut self) {
        let reopened = self.reopen_place().unwrap_or_else(|e| {
            tracing::warn!("the last place is not reopened: {e:#}");
            false
        });
        if !reopened {
            if let Err(e) = self.open_selected_thread(false) {
                self.error(format!("{e:#}"));
            }
        }
        self.keep_in_view();
        if self.watch_config.on_start && !self.watching() {
            self.toggle_watch();
            if !self.watching() {
                // Said as `W` says it, naming the setting that asked.
                let why = self.status.1.clone();
                self.error(format!("{why} ([watch] on_start)"));
            }
        }
        self.messages.note(&self.status, self.now);
    }

    /// The key scope in force.
    pub fn scope(&self) -> Scope {
        match (&self.popup, &self.composer) {
            (Some(p), _) => p.scope(),
            (None, Some(_)) => Scope::Composer,
            (None, None) if self.list.filtering => Scope::Filter,
            (None, None) => Scope::Browse,
        }
    }

    /// The action a key press asks for, if any. While the terminal is too small to draw in
    /// (the screen says only that), a key quits or types into the open text box, and does
    /// nothing else: a question nobody can see must not be answered by a key (`X` then `y`
    /// would erase), nor an envelope copied unseen.
    pub fn key_action(&self, ev: &KeyEvent) -> Option<Action> {
        let action = self.scoped_key_action(ev);
        if panes::layout::too_small(self.size) {
            return action.filter(|a| matches!(a, Action::Quit | Action::Input(_)));
        }
        action
    }

    fn scoped_key_action(&self, ev: &KeyEvent) -> Option<Action> {
        // Help is filtered by typing: its letters are typed rather than bound (see `help`).
        if let Some(a) = self.help_typing(ev) {
            return Some(a);
        }
        let scope = self.scope();
        if let Some(a) = self.keymap.action(scope, ev) {
            return Some(a);
        }
        match scope {
            Scope::Filter | Scope::Composer | Scope::PasteBox | Scope::Prompt => {
                Some(Action::Input(*ev))
            }
            _ => None,
        }
    }

    /// Applies one action. Failures become the status line; the app goes on.
    pub fn update(&mut self, action: Action) -> Vec<Effect> {
        self.now = self.fixed_now.unwrap_or_else(jiff::Timestamp::now);
        let (before, said) = (self.place(), self.said);
        let was_busy = self.busy_elsewhere();
        if let Err(e) = self.apply(action) {
            tracing::warn!("action failed: {e:#}");
            if background::pending::is_busy(&e) {
                // The screen keeps the last data read; the tick reads the list again.
                self.stale = true;
                self.warn(
                    "Database busy (another process is writing, e.g. an import): not done, try again in a moment; the screen shows the last data read.",
                );
            } else {
                self.error(format!("{e:#}"));
            }
        }
        self.keep_in_view();
        self.clear_stale_status(&before, said);
        self.remind_arrival(was_busy);
        self.messages.note(&self.status, self.now);
        std::mem::take(&mut self.effects)
    }

    /// Asks the runtime for `effect` once the action being applied is done.
    fn ask(&mut self, effect: Effect) {
        self.effects.push(effect);
    }

    fn apply(&mut self, action: Action) -> anyhow::Result<()> {
        // Terminals send a paste's line breaks as CR (xterm, VTE, tmux), and a text whose
        // lines ended in CR LF as CR CR: made the lines the sender wrote before anything reads
        // the text (see `protocol::line_ends`).
        let action = match action {
            Action::Paste(t) if t.contains('\r') => Action::Paste(
                crate::protocol::line_ends::normalize_owned(t)
                    .replace("\r\n", "\n")
                    .replace('\r', "\n"),
            ),
            a => a,
        };
        // Nor does the mouse act on a screen that shows nothing (see `key_action`).
        if panes::layout::too_small(self.size)
            && matches!(action, Action::Click(..) | Action::Scroll(..))
        {
            return Ok(());
        }
        match action {
            Action::Tick => {
                self.retry_pending();
                self.take_watched();
                self.step_deliveries();
                self.notice_other_writers();
                self.refresh_inspector();
                return Ok(());
            }
            Action::Resize(w, h) => {
                self.size = Rect::new(0, 0, w, h);
                self.refit_text_boxes();
                self.refresh_inspector();
                return Ok(());
            }
            // A paste always lands somewhere: in the box, prompt, open thread filter or new
            // conversation's context that takes text, in the composer, else in a new preview (replacing help, drafts or an
            // older preview).
            Action::Paste(text) if !self.takes_typed_text() => {
                self.popup = None;
                return self.preview_paste("<paste>", &text);
            }
            Action::Run(line) => return self.run_command(&line),
            Action::Piped(ok, line) => {
                self.piped(ok, line);
                return Ok(());
            }
            Action::EditedPaste(text) => {
                // The edited text is a paste of its own; the original stays stored.
                self.popup = None;
                return self.preview_paste("<edited paste>", &text);
            }
            Action::EditedBody(text) => {
                if let Some(c) = self.composer.as_mut() {
                    let (clean, removed) = strip_controls(&text);
                    c.set_body("the $EDITOR edit", &clean);
                    let replaced = clean.matches('\u{FFFD}').count();
                    // Said every time: a failure said before must not stay on the line.
                    if removed > 0 {
                        self.warn(format!(
                            "Body edited in $EDITOR; removed {removed} control character(s) from it"
                        ));
                    } else if replaced > 0 {
                        self.warn(format!(
                            "Body edited in $EDITOR; {replaced} character(s) were not UTF-8 and read as \u{FFFD}"
                        ));
                    } else {
                        self.info("Body edited in $EDITOR.");
                    }
                    self.save_draft(false)?;
                }
                return Ok(());
            }
            _ => {}
        }
        if self.popup.is_some() {
            return self.popup_action(action);
        }
        if self.composer.is_some() {
            return self.composer_action(action);
        }
        self.browse_action(action)
    }

    /// A draft was created or deleted: the list's ✎ markers and the draft count are read
    /// again at once, so they never disagree with `D`.
    pub(crate) fn drafts_changed(&mut self) -> anyhow::Result<()> {
        self.recount_drafts()?;
        self.list.reload(&self.store)?;
        Ok(())
    }

    /// Counts the drafts again for the title bar: after a copy, an envelope filed but not
    /// copied is no draft any more.
    pub(crate) fn recount_drafts(&mut self) -> anyhow::Result<()> {
        self.drafts = draft_count(&self.store)?;
        Ok(())
    }

    /// Sets an informational status.
    pub fn info(&mut self, s: impl Into<String>) {
        self.set_status((Level::Info, s.into()));
    }

    /// Sets a warning status.
    pub fn warn(&mut self, s: impl Into<String>) {
        self.set_status((Level::Warn, s.into()));
    }

    /// Sets an error status.
    pub fn error(&mut self, s: impl Into<String>) {
        self.set_status((Level::Error, s.into()));
    }

    /// The screen regions at the current size.
    pub fn areas(&self) -> panes::layout::Areas {
        panes::layout::Areas::new(self.size)
    }

    /// The selected message of the open thread, whole.
    pub fn selected_message(&self) -> Option<&crate::store::StoredMessage> {
        self.current.as_ref()
    }

    /// The id of the message selected in the tree.
    pub fn selected_id(&self) -> Option<&str> {
        let t = self.tree.as_ref()?;
        t.selected_index().map(|i| t.outline.rows[i].id.as_str())
    }

    /// After a resize: the paste box shows as much of its text as its new size holds (see
    /// `refit`; the composer's boxes are scrolled with the rest, in `in_view`).
    fn refit_text_boxes(&mut self) {
        let width = self.size.width;
        if let Some(popups::popup::Popup::PasteBox { text, .. }) = self.popup.as_mut() {
            popups::refit::refit(text, width);
        }
        self.lay_out_reading();
    }

    /// Loads the selected message when the selection changed, and rebuilds the inspector
    /// rows for it and the pane's width.
    pub(crate) fn refresh_inspector(&mut self) {
        let id = self.selected_id().map(str::to_string);
        if id.as_deref() != self.current.as_ref().map(|m| m.id.as_str()) {
            self.inspector.built_for = None;
            self.current = match id.as_deref().map(|i| self.store.message(i)) {
                Some(Ok(m)) => m,
                Some(Err(e)) => {
                    self.error(format!("cannot read the message: {e}"));
                    None
                }
                None => None,
            };
            self.versions_selected();
            self.delivery = match &self.current {
                Some(m) => self.store.delivery(&m.id).unwrap_or_default(),
                None => None,
            };
            self.signature = match &self.current {
                Some(m) => self.store.signature_check(&m.id).unwrap_or_default(),
                None => None,
            };
        }
        let area = self.areas().inspector;
        let unfold = self
            .keymap
            .key_for(Scope::Browse, &Action::ToggleHeaders)
            .map(|k| k.to_string())
            .unwrap_or_else(|| "toggle_headers".into());
        self.inspector.delivery_line = (self.current.as_ref())
            .zip(self.delivery.as_ref())
            .map(|(m, d)| relay::queue::delivery_text(m, d, self.now));
        self.inspector.signature_line = self.signature.as_ref().map(|c| {
            let id = c.pkid.as_deref().map(safe_line_id).unwrap_or_default();
            let line = format!("{} {} {id}— {}", c.state.mark(), c.state.as_str(), c.detail);
            (line, c.state.is_alarm())
        });
        self.inspector.refresh(
            self.current.as_ref(),
            panes::layout::inner_width(area),
            panes::layout::inner_height(area),
            &unfold,
        );
    }
}

/// A key id as the inspector's signature line names it, followed by a space, and by the
/// look-alike mark when its letters mix scripts.
fn safe_line_id(id: &str) -> String {
    match crate::sanitize::look_alike_mark(id) {
        Some(mark) => format!("`{}` {mark} ", text::safe_line(id)),
        None => format!("`{}` ", text::safe_line(id)),
    }
}

pub(crate) use crate::sanitize::strip_controls;

/// Drafts as the title bar, the list's ✎ and `D` count them: those being composed and the
/// envelopes filed but never copied (the queue's drafts).
pub(crate) fn draft_count(store: &crate::store::Store) -> anyhow::Result<usize> {
    Ok(store.drafts()?.len() + store.unsent_count()?)
}
