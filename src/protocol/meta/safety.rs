//! `meta: safety`, the community namespace for content warnings and allowed use: what the
//! sender says a reader should know before reading the body (`Content-Warning`), and what the
//! text may be used for (`Allowed-Use`, a comma-separated list such as `general, no_training`).
//!
//! The desk shows it ahead of the body, and enforces nothing: a warning is the sender's claim,
//! kept and shown as written, and allowed uses are words between the two ends of a relay. Keys
//! are read in any case; other keys of the block stay in it, shown as any META entry is.

use crate::protocol::Envelope;
use crate::protocol::namespaces;

/// Keys a content warning is written under (the first is the one this desk writes).
const WARNING_KEYS: &[&str] = &["Content-Warning", "Warning", "CW"];

/// Keys an allowed use is written under.
const USE_KEYS: &[&str] = &["Allowed-Use", "Use"];

/// What an envelope's `meta: safety` says.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Safety {
    /// The content warnings, in the order written (empty values left out).
    pub warnings: Vec<String>,
    /// The uses the sender allows, each trimmed, in the order written.
    pub allowed_use: Vec<String>,
}

impl Safety {
    /// Whether it says anything: a warning or an allowed use.
    pub fn is_empty(&self) -> bool {
        self.warnings.is_empty() && self.allowed_use.is_empty()
    }
}

/// Whether `key` writes a content warning.
pub(crate) fn is_warning_key(key: &str) -> bool {
    WARNING_KEYS
        .iter()
        .any(|k| k.eq_ignore_ascii_case(key.trim()))
}

/// Whether `key` writes allowed uses.
pub(crate) fn is_use_key(key: &str) -> bool {
    USE_KEYS.iter().any(|k| k.eq_ignore_ascii_case(key.trim()))
}

/// The reading of `env`'s `meta: safety` blocks, all of them together; `None` when it has
/// none or they say nothing a reader can act on.
pub fn reading(env: &Envelope) -> Option<Safety> {
    let mut s = Safety::default();
    for block in env.meta.iter().filter(|b| is_safety(&b.namespace)) {
        for (k, v) in &block.entries {
            let v = v.trim();
            if v.is_empty() {
                continue;
            }
            if is_warning_key(k) {
                s.warnings.push(v.to_string());
            } else if is_use_key(k) {
                let uses = v.split(',').map(str::trim).filter(|u| !u.is_empty());
                s.allowed_use.extend(uses.map(str::to_string));
            }
        }
    }
    (!s.is_empty()).then_some(s)
}

/// Whether a block's namespace is this one (in any case, as other tools may write it).
pub(crate) fn is_safety(namespace: &str) -> bool {
    namespace.trim().eq_ignore_ascii_case(namespaces::SAFETY)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Options, extract};

    fn read(meta: &str) -> Option<Safety> {
        let text = format!(
            "[[A→B v1.1]]\nthread: 01K0000000000000000000000A\nmessage: 01K0000000000000000000000B\nintent: INFORM\n{meta}body: |\n  hi\nsig: none\n[[END]]\n"
        );
        let ex = extract(&text, &Options::default());
        reading(&ex.envelopes[0].envelope)
    }

    #[test]
    fn warnings_and_uses_are_read_in_any_case_of_key_and_namespace() {
        let s = read("meta: Safety\n  content-warning: graphic injury\n  CW: self-harm\n  ALLOWED-USE: general, no_training ,\n  X-Other: kept\n").unwrap();
        assert_eq!(s.warnings, ["graphic injury", "self-harm"]);
        assert_eq!(s.allowed_use, ["general", "no_training"]);
    }

    #[test]
    fn a_block_that_says_nothing_a_reader_acts_on_reads_as_none() {
        assert_eq!(
            read("meta: safety\n  Content-Warning:  \n  X-Other: kept\n"),
            None
        );
        assert_eq!(read("meta: routing\n  X-Priority: high\n"), None);
        assert_eq!(read(""), None);
    }

    #[test]
    fn several_blocks_read_together() {
        let s =
            read("meta: safety\n  Content-Warning: one\nmeta: safety\n  Use: internal\n").unwrap();
        assert_eq!(
            (s.warnings.len(), s.allowed_use.as_slice()),
            (1, &["internal".to_string()][..])
        );
    }
}
