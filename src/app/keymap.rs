//! Keys → actions, scoped by what has the focus. The default table below (with the list moves
//! every list shares) is the one source of the bindings, the help screen and the footer hints, so they cannot disagree; the
//! operator's `[keys.<scope>]` tables in config.toml override it key by key.

use std::collections::{BTreeMap, HashMap};

use std::fmt;

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::action::{Action, UnknownAction};

/// Where a key is pressed. Browse bindings apply in the thread list, tree and inspector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    /// The thread list, tree and inspector.
    Browse,
    /// The thread list's filter, opened with `f`: unbound keys are typed into it, so a
    /// filter can hold any letter without firing a command.
    Filter,
    /// The composer; keys bound to nothing here are typed into the focused field.
    Composer,
    /// The list of envelopes found in a paste.
    Preview,
    /// The box to paste into; unbound keys are typed.
    PasteBox,
    /// The drafts list.
    Drafts,
    /// The help screen.
    Help,
    /// The search and command prompts; unbound keys are typed.
    Prompt,
    /// A question that needs an explicit yes (erasing).
    Confirm,
    /// The queue of what is left to relay, answer and chase.
    Queue,
    /// The poll panel of a POLL.
    Poll,
    /// A list to pick from: an error code (after E), a contact (after N).
    Picker,
    /// One message full screen.
    Reader,
    /// The answers to one message in columns, one per sender.
    SideBySide,
}

impl Scope {
    /// Every scope, in the order help lists them.
    pub const ALL: [Scope; 14] = [
        Scope::Browse,
        Scope::Filter,
        Scope::Composer,
        Scope::Preview,
        Scope::PasteBox,
        Scope::Drafts,
        Scope::Help,
        Scope::Prompt,
        Scope::Confirm,
        Scope::Queue,
        Scope::Poll,
        Scope::Picker,
        Scope::Reader,
        Scope::SideBySide,
    ];

    /// The scopes that show a list: each moves with [`super::panes::list_move::MOVES`].
    pub(crate) const LISTS: [Scope; 8] = [
        Scope::Browse,
        Scope::Preview,
        Scope::Drafts,
        Scope::Help,
        Scope::Queue,
        Scope::Picker,
        Scope::Reader,
        Scope::SideBySide,
    ];

    /// The config table name (`[keys.browse]`).
    pub fn name(self) -> &'static str {
        match self {
            Scope::Browse => "browse",
            Scope::Filter => "filter",
            Scope::Composer => "composer",
            Scope::Preview => "preview",
            Scope::PasteBox => "paste_box",
            Scope::Drafts => "drafts",
            Scope::Help => "help",
            Scope::Prompt => "prompt",
            Scope::Confirm => "confirm",
            Scope::Queue => "queue",
            Scope::Poll => "poll",
            Scope::Picker => "picker",
            Scope::Reader => "reader",
            Scope::SideBySide => "side_by_side",
        }
    }

    /// The heading of this scope in help.
    pub fn title(self) -> &'static str {
        match self {
            Scope::Browse => "Browse (thread list, tree, inspector)",
            Scope::Filter => "Thread filter (after f) — other keys type into the filter",
            Scope::Composer => "Composer — other keys type into the focused field",
            Scope::Preview => "Paste preview",
            Scope::PasteBox => "Paste box",
            Scope::Drafts => "Drafts",
            Scope::Help => "Help",
            Scope::Prompt => "Search and command line",
            Scope::Confirm => "Questions (erase?)",
            Scope::Queue => "Queue (after Q)",
            Scope::Poll => "Poll panel (after P)",
            Scope::Picker => "Pickers (an error code after E, a contact after N)",
            Scope::Reader => "Reader (after o) — / searches, the search types like a prompt",
            Scope::SideBySide => "Side by side (after C)",
        }
    }

    /// The actions the footer hints at in this scope, in order.
    pub fn hints(self) -> &'static [Action] {
        use Action::*;
        match self {
            Scope::Browse => &[
                Help,
                Open,
                Reply,
                NewEnvelope,
                Copy,
                Filter,
                PasteClipboard,
                Search,
                CopyThread,
                Quit,
            ],
            Scope::Filter => &[Open, Back, Down, Up],
            Scope::Composer => &[
                SaveAndCopy,
                ShowCopy,
                SaveDraft,
                EditExternal,
                NextField,
                MetaTemplate,
                Back,
            ],
            Scope::Preview => &[Confirm, SaveToFile, Down, Back],
            Scope::PasteBox => &[Confirm, Undo, Back],
            Scope::Drafts => &[Open, Discard, Back],
            Scope::Help => &[Down, Back],
            Scope::Prompt => &[Open, Down, Back],
            Scope::Confirm => &[Erase, Back],
            Scope::Queue => &[Open, Done, Dismiss, Undo, Down, Back],
            Scope::Poll => &[ClosePoll, Back],
            Scope::Picker => &[Open, Down, Up, Back],
            Scope::Reader => &[
                Search,
                SearchNext,
                NextMessage,
                CopyBody,
                CopyBlock(1),
                Back,
            ],
            Scope::SideBySide => &[Down, ColumnRight, Back],
        }
    }
}

