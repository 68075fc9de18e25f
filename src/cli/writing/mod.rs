//! Commands that write envelopes: `new`, `error`, `sign`, `verify`, `primer`.

pub(in crate::cli) mod compose;
pub(in crate::cli) mod primer_cmd;
pub(in crate::cli) mod sign_cmd;
