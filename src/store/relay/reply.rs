//! Composing: a draft reply to a stored message, with the headers a reply should carry.

use rusqlite::params;

use crate::protocol::{self, Envelope, Intent};
use crate::store::{Store, StoreError, StoredMessage, now};

/// Who the desk's reply to `original` is from and to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ReplyParties {
    /// The desk: the operator writes in their own name (see `Config::desk_address`).
    pub from: String,
    /// The other party: the message's sender, or for a follow-up its recipient.
    pub to: String,
    /// Whether `original` is the desk's own message, which the reply follows up.
    pub follow_up: bool,
}

/// Who a reply the desk writes to `original` goes between. Always from `desk`: a reply
/// with `r` (or an ERROR with `E`) is the operator's, and writing it as the message's
/// recipient would put words in the mouth of an AI that never sent them (the banner is what
/// the next window reads as the author). To the message's sender; but a message the desk
/// wrote itself — composed here, or received from the desk's own address (sent from
/// elsewhere and copied back in) — is followed up: the reply goes on to its recipient,
/// rather than from the desk to the desk.
pub(crate) fn reply_parties(original: &StoredMessage, desk: &str) -> ReplyParties {
    let o = &original.envelope;
    let desk = desk.trim();
    let key = crate::store::delivery::address_key;
    let follow_up = original.direction == "composed" || key(&o.banner.from) == key(desk);
    ReplyParties {
        from: desk.to_string(),
        to: if follow_up {
            o.banner.to.clone()
        } else {
            o.banner.from.clone()
        },
        follow_up,
    }
}

/// The envelope that replies to `original`, written by `desk` (see [`reply_parties`] for
/// whom it goes to); thread, session and context kept; `parent` = the original's id; a new
/// message id; `user` as given (the `[compose] user`). Without an `intent`, it follows the
/// message: RESPOND to one that asks for an answer, ACK to one that does not
/// ([`Intent::reply_preset`]). A follow-up to the desk's own message asks again (REQUEST):
/// acknowledging or answering oneself says nothing.
pub fn reply_envelope(
    original: &StoredMessage,
    desk: &str,
    intent: Option<&str>,
    body: &str,
    user: &str,
    message_id: String,
) -> Envelope {
    let o = &original.envelope;
    let parties = reply_parties(original, desk);
    let mut env = Envelope::new(parties.from, parties.to);
    env.banner.version = o.banner.version.clone();
    env.set_header("user", user);
    if let Some(s) = o.session() {
        env.set_header("session", s);
    }
    env.set_header("thread", original.thread.as_str());
    env.set_header("parent", original.id.as_str());
    env.set_header("message", message_id);
    if let Some(c) = o.context() {
        env.set_header("context", c);
    }
    let default = if parties.follow_up {
        Intent::Request
    } else {
        Intent::reply_preset(original.intent.as_deref().map(Intent::parse).as_ref())
    };
    env.set_header("intent", intent.unwrap_or(default.as_str()));
    env.body = Some(body.to_string());
    env.sig = Some("none".into());
    env
}

impl Store {
    /// Stores a draft reply by `desk` to message `parent` (see [`reply_envelope`]) and
    /// returns it.
    pub fn create_reply(
        &mut self,
        parent: &str,
        desk: &str,
        intent: Option<&str>,
        body: &str,
        user: &str,
    ) -> Result<StoredMessage, StoreError> {
        let original = self
            .message(parent)?
            .ok_or_else(|| StoreError::NoMessage(parent.to_string()))?;
        let env = reply_envelope(&original, desk, intent, body, user, self.ids.next_id());
        self.store_composed(&env, "draft")?;
        let id = env.message_key().unwrap_or_default().into_owned();
        self.message(&id)?.ok_or(StoreError::NoMessage(id))
    }

    /// Stores an envelope the operator composed (ids filled) with `status`.
    pub fn store_composed(&mut self, env: &Envelope, status: &str) -> Result<(), StoreError> {
        let time = now();
        let (Some(_), Some(_)) = (env.message(), env.thread()) else {
            return Err(StoreError::Damaged {
                id: env.message().unwrap_or("?").to_string(),
                why: "a composed envelope needs `thread` and `message` ids".into(),
            });
        };
        let canonical = protocol::render(env);
        let diagnostics = protocol::extract(&canonical, &protocol::Options::default())
            .envelopes
            .into_iter()
            .next()
            .map(|p| p.diagnostics)
            .unwrap_or_default();
        self.write(|store| store.insert_composed(env, status, &time, &canonical, &diagnostics))
    }

