//! The one vocabulary of the app: every key, mouse event, paste and command becomes an
//! [`Action`], and [`super::App::update`] is the only place that acts on them. The names of
//! the bindable actions are also the names `config.toml` uses under `[keys.*]`.

use std::fmt;
use std::str::FromStr;

use ratatui::crossterm::event::KeyEvent;

/// Everything the operator can ask for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Leave the app (drafts are already saved).
    Quit,
    /// Move the selection up, or scroll up.
    Up,
    /// Move the selection down, or scroll down.
    Down,
    /// A page up.
    PageUp,
    /// A page down.
    PageDown,
    /// To the first item.
    Top,
    /// To the last item.
    Bottom,
    /// Open the selected thread or message.
    Open,
    /// Close a popup, leave the composer, or go back a pane.
    Back,
    /// Focus the next pane.
    NextPane,
    /// Focus the previous pane.
    PrevPane,
    /// Collapse the selected branch, or go to its parent.
    Collapse,
    /// Expand the selected branch, or go to its first reply.
    Expand,
    /// Collapse or expand the selected branch.
    ToggleBranch,
    /// Select the parent of the selected message.
    Parent,
    /// Compose a new envelope.
    NewEnvelope,
    /// Reply to the selected message.
    Reply,
    /// Copy the selected envelope.
    Copy,
    /// Copy the whole thread.
    CopyThread,
    /// Import from the system clipboard, or open a box to paste into.
    PasteClipboard,
    /// Full-text search.
    Search,
    /// The command line.
    Command,
    /// Keys and commands.
    Help,
    /// Show the envelope as received or in canonical form.
    ToggleRaw,
    /// Filter the thread list by typing.
    Filter,
    /// Show the inspector's headers, or fold them to one line.
    ToggleHeaders,
    /// The list of drafts.
    Drafts,
    /// Composer: save the draft now.
    SaveDraft,
    /// Composer: save, copy, and wait for the reply.
    SaveAndCopy,
    /// Composer: edit the body in `$EDITOR`.
    EditExternal,
    /// Composer: the envelope as it will be copied, over the whole screen, to scroll through
    /// before copying it; again (or Esc) back to the form.
    ShowCopy,
    /// Composer: next field.
    NextField,
    /// Composer: previous field.
    PrevField,
    /// Composer: replace personal data in the body with placeholders, declare `PII: redacted`.
    Redact,
    /// Composer: add a META block template (routing, then privacy).
    MetaTemplate,
    /// Undo: in the composer the last change to the focused text box; in the queue the
    /// last item settled (again and again, newest first); in the thread list the last
    /// archiving (or bringing back). One name, so `[keys.*]` binds undo alike everywhere.
    Undo,
    /// Composer: redo what undo took back.
    Redo,
    /// Composer: attach a file (asks for its path; `:attach PATH` does the same).
    Attach,
    /// Paste preview and paste box: import.
    Confirm,
    /// Discard the selected draft.
    Discard,
    /// Paste preview: write the paste to a file.
    SaveToFile,
    /// Command line: complete the command, path or id.
    Complete,
    /// Pipe the selected envelope to a shell command.
    Pipe,
    /// Pipe the open thread to a shell command.
    PipeThread,
    /// Erase the selected thread or message (asks first); in the question, the yes.
    Erase,
    /// Inspector: show the message's next conflicting version (the stored one after the last).
    NextVersion,
    /// Move a reply the desk placed (a v1.0 reply, filed under its session's latest): on the
    /// reply, then on the message it answers.
    MoveReply,
    /// Paste preview: import, giving envelopes whose ids are not valid fresh ones.
    ImportFreshIds,
    /// Paste preview: edit the paste in `$EDITOR`, then preview the edited text.
    EditPaste,
    /// The queue: what is left to relay, answer and chase.
    Queue,
    /// Show only threads in the next delivery state (all, to relay, to me, …).
    CycleStateFilter,
    /// Start or stop watching the clipboard for envelopes.
    ToggleWatch,
    /// Start a conversation with a contact: primer and first envelope.
    NewConversation,
    /// The poll panel of the selected POLL: targets, answers, votes, quorum, time left.
    Poll,
    /// Poll panel: after the deadline, write the E-TIMEOUT ERRORs and the CLOSE.
    ClosePoll,
    /// The answers to the selected message (a POLL's, or its replies) side by side, one
    /// column per sender.
    SideBySide,
    /// Side by side: show the columns to the left.
    ColumnLeft,
    /// Side by side: show the columns to the right.
    ColumnRight,
    /// The selected message full screen, in the reader.
    Read,
    /// Reader: the next match of the search.
    SearchNext,
    /// Reader: the match before.
    SearchPrev,
    /// Reader: the next message of the thread.
    NextMessage,
    /// Reader: the message before in the thread.
    PrevMessage,
    /// Reader: copy the whole body.
    CopyBody,
    /// Reader: copy code block N (1 to 9) of the body, as numbered on screen.
    CopyBlock(u8),
    /// Answer the selected message with an ERROR (pick the code) or a NACK; in the paste
    /// preview, reply E-FORMAT to the sender of a broken envelope.
    ErrorReply,
    /// The trust store: every key, its state, and a key change waiting for a decision.
    Keys,
    /// Put up what waits next: a POLL for its next target, or the next envelope of a
    /// several-envelope copy for its recipient.
    RelayNext,
    /// Queue: the selected item is done by other means than the desk saw (carried,
    /// answered, its answer got): it leaves the queue.
    Done,
    /// Queue: the selected item needs nothing more (not to be relayed, answered or chased).
    Dismiss,
    /// Thread list: archive the selected thread (it leaves the list until something new
    /// arrives in it), or bring an archived one back.
    Archive,
    /// Open the envelope the clipboard watch brought for the operator while they were in the
    /// composer or a popup.
    JumpToArrival,
    /// The next message that needs the operator, across threads: to relay, addressed to them,
    /// awaiting a reply past `[ui] awaiting_after`.
    NextToDo,

    /// Text typed into whatever has the text focus (not bindable).
    Input(KeyEvent),
    /// A bracketed paste, or text read from the clipboard (not bindable).
    Paste(String),
    /// The terminal was resized (not bindable).
    Resize(u16, u16),
    /// A left click at a cell (not bindable).
    Click(u16, u16),
    /// The wheel turned over a cell: negative is up (not bindable).
    Scroll(u16, u16, i8),
    /// A line entered on the command line (not bindable).
    Run(String),
    /// A piped command ended: whether it succeeded, and what to say (not bindable).
    Piped(bool, String),
    /// The body came back from `$EDITOR` (not bindable).
    EditedBody(String),
    /// The paste came back from `$EDITOR` (not bindable).
    EditedPaste(String),
    /// Time passed: retry what the database did not take (not bindable).
    Tick,
}

