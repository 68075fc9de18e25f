//! Composing and copying: new envelopes and replies, drafts saved as they are typed, and
//! copies through the clipboard chain that start the wait for a reply.

use anyhow::Context as _;
use ratatui::crossterm::event::{KeyCode, KeyModifiers};

use crate::app::background::pending::PendingDraft;
use crate::app::writing::composer::{Composer, Field, Form};
use crate::app::writing::composer_layout::ComposerAreas;
use crate::app::writing::composer_steps::Stepped;
use crate::app::{Action, App, Effect, Level, strip_controls};
use crate::store::{Draft, DraftSave, DraftTaken};

impl App {
    /// Opens the composer on a new envelope in a new thread.
    pub(in crate::app) fn compose_new(&mut self) -> anyhow::Result<()> {
        let mut form = Form::new_envelope(
            &self.settings.user,
            self.store.new_id(),
            self.store.new_id(),
        );
        form.from = self.settings.from.clone();
        self.composer = Some(Composer::new(form, None).with_book(self.contacts.clone()));
        self.info(
            "New envelope: type the body; Tab for the headers, C-y copies, Esc keeps the draft.",
        );
        self.editor_first();
        Ok(())
    }

    /// With `[compose] editor_first`: `$EDITOR` on the body of the composer just opened.
    fn editor_first(&mut self) {
        if !self.settings.editor_first {
            return;
        }
        if let Some(c) = self.composer.as_mut() {
            c.set_focus(Field::Body);
            let body = c.form.body.clone();
            self.ask(Effect::EditBody(body));
        }
    }

    /// Opens the composer on a reply to the selected message (resuming its draft if one
    /// was left).
    pub(in crate::app) fn compose_reply(&mut self) -> anyhow::Result<()> {
        let Some(original) = self.selected_message().cloned() else {
            self.warn("Select a message to reply to (open a thread with Enter).");
            return Ok(());
        };
        let title = crate::app::text::headline(&original.envelope, original.intent.as_deref());
        if let Some(draft) = self.store.drafts_for(&original.id)?.into_iter().next() {
            self.resume_draft(&draft)?;
            self.editor_first();
            return Ok(());
        }
        let form = Form::reply(
            &original,
            &self.settings.desk(),
            &self.settings.user,
            self.store.new_id(),
        );
        self.composer = Some(Composer::new(form, Some(title)).with_book(self.contacts.clone()));
        self.info("Reply: type the body; C-y saves and copies, Esc keeps the draft.");
        self.editor_first();
        Ok(())
    }

    /// Opens the composer on a saved draft.
    pub(in crate::app) fn resume_draft(&mut self, draft: &Draft) -> anyhow::Result<()> {
        let form: Form = serde_json::from_str(&draft.form)
            .with_context(|| format!("draft {} cannot be read", draft.id))?;
        let title = match &draft.parent {
            Some(p) => Some(match self.store.message(p)? {
                Some(m) => crate::app::text::headline(&m.envelope, m.intent.as_deref()),
                None => p.clone(),
            }),
            None => None,
        };
        let mut c = Composer::new(form, title).with_book(self.contacts.clone());
        c.saved_at = Some(draft.updated_at.clone());
        self.composer = Some(c);
        self.info("Draft resumed.");
        Ok(())
    }