    fn insert_composed(
        &self,
        env: &Envelope,
        status: &str,
        time: &str,
        canonical: &str,
        diagnostics: &[protocol::Diagnostic],
    ) -> Result<(), StoreError> {
        let (Some(id), Some(thread)) = (env.message_key(), env.thread_key()) else {
            return Ok(());
        };
        let (id, thread, parent) = (&*id, &*thread, env.parent_key());
        let cols = crate::store::texts::HeaderColumns {
            message: Some(id),
            thread: Some(thread),
            parent: parent.as_deref(),
            user: env.user(),
            session: env.session(),
            context: env.context(),
            intent: env.intent_raw(),
        };
        let (headers, meta) = crate::store::envelope_columns(env, &cols);
        let tx = self.begin_write()?;
        tx.execute(
            "INSERT OR IGNORE INTO threads (id, context, created_at, last_activity)
             VALUES (?1, ?2, ?3, ?3)",
            params![thread, env.context(), time],
        )?;
        let operator = crate::store::delivery::operator_addresses(&tx)?;
        let intent = env.intent();
        let ledger = crate::store::delivery::prepare(
            &tx,
            &crate::store::delivery::NewMessage {
                id,
                parent: parent.as_deref(),
                received: false,
                sender: &env.banner.from,
                recipient: &env.banner.to,
                intent: intent.as_ref(),
                meta: &env.meta,
            },
            &operator,
            time,
        )?;
        tx.execute(
            crate::store::writer::INSERT_MESSAGE,
            params![
                id,
                thread,
                parent,
                None::<i64>,
                env.banner.from,
                env.banner.to,
                env.banner.version,
                env.user(),
                env.session(),
                env.context(),
                intent.map(|i| i.to_string()),
                env.intent_raw(),
                env.body,
                env.sig,
                env.hash,
                headers,
                meta,
                serde_json::to_string(diagnostics).unwrap_or_default(),
                // Composed here: no received text, no digest, ids not made on receipt.
                None::<&str>,
                None::<i64>,
                None::<i64>,
                None::<&str>,
                false,
                time,
                ledger.sent_at,
                ledger.recipient_key,
                ledger.to_me,
                ledger.awaiting_from,
                ledger.awaiting_needed,
                ledger.missing_parent,
                ledger.state(),
                false,
                None::<&str>,
                None::<&str>,
                "composed",
                status,
                // Rendered again when read (see `texts`): kept only if that would differ.
                crate::store::texts::kept_canonical(env, canonical),
            ],
        )?;
        let seq = tx.last_insert_rowid();
        ledger.after_insert(&tx, time, thread, seq, true, &env.banner.from)?;
        thread_counts_it(&tx, thread, env, time)?;
        tx.commit()?;
        Ok(())
    }
}