/// Where the browse screen is, for its footer: the focused pane and what the selected message
/// allows or asks for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BrowseAt {
    /// The focused pane.
    pub pane: Option<super::Pane>,
    /// The selected message is to relay.
    pub to_relay: bool,
    /// The selected message is addressed to the operator, to answer.
    pub to_me: bool,
    /// The selected message is a reply the desk placed (`≈`): `M` moves it.
    pub placed: bool,
    /// The selected message is a POLL: `P` opens its panel.
    pub poll: bool,
    /// Copies wait to be put up one after another (`>`).
    pub waiting: bool,
}

/// The browse footer's hints where the browse screen is, most useful first: help, the key for
/// what the selection asks (relay it, answer it), the next thing to do, then the focused
/// pane's own keys. Each with a short label where the help's words are too long for a
/// footer.
fn browse_hints(at: BrowseAt) -> Vec<(Action, &'static str)> {
    use super::Pane;
    use Action::*;
    let mut out: Vec<(Action, &'static str)> = vec![(Help, "help")];
    if at.pane != Some(Pane::List) {
        if at.to_relay {
            out.push((Copy, "relay it"));
        }
        if at.to_me {
            out.push((Reply, "answer it"));
        }
        if at.waiting {
            out.push((RelayNext, "put up the next"));
        }
        if at.placed {
            out.push((MoveReply, "move ≈ reply"));
        }
        if at.poll {
            out.push((Poll, "poll panel"));
        }
    }
    out.push((NextToDo, "next to do"));
    let pane: &[(Action, &'static str)] = match at.pane {
        Some(Pane::List) | None => &[
            (Open, "open"),
            (Filter, "filter"),
            (CycleStateFilter, "by state"),
            (NewEnvelope, "new"),
            (PasteClipboard, "paste"),
            (Archive, "archive"),
            (Search, "search"),
        ],
        Some(Pane::Tree) => &[
            (Reply, "reply"),
            (Copy, "copy"),
            (ToggleBranch, "fold"),
            (Parent, "parent"),
            (NextPane, "inspector"),
        ],
        Some(Pane::Inspector) => &[
            (ToggleRaw, "raw / canonical"),
            (ToggleHeaders, "headers"),
            (Reply, "reply"),
            (Copy, "copy"),
            (Pipe, "pipe"),
        ],
    };
    for (a, what) in pane {
        if !out.iter().any(|(b, _)| b == a) {
            out.push((a.clone(), what));
        }
    }
    out.push((Quit, "quit"));
    out
}

/// A key with its modifiers, as written in config (`ctrl-s`, `G`, `pagedown`, `?`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key {
    /// The key.
    pub code: KeyCode,
    /// Ctrl and Alt (Shift is part of the character for printable keys).
    pub mods: KeyModifiers,
}

impl Key {
    /// The key of a terminal key event, normalized so that `Y` and `shift-y` are one key.
    pub(crate) fn from_event(ev: &KeyEvent) -> Key {
        let mut mods = ev.modifiers & (KeyModifiers::CONTROL | KeyModifiers::ALT);
        let code = match ev.code {
            KeyCode::Char(c) if mods.contains(KeyModifiers::CONTROL) => {
                KeyCode::Char(control_char(c))
            }
            KeyCode::BackTab => {
                mods -= KeyModifiers::SHIFT;
                KeyCode::BackTab
            }
            c => c,
        };
        Key { code, mods }
    }

    /// Parses a key name; `None` when it is not one.
    pub fn parse(s: &str) -> Option<Key> {
        let mut mods = KeyModifiers::NONE;
        let mut rest = s;
        loop {
            let lower = rest.to_ascii_lowercase();
            if let Some(r) = lower.strip_prefix("ctrl-").or(lower.strip_prefix("c-")) {
                mods |= KeyModifiers::CONTROL;
                rest = &rest[rest.len() - r.len()..];
            } else if let Some(r) = lower.strip_prefix("alt-").or(lower.strip_prefix("m-")) {
                mods |= KeyModifiers::ALT;
                rest = &rest[rest.len() - r.len()..];
            } else {
                break;
            }
        }
        let mut chars = rest.chars();
        let code = match (chars.next(), chars.next()) {
            (Some(c), None) if mods.contains(KeyModifiers::CONTROL) => {
                KeyCode::Char(control_char(c))
            }
            (Some(c), None) => KeyCode::Char(c),
            _ => match rest.to_ascii_lowercase().as_str() {
                "enter" | "return" => KeyCode::Enter,
                "esc" | "escape" => KeyCode::Esc,
                "tab" => KeyCode::Tab,
                "backtab" | "shift-tab" => KeyCode::BackTab,
                "space" => KeyCode::Char(' '),
                "backspace" => KeyCode::Backspace,
                "delete" | "del" => KeyCode::Delete,
                "insert" => KeyCode::Insert,
                "up" => KeyCode::Up,
                "down" => KeyCode::Down,
                "left" => KeyCode::Left,
                "right" => KeyCode::Right,
                "home" => KeyCode::Home,
                "end" => KeyCode::End,
                "pageup" | "pgup" => KeyCode::PageUp,
                "pagedown" | "pgdn" => KeyCode::PageDown,
                f if f.starts_with('f') => KeyCode::F(f[1..].parse().ok().filter(|n| *n <= 24)?),
                _ => return None,
            },
        };
        Some(Key { code, mods })
    }
}

/// The character of a Ctrl key as bindings name it: lower case, and `_` for the one control
/// code (0x1F) terminals send for C-_, C-/ and C-7 alike (crossterm reports it as C-7, a
/// terminal with the kitty protocol as C-/), so that `ctrl-_` in config is the key pressed.
fn control_char(c: char) -> char {
    match c.to_ascii_lowercase() {
        '7' | '/' => '_',
        c => c,
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.mods.contains(KeyModifiers::CONTROL) {
            f.write_str("C-")?;
        }
        if self.mods.contains(KeyModifiers::ALT) {
            f.write_str("M-")?;
        }
        match self.code {
            KeyCode::Char(' ') => f.write_str("Space"),
            KeyCode::Char(c) => write!(f, "{c}"),
            KeyCode::Enter => f.write_str("Enter"),
            KeyCode::Esc => f.write_str("Esc"),
            KeyCode::Tab => f.write_str("Tab"),
            KeyCode::BackTab => f.write_str("S-Tab"),
            KeyCode::Backspace => f.write_str("Bksp"),
            KeyCode::Delete => f.write_str("Del"),
            KeyCode::Up => f.write_str("↑"),
            KeyCode::Down => f.write_str("↓"),
            KeyCode::Left => f.write_str("←"),
            KeyCode::Right => f.write_str("→"),
            KeyCode::Home => f.write_str("Home"),
            KeyCode::End => f.write_str("End"),
            KeyCode::PageUp => f.write_str("PgUp"),
            KeyCode::PageDown => f.write_str("PgDn"),
            KeyCode::F(n) => write!(f, "F{n}"),
            other => write!(f, "{other:?}"),
        }
    }
}

/// The defaults: (scope, keys, action). Every list scope ([`Scope::LISTS`]) first binds the
/// list moves ([`super::panes::list_move::MOVES`]); a row here for the same key wins.
const DEFAULTS: &[(Scope, &str, Action)] = &[
    (Scope::Browse, "q", Action::Quit),
    (Scope::Browse, "enter", Action::Open),
    (Scope::Browse, "esc", Action::Back),
    (Scope::Browse, "tab", Action::NextPane),
    (Scope::Browse, "backtab", Action::PrevPane),
    (Scope::Browse, "h left", Action::Collapse),
    (Scope::Browse, "l right", Action::Expand),
    (Scope::Browse, "space", Action::ToggleBranch),
    (Scope::Browse, "u", Action::Parent),
    (Scope::Browse, "n", Action::NewEnvelope),
    (Scope::Browse, "r", Action::Reply),
    (Scope::Browse, "y", Action::Copy),
    (Scope::Browse, "Y", Action::CopyThread),
    (Scope::Browse, "p", Action::PasteClipboard),
    (Scope::Browse, "/", Action::Search),
    (Scope::Browse, ":", Action::Command),
    (Scope::Browse, "?", Action::Help),
    (Scope::Browse, "v", Action::ToggleRaw),
    (Scope::Browse, "f", Action::Filter),
    (Scope::Browse, "H", Action::ToggleHeaders),
    (Scope::Browse, "|", Action::Pipe),
    (Scope::Browse, "alt-|", Action::PipeThread),
    (Scope::Browse, "D", Action::Drafts),
    (Scope::Browse, "X", Action::Erase),
    (Scope::Browse, "V", Action::NextVersion),
    (Scope::Browse, "M", Action::MoveReply),
    (Scope::Browse, "W", Action::ToggleWatch),
    (Scope::Browse, "N", Action::NewConversation),
    (Scope::Browse, "ctrl-c", Action::Quit),
    (Scope::Browse, "Q", Action::Queue),
    (Scope::Browse, "s", Action::CycleStateFilter),
    (Scope::Browse, "P", Action::Poll),
    (Scope::Browse, "E", Action::ErrorReply),
    (Scope::Poll, "esc q P", Action::Back),
    (Scope::Poll, "c", Action::ClosePoll),
    (Scope::Browse, "C", Action::SideBySide),
    (Scope::SideBySide, "esc q C", Action::Back),
    (Scope::SideBySide, "h left", Action::ColumnLeft),
    (Scope::SideBySide, "l right", Action::ColumnRight),
    (Scope::Browse, "o", Action::Read),
    (Scope::Reader, "esc q o", Action::Back),
    (Scope::Reader, "/", Action::Search),
    (Scope::Reader, "n", Action::SearchNext),
    (Scope::Reader, "N", Action::SearchPrev),
    (Scope::Reader, "J ]", Action::NextMessage),
    (Scope::Reader, "K [", Action::PrevMessage),
    (Scope::Reader, "y", Action::CopyBody),
    (Scope::Reader, "space", Action::PageDown),
    (Scope::Reader, "1", Action::CopyBlock(1)),
    (Scope::Reader, "2", Action::CopyBlock(2)),
    (Scope::Reader, "3", Action::CopyBlock(3)),
    (Scope::Reader, "4", Action::CopyBlock(4)),
    (Scope::Reader, "5", Action::CopyBlock(5)),
    (Scope::Reader, "6", Action::CopyBlock(6)),
    (Scope::Reader, "7", Action::CopyBlock(7)),
    (Scope::Reader, "8", Action::CopyBlock(8)),
    (Scope::Reader, "9", Action::CopyBlock(9)),
    (Scope::Browse, "K", Action::Keys),
    (Scope::Browse, ">", Action::RelayNext),
    // As mail clients archive (aerc, Thunderbird: `a`); `U` undoes, `u` being the parent.
    (Scope::Browse, "a", Action::Archive),
    (Scope::Browse, "U", Action::Undo),
    // What the watch brought for the operator while they were busy: `J`ump to it.
    (Scope::Browse, "J", Action::JumpToArrival),
    // The next thing to do, across threads: as neomutt's next-unread, for what needs you.
    (Scope::Browse, "t", Action::NextToDo),
    (Scope::Queue, "enter", Action::Open),
    (Scope::Queue, "esc q Q", Action::Back),
    // `d` as mutt's delete takes a row out of the index, `x` as drafts discard, `u` as
    // mutt's undelete.
    (Scope::Queue, "d", Action::Done),
    (Scope::Queue, "x delete", Action::Dismiss),
    (Scope::Queue, "u", Action::Undo),
    (Scope::Filter, "enter", Action::Open),
    (Scope::Filter, "esc", Action::Back),
    (Scope::Filter, "down ctrl-n", Action::Down),
    (Scope::Filter, "up ctrl-p", Action::Up),
    (Scope::Filter, "tab", Action::NextPane),
    (Scope::Filter, "ctrl-c", Action::Quit),
    (Scope::Filter, "ctrl-z ctrl-_", Action::Undo),
    (Scope::Filter, "ctrl-r", Action::Redo),
    (Scope::Composer, "ctrl-y", Action::SaveAndCopy),
    (Scope::Composer, "ctrl-s", Action::SaveDraft),
    // M-e as neomutt's and aerc's composers edit in $EDITOR with `e`: C-e is readline's
    // end of line.
    (Scope::Composer, "alt-e", Action::EditExternal),
    (Scope::Composer, "ctrl-o", Action::ShowCopy),
    (Scope::Composer, "tab", Action::NextField),
    (Scope::Composer, "backtab", Action::PrevField),
    (Scope::Composer, "ctrl-t", Action::MetaTemplate),
    // C-z and C-_ (what terminals send for C-/, emacs's and readline's undo); C-u is
    // readline's kill to the start of the line. C-r redoes, as in vim.
    (Scope::Composer, "ctrl-z ctrl-_", Action::Undo),
    (Scope::Composer, "ctrl-r", Action::Redo),
    (Scope::Composer, "alt-a", Action::Attach),
    (Scope::Composer, "alt-r", Action::Redact),
    (Scope::Composer, "esc ctrl-c", Action::Back),
    (Scope::Preview, "enter", Action::Confirm),
    (Scope::Preview, "esc q", Action::Back),
    (Scope::Preview, "w", Action::SaveToFile),
    (Scope::Preview, "F", Action::ImportFreshIds),
    (Scope::Preview, "e", Action::EditPaste),
    (Scope::Preview, "E", Action::ErrorReply),
    (Scope::PasteBox, "ctrl-s", Action::Confirm),
    (Scope::PasteBox, "ctrl-z ctrl-_", Action::Undo),
    (Scope::PasteBox, "ctrl-r", Action::Redo),
    (Scope::PasteBox, "esc ctrl-c", Action::Back),
    (Scope::Picker, "enter", Action::Open),
    (Scope::Picker, "esc q", Action::Back),
    (Scope::Drafts, "enter", Action::Open),
    (Scope::Drafts, "delete x", Action::Discard),
    (Scope::Drafts, "esc q", Action::Back),
    (Scope::Help, "esc q ?", Action::Back),
    (Scope::Help, "space", Action::PageDown),
    (Scope::Prompt, "enter", Action::Open),
    (Scope::Prompt, "esc ctrl-c", Action::Back),
    (Scope::Prompt, "down ctrl-n", Action::Down),
    (Scope::Prompt, "up ctrl-p", Action::Up),
    (Scope::Prompt, "tab", Action::Complete),
    (Scope::Prompt, "ctrl-z ctrl-_", Action::Undo),
    (Scope::Prompt, "ctrl-r", Action::Redo),
    (Scope::Confirm, "y", Action::Erase),
    (Scope::Confirm, "esc n q", Action::Back),
];

/// A config binding that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeymapError {
    /// `[keys.<scope>]` names no scope.
    #[error("unknown key scope `[keys.{0}]`; scopes are: {scopes}", scopes = scope_names())]
    Scope(String),
    /// A key that types or edits text, bound where unbound keys are typed: it could no longer
    /// type or edit there (`a` bound in the composer took every `a` of the body).
    #[error(
        "`{0}` types or edits text in [keys.{1}]: bound there, it could no longer do so; bind a key with ctrl- or alt-, or a function key"
    )]
    Typed(String, &'static str),
    /// A key terminals send as another key's byte: it never arrives as itself.
    #[error("`{0}` reaches crosstalk as `{1}` (terminals send the same byte): bind `{1}`")]
    SentAs(String, &'static str),
    /// The bindings leave a scope without its way out (the composer could not be left), or
    /// only with keys few keyboards have (F13 to F24).
    #[error(
        "[keys.{0}] leaves no key for `{1}` a keyboard sends: {0} could not be left; keep one (the default is {2})"
    )]
    NoWayOut(&'static str, &'static str, String),
    /// The key name is not one.
    #[error(
        "unknown key `{0}` in [keys.{1}]; write a character (`j`, `G`, `?`), a name (enter, esc, tab, backtab, space, up, down, left, right, home, end, pageup, pagedown, backspace, delete, f1-f24), with `ctrl-`/`alt-` in front if needed"
    )]
    Key(String, &'static str),
    /// The action name is not one.
    #[error("in [keys.{1}]: {0}")]
    Action(UnknownAction, &'static str),
}

/// The bindings in force.
#[derive(Debug, Clone)]
pub struct Keymap {
    map: HashMap<(Scope, Key), Action>,
    /// Keys of each (scope, action), defaults first, for help and hints.
    keys: BTreeMap<Scope, Vec<(Action, Vec<Key>)>>,
}

impl Default for Keymap {
    fn default() -> Self {
        let mut km = Keymap {
            map: HashMap::new(),
            keys: BTreeMap::new(),
        };
        let moves = Scope::LISTS.iter().flat_map(|scope| {
            super::panes::list_move::MOVES
                .iter()
                .map(move |(keys, action)| (scope, keys, action))
        });
        let own = DEFAULTS
            .iter()
            .map(|(scope, keys, action)| (scope, keys, action));
        for (scope, keys, action) in moves.chain(own) {
            for k in keys.split(' ') {
                if let Some(key) = Key::parse(k) {
                    km.bind(*scope, key, action.clone());
                }
            }
        }
        km
    }
}

/// The config names of every scope, for the error that names an unknown one.
fn scope_names() -> String {
    Scope::ALL.map(Scope::name).join(", ")
}

/// The action that leaves each scope: a config may move it to other keys, never take its
/// last one.
fn way_out(scope: Scope) -> Action {
    match scope {
        Scope::Browse => Action::Quit,
        _ => Action::Back,
    }
}

/// Whether unbound keys are typed into a text box in `scope`.
fn types_text(scope: Scope) -> bool {
    matches!(
        scope,
        Scope::Filter | Scope::Composer | Scope::PasteBox | Scope::Prompt
    )
}

/// Whether `key`, bound to nothing in `scope`, edits its text box: characters, the keys that
/// delete and move along a line, the readline keys (`C-a`, `C-k`, `M-b`, …, see
/// [`super::writing::readline`]), and in the boxes of several lines Enter and the keys that
/// move between lines. Bound to an action there, it could no longer type or edit.
fn edits_text(scope: Scope, key: Key) -> bool {
    if !types_text(scope) {
        return false;
    }
    if super::writing::readline::is_edit_key(key) {
        return true;
    }
    if !key.mods.is_empty() {
        return false;
    }
    let lines = matches!(scope, Scope::Composer | Scope::PasteBox);
    match key.code {
        KeyCode::Char(_)
        | KeyCode::Backspace
        | KeyCode::Delete
        | KeyCode::Left
        | KeyCode::Right
        | KeyCode::Home
        | KeyCode::End => true,
        KeyCode::Enter | KeyCode::Up | KeyCode::Down | KeyCode::PageUp | KeyCode::PageDown => lines,
        _ => false,
    }
}

/// The key a terminal sends for `key` when it is another key's byte (`ctrl-[` is Esc's,
/// `ctrl-i` Tab's, `ctrl-m` Enter's, `ctrl-h` Backspace's): bound, it would never arrive.
fn sent_as(key: Key) -> Option<&'static str> {
    if key.mods != KeyModifiers::CONTROL {
        return None;
    }
    match key.code {
        KeyCode::Char('[') => Some("esc"),
        KeyCode::Char('i') => Some("tab"),
        KeyCode::Char('m') | KeyCode::Char('j') => Some("enter"),
        KeyCode::Char('h') => Some("backspace"),
        _ => None,
    }
}

