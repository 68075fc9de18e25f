//! Composing: a draft reply to a stored message, with the headers a reply should carry.

use rusqlite::params;

use super::{Store, StoreError, StoredMessage, now};
use crate::protocol::{self, Envelope, Intent};

/// The envelope that replies to `original`: direction swapped; thread, session and context
/// kept; `parent` = the original's id; a new message id; RESPOND when the original asked for
/// an answer (REQUEST, POLL, ESCALATE, HANDOFF), otherwise REQUEST unless `intent` says.
/// A follow-up to a message the operator composed keeps its direction (and asks, as its
/// default intent): swapping it would write the operator's next envelope in the other
/// party's name.
pub fn reply_envelope(
    original: &StoredMessage,
    intent: Option<&str>,
    body: &str,
    user: &str,
    message_id: String,
) -> Envelope {
    let o = &original.envelope;
    let own = original.direction == "composed";
    let (from, to) = if own {
        (o.banner.from.clone(), o.banner.to.clone())
    } else {
        (o.banner.to.clone(), o.banner.from.clone())
    };
    let mut env = Envelope::new(from, to);
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
    let default = match original.intent.as_deref().map(Intent::parse) {
        Some(i) if i.expects_response() && !own => "RESPOND",
        _ => "REQUEST",
    };
    env.set_header("intent", intent.unwrap_or(default));
    env.body = Some(body.to_string());
    env.sig = Some("none".into());
    env
}

impl Store {
    /// Stores a draft reply to message `parent` and returns it.
    pub fn create_reply(
        &mut self,
        parent: &str,
        intent: Option<&str>,
        body: &str,
        user: &str,
    ) -> Result<StoredMessage, StoreError> {
        let original = self
            .message(parent)?
            .ok_or_else(|| StoreError::NoMessage(parent.to_string()))?;
        let env = reply_envelope(&original, intent, body, user, self.ids.next_id());
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
        let cols = super::texts::HeaderColumns {
            message: Some(id),
            thread: Some(thread),
            parent: parent.as_deref(),
            user: env.user(),
            session: env.session(),
            context: env.context(),
            intent: env.intent_raw(),
        };
        let (headers, meta) = super::envelope_columns(env, &cols);
        let participants = [env.banner.from.clone(), env.banner.to.clone()];
        let tx = self.begin_write()?;
        tx.execute(
            "INSERT OR IGNORE INTO threads (id, context, created_at, last_activity)
             VALUES (?1, ?2, ?3, ?3)",
            params![thread, env.context(), time],
        )?;
        let operator = super::delivery::operator_addresses(&tx)?;
        let intent = env.intent();
        let ledger = super::delivery::prepare(
            &tx,
            &super::delivery::NewMessage {
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
            "INSERT INTO messages (id, thread_id, parent_id, direction, status, sender, recipient,
                version, user, session, context, intent, intent_raw, body, sig, hash, headers,
                meta, diagnostics, canonical, received_at, sent_at, recipient_key, to_me,
                awaiting_from, awaiting_needed, missing_parent, ledger_state)
             VALUES (?1, ?2, ?3, 'composed', ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14,
                ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27)",
            params![
                id,
                thread,
                parent,
                status,
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
                // Rendered again when read (see `texts`): kept only if that would differ.
                super::texts::kept_canonical(env, canonical),
                time,
                ledger.sent_at,
                ledger.recipient_key,
                ledger.to_me,
                ledger.awaiting_from,
                ledger.awaiting_needed,
                ledger.missing_parent,
                ledger.state(),
            ],
        )?;
        let seq = tx.last_insert_rowid();
        ledger.after_insert(&tx, time, thread, seq, true)?;
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
        tx.commit()?;
        Ok(())
    }
}
