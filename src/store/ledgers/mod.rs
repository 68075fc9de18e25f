//! What the store keeps track of for the operator: the delivery ledger and the queue read from
//! it, what was settled by hand, the consent ledger, the trust store's keys, polls, and a POLL's
//! copies per target (`fanout`).

mod consent;
pub(super) mod delivery;
mod fanout;
pub(super) mod keys;
mod poll;
mod queue;
mod settle;

pub use delivery::{Delivery, ulid_time};
pub use fanout::Carried;
pub(crate) use fanout::TargetRelay;
pub use keys::KeySource;
pub(crate) use keys::{Added, KeyRow, SignatureCheck, is_trust_alarm};
pub use poll::MessageMatch;
pub(crate) use poll::PollView;
pub(crate) use queue::QueueRow;
pub use queue::{Queue, Section, StateFilter};
pub use settle::Settled;
