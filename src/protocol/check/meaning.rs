//! Whether two copies of one envelope say the same thing.
//!
//! A message id names one message, and its copies arrive changed by the way they came: a mail
//! gateway adds `meta: email`, every relay adds an audit hop, a chat window rewraps the body,
//! collapses its blank lines or turns its newlines into spaces, a terminal's paste or a
//! clipboard rewrites the line ends. The canonical form (`render`) undoes what it can; what is
//! left is decided here, by meaning rather than bytes:
//!
//! - what transports add is left out: `meta: email` (the gateway's record) and `meta: audit`
//!   (the relays'), and the `hash:` of a copy;
//! - whitespace says nothing: runs of spaces, tabs and line breaks in the body and in values
//!   read as one space, and the body's leading and trailing blank lines as none;
//! - names compare as parties do (trimmed, any case), intents by the registry (`QUESTION` is
//!   `REQUEST`), ids as they are stored (one case), header keys and META namespaces in any
//!   case, header order and META block order not at all;
//! - everything else is meaning: a word of the body, a value, a header added or gone, a
//!   signature that differs.
//!
//! Pure: two envelopes in, an answer out. The store asks it before it calls a copy under a
//! stored id a conflicting version.

use crate::protocol::{Envelope, Intent};

/// Namespaces a transport adds on the way, which say nothing of the message.
const TRANSPORT_NAMESPACES: [&str; 2] = [
    crate::protocol::namespaces::EMAIL,
    crate::protocol::namespaces::AUDIT,
];

/// Headers a copy carries of itself rather than of the message: the CRC of its own text.
const COPY_HEADERS: [&str; 1] = ["hash"];

/// `s` with every run of whitespace one space, and none at either end.
fn words(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for w in s.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
    }
    out
}

/// What an envelope means, as [`same_meaning`] compares it.
#[derive(Debug, PartialEq, Eq)]
struct Meaning {
    from: String,
    to: String,
    version: String,
    /// (key, value) of each header, sorted; the intent by the registry, ids as stored.
    headers: Vec<(String, String)>,
    /// (namespace, entries) of each META block but the transports', sorted.
    meta: Vec<(String, Vec<(String, String)>)>,
    body: Option<String>,
    /// The signature when there is one (`none` and empty are none).
    sig: Option<String>,
}

fn meaning(env: &Envelope) -> Meaning {
    let party = |s: &str| s.trim().to_lowercase();
    let mut headers: Vec<(String, String)> = env
        .headers
        .iter()
        .filter(|h| !COPY_HEADERS.iter().any(|k| k.eq_ignore_ascii_case(&h.key)))
        .map(|h| {
            let key = h.key.trim().to_ascii_lowercase();
            let value = match key.as_str() {
                "intent" => Intent::parse(h.value.trim()).to_string(),
                "thread" | "parent" | "message" => crate::protocol::id::key(&h.value).into_owned(),
                _ => words(&h.value),
            };
            (key, value)
        })
        .collect();
    headers.sort();
    let mut meta: Vec<(String, Vec<(String, String)>)> = env
        .meta
        .iter()
        .filter(|m| {
            !TRANSPORT_NAMESPACES
                .iter()
                .any(|ns| m.namespace.trim().eq_ignore_ascii_case(ns))
        })
        .map(|m| {
            let entries = m
                .entries
                .iter()
                .map(|(k, v)| (k.trim().to_string(), words(v)))
                .collect();
            (m.namespace.trim().to_ascii_lowercase(), entries)
        })
        .collect();
    meta.sort();
    let sig = env
        .sig
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty() && !s.eq_ignore_ascii_case("none"))
        .map(str::to_string);
    Meaning {
        from: party(&env.banner.from),
        to: party(&env.banner.to),
        version: env.banner.version.trim().to_ascii_lowercase(),
        headers,
        meta,
        body: env
            .body
            .as_deref()
            .map(|b| words(&crate::protocol::render::nfc(b))),
        sig,
    }
}

/// Whether `a` and `b`, two copies under one message id, say the same thing: equal once what
/// transports add and change is left out (see the module's rule). A copy that lost its
/// signature on the way is not the same as a signed one here; the store judges that case
/// itself (a signed copy of an unsigned message signs it, an unsigned copy of a signed one
/// is a duplicate).
pub(crate) fn same_meaning(a: &Envelope, b: &Envelope) -> bool {
    meaning(a) == meaning(b)
}

/// [`same_meaning`] with the signatures left out of the comparison.
pub(crate) fn same_but_signature(a: &Envelope, b: &Envelope) -> bool {
    let (mut a, mut b) = (meaning(a), meaning(b));
    a.sig = None;
    b.sig = None;
    a == b
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Options, extract};

    const ENV: &str = "[[CLAUDE→CHATGPT v1]]\nuser: kalle\nsession: 2026-12-01T21Z abc\n\
thread: 01J9J3D3M6A4M3WQX8G1ZQ0S7K\nmessage: 01J9J3DBC4N7P2Q3R5S7T9V1V2\ncontext: trip\n\
intent: QUESTION\nmeta: routing\nX-Priority: high\nbody: |\n  Which date works?\n\n  \
Options: DEC15 | DEC22\nsig: none\n[[END]]\n";

    fn read(text: &str) -> Envelope {
        extract(text, &Options::default()).envelopes[0]
            .envelope
            .clone()
    }

    #[test]
    fn what_transports_add_or_change_is_no_meaning() {
        let a = read(ENV);
        let mailed = ENV.replace(
            "body: |",
            "meta: email\nMessage-ID: <x@y>\nSubject: hi\nmeta: audit\nReceived-By: desk\nbody: |",
        );
        assert!(same_meaning(&a, &read(&mailed)));
        let collapsed = ENV.replace("works?\n\n  Options", "works?    Options");
        assert!(same_meaning(&a, &read(&collapsed)));
        let renamed = ENV
            .replace("QUESTION", "REQUEST")
            .replace("CLAUDE", "Claude");
        assert!(same_meaning(&a, &read(&renamed)));
        let lower_ids = ENV.replace("01J9J3DBC4N7P2Q3R5S7T9V1V2", "01j9j3dbc4n7p2q3r5s7t9v1v2");
        assert!(same_meaning(&a, &read(&lower_ids)));
    }

    #[test]
    fn a_change_of_meaning_is_one() {
        let a = read(ENV);
        for (from, to) in [
            ("Which date", "Which time"),
            ("DEC22", "DEC29"),
            ("context: trip", "context: work"),
            ("intent: QUESTION", "intent: BROADCAST"),
            ("X-Priority: high", "X-Priority: low"),
            ("[[CLAUDE→CHATGPT", "[[CLAUDE→GEMINI"),
            ("sig: none", "sig: ed25519:pkid=k;sig=AAAA"),
        ] {
            assert!(
                !same_meaning(&a, &read(&ENV.replace(from, to))),
                "{from} → {to}"
            );
        }
        let signed = read(&ENV.replace("sig: none", "sig: ed25519:pkid=k;sig=AAAA"));
        assert!(same_but_signature(&a, &signed));
    }
}
