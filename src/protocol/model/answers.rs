//! What a `body:` without `intent:` means: the one rule `parse` (the text alone) and `import`
//! (the text and the store) read it by, so that the two agree.
//!
//! Such an envelope is a reply, read as RESPOND like the v1.0 `response:` form, when it
//! answers a message:
//! - it names one as `parent`; or
//! - it is placed by its session ([`placed_by_session`]: no `thread:`, a `session:`) and an
//!   earlier envelope of that session is there for it to answer. v1.0 threads a session's
//!   envelopes in order, each answering the one before it (`docs/PROTOCOL.md` §10).
//!
//! Otherwise it has no intent. The earlier envelope can be in the same input, which both
//! readers see ([`Sessions`]), or stored, which only import sees: so they agree on every
//! envelope whose session begins in the input.

use std::collections::HashSet;

use crate::protocol::{Envelope, Intent, Parsed};

/// The session an envelope is placed by: its `session:` when it names no `thread:` (a v1.0
/// envelope, or one with ids but no thread). It then answers the message before it in that
/// session; one naming a thread answers only its `parent:`.
pub(crate) fn placed_by_session(env: &Envelope) -> Option<&str> {
    match (env.thread(), env.session()) {
        (None, Some(session)) => Some(session),
        _ => None,
    }
}

/// The sessions of the envelopes an input held so far, read in order: what each next
/// envelope can answer from the text alone.
#[derive(Debug, Default)]
pub struct Sessions {
    seen: HashSet<String>,
}

impl Sessions {
    /// Reads `p`, the next envelope of the input: its intent as import would store it into
    /// a database holding nothing of its session before this input. Then counts its session
    /// when it is one an import stores (it has no errors): a rejected envelope is no message
    /// for a later one to answer.
    pub fn intent(&mut self, p: &Parsed) -> Option<Intent> {
        let env = &p.envelope;
        let answers = env.parent().is_some()
            || placed_by_session(env).is_some_and(|session| self.seen.contains(session));
        if let Some(session) = env.session().filter(|_| !p.has_errors()) {
            if !self.seen.contains(session) {
                self.seen.insert(session.to_string());
            }
        }
        p.intent_answering(answers)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Options, extract};

    fn intents(text: &str) -> Vec<Option<String>> {
        let mut sessions = Sessions::default();
        extract(text, &Options::default())
            .envelopes
            .iter()
            .map(|p| sessions.intent(p).map(|i| i.to_string()))
            .collect()
    }

    fn v10(session: &str, body: &str) -> String {
        format!("[[A→B v1]]\nuser: u\nsession: {session}\nbody: |\n  {body}\nsig: none\n[[END]]\n")
    }

    #[test]
    fn a_body_without_intent_answers_an_earlier_envelope_of_its_session() {
        let text = [
            v10("s1", "a"),
            v10("s2", "b"),
            v10("s1", "c"),
            v10("s2", "d"),
        ]
        .concat();
        let respond = Some("RESPOND".to_string());
        assert_eq!(intents(&text), [None, None, respond.clone(), respond]);
    }

    #[test]
    fn a_rejected_envelope_or_one_naming_a_thread_is_not_placed_by_session() {
        // An id that is not one is an error: nothing is stored for a later one to answer.
        let rejected = v10("s1", "a").replace("user: u\n", "user: u\nmessage: not-an-id\n");
        let found = extract(&rejected, &Options::default());
        assert!(found.envelopes[0].has_errors());
        assert_eq!(intents(&[rejected, v10("s1", "b")].concat()), [None, None]);
        // One naming its thread answers only its parent.
        let threaded =
            v10("s1", "b").replace("user: u\n", "user: u\nthread: 01K8Z8X4V0J5Q7N2R3T6W9Y1AB\n");
        assert_eq!(intents(&[v10("s1", "a"), threaded].concat()), [None, None]);
    }
}