    pub(in crate::app) fn composer_action(&mut self, action: Action) -> anyhow::Result<()> {
        let Some(c) = self.composer.as_mut() else {
            return Ok(());
        };
        // A run of vertical moves aims for the cell it started from; anything else ends it.
        if !matches!(&action, Action::Input(ev) if vertical_rows(ev, 1).is_some()) {
            c.goal = None;
        }
        if c.copy_view.is_some() {
            match action {
                Action::Back | Action::ShowCopy => c.copy_view = None,
                Action::Input(ev) => {
                    let (width, height) = ComposerAreas::new(self.size, c).copy_size();
                    c.copy_view_key(&ev, width, height);
                }
                Action::SaveAndCopy => self.send()?,
                Action::SaveDraft => self.save_draft(true)?,
                // The form is out of sight: nothing else acts on it unseen.
                _ => {}
            }
            return Ok(());
        }
        match action {
            Action::ShowCopy => c.copy_view = Some(0),
            Action::Back => {
                let empty = c.form.body.trim().is_empty() && c.form.meta.trim().is_empty();
                if empty && c.saved_at.is_none() {
                    self.info("Nothing typed; no draft kept.");
                } else {
                    self.save_draft(false)?;
                    if self.composer.as_ref().is_some_and(|c| c.unsaved.is_none()) {
                        self.info("Draft kept: D lists drafts, r on the same message resumes it.");
                    }
                }
                self.composer = None;
            }
            Action::NextField | Action::PrevField => {
                c.set_focus(c.focus.step(action == Action::PrevField));
            }
            Action::MetaTemplate => {
                c.add_meta_template();
                self.save_draft(false)?;
            }
            Action::Undo | Action::Redo => {
                let redo = action == Action::Redo;
                let stepped = c.step(redo);
                self.stepped(stepped, redo)?;
            }
            Action::SaveDraft => self.save_draft(true)?,
            Action::Attach => self.prompt_attach(),
            Action::SaveAndCopy => self.send()?,
            Action::Redact => self.redact_body()?,
            Action::EditExternal => {
                c.set_focus(Field::Body);
                let body = c.form.body.clone();
                self.ask(Effect::EditBody(body));
            }
            Action::Paste(text) => {
                let (clean, removed) = strip_controls(&text);
                if let Some(b) = c.focused_box() {
                    b.insert(&clean);
                }
                c.validate();
                self.save_draft(false)?;
                if removed > 0 {
                    self.warn(format!(
                        "removed {removed} control character(s) from the paste"
                    ));
                }
            }
            Action::Input(ev) => self.composer_key(ev)?,
            _ => {}
        }
        Ok(())
    }

    /// A key typed in the composer: the intent picker's moves, Enter between one-line boxes,
    /// up and down by the rows a box shows, or the focused box's editing; the draft is saved
    /// after a change.
    fn composer_key(&mut self, ev: ratatui::crossterm::event::KeyEvent) -> anyhow::Result<()> {
        let size = self.size;
        let Some(c) = self.composer.as_mut() else {
            return Ok(());
        };
        let single_line = !matches!(c.focus, Field::Body | Field::Meta);
        if c.focus == Field::Intent {
            match ev.code {
                KeyCode::Up | KeyCode::Left | KeyCode::Char('k') | KeyCode::Char('h') => {
                    c.pick_intent(-1)
                }
                KeyCode::Down
                | KeyCode::Right
                | KeyCode::Char('j')
                | KeyCode::Char('l')
                | KeyCode::Char(' ') => c.pick_intent(1),
                KeyCode::Enter => c.set_focus(c.focus.step(false)),
                // Any other letter jumps to the intent it begins (`C` CLOSE, `P` POLL);
                // `h` `j` `k` `l` move, as everywhere; capitals always jump (`H` HANDOFF).
                KeyCode::Char(letter) if letter.is_ascii_alphabetic() => {
                    if !c.pick_intent_by_letter(letter) {
                        return Ok(());
                    }
                }
                _ => return Ok(()),
            }
        } else if single_line && ev.code == KeyCode::Enter {
            c.set_focus(c.focus.step(false));
            return Ok(());
        } else if ev.modifiers.contains(KeyModifiers::CONTROL)
            && matches!(ev.code, KeyCode::Char('m') | KeyCode::Char('j'))
            && single_line
        {
            return Ok(());
        } else if let Some((rows, select)) = (!single_line)
            .then(|| {
                let (_, height) = ComposerAreas::new(size, c).text_size(c.focus);
                vertical_rows(&ev, height.saturating_sub(1).max(1))
            })
            .flatten()
        {
            // Up and down go by the rows the box shows, wrapped between words, not by
            // the lines of the text (see `editor_rows`).
            let (width, _) = ComposerAreas::new(size, c).text_size(c.focus);
            let goal = c.goal;
            if let Some(b) = c.focused_box() {
                let goal =
                    crate::app::writing::editor_rows::move_rows(b, width, rows, goal, select);
                c.goal = Some(goal);
            }
            return Ok(());
        } else {
            let kill = &mut self.kill;
            let changed = (c.focused_box())
                .map(|b| b.key(&ev, kill, single_line))
                .unwrap_or(false);
            if !changed {
                return Ok(());
            }
            c.validate();
        }
        self.save_draft(false)?;
        Ok(())
    }

