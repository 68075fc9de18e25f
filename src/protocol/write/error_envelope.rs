//! ERROR replies: the envelope a receiver sends back when a message cannot be handled, built
//! the way the spec shows (direction swapped, conversation ids copied, `meta: error`).

use crate::protocol::address::check_address;
use crate::protocol::namespaces;
use crate::protocol::{Diagnostic, Envelope, Header, MetaBlock, NewIds, is_id};

/// The error taxonomy: code and the default reason.
pub const ERROR_CODES: [(&str, &str); 8] = [
    ("E-ROUTE", "Routing failed, destination unreachable"),
    ("E-CONSENT", "Consent denied or expired"),
    ("E-FORMAT", "Malformed envelope"),
    ("E-TOO-LARGE", "Message exceeds size limits"),
    ("E-PERM", "Permission denied"),
    ("E-UNSUPPORTED", "Feature not supported"),
    ("E-TIMEOUT", "Response timeout"),
    ("E-RATE", "Rate limit exceeded"),
];

/// Whether `code` is in the taxonomy (exact, upper-case, as the spec writes them).
pub(crate) fn is_error_code(code: &str) -> bool {
    ERROR_CODES.iter().any(|(c, _)| *c == code)
}

/// The taxonomy's codes as a diagnostic lists them: `E-ROUTE, E-CONSENT, …`.
pub(crate) fn code_list() -> String {
    let codes: Vec<&str> = ERROR_CODES.iter().map(|(c, _)| *c).collect();
    codes.join(", ")
}

/// The default reason for a taxonomy code.
pub(crate) fn default_reason(code: &str) -> Option<&'static str> {
    ERROR_CODES
        .iter()
        .find(|(c, _)| *c == code)
        .map(|(_, r)| *r)
}

/// Builds the ERROR reply to `original` (or to text that did not parse, when `None`).
///
/// `diagnostics` are listed in the body so the sender sees what was wrong, line by line.
pub fn error_envelope(
    original: Option<&Envelope>,
    code: &str,
    reason: Option<&str>,
    diagnostics: &[Diagnostic],
    ids: &dyn NewIds,
) -> Envelope {
    // The reply must itself be valid whatever it answers: a bad address, version or id of
    // the original is not copied (the ids go to `meta: error`, so the sender can still
    // match the reply to what it sent).
    let address = |a: &str, fallback: &str| {
        if check_address(a).is_ok() {
            a.to_string()
        } else {
            fallback.to_string()
        }
    };
    let (from, to, version) = match original {
        Some(o) => (
            address(&o.banner.to, "SYSTEM"),
            address(&o.banner.from, "UNKNOWN"),
            if o.banner
                .version
                .trim_start_matches(['v', 'V'])
                .split('.')
                .next()
                == Some("1")
            {
                o.banner.version.clone()
            } else {
                "v1".to_string()
            },
        ),
        None => (
            "SYSTEM".to_string(),
            "UNKNOWN".to_string(),
            "v1".to_string(),
        ),
    };
    let mut env = Envelope::new(from, to);
    env.banner.version = version;
    let copy = |key: &str| original.and_then(|o| o.header(key)).map(str::to_string);
    let parent = copy("message").filter(|v| is_id(v));
    system_reply_headers(&mut env, original, parent, "ERROR", ids);
    let reason = reason
        .map(str::to_string)
        .or_else(|| default_reason(code).map(str::to_string))
        .unwrap_or_else(|| "Error".into());
    let mut entries = vec![
        ("Code".to_string(), code.to_string()),
        ("Reason".to_string(), reason.clone()),
    ];
    if let Some(intent) = original.and_then(Envelope::intent) {
        entries.push(("Original-Intent".to_string(), intent.to_string()));
    }
    for (key, entry) in [
        ("message", "Original-Message"),
        ("thread", "Original-Thread"),
    ] {
        if let Some(bad) = copy(key).filter(|v| !is_id(v)) {
            entries.push((entry.to_string(), bad));
        }
    }
    env.meta.push(MetaBlock {
        namespace: namespaces::ERROR.into(),
        entries,
    });
    let mut body = reason;
    body.push('.');
    for d in diagnostics {
        body.push_str(&format!(
            "\nline {}, column {}: {}: {} [{}]",
            d.line, d.column, d.severity, d.message, d.code
        ));
    }
    env.body = Some(body);
    env.sig = Some("none".into());
    env
}

/// The headers of a reply the system writes to `original` (an ERROR, an ACK): `user: system`,
/// the conversation's session, thread (when it is a valid id) and context copied, `parent`,
/// a fresh `message` and `intent`, in the canonical order.
pub(crate) fn system_reply_headers(
    env: &mut Envelope,
    original: Option<&Envelope>,
    parent: Option<String>,
    intent: &str,
    ids: &dyn NewIds,
) {
    let copy = |key: &str| original.and_then(|o| o.header(key)).map(str::to_string);
    let fields = [
        ("user", Some("system".to_string())),
        ("session", copy("session")),
        ("thread", copy("thread").filter(|v| is_id(v))),
        ("parent", parent),
        ("message", Some(ids.next_id())),
        ("context", copy("context")),
        ("intent", Some(intent.to_string())),
    ];
    for (key, value) in fields {
        if let Some(value) = value {
            env.headers.push(Header {
                key: key.to_string(),
                value,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reply_swaps_and_copies() {
        let mut o = Envelope::new("CLAUDE", "chatgpt://thread/xyz");
        for (k, v) in [
            ("session", "2025-10-09T16Z abc123"),
            ("thread", "01J9J3D3M6A4M3WQX8G1ZQ0S7K"),
            ("message", "01J9J3DBC4N7P2Q3R5S7T9V1V2"),
            ("context", "topic"),
            ("intent", "question"),
        ] {
            o.set_header(k, v);
        }
        let e = error_envelope(
            Some(&o),
            "E-ROUTE",
            None,
            &[],
            &crate::ids::IdGenerator::new(),
        );
        assert_eq!(e.banner.from, "chatgpt://thread/xyz");
        assert_eq!(e.banner.to, "CLAUDE");
        assert_eq!(e.parent(), Some("01J9J3DBC4N7P2Q3R5S7T9V1V2"));
        assert_eq!(e.thread(), o.thread());
        assert_eq!(e.intent_raw(), Some("ERROR"));
        let m = e.meta_block("error").unwrap();
        assert_eq!(m.get("Code"), Some("E-ROUTE"));
        assert_eq!(m.get("Original-Intent"), Some("REQUEST"));
        assert!(crate::protocol::is_id(e.message().unwrap()));
    }

    #[test]
    fn invalid_ids_and_addresses_are_not_copied() {
        let mut o = Envelope::new("two words", "CLAUDE");
        o.banner.version = "v2".into();
        o.set_header("thread", "01J9J3D3M6A4M3WQX8G1ZQ0S7K");
        o.set_header("message", "01J9J3D3M6A4M3WQX8G1ZQ0SUU");
        let e = error_envelope(
            Some(&o),
            "E-FORMAT",
            None,
            &[],
            &crate::ids::IdGenerator::new(),
        );
        assert_eq!(
            (e.banner.from.as_str(), e.banner.to.as_str()),
            ("CLAUDE", "UNKNOWN")
        );
        assert_eq!(e.banner.version, "v1");
        assert_eq!(e.parent(), None);
        assert_eq!(e.thread(), o.thread());
        let m = e.meta_block("error").unwrap();
        assert_eq!(
            m.get("Original-Message"),
            Some("01J9J3D3M6A4M3WQX8G1ZQ0SUU")
        );
    }
}
