//! A stored paste read back as text, for editing it before import (the stored paste itself is
//! never changed: the edited text is kept as a paste of its own).

use super::{Store, StoreError};

impl Store {
    /// The text of paste `id` (bytes that are not UTF-8 read as U+FFFD); empty when there is
    /// no such paste.
    pub fn paste_text(&self, id: i64) -> Result<String, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT bytes, zstd FROM paste_pieces WHERE paste_id = ?1 ORDER BY seq",
        )?;
        let mut bytes = Vec::new();
        for piece in stmt.query_map([id], |r| Ok((r.get(0)?, r.get(1)?)))? {
            let (stored, zstd) = piece?;
            bytes.extend(super::pieces::unpack(stored, zstd, id)?);
        }
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }
}
