//! Popups over the browse screen: help, the paste preview, the paste box, search, the
//! command line and the drafts list. A popup takes the keys while it is open.

use crate::app::keymap::Scope;
use crate::store::{Draft, ImportReport, Kept, MessageLabel, SearchHit, Store};

/// One open popup.
#[derive(Debug)]
pub enum Popup {
    /// Keys and commands.
    Help {
        /// First row shown.
        scroll: usize,
        /// What the operator typed to narrow the rows, while filtering (see `help`).
        filter: Option<String>,
    },
    /// What a paste holds and where each envelope would go.
    Preview(Preview),
    /// A box to paste (or type) into, when the clipboard cannot be read.
    PasteBox {
        /// The text so far (boxed: a text area is large, the other popups are not).
        text: Box<crate::app::writing::text_box::TextBox>,
        /// Why the box is open.
        note: String,
    },
    /// Full-text search.
    Search(Search),
    /// The `:` command line.
    Command(Prompt),
    /// Erase a thread or message? Says what goes; `y` erases.
    Erase(crate::app::popups::erase::EraseConfirm),
    /// Drafts to resume.
    Drafts {
        /// Every draft being composed, newest first.
        drafts: Vec<Draft>,
        /// Then the envelopes composed and filed in their thread but never copied, oldest
        /// first: drafts too, as the queue counts them.
        unsent: Vec<crate::store::QueueRow>,
        /// The selected one.
        selected: usize,
        /// Set after a first discard press: the id waiting for the second.
        confirm: Option<String>,
    },
    /// What is left to relay, answer and chase.
    Queue(crate::app::relay::queue::QueueView),
    /// `N`: a new conversation — pick a contact, then type the context.
    Conversation(Conversation),
    /// `P`: the poll panel of a POLL.
    Poll(Box<crate::app::popups::poll_panel::PollPanel>),
    /// `E`: the ERROR code (or NACK) to answer a message with.
    ErrorCodes(crate::app::writing::error_reply::CodePicker),
    /// `K`: the trust store's keys (read-only: trusting a key is a deliberate
    /// `crosstalk keys trust`, not a keystroke in passing).
    Keys {
        /// Every key, by key id.
        keys: Vec<crate::store::KeyRow>,
        /// First row shown.
        scroll: usize,
    },
    /// `o`: one message full screen.
    Reader(Box<crate::app::reading::reader::Reader>),
    /// `C`: the answers to one message side by side.
    SideBySide(Box<crate::app::reading::columns::SideBySide>),
    /// `:messages`: what the status line said, whole (see `messages`).
    Messages {
        /// First row shown.
        scroll: usize,
    },
}

/// The steps of `N`: the contact picked from the address book, then the context typed.
#[derive(Debug, Default)]
pub struct Conversation {
    /// The selected contact (index into the address book).
    pub selected: usize,
    /// The context typed, once a contact is picked.
    pub context: Option<Prompt>,
}

impl Popup {
    /// The key scope of this popup.
    pub fn scope(&self) -> Scope {
        match self {
            // Scrolled and closed like help.
            Popup::Help { .. } | Popup::Keys { .. } | Popup::Messages { .. } => Scope::Help,
            Popup::Preview(_) => Scope::Preview,
            Popup::PasteBox { .. } => Scope::PasteBox,
            Popup::Search(_) | Popup::Command(_) => Scope::Prompt,
            Popup::Drafts { .. } => Scope::Drafts,
            Popup::Erase(_) => Scope::Confirm,
            Popup::Queue(_) => Scope::Queue,
            // A contact is picked from a list; the context is typed like a prompt.
            Popup::Conversation(c) if c.context.is_none() => Scope::Picker,
            Popup::Conversation(_) => Scope::Prompt,
            Popup::Poll(_) => Scope::Poll,
            Popup::ErrorCodes(_) => Scope::Picker,
            Popup::SideBySide(_) => Scope::SideBySide,
            // Its search is typed like any prompt.
            Popup::Reader(r) if r.prompt.is_some() => Scope::Prompt,
            Popup::Reader(_) => Scope::Reader,
        }
    }
}

/// The paste preview: the raw paste is already kept and the report is a dry run of its
/// import; or, when the database did not take the paste, the paste is held in `unsaved` and
/// the report comes from reading it alone.
#[derive(Debug)]
pub struct Preview {
    /// The kept paste (`None` while the database has not taken it).
    pub kept: Option<Kept>,
    /// The paste the database has not taken, and why.
    pub unsaved: Option<UnsavedPaste>,
    /// What importing it would do (without the database: what each envelope is).
    pub report: ImportReport,
    /// For each item: where it would go, in words ("new thread", or the thread's context).
    pub destinations: Vec<String>,
    /// For each item: intent, from→to and the body's first line, safe to print.
    pub summaries: Vec<String>,
    /// For each item: its body as written (`None`: it has none).
    pub bodies: Vec<Option<String>>,
    /// The selected item's body rendered as markdown: which item and width it was rendered
    /// for, and its lines (see [`Preview::body_lines`]); boxed, as popups are moved whole.
    pub rendered: std::cell::RefCell<RenderedBody>,
    /// Selected item.
    pub selected: usize,
    /// Bytes pasted.
    pub bytes: usize,
}

/// A body rendered for the paste preview: the item and width it was rendered for, and the
/// rendering (its code coloured as far as it was shown).
pub type RenderedBody = Option<Box<(usize, usize, crate::markdown::Rendered)>>;

