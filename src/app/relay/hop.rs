//! The two-action hop: with the clipboard watched and `[relay] copy_on_import`, an envelope
//! copied in one chat window is imported and put back on the clipboard as its recipient's
//! window should get it (in the contact's fence, after its preamble the first time), marked
//! relayed. The operator switches window and pastes. When crosstalk cannot vouch for the copy
//! (invalid, conflicting, addressed to the operator, one of several) the clipboard is left as
//! it was and the status line says why, in red, with the bell when configured.
//!
//! A POLL goes to each of its targets' windows: it is put up for the first, and `>` puts it up
//! for each next one in turn, each copy made for its window (see `store::fanout`). `y` on a
//! POLL and C-y on one composed here start the same round.

use std::io::Write as _;

use crate::app::App;
use crate::app::Level;
use crate::store::{HopDecision, ImportReport, StoredMessage, Waiting};
use crate::transport::route::{self, ForRecipient};

/// What [`App::take_hop`] did.
pub(in crate::app) enum Taken {
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
    /// status line (a narrow terminal cuts its end); `arrived` is what the import said,
    /// `landed` where the envelope for the operator went (see `arrival`).
    pub(in crate::app) fn hop_after_watch(
        &mut self,
        report: &ImportReport,
        arrived: &str,
        landed: Option<&str>,
    ) -> anyhow::Result<()> {
        match self.take_hop(report)? {
            Taken::Nothing => return Ok(()),
            Taken::Refused(why) => {
                // Where the envelope for the operator went (selected, or waiting for `J`).
                let landed = landed.map(|l| format!(" {l}.")).unwrap_or_default();
                self.error(format!(
                    "Clipboard left unchanged: {why}. Check what you copied before pasting it anywhere.{landed}"
                ))
            }
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
    pub(in crate::app) fn take_hop(&mut self, report: &ImportReport) -> anyhow::Result<Taken> {
        self.hop_next.clear();
        Ok(match self.store.hop_decision(report)? {
            HopDecision::Nothing => Taken::Nothing,
            HopDecision::Refuse(why) => Taken::Refused(why),
            HopDecision::Relay(id) => match self.pii_refusal(&id)? {
                Some(why) => Taken::Refused(why),
                None => Taken::Ready(self.put_up_first(&id, false)?),
            },
            HopDecision::Several(ids) => {
                let n = ids.len();
                for id in &ids {
                    let waiting = self.store.waiting_for(id)?;
                    self.hop_next.extend(waiting);
                }
                Taken::Waiting {
                    n,
                    first: self.hop_target(0),
                }
            }
        })
    }

    /// `y` on a POLL for someone else, C-y on one composed here (`primer`: the first envelope
    /// of a new conversation, which every window gets after the primer): puts it up for the
    /// first of its targets it did not go to yet, the others waiting for `>`; says so.
    pub(in crate::app) fn put_up_poll(&mut self, id: &str, primer: bool) -> anyhow::Result<()> {
        let composed = (self.store.message(id)?).is_some_and(|m| m.direction == "composed");
        if let Some(line) = self.put_up_first(id, primer)? {
            // Copied out, one composed here waits for its targets (one relayed did before).
            let line = match self.store.delivery(id)? {
                Some(d) if composed && !d.awaiting_from.is_empty() => format!(
                    "{line}; awaiting reply from {}",
                    crate::app::text::safe_line(&d.awaiting_from.join(", "))
                ),
                _ => line,
            };
            self.set_status((Level::Info, format!("{line}.")));
        }
        Ok(())
    }

    /// Puts message `id` up for the first window it still goes to (a POLL's first target it
    /// did not go to yet, else its recipient) and keeps the others first in line for `>`.
    /// Returns the status line, `None` when nothing was copied (the status line says why).
    fn put_up_first(&mut self, id: &str, primer: bool) -> anyhow::Result<Option<String>> {
        let mut waiting = self.store.waiting_for(id)?;
        if waiting.is_empty() {
            return Ok(None);
        }
        let first = waiting.remove(0);
        // Its other windows come next, before what an earlier copy left waiting; a round
        // of the same message begun before is replaced.
        self.hop_next.retain(|w| w.message != id);
        self.hop_next.splice(0..0, waiting);
        let Some(line) = self.put_up(&first, primer)? else {
            self.hop_next.retain(|w| w.message != id);
            return Ok(None);
        };
        Ok(Some(match self.next_words(id) {
            Some(more) => format!("{line}; {more}"),
            None => line,
        }))
    }

    /// `>`: puts up what waits next: a POLL for its next target, or the next envelope of a
    /// several-envelope copy.
    pub(in crate::app) fn relay_next(&mut self) -> anyhow::Result<()> {
        if self.hop_next.is_empty() {
            self.info(
                "Nothing waits to be put up: > follows a POLL put up for its first target, or a copy that held several envelopes.",
            );
            return Ok(());
        }
        let next = self.hop_next.remove(0);
        if let Some(why) = self.pii_refusal(&next.message)? {
            self.error(format!("Not put up: {why}."));
            self.ring();
            return Ok(());
        }
        if let Some(line) = self.put_up(&next, false)? {
            let more =
                (self.next_words(&next.message)).unwrap_or_else(|| "that was the last".into());
            self.set_status((Level::Info, format!("{line}; {more}.")));
            self.ring();
        }
        Ok(())
    }

    /// What `>` does next, after message `just` was put up: the same message for its next
    /// target, or the next envelope; `None` when nothing waits and `just` is no POLL (a POLL
    /// says its round is over).
    fn next_words(&self, just: &str) -> Option<String> {
        match self.hop_next.first() {
            Some(w) if w.message == just => Some(format!(
                "> puts it up for {} next",
                crate::app::text::safe_line(&w.to)
            )),
            Some(_) => Some(format!(
                "> puts up the next ({} left, for {})",
                self.hop_next.len(),
                self.hop_target(0)
            )),
            None => (self.store.fanout(just).ok().flatten())
                .filter(|t| t.len() > 1)
                .map(|_| "that was its last target".to_string()),
        }
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

    /// The window the `i`-th copy waiting goes to, for the status line.
    fn hop_target(&self, i: usize) -> String {
        (self.hop_next.get(i))
            .map(|w| crate::app::text::safe_line(&w.to).into_owned())
            .unwrap_or_default()
    }

    /// Selects message `id` of `thread` just put up, so `y` copies it again — unless the
    /// operator is in the composer or a popup, which a watched copy must not pull the
    /// selection out from under (see `arrival`).
    fn select_put_up(&mut self, thread: &str, id: &str) -> anyhow::Result<()> {
        if self.busy_elsewhere() {
            return Ok(());
        }
        self.reveal(thread, Some(id))
    }

    /// Copies message `w.message` for the window of `w.to` and records that it went there;
    /// selects it. Returns the status line, or `None` when nothing was copied (the status
    /// line says why).
    fn put_up(&mut self, w: &Waiting, primer: bool) -> anyhow::Result<Option<String>> {
        let (id, to) = (w.message.as_str(), w.to.as_str());
        let Some(m) = self.store.message(id)? else {
            return Ok(None);
        };
        // A contact that takes envelopes straight (over HTTP) gets it delivered, as `y`
        // delivers it: the answer is recorded when it comes back (see `under_way`). The
        // primer is for chat windows: a first envelope with one is copied.
        if let Some(started) = self.deliver_direct(&m, to, primer)? {
            let thread = m.thread.clone();
            self.select_put_up(&thread, id)?;
            return Ok(Some(started));
        }
        let ready = self.target_text(&m, to, primer)?;
        // Already fenced as the contact wants: copied as it is.
        let Some(_) = self.copy_text(&ready.text, "") else {
            return Ok(None);
        };
        let relayed = self.record_relay_to(id, to)?;
        if m.direction == "composed" {
            self.copied_out(id)?;
        }
        let thread = m.thread.clone();
        self.select_put_up(&thread, id)?;
        let first = match (ready.preamble, ready.primer || primer) {
            (true, true) => ", the primer first",
            (true, false) => ", its preamble first",
            _ => "",
        };
        // Short: the status line is read at a glance between two windows, and the copy's
        // method is in the inspector's delivery line.
        let how = match (relayed, ready.turn) {
            (true, _) => "",
            (false, Some(_)) => " (it had it before)",
            (false, None) if m.direction == "composed" => "",
            (false, None) => " (already relayed before)",
        };
        let hidden = crate::app::text::hidden_note(&ready.text)
            .map(|note| format!("; {note}"))
            .unwrap_or_default();
        let to = crate::app::text::safe_line(to);
        let head = match ready.turn {
            Some(t) => format!("POLL for {to} ({} of {})", t.n, t.of),
            None => format!("Ready for {to}"),
        };
        Ok(Some(format!("{head}: paste it there{first}{how}{hidden}")))
    }

    /// A composed message just copied out: from now on it awaits what its intent asks (when
    /// the database is busy, recorded on a tick).
    fn copied_out(&mut self, id: &str) -> anyhow::Result<()> {
        match self.store.mark_copied(id) {
            Ok(true) => self.recount_drafts(),
            Ok(false) => Ok(()),
            Err(e) => {
                let e = anyhow::Error::from(e);
                if !crate::app::background::pending::is_busy(&e) {
                    return Err(e);
                }
                self.pending_copied.push(id.to_string());
                Ok(())
            }
        }
    }

    /// The text the window of `to` gets of `m` (see [`route::for_target`]);
    /// with `primer`, after the primer.
    fn target_text(
        &self,
        m: &StoredMessage,
        to: &str,
        primer: bool,
    ) -> anyhow::Result<ForRecipient> {
        Ok(route::for_target(
            &self.store,
            m,
            to,
            &self.carrier(primer),
        )?)
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
