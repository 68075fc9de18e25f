//! ERROR replies: the envelope a receiver sends back when a message cannot be handled, built
//! the way the spec shows (direction swapped, conversation ids copied, `meta: error`).

use super::{Diagnostic, Envelope, Header, IdGenerator, MetaBlock};

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
pub fn is_error_code(code: &str) -> bool {
    ERROR_CODES.iter().any(|(c, _)| *c == code)
}

/// The default reason for a taxonomy code.
pub fn default_reason(code: &str) -> Option<&'static str> {
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
    ids: &IdGenerator,
) -> Envelope {
    let (from, to, version) = match original {
        Some(o) => (
            o.banner.to.clone(),
            o.banner.from.clone(),
            o.banner.version.clone(),
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
    let mut push = |key: &str, value: Option<String>| {
        if let Some(value) = value {
            env.headers.push(Header {
                key: key.to_string(),
                value,
            });
        }
    };
    push("user", Some("system".into()));
    push("session", copy("session"));
    push("thread", copy("thread"));
    push("parent", copy("message"));
    push("message", Some(ids.next_id()));
    push("context", copy("context"));
    push("intent", Some("ERROR".into()));
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
    env.meta.push(MetaBlock {
        namespace: "error".into(),
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
        let e = error_envelope(Some(&o), "E-ROUTE", None, &[], &IdGenerator::new());
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
}