/// A paste the database did not take (disk full, or busy): kept in memory until it is
/// stored or written to a file.
#[derive(Debug)]
pub struct UnsavedPaste {
    /// Where it came from (`<paste>`, a file name).
    pub source: String,
    /// The text as pasted.
    pub text: String,
    /// Why the database did not take it.
    pub cause: String,
    /// Whether the tick retries it (the database was busy; a full disk waits for Enter).
    pub retry: bool,
    /// The file it was written to, once written.
    pub file: Option<std::path::PathBuf>,
    /// Set after a cancel found no file could be written: a second cancel drops it.
    pub confirm_drop: bool,
}

/// A one-line text prompt.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Prompt {
    /// The text typed.
    pub text: String,
    /// Where the cursor is, in characters; `None` at the end (where text set from outside,
    /// a command recalled or completed, leaves it).
    pub at: Option<usize>,
    /// What Tab offered when it could not decide (cleared by the next edit).
    pub candidates: Vec<String>,
    /// Undo and redo, by word.
    pub history: crate::app::writing::readline::LineUndo,
}

impl Prompt {
    /// Applies an editing key (a character, or a readline key: see
    /// [`crate::app::writing::readline`]) with the app's kill buffer; whether the text
    /// changed.
    pub fn edit(&mut self, ev: &ratatui::crossterm::event::KeyEvent, kill: &mut String) -> bool {
        let changed = crate::app::writing::readline::edit_line(
            &mut self.text,
            &mut self.at,
            kill,
            &mut self.history,
            ev,
        );
        if changed {
            self.candidates.clear();
        }
        changed
    }

    /// Puts `text` in at the cursor (a paste: one line, without control characters).
    pub fn insert(&mut self, text: &str) {
        crate::app::writing::readline::insert_line(&mut self.text, &mut self.at, text);
        self.candidates.clear();
    }

    /// Undoes (with `redo`: redoes) the last step; whether there was one.
    pub fn step(&mut self, redo: bool) -> bool {
        self.candidates.clear();
        if redo {
            self.history.redo(&mut self.text, &mut self.at)
        } else {
            self.history.undo(&mut self.text, &mut self.at)
        }
    }

    /// Replaces the text, the cursor at its end.
    pub fn set(&mut self, text: impl Into<String>) {
        self.text = text.into();
        self.at = None;
        self.candidates.clear();
    }

    /// The text before the cursor and from it, for drawing the cursor between them.
    pub fn split(&self) -> (&str, &str) {
        crate::app::writing::readline::split_at_cursor(&self.text, self.at)
    }
}

/// The search popup.
#[derive(Debug, Default)]
pub struct Search {
    /// The query typed.
    pub prompt: Prompt,
    /// Results for it, best first.
    pub hits: Vec<SearchHit>,
    /// The selected hit.
    pub selected: usize,
    /// The store's complaint about the query, if any.
    pub error: Option<String>,
    /// How many messages match in all.
    pub matches: usize,
    /// `Some(n)` when so many matched that only the newest `n` were ranked.
    pub ranked_newest: Option<usize>,
    /// Intent and sender of each hit, so hits in one thread can be told apart.
    pub labels: Vec<MessageLabel>,
}

impl Search {
    /// Runs the query as it stands (an empty one clears the results).
    pub fn run(&mut self, store: &Store, limit: usize) {
        self.selected = 0;
        match store.search_as_typed(&self.prompt.text, limit) {
            Ok(r) => {
                let ids: Vec<&str> = r.hits.iter().map(|h| h.message.as_str()).collect();
                // Without labels the hits still show; they are only harder to tell apart.
                self.labels = store.message_labels(&ids).unwrap_or_default();
                self.hits = r.hits;
                self.matches = r.matches;
                self.ranked_newest = r.ranked_newest;
                self.error = None;
            }
            Err(e) => self.error = Some(e.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

    #[test]
    fn prompt_edits() {
        let mut p = Prompt::default();
        let mut kill = String::new();
        let mut key = |p: &mut Prompt, c, m| p.edit(&KeyEvent::new(c, m), &mut kill);
        for c in "hello world".chars() {
            key(&mut p, KeyCode::Char(c), KeyModifiers::NONE);
        }
        key(&mut p, KeyCode::Char('w'), KeyModifiers::CONTROL);
        assert_eq!(p.text, "hello ");
        key(&mut p, KeyCode::Backspace, KeyModifiers::NONE);
        assert_eq!(p.text, "hello");
        assert!(!key(&mut p, KeyCode::Char('x'), KeyModifiers::CONTROL));
        // The cursor moves, and typing goes where it is.
        key(&mut p, KeyCode::Char('a'), KeyModifiers::CONTROL);
        key(&mut p, KeyCode::Char('>'), KeyModifiers::NONE);
        assert_eq!(p.split(), (">", "hello"));
        p.insert("a\nb ");
        assert_eq!(p.text, ">a b hello");
        key(&mut p, KeyCode::Char('k'), KeyModifiers::CONTROL);
        key(&mut p, KeyCode::Char('y'), KeyModifiers::CONTROL);
        key(&mut p, KeyCode::Char('y'), KeyModifiers::CONTROL);
        assert_eq!(p.text, ">a b hellohello");
        p.set("new");
        assert_eq!(p.split(), ("new", ""));
    }
}
