//! The canonical form: one way to write any envelope, used for `fmt`, for signing and for
//! everything crosstalk itself composes. `docs/PROTOCOL.md` specifies it.
//!
//! LF line endings, Unicode NFC; banner `[[FROM→TO vN]]`; the known headers in the order
//! user, session, thread, parent, message, context, intent, then unknown headers as received;
//! META blocks each after a blank line, and a blank line before the body when there are any;
//! `body: |` with a two-space indent (`body: |2` when the first body line itself starts with
//! whitespace, so that whitespace survives); then `sig:`, `hash:` and `[[END]]`. An envelope with
//! only v1.0 headers and no META renders exactly as the rc1 conformance payloads.

use std::fmt::Write as _;

use unicode_normalization::{IsNormalized, UnicodeNormalization, is_nfc_quick};

use crate::protocol::Envelope;
use crate::protocol::lines;

/// Whether `s` is not in Unicode NFC (or may not be: the quick check cannot always tell).
pub(crate) fn needs_nfc(s: &str) -> bool {
    !s.is_ascii() && is_nfc_quick(s.chars()) != IsNormalized::Yes
}

/// Text in Unicode NFC (a cheap check first: most text already is).
pub fn nfc(s: &str) -> String {
    if s.is_ascii() || is_nfc_quick(s.chars()) == IsNormalized::Yes {
        return s.to_string();
    }
    s.nfc().collect()
}

/// The canonical text of an envelope, ending with `[[END]]` and a newline.
pub fn render(env: &Envelope) -> String {
    render_as(env, BodyKey::Body)
}

/// Which key introduces the body. v1.0 replies write `response: |`, which says "this answers
/// the session's latest message"; writing it as `body:` would drop that meaning, so the
/// canonical form of a parsed envelope keeps the key it was received with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyKey {
    /// `body: |`, the v1.1 form.
    Body,
    /// `response: |`, the v1.0 reply form.
    Response,
}

/// The canonical text of a parsed envelope: as [`render`], with the body under the key it
/// was received with (see [`BodyKey`]).
pub(crate) fn render_parsed(p: &crate::protocol::Parsed) -> String {
    render_as(&p.envelope, body_key(p))
}

/// The body key a parsed envelope was received with.
pub fn body_key(p: &crate::protocol::Parsed) -> BodyKey {
    if p.reply_form {
        BodyKey::Response
    } else {
        BodyKey::Body
    }
}

/// The canonical text with the body under `key`.
pub fn render_as(env: &Envelope, key: BodyKey) -> String {
    nfc(&render_as_written(env, key))
}

/// The canonical text with the body under `key`, but every value as the envelope holds it
/// rather than in NFC: what a backup writes of an envelope whose text normalization would
/// change (a body is kept exactly as written, see docs/PROTOCOL.md §1), so that importing the
/// backup gives back the same bytes. Its NFC form is [`render_as`].
pub(crate) fn render_as_written(env: &Envelope, key: BodyKey) -> String {
    let mut out = text_with(env, key);
    if let Some(sig) = &env.sig {
        field(&mut out, "sig", sig);
    }
    if let Some(hash) = &env.hash {
        field(&mut out, "hash", hash);
    }
    out.push_str("[[END]]\n");
    out
}

/// Whether anything the envelope holds is not in NFC, so that its canonical text differs from
/// its text as written ([`render_as_written`]).
pub(crate) fn holds_unnormalized(env: &Envelope) -> bool {
    let b = &env.banner;
    [&b.from, &b.to, &b.version]
        .into_iter()
        .any(|s| needs_nfc(s))
        || env.body.as_deref().is_some_and(needs_nfc)
        || (env.headers.iter()).any(|h| needs_nfc(&h.key) || needs_nfc(&h.value))
        || env.meta.iter().any(|m| {
            needs_nfc(&m.namespace) || (m.entries.iter()).any(|(k, v)| needs_nfc(k) || needs_nfc(v))
        })
        || [&env.sig, &env.hash]
            .into_iter()
            .flatten()
            .any(|s| needs_nfc(s))
}

/// The signable portion in canonical form: banner through the last body line, each line
/// ending in LF, NFC, without audit hops (relays add them to signed envelopes: see
/// [`crate::protocol::audit`]). These are the bytes a signature covers.
pub(crate) fn signable(env: &Envelope) -> String {
    nfc(&signable_raw(env, BodyKey::Body))
}

/// The signable portion of a parsed envelope, with the body under the key it was received
/// with. The key is part of what a signature covers because it carries meaning: `response:`
/// without `intent:` says RESPOND. Were a received `response:` reply checked against a text
/// saying `body:`, anyone could turn a signed `body:` into `response:` (or back) and change
/// what the envelope asks for while it still verified. crosstalk's own signing writes `body:`
/// and an explicit `intent: RESPOND` instead (see `cli::sign_cmd`).
pub(crate) fn signable_parsed(p: &crate::protocol::Parsed) -> String {
    nfc(&signable_raw(&p.envelope, body_key(p)))
}

fn signable_raw(env: &Envelope, key: BodyKey) -> String {
    text_with(&crate::protocol::audit::without_hops(env), key)
}

