//! Keeping the database file: backups, erasure, the record of a database left sound, the
//! write-ahead log copied in during a long import (`checkpointer`), and the threads that work
//! beside an import (`background`).

pub(super) mod background;
mod backup;
pub(super) mod checkpointer;
pub(super) mod erase;
mod files;
pub(super) mod soundness;

pub(crate) use erase::EARLIER_COPIES;
pub use erase::{EraseTarget, Erasure};
pub(crate) use files::{CHECKED_UP_TO, folder_of};
pub use files::{DATABASE_FILES, beside};
pub(in crate::store) use files::{
    is_disk_full, is_read_only, locate, owner_only, unwritable, url_path,
};