/// Whether a usual keyboard can send `key` (F13 to F24 are on few keyboards): a scope's way
/// out must be such a key. (Keys sent as another key's byte are refused before.)
fn sendable(key: &Key) -> bool {
    !matches!(key.code, KeyCode::F(n) if n > 12)
}

impl Keymap {
    /// The defaults with `overrides` — (scope, key name, action name) — applied in order.
    /// Every error gives the index of the override at fault with what is wrong with it: all
    /// of them, so a config is mended in one go.
    pub fn with_overrides<'a>(
        overrides: impl IntoIterator<Item = (&'a str, &'a str, &'a str)>,
    ) -> Result<Keymap, Vec<(usize, KeymapError)>> {
        let mut km = Keymap::default();
        let defaults = Keymap::default();
        let mut errors = Vec::new();
        // The last override that took a key from a scope's way out.
        let mut took_out: BTreeMap<Scope, usize> = BTreeMap::new();
        for (i, (scope_name, key_name, action_name)) in overrides.into_iter().enumerate() {
            let Some(scope) = Scope::ALL.into_iter().find(|s| s.name() == scope_name) else {
                errors.push((i, KeymapError::Scope(scope_name.to_string())));
                continue;
            };
            let Some(key) = Key::parse(key_name) else {
                errors.push((i, KeymapError::Key(key_name.to_string(), scope.name())));
                continue;
            };
            let action: Action = match action_name.parse() {
                Ok(a) => a,
                Err(e) => {
                    errors.push((i, KeymapError::Action(e, scope.name())));
                    continue;
                }
            };
            if let Some(real) = sent_as(key) {
                errors.push((i, KeymapError::SentAs(key.to_string(), real)));
                continue;
            }
            let bound_by_default = defaults.map.contains_key(&(scope, key));
            if edits_text(scope, key) && !bound_by_default {
                errors.push((i, KeymapError::Typed(key.to_string(), scope.name())));
                continue;
            }
            if km.map.get(&(scope, key)) == Some(&way_out(scope)) && action != way_out(scope) {
                took_out.insert(scope, i);
            }
            km.bind(scope, key, action);
        }
        for (scope, i) in took_out {
            let out = way_out(scope);
            let left = (km.bindings(scope).iter())
                .filter(|(a, _)| *a == out)
                .flat_map(|(_, keys)| keys)
                .any(sendable);
            if !left {
                let default = (DEFAULTS.iter())
                    .filter(|(s, _, a)| *s == scope && *a == out)
                    .map(|(_, keys, _)| keys.replace(' ', ", "))
                    .collect::<Vec<_>>()
                    .join(", ");
                let name = out.name().unwrap_or("back");
                errors.push((i, KeymapError::NoWayOut(scope.name(), name, default)));
            }
        }
        if errors.is_empty() {
            Ok(km)
        } else {
            errors.sort_by_key(|(i, _)| *i);
            Err(errors)
        }
    }

