//! The primer: a short text (`assets/primer.md`) that teaches a chat model to answer in
//! crosstalk envelopes, then the first envelope of a new conversation with a contact. Used
//! by `crosstalk primer` and by `N` in the app, so both hand the model the same words.

use crate::contacts::{AddressBook, Contact};
use crate::ids::IdGenerator;
use crate::protocol::Envelope;

/// The primer's text, with an example envelope inside it (a test checks that it parses).
pub(crate) const PRIMER: &str = include_str!("../assets/primer.md");

/// What starting a conversation needs from the operator.
#[derive(Debug, Clone)]
pub struct Opening<'a> {
    /// The sender (`[compose] from`).
    pub from: &'a str,
    /// The `user` header.
    pub user: &'a str,
    /// What the conversation is about (the `context` header, and the body's first words).
    pub context: &'a str,
}

/// The first envelope to `to` (a contact's name or any address): new thread and message
/// ids, a fresh session, intent REQUEST.
pub(crate) fn first_envelope(
    book: &AddressBook,
    to: &str,
    o: &Opening<'_>,
    ids: &IdGenerator,
) -> Envelope {
    let mut env = Envelope::new(book.resolve(o.from), book.resolve(to));
    env.set_header("user", o.user);
    env.set_header("session", crate::ids::new_session());
    let id = ids.next_id();
    env.set_header("thread", id.as_str());
    env.set_header("message", id.as_str());
    if !o.context.trim().is_empty() {
        env.set_header("context", o.context.trim());
    }
    env.set_header("intent", "REQUEST");
    let body = if o.context.trim().is_empty() {
        "Hello. Please answer with one envelope as described above.".to_string()
    } else {
        format!(
            "{}\n\nPlease answer with one envelope as described above.",
            o.context.trim()
        )
    };
    env.body = Some(body);
    env.sig = Some("none".into());
    env
}

/// What comes before the envelope: the contact's preamble (when it has one), then the
/// primer, then a blank line.
pub(crate) fn primer_prefix(contact: Option<&Contact>) -> String {
    let mut text = String::new();
    if let Some(p) = contact
        .and_then(|c| c.preamble.as_deref())
        .filter(|p| !p.trim().is_empty())
    {
        text.push_str(p.trim_end());
        text.push_str("\n\n");
    }
    text.push_str(PRIMER.trim_end());
    text.push_str("\n\n");
    text
}

/// The whole text handed to the model: [`primer_prefix`], then the envelope in canonical
/// form.
pub(crate) fn primer_text(contact: Option<&Contact>, env: &Envelope) -> String {
    let mut text = primer_prefix(contact);
    text.push_str(&crate::protocol::render(env));
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Options, extract};

    #[test]
    fn the_primers_example_envelope_parses_without_errors() {
        let ex = extract(PRIMER, &Options::default());
        assert_eq!(ex.envelopes.len(), 1, "{:?}", ex.diagnostics);
        let d = &ex.envelopes[0].diagnostics;
        assert!(d.iter().all(|d| !d.is_error()), "{d:?}");
    }

    #[test]
    fn the_primer_text_ends_in_a_valid_first_envelope_to_the_contact() {
        let book = AddressBook {
            contacts: vec![Contact {
                name: "Claude".into(),
                address: Some("claude://session/1".into()),
                fence: false,
                preamble: Some("You are talking to Kalle's relay.".into()),
                ..Default::default()
            }],
            fenced_recipients: Vec::new(),
        };
        let o = Opening {
            from: "human://kalle",
            user: "kalle",
            context: "trip planning",
        };
        let env = first_envelope(&book, "claude", &o, &IdGenerator::new());
        let text = primer_text(book.find("claude"), &env);
        assert!(text.starts_with("You are talking to Kalle's relay.\n\n# How to answer"));
        let ex = extract(&text, &Options::default());
        assert_eq!(ex.envelopes.len(), 2);
        let first = &ex.envelopes[1];
        assert!(
            first.diagnostics.iter().all(|d| !d.is_error()),
            "{:?}",
            first.diagnostics
        );
        assert_eq!(first.envelope.banner.to, "claude://session/1");
        assert_eq!(first.envelope.banner.from, "human://kalle");
        assert_eq!(first.envelope.banner.version, "v1");
        assert_eq!(first.envelope.context(), Some("trip planning"));
        assert_eq!(first.envelope.intent_raw(), Some("REQUEST"));
        assert!(first.envelope.session().is_some());
    }
}
