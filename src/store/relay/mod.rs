//! What goes out of the desk: the relay hop's decision (`hop`), personal data on its way out
//! (`relay_pii`), and a reply composed here (`reply`).

pub(super) mod hop;
mod relay_pii;
mod reply;

pub use hop::{HopDecision, Waiting};
pub use reply::{ReplyParties, reply_envelope, reply_parties};
