//! Deliveries straight to a contact, under way: `y`, C-y, the hop and a POLL's round for a
//! contact that takes envelopes by a way of its own ([`crate::transport::route::Direct`]: over
//! HTTP) start one instead of copying, and the tick steps each until its answer is recorded,
//! saying on the status line what came of it. The app knows no way of delivery by name: what
//! each does and says is its route module's.

use crate::app::text::safe_line;
use crate::app::{App, Level};
use crate::store::StoredMessage;
use crate::transport::route::{Carrier, Route, Step, UnderWay};

/// A delivery under way, with the thread its message is in (selected when it ends).
pub struct Sending {
    thread: String,
    delivery: Box<dyn UnderWay>,
}

impl App {
    /// When `to`'s contact takes envelopes straight ([`Route::Direct`]), starts delivering
    /// `m` to it, says so, and keeps the delivery for the tick; returns what it said, for a
    /// caller that says more. `None`: the route is a chat window (so is any with `primer`,
    /// the first envelope of a conversation), and the caller copies.
    pub(in crate::app) fn deliver_direct(
        &mut self,
        m: &StoredMessage,
        to: &str,
        primer: bool,
    ) -> anyhow::Result<Option<String>> {
        let delivery = {
            let carrier = self.carrier(primer);
            match carrier.route(to) {
                Route::Direct(direct) => direct.start(&self.store, m, to, &carrier)?,
                Route::Window => return Ok(None),
            }
        };
        let started = safe_line(&delivery.started()).into_owned();
        self.info(format!("{started}…"));
        self.under_way.push(Sending {
            thread: m.thread.clone(),
            delivery,
        });
        Ok(Some(started))
    }

    /// How this desk carries an envelope now: the address book, the audit name, `[send]
    /// retry_for`; with `primer`, the first envelope of a conversation, after the primer.
    pub(in crate::app) fn carrier(&self, primer: bool) -> Carrier<'_> {
        Carrier {
            book: &self.contacts,
            audit_by: self.settings.audit_by.as_deref(),
            now: self.now,
            primer,
            retry_for: std::time::Duration::from_secs(self.settings.send.retry_for),
        }
    }

    /// Whether a delivery is under way (the runtime then ticks more often).
    pub fn delivering(&self) -> bool {
        !self.under_way.is_empty()
    }

    /// On the tick: steps each delivery under way, saying what it found and selecting the
    /// message of one that ended.
    pub(in crate::app) fn step_deliveries(&mut self) {
        let mut still = Vec::new();
        let opts = self.settings.options.clone();
        for mut s in std::mem::take(&mut self.under_way) {
            loop {
                match s.delivery.step(&mut self.store, &opts) {
                    Ok(Step::UnderWay) => {
                        still.push(s);
                        break;
                    }
                    Ok(Step::Note(line)) => self.info(safe_line(&line).into_owned()),
                    Ok(Step::Done(done)) => {
                        let message = s.delivery.message().to_string();
                        if done.recorded {
                            let _ = self.reveal(&s.thread, Some(&message));
                        }
                        let level = if done.delivered {
                            Level::Info
                        } else {
                            Level::Error
                        };
                        self.set_status((level, safe_line(&done.line).into_owned()));
                        break;
                    }
                    // The database is busy: recorded on a later tick.
                    Err(e) if e.is_busy() => {
                        still.push(s);
                        break;
                    }
                    Err(e) => {
                        self.error(format!(
                            "Delivered to {}, but not recorded: {e}",
                            safe_line(s.delivery.to())
                        ));
                        break;
                    }
                }
            }
        }
        self.under_way = still;
    }
}
