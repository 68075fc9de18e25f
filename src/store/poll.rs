//! POLL collation over the store: a POLL and the replies naming it, gathered for the pure
//! tally in [`crate::protocol::poll`], and the envelopes that close a poll, stored in its
//! thread like any composed message.

use super::{Store, StoreError, StoredMessage, message_time};
use crate::protocol::poll::{self, PollReply, Tally};
use crate::protocol::{Envelope, Intent};

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
            let time = crate::protocol::validate::parse_time(&message_time(&m.id, &m.received_at));
            replies.push(PollReply {
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

    /// Closes the poll: stores (as composed drafts in its thread) an E-TIMEOUT ERROR for each
    /// silent target and the CLOSE with the tally. The caller checks [`poll::can_close`].
    pub fn close_poll(&mut self, view: &PollView) -> Result<ClosedPoll, StoreError> {
        let errors = poll::timeout_envelopes(&view.poll.envelope, &view.tally, &self.ids);
        let mut result = poll::result_envelope(&view.poll.envelope, &view.tally, &self.ids);
        // The stored POLL's thread, whatever its envelope says (a fresh id or a v1.0 POLL).
        let fix = |env: &mut Envelope| {
            env.set_header("thread", view.poll.thread.as_str());
            env.set_header("parent", view.poll.id.as_str());
        };
        let mut errors = errors;
        for e in &mut errors {
            fix(e);
            self.store_composed(e, "draft")?;
        }
        fix(&mut result);
        self.store_composed(&result, "draft")?;
        Ok(ClosedPoll { errors, result })
    }
}
