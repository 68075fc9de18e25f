//! Reading the history: thread lists, thread trees, single messages, full-text search.

use rusqlite::{OptionalExtension, Row};
use serde::Serialize;

use super::texts::{self, HeaderColumns, RawEdit};
use crate::protocol::{self, Banner, Envelope};
use crate::store::{Store, StoreError};

/// A thread as the list shows it.
#[derive(Debug, Clone, Serialize)]
pub struct ThreadSummary {
    /// Thread id.
    pub id: String,
    /// The first context seen in the thread.
    pub context: Option<String>,
    /// Senders and recipients, in order of appearance.
    pub participants: Vec<String>,
    /// Messages in the thread.
    pub message_count: i64,
    /// When a message last arrived or was composed (RFC 3339).
    pub last_activity: String,
    /// Whether a message copied out is still waiting for its reply.
    pub awaiting_reply: bool,
    /// Since when the oldest such message has waited (RFC 3339).
    pub awaiting_since: Option<String>,
    /// When the operator archived it (the list leaves it out until something new arrives).
    pub archived_at: Option<String>,
}

/// One stored message with its envelope.
#[derive(Debug, Clone, Serialize)]
pub struct StoredMessage {
    /// Message id.
    pub id: String,
    /// Thread id.
    pub thread: String,
    /// The message it answers, which may not have arrived yet.
    pub parent: Option<String>,
    /// `received` or `composed`.
    pub direction: String,
    /// `draft`, `awaiting_reply`, `sent` (copied out, awaiting no reply), `answered` or
    /// `received`.
    pub status: String,
    /// When it was stored: arrived, or filed by the operator (RFC 3339).
    pub received_at: String,
    /// When it arrived at this desk (received), or was sent from it (composed: copied or
    /// delivered; until then when it was filed), RFC 3339: the time every view shows and
    /// every deadline is judged by.
    pub arrived_at: String,
    /// The time its sender claims for it: that of its message id when the sender wrote a
    /// ULID of a plausible time (not one made here on receipt), RFC 3339. Shown beside
    /// `arrived_at` where they differ (see `protocol::claim`), never acted on.
    pub claimed_at: Option<String>,
    /// The normalized intent.
    pub intent: Option<String>,
    /// The envelope, ids filled in.
    #[serde(skip)]
    pub envelope: Envelope,
    /// The envelope as received (transport wrapping undone).
    #[serde(skip)]
    pub raw: String,
    /// The canonical form.
    #[serde(skip)]
    pub canonical: String,
    /// Diagnostics found on receipt, as `parse --json` reports them.
    pub diagnostics: serde_json::Value,
    /// Depth in the thread tree (0 for a root); set when a thread is loaded.
    pub depth: usize,
}

/// A thread with its messages in tree order: parents before children, siblings by arrival.
#[derive(Debug, Clone, Serialize)]
pub struct ThreadView {
    /// Thread id.
    pub id: String,
    /// The thread's context.
    pub context: Option<String>,
    /// Messages in tree order.
    pub messages: Vec<StoredMessage>,
}

impl ThreadView {
    /// Every envelope as it goes on ([`StoredMessage::carried`]), tree order, a blank line
    /// between them: what copying a thread carries.
    pub fn carried_text(&self) -> String {
        self.joined(StoredMessage::carried)
    }

    /// Every envelope as a backup keeps it ([`StoredMessage::exported`]), tree order, a blank
    /// line between them: what `export` writes.
    pub fn exported_text(&self) -> String {
        self.joined(StoredMessage::exported)
    }

    fn joined(&self, text: fn(&StoredMessage) -> String) -> String {
        let parts: Vec<String> = self.messages.iter().map(text).collect();
        let parts: Vec<&str> = parts.iter().map(|t| t.trim_end()).collect();
        format!("{}\n", parts.join("\n\n"))
    }
}

