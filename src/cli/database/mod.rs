//! Commands over the history in the database: `import`, `threads`, `show`, `export` (and
//! `--split`), `search`, `reply`, `pastes`, `archive`, `backup`, `delete`, and what `show --json`
//! adds from the integrity ledgers.

pub(in crate::cli) mod archive_cmd;
pub(in crate::cli) mod backup_cmd;
pub(in crate::cli) mod erase_cmd;
pub(in crate::cli) mod integrity;
pub(in crate::cli) mod pastes_cmd;
pub(in crate::cli) mod split_cmd;
pub(in crate::cli) mod store_cmd;