    fn bind(&mut self, scope: Scope, key: Key, action: Action) {
        if let Some(old) = self.map.insert((scope, key), action.clone()) {
            if let Some(list) = self.keys.get_mut(&scope) {
                for (a, ks) in list.iter_mut() {
                    if *a == old {
                        ks.retain(|k| *k != key);
                    }
                }
            }
        }
        let list = self.keys.entry(scope).or_default();
        match list.iter_mut().find(|(a, _)| *a == action) {
            Some((_, ks)) => ks.push(key),
            None => list.push((action, vec![key])),
        }
    }

    /// The action `ev` is bound to in `scope`.
    pub fn action(&self, scope: Scope, ev: &KeyEvent) -> Option<Action> {
        self.map.get(&(scope, Key::from_event(ev))).cloned()
    }

    /// Every binding of a scope: (action, its keys), in table order.
    pub(crate) fn bindings(&self, scope: Scope) -> &[(Action, Vec<Key>)] {
        self.keys.get(&scope).map(Vec::as_slice).unwrap_or(&[])
    }

    /// The first key of `action` in `scope`, for hints.
    pub(crate) fn key_for(&self, scope: Scope, action: &Action) -> Option<Key> {
        self.bindings(scope)
            .iter()
            .find(|(a, _)| a == action)
            .and_then(|(_, ks)| ks.first().copied())
    }