impl StoredMessage {
    /// The text a backup keeps of this envelope (what `export` writes): the text it goes on
    /// in ([`carried`](Self::carried)), but where that is the canonical form and the envelope
    /// holds text that Unicode normalization changes (a body written with combining accents
    /// is kept as written), that text as written, so that importing the backup gives back
    /// the same bytes. Only ever a text whose NFC form is the canonical one: anything else
    /// (a canonical text kept because the columns would not render to it) is written as is.
    pub fn exported(&self) -> String {
        let carried = self.carried();
        if carried != self.canonical || !protocol::render::holds_unnormalized(&self.envelope) {
            return carried;
        }
        [
            protocol::render::BodyKey::Body,
            protocol::render::BodyKey::Response,
        ]
        .into_iter()
        .map(|key| protocol::render::render_as_written(&self.envelope, key))
        .find(|written| protocol::render::nfc(written) == self.canonical)
        .unwrap_or(carried)
    }

    /// The text this envelope goes on in (a copy, a file, a mail, a POST): its canonical
    /// form, unless that would change what its signature or hash covers; then the envelope
    /// as received, which still verifies (see [`crate::protocol::carry`]).
    pub fn carried(&self) -> String {
        // Nothing covers the text of an envelope with neither: no need to read it again.
        let sig = self.envelope.sig.as_deref().map(str::trim);
        let signed = sig.is_some_and(|s| !s.is_empty() && !s.eq_ignore_ascii_case("none"));
        if !signed && self.envelope.hash.is_none() {
            return self.canonical.clone();
        }
        crate::protocol::carry::carried(&self.raw, &self.canonical, None)
    }
}

/// A message's status as read (the SQL of its column in [`MESSAGE_COLUMNS`] and the tree's
/// rows): as stored, but a message copied out that awaits no reply (a RESPOND, ACK or ERROR
/// the operator wrote; its ledger's `awaiting_from` says so) reads `sent`. Every copied
/// message is stored `awaiting_reply`, which the column's `CHECK` allows and which the
/// import's "answered" marks follow; saying it of one that asks for nothing misled scripts.
macro_rules! status_sql {
    () => {
        "CASE WHEN status = 'awaiting_reply' AND awaiting_from IS NULL THEN 'sent' \
         ELSE status END"
    };
}
pub(super) use status_sql;

pub(in crate::store) const MESSAGE_COLUMNS: &str = concat!(
    "id, thread_id, parent_id, direction, ",
    status_sql!(),
    ", received_at, intent, sender, recipient, version, headers, meta, body, sig, hash, raw, \
     canonical, diagnostics, raw_prefix, raw_suffix, user, session, context, intent_raw, \
     sent_at, ids_assigned"
);

/// How many columns [`MESSAGE_COLUMNS`] selects: a query selecting more after them reads
/// those from this index on.
pub(in crate::store) const MESSAGE_COLUMN_COUNT: usize = 26;

/// A message row read with [`MESSAGE_COLUMNS`] (an error inside when its stored encodings
/// cannot be read).
pub(in crate::store) fn message_from_row(
    r: &Row<'_>,
) -> rusqlite::Result<Result<StoredMessage, StoreError>> {
    let id: String = r.get(0)?;
    let thread = r.get_ref(1)?.as_str()?;
    let parent: Option<String> = r.get(2)?;
    // The JSON columns are parsed where SQLite holds them, not copied out first.
    let headers = r.get_ref(10)?.as_str()?;
    let meta = r.get_ref(11)?.as_str()?;
    let diagnostics = r.get_ref(17)?.as_str()?;
    let cols = HeaderColumns {
        message: Some(&id),
        thread: Some(thread),
        parent: parent.as_deref(),
        user: r.get_ref(20)?.as_str_or_null()?,
        session: r.get_ref(21)?.as_str_or_null()?,
        context: r.get_ref(22)?.as_str_or_null()?,
        intent: r.get_ref(23)?.as_str_or_null()?,
    };
    let decoded = (|| -> Result<_, String> {
        let headers = texts::parse_headers(headers, &cols)?;
        let meta = super::meta_column::parse(meta)?;
        // Most messages have no diagnostics: skip the parser for the empty list.
        let diagnostics = if diagnostics == "[]" {
            serde_json::Value::Array(Vec::new())
        } else {
            serde_json::from_str(diagnostics).map_err(|e| e.to_string())?
        };
        Ok((headers, meta, diagnostics))
    })();
    let (headers, meta, diagnostics) = match decoded {
        Ok(d) => d,
        Err(why) => return Ok(Err(StoreError::Damaged { id, why })),
    };
    let envelope = Envelope {
        banner: Banner {
            from: r.get(7)?,
            to: r.get(8)?,
            version: r.get(9)?,
        },
        headers,
        meta,
        body: r.get(12)?,
        sig: r.get(13)?,
        hash: r.get(14)?,
    };
    // The canonical text is what the columns render to, unless it was kept (see `texts`).
    let canonical = match r.get::<_, Option<String>>(16)? {
        Some(kept) => kept,
        None => protocol::render(&envelope),
    };
    let edit = RawEdit {
        text: r.get(15)?,
        prefix: r.get(18)?,
        suffix: r.get(19)?,
    };
    let raw = match texts::apply_raw(&edit, &canonical) {
        Ok(raw) => raw,
        Err(why) => return Ok(Err(StoreError::Damaged { id, why })),
    };
    // An id made here on receipt claims nothing for its sender.
    let assigned: bool = r.get(25)?;
    let claimed_at = if assigned {
        None
    } else {
        crate::store::ulid_time(&id).map(|t| t.to_string())
    };
    Ok(Ok(StoredMessage {
        thread: thread.to_string(),
        parent,
        direction: r.get(3)?,
        status: r.get(4)?,
        received_at: r.get(5)?,
        arrived_at: r.get(24)?,
        claimed_at,
        intent: r.get(6)?,
        envelope,
        raw,
        canonical,
        diagnostics,
        depth: 0,
        id,
    }))
}

