//! ERROR replies from the app: `E` on a message picks a code of the error taxonomy (or NACK)
//! and opens the composer on the spec's ERROR envelope answering it (`user: system`, the
//! parent, `meta: error` with Code, Reason and Original-Intent), sent and stored like any
//! reply. In the paste preview, `E` answers a broken envelope with E-FORMAT, its diagnostics
//! as the body. Either is written by the desk (`Settings::desk`) to the message's sender, as
//! `r` writes: the desk found the fault, and the message's recipient did not say so.

use crate::app::popups::popup::Popup;
use crate::app::text::{headline, safe_line};
use crate::app::writing::composer::{Composer, Form};
use crate::app::{Action, App};
use crate::ids::IdGenerator;
use crate::protocol::address::check_address;
use crate::protocol::error_envelope::{ERROR_CODES, error_envelope};
use crate::protocol::{Envelope, MetaBlock, is_id};

/// The choice after the taxonomy's codes: a NACK, which refuses rather than fails.
pub const NACK: &str = "NACK";

/// The open code picker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodePicker {
    /// The message answered.
    pub message: String,
    /// The selected row of [`choices`].
    pub selected: usize,
}

/// The picker's rows: (code, what it means); the taxonomy in the spec's order, then NACK.
pub(crate) fn choices() -> Vec<(&'static str, &'static str)> {
    ERROR_CODES
        .iter()
        .copied()
        .chain([(NACK, "Refuse or reject (NACK, not an ERROR)")])
        .collect()
}

/// META blocks as the composer's META box holds them (`meta: ns`, then `Key: value` lines).
fn meta_text(meta: &[MetaBlock]) -> String {
    let mut out = String::new();
    for m in meta {
        out.push_str(&format!("meta: {}\n", m.namespace));
        for (k, v) in &m.entries {
            out.push_str(&format!("{k}: {v}\n"));
        }
    }
    out
}

/// The preview's offer for an envelope with errors: the key that answers it with E-FORMAT.
pub(crate) fn format_error_hint(app: &App, item: &crate::store::ImportItem) -> Option<String> {
    if !item.diagnostics.iter().any(|d| d.is_error()) {
        return None;
    }
    let key = app
        .keymap
        .key_for(crate::app::keymap::Scope::Preview, &Action::ErrorReply)
        .map(|k| k.to_string())?;
    Some(format!(
        "{key}: reply E-FORMAT to the sender (its diagnostics as the body)"
    ))
}

impl App {
    /// `E`: opens the code picker for the selected message.
    pub(in crate::app) fn pick_error_code(&mut self) {
        match self.selected_message() {
            Some(m) => {
                let message = m.id.clone();
                self.popup = Some(Popup::ErrorCodes(CodePicker {
                    message,
                    selected: 0,
                }));
            }
            None => {
                self.warn("Select a message to answer with an ERROR (open a thread with Enter).")
            }
        }
    }

    /// Keys in the code picker: move, pick (Back is handled by the popup).
    pub(in crate::app) fn code_picker_action(&mut self, action: Action) -> anyhow::Result<()> {
        let Some(Popup::ErrorCodes(p)) = self.popup.as_mut() else {
            return Ok(());
        };
        let rows = choices().len();
        let last = rows - 1;
        let page = crate::app::panes::layout::popup_page(crate::app::panes::layout::picker_area(
            self.size, 64, rows,
        ));
        match action {
            a if crate::app::panes::list_move::is_move(&a) => {
                p.selected = crate::app::panes::list_move::select(p.selected, rows, &a, page)
                    .unwrap_or(p.selected);
            }
            Action::Open => {
                let (message, code) = (p.message.clone(), choices()[p.selected.min(last)].0);
                self.popup = None;
                return self.compose_error_reply(&message, code);
            }
            _ => {}
        }
        Ok(())
    }

