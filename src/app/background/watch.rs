//! `W`: the app watches the clipboard. A thread of its own reads it (see
//! [`crate::clipboard::watch`]), so the draw loop never waits on a clipboard owner; each tick
//! takes what the thread found and imports it through the same store path as a paste, then
//! reads the screen again keeping the selection — unless the copy brought an envelope for the
//! operator, which is then selected (see `arrival`). Copies the app made itself never come
//! back as new input: the clipboard handle remembers their digests.

use std::io::Write as _;

use crate::app::App;
use crate::clipboard::watch::{Polled, Poller, SOURCE};
use crate::store::ImportSummary;

impl App {
    /// Whether the clipboard is being watched.
    pub fn watching(&self) -> bool {
        self.watch.is_some()
    }

    /// Whether the watch found something the next tick should take (asked between ticks).
    pub(crate) fn watch_has_news(&self) -> bool {
        self.watch.as_ref().is_some_and(Poller::has_news)
    }

    /// `W`: starts or stops the watch. Where no clipboard can be read the status line says
    /// why and nothing starts.
    pub(in crate::app) fn toggle_watch(&mut self) {
        if self.watch.take().is_some() {
            self.info("Stopped watching the clipboard.");
            return;
        }
        let reader = self.clipboard.reader();
        if let Err(why) = reader.reachable() {
            self.error(format!("Cannot watch the clipboard: {why}."));
            return;
        }
        self.watch = Some(Poller::start(
            reader,
            self.clipboard.own_copies(),
            self.settings.options.clone(),
            &self.watch_config,
        ));
        self.info("Starting to watch the clipboard…");
    }

    /// On the tick: imports what the watch found since the last tick.
    pub(in crate::app) fn take_watched(&mut self) {
        let Some(poller) = &self.watch else { return };
        let mut polled = poller.drain();
        // A text the database did not take last time goes first.
        let waiting: Vec<Polled> = self
            .watch_waiting
            .drain(..)
            .map(Polled::Envelopes)
            .collect();
        polled.splice(0..0, waiting);
        for p in polled {
            match p {
                Polled::Started(waits) => self.info(format!(
                    "Watching the clipboard ({waits}): envelopes copied from now on are imported; W stops."
                )),
                Polled::Envelopes(text) => self.import_watched(text),
                Polled::NoEnvelope(bytes) => {
                    tracing::debug!(bytes, "clipboard text without an envelope ignored");
                }
                Polled::Unavailable(why) => {
                    self.watch = None;
                    self.error(format!("Stopped watching the clipboard: {why}."));
                    return;
                }
            }
        }
    }

    fn import_watched(&mut self, text: String) {
        let mut options = self.settings.options.clone();
        options.now = Some(self.now);
        let report = self
            .store
            .keep_text(SOURCE, &text)
            .and_then(|kept| self.store.import_kept(&kept, &options, &mut |_| {}, true));
        let report = match report {
            Ok(r) => r,
            Err(e) if e.is_busy() => {
                // Kept in memory and offered again on the next tick.
                self.watch_waiting.push(text);
                self.warn("Clipboard envelope waiting: the database is busy (another process is writing).");
                return;
            }
            Err(e) => {
                self.error(format!("Clipboard envelope not imported: {e}"));
                return;
            }
        };
        let arrival = ImportSummary::of(&report);
        if !self.settings.copy_on_import && arrival.is_news() && self.watch_config.bell {
            let _ = self
                .terminal_out
                .write_all(b"\x07")
                .and_then(|()| self.terminal_out.flush());
        }
        if let Err(e) = self.reread_screen() {
            tracing::debug!("screen not read again after a clipboard import: {e:#}");
            self.stale = true;
        }
        // The envelope for the operator is selected (or waits for its key), so that what the
        // status line names is what `r` answers.
        let landed = self.land_watched(&report).unwrap_or_else(|e| {
            tracing::debug!("the envelope for the operator not selected: {e:#}");
            None
        });
        let line = match &landed {
            Some(note) => format!("{}. {note}", arrival.line()),
            None => arrival.line(),
        };
        if arrival.rejected > 0 {
            self.error(line.clone());
        } else if arrival.imported > 0 {
            self.info(line.clone());
        } else {
            self.warn(line.clone());
        }
        if self.settings.copy_on_import {
            // The hop: the copy goes straight back up for its recipient, or the status line
            // says loudly why not (and rings itself).
            if let Err(e) = self.hop_after_watch(&report, &line, landed.as_deref()) {
                self.error(format!("Not relayed: {e:#}"));
            }
        }
    }
}
