//! The two-action hop: with the clipboard watched and `[relay] copy_on_import`, an envelope
//! copied in one chat window is imported and put back on the clipboard as its recipient's
//! window should get it (in the contact's fence, after its preamble the first time), marked
//! relayed. The operator switches window and pastes. When crosstalk cannot vouch for the copy
//! (invalid, conflicting, addressed to the operator, one of several) the clipboard is left as
//! it was and the status line says why, in red, with the bell when configured.

use std::io::Write as _;

use super::App;
use super::Level;
use crate::store::{Carrier, ForRecipient, HopDecision, ImportReport, StoredMessage};

/// What [`App::take_hop`] did.
pub(super) enum Taken {
    /// Nothing new to carry.
    Nothing,
    /// Left alone, for this reason.
    Refused(String),
    /// Put up: the status line, or `None` when the copy failed (the status line says why).
    Ready(Option<String>),
    /// Several wait for `>`: how many, and the first one's recipient.
    Waiting { n: usize, first: String },
}

impl App {
    /// After the watch imported a clipboard text: relays it, or says why not, first on the
    /// status line (a narrow terminal cuts its end); `arrived` is what the import said.
    pub(super) fn hop_after_watch(
        &mut self,
        report: &ImportReport,
        arrived: &str,
    ) -> anyhow::Result<()> {
        match self.take_hop(report)? {
            Taken::Nothing => return Ok(()),
            Taken::Refused(why) => self.error(format!(
                "Clipboard left unchanged: {why}. Check what you copied before pasting it anywhere."
            )),
            Taken::Ready(line) => {
                if let Some(line) = line {
                    self.set_status((Level::Info, format!("{line}. {arrived}")));
                }
            }
            Taken::Waiting { n, first } => self.error(format!(
                "Clipboard left unchanged: {n} envelopes for others in one copy. > puts up the first (for {first}), then the next. {arrived}"
            )),
        }
        self.ring();
        Ok(())
    }

    /// Acts on the hop's decision for an imported text (a paste's or a watched copy's): puts
    /// the one envelope up, or keeps several for `>`; says what came of it.
    pub(super) fn take_hop(&mut self, report: &ImportReport) -> anyhow::Result<Taken> {
        self.hop_next.clear();
        Ok(match self.store.hop_decision(report)? {
            HopDecision::Nothing => Taken::Nothing,
            HopDecision::Refuse(why) => Taken::Refused(why),
            HopDecision::Relay(id) => match self.pii_refusal(&id)? {
                Some(why) => Taken::Refused(why),
                None => Taken::Ready(self.put_up(&id)?),
            },
            HopDecision::Several(ids) => {
                let n = ids.len();
                self.hop_next = ids;
                Taken::Waiting {
                    n,
                    first: self.hop_target(0)?,
                }
            }
        })
    }

    /// `>`: puts up the next envelope of a several-envelope copy.
    pub(super) fn relay_next(&mut self) -> anyhow::Result<()> {
        if self.hop_next.is_empty() {
            self.info("Nothing waits to be put up: > follows a copy that held several envelopes.");
            return Ok(());
        }
        let id = self.hop_next.remove(0);
        let left = self.hop_next.len();
        if let Some(why) = self.pii_refusal(&id)? {
            self.error(format!("Not put up: {why}."));
            self.ring();
            return Ok(());
        }
        if let Some(line) = self.put_up(&id)? {
            let more = match left {
                0 => "that was the last".to_string(),
                n => format!("> puts up the next ({n} left, for {})", self.hop_target(0)?),
            };
            self.set_status((Level::Info, format!("{line}; {more}.")));
            self.ring();
        }
        Ok(())
    }

    /// Why message `id` may not be put up for its recipient without the operator: personal
    /// data without explicit consent (see [`crate::store::Store::pii_held`]).
    fn pii_refusal(&self, id: &str) -> anyhow::Result<Option<String>> {
        let Some(m) = self.store.message(id)? else {
            return Ok(None);
        };
        Ok(self
            .store
            .pii_held(&m, self.now)?
            .map(|why| format!("{why}; y copies it after a warning")))
    }

    /// The recipient of the `i`-th envelope waiting, for the status line.
    fn hop_target(&self, i: usize) -> anyhow::Result<String> {
        let Some(id) = self.hop_next.get(i) else {
            return Ok(String::new());
        };
        Ok(self
            .store
            .message(id)?
            .map(|m| super::text::safe_line(&m.envelope.banner.to).into_owned())
            .unwrap_or_default())
    }

    /// Copies message `id` for its recipient and records it relayed; selects it. Returns the
    /// status line, or `None` when nothing was copied (the status line says why).
    fn put_up(&mut self, id: &str) -> anyhow::Result<Option<String>> {
        let Some(m) = self.store.message(id)? else {
            return Ok(None);
        };
        let to = m.envelope.banner.to.clone();
        // A contact that takes envelopes over HTTP gets it posted, as `y` posts it: the
        // answer is recorded when it comes back (see `http_delivery`).
        let (posted, _) = self.relay_text(&m)?;
        if self.deliver_over_http(id, &m.thread, &posted, &to) {
            let thread = m.thread.clone();
            self.reveal(&thread, Some(id))?;
            return Ok(Some(format!(
                "Delivering to {} over HTTP",
                super::text::safe_line(&to)
            )));
        }
        let ready = self.recipient_text(&m)?;
        let preamble = ready.preamble;
        // Already fenced as the contact wants: copied as it is.
        let Some(_) = self.copy_text(&ready.text, "") else {
            return Ok(None);
        };
        let relayed = self.record_relay(id)?;
        let thread = m.thread.clone();
        self.reveal(&thread, Some(id))?;
        let first = if preamble { ", its preamble first" } else { "" };
        // Short: the status line is read at a glance between two windows, and the copy's
        // method is in the inspector's delivery line.
        let how = if relayed.is_some() {
            ""
        } else {
            " (already relayed before)"
        };
        let hidden = super::text::hidden_note(&ready.text)
            .map(|note| format!("; {note}"))
            .unwrap_or_default();
        Ok(Some(format!(
            "Ready for {}: paste it there{first}{how}{hidden}",
            super::text::safe_line(&to)
        )))
    }

    /// The text a recipient's window gets (see [`crate::store::Store::for_recipient`]).
    fn recipient_text(&self, m: &StoredMessage) -> anyhow::Result<ForRecipient> {
        let carrier = Carrier {
            book: &self.contacts,
            audit_by: self.settings.audit_by.as_deref(),
            now: self.now,
            primer: false,
        };
        Ok(self.store.for_recipient(m, &carrier)?)
    }

    /// The bell, when `[watch] bell` asks for it.
    fn ring(&mut self) {
        if self.watch_config.bell {
            let _ = self
                .terminal_out
                .write_all(b"\x07")
                .and_then(|()| self.terminal_out.flush());
        }
    }
}
