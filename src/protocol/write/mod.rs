//! Writing envelopes back into text: the canonical form (`render`), which text of a stored
//! envelope goes on (`carry`), and the replies a receiver builds (`ack`, `error_envelope`).

pub mod ack;
pub mod carry;
pub mod error_envelope;
pub mod render;