    /// The help screen's rows: section titles (key column empty) and `keys — what` rows,
    /// generated from the bindings in force.
    pub fn help_rows(&self) -> Vec<(String, String)> {
        let mut rows = Vec::new();
        for scope in Scope::ALL {
            rows.push((String::new(), scope.title().to_string()));
            for (action, keys) in self.bindings(scope) {
                if keys.is_empty() {
                    continue;
                }
                let keys: Vec<String> = keys.iter().map(Key::to_string).collect();
                rows.push((keys.join(" "), action.describe().to_string()));
            }
            rows.push((String::new(), String::new()));
        }
        rows.push((
            String::new(),
            "Editing text (composer, search, command line, filter, paste box)".into(),
        ));
        rows.extend(super::writing::readline::help_rows());
        rows.push((String::new(), String::new()));
        rows.push((String::new(), "Commands (:)".into()));
        rows.extend(super::command::commands::help_rows());
        rows.push((
            "↑ ↓ (C-p C-n)".into(),
            "recall the commands run before".into(),
        ));
        rows
    }

    /// The browse footer's hints where the browse screen is (see [`BrowseAt`]): (key, what),
    /// by the keys in force, so a rebinding shows; an action bound to no key is left out.
    pub fn browse_hints(&self, at: BrowseAt) -> Vec<(String, &'static str)> {
        browse_hints(at)
            .into_iter()
            .filter_map(|(a, what)| Some((self.key_for(Scope::Browse, &a)?.to_string(), what)))
            .collect()
    }