/// The bindable actions: config name and the short description shown in help and hints.
pub(crate) const BINDABLE: &[(Action, &str, &str)] = &[
    (Action::Quit, "quit", "quit"),
    (Action::Up, "up", "up"),
    (Action::Down, "down", "down"),
    (Action::PageUp, "page_up", "page up"),
    (Action::PageDown, "page_down", "page down"),
    (Action::Top, "top", "first"),
    (Action::Bottom, "bottom", "last"),
    (Action::Open, "open", "open"),
    (Action::Back, "back", "back"),
    (Action::NextPane, "next_pane", "next pane"),
    (Action::PrevPane, "prev_pane", "previous pane"),
    (Action::Collapse, "collapse", "collapse / parent"),
    (Action::Expand, "expand", "expand / first reply"),
    (Action::ToggleBranch, "toggle_branch", "fold branch"),
    (Action::Parent, "parent", "jump to parent"),
    (Action::NewEnvelope, "new_envelope", "new envelope"),
    (Action::Reply, "reply", "reply"),
    (Action::Copy, "copy", "copy envelope"),
    (Action::CopyThread, "copy_thread", "copy thread"),
    (Action::PasteClipboard, "paste_clipboard", "paste / import"),
    (Action::Search, "search", "search"),
    (Action::Command, "command", "command line"),
    (Action::Help, "help", "help"),
    (Action::ToggleRaw, "toggle_raw", "raw / canonical"),
    (Action::Filter, "filter", "filter"),
    (
        Action::ToggleHeaders,
        "toggle_headers",
        "show / fold headers",
    ),
    (Action::Drafts, "drafts", "drafts"),
    (Action::SaveDraft, "save_draft", "save draft"),
    (Action::SaveAndCopy, "save_and_copy", "save + copy"),
    (Action::EditExternal, "edit_external", "$EDITOR"),
    (Action::ShowCopy, "show_copy", "whole copy"),
    (Action::NextField, "next_field", "next field"),
    (Action::PrevField, "prev_field", "previous field"),
    (Action::MetaTemplate, "meta_template", "META template"),
    (Action::Undo, "undo", "undo"),
    (Action::Redo, "redo", "redo"),
    (Action::Attach, "attach", "attach a file"),
    (Action::Confirm, "confirm", "import"),
    (Action::Discard, "discard", "discard draft"),
    (Action::SaveToFile, "save_to_file", "save to file"),
    (Action::Complete, "complete", "complete"),
    (Action::Pipe, "pipe", "pipe envelope to a command"),
    (
        Action::PipeThread,
        "pipe_thread",
        "pipe thread to a command",
    ),
    (Action::Erase, "erase", "erase thread / message"),
    (Action::NextVersion, "next_version", "conflicting versions"),
    (
        Action::MoveReply,
        "move_reply",
        "move a reply the desk placed (≈): then on the message it answers",
    ),
    (
        Action::ImportFreshIds,
        "import_fresh_ids",
        "import with fresh ids",
    ),
    (
        Action::EditPaste,
        "edit_paste",
        "edit the paste, then preview",
    ),
    (Action::Queue, "queue", "queue: to relay, to me, awaiting"),
    (
        Action::CycleStateFilter,
        "cycle_state_filter",
        "threads by state (all, to relay, …)",
    ),
    (Action::Redact, "redact", "redact personal data"),
    (Action::ToggleWatch, "toggle_watch", "watch the clipboard"),
    (
        Action::NewConversation,
        "new_conversation",
        "new conversation (primer)",
    ),
    (Action::Poll, "poll", "poll panel: votes, quorum"),
    (
        Action::ClosePoll,
        "close_poll",
        "close the poll: E-TIMEOUTs and result",
    ),
    (
        Action::ErrorReply,
        "error_reply",
        "reply ERROR / NACK (preview: E-FORMAT)",
    ),
    (Action::Keys, "keys", "trust store keys"),
    (
        Action::SideBySide,
        "side_by_side",
        "the answers side by side, a column per sender",
    ),
    (Action::ColumnLeft, "column_left", "columns to the left"),
    (Action::ColumnRight, "column_right", "columns to the right"),
    (Action::Read, "read", "read the message full screen"),
    (Action::SearchNext, "search_next", "next match"),
    (Action::SearchPrev, "search_prev", "match before"),
    (
        Action::NextMessage,
        "next_message",
        "next message of the thread",
    ),
    (
        Action::PrevMessage,
        "prev_message",
        "message before in the thread",
    ),
    (Action::CopyBody, "copy_body", "copy the body"),
    (Action::CopyBlock(1), "copy_block_1", "copy code block [1]"),
    (Action::CopyBlock(2), "copy_block_2", "copy code block [2]"),
    (Action::CopyBlock(3), "copy_block_3", "copy code block [3]"),
    (Action::CopyBlock(4), "copy_block_4", "copy code block [4]"),
    (Action::CopyBlock(5), "copy_block_5", "copy code block [5]"),
    (Action::CopyBlock(6), "copy_block_6", "copy code block [6]"),
    (Action::CopyBlock(7), "copy_block_7", "copy code block [7]"),
    (Action::CopyBlock(8), "copy_block_8", "copy code block [8]"),
    (Action::CopyBlock(9), "copy_block_9", "copy code block [9]"),
    (
        Action::RelayNext,
        "relay_next",
        "put up the next: a POLL's next target, a copy's next envelope",
    ),
    (Action::Done, "done", "mark done"),
    (Action::Dismiss, "dismiss", "dismiss"),
    (Action::Archive, "archive", "archive / bring back"),
    (
        Action::JumpToArrival,
        "jump_to_arrival",
        "open what the watch brought for you meanwhile",
    ),
    (
        Action::NextToDo,
        "next_to_do",
        "next message that needs you (to relay, to you, a late reply)",
    ),
];

