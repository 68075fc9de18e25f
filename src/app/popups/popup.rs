//! Popups over the browse screen: help, the paste preview, the paste box, search, the
//! command line and the drafts list. A popup takes the keys while it is open.

use ratatui_textarea::TextArea;

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
        text: Box<TextArea<'static>>,
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
    /// Selected item.
    pub selected: usize,
    /// Bytes pasted.
    pub bytes: usize,
}

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
    /// What Tab offered when it could not decide (cleared by the next edit).
    pub candidates: Vec<String>,
}

impl Prompt {
    /// Applies an editing key; whether the text changed.
    pub fn edit(&mut self, ev: &ratatui::crossterm::event::KeyEvent) -> bool {
        use ratatui::crossterm::event::{KeyCode, KeyModifiers};
        self.candidates.clear();
        let ctrl = ev.modifiers.contains(KeyModifiers::CONTROL);
        match ev.code {
            KeyCode::Char('u') if ctrl => self.text.clear(),
            KeyCode::Char('w') if ctrl => {
                let t = self.text.trim_end();
                let cut = t.rfind(' ').map(|i| i + 1).unwrap_or(0);
                self.text.truncate(cut);
            }
            KeyCode::Char(c) if !ctrl && !c.is_control() => self.text.push(c),
            KeyCode::Backspace => {
                self.text.pop();
            }
            _ => return false,
        }
        true
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
        for c in "hello world".chars() {
            p.edit(&KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
        }
        p.edit(&KeyEvent::new(KeyCode::Char('w'), KeyModifiers::CONTROL));
        assert_eq!(p.text, "hello ");
        p.edit(&KeyEvent::new(KeyCode::Backspace, KeyModifiers::NONE));
        assert_eq!(p.text, "hello");
        assert!(!p.edit(&KeyEvent::new(KeyCode::Char('x'), KeyModifiers::CONTROL)));
    }
}
