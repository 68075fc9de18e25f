//! Noticing other writers. The database is the one place where processes meet: a
//! `crosstalk import` in another terminal, `crosstalk watch`, a second app. SQLite's
//! `PRAGMA data_version` changes whenever another connection commits, and costs no disk read
//! when nothing happened, so the app can ask on every tick and read its screen again only
//! when it moved.

use crate::store::{Store, StoreError};

impl Store {
    /// A number that changes when another connection committed to the database since it was
    /// last read. Commits made through this same connection do not change it: the caller
    /// already knows about its own writes.
    pub(crate) fn data_version(&self) -> Result<i64, StoreError> {
        Ok(self
            .conn
            .pragma_query_value(None, "data_version", |r| r.get(0))?)
    }
}
