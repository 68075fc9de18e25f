//! `N`: a new conversation with a contact. The operator picks the contact from the address
//! book (`[[contacts]]`), types what it is about, and the composer opens on the first
//! envelope; C-y then copies the primer (`assets/primer.md`, after the contact's preamble)
//! followed by the envelope — everything a fresh chat window needs to answer in envelopes.

use crate::app::popups::popup::{Conversation, Popup, Prompt};
use crate::app::writing::composer::{Composer, Form};
use crate::app::{Action, App};
use crate::ids::IdGenerator;
use crate::primer::{Opening, first_envelope, primer_prefix};

impl App {
    /// Opens the contact picker, or says how to add contacts.
    pub(in crate::app) fn start_conversation(&mut self) {
        if self.contacts.contacts.is_empty() {
            self.warn("No contacts yet: add [[contacts]] entries (name, address) to config.toml; see config.example.toml.");
            return;
        }
        self.popup = Some(Popup::Conversation(Conversation::default()));
        self.info("New conversation: pick a contact (j/k, Enter), Esc cancels.");
    }

    /// Keys in the `N` popup.
    pub(in crate::app) fn conversation_action(&mut self, action: Action) -> anyhow::Result<()> {
        let n = self.contacts.contacts.len();
        let Some(Popup::Conversation(c)) = self.popup.as_mut() else {
            return Ok(());
        };
        let page = crate::app::panes::layout::popup_page(crate::app::panes::layout::picker_area(
            self.size, 80, n,
        ));
        match (&mut c.context, action) {
            (None, a) if crate::app::panes::list_move::is_move(&a) => {
                c.selected = crate::app::panes::list_move::select(c.selected, n, &a, page)
                    .unwrap_or(c.selected);
            }
            (None, Action::Open) => {
                c.context = Some(Prompt::default());
                self.info(
                    "What is the conversation about? Type the context, Enter opens the composer.",
                );
            }
            (Some(p), Action::Input(ev)) => {
                p.edit(&ev, &mut self.kill);
            }
            (Some(p), Action::Paste(s)) => p.insert(&s),
            (Some(p), Action::Undo) => {
                p.step(false);
            }
            (Some(p), Action::Redo) => {
                p.step(true);
            }
            (Some(p), Action::Open) => {
                let context = std::mem::take(&mut p.text);
                let selected = c.selected;
                self.popup = None;
                return self.open_first_envelope(selected, &context);
            }
            _ => {}
        }
        Ok(())
    }

    /// The composer on the first envelope to contact `index`, the primer held for C-y.
    fn open_first_envelope(&mut self, index: usize, context: &str) -> anyhow::Result<()> {
        let Some(contact) = self.contacts.contacts.get(index).cloned() else {
            return Ok(());
        };
        let env = first_envelope(
            &self.contacts,
            &contact.name,
            &Opening {
                from: &self.settings.from,
                user: &self.settings.user,
                context,
            },
            &IdGenerator::new(),
        );
        let form = Form::from_envelope(&env);
        let mut composer = Composer::new(form, None).with_book(self.contacts.clone());
        composer.primer = Some(primer_prefix(Some(&contact)));
        // The suggested body is a hint: selected, so that the first key typed replaces it
        // (and Backspace clears it), while C-y as it stands sends it.
        composer.set_focus(crate::app::writing::composer::Field::Body);
        composer.body.select_all();
        self.composer = Some(composer);
        self.save_draft(false)?;
        self.info(format!(
            "First envelope to {}: C-y copies the primer and the envelope; Esc keeps the draft.",
            contact.name
        ));
        Ok(())
    }
}
