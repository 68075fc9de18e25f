//! Commands that read pastes and files: `parse`, `fmt`, `check` (in blocks on every core, and
//! against the database), and `attachments verify`.

pub(in crate::cli) mod attachments_cmd;
pub(in crate::cli) mod check_cmd;
pub(in crate::cli) mod check_db;
#[cfg(test)]
pub(in crate::cli) mod check_props;
pub(in crate::cli) mod check_stream;
pub(in crate::cli) mod parse_cmd;
