//! The intent registry of v1.1, with the v1.0 names mapped onto it.

use std::fmt;

/// A normalized intent. Values are matched case-insensitively; the envelope keeps the spelling
/// it was written with (`Envelope::intent_raw`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Intent {
    /// Ask for information, action or a decision; expects RESPOND.
    Request,
    /// Answer to a REQUEST.
    Respond,
    /// Ask for a human.
    Escalate,
    /// Transfer the conversation.
    Handoff,
    /// Ask several recipients; expects several RESPONDs.
    Poll,
    /// Acknowledge receipt.
    Ack,
    /// Refuse or reject.
    Nack,
    /// Report a failure; carries `meta: error`.
    Error,
    /// One-way announcement.
    Broadcast,
    /// Withdraw consent, keys or permissions; must be signed.
    Revoke,
    /// End the thread.
    Close,
    /// Not in the registry: kept upper-cased for comparison; the raw spelling stays on the
    /// envelope.
    Unknown(String),
}

/// Where a raw intent value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IntentKind {
    /// A v1.1 core intent.
    Core,
    /// A v1.0 intent mapped to its v1.1 name.
    Legacy,
    /// Not in the registry.
    Unknown,
}

/// The v1.0 names and what they became.
pub(crate) const LEGACY_INTENTS: [(&str, Intent); 5] = [
    ("QUESTION", Intent::Request),
    ("ANSWER", Intent::Respond),
    ("STATUS", Intent::Broadcast),
    ("PATCH", Intent::Request),
    ("NOTE", Intent::Broadcast),
];

impl Intent {
    /// All core intents in registry order: the registry, kept once (their names are
    /// [`Intent::as_str`]'s).
    pub(crate) const CORE: &'static [Intent] = &[
        Intent::Request,
        Intent::Respond,
        Intent::Escalate,
        Intent::Handoff,
        Intent::Poll,
        Intent::Ack,
        Intent::Nack,
        Intent::Error,
        Intent::Broadcast,
        Intent::Revoke,
        Intent::Close,
    ];

    /// The registry's names as a diagnostic lists them: `REQUEST, RESPOND, …`.
    pub(crate) fn registry_list() -> String {
        let names: Vec<&str> = Self::CORE.iter().map(Intent::as_str).collect();
        names.join(", ")
    }

    /// Normalizes a raw value (case-insensitive; legacy names mapped).
    pub fn parse(raw: &str) -> Intent {
        Self::classify(raw).0
    }

    /// Normalizes a raw value and says whether it was core, legacy or unknown.
    pub(crate) fn classify(raw: &str) -> (Intent, IntentKind) {
        let raw = crate::protocol::lines::trim(raw);
        // Nearly every envelope writes its intent as the registry does: compared by length
        // and bytes first, before the case-insensitive search (this is asked on every
        // envelope read).
        if let Some(i) = Self::CORE.iter().find(|i| i.as_str() == raw) {
            return (i.clone(), IntentKind::Core);
        }
        if let Some(i) = Self::CORE
            .iter()
            .find(|i| i.as_str().eq_ignore_ascii_case(raw))
        {
            return (i.clone(), IntentKind::Core);
        }
        if let Some((_, i)) = LEGACY_INTENTS
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(raw))
        {
            return (i.clone(), IntentKind::Legacy);
        }
        (
            Intent::Unknown(raw.to_ascii_uppercase()),
            IntentKind::Unknown,
        )
    }

    /// The registry name (upper case).
    pub fn as_str(&self) -> &str {
        match self {
            Intent::Request => "REQUEST",
            Intent::Respond => "RESPOND",
            Intent::Escalate => "ESCALATE",
            Intent::Handoff => "HANDOFF",
            Intent::Poll => "POLL",
            Intent::Ack => "ACK",
            Intent::Nack => "NACK",
            Intent::Error => "ERROR",
            Intent::Broadcast => "BROADCAST",
            Intent::Revoke => "REVOKE",
            Intent::Close => "CLOSE",
            Intent::Unknown(s) => s,
        }
    }

    /// Whether a reply to this intent is a RESPOND (the ones that ask for an answer).
    pub(crate) fn expects_response(&self) -> bool {
        matches!(
            self,
            Intent::Request | Intent::Poll | Intent::Escalate | Intent::Handoff
        )
    }

    /// The intent the desk's reply to a message of intent `original` starts with: RESPOND
    /// to one that asks for an answer ([`Intent::expects_response`]; a message without an
    /// intent, as v1.0 writes them, asks too), ACK to any other. A RESPOND, BROADCAST or
    /// CLOSE is acknowledged: answering it with a REQUEST would ask its sender a question
    /// nobody put.
    pub(crate) fn reply_preset(original: Option<&Intent>) -> Intent {
        if original.is_none_or(Intent::expects_response) {
            Intent::Respond
        } else {
            Intent::Ack
        }
    }
}

impl fmt::Display for Intent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legacy_and_case() {
        assert_eq!(
            Intent::classify("question"),
            (Intent::Request, IntentKind::Legacy)
        );
        assert_eq!(
            Intent::classify("Note"),
            (Intent::Broadcast, IntentKind::Legacy)
        );
        assert_eq!(
            Intent::classify("respond"),
            (Intent::Respond, IntentKind::Core)
        );
        assert_eq!(
            Intent::classify("VOTE"),
            (Intent::Unknown("VOTE".into()), IntentKind::Unknown)
        );
        assert!(Intent::Poll.expects_response());
        assert!(!Intent::Ack.expects_response());
    }

    #[test]
    fn a_reply_answers_what_asks_and_acknowledges_the_rest() {
        for asks in ["REQUEST", "question", "POLL", "ESCALATE", "HANDOFF"] {
            let i = Intent::parse(asks);
            assert_eq!(Intent::reply_preset(Some(&i)), Intent::Respond, "{asks}");
        }
        for told in [
            "RESPOND",
            "ACK",
            "NACK",
            "ERROR",
            "BROADCAST",
            "REVOKE",
            "CLOSE",
            "X-CUSTOM",
        ] {
            let i = Intent::parse(told);
            assert_eq!(Intent::reply_preset(Some(&i)), Intent::Ack, "{told}");
        }
        // v1.0 without an intent asks.
        assert_eq!(Intent::reply_preset(None), Intent::Respond);
    }
}