impl Action {
    /// The config name of a bindable action.
    pub fn name(&self) -> Option<&'static str> {
        BINDABLE
            .iter()
            .find(|(a, ..)| a == self)
            .map(|(_, n, _)| *n)
    }

    /// What a bindable action does, in a few words.
    pub(crate) fn describe(&self) -> &'static str {
        BINDABLE
            .iter()
            .find(|(a, ..)| a == self)
            .map(|(.., d)| *d)
            .unwrap_or("")
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name().unwrap_or("internal"))
    }
}

/// An action name that does not exist.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown action `{0}`; actions are: {names}", names = action_names())]
pub struct UnknownAction(pub String);

fn action_names() -> String {
    BINDABLE
        .iter()
        .map(|(_, n, _)| *n)
        .collect::<Vec<_>>()
        .join(", ")
}

impl FromStr for Action {
    type Err = UnknownAction;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        BINDABLE
            .iter()
            .find(|(_, n, _)| *n == s)
            .map(|(a, ..)| a.clone())
            .ok_or_else(|| UnknownAction(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for (a, n, d) in BINDABLE {
            assert!(seen.insert(*n), "duplicate name {n}");
            assert_eq!(&n.parse::<Action>().unwrap(), a);
            assert!(!d.is_empty());
        }
        let example = include_str!("../../config.example.toml");
        for (_, n, _) in BINDABLE {
            assert!(
                example.contains(n),
                "config.example.toml does not list `{n}`"
            );
        }
        let e = "frobnicate".parse::<Action>().unwrap_err();
        assert!(e.to_string().contains("unknown action `frobnicate`"));
        assert!(e.to_string().contains("save_and_copy"));
    }
}
