//! What an envelope is and says: its parts in the order they were written (`envelope`), its
//! ids, its intent, its addresses, and what follows from them alone — what it awaits, what a
//! body without intent answers, the time it claims.

pub mod address;
pub mod answers;
pub mod awaiting;
pub mod claim;
mod envelope;
pub mod id;
pub mod intent;

pub use envelope::{Banner, Envelope, Header, MetaBlock, first_line};
pub(crate) use envelope::{KNOWN_HEADERS, STRUCTURAL_KEYS, known_header_index, structural_key};
