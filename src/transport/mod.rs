//! Transports: bytes from outside in, envelopes out. Each one ends in the store's one import
//! path (the raw input kept first), so an envelope means the same whichever way it came.

pub mod file;
pub mod mail;
pub mod mail_import;
