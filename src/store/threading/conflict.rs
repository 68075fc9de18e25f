//! Same message id, different content: an id conflict.
//!
//! A message id names one message. When an envelope arrives under an id already stored and its
//! canonical text (what is left once transport repairs are undone, ids filled in) is the same,
//! it is a duplicate and nothing is stored. When the text differs, someone changed the message
//! or reused its id (a model copying an example, an edited quote). Neither text may win
//! silently: the stored message stays as it is, and the new text is kept beside it as a
//! conflicting version, once per distinct text, with the paste it came from.

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::protocol::{self, Code, Diagnostic, Parsed};
use crate::store::import::hex;
use crate::store::prepare::{Filled, fill};
use crate::store::query::{MESSAGE_COLUMN_COUNT, MESSAGE_COLUMNS, message_from_row};
use crate::store::texts;
use crate::store::{Store, StoreError, StoredMessage};

/// What a conflict report says of the stored message.
pub(in crate::store) struct Stored {
    pub id: String,
    pub thread: String,
    pub parent: Option<String>,
    pub canonical: String,
    pub received_at: String,
    pub context: Option<String>,
}

/// The stored message `id`, as far as a conflict check needs it.
pub(in crate::store) fn stored(conn: &Connection, id: &str) -> Result<Option<Stored>, StoreError> {
    let id = &*crate::protocol::id::key(id);
    let sql = format!(
        "SELECT {MESSAGE_COLUMNS}, (SELECT t.context FROM threads t WHERE t.id = thread_id)
         FROM messages WHERE id = ?1"
    );
    let Some((m, context)) = conn
        .prepare_cached(&sql)?
        .query_row([id], |r| {
            Ok((message_from_row(r)?, r.get(MESSAGE_COLUMN_COUNT)?))
        })
        .optional()?
    else {
        return Ok(None);
    };
    let m = m?;
    Ok(Some(Stored {
        id: m.id,
        thread: m.thread,
        parent: m.parent,
        canonical: m.canonical,
        received_at: m.received_at,
        context,
    }))
}

/// The canonical text `p` would be stored with under `s`'s id: the worker's when it named its
/// thread, else filled in with the stored message's thread (a v1.0 envelope's thread is
/// assigned on receipt, so it cannot differ by itself).
pub(in crate::store) fn candidate(p: &Parsed, filled: Option<&Filled>, s: &Stored) -> String {
    match filled {
        Some(f) => f.canonical.clone(),
        None => {
            let parent = p.envelope.parent_key();
            fill(
                p,
                &s.thread,
                &s.id,
                parent.as_deref().or(s.parent.as_deref()),
            )
            .canonical
        }
    }
}

/// The canonical text `p` would be stored with under `s`'s id, from the envelope alone.
pub(super) fn canonical_of(p: &Parsed, s: &Stored) -> String {
    let env = &p.envelope;
    let filled = match (env.thread_key(), env.message_key()) {
        (Some(t), Some(m)) => Some(fill(p, &t, &m, env.parent_key().as_deref())),
        _ => None,
    };
    candidate(p, filled.as_ref(), s)
}