    /// After an undo (`redo`: a redo) in the composer: the draft saved, and a whole step
    /// (a redaction, `$EDITOR`, an attachment) named on the status line, or why it waits.
    fn stepped(&mut self, stepped: Stepped, redo: bool) -> anyhow::Result<()> {
        let keymap = &self.keymap;
        let key = |a: &Action| {
            keymap
                .key_for(crate::app::keymap::Scope::Composer, a)
                .map(|k| k.to_string())
                .unwrap_or_else(|| a.to_string())
        };
        let (undo, redo_key, next) = (
            key(&Action::Undo),
            key(&Action::Redo),
            key(&Action::NextField),
        );
        match stepped {
            Stepped::Nothing => {}
            Stepped::Typing => self.save_draft(false)?,
            Stepped::Replacement(what, fields) => {
                self.save_draft(false)?;
                let boxes = fields.iter().map(|f| box_name(*f)).collect::<Vec<_>>();
                let line = if redo {
                    format!("Redid {what} ({}); {undo} undoes it.", boxes.join(" and "))
                } else {
                    format!(
                        "Undid {what}: {} as before it; {} redoes it.",
                        match boxes.as_slice() {
                            [one] => format!("{one} is"),
                            all => format!("{} are", all.join(" and ")),
                        },
                        redo_key
                    )
                };
                self.info(line);
            }
            Stepped::Blocked(what, field) => {
                let mut what = what.to_string();
                if let Some(first) = what.get(..1) {
                    what.replace_range(..1, &first.to_uppercase());
                }
                let line = if redo {
                    format!(
                        "{what} is not redone: {} was changed since it was undone.",
                        box_name(field)
                    )
                } else {
                    format!(
                        "{what} is not undone yet: {} was changed after it; {undo} there first ({next} goes to it).",
                        box_name(field)
                    )
                };
                self.warn(line);
            }
        }
        Ok(())
    }

    /// Saves the composer's fields as a draft; `announce` says so on the status line. When
    /// the database does not take it at once (another process's import holds the lock, the
    /// disk is full) the draft is kept in memory and retried on the tick: a key press never
    /// waits for the database, and nothing typed is lost.
    pub(in crate::app) fn save_draft(&mut self, announce: bool) -> anyhow::Result<()> {
        let Some(c) = self.composer.as_mut() else {
            return Ok(());
        };
        let (env, _) = c.envelope();
        let draft = PendingDraft {
            env,
            text: c.preview.clone(),
            form: serde_json::to_string(&c.form)?,
        };
        // While a save is pending, keys only update the pending copy: the retries belong to
        // the tick, off the key path. `C-s` (announce) tries at once.
        let attempt = match (&c.unsaved, announce) {
            (Some(why), false) => Err(why.clone()),
            _ => self
                .store
                .save_draft_checked(&draft.env, &draft.text, &draft.form, c.saved_at.as_deref())
                .map_err(|e| crate::app::background::pending::cause(&e.into())),
        };
        let (attempt, restored) = match attempt {
            Ok(DraftSave::Saved(at)) => (Ok(at), false),
            Ok(DraftSave::Restored(at)) => (Ok(at), true),
            Ok(DraftSave::Taken(why)) => return self.fork_draft(why),
            Err(why) => (Err(why), false),
        };
        match attempt {
            Ok(at) => {
                let created = c.saved_at.replace(at).is_none();
                c.unsaved = None;
                self.pending_drafts.retain(|d| d.id() != draft.id());
                if restored {
                    self.warn(
                        "This draft was discarded or erased in another crosstalk window; your text is kept as a draft again (D lists it).",
                    );
                } else if announce {
                    self.info("Draft saved.");
                }
                if created || restored {
                    self.drafts_changed()?;
                }
            }
            Err(why) => {
                c.unsaved = Some(why.clone());
                self.keep_pending(draft);
                self.warn(format!(
                    "Draft not saved yet: {why}. It is kept here and retried; nothing typed is lost."
                ));
            }
        }
        Ok(())
    }