/// Thread `thread` counts the composed message `env` (made at `time`): its activity, its
/// participants (the banner's sender and recipient join), its context when it had none, and
/// it is not archived any more.
fn thread_counts_it(
    tx: &rusqlite::Connection,
    thread: &str,
    env: &Envelope,
    time: &str,
) -> Result<(), StoreError> {
    let participants = [env.banner.from.clone(), env.banner.to.clone()];
    let existing: String = tx.query_row(
        "SELECT participants FROM threads WHERE id = ?1",
        [thread],
        |r| r.get(0),
    )?;
    let mut all: Vec<String> = serde_json::from_str(&existing).unwrap_or_default();
    for p in participants {
        if !all.contains(&p) {
            all.push(p);
        }
    }
    tx.execute(
        "UPDATE threads SET message_count = message_count + 1, last_activity = ?2,
            participants = ?3, context = coalesce(context, ?4), archived_at = NULL
         WHERE id = ?1",
        params![
            thread,
            time,
            serde_json::to_string(&all).unwrap_or_default(),
            env.context()
        ],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const DESK: &str = "human://kalle";

    /// A stored message `from`→`to` of `intent` (`None`: written without one, as v1.0 does),
    /// received or composed.
    fn message(from: &str, to: &str, intent: Option<&str>, direction: &str) -> StoredMessage {
        let mut envelope = Envelope::new(from, to);
        envelope.banner.version = "v1.1".into();
        envelope.set_header("session", "2025-10-09T16Z abc123");
        envelope.set_header("context", "review");
        if let Some(i) = intent {
            envelope.set_header("intent", i);
        }
        StoredMessage {
            id: "01J9J3DBC4N7P2Q3R5S7T9V1V2".into(),
            thread: "01J9J3D3M6A4M3WQX8G1ZQ0S7K".into(),
            parent: None,
            direction: direction.into(),
            status: "received".into(),
            received_at: String::new(),
            arrived_at: String::new(),
            claimed_at: None,
            intent: intent.map(|i| Intent::parse(i).to_string()),
            envelope,
            raw: String::new(),
            canonical: String::new(),
            diagnostics: serde_json::Value::Null,
            depth: 0,
        }
    }

    fn reply(m: &StoredMessage) -> Envelope {
        reply_envelope(
            m,
            DESK,
            None,
            "b",
            "kalle",
            "01J9J3DBC4N7P2Q3R5S7T9V1V3".into(),
        )
    }

    fn banner(e: &Envelope) -> (&str, &str) {
        (e.banner.from.as_str(), e.banner.to.as_str())
    }

    /// A message relayed between two AIs, or addressed to the desk: the reply is the desk's,
    /// to the sender, never in the name of the message's recipient.
    #[test]
    fn a_reply_is_from_the_desk_to_the_sender() {
        for to in ["CHATGPT", DESK, "HUMAN://Kalle"] {
            let m = message("CLAUDE", to, Some("REQUEST"), "received");
            let e = reply(&m);
            assert_eq!(banner(&e), (DESK, "CLAUDE"), "to {to}");
            assert_eq!(e.user(), Some("kalle"));
            assert_eq!(e.parent(), Some(m.id.as_str()));
            assert_eq!(e.thread(), Some(m.thread.as_str()));
            assert_eq!(e.session(), m.envelope.session());
            assert_eq!(e.context(), Some("review"));
            assert_eq!(e.banner.version, "v1.1");
            assert!(!reply_parties(&m, DESK).follow_up);
        }
    }

    /// The intent follows the message: RESPOND to what asks, ACK to what only tells.
    #[test]
    fn the_intent_answers_what_asks_and_acknowledges_the_rest() {
        let cases = [
            (Some("REQUEST"), "RESPOND"),
            (Some("question"), "RESPOND"),
            (Some("POLL"), "RESPOND"),
            (Some("ESCALATE"), "RESPOND"),
            (Some("HANDOFF"), "RESPOND"),
            (None, "RESPOND"),
            (Some("RESPOND"), "ACK"),
            (Some("ACK"), "ACK"),
            (Some("NACK"), "ACK"),
            (Some("ERROR"), "ACK"),
            (Some("BROADCAST"), "ACK"),
            (Some("REVOKE"), "ACK"),
            (Some("CLOSE"), "ACK"),
            (Some("X-CUSTOM"), "ACK"),
        ];
        for (intent, expected) in cases {
            let m = message("CLAUDE", "CHATGPT", intent, "received");
            assert_eq!(
                reply(&m).intent_raw(),
                Some(expected),
                "reply to {intent:?}"
            );
        }
        // An intent given wins.
        let m = message("CLAUDE", "CHATGPT", Some("REQUEST"), "received");
        let e = reply_envelope(&m, DESK, Some("NACK"), "", "kalle", "x".into());
        assert_eq!(e.intent_raw(), Some("NACK"));
    }

    /// The desk's own message — composed here, or received from the desk's address — is
    /// followed up: on to its recipient, still in the desk's name, asking again.
    #[test]
    fn a_follow_up_to_the_desks_own_message_goes_on_to_its_recipient() {
        for (from, direction) in [
            (DESK, "composed"),
            // A draft written as another party (before replies were the desk's): the desk
            // writes the follow-up all the same.
            ("CHATGPT", "composed"),
            (" HUMAN://kalle ", "received"),
        ] {
            let m = message(from, "CLAUDE", Some("RESPOND"), direction);
            let e = reply(&m);
            assert_eq!(banner(&e), (DESK, "CLAUDE"), "{from} {direction}");
            assert_eq!(e.intent_raw(), Some("REQUEST"), "{from} {direction}");
            assert!(reply_parties(&m, DESK).follow_up);
        }
    }
}
