//! The queue view and the relay ledger's side of the app: `Q` lists what is left to relay,
//! answer and chase (rows open their message), `s` filters the thread list by delivery state,
//! `y` on an envelope to relay records it as relayed, and with `[relay] copy_on_import` a
//! paste that adds one envelope for someone else is copied on for its recipient at once.

use crate::app::popups::popup::Popup;
use crate::app::{Action, App, Pane};
use crate::store::{ImportReport, Queue, QueueRow, Section};

/// Rows read per section when the queue opens.
pub(crate) const QUEUE_LIMIT: usize = 200;

/// The open queue.
#[derive(Debug)]
pub struct QueueView {
    /// What the store said when it opened.
    pub queue: Queue,
    /// The selected row, counted over every section's rows.
    pub selected: usize,
}

impl QueueView {
    /// Every row with its section, in order.
    pub fn rows(&self) -> Vec<(Section, &QueueRow)> {
        self.queue.rows().collect()
    }
}

impl App {
    /// `Q`: opens the queue.
    pub(in crate::app) fn open_queue(&mut self) -> anyhow::Result<()> {
        let queue = self.store.queue(QUEUE_LIMIT)?;
        if queue.rows().next().is_none() {
            self.info("The queue is empty: nothing to relay, answer or chase.");
        }
        self.popup = Some(Popup::Queue(QueueView { queue, selected: 0 }));
        Ok(())
    }

    /// Keys in the queue: move, open a row, settle it or undo that (see `settle`), close.
    pub(in crate::app) fn queue_action(&mut self, action: Action) -> anyhow::Result<()> {
        let Some(Popup::Queue(view)) = self.popup.as_mut() else {
            return Ok(());
        };
        let len = view.queue.rows().count();
        let page =
            crate::app::panes::layout::popup_page(crate::app::panes::layout::queue_area(self.size));
        match action {
            a if crate::app::panes::list_move::is_move(&a) => {
                view.selected = crate::app::panes::list_move::select(view.selected, len, &a, page)
                    .unwrap_or(view.selected);
            }
            Action::Open => {
                let Some(row) = view.queue.rows().nth(view.selected).map(|(_, r)| r.clone()) else {
                    return Ok(());
                };
                self.popup = None;
                if row.unsent_draft {
                    let draft = self
                        .store
                        .drafts()?
                        .into_iter()
                        .find(|d| d.id == row.message);
                    return match draft {
                        Some(d) => self.resume_draft(&d),
                        None => {
                            self.warn("That draft is gone (sent or discarded meanwhile).");
                            Ok(())
                        }
                    };
                }
                self.list.state = crate::store::StateFilter::All;
                self.reveal(&row.thread, Some(&row.message))?;
                self.focus = Pane::Tree;
            }
            Action::Done => return self.settle_selected(crate::store::Settled::Done),
            Action::Dismiss => return self.settle_selected(crate::store::Settled::Dismissed),
            Action::Undo => return self.undo_settle(),
            _ => {}
        }
        Ok(())
    }

    /// `s`: the thread list shows the threads of the next delivery state.
    pub(in crate::app) fn cycle_state_filter(&mut self) -> anyhow::Result<()> {
        self.list.state = self.list.state.next();
        self.list.refilter(&self.store)?;
        self.focus = Pane::List;
        self.open_selected_thread(false)?;
        let what = match self.list.state {
            crate::store::StateFilter::All => "all threads".to_string(),
            crate::store::StateFilter::Only(s) => format!("threads with messages {}", s.title()),
            crate::store::StateFilter::Archived => "archived threads".to_string(),
        };
        let shown = match self.list.counts {
            Some((shown, all)) => format!("{shown} of {all}"),
            None => self.list.rows.len().to_string(),
        };
        self.info(format!("Showing {what} ({shown})."));
        Ok(())
    }

    /// After `y` copied message `id`: when it was waiting to be relayed, records that it was,
    /// and how. Returns the words to add to the status line.
    pub(in crate::app) fn record_relay(&mut self, id: &str) -> anyhow::Result<Option<String>> {
        let Some(method) = self.last_copy else {
            return Ok(None);
        };
        if !self.store.mark_relayed(id, &method.to_string())? {
            return Ok(None);
        }
        self.relay_recorded(id)?;
        Ok(Some(format!("relayed ({method})")))
    }

    /// After message `id` was copied for the window of `to` (its recipient, or one of a
    /// POLL's targets): records that it went there, and how. Returns whether the ledger took
    /// anything new (it was waiting to be relayed; that target had not had it).
    pub(in crate::app) fn record_relay_to(&mut self, id: &str, to: &str) -> anyhow::Result<bool> {
        let Some(method) = self.last_copy else {
            return Ok(false);
        };
        if !(self.store.mark_relayed_to(id, to, &method.to_string())?).newly {
            return Ok(false);
        }
        self.relay_recorded(id)?;
        Ok(true)
    }