impl Store {
    /// One message by id.
    pub fn message(&self, id: &str) -> Result<Option<StoredMessage>, StoreError> {
        let id = crate::protocol::id::key(id);
        let sql = format!("SELECT {MESSAGE_COLUMNS} FROM messages WHERE id = ?1");
        self.conn
            .prepare_cached(&sql)?
            .query_row([&*id], message_from_row)
            .optional()?
            .transpose()
    }

    /// Every thread id in the order their first messages arrived: the order a backup of
    /// all threads is written in, so that restoring it and writing it again gives the same
    /// bytes.
    pub fn thread_ids(&self) -> Result<Vec<String>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT id FROM threads t
             ORDER BY (SELECT min(seq) FROM messages m WHERE m.thread_id = t.id), created_at, id",
        )?;
        let ids = stmt.query_map([], |r| r.get(0))?;
        Ok(ids.collect::<Result<_, _>>()?)
    }

    /// The `limit` threads with the newest activity.
    pub fn threads(&self, limit: usize) -> Result<Vec<ThreadSummary>, StoreError> {
        Ok(self
            .thread_rows("", limit)?
            .into_iter()
            .map(|r| r.summary)
            .collect())
    }

    /// A thread with its messages in tree order, or `None` when there is no such thread.
    pub fn thread(&self, id: &str) -> Result<Option<ThreadView>, StoreError> {
        let id = &*crate::protocol::id::key(id);
        let found: Option<(Option<String>, i64)> = self
            .conn
            .query_row(
                "SELECT context, message_count FROM threads WHERE id = ?1",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        let Some((context, count)) = found else {
            return Ok(None);
        };
        let sql = format!("SELECT {MESSAGE_COLUMNS}, seq FROM messages WHERE thread_id = ?1");
        let mut stmt = self.conn.prepare_cached(&sql)?;
        // Sized once from the stored count (a hint: the rows decide), rather than regrown and
        // copied a dozen times on the way to a few thousand messages.
        let mut messages = Vec::with_capacity(usize::try_from(count).unwrap_or(0).min(1 << 16));
        let seq_column = MESSAGE_COLUMN_COUNT;
        for m in stmt.query_map([id], |r| {
            Ok((r.get::<_, i64>(seq_column)?, message_from_row(r)?))
        })? {
            let (seq, m) = m?;
            messages.push((seq, m?));
        }
        Ok(Some(ThreadView {
            id: id.to_string(),
            context,
            messages: tree_order(super::tree::in_arrival_order(messages)),
        }))
    }
}

/// Orders messages (given in arrival order) as a tree: each root, then its replies depth
/// first, siblings in arrival order. A message whose parent is not in the thread (not arrived
/// yet) is a root; messages caught in a parent cycle are appended as roots, so none is lost.
fn tree_order(messages: Vec<StoredMessage>) -> Vec<StoredMessage> {
    super::tree::arrange(
        messages,
        |m| (m.id.as_str(), m.parent.as_deref()),
        |m, d| m.depth = d,
    )
}