    /// The footer hints of a scope: (key, description).
    pub fn hints(&self, scope: Scope) -> Vec<(String, &'static str)> {
        scope
            .hints()
            .iter()
            .filter_map(|a| Some((self.key_for(scope, a)?.to_string(), a.describe())))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(code: KeyCode, mods: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, mods)
    }

    /// Help's `:export` rows name every format the command writes, from its own table.
    #[test]
    fn help_names_every_export_format() {
        let rows = Keymap::default().help_rows();
        for cmd in [":export FILE", ":export-all FILE"] {
            let (_, what) = rows.iter().find(|(k, _)| k == cmd).expect(cmd);
            for (ext, _) in crate::export::EXTENSIONS {
                assert!(what.contains(&format!(".{ext}")), "{cmd}: {what}");
            }
            assert!(
                what.contains("else envelopes")
                    && !what.contains(super::super::command::commands::FORMATS),
                "{what}"
            );
        }
    }

    #[test]
    fn defaults_resolve() {
        let km = Keymap::default();
        let a = |s, c, m| km.action(s, &ev(c, m));
        assert_eq!(
            a(Scope::Browse, KeyCode::Char('j'), KeyModifiers::NONE),
            Some(Action::Down)
        );
        assert_eq!(
            a(Scope::Browse, KeyCode::Char('Y'), KeyModifiers::SHIFT),
            Some(Action::CopyThread)
        );
        assert_eq!(
            a(Scope::Composer, KeyCode::Char('y'), KeyModifiers::CONTROL),
            Some(Action::SaveAndCopy)
        );
        assert_eq!(
            a(Scope::Composer, KeyCode::Char('q'), KeyModifiers::NONE),
            None
        );
        assert_eq!(
            a(Scope::Browse, KeyCode::BackTab, KeyModifiers::SHIFT),
            Some(Action::PrevPane)
        );
    }

