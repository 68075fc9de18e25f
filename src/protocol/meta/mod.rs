//! The META blocks the desk gives meaning to, each read by the rules of its namespace:
//! attachments, relay hops (`audit`), consent, personal data (`pii`), polls, and content warnings (`safety`).

pub mod attachments;
pub mod audit;
pub mod consent;
pub mod namespaces;
pub mod pii;
mod pii_fold;
pub mod poll;
pub mod safety;
