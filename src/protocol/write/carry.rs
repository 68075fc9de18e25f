//! Which text of a stored envelope goes on to the next window, file or peer.
//!
//! The canonical form is the one to carry: repaired, ids filled in on receipt, one layout
//! for every window. A signature or a `hash:` covers bytes, though, and the canonical form
//! may change the bytes they cover: ids written into a v1.0 envelope that came without them,
//! `intent: RESPOND` written into a reply, a tab-indented body re-indented. Carried that way,
//! a signed envelope fails at the next desk, which then warns that the sender's key changed.
//!
//! So an envelope that carries a signature or a hash goes on in the first of these forms
//! that still covers what its own text did: the canonical form as stored, the canonical form
//! of the envelope as received (no ids filled in), or the envelope exactly as received
//! (transport wrapping undone). A verifier tries the text as received and its canonical
//! rendering, so the last form verifies wherever the first did; the others are taken only
//! when every text the signature could have covered is one they offer too.

use super::render::{hashed_portion_parsed, nfc, render, render_parsed, signable_parsed};
use crate::protocol::audit;
use crate::protocol::signature::{SigValue, parse_sig};
use crate::protocol::{MetaBlock, Options, Parsed, extract};

/// The text to carry an envelope in, given its text as received (transport wrapping undone,
/// as the store keeps it) and its stored canonical form; with `hop`, this desk's audit hop
/// (see [`audit::append_hop`]), which no signature covers, is added.
pub fn carried(received: &str, canonical: &str, hop: Option<&audit::Relay<'_>>) -> String {
    carried_as(received, canonical, hop).0
}

/// [`carried`], and whether the envelope goes as something else than its stored canonical
/// form (then `fmt` says so).
pub(crate) fn carried_as(
    received: &str,
    canonical: &str,
    hop: Option<&audit::Relay<'_>>,
) -> (String, bool) {
    let text = match pick(received, canonical) {
        None | Some(Form::Canonical) => return (with_hop_rendered(canonical, hop), false),
        Some(Form::ReceivedCanonical(p)) => {
            let mut env = p.envelope.clone();
            if let Some(relay) = hop {
                audit::append_hop(&mut env, relay);
            }
            render_as_received(&p, &env)
        }
        Some(Form::AsReceived(p)) => match hop {
            None => received.to_string(),
            Some(relay) => {
                let mut env = p.envelope.clone();
                audit::append_hop(&mut env, relay);
                match env.meta.last() {
                    Some(block) => insert_block(received, &p, block),
                    None => received.to_string(),
                }
            }
        },
    };
    (text, true)
}

enum Form {
    Canonical,
    ReceivedCanonical(Box<Parsed>),
    AsReceived(Box<Parsed>),
}

/// The form to carry; `None` when nothing covers the text (no signature, no hash), so the
/// canonical form goes.
fn pick(received: &str, canonical: &str) -> Option<Form> {
    if received == canonical {
        return None;
    }
    let p = first(received)?;
    let signed = p
        .envelope
        .sig
        .as_deref()
        .is_some_and(|s| parse_sig(s).is_ok_and(|s| s != SigValue::None));
    if !signed && p.envelope.hash.is_none() {
        return None;
    }
    let need = covered(&p, received);
    let offers = |text: &str| {
        first(text).is_some_and(|c| need.iter().all(|t| covered(&c, text).contains(t)))
    };
    if offers(canonical) {
        return Some(Form::Canonical);
    }
    let own = render_parsed(&p);
    if offers(&own) {
        return Some(Form::ReceivedCanonical(Box::new(p)));
    }
    Some(Form::AsReceived(Box::new(p)))
}

fn first(text: &str) -> Option<Parsed> {
    extract(text, &Options::default())
        .envelopes
        .into_iter()
        .next()
}

/// Every text a signature or hash on `p` (read from `input`) may cover, as verification and
/// the hash check read them: the lines as received, their NFC form, the canonical rendering.
fn covered(p: &Parsed, input: &str) -> Vec<String> {
    let mut out = Vec::new();
    for text in p.signable_received_all(input).unwrap_or_default() {
        out.push(nfc(&text));
        out.push(text);
    }
    out.push(signable_parsed(p));
    if p.envelope.hash.is_some() {
        out.extend(crate::protocol::validate::hash_candidates(p, input));
        out.push(hashed_portion_parsed(p));
    }
    out
}

