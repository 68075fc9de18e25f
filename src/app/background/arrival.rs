//! What the clipboard watch brought for the operator. After a watched copy holding an
//! envelope addressed to one of the operator's addresses, that envelope is selected, as a
//! paste's newest envelope is: the status line, `y` and `r` then name the message that just
//! arrived, not the one selected before. Of several in one copy, the newest for the operator
//! (by the time in its id, then the later in the copy) is the one.
//!
//! The selection moves only where the operator is not busy elsewhere. While the composer, a
//! popup (help, the queue, a preview, a picker, a prompt) or the thread filter is open, the
//! app does not pull the thread and message out from under them: the status line says which
//! message arrived and which key opens it, that key (`J`) keeps it until it is used or
//! something newer arrives, and the reminder comes back the moment they leave. Leaving does
//! not jump by itself: C-y selects the reply just sent (what `y` copies again) and its status
//! line says how it left, which a jump would hide.

use crate::app::Action;
use crate::app::App;
use crate::app::keymap::Scope;
use crate::app::text::headline;
use crate::protocol::timestamp_ms;
use crate::store::{ImportReport, Outcome};

/// An envelope for the operator that arrived while they were busy, waiting for the key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arrival {
    /// Its thread.
    pub thread: String,
    /// Its message id.
    pub message: String,
    /// Its headline (`INTENT from→to: first line`), safe to print.
    pub headline: String,
}

impl App {
    /// Whether the operator is at something the selection must not move under: the composer,
    /// a popup, or the thread filter being typed.
    pub(in crate::app) fn busy_elsewhere(&self) -> bool {
        self.composer.is_some() || self.popup.is_some() || self.list.filtering
    }

    /// The newest envelope `report` added that is addressed to the operator, if any.
    fn newest_for_operator(&self, report: &ImportReport) -> anyhow::Result<Option<Arrival>> {
        let mut best: Option<((u64, usize), Arrival)> = None;
        for (n, item) in report.items.iter().enumerate() {
            let (Outcome::Imported, Some(message), Some(thread)) =
                (item.outcome, &item.message, &item.thread)
            else {
                continue;
            };
            if !self.store.delivery(message)?.is_some_and(|d| d.to_me) {
                continue;
            }
            let rank = (timestamp_ms(message).unwrap_or(0), n);
            if best.as_ref().is_some_and(|(r, _)| *r > rank) {
                continue;
            }
            let Some(m) = self.store.message(message)? else {
                continue;
            };
            let arrival = Arrival {
                thread: thread.clone(),
                message: message.clone(),
                headline: headline(&m.envelope, m.intent.as_deref()),
            };
            best = Some((rank, arrival));
        }
        Ok(best.map(|(_, a)| a))
    }

    /// After a watched import: selects the newest envelope for the operator, or, while they
    /// are busy elsewhere, keeps it for the key. Returns what the status line should add
    /// (`None`: nothing arrived for the operator).
    pub(in crate::app) fn land_watched(
        &mut self,
        report: &ImportReport,
    ) -> anyhow::Result<Option<String>> {
        let Some(arrival) = self.newest_for_operator(report)? else {
            return Ok(None);
        };
        if self.busy_elsewhere() {
            let note = self.arrival_note(&arrival, false);
            self.arrival = Some(arrival);
            return Ok(Some(note));
        }
        self.arrival = None;
        self.reveal(&arrival.thread, Some(&arrival.message))?;
        let reply = self.browse_key(&Action::Reply);
        Ok(Some(format!(
            "Selected, for you: {} ({reply} answers it)",
            arrival.headline
        )))
    }

    /// The status line's word on an arrival waiting for its key: said as it arrives
    /// (`meanwhile` false), and again once the operator is back in the threads.
    fn arrival_note(&self, arrival: &Arrival, meanwhile: bool) -> String {
        let key = self.browse_key(&Action::JumpToArrival);
        if meanwhile {
            format!(
                "Arrived for you meanwhile: {} ({key} opens it)",
                arrival.headline
            )
        } else {
            format!(
                "Arrived for you: {} ({key} opens it, back in the threads)",
                arrival.headline
            )
        }
    }

    /// The key of a browse action as help names it (its config name when none is bound).
    fn browse_key(&self, action: &Action) -> String {
        self.keymap
            .key_for(Scope::Browse, action)
            .map(|k| k.to_string())
            .unwrap_or_else(|| action.to_string())
    }

    /// `J`: opens the envelope that arrived for the operator while they were busy.
    pub(in crate::app) fn jump_to_arrival(&mut self) -> anyhow::Result<()> {
        let Some(arrival) = self.arrival.take() else {
            self.info("Nothing arrived for you while you were busy: the watch selects what arrives for you.");
            return Ok(());
        };
        if self.store.message(&arrival.message)?.is_none() {
            self.warn("The envelope that arrived for you is gone (erased meanwhile).");
            return Ok(());
        }
        self.reveal(&arrival.thread, Some(&arrival.message))?;
        let reply = self.browse_key(&Action::Reply);
        self.info(format!(
            "Arrived for you: {} ({reply} answers it)",
            arrival.headline
        ));
        Ok(())
    }

    /// After an action that took the operator back to the threads from the composer or a
    /// popup: the arrival still waiting is named again, after what the action said.
    pub(in crate::app) fn remind_arrival(&mut self, was_busy: bool) {
        if !was_busy || self.busy_elsewhere() {
            return;
        }
        let Some(arrival) = self.arrival.clone() else {
            return;
        };
        if self.selected_id() == Some(arrival.message.as_str()) {
            // Already where it would take them.
            self.arrival = None;
            return;
        }
        let note = self.arrival_note(&arrival, true);
        let (level, said) = self.status.clone();
        let line = if said.is_empty() {
            note
        } else {
            format!("{said} · {note}")
        };
        self.set_status((level, line));
    }
}
