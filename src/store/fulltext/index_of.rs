//! Where a store's full-text index is: its own file beside the database, attached to a
//! connection of its own, or (read-only, missing, behind) one the store holds; found when first
//! needed and brought up to the database.

use std::cell::OnceCell;
use std::time::Duration;

use rusqlite::Connection;

use super::search_index;
use crate::store::Store;

/// Where a store's full-text index is.
pub(in crate::store) struct SearchIndex {
    /// The schema holding it: its own file ([`search_index::SCHEMA`]); for a database read
    /// without migrating, the index inside an older one (`main`), or one made in memory when
    /// the file is missing or behind, or cannot be made (`temp`).
    pub(in crate::store) schema: &'static str,
    /// The connection that writes and reads the index of a database file: the database with
    /// the index's file attached. Not the store's, whose write transactions (`BEGIN
    /// IMMEDIATE`) would take the index's lock too, and wait whenever another process
    /// indexes. `None` when the store's own connection holds the index (a database in
    /// memory or read-only, an index in memory).
    pub(in crate::store) conn: Option<Connection>,
}

impl SearchIndex {
    /// An index the store's own connection holds in `schema`.
    pub(in crate::store) fn within(schema: &'static str) -> OnceCell<SearchIndex> {
        OnceCell::from(SearchIndex { schema, conn: None })
    }
}

impl Store {
    /// The full-text index: the schema holding it, and the connection it is read and written
    /// through. Found at the first call (see `find_index`).
    pub(crate) fn searched(&self) -> (&'static str, &Connection) {
        let index = self.index.get_or_init(|| self.find_index());
        (index.schema, index.conn.as_ref().unwrap_or(&self.conn))
    }

    /// The index of a database file: its own file, attached to a connection of its own; for a
    /// read-only store, attached to the store's connection when the file is there and current.
    /// Otherwise (missing or behind and this process may not write it, or no file can be made
    /// beside the database) one in memory, for as long as the store is open, made from the
    /// messages by the next catching up.
    fn find_index(&self) -> SearchIndex {
        let why = if self.read_only.is_some() {
            match search_index::attach_for_reading(&self.conn, &self.path) {
                Ok(true) => {
                    return SearchIndex {
                        schema: search_index::SCHEMA,
                        conn: None,
                    };
                }
                Ok(false) => "missing or behind, and read-only".to_string(),
                Err(e) => e.to_string(),
            }
        } else {
            match search_index::open(&self.path, self.busy_timeout) {
                Ok(conn) => {
                    return SearchIndex {
                        schema: search_index::SCHEMA,
                        conn: Some(conn),
                    };
                }
                Err(e) => e.to_string(),
            }
        };
        tracing::debug!(
            "{}: search index kept in memory: {why}",
            self.path.display()
        );
        // Should even this fail, searching says so: its table is missing.
        if let Err(e) = self.conn.execute_batch(&search_index::create_sql("temp")) {
            tracing::debug!("{}: no search index in memory: {e}", self.path.display());
        }
        SearchIndex {
            schema: "temp",
            conn: None,
        }
    }

    /// Brings the full-text index up to the database (see `search_index`): the store's own
    /// index file, or for a read-only store the index it made in memory. The changes applied
    /// are then forgotten, without waiting for another writer (the next time will do).
    pub(crate) fn catch_up_search(&self) {
        self.unindexed.set(false);
        let (schema, index) = self.searched();
        // A read-only store may write only an index in memory: the file it reads is current
        // (or it would not read it), and an older database's inside one cannot be written.
        if self.read_only.is_some() && schema != "temp" {
            return;
        }
        match search_index::catch_up(index, schema) {
            // Only the index file applies changes for everyone: one in memory leaves them.
            Ok(true) if self.read_only.is_none() && schema == search_index::SCHEMA => {
                let waits = self.conn.busy_timeout(Duration::ZERO);
                search_index::prune_changes(index, &self.conn, schema);
                if waits.is_ok() {
                    let _ = self.conn.busy_timeout(self.busy_timeout);
                }
            }
            Ok(_) => {}
            Err(e) => tracing::debug!(
                "{}: search index not brought up to date: {e}",
                self.path.display()
            ),
        }
    }
}
