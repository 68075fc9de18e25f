//! How the writer places v1.0 envelopes: what each answers (the last envelope of its session
//! in the input, else the session's latest), the ids made for it on receipt, when it is a
//! stored message already, and the envelopes opening a session held while they may be its end
//! pasted again. The rules are in `v10_place`.

use super::{Run, id_key};
use crate::protocol::Envelope;
use crate::store::StoreError;
use crate::store::import::{ImportItem, Outcome};
use crate::store::prepare::Prepared;
use crate::store::v10_place;

/// What the writer knows of a session met in the input: its last message's id and thread
/// (`None` when another writer may have moved it: read again), and the messages the input
/// gave it so far (stored or found stored), newest last, each with its thread and parties:
/// where a v1.0 reply past a third party's message looks first, before the messages stored
/// before them.
pub(super) struct SessionLast {
    id: String,
    thread: Option<String>,
    recent: std::collections::VecDeque<(String, String, v10_place::Parties)>,
    /// What the stored messages before `recent` answered for a sender (its first name), once
    /// looked up: they do not change while the input is read.
    before: std::collections::HashMap<String, Option<(String, String)>>,
    /// Whether an envelope of the session came in the current piece (see
    /// [`Run::idle_sessions`]).
    touched: bool,
}

/// Where an envelope without named ids goes: its thread (`None`: a thread of its own, named
/// after its message) and the message it answers. Its message id is made only when it is
/// stored: a duplicate needs none.
pub(super) struct Place {
    pub thread: Option<String>,
    pub parent: Option<String>,
}

