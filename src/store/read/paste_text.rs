//! A stored paste read back as text, for editing it before import (the stored paste itself is
//! never changed: the edited text is kept as a paste of its own).

use crate::store::{Store, StoreError};

impl Store {
    /// The text of paste `id` (bytes that are not UTF-8 read as U+FFFD); empty when there is
    /// no such paste.
    pub fn paste_text(&self, id: i64) -> Result<String, StoreError> {
        text_of(&self.conn, id)
    }

    /// The bytes of paste `id` exactly as they were received; `None` when there is no such
    /// paste.
    pub fn paste_bytes(&self, id: i64) -> Result<Option<Vec<u8>>, StoreError> {
        let known: i64 =
            self.conn
                .query_row("SELECT count(*) FROM pastes WHERE id = ?1", [id], |r| {
                    r.get(0)
                })?;
        if known == 0 {
            return Ok(None);
        }
        bytes_of(&self.conn, id).map(Some)
    }

    /// Every stored paste, oldest first: where it came from, when, its size, and how many
    /// stored messages came from it (none for a paste whose envelopes were all rejected).
    pub fn pastes(&self) -> Result<Vec<PasteSummary>, StoreError> {
        let mut stmt = self.conn.prepare(
            "SELECT p.id, p.source, p.received_at, p.bytes,
                (SELECT count(*) FROM messages m WHERE m.paste_id = p.id)
             FROM pastes p ORDER BY p.id",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(PasteSummary {
                id: r.get(0)?,
                source: r.get(1)?,
                received_at: r.get(2)?,
                bytes: r.get::<_, i64>(3)?.max(0) as u64,
                messages: r.get::<_, i64>(4)?.max(0) as usize,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

/// One stored paste, as [`Store::pastes`] lists it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct PasteSummary {
    /// Its id (what `crosstalk pastes show` and `delete paste` take).
    pub id: i64,
    /// Where it came from: a file name, `<stdin>`, the app's paste, the clipboard.
    pub source: String,
    /// When it was stored (RFC 3339).
    pub received_at: String,
    /// Its size in bytes.
    pub bytes: u64,
    /// How many stored messages came from it.
    pub messages: usize,
}

/// The bytes of paste `id`, read through `conn` (a transaction's, too).
fn bytes_of(conn: &rusqlite::Connection, id: i64) -> Result<Vec<u8>, StoreError> {
    let mut stmt = conn
        .prepare_cached("SELECT bytes, zstd FROM paste_pieces WHERE paste_id = ?1 ORDER BY seq")?;
    let mut bytes = Vec::new();
    for piece in stmt.query_map([id], |r| Ok((r.get(0)?, r.get(1)?)))? {
        let (stored, zstd) = piece?;
        bytes.extend(crate::store::pieces::unpack(stored, zstd, id)?);
    }
    Ok(bytes)
}

/// The text of paste `id` (bytes that are not UTF-8 read as U+FFFD).
pub(in crate::store) fn text_of(
    conn: &rusqlite::Connection,
    id: i64,
) -> Result<String, StoreError> {
    Ok(String::from_utf8_lossy(&bytes_of(conn, id)?).into_owned())
}