    /// The ledger changed for message `id`: what shows it is read again.
    fn relay_recorded(&mut self, id: &str) -> anyhow::Result<()> {
        self.delivery = self.store.delivery(id)?;
        self.list.reload(&self.store)?;
        // The thread is read again for its markers (a conflicting version on show stays
        // shown: see `versions_selected`).
        if let Some(t) = self.tree.as_ref().map(|t| t.outline.id.clone()) {
            self.load_thread(&t, Some(id))?;
        }
        Ok(())
    }

    /// The text a copy of stored message `m` carries (see [`crate::store::Store::relay_text`]).
    /// And whether this desk's audit hop went into it.
    pub(in crate::app) fn relay_text(
        &self,
        m: &crate::store::StoredMessage,
    ) -> anyhow::Result<(String, bool)> {
        Ok(self
            .store
            .relay_text_and_hop(m, self.settings.audit_by.as_deref(), self.now)?)
    }

    /// With `[relay] copy_on_import`: after a paste's import, puts its one new envelope for
    /// someone else up for its recipient, as a watched copy is (the same decision and the
    /// same text, see [`crate::store::Store::hop_decision`]), and says why not otherwise.
    /// Returns the words to add to the status line.
    pub(in crate::app) fn copy_after_import(
        &mut self,
        report: &ImportReport,
    ) -> anyhow::Result<String> {
        use crate::app::relay::hop::Taken;
        Ok(match self.take_hop(report)? {
            Taken::Nothing => String::new(),
            Taken::Refused(why) => format!(" Not relayed: {why}."),
            Taken::Waiting { n, first } => format!(
                " Not relayed: {n} new envelopes for others; > puts up the first (for {first}), then the next."
            ),
            Taken::Ready(Some(line)) => format!(" {line}."),
            Taken::Ready(None) => format!(" Not relayed: {}", self.status.1),
        })
    }
}

/// The inspector's delivery line: when the message arrived (or was sent), the time it claims
/// where that differs, what is left to do with it, and how it was relayed or settled.
pub(crate) fn delivery_text(
    m: &crate::store::StoredMessage,
    d: &crate::store::Delivery,
    now: jiff::Timestamp,
) -> String {
    use crate::app::text::{age, claim_time, relay_words, short_time};
    // A time ahead of this clock (a clock set wrong, a history replayed) is no age.
    let ahead =
        (d.sent_at.parse::<jiff::Timestamp>()).is_ok_and(|t| t.as_second() > now.as_second() + 60);
    let when = if ahead {
        "ahead of this clock".to_string()
    } else {
        format!("{} ago", age(&d.sent_at, now))
    };
    let verb = match (m.direction.as_str(), m.status.as_str()) {
        ("composed", "draft") => "written",
        ("composed", _) => "sent",
        _ => "received",
    };
    let mut head = format!("{verb} {} ({when})", short_time(&d.sent_at));
    if m.direction == "composed" && m.status == "draft" {
        head.push_str(", not sent yet");
    }
    let mut parts = vec![head];
    if let Some(claim) = claim_of(m) {
        let seen = d.sent_at.parse::<jiff::Timestamp>().ok();
        if seen.is_some_and(|seen| crate::protocol::claim::differs(seen, &claim)) {
            let source = match claim.source {
                crate::protocol::claim::ClaimSource::MessageId => "",
                crate::protocol::claim::ClaimSource::Session => " (its session)",
            };
            parts.push(format!(
                "claims {}{source}",
                claim_time(&claim.at, &d.sent_at)
            ));
        }
    }
    match d.state.as_deref() {
        Some("to_relay") => parts.push("⇢ to relay (y)".into()),
        Some("to_me") => parts.push("✉ to you (r answers)".into()),
        Some("awaiting") => {
            let mut s = format!("⏳ awaiting {}", d.awaiting_from.join(", "));
            if let Some(n) = d.awaiting_needed.filter(|n| *n > 1) {
                s.push_str(&format!(" ({n} answers needed)"));
            }
            parts.push(s);
        }
        _ => {}
    }
    let carried = crate::store::Carried::of_targets(&d.targets);
    match &d.relayed {
        // A POLL goes to each of its targets: how far it went.
        _ if carried.of > 1 && carried.to > 0 => parts.push(targets_words(m, d, carried, now)),
        Some((at, how)) => parts.push(relay_words(at, how, now)),
        None => {}
    }
    if let Some((at, how)) = &d.settled {
        parts.push(match how.as_str() {
            "recorded" => "a record of the desk's (needs no sending)".to_string(),
            _ => format!("{how} by hand {} ago", age(at, now)),
        });
    }
    if d.missing_parent {
        parts.push("⚠ its parent was never received (a missed relay)".into());
    }
    parts.join(" · ")
}

