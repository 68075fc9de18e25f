//! POLL collation over the store: a POLL and the replies naming it, gathered for the pure
//! tally in [`crate::protocol::poll`], and the envelopes that close a poll, stored in its
//! thread like any composed message.

use crate::protocol::poll::{self, PollReply, Tally};
use crate::protocol::{Envelope, Intent};
use crate::store::{Store, StoreError, StoredMessage};

/// What an id or the first characters of one name among stored messages.
#[derive(Debug, Clone)]
pub enum MessageMatch {
    /// Exactly one message.
    One(Box<StoredMessage>),
    /// No message.
    None,
    /// Several messages start with the prefix (their ids, a few).
    Many(Vec<String>),
}

/// A POLL with its tally.
#[derive(Debug, Clone)]
pub struct PollView {
    /// The POLL.
    pub poll: StoredMessage,
    /// Its tally at the time asked for.
    pub tally: Tally,
}

/// What closing a poll wrote: one E-TIMEOUT ERROR per silent target, then the CLOSE.
#[derive(Debug, Clone)]
pub struct ClosedPoll {
    /// The E-TIMEOUT ERRORs, in target order.
    pub errors: Vec<Envelope>,
    /// The CLOSE with the tally, for all participants.
    pub result: Envelope,
}

impl Store {
    /// The message with id `id`, else the one message whose id starts with it.
    pub fn find_message(&self, id: &str) -> Result<MessageMatch, StoreError> {
        let id = id.trim();
        if let Some(m) = self.message(id)? {
            return Ok(MessageMatch::One(Box::new(m)));
        }
        let found = self.ids_with_prefix(id, 5)?;
        Ok(match found.messages.as_slice() {
            [] => MessageMatch::None,
            [(one, _)] => match self.message(one)? {
                Some(m) => MessageMatch::One(Box::new(m)),
                None => MessageMatch::None,
            },
            many => MessageMatch::Many(many.iter().map(|(m, _)| m.clone()).collect()),
        })
    }

    /// Every stored reply naming message `id` as its parent, as the tally reads them.
    pub fn poll_replies(&self, id: &str) -> Result<Vec<PollReply>, StoreError> {
        let ids: Vec<String> = self
            .conn
            .prepare_cached("SELECT id FROM messages WHERE parent_id = ?1 ORDER BY seq")?
            .query_map([id], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        let mut replies = Vec::with_capacity(ids.len());
        for rid in ids {
            let Some(m) = self.message(&rid)? else {
                continue;
            };
            // When it arrived: a vote counts by what the desk saw, not the time in its id.
            let time = crate::protocol::validate::parse_time(&m.arrived_at);
            replies.push(PollReply {
                by_desk: m.direction == "composed",
                intent: m.envelope.intent(),
                sender: m.envelope.banner.from.clone(),
                body: m.envelope.body.clone().unwrap_or_default(),
                meta: m.envelope.meta,
                time,
                id: m.id,
            });
        }
        Ok(replies)
    }

    /// The tally of POLL `message` at `now`; `None` when `message` is not a POLL.
    pub fn poll_view(
        &self,
        message: StoredMessage,
        now: jiff::Timestamp,
    ) -> Result<Option<PollView>, StoreError> {
        if message.envelope.intent() != Some(Intent::Poll) {
            return Ok(None);
        }
        let replies = self.poll_replies(&message.id)?;
        Ok(
            poll::tally(&message.envelope, &replies, now).map(|tally| PollView {
                poll: message,
                tally,
            }),
        )
    }

    /// The envelopes that close the poll, written by the desk (`desk`, the operator's
    /// address): an E-TIMEOUT ERROR for each silent target and the CLOSE with the tally, in
    /// the stored POLL's thread, answering it. Nothing is stored: the caller signs them when
    /// `[signing]` says so, then files them with [`Store::file_closing`]. The caller checks
    /// [`poll::can_close`].
    pub fn poll_closing(&self, view: &PollView, desk: &str) -> ClosedPoll {
        let mut errors = poll::timeout_envelopes(&view.poll.envelope, &view.tally, &self.ids, desk);
        let mut result = poll::result_envelope(&view.poll.envelope, &view.tally, &self.ids, desk);
        // The stored POLL's thread, whatever its envelope says (a fresh id or a v1.0 POLL).
        let fix = |env: &mut Envelope| {
            env.set_header("thread", view.poll.thread.as_str());
            env.set_header("parent", view.poll.id.as_str());
        };
        for e in &mut errors {
            fix(e);
        }
        fix(&mut result);
        ClosedPoll { errors, result }
    }

    /// Files the envelopes that close a poll in its thread: each E-TIMEOUT as a record (written
    /// here, needing no sending, so not among the drafts; `y` still copies it), the CLOSE as a
    /// composed message to be copied for all participants.
    pub fn file_closing(&mut self, closed: &ClosedPoll) -> Result<(), StoreError> {
        for e in &closed.errors {
            self.store_composed(e, "draft")?;
            if let Some(id) = e.message() {
                self.settle(id, crate::store::Settled::Recorded)?;
            }
        }
        self.store_composed(&closed.result, "draft")?;
        for env in closed.errors.iter().chain([&closed.result]) {
            let signed = env
                .sig
                .as_deref()
                .is_some_and(|s| !s.eq_ignore_ascii_case("none"));
            if let (true, Some(id)) = (signed, env.message()) {
                self.judge_message(id)?;
            }
        }
        Ok(())
    }
}
