//! A pipe the operator asked for (`|`): the runtime takes it, runs the command on the real
//! terminal with the text on its standard input, and answers with [`super::Action::Piped`].

use super::{App, Level};

/// What to pipe, and to what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PipeRequest {
    /// The shell command (`sh -c`).
    pub command: String,
    /// The text on its standard input: canonical envelopes, as a copy carries them.
    pub input: String,
    /// What is piped, for the operator: `envelope 01K…`, `thread … (5 envelopes)`.
    pub what: String,
}

impl App {
    /// `|` / `M-|`: the command line, filled with `pipe` (or `pipe-thread`) and the last
    /// command piped to.
    pub(super) fn prompt_pipe(&mut self, thread: bool) {
        let verb = if thread { "pipe-thread" } else { "pipe" };
        let prompt = super::popups::popup::Prompt {
            text: format!("{verb} {}", self.last_pipe.as_deref().unwrap_or("")),
            ..Default::default()
        };
        self.popup = Some(super::popups::popup::Popup::Command(prompt));
    }

    /// `:pipe CMD` / `:pipe-thread CMD`: asks the runtime to run CMD with the selected
    /// envelope, or the open thread, on its standard input.
    pub(super) fn request_pipe(&mut self, command: &str, thread: bool) -> anyhow::Result<()> {
        let request = if thread {
            let id = self.tree.as_ref().map(|t| t.outline.id.clone());
            match id.map(|id| self.store.thread(&id)).transpose()?.flatten() {
                Some(view) => PipeRequest {
                    command: command.to_string(),
                    input: view.carried_text(),
                    what: format!("thread {} ({} envelopes)", view.id, view.messages.len()),
                },
                None => {
                    self.warn("Open a thread to pipe it.");
                    return Ok(());
                }
            }
        } else {
            match self.selected_message() {
                Some(m) => PipeRequest {
                    command: command.to_string(),
                    input: m.carried(),
                    what: format!("envelope {}", m.id),
                },
                None => {
                    self.warn("Select a message to pipe (open a thread with Enter).");
                    return Ok(());
                }
            }
        };
        self.last_pipe = Some(command.to_string());
        self.ask(super::Effect::Pipe(request));
        Ok(())
    }

    /// The runtime's answer: the command's exit status on the status line.
    pub(super) fn piped(&mut self, ok: bool, line: String) {
        let level = if ok { Level::Info } else { Level::Warn };
        self.set_status((level, line));
    }
}