    #[test]
    fn every_list_moves_with_the_same_keys() {
        let km = Keymap::default();
        let keys = [
            "j", "k", "down", "up", "pagedown", "pageup", "ctrl-d", "ctrl-u", "g", "G", "home",
            "end",
        ];
        for scope in Scope::LISTS {
            for k in keys {
                let key = Key::parse(k).unwrap();
                let ev = ev(key.code, key.mods);
                assert_eq!(
                    km.action(scope, &ev),
                    km.action(Scope::Browse, &ev),
                    "{k} in {}",
                    scope.name()
                );
            }
        }
    }

    /// C-_ reaches the app as C-7 (the control code terminals send for C-_ and C-/), or as
    /// C-/ from a terminal that tells them apart: `ctrl-_` binds all three.
    #[test]
    fn undo_is_bound_to_the_keys_terminals_send_for_it() {
        let km = Keymap::default();
        let ctrl = |c| {
            km.action(
                Scope::Composer,
                &ev(KeyCode::Char(c), KeyModifiers::CONTROL),
            )
        };
        for c in ['z', '_', '7', '/'] {
            assert_eq!(ctrl(c), Some(Action::Undo), "C-{c}");
        }
        assert_eq!(ctrl('r'), Some(Action::Redo));
        // C-u kills to the start of the line, C-e goes to its end: readline's, not bound.
        assert_eq!(ctrl('u'), None);
        assert_eq!(ctrl('e'), None);
        assert_eq!(Key::parse("ctrl-/").unwrap().to_string(), "C-_");
        let help = km.help_rows();
        assert!(
            help.contains(&("C-z C-_".into(), "undo".into())),
            "{help:?}"
        );
        assert!(help.contains(&("M-e".into(), "$EDITOR".into())), "{help:?}");
        assert!(help.contains(&("C-r".into(), "redo".into())), "{help:?}");
    }

    #[test]
    fn overrides_replace_keys_and_feed_help() {
        let km =
            Keymap::with_overrides([("browse", "x", "quit"), ("browse", "q", "help")]).unwrap();
        let quit_keys: Vec<String> = km
            .bindings(Scope::Browse)
            .iter()
            .find(|(a, _)| *a == Action::Quit)
            .unwrap()
            .1
            .iter()
            .map(|k| k.to_string())
            .collect();
        assert_eq!(quit_keys, ["C-c", "x"]);
        assert_eq!(
            km.key_for(Scope::Browse, &Action::Help)
                .unwrap()
                .to_string(),
            "?"
        );
    }

    #[test]
    fn the_filter_scope_binds_few_keys_and_can_be_rebound() {
        let km = Keymap::with_overrides([("filter", "ctrl-g", "back")]).unwrap();
        let a = |c, m| km.action(Scope::Filter, &ev(c, m));
        assert_eq!(
            a(KeyCode::Char('g'), KeyModifiers::CONTROL),
            Some(Action::Back)
        );
        assert_eq!(a(KeyCode::Esc, KeyModifiers::NONE), Some(Action::Back));
        // Letters are not bound there: they are typed into the filter.
        for c in ['q', 'r', 'n', 'y', 'j', 'k', 'f', '/', '?', '|'] {
            assert_eq!(a(KeyCode::Char(c), KeyModifiers::NONE), None, "{c}");
        }
    }

