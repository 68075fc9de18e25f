//! Ids by their first characters, so the operator can type the start of a ULID (as shown,
//! cut, in the tree) instead of all 26 characters.

use super::{Store, StoreError};

/// What an id prefix names: threads and messages (with their thread) whose id starts with
/// it, in id order, at most the limit asked for of each.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IdMatches {
    /// Thread ids.
    pub threads: Vec<String>,
    /// (message id, its thread id).
    pub messages: Vec<(String, String)>,
}

impl Store {
    /// Threads and messages whose id starts with `prefix`. ULIDs are case-insensitive, so
    /// a prefix typed in lower case also matches upper-case ids. Both lookups are range
    /// scans of the id indexes (ids sort as bytes: every id with the prefix lies between
    /// the prefix and the prefix followed by the largest character).
    pub fn ids_with_prefix(&self, prefix: &str, limit: usize) -> Result<IdMatches, StoreError> {
        let mut found = IdMatches::default();
        if prefix.is_empty() {
            return Ok(found);
        }
        let mut forms = vec![prefix.to_string()];
        let upper = prefix.to_ascii_uppercase();
        if upper != prefix {
            forms.push(upper);
        }
        for p in &forms {
            let end = format!("{p}\u{10FFFF}");
            let mut threads = self.conn.prepare_cached(
                "SELECT id FROM threads WHERE id >= ?1 AND id < ?2 ORDER BY id LIMIT ?3",
            )?;
            for id in threads.query_map(rusqlite::params![p, end, limit as i64], |r| r.get(0))? {
                let id: String = id?;
                if !found.threads.contains(&id) {
                    found.threads.push(id);
                }
            }
            let mut messages = self.conn.prepare_cached(
                "SELECT id, thread_id FROM messages WHERE id >= ?1 AND id < ?2 ORDER BY id LIMIT ?3",
            )?;
            let rows = messages.query_map(rusqlite::params![p, end, limit as i64], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })?;
            for row in rows {
                let row: (String, String) = row?;
                if !found.messages.contains(&row) {
                    found.messages.push(row);
                }
            }
        }
        found.threads.truncate(limit);
        found.messages.truncate(limit);
        Ok(found)
    }
}