/// Keeps `canonical` as a conflicting version of message `id` (once per distinct text).
/// Returns the version's number (1 for the first) and whether it was new.
#[allow(clippy::too_many_arguments)]
pub(in crate::store) fn keep_version(
    conn: &Connection,
    id: &str,
    paste_id: i64,
    raw: &str,
    canonical: &str,
    diagnostics: &str,
    now: &str,
) -> Result<(usize, bool), StoreError> {
    let digest = hex(&Sha256::digest(canonical.as_bytes()));
    let added = conn
        .prepare_cached(
            "INSERT OR IGNORE INTO message_versions
                (message_id, paste_id, raw, canonical, digest, diagnostics, received_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?
        .execute(params![
            id,
            paste_id,
            Some(raw).filter(|r| *r != canonical),
            canonical,
            digest,
            diagnostics,
            now
        ])?;
    let number: i64 = conn
        .prepare_cached(
            "SELECT count(*) FROM message_versions WHERE message_id = ?1
             AND seq <= (SELECT seq FROM message_versions WHERE message_id = ?1 AND digest = ?2)",
        )?
        .query_row(params![id, digest], |r| r.get(0))?;
    Ok((number as usize, added > 0))
}

/// The `id-conflict` error for an envelope at `line`: which message it collides with, where
/// that one is, and what happens to the new text (`kept`: the version it is, and whether it was
/// kept before; `None` when nothing is written, as for `check`).
pub(in crate::store) fn diagnostic(
    line: u32,
    s: &Stored,
    kept: Option<(usize, bool)>,
) -> Diagnostic {
    let thread = match &s.context {
        Some(c) if !c.trim().is_empty() => {
            let c: String = c.chars().take(40).collect();
            format!("thread “{c}”")
        }
        _ => format!("thread {}", s.thread),
    };
    let time = s
        .received_at
        .get(..16)
        .unwrap_or(&s.received_at)
        .replace('T', " ");
    let what = match kept {
        Some((n, true)) => format!(
            "this text is kept as conflicting version {n} beside it; the stored message is unchanged (V in the inspector shows the versions)"
        ),
        Some((n, false)) => format!(
            "this text was kept before as conflicting version {n}; nothing new is stored (V in the inspector shows the versions)"
        ),
        None => "importing it keeps this text as a conflicting version beside the stored message, which stays unchanged".to_string(),
    };
    Diagnostic::new(
        Code::IdConflict,
        line,
        1,
        format!(
            "message `{}` is already stored with different content ({thread}, received {time}): {what}",
            s.id
        ),
    )
}

/// One conflicting version of a stored message.
#[derive(Debug, Clone, Serialize)]
pub struct MessageVersion {
    /// 1 for the first conflicting text kept, and so on.
    pub number: usize,
    /// The paste it came in.
    pub paste_id: Option<i64>,
    /// When it was kept (RFC 3339).
    pub received_at: String,
    /// Its text as received.
    #[serde(skip)]
    pub raw: String,
    /// Its canonical text.
    pub canonical: String,
    /// Diagnostics found on receipt, as `parse --json` reports them.
    pub diagnostics: serde_json::Value,
}

impl Store {
    /// The conflicting versions kept for message `id`, oldest first.
    pub fn message_versions(&self, id: &str) -> Result<Vec<MessageVersion>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT paste_id, received_at, raw, canonical, diagnostics FROM message_versions
             WHERE message_id = ?1 ORDER BY seq",
        )?;
        let rows = stmt.query_map([id], |r| {
            let canonical: String = r.get(3)?;
            let raw: Option<String> = r.get(2)?;
            let diagnostics: String = r.get(4)?;
            Ok(MessageVersion {
                number: 0,
                paste_id: r.get(0)?,
                received_at: r.get(1)?,
                raw: raw.unwrap_or_else(|| canonical.clone()),
                canonical,
                diagnostics: serde_json::from_str(&diagnostics).unwrap_or_default(),
            })
        })?;
        let mut out = Vec::new();
        for (i, v) in rows.enumerate() {
            let mut v = v?;
            v.number = i + 1;
            out.push(v);
        }
        Ok(out)
    }

    /// How many conflicting versions message `id` has.
    pub fn version_count(&self, id: &str) -> Result<usize, StoreError> {
        let n: i64 = self
            .conn
            .prepare_cached("SELECT count(*) FROM message_versions WHERE message_id = ?1")?
            .query_row([id], |r| r.get(0))?;
        Ok(n as usize)
    }

    /// Message `id` as its conflicting version `number` says it (1-based): the stored
    /// message's place in the thread, with the version's envelope, texts and diagnostics.
    pub fn version_message(
        &self,
        id: &str,
        number: usize,
    ) -> Result<Option<StoredMessage>, StoreError> {
        let Some(mut m) = self.message(id)? else {
            return Ok(None);
        };
        let Some(v) = self
            .message_versions(id)?
            .into_iter()
            .find(|v| v.number == number)
        else {
            return Ok(None);
        };
        let parsed = protocol::extract(&v.canonical, &protocol::Options::default())
            .envelopes
            .into_iter()
            .next();
        if let Some(p) = parsed {
            m.intent = p.envelope.intent().map(|i| i.to_string()).or(m.intent);
            m.envelope = p.envelope;
        }
        m.raw = v.raw;
        m.canonical = v.canonical;
        m.diagnostics = v.diagnostics;
        m.received_at = v.received_at;
        Ok(Some(m))
    }

    /// `check` against this database: the `id-conflict` error for `p` when its message id is
    /// stored with other content (nothing is written).
    pub fn id_conflict(&self, p: &Parsed) -> Result<Option<Diagnostic>, StoreError> {
        if p.has_errors() {
            return Ok(None);
        }
        let Some(id) = p.envelope.message() else {
            return Ok(None);
        };
        let Some(s) = stored(&self.conn, id)? else {
            return Ok(None);
        };
        let canonical = canonical_of(p, &s);
        Ok((compare(&s.canonical, &canonical) == Copy::Other)
            .then(|| diagnostic(p.span.start_line, &s, None)))
    }
}

