//! Commands that carry envelopes between machines and windows: `serve`, `send`, `watch`, and the
//! companion (`watch --to URL`) with its spool.

pub(in crate::cli) mod companion;
pub(in crate::cli) mod companion_spool;
pub(in crate::cli) mod http_cmd;
pub(in crate::cli) mod watch_cmd;