    /// Keeps the composer's text as a new draft under a new message id, because its id became
    /// another window's (see `Store::save_draft_checked`): both texts are kept, and no two
    /// envelopes are copied under one id.
    fn fork_draft(&mut self, why: DraftTaken) -> anyhow::Result<()> {
        let id = self.store.new_id();
        let Some(c) = self.composer.as_mut() else {
            return Ok(());
        };
        let old = std::mem::replace(&mut c.form.message, id.clone());
        c.saved_at = None;
        c.unsaved = None;
        c.validate();
        let (env, _) = c.envelope();
        let (text, form) = (c.preview.clone(), serde_json::to_string(&c.form)?);
        let what = match why {
            DraftTaken::Changed => "was changed in another crosstalk window",
            DraftTaken::Filed => "was copied from another crosstalk window",
        };
        let tail = |s: &str| s.get(s.len().saturating_sub(6)..).unwrap_or(s).to_string();
        let line = format!(
            "This draft (…{}) {what}: your text is kept as a new draft, id …{}; D lists both.",
            tail(&old),
            tail(&id)
        );
        match self.store.save_draft(&env, &text, &form) {
            Ok(at) => {
                if let Some(c) = self.composer.as_mut() {
                    c.saved_at = Some(at);
                }
                self.drafts_changed()?;
                self.warn(line);
            }
            Err(e) => {
                let why = crate::app::background::pending::cause(&e.into());
                if let Some(c) = self.composer.as_mut() {
                    c.unsaved = Some(why.clone());
                }
                self.keep_pending(PendingDraft { env, text, form });
                self.warn(format!("{line} Not saved yet: {why}; it is retried."));
            }
        }
        Ok(())
    }

    /// Ctrl-Y: stores the composed envelope, copies it and marks it as awaiting a reply. An
    /// envelope with errors is saved as a draft and not copied.
    fn send(&mut self) -> anyhow::Result<()> {
        let Some((env, text, primer)) = self.ready_to_send()? else {
            return Ok(());
        };
        let Some(c) = self.composer.as_ref() else {
            return Ok(());
        };
        let (thread, message) = (c.form.thread.clone(), c.form.message.clone());
        if self.store.message(&message)?.is_none() {
            self.store.file_composed(&env)?;
        }
        self.composer = None;
        self.drafts_changed()?;
        self.send_filed(&thread, &message, &env.banner.to, text, primer)
    }