/// How far a POLL went to its targets (`carried`, some at least): "relayed to 2 of 3 targets
/// (not yet: gemini://g)", "relayed to all 3 targets, the last 2m ago by OSC 52"; for one
/// composed here, "copied for …".
fn targets_words(
    m: &crate::store::StoredMessage,
    d: &crate::store::Delivery,
    carried: crate::store::Carried,
    now: jiff::Timestamp,
) -> String {
    let verb = if m.direction == "composed" {
        "copied for"
    } else {
        "relayed to"
    };
    if carried.to < carried.of {
        let left: Vec<&str> = (d.targets.iter())
            .filter(|t| t.relayed.is_none())
            .map(|t| t.target.as_str())
            .collect();
        // Relayed as a whole (before its targets were counted, or delivered in one go).
        if let Some((at, how)) = d.relayed.as_ref().filter(|_| m.direction != "composed") {
            return crate::app::text::relay_words(at, how, now);
        }
        return format!(
            "{verb} {} of {} targets (not yet: {})",
            carried.to,
            carried.of,
            left.join(", ")
        );
    }
    let last = (d.targets.iter())
        .filter_map(|t| t.relayed.as_ref())
        .max_by(|a, b| a.0.cmp(&b.0));
    match last {
        Some((at, how)) => {
            let when = crate::app::text::relay_words(at, how, now);
            let when = when.strip_prefix("relayed ").unwrap_or(&when);
            format!("{verb} all {} targets, the last {when}", carried.of)
        }
        None => format!("{verb} all {} targets", carried.of),
    }
}

/// The time `m` claims for itself (its sender's id, else its session), for a received message:
/// what the desk wrote itself claims nothing it did not see.
fn claim_of(m: &crate::store::StoredMessage) -> Option<crate::protocol::claim::Claim> {
    if m.direction == "composed" {
        return None;
    }
    let id_time = m.claimed_at.as_deref().and_then(|t| t.parse().ok());
    crate::protocol::claim::claim(id_time, m.envelope.session())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::StoredMessage;

    fn message(
        direction: &str,
        status: &str,
        claimed: Option<&str>,
        session: &str,
    ) -> StoredMessage {
        let mut envelope = crate::protocol::Envelope::new("A", "B");
        envelope.set_header("session", session);
        StoredMessage {
            id: "m".into(),
            thread: "t".into(),
            parent: None,
            direction: direction.into(),
            status: status.into(),
            received_at: String::new(),
            arrived_at: String::new(),
            claimed_at: claimed.map(str::to_string),
            intent: None,
            envelope,
            raw: String::new(),
            canonical: String::new(),
            diagnostics: serde_json::Value::Null,
            depth: 0,
        }
    }

    /// A message whose time is ahead of this clock is not said to be "0s ago".
    #[test]
    fn a_time_ahead_of_the_clock_is_said_so() {
        let now: jiff::Timestamp = "2026-11-24T12:00:00Z".parse().unwrap();
        let at = |sent_at: &str| crate::store::Delivery {
            sent_at: sent_at.into(),
            ..Default::default()
        };
        let sent = message("composed", "awaiting_reply", None, "");
        assert_eq!(
            delivery_text(&sent, &at("2026-11-24T11:58:00Z"), now),
            "sent 2026-11-24 11:58 (2m ago)"
        );
        assert_eq!(
            delivery_text(&sent, &at("2026-11-24T13:05:00Z"), now),
            "sent 2026-11-24 13:05 (ahead of this clock)"
        );
    }

    /// A received message says when it arrived, and what its id or session claims only when
    /// that differs by more than a minute.
    #[test]
    fn received_says_when_and_a_claim_beside_it_where_it_differs() {
        let now: jiff::Timestamp = "2026-12-01T22:00:00Z".parse().unwrap();
        let d = crate::store::Delivery {
            sent_at: "2026-12-01T21:49:00Z".into(),
            ..Default::default()
        };
        let m = message(
            "received",
            "received",
            Some("2026-12-01T21:40:00Z"),
            "2026-12-01T21Z x",
        );
        assert_eq!(
            delivery_text(&m, &d, now),
            "received 2026-12-01 21:49 (11m ago) · claims 21:40"
        );
        let close = message("received", "received", Some("2026-12-01T21:48:30Z"), "");
        assert_eq!(
            delivery_text(&close, &d, now),
            "received 2026-12-01 21:49 (11m ago)"
        );
        let old = message("received", "received", Some("2024-10-06T23:42:00Z"), "");
        assert!(delivery_text(&old, &d, now).ends_with("claims 2024-10-06 23:42"));
        // A v1.0 envelope: its session claims the hour it began, no later than it arrived.
        let v10 = message("received", "received", None, "2026-12-02T09Z abc");
        assert!(delivery_text(&v10, &d, now).contains("claims 2026-12-02 09:00 (its session)"));
        let fine = message("received", "received", None, "2026-12-01T16Z abc");
        assert!(!delivery_text(&fine, &d, now).contains("claims"));
    }
}