/// The canonical text from the banner through the body.
fn text_with(env: &Envelope, key: BodyKey) -> String {
    let mut out = String::with_capacity(256 + env.body.as_ref().map_or(0, String::len));
    let b = &env.banner;
    let _ = writeln!(
        out,
        "[[{}→{} {}]]",
        one_line(&b.from),
        one_line(&b.to),
        one_line(&b.version)
    );
    for h in env.canonical_headers() {
        field(&mut out, &h.key, &h.value);
    }
    for m in &env.meta {
        out.push('\n');
        meta_block(&mut out, m);
    }
    if let Some(body) = &env.body {
        if !env.meta.is_empty() {
            out.push('\n');
        }
        let first = body.lines().find(|l| !lines::is_blank(l));
        let needs_indicator = first.is_some_and(|l| l.starts_with(lines::is_indent));
        out.push_str(match key {
            BodyKey::Body => "body",
            BodyKey::Response => "response",
        });
        out.push_str(if needs_indicator { ": |2\n" } else { ": |\n" });
        if !body.is_empty() {
            for line in body.split('\n') {
                let line = line.strip_suffix('\r').unwrap_or(line);
                if !line.is_empty() {
                    out.push_str("  ");
                    out.push_str(line);
                }
                out.push('\n');
            }
        }
    }
    out
}

/// A META block. Entries named like the envelope's own lower-case keys (`intent`, `parent`,
/// `body`) occur only in the older `meta: |` layout, where their indentation keeps them
/// inside the block; written as plain `Key: value` lines they would read back as headers and
/// the body, so such a block is written in that layout again. A value over several lines
/// writes its further lines indented by two spaces more than they are within the value, which
/// reads back as continuation lines with the same nesting.
fn meta_block(out: &mut String, m: &crate::protocol::MetaBlock) {
    let nested = m.namespace == "legacy"
        && m.entries
            .iter()
            .any(|(k, _)| crate::protocol::model::STRUCTURAL_KEYS.contains(&k.as_str()));
    if nested {
        out.push_str("meta: |\n");
        for (k, v) in &m.entries {
            out.push_str("  ");
            field(out, k, v);
        }
        return;
    }
    field(out, "meta", &m.namespace);
    for (k, v) in &m.entries {
        let mut parts = v.split('\n');
        field(out, k, parts.next().unwrap_or_default());
        // Trailing spaces go, the indentation inside the value stays (nested YAML).
        for more in parts
            .map(str::trim_end)
            .filter(|l| !l.trim_start().is_empty())
        {
            out.push_str("  ");
            out.push_str(more);
            out.push('\n');
        }
    }
}

/// `key: value`, or `key:` for an empty value (no trailing space).
fn field(out: &mut String, key: &str, value: &str) {
    out.push_str(key);
    out.push(':');
    if !value.is_empty() {
        out.push(' ');
        out.push_str(&one_line(value));
    }
    out.push('\n');
}

/// Header values are single-line; a line break that slipped into one (from a program that
/// built the envelope) becomes a space rather than breaking the envelope's structure.
fn one_line(s: &str) -> std::borrow::Cow<'_, str> {
    if s.contains(['\n', '\r']) {
        std::borrow::Cow::Owned(s.replace(['\n', '\r'], " "))
    } else {
        std::borrow::Cow::Borrowed(s)
    }
}

/// The `hash:` value crosstalk writes: CRC32 (IEEE) in lower-case hex over the text from
/// `[[` through the `sig:` line, LF-terminated.
pub(crate) fn crc32_hex(text: &str) -> String {
    format!("{:08x}", crc32fast::hash(text.as_bytes()))
}

/// The canonical text from the banner through the `sig:` line, which `hash:` covers.
pub(crate) fn hashed_portion(env: &Envelope) -> String {
    hashed_as(env, BodyKey::Body)
}

/// [`hashed_portion`] of a parsed envelope, with the body under the key it was received with
/// (as [`signable_parsed`], and for the same reason).
pub(crate) fn hashed_portion_parsed(p: &crate::protocol::Parsed) -> String {
    hashed_as(&p.envelope, body_key(p))
}

fn hashed_as(env: &Envelope, key: BodyKey) -> String {
    let mut out = signable_raw(env, key);
    if let Some(sig) = &env.sig {
        field(&mut out, "sig", sig);
    }
    nfc(&out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Header, MetaBlock};

    fn env() -> Envelope {
        let mut e = Envelope::new("BROTHER", "CLAUDE");
        for (k, v) in [
            ("intent", "REQUEST"),
            ("user", "kalle"),
            ("X-Custom", "kept"),
            ("session", "2025-10-09T17Z b447a4"),
            ("context", "canonicalization-spec"),
        ] {
            e.headers.push(Header {
                key: k.into(),
                value: v.into(),
            });
        }
        e.body = Some("Hello, world.".into());
        e.sig = Some("none".into());
        e
    }

    #[test]
    fn canonical_order_and_layout() {
        let mut e = env();
        e.meta.push(MetaBlock {
            namespace: "routing".into(),
            entries: vec![("X-Priority".into(), "high".into())],
        });
        assert_eq!(
            render(&e),
            "[[BROTHER→CLAUDE v1]]\nuser: kalle\nsession: 2025-10-09T17Z b447a4\ncontext: canonicalization-spec\nintent: REQUEST\nX-Custom: kept\n\nmeta: routing\nX-Priority: high\n\nbody: |\n  Hello, world.\nsig: none\n[[END]]\n"
        );
    }

    #[test]
    fn indicator_for_leading_whitespace_and_blank_lines() {
        let mut e = Envelope::new("A", "B");
        e.body = Some("    code\n\nplain".into());
        assert!(render(&e).contains("body: |2\n      code\n\n  plain\n[[END]]"));
        e.body = Some(String::new());
        assert!(render(&e).ends_with("body: |\n[[END]]\n"));
    }

    #[test]
    fn nfc_applied() {
        let mut e = Envelope::new("A", "B");
        e.body = Some("Cafe\u{301}".into());
        assert!(render(&e).contains("Caf\u{e9}"));
    }
}