fn with_hop_rendered(canonical: &str, hop: Option<&audit::Relay<'_>>) -> String {
    let Some(relay) = hop else {
        return canonical.to_string();
    };
    match first(canonical) {
        Some(p) => {
            let mut env = p.envelope.clone();
            audit::append_hop(&mut env, relay);
            render_as_received(&p, &env)
        }
        None => canonical.to_string(),
    }
}

/// `env` rendered under the body key `p` was read with (a v1.0 `response:` stays one).
fn render_as_received(p: &Parsed, env: &crate::protocol::Envelope) -> String {
    if p.reply_form {
        super::render::render_as(env, super::render::BodyKey::Response)
    } else {
        render(env)
    }
}

/// `received` with `block` written in before the body's key line (or before `sig:`, or
/// `[[END]]`), a blank line after it: after every other META block, where
/// [`audit::append_hop`] puts it, and outside what a signature covers.
fn insert_block(received: &str, p: &Parsed, block: &MetaBlock) -> String {
    let at = [p.positions.body, p.positions.sig, p.positions.hash]
        .into_iter()
        .flatten()
        .map(|pos| pos.line)
        .min()
        .and_then(|line| line.checked_sub(p.span.start_line))
        .map_or(usize::MAX, |i| i as usize);
    // One line per entry: a value's own line breaks would start lines the reader takes for
    // the envelope's structure (a header, `[[END]]`).
    let flat = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut block_text = format!("meta: {}\n", flat(&block.namespace));
    for (k, v) in &block.entries {
        block_text.push_str(&format!("{}: {}\n", flat(k), flat(v)));
    }
    block_text.push('\n');
    let mut out = String::with_capacity(received.len() + block_text.len());
    let mut placed = false;
    for (i, line) in received.split_inclusive('\n').enumerate() {
        if i == at || (!placed && at == usize::MAX && crate::protocol::lines::is_end_marker(line)) {
            out.push_str(&block_text);
            placed = true;
        }
        out.push_str(line);
    }
    if !placed {
        out.push_str(&block_text);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::signature::{SigFormat, sign_envelope, verify_parsed};
    use ed25519_dalek::SigningKey;

    fn key() -> SigningKey {
        SigningKey::from_bytes(&[7u8; 32])
    }

    /// `text` signed over its canonical signable portion.
    fn signed(text: &str) -> String {
        let mut env = first(text).expect("an envelope").envelope;
        sign_envelope(&mut env, &key(), SigFormat::Ed25519, "alice@example.com");
        render(&env)
    }

    /// `unsigned` signed over its bytes as written, through the line before `sig:`.
    fn signed_as_written(unsigned: &str) -> String {
        let p = first(unsigned).expect("an envelope");
        let count = (p.positions.sig.expect("a sig").line - 1) as usize;
        let payload: String = unsigned.split_inclusive('\n').take(count).collect();
        let sig = crate::protocol::signature::sign_bytes(
            payload.as_bytes(),
            &key(),
            SigFormat::Ed25519,
            "alice@example.com",
        );
        format!("{payload}sig: {sig}\n[[END]]\n")
    }

    /// `received` carried with this desk's hop, its stored form having ids filled in.
    fn hopped(received: &str) -> String {
        let relay = audit::Relay {
            by: "desk",
            received_at: "2025-10-09T16:00:00Z",
            now: jiff::Timestamp::from_second(1_760_000_000).expect("a time"),
        };
        carried(received, &filled(received), Some(&relay))
    }

    fn verifies(text: &str) -> bool {
        let p = first(text).expect("an envelope");
        verify_parsed(&p, text, &key().verifying_key()).is_ok()
    }

    const PLAIN: &str = "[[ALICE→BOB v1]]\nuser: alice\nsession: 2025-10-09T16Z abc\ncontext: c\nintent: REQUEST\nbody: |\n  hello\nsig: none\n[[END]]\n";

    /// A stored canonical form that fills in ids, as the store does for v1.0 envelopes.
    fn filled(text: &str) -> String {
        let mut env = first(text).expect("an envelope").envelope;
        env.set_header("thread", "01J9J3D3M6A4M3WQX8G1ZQ0S7K");
        env.set_header("message", "01J9J3D3M6A4M3WQX8G1ZQ0S7K");
        render(&env)
    }

    #[test]
    fn unsigned_envelopes_go_in_canonical_form() {
        let canonical = filled(PLAIN);
        assert_eq!(carried(PLAIN, &canonical, None), canonical);
        assert!(!carried_as(PLAIN, &canonical, None).1);
    }

    #[test]
    fn a_signed_envelope_goes_without_the_ids_filled_in_on_receipt() {
        let received = signed(PLAIN);
        assert!(verifies(&received));
        let canonical = filled(&received);
        assert!(!verifies(&canonical), "filling ids in breaks the signature");
        let out = carried(&received, &canonical, None);
        assert_eq!(out, received);
        assert!(verifies(&out));
        assert!(carried_as(&received, &canonical, None).1);
    }

    #[test]
    fn a_signature_over_tabs_as_received_goes_as_received() {
        // Signed over the bytes as received: a tab-indented body.
        let received = signed_as_written(&PLAIN.replace("  hello", "\thello\n\tworld"));
        assert!(verifies(&received));
        let canonical = render(&first(&received).expect("an envelope").envelope);
        assert!(!verifies(&canonical));
        let out = carried(&received, &canonical, None);
        assert!(verifies(&out));
        assert_eq!(out, received);
    }

    #[test]
    fn a_canonical_signed_envelope_goes_in_canonical_form_and_with_a_hop() {
        let received = signed(PLAIN);
        let canonical = received.clone();
        assert_eq!(carried(&received, &canonical, None), canonical);
        let out = hopped(&received);
        assert!(out.contains("meta: audit\n"), "{out}");
        assert!(verifies(&out), "{out}");
        assert!(!out.contains("thread:"), "{out}");
    }

    #[test]
    fn a_hop_is_written_into_a_text_carried_as_received() {
        let received = signed_as_written(&PLAIN.replace("  hello", "\thello"));
        let out = hopped(&received);
        assert!(out.contains("meta: audit\nReceived-At:"), "{out}");
        assert!(out.contains("\thello"), "{out}");
        assert!(verifies(&out), "{out}");
        let read = first(&out).expect("an envelope");
        assert!(read.envelope.meta.iter().any(audit::is_audit));
    }

    /// An earlier hop is anyone's text: a value of it over several lines goes into this
    /// desk's hop on one line, so it cannot turn into headers of the envelope.
    #[test]
    fn an_earlier_hop_over_several_lines_cannot_add_headers() {
        let signed = signed_as_written(&PLAIN.replace("  hello", "\thello"));
        let hop = "meta: audit\nReceived-By: [x,\n  user: mallory\n  X-Close: ]\n\n";
        let received = signed.replacen("body: |", &format!("{hop}body: |"), 1);
        assert!(verifies(&received), "{received}");
        let out = hopped(&received);
        assert!(verifies(&out), "{out}");
        let read = first(&out).expect("an envelope");
        assert_eq!(read.envelope.user(), Some("alice"), "{out}");
        assert!(
            !read.diagnostics.iter().any(|d| d.is_error()),
            "{:?}",
            read.diagnostics
        );
    }

    #[test]
    fn a_hash_over_the_received_text_stays_true() {
        let unsigned = PLAIN.replace("  hello", "\thello");
        let p = first(&unsigned).expect("an envelope");
        let count = (p.positions.sig.expect("a sig").line) as usize;
        let through_sig: String = unsigned.split_inclusive('\n').take(count).collect();
        let received = format!(
            "{through_sig}hash: {}\n[[END]]\n",
            crate::protocol::render::crc32_hex(&through_sig)
        );
        let ok = |t: &str| {
            let p = first(t).expect("an envelope");
            !p.diagnostics
                .iter()
                .any(|d| d.code == crate::protocol::Code::HashMismatch)
        };
        assert!(ok(&received));
        let canonical = filled(&received);
        assert!(!ok(&canonical));
        assert!(ok(&carried(&received, &canonical, None)));
    }
}