    /// Opens the composer on the ERROR (or NACK) answering stored message `id`.
    pub(in crate::app) fn compose_error_reply(
        &mut self,
        id: &str,
        code: &str,
    ) -> anyhow::Result<()> {
        let Some(original) = self.store.message(id)? else {
            self.warn("That message is gone (erased meanwhile).");
            return Ok(());
        };
        let desk = self.settings.desk();
        let env = if code == NACK {
            crate::store::reply_envelope(
                &original,
                &desk,
                Some(NACK),
                "Refused.",
                &self.settings.user,
                self.store.new_id(),
            )
        } else {
            let mut env = error_envelope(
                Some(&original.envelope),
                code,
                None,
                &[],
                &IdGenerator::new(),
            );
            // The desk says it could not handle the message, to whoever sent it (as a reply
            // would go): §8's swap would sign it with the name of the recipient, an AI that
            // may never have seen it.
            let parties = crate::store::reply_parties(&original, &desk);
            env.banner.from = parties.from;
            env.banner.to = match check_address(&parties.to) {
                Ok(()) => parties.to,
                Err(_) => "UNKNOWN".into(),
            };
            // The stored thread and id, whatever the envelope said (a fresh id, v1.0).
            env.set_header("thread", original.thread.as_str());
            env.set_header("parent", original.id.as_str());
            env.set_header("message", self.store.new_id());
            env
        };
        let title = headline(&original.envelope, original.intent.as_deref());
        self.open_error_composer(&env, title)?;
        self.info(format!(
            "{code} reply: edit the reason and body; C-y saves and copies, Esc keeps the draft."
        ));
        Ok(())
    }

    fn open_error_composer(&mut self, env: &Envelope, title: String) -> anyhow::Result<()> {
        let mut form = Form::from_envelope(env);
        form.meta = meta_text(&env.meta);
        self.composer = Some(Composer::new(form, Some(title)).with_book(self.contacts.clone()));
        self.save_draft(false)
    }

    /// `E` in the paste preview: the composer on an E-FORMAT reply to the sender of the
    /// selected envelope (or the first one with errors), its diagnostics as the body.
    pub(in crate::app) fn reply_format_error(&mut self) -> anyhow::Result<()> {
        let Some(Popup::Preview(p)) = self.popup.as_ref() else {
            return Ok(());
        };
        let has_errors = |i: &crate::store::ImportItem| i.diagnostics.iter().any(|d| d.is_error());
        let item = match p.report.items.get(p.selected) {
            Some(i) if has_errors(i) => Some(i),
            _ => p.report.items.iter().find(|i| has_errors(i)),
        };
        let Some(item) = item.cloned() else {
            self.warn("No envelope in this paste has errors: nothing to answer with E-FORMAT.");
            return Ok(());
        };
        // The preview closes for the composer: a paste held only in memory would go with it.
        let text = match (&p.unsaved, &p.kept) {
            (None, Some(k)) => self.store.paste_text(k.paste_id)?,
            _ => {
                self.warn("The paste is not in the database yet: import it or write it to a file (w) first.");
                return Ok(());
            }
        };
        let found = crate::protocol::extract(&text, &self.settings.options);
        let Some(parsed) = found
            .envelopes
            .iter()
            .find(|e| e.span.start_line == item.span.start_line)
        else {
            self.warn("That envelope cannot be read again from the paste.");
            return Ok(());
        };
        let mut env = error_envelope(
            Some(&parsed.envelope),
            "E-FORMAT",
            None,
            &parsed.diagnostics,
            &IdGenerator::new(),
        );
        // From the desk, which read the paste, to the envelope's sender (or UNKNOWN when its
        // banner does not name one that is valid), never in the name of its recipient.
        env.banner.from = self.settings.desk();
        // A reply needs a thread: the original's when it named a valid one, else a new one.
        let thread = parsed
            .envelope
            .thread()
            .filter(|t| is_id(t))
            .map(str::to_string)
            .or(item.thread.clone())
            .unwrap_or_else(|| self.store.new_id());
        env.set_header("thread", thread);
        env.set_header("message", self.store.new_id());
        let title = format!(
            "the envelope at line {} of the paste ({})",
            item.span.start_line,
            safe_line(&headline(&parsed.envelope, None))
        );
        self.popup = None;
        self.open_error_composer(&env, title)?;
        let errors = item.diagnostics.iter().filter(|d| d.is_error()).count();
        self.info(format!(
            "E-FORMAT reply to {} with {errors} error(s) listed: C-y saves and copies, Esc keeps the draft.",
            safe_line(&env.banner.to)
        ));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meta_text_reads_back_as_the_same_blocks() {
        let blocks = vec![MetaBlock {
            namespace: "error".into(),
            entries: vec![
                ("Code".into(), "E-ROUTE".into()),
                ("Reason".into(), "Destination unreachable".into()),
            ],
        }];
        let (back, problems) = crate::app::writing::composer::parse_meta(&meta_text(&blocks));
        assert!(problems.is_empty());
        assert_eq!(back, blocks);
        assert_eq!(choices().len(), 9);
        assert_eq!(choices()[8].0, NACK);
    }
}