    /// Whether the composer's envelope may go out now: saved under its own id, valid, its
    /// personal data confirmed, signed when `[signing]` says so. Returns it with the text that
    /// goes out and the primer that goes before it; says why not otherwise (the draft is
    /// kept either way).
    fn ready_to_send(
        &mut self,
    ) -> anyhow::Result<Option<(crate::protocol::Envelope, String, Option<String>)>> {
        let id = self.composer.as_ref().map(|c| c.form.message.clone());
        self.save_draft(false)?;
        let Some(c) = self.composer.as_ref() else {
            return Ok(None);
        };
        if Some(&c.form.message) != id.as_ref() {
            // Another window took the id (the status line says so): the operator looks at
            // what is kept before anything is copied.
            return Ok(None);
        }
        if let Some(why) = &c.unsaved {
            // Stored first, then copied: a copy the database does not know about would
            // never be matched with its reply.
            let note = format!(
                "Not copied yet: {why}. The draft is kept and retried; C-y again once it is saved."
            );
            self.warn(note);
            return Ok(None);
        }
        if !c.is_valid() {
            let why = c
                .meta_problems
                .first()
                .cloned()
                .or_else(|| {
                    c.diagnostics
                        .iter()
                        .find(|d| d.is_error())
                        .map(|d| d.message.to_string())
                })
                .unwrap_or_default();
            self.error(format!("Not copied (draft saved): {why}"));
            return Ok(None);
        }
        if !self.pii_copy_allowed()? {
            return Ok(None);
        }
        let Some(c) = self.composer.as_ref() else {
            return Ok(None);
        };
        let (mut env, _) = c.envelope();
        let primer = c.primer.clone();
        let mut text = c.preview.clone();
        match crate::app::writing::signing::sign_composed(&self.settings.signing, &mut env) {
            Ok(Some(_)) => text = crate::protocol::render(&env),
            Ok(None) => {}
            Err(why) => {
                self.error(format!("Not copied (draft saved): cannot sign: {why}"));
                return Ok(None);
            }
        }
        Ok(Some((env, text, primer)))
    }

    /// Sends message `message` (of `thread`, for `to`) just filed as `text`: a POLL to each
    /// of its targets' windows in turn (each as the hop makes it: fence, preamble or primer),
    /// straight to a contact that takes envelopes so, else onto the clipboard; the message is
    /// selected and the status line says what came of it.
    fn send_filed(
        &mut self,
        thread: &str,
        message: &str,
        to: &str,
        text: String,
        primer: Option<String>,
    ) -> anyhow::Result<()> {
        if self.store.fanout(message)?.is_some() {
            self.put_up_poll(message, primer.is_some())?;
            return self.reveal_keeping_status(thread, message);
        }
        // The primer is for chat windows: a first envelope with one is copied.
        let stored = self.store.message(message)?;
        if let Some(m) = stored
            && self.deliver_direct(&m, to, primer.is_some())?.is_some()
        {
            return self.reveal_keeping_status(thread, message);
        }
        let copied = match primer {
            // The primer first, then the envelope (fenced alone when the contact wants it:
            // the primer has a fence of its own inside).
            Some(p) => {
                let envelope = if self.fence_for(to) {
                    crate::contacts::fence(&text)
                } else {
                    text
                };
                self.copy_text(&format!("{p}{envelope}"), "")
                    .map(|(l, line)| (l, format!("primer and first envelope: {line}")))
            }
            None => self.copy_text(&text, to),
        };
        // When nothing was copied the message stays a draft (the status line says why);
        // `y` on it copies it again.
        let Some((level, line)) = copied else {
            return self.reveal_keeping_status(thread, message);
        };
        self.store.mark_copied(message)?;
        self.recount_drafts()?;
        self.reveal(thread, Some(message))?;
        let waits = self.store.delivery(message).ok().flatten();
        self.set_status((level, format!("{line}; {}", awaits_text(waits.as_ref()))));
        Ok(())
    }

    /// Selects message `id` of `thread`, keeping what the status line says.
    fn reveal_keeping_status(&mut self, thread: &str, id: &str) -> anyhow::Result<()> {
        let status = self.status.clone();
        self.reveal(thread, Some(id))?;
        self.set_status(status);
        Ok(())
    }

