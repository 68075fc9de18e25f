//! Carrying envelopes on: the two-action hop and POLL rounds, deliveries straight to a contact
//! under way, the queue of what is left to relay, and what the operator settles by hand.

pub(in crate::app) mod hop;
pub mod queue;
pub mod settle;
pub mod under_way;