/// What a copy under a stored message id is to the stored message, by their canonical texts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::store) enum Copy {
    /// The same message: the same text, or the same meaning once what transports add or
    /// change is left out (`protocol::meaning`), or the same with the signature a chat window
    /// dropped on the way. Nothing is stored.
    Same,
    /// The same message, signed now ([`signs_stored`]): the stored text takes the signature.
    SignsStored,
    /// Something else under the same id: a conflicting version.
    Other,
}

/// What the copy whose canonical text is `incoming` is to the stored message `stored`.
pub(in crate::store) fn compare(stored: &str, incoming: &str) -> Copy {
    if stored == incoming {
        return Copy::Same;
    }
    if signs_stored(stored, incoming) {
        return Copy::SignsStored;
    }
    let read = |t: &str| {
        let ex = protocol::extract(t, &protocol::Options::default());
        match <[protocol::Parsed; 1]>::try_from(ex.envelopes) {
            Ok([p]) => Some(p.envelope),
            Err(_) => None,
        }
    };
    let (Some(a), Some(b)) = (read(stored), read(incoming)) else {
        return Copy::Other;
    };
    let unsigned = |e: &protocol::Envelope| {
        e.sig
            .as_deref()
            .is_none_or(|s| s.trim().is_empty() || s.trim().eq_ignore_ascii_case("none"))
    };
    let lost_signature = unsigned(&b) && !unsigned(&a);
    if protocol::meaning::same_meaning(&a, &b)
        || (lost_signature && protocol::meaning::same_but_signature(&a, &b))
    {
        Copy::Same
    } else {
        Copy::Other
    }
}

/// The `sig:` value of a canonical text and the text without its `sig:` line and the
/// `hash:` after it. The envelope's own `sig:` is the last line starting so (the body is
/// indented in canonical form; a META entry of that name would come before it).
fn split_sig(canonical: &str) -> (Option<&str>, String) {
    let lines: Vec<&str> = canonical.split_inclusive('\n').collect();
    let Some(at) = lines.iter().rposition(|l| l.starts_with("sig:")) else {
        return (None, canonical.to_string());
    };
    let sig = lines[at].trim_end_matches('\n')["sig:".len()..].trim();
    let rest = lines
        .iter()
        .enumerate()
        .filter(|&(i, l)| i != at && !(i > at && l.starts_with("hash:")))
        .map(|(_, l)| *l)
        .collect();
    (Some(sig), rest)
}

/// Whether `incoming` is the stored message `stored` with a signature added: the stored text
/// is unsigned, the incoming one signed, and nothing else differs. Such a paste is the same
/// message, now signed (signed by the operator after copying it, or by its sender when asked),
/// and replaces the stored text rather than standing beside it as a conflict.
pub(super) fn signs_stored(stored: &str, incoming: &str) -> bool {
    let unsigned =
        |s: Option<&str>| s.is_none_or(|v| v.is_empty() || v.eq_ignore_ascii_case("none"));
    let (old_sig, old_rest) = split_sig(stored);
    let (new_sig, new_rest) = split_sig(incoming);
    unsigned(old_sig) && !unsigned(new_sig) && old_rest == new_rest
}

/// Stores the signed text of message `id` in place of its unsigned one (see
/// [`signs_stored`]). Returns the message's `seq`.
pub(in crate::store) fn add_signature(
    conn: &Connection,
    id: &str,
    p: &Parsed,
    raw: &str,
    canonical: &str,
    now: &str,
) -> Result<i64, StoreError> {
    // The stored columns take the new signature; the canonical text is kept only if they do
    // not render to it, and the received text is stored as its edit (see `texts`).
    let sql = format!("SELECT {MESSAGE_COLUMNS} FROM messages WHERE id = ?1");
    let mut env = conn
        .prepare_cached(&sql)?
        .query_row([id], message_from_row)??
        .envelope;
    env.sig.clone_from(&p.envelope.sig);
    env.hash.clone_from(&p.envelope.hash);
    let edit = texts::raw_edit(raw, canonical);
    conn.prepare_cached(
        "UPDATE messages SET sig = ?2, hash = ?3, raw = ?4, raw_prefix = ?5, raw_suffix = ?6,
            canonical = ?7, updated_at = ?8, signed_at = ?8
         WHERE id = ?1",
    )?
    .execute(rusqlite::params![
        id,
        p.envelope.sig,
        p.envelope.hash,
        edit.text,
        edit.prefix,
        edit.suffix,
        texts::kept_canonical(&env, canonical),
        now
    ])?;
    Ok(conn.query_row("SELECT seq FROM messages WHERE id = ?1", [id], |r| r.get(0))?)
}
