//! Carrying envelopes on: the two-action hop and POLL rounds, deliveries straight to a contact
//! under way, the queue of what is left to relay, `t` to the next of it that needs the
//! operator, and what the operator settles by hand.

pub(in crate::app) mod hop;
mod next;
pub mod queue;
pub mod settle;
pub mod under_way;
