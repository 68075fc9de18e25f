//! ACK replies: what a receiver that took an envelope answers, built like the spec's ERROR
//! replies (direction swapped, conversation ids copied) so the sender threads it under the
//! message it sent.

use crate::protocol::address::check_address;
use crate::protocol::namespaces;
use crate::protocol::{Envelope, MetaBlock, NewIds, is_id};

/// Builds the ACK to `original`, which was stored as message `stored_id` (its own id, or the
/// one assigned on receipt to a v1.0 envelope that had none).
///
/// `desk` is who acknowledges: the operator's own address when one is configured (the desk
/// took the envelope, not necessarily its recipient); else the envelope's recipient.
pub(crate) fn ack_envelope(
    original: &Envelope,
    stored_id: &str,
    desk: Option<&str>,
    transport: &str,
    ids: &dyn NewIds,
) -> Envelope {
    let mut env = Envelope::new(
        sender_for(original, desk),
        valid_or(&original.banner.from, "UNKNOWN"),
    );
    env.banner.version = "v1".into();
    let parent = Some(stored_id.to_string()).filter(|v| is_id(v));
    super::error_envelope::system_reply_headers(&mut env, Some(original), parent, "ACK", ids);
    env.meta.push(MetaBlock {
        namespace: namespaces::ROUTING.into(),
        entries: vec![("X-Delivery".into(), transport.to_string())],
    });
    env.body = Some(format!("Received and stored {stored_id}."));
    env.sig = Some("none".into());
    env
}

/// The sender of a reply the desk writes to `original`: `desk` when it is a valid address,
/// else the original's recipient, else `SYSTEM`.
pub(crate) fn sender_for(original: &Envelope, desk: Option<&str>) -> String {
    match desk.filter(|d| check_address(d).is_ok()) {
        Some(d) => d.to_string(),
        None => valid_or(&original.banner.to, "SYSTEM"),
    }
}

fn valid_or(address: &str, fallback: &str) -> String {
    if check_address(address).is_ok() {
        address.to_string()
    } else {
        fallback.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Options, extract, render};

    fn original() -> Envelope {
        let mut o = Envelope::new("CLAUDE", "CHATGPT");
        o.set_header("thread", "01J9J3D3M6A4M3WQX8G1ZQ0S7K");
        o.set_header("message", "01J9J3DBC4N7P2Q3R5S7T9V1V2");
        o.set_header("context", "topic");
        o.set_header("intent", "REQUEST");
        o
    }

    #[test]
    fn ack_answers_the_stored_message_and_is_valid() {
        let o = original();
        let a = ack_envelope(
            &o,
            "01J9J3DBC4N7P2Q3R5S7T9V1V2",
            Some("human://desk"),
            "http",
            &crate::ids::IdGenerator::new(),
        );
        assert_eq!(a.banner.from, "human://desk");
        assert_eq!(a.banner.to, "CLAUDE");
        assert_eq!(a.parent(), Some("01J9J3DBC4N7P2Q3R5S7T9V1V2"));
        assert_eq!(a.thread(), o.thread());
        assert_eq!(a.intent_raw(), Some("ACK"));
        let parsed = extract(&render(&a), &Options::default());
        assert_eq!(parsed.envelopes.len(), 1);
        assert!(
            parsed.envelopes[0]
                .diagnostics
                .iter()
                .all(|d| !d.is_error()),
            "{:?}",
            parsed.envelopes[0].diagnostics
        );
    }

    #[test]
    fn without_a_desk_the_recipient_acknowledges() {
        let a = ack_envelope(
            &original(),
            "01J9J3DBC4N7P2Q3R5S7T9V1V2",
            Some("two words"),
            "http",
            &crate::ids::IdGenerator::new(),
        );
        assert_eq!(a.banner.from, "CHATGPT");
    }
}