    /// `y`: copies the selected envelope (canonical form).
    pub(in crate::app) fn copy_selected(&mut self) -> anyhow::Result<()> {
        let Some(m) = self.selected_message().cloned() else {
            self.warn("Nothing selected to copy.");
            return Ok(());
        };
        // A conflicting version on screen is copied as shown, but it is not the message the
        // ledger knows: recording the copy would say the stored text was relayed while
        // another text went out.
        if self.inspector.version > 0 {
            let (text, _) = self.relay_text(&m)?;
            let version = self.inspector.version;
            if let Some((_, line)) = self.copy_text(&text, &m.envelope.banner.to) {
                self.warn(format!(
                    "{line}: conflicting version {version} (same id, other content), not recorded as relayed; V shows the stored text"
                ));
            }
            return Ok(());
        }
        let held = self.store.pii_held(&m, self.now)?;
        let warning = held.map(|why| format!("Not copied: {why}. y again copies it anyway."));
        if self.held_back(m.id.clone(), warning) {
            return Ok(());
        }
        // A POLL for others goes to each of its targets' windows, one copy after another.
        let to_me = self.delivery.as_ref().is_some_and(|d| d.to_me);
        if !to_me && self.store.fanout(&m.id)?.is_some() {
            return self.put_up_poll(&m.id, false);
        }
        let (text, hop) = self.relay_text(&m)?;
        self.relay_message(&m, &text, hop)?;
        if let Some(note) = crate::app::text::hidden_note(&text)
            && self.status.0 != Level::Error
        {
            self.set_status((Level::Warn, format!("{}; {note}", self.status.1)));
        }
        Ok(())
    }

    /// Whether a copy of `what` (a message id, or `thread ID`) stops at `warning` (personal
    /// data without consent): it does at the first press, which says so; a second press right
    /// after goes ahead. Without a warning it goes ahead at once.
    fn held_back(&mut self, what: String, warning: Option<String>) -> bool {
        let Some(warning) = warning else {
            self.relay_pii_confirmed = None;
            return false;
        };
        if self.relay_pii_confirmed.as_deref() == Some(what.as_str()) {
            self.relay_pii_confirmed = None;
            return false;
        }
        self.relay_pii_confirmed = Some(what);
        self.warn(warning);
        true
    }

    /// Relays `m` as `text` (with this desk's audit hop when `hop`): straight to a contact
    /// that takes envelopes so (over HTTP), else to the clipboard, and records it.
    fn relay_message(
        &mut self,
        m: &crate::store::StoredMessage,
        text: &str,
        hop: bool,
    ) -> anyhow::Result<()> {
        if self
            .deliver_direct(m, &m.envelope.banner.to, false)?
            .is_some()
        {
            return Ok(());
        }
        if let Some((level, line)) = self.copy_text(text, &m.envelope.banner.to) {
            if let Some(relayed) = self.record_relay(&m.id)? {
                let hop = if hop {
                    " with this desk's audit hop"
                } else {
                    ""
                };
                self.set_status((level, format!("{line}; {relayed}{hop}")));
                return Ok(());
            }
            let waiting = match self.store.mark_copied(&m.id) {
                Ok(w) => {
                    self.recount_drafts()?;
                    w
                }
                Err(e) => {
                    let e = anyhow::Error::from(e);
                    if !crate::app::background::pending::is_busy(&e) {
                        return Err(e);
                    }
                    // Copied all the same; the wait for a reply is recorded on a tick.
                    self.pending_copied.push(m.id.clone());
                    self.set_status((
                        Level::Warn,
                        format!("{line}; awaiting reply (recorded once the database is free)"),
                    ));
                    return Ok(());
                }
            };
            // Filed and copied now: what it awaits follows its intent (an ERROR, an ACK or
            // a CLOSE awaits nothing).
            let waits = if waiting {
                self.store.delivery(&m.id).ok().flatten()
            } else {
                None
            };
            self.set_status((
                level,
                if waiting {
                    format!("{line}; {}", awaits_text(waits.as_ref()))
                } else {
                    line
                },
            ));
            if waiting {
                let thread = m.thread.clone();
                self.reveal(&thread, Some(&m.id))?;
            }
        }
        Ok(())
    }

