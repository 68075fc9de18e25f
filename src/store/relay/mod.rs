//! What goes out of the desk: the relay hop's decision (`hop`), personal data on its way out
//! (`relay_pii`), and a reply composed here (`reply`).

pub(super) mod hop;
mod relay_pii;
mod reply;

pub(crate) use hop::{HopDecision, Waiting};
pub use reply::reply_envelope;
pub(crate) use reply::reply_parties;
