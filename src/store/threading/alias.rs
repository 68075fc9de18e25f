//! Ids given in place of invalid ones. Models copy the spec's example ids (with a `U`, which
//! ULIDs leave out) or write UUIDv4s; such an envelope is rejected as it is, and the operator
//! may import it with fresh ids instead. The id it was written with is kept as an alias, so a
//! later reply that names it (`parent:`, `thread:`) is threaded under the fresh id.

use rusqlite::{Connection, OptionalExtension, params};

use crate::store::{Store, StoreError};

/// The fresh id given for `alias` (a message or thread id as written), if any. Ids are read
/// in either case (docs/PROTOCOL.md §5), and so are the invalid ones aliases stand for: a
/// reply naming one in another case than the envelope it was replaced in is threaded under
/// the same fresh id. The spelling as written is found through the index first; another
/// case only by looking through the aliases (few: only envelopes imported with fresh ids
/// have any), the first one kept winning.
pub(super) fn resolve(
    conn: &Connection,
    alias: &str,
    kind: &str,
) -> Result<Option<String>, StoreError> {
    let alias = alias.trim();
    let exact = conn
        .prepare_cached("SELECT id FROM id_aliases WHERE alias = ?1 AND kind = ?2")?
        .query_row(params![alias, kind], |r| r.get(0))
        .optional()?;
    if exact.is_some() {
        return Ok(exact);
    }
    Ok(conn
        .prepare_cached(
            "SELECT id FROM id_aliases WHERE alias = ?1 COLLATE NOCASE AND kind = ?2
             ORDER BY created_at, rowid LIMIT 1",
        )?
        .query_row(params![alias, kind], |r| r.get(0))
        .optional()?)
}

/// Keeps `alias` as the original of `id` (the first fresh id given for it stays).
pub(super) fn keep(
    conn: &Connection,
    alias: &str,
    kind: &str,
    id: &str,
    paste_id: i64,
    now: &str,
) -> Result<(), StoreError> {
    conn.prepare_cached(
        "INSERT OR IGNORE INTO id_aliases (alias, kind, id, paste_id, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![alias.trim(), kind, id, paste_id, now])?;
    Ok(())
}

impl Store {
    /// The id message or thread `id` was pasted with, when it was given a fresh one.
    pub fn alias_of(&self, id: &str) -> Result<Option<String>, StoreError> {
        Ok(self
            .conn
            .prepare_cached(
                "SELECT alias FROM id_aliases WHERE id = ?1 ORDER BY created_at LIMIT 1",
            )?
            .query_row([id], |r| r.get(0))
            .optional()?)
    }

    /// The fresh message id given in place of `alias`, if any.
    pub fn resolve_alias(&self, alias: &str) -> Result<Option<String>, StoreError> {
        resolve(&self.conn, alias, "message")
    }
}
