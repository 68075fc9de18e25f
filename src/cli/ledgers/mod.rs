//! Commands over what the desk keeps track of: `queue`, `poll`, `consent`, `keys`.

pub(in crate::cli) mod consent_cmd;
pub(in crate::cli) mod keys_cmd;
pub(in crate::cli) mod poll_cmd;
pub(in crate::cli) mod queue_cmd;