    /// `Y`: copies every envelope of the open thread, in tree order.
    pub(in crate::app) fn copy_thread(&mut self) -> anyhow::Result<()> {
        let Some(id) = self.tree.as_ref().map(|t| t.outline.id.clone()) else {
            self.warn("No thread open to copy.");
            return Ok(());
        };
        let Some(view) = self.store.thread(&id)? else {
            return Ok(());
        };
        let held = self.store.pii_held_all(&view.messages, self.now)?;
        let warning = held.first().map(|(_, why)| {
            format!(
                "Not copied: {} of its envelopes hold personal data without consent (the \
                 first: {why}). Y again copies the thread anyway.",
                held.len()
            )
        });
        if self.held_back(format!("thread {id}"), warning) {
            return Ok(());
        }
        let text = view.carried_text();
        let to = view
            .messages
            .last()
            .map(|m| m.envelope.banner.to.clone())
            .unwrap_or_default();
        let n = view.messages.len();
        if let Some((level, line)) = self.copy_text(&text, &to) {
            // A thread copy goes to no one recipient: the ledger cannot say any of its
            // messages was relayed to theirs.
            let n = match n {
                1 => "1 envelope".to_string(),
                n => format!("{n} envelopes"),
            };
            self.set_status((
                level,
                format!("{line} ({n}; not recorded as relayed: y on a message records it)"),
            ));
        }
        Ok(())
    }

    /// Copies `text` for recipient `to` (in a fence when configured for them). Returns the
    /// status to show, or `None` after setting an error status when nothing was copied.
    pub(in crate::app) fn copy_text(&mut self, text: &str, to: &str) -> Option<(Level, String)> {
        let fenced = self.fence_for(to);
        let payload = if fenced {
            crate::contacts::fence(text)
        } else {
            text.to_string()
        };
        self.last_copy = None;
        match self.clipboard.copy(&payload, &mut self.terminal_out) {
            Ok(report) => {
                self.last_copy = Some(report.method);
                let level = if report.warning.is_some() {
                    Level::Warn
                } else {
                    Level::Info
                };
                let mut line = report.status_line();
                if fenced {
                    line.push_str(" (in a ``` fence)");
                }
                Some((level, line))
            }
            Err(e) => {
                self.error(format!("Not copied: {e}"));
                None
            }
        }
    }

    /// Whether copies to `to` are fenced: a contact decides, else the recipients fenced by
    /// name (see [`crate::contacts::AddressBook::fenced`]).
    pub(in crate::app) fn fence_for(&self, to: &str) -> bool {
        self.contacts.fenced(to)
    }
}

/// What a message just copied out waits for, by its intent (the delivery ledger's reading):
/// "awaiting reply from CLAUDE", or that it awaits none (a RESPOND, an ACK).
fn awaits_text(d: Option<&crate::store::Delivery>) -> String {
    match d {
        Some(d) if !d.awaiting_from.is_empty() => format!(
            "awaiting reply from {}",
            crate::app::text::safe_line(&d.awaiting_from.join(", "))
        ),
        _ => "sent; its intent awaits no reply".to_string(),
    }
}

/// A box as the status line names it.
fn box_name(field: Field) -> &'static str {
    match field {
        Field::Body => "the body",
        Field::Meta => "META",
        Field::From => "from",
        Field::To => "to",
        Field::Context => "context",
        Field::Intent => "the intent",
    }
}

/// The rows a key moves the cursor of a multi-line box by, `page` for a page, and whether
/// it extends the selection (Shift): the vertical moves of the editor widget (↑ ↓, C-p C-n,
/// PgUp PgDn, M-v C-v), which the composer makes on wrapped rows itself.
fn vertical_rows(ev: &ratatui::crossterm::event::KeyEvent, page: usize) -> Option<(isize, bool)> {
    let m = ev.modifiers;
    let (ctrl, alt) = (
        m.contains(KeyModifiers::CONTROL),
        m.contains(KeyModifiers::ALT),
    );
    let page = page as isize;
    let rows = match (ev.code, ctrl, alt) {
        (KeyCode::Up, false, false) | (KeyCode::Char('p'), true, false) => -1,
        (KeyCode::Down, false, false) | (KeyCode::Char('n'), true, false) => 1,
        (KeyCode::PageUp, false, false) | (KeyCode::Char('v'), false, true) => -page,
        (KeyCode::PageDown, false, false) | (KeyCode::Char('v'), true, false) => page,
        _ => return None,
    };
    Some((rows, m.contains(KeyModifiers::SHIFT)))
}
