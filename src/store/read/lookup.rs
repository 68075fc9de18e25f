//! Small lookups for the app's command line and search results: ids by their first
//! characters, so the operator can type the start of a ULID (as shown, cut, in the tree)
//! instead of all 26 characters; and the intent and sender of messages, so that search hits
//! in the same thread can be told apart.

use rusqlite::OptionalExtension;

use crate::store::{Store, StoreError};

/// What an id prefix names: threads and messages (with their thread) whose id starts with
/// it, in id order, at most the limit asked for of each.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct IdMatches {
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
    pub(crate) fn ids_with_prefix(
        &self,
        prefix: &str,
        limit: usize,
    ) -> Result<IdMatches, StoreError> {
        let mut found = IdMatches::default();
        if prefix.is_empty() {
            return Ok(found);
        }
        let mut forms = vec![prefix.to_string()];
        // Ids are stored as `protocol::id::key` writes them: ULIDs upper case, UUIDs lower.
        for other in [prefix.to_ascii_uppercase(), prefix.to_ascii_lowercase()] {
            if !forms.contains(&other) {
                forms.push(other);
            }
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

/// Who sent a message, with what intent and how its body begins: enough to tell search
/// hits apart.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MessageLabel {
    /// Normalized intent.
    pub intent: Option<String>,
    /// Banner sender.
    pub from: String,
    /// The body's first 160 characters.
    pub body_start: String,
}

impl Store {
    /// The label of each of `ids` (in order; a default label for an id not stored). One
    /// indexed lookup per id, reading short columns.
    pub(crate) fn message_labels(&self, ids: &[&str]) -> Result<Vec<MessageLabel>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT intent, sender, substr(coalesce(body, ''), 1, 160) FROM messages
                 WHERE id = ?1",
        )?;
        ids.iter()
            .map(|id| {
                Ok(stmt
                    .query_row([id], |r| {
                        Ok(MessageLabel {
                            intent: r.get(0)?,
                            from: r.get(1)?,
                            body_start: r.get(2)?,
                        })
                    })
                    .optional()?
                    .unwrap_or_default())
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Options;

    #[test]
    fn prefixes_find_ids_in_either_case_and_labels_follow_the_ids() {
        let mut store = Store::open_in_memory().unwrap();
        let text = include_str!("../../../assets/examples/v11-request.crosstalk");
        store.import_text("t", text, &Options::default()).unwrap();
        let env = &crate::protocol::extract(text, &Options::default()).envelopes[0].envelope;
        let (thread, message) = (env.thread().unwrap(), env.message().unwrap());
        let found = store
            .ids_with_prefix(&message[..10].to_ascii_lowercase(), 8)
            .unwrap();
        assert!(
            found
                .messages
                .contains(&(message.to_string(), thread.to_string()))
        );
        let found = store.ids_with_prefix(thread, 8).unwrap();
        assert_eq!(found.threads, [thread.to_string()]);
        assert_eq!(
            store.ids_with_prefix("ZZZZ", 8).unwrap(),
            IdMatches::default()
        );
        assert_eq!(store.ids_with_prefix("", 8).unwrap(), IdMatches::default());
        let labels = store.message_labels(&[message, "nope"]).unwrap();
        assert_eq!(labels[0].intent.as_deref(), Some("REQUEST"));
        assert_eq!(labels[0].from, env.banner.from);
        assert!(!labels[0].body_start.is_empty());
        assert_eq!(labels[1], MessageLabel::default());
    }
}