impl Run<'_> {
    /// Threads and stores one envelope, or holds it while it may be part of a session's end
    /// pasted again (see `v10_place`); its item is in [`Run::items`] at its index either way,
    /// settled by [`Run::finish`] at the latest.
    pub(crate) fn envelope(&mut self, prep: &mut Prepared) -> Result<(), StoreError> {
        let index = self.items.len();
        self.items.push(ImportItem {
            span: prep.parsed.span,
            outcome: Outcome::Duplicate,
            message: None,
            thread: None,
            diagnostics: Vec::new(),
        });
        let session = prep.parsed.envelope.session();
        if let Some((session, mut tail)) = session.and_then(|s| self.tails.remove_entry(s)) {
            match v10_place::by_session(prep) {
                Some((_, base)) => {
                    if tail.push(base, (prep.clone(), index)) {
                        self.tails.insert(session, tail);
                    } else {
                        self.settle(tail)?;
                    }
                    return Ok(());
                }
                // Another kind of envelope of the session ends the tail.
                None => self.settle(tail)?,
            }
        }
        if let Some(item) = self.store_one(prep, index, true)? {
            self.items[index] = item;
        }
        Ok(())
    }

    /// Settles every tail still held: the input has ended. The caller then ends the piece.
    pub(crate) fn finish(&mut self) -> Result<(), StoreError> {
        let mut tails: Vec<v10_place::Tail> = self.tails.drain().map(|(_, t)| t).collect();
        tails.sort_by_key(|t| t.held.first().map(|(_, index)| *index));
        for tail in tails {
            self.settle(tail)?;
        }
        Ok(())
    }

    /// The envelopes of a tail that are stored messages are reported as such; the others are
    /// stored, in input order, each answering the one before it.
    fn settle(&mut self, tail: v10_place::Tail) -> Result<(), StoreError> {
        let settled = tail.settle();
        for (mut prep, index, s) in settled.found {
            self.note_session(&prep.parsed.envelope, &s.id, &s.thread);
            self.items[index] = ImportItem {
                span: prep.parsed.span,
                outcome: Outcome::Duplicate,
                message: Some(s.id),
                thread: Some(s.thread),
                diagnostics: std::mem::take(&mut prep.parsed.diagnostics),
            };
        }
        for (mut prep, index) in settled.new {
            if let Some(item) = self.store_one(&mut prep, index, false)? {
                self.items[index] = item;
            }
        }
        Ok(())
    }

    /// Where an envelope without a named thread or message goes. A v1.0 envelope (no
    /// thread) belongs to its session's conversation and answers the message before it: the
    /// last one of its session in this input, else the session's latest (see `v10_place`);
    /// the first of a session starts a thread. One naming its parent joins the parent's
    /// thread when that is stored.
    pub(super) fn place(&mut self, env: &Envelope) -> Result<Place, StoreError> {
        // The rule `parse` reads the text by too (see `protocol::answers`).
        let before = match crate::protocol::placed_by_session(env) {
            Some(session) => self.before_in_session(session, &env.banner.from)?,
            None => None,
        };
        let parents_thread = match (env.thread(), env.parent_key()) {
            (None, Some(parent)) => self
                .existing("SELECT id, thread_id FROM messages WHERE id = ?1", &parent)?
                .map(|(_, t)| t),
            _ => None,
        };
        let thread = match (env.thread_key(), parents_thread, &before) {
            (Some(t), _, _) => Some(t.into_owned()),
            (None, Some(t), _) => Some(t),
            (None, None, Some((_, t))) => Some(t.clone()),
            (None, None, None) => None,
        };
        let parent = (env.parent_key().map(|p| p.into_owned())).or_else(|| before.map(|b| b.0));
        Ok(Place { thread, parent })
    }

    /// The message id made on receipt for the envelope at `index`, answering `parent`. The
    /// same paste imported again makes the same ids; when its envelope is a new message this
    /// time (the same `Yes.` pasted again under a newer question), the id its first import
    /// made is taken, and the next one derived the same way is used. `first`: that first id,
    /// when it was made already.
    pub(super) fn receipt_message(
        &self,
        index: usize,
        first: Option<String>,
        parent: Option<&str>,
    ) -> Result<String, StoreError> {
        let first = first.unwrap_or_else(|| self.receipt.id(index, "message"));
        debug_assert_eq!(first, self.receipt.id(index, "message"));
        if !self.is_stored(&first)? {
            return Ok(first);
        }
        let after = parent
            .and_then(crate::store::ulid_time)
            .and_then(|t| u64::try_from(t.as_millisecond()).ok());
        for n in 1..=u32::MAX {
            let id = self.receipt.id_after(index, &format!("message {n}"), after);
            if !self.is_stored(&id)? {
                return Ok(id);
            }
        }
        Ok(first)
    }

    /// Whether a message `id` is stored.
    fn is_stored(&self, id: &str) -> Result<bool, StoreError> {
        if (self.stored_ids.as_ref()).is_some_and(|stored| !stored.contains(&id_key(id))) {
            return Ok(false);
        }
        Ok(v10_place::by_id(self.conn, id)?.is_some())
    }

    /// The message the next v1.0 envelope of `session`, from `sender`, answers, with its
    /// thread: the session's latest — the one its last envelope in this input was (known
    /// without a look-up), else the latest stored — unless that is a third party's; then the
    /// latest addressed to `sender` (see `v10_place`): among what this input gave the session,
    /// else among the messages stored before them.
    fn before_in_session(
        &mut self,
        session: &str,
        sender: &str,
    ) -> Result<Option<(String, String)>, StoreError> {
        let names = v10_place::names(sender);
        let known = match self.sessions.get(session) {
            Some(SessionLast {
                id,
                thread: Some(thread),
                recent,
                ..
            }) => {
                debug_assert_eq!(
                    v10_place::by_id(self.conn, id)
                        .ok()
                        .flatten()
                        .map(|s| (s.id, s.thread)),
                    Some((id.clone(), thread.clone())),
                    "the last message of session {session} as stored"
                );
                let answers = recent.back().is_none_or(|(_, _, p)| p.answered_by(&names));
                if answers {
                    return Ok(Some((id.clone(), thread.clone())));
                }
                // Past a third party's: the latest this input gave the session for the sender.
                if let Some((id, thread, _)) =
                    recent.iter().rev().find(|(_, _, p)| p.addressed_to(&names))
                {
                    return Ok(Some((id.clone(), thread.clone())));
                }
                Some((id.clone(), thread.clone()))
            }
            _ => None,
        };
        let latest = match known {
            Some(latest) => latest,
            None => {
                // The first of its session in this input, or its last message moved: read.
                let last = match (self.sessions.get(session), self.idle.get(session)) {
                    (Some(SessionLast { id, .. }), _) | (None, Some(id)) => {
                        v10_place::by_id(self.conn, id)?
                    }
                    (None, None) => None,
                };
                let latest = match last {
                    Some(s) => (s.id, s.thread),
                    None => match v10_place::latest(self.conn, session)? {
                        Some(s) => (s.id, s.thread),
                        None => return Ok(None),
                    },
                };
                let third = v10_place::parties_of(self.conn, &latest.0)?
                    .is_some_and(|p| !p.answered_by(&names));
                if !third {
                    return Ok(Some(latest));
                }
                latest
            }
        };
        // Among the messages stored before those the input gave the session (or up to the
        // latest, when it gave none): looked up once per sender.
        let first_given = self
            .sessions
            .get(session)
            .and_then(|last| last.recent.front().map(|(id, _, _)| id.clone()));
        let (bound, inclusive) = match &first_given {
            Some(first) => (first.clone(), false),
            None => (latest.0.clone(), true),
        };
        let key = names[0].clone();
        if let Some(found) = self
            .sessions
            .get(session)
            .and_then(|last| last.before.get(&key).cloned())
        {
            return Ok(Some(found.unwrap_or(latest)));
        }
        let found = v10_place::addressed_to(self.conn, session, &names, &bound, inclusive)?
            .map(|s| (s.id, s.thread));
        if let Some(last) = self.sessions.get_mut(session) {
            last.before.insert(key, found.clone());
        }
        Ok(Some(found.unwrap_or(latest)))
    }

    /// The stored message (id, thread) a v1.0 envelope of text digest `base` answering
    /// `parent` is, if any (see `v10_place`); `placed` is the digest for that place.
    pub(super) fn v10_stored(
        &self,
        env: &Envelope,
        base: &str,
        parent: Option<&str>,
        placed: &str,
    ) -> Result<Option<(String, String)>, StoreError> {
        let key = id_key(placed);
        if (self.stored_digests.as_ref()).is_none_or(|stored| stored.contains(&key)) {
            if let Some(found) = v10_place::find(self.conn, base, parent, placed)? {
                return Ok(Some(found));
            }
        }
        if self.opens_session(env) {
            return v10_place::first_of_session(self.conn, base);
        }
        Ok(None)
    }

    /// Whether `env` is placed by its session alone and is the first of its session in this
    /// input, with messages stored before: it may be a stored message pasted again. (Into a
    /// database this import began empty, every message of a session was stored by it, after
    /// the session's first envelope.)
    pub(super) fn opens_session(&self, env: &Envelope) -> bool {
        let free = env.thread().is_none() && env.parent().is_none() && env.message().is_none();
        free && self.had_messages
            && env.session().is_some_and(|s| {
                !self.sessions.contains_key(s)
                    && !self.idle.contains_key(s)
                    && !self.tails.contains_key(s)
            })
    }

    /// The envelope `env`, which was (or is stored as) `message` in `thread`, is the last of
    /// its session so far.
    pub(super) fn note_session(&mut self, env: &Envelope, message: &str, thread: &str) {
        let Some(session) = env.session() else {
            return;
        };
        let noted = (
            message.to_string(),
            thread.to_string(),
            v10_place::Parties::of(env),
        );
        match self.sessions.get_mut(session) {
            Some(known) => {
                known.touched = true;
                known.id = message.to_string();
                known.thread = Some(thread.to_string());
                if known.recent.len() == v10_place::LOOK_BACK {
                    known.recent.pop_front();
                    // What was before the input's messages is no longer what is before them.
                    known.before.clear();
                }
                known.recent.push_back(noted);
            }
            None => {
                // An idle session (its last message known, nothing else) is active again, as
                // a forgotten one would be: its other messages are read when needed.
                let key = match self.idle.remove_entry(session) {
                    Some((key, _)) => key,
                    None => session.to_string(),
                };
                self.sessions.insert(
                    key,
                    SessionLast {
                        id: message.to_string(),
                        thread: Some(thread.to_string()),
                        recent: std::collections::VecDeque::from([noted]),
                        before: std::collections::HashMap::new(),
                        touched: true,
                    },
                );
            }
        }
    }

    /// Message `id` moved to `thread`: a session's last message keeps up. Only the active
    /// sessions are looked at (an idle one knows no thread: it reads its last message's), so
    /// this costs what one piece's sessions number, not every session of the input.
    pub(super) fn session_message_moved(&mut self, id: &str, thread: &str) {
        for last in self.sessions.values_mut() {
            if last.id == id {
                last.thread = Some(thread.to_string());
            }
            for (noted, noted_thread, _) in &mut last.recent {
                if noted == id {
                    *noted_thread = thread.to_string();
                }
            }
        }
    }

    /// Another writer may have moved or removed the sessions' last messages: each is read
    /// again when a v1.0 envelope of its session next needs it.
    pub(super) fn forget_session_threads(&mut self) {
        for (session, last) in self.sessions.drain() {
            self.idle.insert(session, last.id);
        }
    }

    /// At a piece's end: the sessions no envelope of the piece came in keep only their last
    /// message's id (which the next envelope of the session answers, and which only this
    /// input knows: a duplicate makes it an older message than the session's latest), and
    /// their thread, recent messages and look-ups are read again if it comes back. An input
    /// of many sessions, each of a few envelopes, so keeps about a hundred bytes per session
    /// instead of its recent messages and their parties (a kilobyte and more), and a moved
    /// message is looked for among one piece's sessions, not among all of them.
    pub(super) fn idle_sessions(&mut self) {
        let idle: Vec<String> = (self.sessions.iter())
            .filter(|(_, last)| !last.touched)
            .map(|(session, _)| session.clone())
            .collect();
        for session in idle {
            if let Some((session, last)) = self.sessions.remove_entry(&session) {
                self.idle.insert(session, last.id);
            }
        }
        for last in self.sessions.values_mut() {
            last.touched = false;
        }
        if self.sessions.capacity() > 4 * self.sessions.len().max(64) {
            self.sessions.shrink_to_fit();
        }
    }
}
