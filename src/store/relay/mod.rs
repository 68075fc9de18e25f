//! What goes out of the desk: the relay hop's decision (`hop`), personal data on its way out
//! (`relay_pii`), and a reply composed here (`reply`).

pub(super) mod hop;
mod relay_pii;
mod reply;

pub use hop::{Carrier, ForRecipient, Hop, HopDecision, Turn, Waiting};
pub use reply::{ReplyParties, reply_envelope, reply_parties};

// `hop` names what it uses of the store as `super::…`, as it did beside them.
use super::{ImportItem, ImportReport, Outcome, Store, StoreError, StoredMessage, delivery};