    #[test]
    fn bad_names_are_clear_errors() {
        let bad = |scope: &str, k: &str, a: &str| {
            let errors =
                Keymap::with_overrides([("browse", "j", "down"), (scope, k, a)]).unwrap_err();
            assert_eq!(errors.len(), 1, "{errors:?}");
            assert_eq!(errors[0].0, 1);
            errors[0].1.to_string()
        };
        assert!(bad("browse", "ctrl-", "quit").contains("unknown key `ctrl-`"));
        assert!(bad("browse", "x", "explode").contains("unknown action `explode`"));
        assert!(bad("nowhere", "x", "quit").contains("unknown key scope"));
        assert!(bad("nowhere", "x", "quit").contains("poll, picker"));
        // A printable key where keys are typed, and a scope left without its way out.
        assert!(bad("composer", "a", "save_and_copy").contains("`a` types or edits text"));
        assert!(bad("filter", "e", "quit").contains("`e` types or edits text"));
        // Keys that edit a box are refused there too, unless bound there already.
        assert!(bad("composer", "enter", "undo").contains("types or edits text"));
        assert!(bad("composer", "backspace", "redo").contains("types or edits text"));
        assert!(bad("prompt", "left", "down").contains("types or edits text"));
        // The readline keys too, in every scope where text is typed.
        for (scope, k) in [
            ("composer", "ctrl-k"),
            ("composer", "ctrl-e"),
            ("composer", "ctrl-u"),
            ("composer", "alt-b"),
            ("prompt", "ctrl-w"),
            ("prompt", "ctrl-y"),
            ("filter", "ctrl-a"),
            ("filter", "alt-backspace"),
            ("paste_box", "alt-d"),
            ("paste_box", "ctrl-right"),
        ] {
            assert!(
                bad(scope, k, "help").contains("types or edits text"),
                "{k} in {scope}"
            );
        }
        // Where a default binds one (C-y copies in the composer), it may be bound again.
        assert!(Keymap::with_overrides([("composer", "ctrl-y", "save_draft")]).is_ok());
        assert!(Keymap::with_overrides([("browse", "ctrl-k", "help")]).is_ok());
        assert!(Keymap::with_overrides([("prompt", "enter", "complete")]).is_ok());
        assert!(Keymap::with_overrides([("preview", "backspace", "back")]).is_ok());
        // Keys sent as another key's byte.
        assert!(bad("filter", "ctrl-[", "back").contains("reaches crosstalk as `esc`"));
        assert!(bad("browse", "ctrl-i", "help").contains("as `tab`"));
        // A way out only on a key few keyboards have is none.
        let far = Keymap::with_overrides([
            ("composer", "esc", "undo"),
            ("composer", "ctrl-c", "undo"),
            ("composer", "f24", "back"),
        ])
        .unwrap_err();
        assert!(
            far[0]
                .1
                .to_string()
                .contains("leaves no key for `back` a keyboard sends"),
            "{far:?}"
        );
        assert!(
            Keymap::with_overrides([("composer", "esc", "undo"), ("composer", "f2", "back")])
                .is_ok()
        );
        let trapped = Keymap::with_overrides([
            ("composer", "esc", "next_field"),
            ("composer", "ctrl-c", "help"),
        ])
        .unwrap_err();
        assert!(
            trapped[0]
                .1
                .to_string()
                .contains("leaves no key for `back`"),
            "{trapped:?}"
        );
        assert!(
            Keymap::with_overrides([("browse", "q", "help")]).is_ok(),
            "C-c quits"
        );
        let no_quit =
            Keymap::with_overrides([("browse", "q", "help"), ("browse", "ctrl-c", "help")]);
        let errors = no_quit.unwrap_err();
        assert_eq!(errors[0].0, 1);
        assert!(
            errors[0].1.to_string().contains("no key for `quit`"),
            "{errors:?}"
        );
        // Moving the way out to another key is fine, in either order.
        for pair in [
            [
                ("composer", "esc", "next_field"),
                ("composer", "f10", "back"),
            ],
            [
                ("composer", "f10", "back"),
                ("composer", "esc", "next_field"),
            ],
        ] {
            assert!(Keymap::with_overrides(pair).is_ok());
        }
        // Every error is reported, not just the first.
        let all = Keymap::with_overrides([
            ("browse", "ctrl-zz", "quit"),
            ("browse", "j", "fly"),
            ("composer", "esc", "next_field"),
            ("composer", "ctrl-c", "help"),
        ])
        .unwrap_err();
        assert_eq!(all.iter().map(|(i, _)| *i).collect::<Vec<_>>(), [0, 1, 3]);
        assert_eq!(Key::parse("C-s").unwrap().to_string(), "C-s");
        assert_eq!(Key::parse("f5").unwrap().to_string(), "F5");
        assert!(Key::parse("f99").is_none());
    }

    /// No default takes a key another default, or a list move, of its scope has: a row
    /// written later would silently win, and the key the operator knew would change meaning.
    #[test]
    fn no_default_key_shadows_another() {
        let mut seen = std::collections::HashMap::new();
        let moves = Scope::LISTS.iter().flat_map(|scope| {
            (super::super::panes::list_move::MOVES.iter())
                .map(move |(keys, action)| (scope, keys, action))
        });
        let own = DEFAULTS
            .iter()
            .map(|(scope, keys, action)| (scope, keys, action));
        for (scope, keys, action) in moves.chain(own) {
            for k in keys.split(' ') {
                let key = Key::parse(k).unwrap();
                if let Some(old) = seen.insert((*scope, key), action.clone()) {
                    panic!("{k} in {}: {old} and {action}", scope.name());
                }
            }
        }
    }

    /// Settling in the queue and archiving in the list have their keys in help, under the
    /// scope they act in.
    #[test]
    fn settling_and_archiving_keys_are_in_help() {
        let km = Keymap::default();
        let key = |scope, action| km.key_for(scope, &action).map(|k| k.to_string());
        assert_eq!(key(Scope::Queue, Action::Done).as_deref(), Some("d"));
        assert_eq!(key(Scope::Queue, Action::Dismiss).as_deref(), Some("x"));
        assert_eq!(key(Scope::Queue, Action::Undo).as_deref(), Some("u"));
        assert_eq!(key(Scope::Browse, Action::Archive).as_deref(), Some("a"));
        assert_eq!(key(Scope::Browse, Action::Undo).as_deref(), Some("U"));
        // `u` still jumps to the parent in the list.
        assert_eq!(key(Scope::Browse, Action::Parent).as_deref(), Some("u"));
        let help = km.help_rows();
        let queue = (help.iter())
            .position(|(_, what)| what == Scope::Queue.title())
            .unwrap();
        for row in [("d", "mark done"), ("x Del", "dismiss"), ("u", "undo")] {
            let at = (help.iter()).position(|(k, w)| (k.as_str(), w.as_str()) == row);
            assert!(at.is_some_and(|at| at > queue), "{row:?}: {help:?}");
        }
        assert!(help.contains(&("a".into(), "archive / bring back".into())));
    }
}
